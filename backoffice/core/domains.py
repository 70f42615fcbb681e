"""The AppConfig of a domain app, and the one way domains meet.

A domain declares what core runs for it (jobs, pushes, record actions, polls, families, cron entries) in its own
modules, at import; the app's config only names those modules, and the domains whose public module it reads:

    class InvoicesConfig(domains.DomainConfig):  # the module, not the class: Django takes the one config class
                                                # an apps.py defines or imports
        name = "backoffice.invoices"
        verbose_name = _("Invoices")
        declares = ("services", "mirror", "copies")
        uses = ("current_accounts", "chart_of_accounts")

Django imports models and the URLconf imports views; `declares` lists the other modules whose import registers
something, imported once when the apps are ready (so a worker that never reads the URLconf knows every job).

Domains stand side by side: none imports another. A domain reads another only through that domain's public module
(its `api.py`), got with `api(label)`, as Django's own apps meet through `apps.get_model` and "app.Model" strings.
The graph of who uses whom is declared in `uses` and held against the code by tests/core/test_domains.py.
"""

from importlib import import_module

from django.apps import AppConfig, apps
from django.core.exceptions import ImproperlyConfigured


class DomainConfig(AppConfig):
    declares: tuple = ()
    uses: tuple = ()

    def ready(self):
        for label in self.uses:
            if not isinstance(apps.get_app_config(label), DomainConfig):
                raise ImproperlyConfigured(f"{self.label} uses {label}, which is not a domain")
        for module in self.declares:
            import_module(f"{self.name}.{module}")


def api(label: str):
    """The public module of the installed domain `label`; a domain that is not installed is a LookupError."""
    return import_module(f"{apps.get_app_config(label).name}.api")
