from django.apps import AppConfig


class SandboxConfig(AppConfig):
    name = "backoffice.sandbox"
    verbose_name = "Platform sandbox"
