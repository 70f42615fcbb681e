"""The operations the sandbox answers so far, their envelopes and their validation."""

import base64
import calendar
import json

import pytest
import requests

from tests.sandbox.test_tickets import EVENT, create, event_ticket

CAMEL = ["pageIndex", "pageSize", "totalCount", "totalPages", "hasNextPage", "hasPreviousPage", "items"]
CAPITALISED = ["PageIndex", "PageSize", "TotalCount", "TotalPages", "HasNextPage", "HasPreviousPage", "Items"]


def test_incoming_invoice_list_has_the_camel_case_envelope(api):
    body = api.get("invoice", "/v1/inboxinvoice/list", params={"pageIndex": 2, "pageSize": 7}).json()
    assert list(body) == CAMEL
    assert body["pageIndex"] == 2 and body["pageSize"] == 7
    assert body["totalPages"] == -(-body["totalCount"] // 7)
    assert body["hasPreviousPage"] is True
    assert len(body["items"]) == 7
    assert len(body["items"][0]["invoiceNumber"]) == 16


def seed_year(sandbox, api, year=2025):
    """Twelve monthly periods of one customer, seeded through the ledger's control action."""
    periods = [{"start": f"{year}-{month:02d}-01", "end": f"{year}-{month:02d}-{calendar.monthrange(year, month)[1]}",
                "status": 60 if month <= 9 else 30} for month in range(1, 13)]
    return sandbox.control("POST", "ledger/seed", {"customer": api.http.headers["x-api-key"], "periods": periods})


def test_period_list_has_the_capitalised_envelope(sandbox, api):
    seed_year(sandbox, api)
    response = api.get("ledger", "/v1/period/getperiodlist", params={"pageIndex": 3, "pageSize": 5, "isDesc": "true"})
    body = response.json()
    assert list(body) == CAPITALISED
    assert body["TotalCount"] == 12 and body["TotalPages"] == 3
    assert body["HasNextPage"] is False and body["HasPreviousPage"] is True
    assert len(body["Items"]) == 2
    assert {"Id", "FiscalYearStart", "FiscalYearEnd", "Status", "Task"} <= set(body["Items"][0])


@pytest.mark.parametrize("service,path", [("invoice", "/v1/inboxinvoice/list"),
                                          ("ledger", "/v1/period/getperiodlist")])
@pytest.mark.parametrize("params,field", [({"pageIndex": 1, "pageSize": 501}, "pageSize"),
                                          ({"pageIndex": 0, "pageSize": 10}, "pageIndex"),
                                          ({"pageIndex": 1}, "pageSize")])
def test_page_parameters_are_validated(sandbox, customer_api, service, path, params, field):
    api, _ = customer_api()
    response = api.get(service, path, params=params)
    assert response.status_code == 422
    assert field in response.json()


def test_an_empty_last_page_is_not_an_error(sandbox, api):
    seed_year(sandbox, api)
    body = api.get("ledger", "/v1/period/getperiodlist", params={"pageIndex": 9, "pageSize": 500}).json()
    assert body["Items"] == [] and body["TotalCount"] == 12


def test_usage_report_describes_the_customer(customer_api):
    api, customer = customer_api(credits=75_000)
    report = api.get("crm", "/v1/sharedpoolusage/report").json()
    assert report["customerUniqueId"] == customer["customer_unique_id"]
    assert report["credits"][0]["quantity"] == 75_000
    assert isinstance(report["credits"][0]["id"], int)
    for name in ("applicationId", "applicationSource", "applicationStatus", "applicationCreateDate",
                 "distributors", "usages", "overUsages", "subCustomers"):
        assert name in report


def test_statuses_are_deterministic_and_batchable(api):
    one = api.get("invoice", "/v2/outboxinvoice/INV-1/status").json()
    assert one == api.get("invoice", "/v2/outboxinvoice/INV-1/status").json()
    assert one["id"] == "INV-1" and isinstance(one["status"], int)
    many = api.post("invoice", "/v2/outboxinvoice/status", json=["INV-1", "INV-2"]).json()
    assert [item["id"] for item in many] == ["INV-1", "INV-2"]
    assert many[0]["status"] == one["status"]
    assert api.get("invoice", "/v2/earchive/status", params={"id": "E-1"}).json()["id"] == "E-1"
    assert api.post("invoice", "/v2/outboxinvoice/status", json={"not": "a list"}).status_code == 422


def test_pdf_and_ubl_come_base64_encoded(api):
    pdf = base64.b64decode(api.get("invoice", "/v2/outboxinvoice/abc/pdf/true").json()["Response"])
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    ubl = base64.b64decode(api.get("invoice", "/v2/inboxinvoice/abc/ubl").json()["Response"])
    assert b"<cbc:UUID>abc</cbc:UUID>" in ubl


def test_unknown_paths_are_json_404(api, anonymous):
    response = api.get("invoice", "/v9/nothing")
    assert response.status_code == 404
    assert response.json()["title"] == "Not Found"
    assert anonymous.http.get(api.sandbox.url + "/elsewhere", timeout=5).json()["title"] == "Not Found"
    assert api.request("DELETE", "invoice", "/v2/outboxinvoice/abc/status").status_code == 405


def test_control_api_needs_its_header(sandbox):
    for headers in ({}, {"X-Sandbox-Control": "wrong"}):
        response = requests.get(sandbox.url + "/_control/stats", headers=headers, timeout=5)
        assert response.status_code == 404
        response = requests.post(sandbox.url + "/_control/reset", headers=headers, timeout=5)
        assert response.status_code == 404


def test_stats_count_requests_by_path_and_status(sandbox, api, anonymous):
    api.get("invoice", "/v2/outboxinvoice/a/status")
    api.get("invoice", "/v2/outboxinvoice/a/status")
    anonymous.get("invoice", "/v2/outboxinvoice/a/status")
    stats = sandbox.stats()
    rows = {(row["method"], row["path"], row["status"]): row["count"] for row in stats["requests"]}
    assert rows[("GET", "/invoice/v2/outboxinvoice/a/status", 200)] == 2
    assert rows[("GET", "/invoice/v2/outboxinvoice/a/status", 401)] == 1
    assert stats["by_status"]["200"] == 2 and stats["tokens_issued"] == 0


def test_customers_are_updated_by_their_unique_id(sandbox):
    first = sandbox.add_customer(name="Same", credits=1000)
    again = sandbox.add_customer(name="Same", credits=60_000_000, customer_unique_id=first["customer_unique_id"])
    assert again["id"] == first["id"] and again["tier"] == 9


def test_admin_is_served(sandbox):
    assert requests.get(sandbox.url + "/admin/login/", timeout=5).status_code == 200
    assert requests.get(sandbox.url + "/static/admin/css/base.css", timeout=5).status_code == 200


def test_sandbox_company_fixture_points_every_service_at_the_sandbox(sandbox, sandbox_company,
                                                                     sandbox_service_user_company):
    for service in ("auth", "ticket", "invoice", "accounting", "ledger", "dispatch", "crm"):
        assert sandbox_company.base_url(service) == sandbox.service_url(service)
    response = requests.get(sandbox_company.base_url("crm") + "/v1/sharedpoolusage/report",
                            headers={"x-api-key": sandbox_company.api_key}, timeout=5)
    assert response.json()["customerUniqueId"] == str(sandbox_company.customer_unique_id)
    company = sandbox_service_user_company
    form = {"username": company.service_username, "password": company.service_password, "client_id": "serviceApi"}
    token = requests.post(company.base_url("auth") + "/v1/token", timeout=5, headers={"Cache-Control": "no-cache"},
                          data=form)
    assert token.status_code == 200


# --- names spelled as the documents write them, in what no model binds -------------------------------------

def test_the_ticket_status_query_reads_ids_spelled_as_written(api):
    ettn = create(api, event_ticket())
    for body in ([ettn], {"ids": [ettn]}):
        answer = api.post("ticket", f"{EVENT}/status", json=body)
        assert answer.status_code == 200 and [item["id"] for item in answer.json()] == [ettn], answer.text
    misspelt = api.post("ticket", f"{EVENT}/status", json={"Ids": [ettn]})
    assert misspelt.status_code == 400 and misspelt.json()["detail"].startswith("body: must be an array")


@pytest.mark.parametrize("service,path,parameter,category", [
    ("ticket", "/v1/event-ticket", "queryFilter", "ticketNumber"),
    ("accounting", "/v1/currentaccount", "filterQuery", "Code"),
])
def test_a_list_filter_condition_is_spelled_as_written(api, service, path, parameter, category):
    def listing(condition):
        return api.get(service, path, params={"pageIndex": 1, "pageSize": 5, parameter: json.dumps([condition])})

    assert listing({"category": category, "operator": "eşittir", "value": "X"}).status_code == 200
    for member in ("Category", "Operator", "Value"):
        condition = {"category": category, "operator": "eşittir", "value": "X"}
        condition[member] = condition.pop(member.lower())
        refused = listing(condition)
        assert refused.status_code == 400, refused.text
        assert refused.json()["detail"].startswith(f"{parameter}: unknown member '{member}'")


@pytest.mark.parametrize("service,path,params,spelling", [
    ("accounting", "/v1/currentaccount", {"SortedColumn": "Name"}, "sortedColumn"),
    ("accounting", "/v1/currentaccount", {"IsDesc": "true"}, "isDesc"),
    ("accounting", "/v1/currentaccount", {"FilterQuery": "[]"}, "filterQuery"),
    ("accounting", "/v1/chartofaccount", {"IsDesc": "true"}, "isDesc"),
    ("accounting", "/v1/invoice/outgoing/list", {"SortedColumn": "issueDate"}, "sortedColumn"),
    ("accounting", "/v1/invoice/outgoing/list", {"FilterQuery": "[]"}, "filterQuery"),
    ("ledger", "/v1/period/getperiodlist", {"IsDesc": "true"}, "isDesc"),
    ("accounting", "/v1/currentaccount", {"PageIndex": "1", "pageIndex": None}, "pageIndex"),
], ids=lambda value: value if isinstance(value, str) else None)
def test_a_query_name_in_another_letter_case_is_refused_never_ignored(api, service, path, params, spelling):
    """Issue 28: the sandbox reads document 3's names only as spelled, so a client that misspells an optional
    filter, order or flag gets a 400 naming the spelling instead of an unfiltered answer."""
    query = {"pageIndex": 1, "pageSize": 5, **params}
    answer = api.get(service, path, params={name: value for name, value in query.items() if value is not None})
    assert answer.status_code == 400, answer.text
    assert f"this operation spells it {spelling} (names are case-sensitive)" in answer.json()["detail"]
    right = {name if name.lower() != spelling.lower() else spelling: value for name, value in query.items()
             if value is not None}
    assert api.get(service, path, params=right).status_code == 200
