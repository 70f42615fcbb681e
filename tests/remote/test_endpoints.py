import pytest

from backoffice.core.platform import transport_for
from backoffice.remote import endpoints, ratelimit
from backoffice.remote.endpoints import ENDPOINTS, fill_path, resolve

NAMED_IN_BRIEF = [
    "auth.token", "crm.usage_report", "crm.create_company", "crm.add_credit", "crm.add_credit_batch",
    "crm.add_products", "crm.add_products_batch", "crm.cancel_credit", "city.list",
    *[f"{kind}.{op}" for kind in ("event_ticket", "passenger_ticket") for op in (
        "create", "update", "get", "list", "cancel", "html", "status", "update_status", "export",
        "export_history", "export_download", "report")],
    *[f"passenger_list.{op}" for op in ("save", "query", "export", "export_history", "export_download", "report")],
    *[f"current_account{part}.{op}" for part in ("_mapping", "_address", "_bank", "_contact")
      for op in ("list", "create", "delete", "update")],
    "current_account.list", "current_account.get", "current_account.create", "current_account.update",
    *[f"accounting_invoice.{op}" for op in ("list_incoming", "list_outgoing", "get", "save", "update", "delete",
                                            "post", "reverse")],
    "chart_of_accounts.list", "chart_of_accounts.create", "chart_of_accounts.update",
    *[f"ledger.{op}" for op in ("list_periods", "list_parts", "book_entries", "preview", "send_certificates",
                                "upload")],
    "dispatch.taxpayer_list", "dispatch.outbox_post_json", "dispatch.reply_approve_reject",
    "invoice.response_get", "invoice.response_send", "invoice.response_retry", "invoice.earchive_cancel",
]


@pytest.mark.parametrize("name", NAMED_IN_BRIEF)
def test_every_operation_is_in_the_table(name):
    endpoint = ENDPOINTS[name]
    assert endpoint.service in endpoints.SERVICES
    assert endpoint.source in endpoints.SOURCES
    assert endpoint.path.startswith("/v1/") or endpoint.path.startswith("/v2/")


def test_paths_written_in_the_documents_are_kept():
    assert resolve("crm.add_credit").path == "/v1/crm/customers/{customerUniqueId}/addapplicationcredit"
    assert resolve("crm.add_credit_batch").path == "/v1/crm/addbatchapplicationcredit"
    assert resolve("crm.usage_report").path == "/v1/sharedpoolusage/report"
    assert resolve("event_ticket.report").path == "/v1/eventticketreport/partsbydate/{reportDate}"
    assert resolve("ledger.send_certificates").path == "/v1/sendletterpattentstogib"
    assert {e.source for e in ENDPOINTS.values()} == {"document", "public", "default"}


def test_every_rate_limited_pattern_has_an_endpoint():
    """Each endpoint of document 1, section 8 is an operation of the table, and falls under its rule."""
    shapes = {(e.method, endpoints._PARAM.sub("*", e.path)): e for e in ENDPOINTS.values()}
    for rule in ratelimit.RULES:
        for pattern in rule.patterns:
            method, path = pattern.split(" ", 1)
            endpoint = shapes[(method, path)]
            filled = fill_path(endpoint.path, {p: "x" for p in endpoint.path_params})
            assert ratelimit.rule_for(endpoint.method, filled) is rule


def test_fill_path_quotes_each_value_as_one_segment():
    assert fill_path("/v2/outboxinvoice/{id}/pdf/{isStandartXslt}", {"id": "a/b c", "isStandartXslt": True}) \
        == "/v2/outboxinvoice/a%2Fb%20c/pdf/true"
    assert fill_path("/v1/x/{id}", {"id": 7}) == "/v1/x/7"
    with pytest.raises(ValueError, match="reportDate"):
        fill_path("/v1/eventticketreport/partsbydate/{reportDate}", {})


def test_unknown_operation_is_refused():
    with pytest.raises(KeyError, match="no.such"):
        resolve("no.such")


def test_settings_override_reaches_the_client(company, settings):
    settings.PLATFORM_ENDPOINTS = {"crm.add_products": ("put", "/v9/products/{customerUniqueId}")}
    transport = transport_for(company)
    endpoint = resolve("crm.add_products", transport.config.endpoints)
    assert (endpoint.method, endpoint.path, endpoint.source) == ("PUT", "/v9/products/{customerUniqueId}", "settings")
    assert resolve("crm.add_credit", transport.config.endpoints).source == "document"
