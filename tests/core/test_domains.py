"""Domains stand side by side (core.domains): none imports another's modules, each reads another only through
that domain's public module got with domains.api(label), and only a domain it declares in `uses`."""

import ast
import pathlib

import pytest
from django.apps import apps
from django.core.exceptions import ImproperlyConfigured

from backoffice.core import domains

BACKOFFICE = pathlib.Path(domains.__file__).resolve().parents[1]


def domain_configs():
    return [config for config in apps.get_app_configs() if isinstance(config, domains.DomainConfig)]


def app_modules(config):
    root = pathlib.Path(config.path)
    return [path for path in root.rglob("*.py") if "migrations" not in path.parts]


def imported_modules(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def api_labels(tree):
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "api"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "domains"):
            assert len(node.args) == 1 and isinstance(node.args[0], ast.Constant), ast.unparse(node)
            yield node.args[0].value


def test_the_domains_are_the_apps_that_hold_records():
    labels = {config.label for config in domain_configs()}
    assert {"invoices", "dispatch", "dispatch_inbox", "ledger", "tickets", "passenger_lists", "current_accounts",
            "chart_of_accounts", "subcompanies"} <= labels
    assert "core" not in labels and "sandbox" not in labels


def test_no_domain_imports_another():
    names = {config.name for config in domain_configs()}
    found = []
    for config in domain_configs():
        for path in app_modules(config):
            for module in imported_modules(ast.parse(path.read_text())):
                other = next((name for name in names if module == name or module.startswith(name + ".")), None)
                if other and other != config.name:
                    found.append(f"{path.relative_to(BACKOFFICE)} imports {module}")
    assert found == []


def test_a_domain_reads_only_the_domains_it_declares_it_uses():
    used = {}
    for config in domain_configs():
        for path in app_modules(config):
            for label in api_labels(ast.parse(path.read_text())):
                used.setdefault(config.label, set()).add(label)
                assert label in config.uses, f"{path.relative_to(BACKOFFICE)} reads {label}, not in its uses"
    # the declaration is the code's picture, not a wish: every domain a config says it uses is read somewhere
    for config in domain_configs():
        assert set(config.uses) == used.get(config.label, set()), config.label
    assert used["passenger_lists"] == {"tickets"} and used["dispatch_inbox"] == {"dispatch"}


def test_the_public_module_is_the_domains_api():
    assert domains.api("current_accounts").__name__ == "backoffice.current_accounts.api"
    assert callable(domains.api("current_accounts").account_lookup)


def test_a_domain_that_is_not_installed_is_refused():
    with pytest.raises(LookupError):
        domains.api("no_such_domain")


def test_using_an_app_that_is_not_a_domain_stops_the_start():
    config = apps.get_app_config("passenger_lists")
    original = config.uses
    try:
        config.uses = ("core",)
        with pytest.raises(ImproperlyConfigured, match="passenger_lists uses core, which is not a domain"):
            config.ready()
    finally:
        config.uses = original
