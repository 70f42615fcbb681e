"""The company-management service of the sandbox over HTTP: the seven operations and rules 1 to 4."""

import random
import time

import pytest
from stdnum.tr import tckimlik, vkn

CREATE = "/v1/crm/customers"
REPORT = "/v1/sharedpoolusage/report"
BATCH_CREDIT = "/v1/crm/addbatchapplicationcredit"
BATCH_PRODUCTS = "/v1/crm/addbatchproducts"
VALID = {"identifier": "1234567890", "name": "Alt Şirket A.Ş.", "quantity": 1000,
         "contactPersonFullName": "Ayşe Yılmaz", "contactPersonEmailName": "ayse@example.com",
         "contactPersonPhoneNumber": "5321234567"}
WINDOW = 0.001  # rate-limit scale: the report's 15-minute window becomes 0.9 s


def new_identifier(digits=10) -> str:
    """A fresh identifier with valid check digits, a VKN (10 digits) or a TCKN (11): the sandbox's documents
    outlive a test, and rule 2 looks at all of them."""
    if digits == 10:
        base = f"{random.randrange(10 ** 8, 10 ** 9):09d}"
        return base + vkn.calc_check_digit(base)
    base = str(random.randrange(10 ** 8, 10 ** 9))
    return base + tckimlik.calc_check_digits(base)


@pytest.fixture
def valid():
    return {**VALID, "identifier": new_identifier()}


def credit_path(uid):
    return f"/v1/crm/customers/{uid}/addapplicationcredit"


def products_path(uid):
    return f"/v1/crm/customers/{uid}/products"


def cancel_path(uid, credit_id):
    return f"/v1/crm/customers/{uid}/applicationcredits/{credit_id}"


@pytest.fixture
def distributor(sandbox, customer_api):
    """(api, customer) of a distributor whose creations are processed at once, with a short report window."""
    sandbox.configure(rate_limit_scale=WINDOW)
    api, customer = customer_api(credits=50_000)
    sandbox.control("POST", "crm/settings", {"customer_unique_id": customer["customer_unique_id"],
                                             "creation_delay_seconds": 0})
    return api, customer


def report(api):
    for _ in range(50):
        response = api.get("crm", REPORT)
        if response.status_code != 429:
            assert response.status_code == 200, response.text
            return response.json()
        time.sleep(0.1)
    raise AssertionError("the report window never opened")


def created_sub(api, **fields):
    body = {**VALID, "identifier": new_identifier(), **fields}
    response = api.post("crm", CREATE, json=body)
    assert response.status_code == 202, response.text
    subs = [s for s in report(api)["subCustomers"] if s["identifier"] == body["identifier"]]
    assert len(subs) == 1
    return subs[0]


def assert_problem(response, status, *words):
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) >= {"title", "detail"}
    for word in words:
        assert word in body["detail"]
    return body


def test_creation_appears_in_the_report_only_after_its_delay(sandbox, customer_api, valid):
    sandbox.configure(rate_limit_scale=WINDOW)
    api, customer = customer_api()
    sandbox.control("POST", "crm/settings", {"customer_unique_id": customer["customer_unique_id"],
                                             "creation_delay_seconds": 1.5})
    assert api.post("crm", CREATE, json=valid).status_code == 202
    assert report(api)["subCustomers"] == []  # rule 3: still being processed
    sandbox.configure(clock_offset_seconds=1.6)  # the delay goes by on the sandbox's clock
    [sub] = report(api)["subCustomers"]
    assert sub["identifier"] == valid["identifier"] and sub["name"] == valid["name"]
    assert sub["distributors"][0]["customerUniqueId"] == customer["customer_unique_id"]
    [credit] = sub["credits"]
    assert isinstance(credit["id"], int) and credit["quantity"] == 1000 and credit["isActive"] is True
    for name in ("customerUniqueId", "applicationId", "applicationSource", "applicationStatus",
                 "applicationCreateDate", "usages", "overUsages", "subCustomers"):
        assert name in sub


def test_the_report_answers_429_inside_its_window(sandbox, customer_api):
    api, _ = customer_api()
    assert api.get("crm", REPORT).status_code == 200
    refused = api.get("crm", REPORT)
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 800  # 15 minutes at scale 1
    assert set(refused.json()) == {"title", "detail"}


@pytest.mark.parametrize("field,value", [
    ("identifier", "123456789"), ("identifier", "123456789012"), ("quantity", 0), ("quantity", "5"),
    ("contactPersonPhoneNumber", "4321234567"), ("contactPersonEmailName", "not-an-email"), ("name", ""),
    # JSON types as document 1, 2.2 gives them: a number as a string, a boolean as a number, a number as a string
    ("quantity", "1000"), ("quantity", True), ("quantity", 10.5), ("identifier", 1234567890),
    ("contactPersonPhoneNumber", 5321234567),
    # check digits: a VKN and a TCKN of the right length whose last digit is wrong
    ("identifier", "1234567891"), ("identifier", "10000000147"),
])
def test_creation_validates_each_field(distributor, valid, field, value):
    api, _ = distributor
    body = assert_problem(api.post("crm", CREATE, json={**valid, field: value}), 422)
    assert list(body["errors"]) == [field]
    assert report(api)["subCustomers"] == []


def test_creation_takes_a_valid_tckn(distributor, valid):
    api, _ = distributor
    assert api.post("crm", CREATE, json={**valid, "identifier": "10000000146"}).status_code == 202


@pytest.mark.parametrize("path,body,field", [
    (CREATE, {**VALID, "Quantity": 5}, "Quantity"),
    (CREATE, {**VALID, "contactPersonEmail": "a@example.com"}, "contactPersonEmail"),
    (BATCH_CREDIT, {"customerUniqueIds": ["7c9e6679-7425-40de-944b-e07fc1f90ae7"], "quantity": 5, "overUsage": True},
     "overUsage"),
    (BATCH_CREDIT, {"customerUniqueIds": ["7c9e6679-7425-40de-944b-e07fc1f90ae7"], "quantity": "5"}, "quantity"),
    (BATCH_CREDIT, {"customerUniqueIds": ["7c9e6679-7425-40de-944b-e07fc1f90ae7"], "quantity": 5,
                    "showOverUsage": "true"}, "showOverUsage"),
    (BATCH_PRODUCTS, {"customerUniqueIds": ["7c9e6679-7425-40de-944b-e07fc1f90ae7"], "productTypes": ["2"]},
     "productTypes[0]"),
    (BATCH_PRODUCTS, {"customerUniqueIds": ["7c9e6679-7425-40de-944b-e07fc1f90ae7"], "productTypes": [True]},
     "productTypes[0]"),
])
def test_bodies_of_another_shape_are_422_naming_the_field(distributor, path, body, field):
    api, _ = distributor
    problem = assert_problem(api.post("crm", path, json=body), 422, field)
    assert list(problem["errors"]) == [field]


def test_company_management_takes_an_api_key_only(sandbox, customer_api, anonymous):
    """Document 1, section 5, rule 2: a bearer token is refused, even of a customer that has an API key."""
    api, customer = customer_api(username="svc-crm", password="pw")
    token = anonymous.post("auth", "/v1/token", headers={"Cache-Control": "no-cache"},
                           data={"username": "svc-crm", "password": "pw", "client_id": "serviceApi"}).json()
    bearer = {"Authorization": f"Bearer {token['access_token']}"}
    for method, path, body in (("GET", REPORT, None), ("POST", CREATE, VALID),
                               ("POST", BATCH_CREDIT, {"customerUniqueIds": [], "quantity": 1})):
        response = anonymous.request(method, "crm", path, json=body, headers=bearer)
        problem = assert_problem(response, 401, "API key")
        assert problem["title"] == "Unauthorized"
    # The same token works on the other services, and the API key on this one.
    assert anonymous.get("invoice", "/v2/outboxinvoice/a/status", headers=bearer).status_code == 200
    assert api.get("crm", REPORT).status_code == 200


def test_rule_2_a_company_with_another_distributors_active_offer_cannot_be_created(sandbox, distributor,
                                                                                   customer_api):
    api, _ = distributor
    sub = created_sub(api)
    rival, _ = customer_api()
    body = assert_problem(rival.post("crm", CREATE, json={**VALID, "identifier": sub["identifier"]}), 409,
                          sub["identifier"], "rule 2")
    assert "active" in body["detail"]


def test_rule_2_a_company_with_an_offer_of_its_own_cannot_be_created(sandbox, distributor, valid):
    api, customer = distributor
    sandbox.control("POST", "crm/sub-customers", {"customer_unique_id": customer["customer_unique_id"],
                                                  "identifier": valid["identifier"], "own_offer": True, "credit": 10})
    assert_problem(api.post("crm", CREATE, json=valid), 409, "rule 2")


def test_creating_an_existing_company_of_the_same_distributor_only_adds_an_offer(distributor):
    api, _ = distributor
    first = created_sub(api)
    assert api.post("crm", CREATE, json={**VALID, "identifier": first["identifier"], "quantity": 250}).status_code == 202
    [again] = report(api)["subCustomers"]
    assert again["customerUniqueId"] == first["customerUniqueId"]
    assert sorted(c["quantity"] for c in again["credits"]) == [250, 1000]


def test_credit_offers_get_ids_one_by_one_and_in_batch(distributor):
    api, _ = distributor
    one = created_sub(api)
    two = created_sub(api, identifier=new_identifier(11))
    answer = api.post("crm", credit_path(one["customerUniqueId"]), json={"quantity": 300, "showOverUsage": True})
    assert answer.status_code == 200 and isinstance(answer.json()["id"], int)
    batch = api.post("crm", BATCH_CREDIT, json={"customerUniqueIds": [one["customerUniqueId"], two["customerUniqueId"]],
                                                "quantity": 50})
    assert batch.status_code == 200 and len(batch.json()) == 2
    subs = {s["customerUniqueId"]: s for s in report(api)["subCustomers"]}
    ids = [c["id"] for s in subs.values() for c in s["credits"]]
    assert len(ids) == len(set(ids)) == 5
    assert [c["quantity"] for c in subs[one["customerUniqueId"]]["credits"]] == [1000, 300, 50]
    assert subs[one["customerUniqueId"]]["credits"][1]["showOverUsage"] is True


def test_credit_operations_validate_and_refuse_unknown_companies(distributor):
    api, _ = distributor
    sub = created_sub(api)
    assert_problem(api.post("crm", credit_path(sub["customerUniqueId"]), json={"quantity": 0}), 422, "quantity")
    assert_problem(api.post("crm", credit_path("7c9e6679-7425-40de-944b-e07fc1f90ae7"), json={"quantity": 5}), 404)
    assert_problem(api.post("crm", BATCH_CREDIT, json={"customerUniqueIds": [], "quantity": 5}), 422)
    # one unknown company in a batch: nothing is added to the other
    assert_problem(api.post("crm", BATCH_CREDIT, json={
        "customerUniqueIds": [sub["customerUniqueId"], "7c9e6679-7425-40de-944b-e07fc1f90ae7"], "quantity": 5}), 404)
    assert len(report(api)["subCustomers"][0]["credits"]) == 1


def test_rule_1_the_last_active_offer_cannot_be_cancelled(distributor):
    api, _ = distributor
    sub = created_sub(api)
    uid, first = sub["customerUniqueId"], sub["credits"][0]["id"]
    assert_problem(api.request("DELETE", "crm", cancel_path(uid, first)), 409, "last active offer", "rule 1")
    second = api.post("crm", credit_path(uid), json={"quantity": 10}).json()["id"]
    assert api.request("DELETE", "crm", cancel_path(uid, first)).json()["isActive"] is False
    assert_problem(api.request("DELETE", "crm", cancel_path(uid, first)), 404)  # already cancelled
    assert_problem(api.request("DELETE", "crm", cancel_path(uid, second)), 409, "rule 1")
    credits = report(api)["subCustomers"][0]["credits"]
    assert [(c["id"], c["isActive"]) for c in credits] == [(first, False), (second, True)]


def test_rule_4_products_need_the_pool_product_and_an_offer(sandbox, distributor):
    api, customer = distributor
    owner = customer["customer_unique_id"]
    no_pool = sandbox.control("POST", "crm/sub-customers", {"customer_unique_id": owner, "identifier": new_identifier(),
                                                            "pool_product": False, "credit": 100})
    no_offer = sandbox.control("POST", "crm/sub-customers", {"customer_unique_id": owner,
                                                             "identifier": new_identifier()})
    ready = created_sub(api)
    assert_problem(api.post("crm", products_path(no_pool["customer_unique_id"]), json={"productTypes": [2]}), 409,
                   "shared pool product", "rule 4")
    assert_problem(api.post("crm", products_path(no_offer["customer_unique_id"]), json={"productTypes": [2]}), 409,
                   "no credit offer")
    assert_problem(api.post("crm", BATCH_PRODUCTS, json={
        "customerUniqueIds": [ready["customerUniqueId"], no_offer["customer_unique_id"]], "productTypes": [2]}), 409)
    answer = api.post("crm", products_path(ready["customerUniqueId"]), json={"productTypes": [5, 2]})
    assert answer.status_code == 200 and answer.json()["productTypes"] == [2, 5]
    # once it has an offer, the other company may have products too
    api.post("crm", credit_path(no_offer["customer_unique_id"]), json={"quantity": 20})
    batch = api.post("crm", BATCH_PRODUCTS, json={
        "customerUniqueIds": [ready["customerUniqueId"], no_offer["customer_unique_id"]], "productTypes": [13]})
    assert [item["productTypes"] for item in batch.json()] == [[2, 5, 13], [13]]


@pytest.mark.parametrize("product_types", [[], [6], [2, 99], "2"])
def test_products_must_be_known_product_types(distributor, product_types):
    api, _ = distributor
    sub = created_sub(api)
    assert_problem(api.post("crm", products_path(sub["customerUniqueId"]), json={"productTypes": product_types}),
                   422, "productTypes")
