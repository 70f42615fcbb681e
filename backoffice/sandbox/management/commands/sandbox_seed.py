"""Demo data of `make run`: a sandbox customer with its credentials, and optionally an admin user.

Run with --settings=backoffice.sandbox.settings. Idempotent: running it again updates the same rows.
"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from backoffice.sandbox.models import ApiKey, Customer, SandboxSetting, ServiceUser


class Command(BaseCommand):
    help = "Create or update a sandbox customer (credits, API key, service user) and a sandbox admin."

    def add_arguments(self, parser):
        parser.add_argument("--name", default="Demo A.Ş.")
        parser.add_argument("--credits", type=int, default=1000)
        parser.add_argument("--customer-id", help="customerUniqueId (uuid); new customer when omitted")
        parser.add_argument("--api-key")
        parser.add_argument("--username", help="service user name for the token flow")
        parser.add_argument("--password", help="service user password")
        parser.add_argument("--rate-limit-scale", type=float,
                            help="multiply every rate-limit window (match the back-office's RATE_LIMIT_SCALE)")
        parser.add_argument("--token-lifetime", type=int, help="token lifetime in seconds (default 86400)")
        parser.add_argument("--token-max-uses", type=int,
                            help="a bearer token expires after this many calls (0: never)")
        parser.add_argument("--admin-user")
        parser.add_argument("--admin-password")

    @transaction.atomic
    def handle(self, *args, **options):
        if bool(options["username"]) != bool(options["password"]):
            raise CommandError("--username and --password go together.")
        if bool(options["admin_user"]) != bool(options["admin_password"]):
            raise CommandError("--admin-user and --admin-password go together.")
        setting = SandboxSetting.load()
        for option, name in (("rate_limit_scale", "rate_limit_scale"), ("token_lifetime", "token_lifetime_seconds"),
                             ("token_max_uses", "token_max_uses")):
            if options[option] is not None:
                setattr(setting, name, options[option])
        setting.save()
        fields = {"name": options["name"], "credits": options["credits"]}
        if options["customer_id"]:
            customer, created = Customer.objects.update_or_create(customer_unique_id=options["customer_id"],
                                                                  defaults=fields)
        else:
            customer, created = Customer.objects.get_or_create(name=options["name"], defaults=fields)
            if not created:
                Customer.objects.filter(pk=customer.pk).update(credits=options["credits"])
        if options["api_key"]:
            ApiKey.objects.update_or_create(key=options["api_key"], defaults={"customer": customer, "name": "demo"})
        if options["username"]:
            ServiceUser.objects.update_or_create(
                username=options["username"], defaults={"customer": customer, "password": options["password"]})
        if options["admin_user"]:
            User = get_user_model()
            user = User.objects.filter(username=options["admin_user"]).first() or User(username=options["admin_user"])
            user.is_staff = user.is_superuser = user.is_active = True
            user.set_password(options["admin_password"])
            user.save()
        # Secrets are never printed: the caller already knows them.
        self.stdout.write(f"sandbox customer {customer.name} {customer.customer_unique_id} "
                          f"({'created' if created else 'updated'}), tier T{customer.tier}")
