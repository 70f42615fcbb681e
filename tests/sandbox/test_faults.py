"""Fault switches, set through the control API, seen over real HTTP."""

import time

import pytest
import requests

from tests.sandbox.test_passenger_lists import LISTS, a_list, issue
from tests.sandbox.test_tickets import EVENT, create, event_ticket, ticket

STATUS = "/v2/outboxinvoice/{}/status"


def bearer_for(sandbox, anonymous):
    sandbox.add_customer(name="Bearer Co", username="svc-fault", password="pw")
    token = anonymous.post("auth", "/v1/token", headers={"Cache-Control": "no-cache"},
                           data={"username": "svc-fault", "password": "pw", "client_id": "serviceApi"}).json()
    return {"Authorization": f"Bearer {token['access_token']}"}


def test_error_rate_one_fails_every_matching_request(sandbox, api):
    sandbox.add_fault(path="/invoice/v2/*", error_rate=1.0)
    failed = api.get("invoice", STATUS.format("a"))
    assert failed.status_code == 500
    assert failed.json()["title"]
    # Other paths and services go on working.
    assert api.get("invoice", "/v1/inboxinvoice/list", params={"pageIndex": 1, "pageSize": 1}).status_code == 200
    assert api.get("ledger", "/v1/period/getperiodlist", params={"pageIndex": 1, "pageSize": 1}).status_code == 200


def test_error_status_and_method_filter(sandbox, api):
    sandbox.add_fault(path="/invoice/*", method="POST", error_rate=1.0, error_status=503)
    assert api.post("invoice", "/v2/outboxinvoice/status", json=["a"]).status_code == 503
    assert api.get("invoice", STATUS.format("a")).status_code == 200


def test_a_2xx_error_status_answers_the_services_error_inside_a_success(sandbox, api):
    # Document 1, section 7: the ticket service's Error {title, detail}, the accounting service's text, the
    # dispatch service's object of fields not given.
    for service in ("ticket", "accounting", "dispatch"):
        sandbox.add_fault(path=f"/{service}/*", error_rate=1.0, error_status=200)
    ticket = api.request("PUT", "ticket", "/v1/event-ticket/updatestatuslist", json={"Ids": ["a"], "Status": 20})
    accounts = api.get("accounting", "/v1/currentaccount", params={"pageIndex": 1, "pageSize": 1})
    notes = api.request("PUT", "dispatch", "/v2/outboxdespatch/updatestatuslist", json={"Ids": ["a"], "Status": 0})
    refused = "The sandbox was told to refuse this request."
    assert (ticket.status_code, ticket.json()) == (200, {"Error": {"title": "Injected refusal", "detail": refused}})
    assert (accounts.status_code, accounts.json()) == (200, {"Error": refused})
    assert (notes.status_code, notes.json()) == (200, {"Error": {"Message": refused}})


def test_remaining_stops_the_fault_after_n_uses(sandbox, api):
    sandbox.add_fault(path="/invoice/*", error_rate=1.0, remaining=2)
    statuses = [api.get("invoice", STATUS.format(i)).status_code for i in range(4)]
    assert statuses == [500, 500, 200, 200]


def test_latency_delays_the_answer(sandbox, api):
    sandbox.add_fault(path="/invoice/*", latency_ms=400)
    started = time.monotonic()
    assert api.get("invoice", STATUS.format("slow")).status_code == 200
    assert time.monotonic() - started >= 0.4
    started = time.monotonic()
    assert api.get("crm", "/v1/sharedpoolusage/report").status_code == 200
    assert time.monotonic() - started < 0.4


def test_a_random_latency_is_drawn_anew_for_each_request_within_its_bound(sandbox, api):
    sandbox.add_fault(path="/invoice/*", latency_ms=100, latency_jitter_ms=300)
    took = []
    for index in range(6):
        started = time.monotonic()
        assert api.get("invoice", STATUS.format(f"jitter-{index}")).status_code == 200
        took.append(time.monotonic() - started)
    assert min(took) >= 0.1
    # Six draws from 0 to 300 ms all within 30 ms of each other: about one chance in 10^7.
    assert max(took) - min(took) > 0.03, took


def test_timeout_outlasts_the_client(sandbox, api):
    sandbox.add_fault(path="/invoice/*", timeout_seconds=1.5, remaining=1)
    with pytest.raises(requests.Timeout):
        api.get("invoice", STATUS.format("late"), timeout=0.4)
    assert api.get("invoice", STATUS.format("late"), timeout=5).status_code == 200


def test_reset_drops_requests_asleep_in_a_fault(sandbox, api):
    sandbox.add_fault(path="/invoice/*", timeout_seconds=30)
    with pytest.raises(requests.Timeout):
        api.get("invoice", STATUS.format("asleep"), timeout=0.3)
    started = time.monotonic()
    sandbox.reset()
    time.sleep(0.2)
    assert time.monotonic() - started < 5
    assert sandbox.stats()["requests"] == []  # the sleeper woke up and left no trace


def test_storm_429_carries_retry_after(sandbox, api):
    sandbox.add_fault(path="/crm/*", storm_429=True, retry_after=7)
    for _ in range(3):
        response = api.get("crm", "/v1/sharedpoolusage/report")
        assert response.status_code == 429
        assert response.headers["Retry-After"] == "7"
    sandbox.clear_faults()
    # The storm used none of the real window (1 per 15 minutes).
    assert api.get("crm", "/v1/sharedpoolusage/report").status_code == 200


def test_expire_tokens_refuses_bearer_tokens_only(sandbox, api, anonymous):
    bearer = bearer_for(sandbox, anonymous)
    assert anonymous.get("invoice", STATUS.format("a"), headers=bearer).status_code == 200
    sandbox.add_fault(path="*", expire_tokens=True, remaining=1)
    assert api.get("invoice", STATUS.format("a")).status_code == 200  # an API key has no expiry
    assert anonymous.get("invoice", STATUS.format("a"), headers=bearer).status_code == 401
    assert anonymous.get("invoice", STATUS.format("a"), headers=bearer).status_code == 200


def test_expired_tokens_come_before_the_storm(sandbox, anonymous):
    bearer = bearer_for(sandbox, anonymous)
    sandbox.add_fault(path="*", storm_429=True, expire_tokens=True)
    assert anonymous.get("invoice", STATUS.format("a"), headers=bearer).status_code == 401


def test_clear_faults_and_reset(sandbox, api):
    sandbox.add_fault(path="*", error_rate=1.0)
    assert sandbox.clear_faults()["deleted"] == 1
    assert api.get("invoice", STATUS.format("a")).status_code == 200
    sandbox.add_fault(path="*", error_rate=1.0)
    sandbox.reset()
    assert api.get("invoice", STATUS.format("a")).status_code == 200


def test_unknown_fault_field_is_refused(sandbox):
    with pytest.raises(RuntimeError, match="400"):
        sandbox.add_fault(path="*", explode=True)


# --- faults after the operation took effect (after_apply) ---------------------------------------------------

def test_after_apply_error_answers_the_status_once_the_cancel_took_effect(sandbox, api):
    """The platform cancelled the ticket, then its gateway answered 500: a retry is refused as already done."""
    ettn = create(api, event_ticket())
    sandbox.add_fault(path="/ticket/v1/event-ticket/cancel", method="POST", error_rate=1, after_apply="error",
                      remaining=1)
    failed = api.post("ticket", EVENT + "/cancel", json={"ids": [ettn]})
    assert failed.status_code == 500 and failed.json()["title"] == "Injected fault"
    assert ticket(api, ettn)["status"] == 100  # committed before the fault fired
    again = api.post("ticket", EVENT + "/cancel", json={"ids": [ettn]})
    assert again.status_code == 400 and "already cancelled" in again.json()["detail"]


def test_after_apply_drop_closes_the_connection_once_the_list_was_created(sandbox, api):
    sandbox.configure(ticket_processing_seconds=600)
    issue(api, 1)
    sandbox.add_fault(path="/ticket/v1/passenger-list", method="POST", error_rate=1, after_apply="drop", remaining=1)
    with pytest.raises(requests.ConnectionError):  # no status line at all, not a 5xx
        api.post("ticket", LISTS, json=a_list())
    [saved] = api.get("ticket", LISTS, params={"pageIndex": 1, "pageSize": 10}).json()["items"]
    assert saved["expeditionNumber"] == "S100"
    # Sending it again creates another list, replacing the one the caller never heard of.
    assert api.post("ticket", LISTS, json=a_list()).json()["ettn"] != saved["id"]
    stats = sandbox.stats()
    assert stats["no_answer"] == 1 and stats["by_status"]["0"] == 1


@pytest.mark.parametrize("mode", ["error", "drop"])
def test_after_apply_on_a_read(sandbox, api, mode):
    sandbox.add_fault(path="/invoice/v2/*", method="GET", error_rate=1, error_status=503, after_apply=mode,
                      remaining=1)
    if mode == "error":
        assert api.get("invoice", STATUS.format("a")).status_code == 503
    else:
        with pytest.raises(requests.ConnectionError):
            api.get("invoice", STATUS.format("a"))
    assert api.get("invoice", STATUS.format("a")).status_code == 200  # the rule is used up
    assert sandbox.stats()["by_status"] == {"503" if mode == "error" else "0": 1, "200": 1}


def test_after_apply_rules_leave_the_before_faults_alone(sandbox, api):
    """An after_apply rule does not refuse before the operation, and its refusal replaces the operation's."""
    sandbox.add_fault(path="/ticket/*", method="POST", error_rate=1, after_apply="error", error_status=502)
    response = api.post("ticket", EVENT, json=event_ticket())
    assert response.status_code == 502
    sandbox.clear_faults()
    duplicate = api.post("ticket", EVENT, json=event_ticket())
    assert duplicate.status_code == 400 and duplicate.json()["title"] == "Duplicate ticket number"


def test_after_apply_needs_an_error_rate(sandbox):
    with pytest.raises(RuntimeError, match="error_rate"):
        sandbox.add_fault(path="*", after_apply="drop")
    with pytest.raises(RuntimeError, match="after_apply"):
        sandbox.add_fault(path="*", error_rate=1, after_apply="later")
