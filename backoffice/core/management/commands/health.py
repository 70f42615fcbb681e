"""The health report on the command line, for container health checks and scripts.

Exits 0 when every chosen check is ok, 1 otherwise; prints the same JSON as /health/.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from backoffice.core.health import CHECKS, health_report


class Command(BaseCommand):
    help = "Print the health report (database, Redis, worker, cron); exit 1 if a chosen check failed."

    def add_arguments(self, parser):
        parser.add_argument("--only", action="append", choices=sorted(CHECKS),
                            help="Judge only this check (repeatable); all of them by default.")

    def handle(self, *args, **options):
        report = health_report()
        chosen = options["only"] or list(CHECKS)
        self.stdout.write(json.dumps(report))
        failed = [name for name in chosen if report["checks"][name] != "ok"]
        if failed:
            raise CommandError(f"failed: {', '.join(failed)}", returncode=1)
