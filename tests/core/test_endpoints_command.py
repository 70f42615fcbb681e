from io import StringIO

from django.core.management import call_command


def run(*args):
    out = StringIO()
    call_command("endpoints", *args, stdout=out)
    return out.getvalue()


def test_lists_documented_and_default_paths():
    output = run()
    assert "| `crm.usage_report` | crm | `GET /v1/sharedpoolusage/report` | document |" in output
    assert "`crm.create_company`" in output


def test_defaults_only_and_settings_override(settings):
    defaults = run("--defaults")
    assert "crm.usage_report" not in defaults and "crm.create_company" in defaults
    settings.PLATFORM_ENDPOINTS = {"crm.create_company": ("POST", "/v2/customers/create")}
    output = run()
    assert "| `crm.create_company` | crm | `POST /v2/customers/create` | settings |" in output
