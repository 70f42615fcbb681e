"""Demo data for `make run`: two companies on the sandbox, one user per role, the sandbox's side too.

Idempotent: run it as often as you like; the secrets come from var/demo-credentials.txt (generated once).
"""

import os
import subprocess
import sys

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from backoffice.core.choices import AuthMethod, Environment
from backoffice.core.management import demo
from backoffice.core.models import Company, Membership

COMPANY_A = "Demo A.Ş."
COMPANY_B = "Demo Lojistik Ltd."
CREDITS_A = 10_000  # tier 2
CREDITS_B = 1_000  # tier 1


class Command(BaseCommand):
    help = "Create or refresh the demo companies, users and the matching sandbox customers."

    def add_arguments(self, parser):
        parser.add_argument("--no-sandbox", action="store_true",
                            help="Do not seed the sandbox's database (it is seeded by default).")

    def handle(self, *args, **options):
        values = demo.load_or_create(settings.VAR_DIR)
        with transaction.atomic():
            companies = self._companies(values)
            users = self._users(values, companies)
        if not options["no_sandbox"]:
            self._seed_sandbox(values)
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
        for company in companies:
            self.stdout.write(f"  company: {company.name} ({company.get_auth_method_display()}, "
                              f"{company.get_environment_display()})")
        for role, user in users.items():
            self.stdout.write(f"  login ({role}): {user.username} / {values[f'password.{user.username}']}")
        self.stdout.write(f"  (stored in {settings.VAR_DIR / demo.FILENAME})")

    def _companies(self, values):
        a, _ = Company.objects.update_or_create(name=COMPANY_A, defaults={
            "customer_unique_id": values["company_a.customer_id"],
            "environment": Environment.SANDBOX,
            "auth_method": AuthMethod.API_KEY,
            "api_key": values["company_a.api_key"],
            "service_username": "",
            "service_password": "",
            "credit_quantity": CREDITS_A,
            "is_active": True,
        })
        b, _ = Company.objects.update_or_create(name=COMPANY_B, defaults={
            "customer_unique_id": values["company_b.customer_id"],
            "environment": Environment.SANDBOX,
            "auth_method": AuthMethod.SERVICE_USER,
            "api_key": "",
            "service_username": values["company_b.service_username"],
            "service_password": values["company_b.service_password"],
            "credit_quantity": CREDITS_B,
            "is_active": True,
        })
        return [a, b]

    def _users(self, values, companies):
        users = {}
        for role, username in demo.DEMO_USERS.items():
            user, _ = User.objects.get_or_create(username=username)
            user.set_password(values[f"password.{username}"])
            user.is_active = True
            user.is_staff = user.is_superuser = False  # a company's people work in the product's pages
            user.save()
            user.groups.add(Group.objects.get(name=role))
            for company in companies:
                Membership.objects.get_or_create(user=user, company=company)
            users[role] = user
        operator, _ = User.objects.get_or_create(username=demo.DEMO_OPERATOR)
        operator.set_password(values[f"password.{demo.DEMO_OPERATOR}"])
        operator.is_active = operator.is_staff = operator.is_superuser = True
        operator.save()
        users["operator"] = operator
        return users

    def _seed_sandbox(self, values):
        """The same customers and credentials in the sandbox's own database, through its own command."""
        common = [sys.executable, str(settings.BASE_DIR / "manage.py"), "sandbox_seed",
                  "--settings=backoffice.sandbox.settings"]
        # --option=value: a generated secret may begin with "-", which argparse would take for an option.
        runs = [
            {"name": COMPANY_A, "credits": CREDITS_A, "customer-id": values["company_a.customer_id"],
             "api-key": values["company_a.api_key"],
             # The sandbox counts its rate-limit windows on the same scale as the back-office.
             "rate-limit-scale": settings.RATE_LIMIT_SCALE,
             "admin-user": values["sandbox.admin_user"], "admin-password": values["sandbox.admin_password"]},
            {"name": COMPANY_B, "credits": CREDITS_B, "customer-id": values["company_b.customer_id"],
             "username": values["company_b.service_username"],
             "password": values["company_b.service_password"]},
        ]
        for run in runs:
            args = [f"--{option}={value}" for option, value in run.items()]
            result = subprocess.run(common + args, cwd=settings.BASE_DIR, capture_output=True, text=True,
                                    env={**os.environ, "BACKOFFICE_VAR_DIR": str(settings.VAR_DIR)})
            if result.returncode != 0:
                # The arguments carry secrets: show the command's own output only.
                raise CommandError(f"sandbox_seed failed for {run['name']}:\n{result.stdout}{result.stderr}")
