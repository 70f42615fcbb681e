"""Document 1, section 5 (and document 4's token facts), over real HTTP."""

import time
import uuid

import pytest

REPORT = "/v1/sharedpoolusage/report"
STATUS = "/v2/outboxinvoice/{}/status"


NO_CACHE = {"Cache-Control": "no-cache"}


def token_form(username, password, client_id="serviceApi"):
    return {"username": username, "password": password, "client_id": client_id}


def ask_token(anonymous, form, **kwargs):
    """The token call as document 1, section 5, rule 3 writes it: a form body and Cache-Control: no-cache."""
    kwargs.setdefault("headers", NO_CACHE)
    return anonymous.post("auth", "/v1/token", data=form, **kwargs)


def bearer_of(response) -> dict:
    assert response.status_code == 200, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


def test_no_credentials_is_401_with_title_and_detail(anonymous):
    response = anonymous.get("invoice", STATUS.format("abc"))
    assert response.status_code == 401
    assert response.json()["title"] == "Unauthorized"
    assert response.json()["detail"]
    uuid.UUID(response.headers["X-Correlation-Id"])


def test_unknown_api_key_is_401(sandbox, anonymous):
    response = anonymous.get("invoice", STATUS.format("abc"), headers={"x-api-key": "not-a-key"})
    assert response.status_code == 401


def test_api_key_works(api):
    response = api.get("invoice", STATUS.format("abc"))
    assert response.status_code == 200
    assert response.json()["id"] == "abc"
    uuid.UUID(response.headers["X-Correlation-Id"])


def test_token_flow(sandbox, anonymous):
    customer = sandbox.add_customer(name="Token Co", username="svc-token", password="s3cret!")
    response = ask_token(anonymous, token_form("svc-token", "s3cret!"))
    assert response.status_code == 200
    body = response.json()
    assert body["expires_in"] == "86400"  # a string, as on the real platform
    assert body["token_type"] == "Bearer"
    assert body["refresh_token"] == ""
    uuid.UUID(response.headers["X-Correlation-Id"])

    bearer = {"Authorization": f"Bearer {body['access_token']}"}
    tickets = anonymous.get("ticket", "/v1/event-ticket", headers=bearer, params={"pageIndex": 1, "pageSize": 1})
    assert tickets.status_code == 200 and tickets.json()["totalCount"] == 0
    assert customer["username"] == "svc-token"
    assert sandbox.stats()["tokens_issued"] == 1


def test_token_expires_after_its_lifetime(sandbox, anonymous):
    sandbox.add_customer(name="Short Co", username="svc-short", password="pw")
    sandbox.configure(token_lifetime_seconds=1)
    body = ask_token(anonymous, token_form("svc-short", "pw")).json()
    assert body["expires_in"] == "1"
    bearer = {"Authorization": f"Bearer {body['access_token']}"}
    assert anonymous.get("invoice", STATUS.format("x"), headers=bearer).status_code == 200
    time.sleep(1.1)
    expired = anonymous.get("invoice", STATUS.format("x"), headers=bearer)
    assert expired.status_code == 401
    assert expired.json()["title"] == "Unauthorized"


def test_unknown_bearer_token_is_401(anonymous):
    response = anonymous.get("invoice", STATUS.format("x"), headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401


def test_missing_token_fields_are_422_per_field(anonymous):
    response = ask_token(anonymous, {"username": "someone"})
    assert response.status_code == 422
    assert set(response.json()) == {"password", "client_id"}
    assert all(isinstance(messages, list) and messages for messages in response.json().values())


def test_wrong_client_id_is_422(sandbox, anonymous):
    sandbox.add_customer(name="Client Co", username="svc-client", password="pw")
    response = ask_token(anonymous, token_form("svc-client", "pw", client_id="other"))
    assert response.status_code == 422
    assert "client_id" in response.json()


@pytest.mark.parametrize("username,password", [("svc-wrong", "bad"), ("nobody", "pw")])
def test_wrong_credentials_are_401(sandbox, anonymous, username, password):
    sandbox.add_customer(name="Wrong Co", username="svc-wrong", password="pw")
    response = ask_token(anonymous, token_form(username, password))
    assert response.status_code == 401
    assert response.json()["title"] == "Unauthorized"


@pytest.mark.parametrize("headers,words", [
    ({}, "Cache-Control: no-cache"),
    ({"Cache-Control": "no-store"}, "Cache-Control: no-cache"),
    ({"Cache-Control": "max-age=0"}, "Cache-Control: no-cache"),
])
def test_the_token_call_needs_cache_control_no_cache(sandbox, anonymous, headers, words):
    """Document 1, section 5, rule 3: headers Cache-Control: no-cache and a form Content-Type."""
    sandbox.add_customer(name="Header Co", username="svc-header", password="pw")
    response = ask_token(anonymous, token_form("svc-header", "pw"), headers=headers)
    assert response.status_code == 400, response.text
    assert response.json()["title"] == "Bad Request" and words in response.json()["detail"]
    assert sandbox.stats()["tokens_issued"] == 0
    # With it (among other directives) the same call is answered.
    assert ask_token(anonymous, token_form("svc-header", "pw"),
                     headers={"Cache-Control": "no-store, No-Cache"}).status_code == 200


def test_the_token_call_needs_a_form_body(sandbox, anonymous):
    sandbox.add_customer(name="Form Co", username="svc-form", password="pw")
    response = anonymous.post("auth", "/v1/token", json=token_form("svc-form", "pw"), headers=NO_CACHE)
    assert response.status_code == 400
    assert "application/x-www-form-urlencoded" in response.json()["detail"]
    response = anonymous.post("auth", "/v1/token", headers={**NO_CACHE, "Content-Type": "text/plain"},
                              data="username=svc-form&password=pw&client_id=serviceApi")
    assert response.status_code == 400
    form = {**NO_CACHE, "Content-Type": "application/x-www-form-urlencoded; charset=utf-8"}
    assert anonymous.post("auth", "/v1/token", headers=form,
                          data="username=svc-form&password=pw&client_id=serviceApi").status_code == 200


def test_a_token_expires_after_token_max_uses_calls(sandbox, anonymous):
    sandbox.add_customer(name="Uses Co", username="svc-uses", password="pw")
    sandbox.configure(token_max_uses=3)
    bearer = bearer_of(ask_token(anonymous, token_form("svc-uses", "pw")))
    statuses = [anonymous.get("invoice", STATUS.format(n), headers=bearer).status_code for n in range(5)]
    assert statuses == [200, 200, 200, 401, 401]
    expired = anonymous.get("invoice", STATUS.format("x"), headers=bearer)
    assert expired.json()["title"] == "Unauthorized" and "expired" in expired.json()["detail"]
    # A new token serves its own three calls; the stats count tokens and 401 answers.
    fresh = bearer_of(ask_token(anonymous, token_form("svc-uses", "pw")))
    assert anonymous.get("invoice", STATUS.format("y"), headers=fresh).status_code == 200
    stats = sandbox.stats()
    assert stats["tokens_issued"] == 2 and stats["responses_401"] == 3 == stats["by_status"]["401"]


def test_token_uses_are_unlimited_by_default(sandbox, anonymous):
    sandbox.add_customer(name="Many Co", username="svc-many", password="pw")
    bearer = bearer_of(ask_token(anonymous, token_form("svc-many", "pw")))
    assert all(anonymous.get("invoice", STATUS.format(n), headers=bearer).status_code == 200 for n in range(25))
    assert sandbox.stats()["responses_401"] == 0
