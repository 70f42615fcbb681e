"""Create the three roles as groups, with the model permissions each one needs."""

from django.db import migrations

ROLES = ["accounting", "manager", "administrator"]
# Administrators manage companies and memberships (also through the Django admin) and read the audit.
ADMIN_PERMISSIONS = [
    ("core", "company", ("add", "change", "delete", "view")),
    ("core", "membership", ("add", "change", "delete", "view")),
    ("core", "remotecall", ("view",)),
    ("core", "jobrun", ("view",)),
    ("core", "documentseries", ("view",)),
    ("auth", "user", ("add", "change", "view")),
]


def create_roles(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name in ROLES:
        Group.objects.get_or_create(name=name)
    admin = Group.objects.get(name="administrator")
    for app_label, model, actions in ADMIN_PERMISSIONS:
        for action in actions:
            perm = Permission.objects.filter(content_type__app_label=app_label, codename=f"{action}_{model}").first()
            if perm:
                admin.permissions.add(perm)


def remove_roles(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=ROLES).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_roles, remove_roles)]
