"""The content types of the models that came from dispatch take this app's label, so that what is keyed by a
content type (permissions, the admin's log) stays with them."""

from django.db import migrations

MOVED = ("incomingnote", "incomingline", "dispatchreply", "replyline", "incomingdocument", "incomingexport",
         "inboxsync")


def relabel(apps, old, new):
    content_types = apps.get_model("contenttypes", "ContentType").objects
    for model in MOVED:
        if not content_types.filter(app_label=new, model=model).exists():
            content_types.filter(app_label=old, model=model).update(app_label=new)


def forwards(apps, schema_editor):
    relabel(apps, "dispatch", "dispatch_inbox")


def backwards(apps, schema_editor):
    relabel(apps, "dispatch_inbox", "dispatch")


class Migration(migrations.Migration):

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("dispatch", "0007_incoming_side_moved"),
        ("dispatch_inbox", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
