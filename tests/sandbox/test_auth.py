"""Document 1, section 5 (and document 4's token facts), over real HTTP."""

import time
import uuid

import pytest

REPORT = "/v1/sharedpoolusage/report"
STATUS = "/v2/outboxinvoice/{}/status"


def token_form(username, password, client_id="serviceApi"):
    return {"username": username, "password": password, "client_id": client_id}


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
    response = anonymous.post("auth", "/v1/token", data=token_form("svc-token", "s3cret!"),
                              headers={"Cache-Control": "no-cache"})
    assert response.status_code == 200
    body = response.json()
    assert body["expires_in"] == "86400"  # a string, as on the real platform
    assert body["token_type"] == "Bearer"
    assert body["refresh_token"] == ""
    uuid.UUID(response.headers["X-Correlation-Id"])

    bearer = {"Authorization": f"Bearer {body['access_token']}"}
    report = anonymous.get("crm", REPORT, headers=bearer)
    assert report.status_code == 200
    assert report.json()["customerUniqueId"] == customer["customer_unique_id"]
    assert sandbox.stats()["tokens_issued"] == 1


def test_token_expires_after_its_lifetime(sandbox, anonymous):
    sandbox.add_customer(name="Short Co", username="svc-short", password="pw")
    sandbox.configure(token_lifetime_seconds=1)
    body = anonymous.post("auth", "/v1/token", data=token_form("svc-short", "pw")).json()
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
    response = anonymous.post("auth", "/v1/token", data={"username": "someone"})
    assert response.status_code == 422
    assert set(response.json()) == {"password", "client_id"}
    assert all(isinstance(messages, list) and messages for messages in response.json().values())


def test_wrong_client_id_is_422(sandbox, anonymous):
    sandbox.add_customer(name="Client Co", username="svc-client", password="pw")
    response = anonymous.post("auth", "/v1/token", data=token_form("svc-client", "pw", client_id="other"))
    assert response.status_code == 422
    assert "client_id" in response.json()


@pytest.mark.parametrize("username,password", [("svc-wrong", "bad"), ("nobody", "pw")])
def test_wrong_credentials_are_401(sandbox, anonymous, username, password):
    sandbox.add_customer(name="Wrong Co", username="svc-wrong", password="pw")
    response = anonymous.post("auth", "/v1/token", data=token_form(username, password))
    assert response.status_code == 401
    assert response.json()["title"] == "Unauthorized"
