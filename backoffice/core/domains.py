"""The AppConfig of a domain app. A domain declares what core runs for it (jobs, pushes, record actions, polls,
families, cron entries) in its own modules, at import; the app's config only names those modules:

    class InvoicesConfig(domains.DomainConfig):  # the module, not the class: Django takes the one config class
                                                # an apps.py defines or imports
        name = "backoffice.invoices"
        verbose_name = _("Invoices")
        declares = ("services", "mirror", "copies")

Django imports models and the URLconf imports views; `declares` lists the other modules whose import registers
something, imported once when the apps are ready (so a worker that never reads the URLconf knows every job).
"""

from importlib import import_module

from django.apps import AppConfig


class DomainConfig(AppConfig):
    declares: tuple = ()

    def ready(self):
        for module in self.declares:
            import_module(f"{self.name}.{module}")
