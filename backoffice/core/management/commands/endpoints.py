from django.conf import settings
from django.core.management.base import BaseCommand

from backoffice.remote.endpoints import table


class Command(BaseCommand):
    help = "Print the platform endpoint table (with settings overrides), marking paths that are defaults to confirm."

    def add_arguments(self, parser):
        parser.add_argument("--defaults", action="store_true", help="only the paths no document or public source shows")

    def handle(self, *args, **options):
        overrides = transport_config_overrides()
        rows = table(overrides)
        rows = rows.values() if isinstance(rows, dict) else rows
        self.stdout.write("| operation | service | method and path | source |\n| --- | --- | --- | --- |")
        for endpoint in rows:
            if options["defaults"] and endpoint.source != "default":
                continue
            self.stdout.write(f"| `{endpoint.name}` | {endpoint.service} | `{endpoint.method} {endpoint.path}` | {endpoint.source} |")


def transport_config_overrides():
    return dict(getattr(settings, "PLATFORM_ENDPOINTS", {}) or {})
