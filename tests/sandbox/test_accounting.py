"""The sandbox's accounting service (document 3, 2.1 to 2.5, 2.7, 4.1 and 4.3) over real HTTP: current
accounts and their rules, addresses, banks and contacts with the default rules, mappings, the chart of
accounts, lists with filterQuery, sorting and paging, and the control actions."""

import json
import random
import re

import pytest
from stdnum.tr import tckimlik, vkn

from tests.sandbox.test_tickets import refusal, unbound

ACCOUNTS = "/v1/currentaccount"
CHART = "/v1/chartofaccount"
ITEM_KEYS = {"id", "branchId", "name", "identifier", "surname", "totalBalance", "status"}
ACCOUNT_KEYS = {"id", "branchId", "name", "identifier", "code", "surname", "taxOffice", "maturity", "mersisNumber",
                "registrationNumber", "professionalChamber", "chamberRegistrationNumber", "isUsed", "status"}
CHART_KEYS = {"id", "parentId", "type", "name", "code", "unitCode", "isBundleAccount", "currencyCodeId", "hasChild",
              "baseCode"}
ENVELOPE_KEYS = {"pageIndex", "pageSize", "totalCount", "totalPages", "hasNextPage", "hasPreviousPage", "items"}
IBAN = "TR330006100519786457841326"  # valid checksum


def new_vkn() -> str:
    base = f"{random.randrange(10 ** 8, 10 ** 9):09d}"
    return base + vkn.calc_check_digit(base)


def new_tckn() -> str:
    base = str(random.randrange(10 ** 8, 10 ** 9))
    return base + tckimlik.calc_check_digits(base)


def an_account(**fields):
    body = {"name": "Anadolu Gıda A.Ş.", "identifier": new_vkn(), "taxOffice": "Kadıköy", "maturity": 30}
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


def an_address(**fields):
    body = {"addressName": "Merkez", "subDivisionName": "Kadıköy", "city": "İstanbul", "country": "Türkiye",
            "phoneNumber": "2161234567", "emailAddress": "info@example.com", "webSite": "https://example.com"}
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


def a_bank(**fields):
    body = {"name": "Ana hesap", "bankName": "Ziraat", "ibanNumber": IBAN}
    body.update(fields)
    return {name: value for name, value in body.items() if value is not ...}


def call(api, method, path, status=200, **kwargs):
    response = api.request(method, "accounting", path, **kwargs)
    assert response.status_code == status, response.text
    return response.json()


def create(api, **fields):
    return call(api, "POST", ACCOUNTS, json=an_account(**fields))


def add(api, part, account_id, body, status=200):
    return call(api, "POST", f"{ACCOUNTS}/{part}", status, json={"currentAccountId": account_id, **body})


def records(api, part, account_id, **params):
    return call(api, "GET", f"{ACCOUNTS}/{part}", params={"currentAccountId": account_id, **params})


def listing(api, path=ACCOUNTS, status=200, page_index=1, page_size=500, **params):
    return call(api, "GET", path, status, params={"pageIndex": page_index, "pageSize": page_size, **params})


def problems(response) -> dict:
    """field -> message of a "Validation failed" refusal (a message may hold "; " itself)."""
    body = refusal(response)
    assert body["title"] == "Validation failed", body
    return dict(part.split(": ", 1) for part in re.split(r"; (?=[\w.]+: )", body["detail"].rstrip(".")))


def error(response, status=400) -> str:
    """The Error text of a failed delete (document 3, section 4)."""
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"Error"} and body["Error"], body
    return body["Error"]


def post(api, path, body):
    return api.request("POST", "accounting", path, json=body)


def put(api, path, body):
    return api.request("PUT", "accounting", path, json=body)


def delete(api, path, **params):
    return api.request("DELETE", "accounting", path, params=params)


# --- current accounts -------------------------------------------------------------------------------------------

def test_create_get_update_and_list_a_current_account(sandbox, api):
    body = an_account(code="C-1", mersisNumber="0123456789012345",
                      currentAccountAddress=an_address(isDefault=False))
    created = call(api, "POST", ACCOUNTS, json=body)
    assert isinstance(created["id"], int) and created["isUsed"] is False and created["status"] == 1
    assert set(created) == ACCOUNT_KEYS | {"currentAccountAddress"}
    address = created["currentAccountAddress"]
    assert isinstance(address["id"], int) and address["isDefault"] is True  # the first is default whatever was sent
    assert address["currentAccountId"] == created["id"] and address["city"] == "İstanbul"

    got = call(api, "GET", f"{ACCOUNTS}/{created['id']}")
    assert set(got) == ACCOUNT_KEYS
    assert (got["name"], got["identifier"], got["code"], got["maturity"]) == \
        (body["name"], body["identifier"], "C-1", 30)

    updated = call(api, "PUT", ACCOUNTS, json={**an_account(identifier=body["identifier"], code="C-1"),
                                                "id": created["id"], "name": "Yeni Ad Ltd."})
    assert updated["name"] == "Yeni Ad Ltd." and updated["isUsed"] is False and "currentAccountAddress" not in updated
    assert records(api, "address", created["id"]) == [address]

    page = listing(api)
    assert set(page) == ENVELOPE_KEYS and page["totalCount"] == 1
    item = page["items"][0]
    assert set(item) == ITEM_KEYS
    assert item == {"id": created["id"], "branchId": None, "name": "Yeni Ad Ltd.", "identifier": body["identifier"],
                    "surname": None, "totalBalance": 0, "status": 1}


def test_ids_are_integers_per_customer_counting_from_one(sandbox, customer_api):
    first, _ = customer_api()
    second, _ = customer_api()
    assert [create(first)["id"], create(first)["id"]] == [1, 2]
    assert create(second)["id"] == 1


def test_every_rule_of_an_account_is_named_at_once(sandbox, api):
    body = {"name": "", "identifier": "1234567891", "code": "c" * 51, "surname": "s" * 251, "taxOffice": "t" * 151,
            "mersisNumber": "m" * 51, "registrationNumber": "r" * 51, "professionalChamber": "p" * 251,
            "chamberRegistrationNumber": "k" * 51, "maturity": -1}
    found = problems(post(api, ACCOUNTS, body))
    assert found == {
        "name": "The name field is required",
        "identifier": "identifier is not a valid VKN: its check digit does not match (got '1234567891')",
        "code": "code must be at most 50 characters (got 51)",
        "surname": "surname must be at most 250 characters (got 251)",
        "taxOffice": "taxOffice must be at most 150 characters (got 151)",
        "mersisNumber": "mersisNumber must be at most 50 characters (got 51)",
        "registrationNumber": "registrationNumber must be at most 50 characters (got 51)",
        "professionalChamber": "professionalChamber must be at most 250 characters (got 251)",
        "chamberRegistrationNumber": "chamberRegistrationNumber must be at most 50 characters (got 51)",
        "maturity": "maturity must not be negative (got -1)",
    }
    assert problems(post(api, ACCOUNTS, an_account(name="n" * 501)))["name"] == \
        "name must be at most 500 characters (got 501)"
    assert create(api, name="n" * 500, code="c" * 50)["name"] == "n" * 500  # the limits themselves pass


@pytest.mark.parametrize("identifier, message", [
    (None, "The identifier field is required"),
    ("123456789", "identifier must be 10 digits (VKN) or 11 digits (TCKN) (got '123456789')"),
    ("12345678901", "identifier is not a valid TCKN: its check digits do not match (got '12345678901')"),
    ("12345abcde", "identifier must be 10 digits (VKN) or 11 digits (TCKN) (got '12345abcde')"),
])
def test_the_identifier_is_a_vkn_or_tckn_with_its_check_digits(sandbox, api, identifier, message):
    assert problems(post(api, ACCOUNTS, an_account(identifier=identifier, surname="Yılmaz")))["identifier"] == message


def test_an_eleven_digit_identifier_needs_a_surname(sandbox, api):
    tckn = new_tckn()
    assert problems(post(api, ACCOUNTS, an_account(identifier=tckn)))["surname"] == \
        "The surname field is required when the identifier has 11 digits (a TCKN)"
    created = create(api, identifier=tckn, name="Ayşe", surname="Yılmaz")
    assert created["surname"] == "Yılmaz"
    assert problems(put(api, ACCOUNTS, an_account(id=created["id"], identifier=tckn, name="Ayşe")))["surname"]


@pytest.mark.parametrize("change, name", [
    ({"maturity": "30"}, "maturity"), ({"maturity": 1.5}, "maturity"), ({"identifier": 1234567890}, "identifier"),
    ({"branchId": "1"}, "branchId"), ({"Name": "x"}, "Name"),
    ({"currentAccountAddress": an_address(isDefault="true")}, "currentAccountAddress.isDefault"),
    ({"currentAccountAddress": an_address(currentAccountId=1)}, "currentAccountAddress.currentAccountId"),
])
def test_members_of_another_json_type_or_unknown_are_422(sandbox, api, change, name):
    errors = unbound(post(api, ACCOUNTS, {**an_account(), **change}))
    assert name in errors


def test_a_misspelt_member_is_named_with_its_spelling(sandbox, api):
    errors = unbound(post(api, ACCOUNTS, {**an_account(), "taxoffice": "x"}))
    assert errors["taxoffice"] == [("Unknown field 'taxoffice': this body spells it taxOffice (names are "
                                   "case-sensitive).")]


def test_the_address_is_taken_on_create_only_and_an_id_on_update_only(sandbox, api):
    created = create(api)
    errors = unbound(put(api, ACCOUNTS, an_account(id=created["id"], currentAccountAddress=an_address())))
    assert "taken only when the account is created" in errors["currentAccountAddress"][0]
    assert problems(post(api, ACCOUNTS, an_account(id=5)))["id"].startswith("The id is given by the platform")
    assert problems(put(api, ACCOUNTS, an_account()))["id"] == "The id field is required"


def test_unknown_ids_are_404(sandbox, api):
    for path in (f"{ACCOUNTS}/999", f"{ACCOUNTS}/abc"):
        body = refusal(api.get("accounting", path), 404)
        assert body["title"] == "Not Found" and "No current account with id" in body["detail"]
    assert refusal(put(api, ACCOUNTS, an_account(id=999)), 404)["detail"] == "id: No current account with id 999."


def test_two_accounts_share_an_identifier_only_with_different_codes(sandbox, api):
    identifier = new_vkn()
    first = create(api, identifier=identifier)
    refused = refusal(post(api, ACCOUNTS, an_account(identifier=identifier)))
    assert refused == {"title": "Validation failed",
                       "detail": f"identifier: A current account with identifier {identifier} already exists; give a "
                                 "code to tell them apart."}
    second = create(api, identifier=identifier, code="ŞUBE-2")
    assert problems(post(api, ACCOUNTS, an_account(identifier=identifier, code="ŞUBE-2")))["identifier"] == \
        f"A current account with identifier {identifier} and code ŞUBE-2 already exists; give a code to tell them apart"
    # An update may keep its own identifier and code, not take another account's.
    call(api, "PUT", ACCOUNTS, json=an_account(id=second["id"], identifier=identifier, code="ŞUBE-2"))
    assert problems(put(api, ACCOUNTS, an_account(id=second["id"], identifier=identifier)))["identifier"].startswith(
        f"A current account with identifier {identifier} already exists")
    assert call(api, "GET", f"{ACCOUNTS}/{first['id']}")["code"] is None


def test_branch_ids_must_be_the_accounts(sandbox, api):
    account = create(api, branchId=7)
    assert account["branchId"] == 7
    message = "The current account does not belong to branch 8"
    assert problems(put(api, ACCOUNTS, an_account(id=account["id"], identifier=account["identifier"], branchId=8))) \
        == {"branchId": message}
    assert problems(add_response(api, "address", account["id"], an_address(branchId=8))) == {"branchId": message}
    address = add(api, "address", account["id"], an_address(branchId=7))
    assert address["branchId"] == 7
    contact = add(api, "contact", account["id"], {"fullName": "Ali Veli"})  # no branchId: the account's
    assert contact["branchId"] == 7
    other_branch = api.get("accounting", f"{ACCOUNTS}/address",
                           params={"currentAccountId": account["id"], "branchId": 8})
    assert refusal(other_branch)["detail"] == f"branchId: {message}."
    assert records(api, "address", account["id"], branchId=7) == [address]
    assert error(delete(api, f"{ACCOUNTS}/contact/{contact['id']}", branchId=8)) == f"{message}."
    assert call(api, "DELETE", f"{ACCOUNTS}/contact/{contact['id']}", params={"branchId": 7}) == {}
    assert problems(post(api, ACCOUNTS, an_account(currentAccountAddress=an_address(branchId=3)))) == \
        {"currentAccountAddress.branchId": "The current account does not belong to branch 3"}  # it has none
    assert problems(post(api, ACCOUNTS, an_account(branchId=2, currentAccountAddress=an_address(branchId=3)))) == \
        {"currentAccountAddress.branchId": "The current account does not belong to branch 3"}


def add_response(api, part, account_id, body):
    return post(api, f"{ACCOUNTS}/{part}", {"currentAccountId": account_id, **body})


# --- addresses, banks, contacts ---------------------------------------------------------------------------------

def test_address_rules_name_each_field(sandbox, api):
    account = create(api)
    body = {"addressName": "a" * 251, "region": "r" * 101, "streetName": "s" * 101, "postalZone": "p" * 101,
            "emailAddress": "not-an-email", "phoneNumber": "21612345", "faxNumber": "21612345678x",
            "webSite": "http://bad host"}
    assert problems(add_response(api, "address", account["id"], body)) == {
        "subDivisionName": "The subDivisionName field is required",
        "city": "The city field is required",
        "country": "The country field is required",
        "addressName": "addressName must be at most 250 characters (got 251)",
        "region": "region must be at most 100 characters (got 101)",
        "streetName": "streetName must be at most 100 characters (got 101)",
        "postalZone": "postalZone must be at most 100 characters (got 101)",
        "faxNumber": "faxNumber must be 10 to 11 digits and nothing else (got '21612345678x')",
        "phoneNumber": "phoneNumber must be 10 to 11 digits and nothing else (got '21612345')",
        "emailAddress": "emailAddress is not a valid e-mail address (got 'not-an-email')",
        "webSite": "webSite is not a valid web address (got 'http://bad host')",
    }
    long_mail = "a" * 240 + "@example.com"
    assert problems(add_response(api, "address", account["id"], an_address(emailAddress=long_mail))) == \
        {"emailAddress": "emailAddress must be at most 250 characters (got 252)"}
    fine = add(api, "address", account["id"], an_address(webSite="www.example.com.tr", phoneNumber="05321234567"))
    assert fine["webSite"] == "www.example.com.tr"
    errors = unbound(add_response(api, "address", account["id"], an_address(phoneNumber=5321234567)))
    assert "phoneNumber" in errors


def test_unknown_or_missing_accounts_of_child_records(sandbox, api):
    assert refusal(add_response(api, "address", 999, an_address()), 404)["detail"] == \
        "currentAccountId: No current account with id 999."
    assert problems(post(api, f"{ACCOUNTS}/address", an_address())) == \
        {"currentAccountId": "The currentAccountId field is required"}
    assert refusal(api.get("accounting", f"{ACCOUNTS}/bank", params={"currentAccountId": 999}), 404)
    assert refusal(api.get("accounting", f"{ACCOUNTS}/contact"))["detail"] == \
        "currentAccountId: The currentAccountId field is required."
    assert refusal(put(api, f"{ACCOUNTS}/address", {"id": 999, **an_address()}), 404)["detail"] == \
        "id: No address with id 999."
    assert error(delete(api, f"{ACCOUNTS}/address/999"), 404) == "No address with id 999."


def test_default_address_rules(sandbox, api):
    account = create(api)["id"]
    first = add(api, "address", account, an_address(addressName="Merkez", isDefault=False))
    assert first["isDefault"] is True  # the first is default whatever was sent
    second = add(api, "address", account, an_address(addressName="Depo"))
    assert second["isDefault"] is False
    third = add(api, "address", account, an_address(addressName="Şube", isDefault=True))
    assert [a["isDefault"] for a in records(api, "address", account)] == [False, False, True]
    assert third["isDefault"] is True

    refused = put(api, f"{ACCOUNTS}/address", {**an_address(addressName="Şube"), "id": third["id"], "isDefault": False})
    assert problems(refused) == {"isDefault": "An account needs a default address; make another one default instead"}
    assert error(delete(api, f"{ACCOUNTS}/address/{third['id']}")) == \
        "The default address cannot be deleted; make another address default first."

    updated = call(api, "PUT", f"{ACCOUNTS}/address", json={**an_address(addressName="Ana Depo"), "id": second["id"],
                                                            "isDefault": True})
    assert updated["isDefault"] is True and updated["addressName"] == "Ana Depo"
    assert [(a["id"], a["isDefault"]) for a in records(api, "address", account)] == \
        [(first["id"], False), (second["id"], True), (third["id"], False)]
    # isDefault left out keeps the record as it is.
    kept = call(api, "PUT", f"{ACCOUNTS}/address", json={**an_address(city="Ankara"), "id": second["id"]})
    assert kept["isDefault"] is True and kept["city"] == "Ankara"
    assert call(api, "DELETE", f"{ACCOUNTS}/address/{third['id']}") == {}
    assert error(delete(api, f"{ACCOUNTS}/address/{third['id']}"), 404) == f"No address with id {third['id']}."
    assert [a["id"] for a in records(api, "address", account)] == [first["id"], second["id"]]
    assert problems(put(api, f"{ACCOUNTS}/address", {**an_address(), "id": first["id"], "currentAccountId": 999})) \
        == {"currentAccountId": f"The address {first['id']} belongs to current account {account}; it cannot be moved "
                                "to another"}


def test_bank_rules_and_defaults(sandbox, api):
    account = create(api)["id"]
    body = {"bankName": "b" * 101, "bankBranchName": "b" * 101, "bankAccountNumber": "1" * 51,
            "receiverName": "r" * 101, "type": "t" * 101, "ibanNumber": "TR330006100519786457841327"}
    assert problems(add_response(api, "bank", account, body)) == {
        "name": "The name field is required",
        "bankName": "bankName must be at most 100 characters (got 101)",
        "bankBranchName": "bankBranchName must be at most 100 characters (got 101)",
        "bankAccountNumber": "bankAccountNumber must be at most 50 characters (got 51)",
        "receiverName": "receiverName must be at most 100 characters (got 101)",
        "type": "type must be at most 100 characters (got 101)",
        "ibanNumber": "ibanNumber is not a valid IBAN: its length or check digits do not match "
                      "(got 'TR330006100519786457841327')",
    }
    assert problems(add_response(api, "bank", account, a_bank(name="n" * 101, ibanNumber=IBAN + "00"))) == {
        "name": "name must be at most 100 characters (got 101)",
        "ibanNumber": "ibanNumber must be at most 26 characters (got 28)"}
    first = add(api, "bank", account, a_bank(ibanNumber="tr33 0006 1005 1978 6457 8413 26"))
    assert first["ibanNumber"] == IBAN and first["isDefault"] is True
    second = add(api, "bank", account, a_bank(name="İkinci", isDefault=True))
    assert [b["isDefault"] for b in records(api, "bank", account)] == [False, True]
    assert problems(put(api, f"{ACCOUNTS}/bank", {**a_bank(), "id": second["id"], "isDefault": False})) == \
        {"isDefault": "An account needs a default bank record; make another one default instead"}
    assert error(delete(api, f"{ACCOUNTS}/bank/{second['id']}")) == \
        "The default bank record cannot be deleted; make another bank record default first."
    assert call(api, "DELETE", f"{ACCOUNTS}/bank/{first['id']}") == {}
    assert unbound(add_response(api, "bank", account, a_bank(isDefault=1))) == \
        {"isDefault": ["isDefault must be a JSON boolean, not a number (1)."]}


def test_contacts(sandbox, api):
    account = create(api)["id"]
    assert problems(add_response(api, "contact", account, {"phoneNumber": "abc", "emailAddress": "a@b"})) == {
        "fullName": "The fullName field is required",
        "phoneNumber": "phoneNumber must be 10 to 11 digits and nothing else (got 'abc')",
        "emailAddress": "emailAddress is not a valid e-mail address (got 'a@b')"}
    assert problems(add_response(api, "contact", account, {"fullName": "f" * 101})) == \
        {"fullName": "fullName must be at most 100 characters (got 101)"}
    contact = add(api, "contact", account, {"fullName": "Ali Veli", "phoneNumber": "5321234567"})
    assert set(contact) == {"id", "currentAccountId", "branchId", "fullName", "phoneNumber", "emailAddress"}
    other = add(api, "contact", account, {"fullName": "Ayşe Kaya"})
    changed = call(api, "PUT", f"{ACCOUNTS}/contact", json={"id": contact["id"], "fullName": "Ali Veli Yılmaz"})
    assert changed["fullName"] == "Ali Veli Yılmaz" and changed["phoneNumber"] is None  # PUT replaces
    assert call(api, "DELETE", f"{ACCOUNTS}/contact/{contact['id']}") == {}  # contacts have no default
    assert records(api, "contact", account) == [other]


# --- chart of accounts ---------------------------------------------------------------------------------------

def chart(api, body, status=200):
    return call(api, "POST", CHART, status, json=body)


def sub_account(api, parent, unit="001", pool=False, **fields):
    body = {"baseCode": "120", "name": f"Alıcı {unit}", "type": 2, "parentId": parent["id"],
            "code": f"{parent['code']}.{parent['unitCode']}" if parent["unitCode"] else parent["code"],
            "unitCode": unit, "isBundleAccount": pool, "currencyCodeId": 1}
    body.update(fields)
    return chart(api, body)


def tree(api):
    """120 Alıcılar (main) > 120.01 Yurtiçi Alıcılar (group)."""
    main = chart(api, {"baseCode": "120", "name": "Alıcılar", "type": 0})
    group = chart(api, {"baseCode": "120", "name": "Yurtiçi Alıcılar", "type": 1, "parentId": main["id"],
                        "code": "120", "unitCode": "01"})
    return main, group


def test_chart_accounts_are_created_and_listed(sandbox, api):
    main, group = tree(api)
    assert set(main) == CHART_KEYS
    assert main == {"id": main["id"], "parentId": None, "type": 0, "name": "Alıcılar", "code": "120", "unitCode": "",
                    "isBundleAccount": False, "currencyCodeId": None, "hasChild": False, "baseCode": "120"}
    sub = sub_account(api, group, currencyCodeId=949)
    assert sub["currencyCodeId"] == "949" and sub["code"] == "120.01" and sub["parentId"] == group["id"]
    items = {item["id"]: item for item in listing(api, CHART)["items"]}
    assert [items[main["id"]]["hasChild"], items[group["id"]]["hasChild"], items[sub["id"]]["hasChild"]] == \
        [True, True, False]
    updated = call(api, "PUT", CHART, json={"id": sub["id"], "baseCode": "120", "name": "Alıcı A", "type": 2,
                                           "parentId": group["id"], "code": "120.01", "unitCode": "001",
                                           "currencyCodeId": 1, "isBundleAccount": True})
    assert updated["name"] == "Alıcı A" and updated["isBundleAccount"] is True and updated["currencyCodeId"] == "1"


def test_chart_rules_name_each_field(sandbox, api):
    assert problems(post(api, CHART, {})) == {
        "baseCode": "The baseCode field is required", "name": "The name field is required",
        "type": "The type field is required: 0 (main), 1 (group) or 2 (sub-account)"}
    assert problems(post(api, CHART, {"baseCode": "100", "name": "Kasa", "type": 3})) == \
        {"type": "type must be 0 (main), 1 (group) or 2 (sub-account) (got 3)"}
    assert problems(post(api, CHART, {"baseCode": "100", "name": "Kasa", "type": 2, "isBundleAccount": True})) == {
        "code": "The code field is required for group and sub-accounts: the code of the parent account",
        "currencyCodeId": "The currencyCodeId field is required for sub-accounts"}
    assert problems(post(api, CHART, {"baseCode": "100", "name": "Kasa", "type": 1, "code": "100",
                                      "isBundleAccount": True, "parentId": 999})) == {
        "isBundleAccount": "Only sub-accounts (type 2) can be pool accounts",
        "parentId": "No chart-of-accounts account with id 999"}
    main, group = tree(api)
    assert problems(post(api, CHART, {"baseCode": "120", "name": "X", "type": 1, "code": "120", "unitCode": "02",
                                      "parentId": group["id"]})) == \
        {"parentId": "The parent must be of a lower type than the account: account 120.01 is a group account (type 1)"}
    assert problems(post(api, CHART, {"baseCode": "120", "name": "Alıcılar", "type": 0})) == \
        {"code": "An account with code 120 already exists"}
    again = post(api, CHART, {"baseCode": "120", "name": "Tekrar", "type": 1, "code": "120", "unitCode": "01",
                              "parentId": main["id"]})
    assert problems(again) == {"code": "An account with code 120.01 already exists"}
    assert unbound(post(api, CHART, {"baseCode": "100", "name": "Kasa", "type": "0"})) == \
        {"type": ["type must be a JSON integer, not a string (\"0\")."]}
    assert unbound(post(api, CHART, {"baseCode": "100", "name": "Kasa", "type": 2, "currencyCodeId": "1"}))
    assert problems(post(api, CHART, {"id": 4, "baseCode": "100", "name": "Kasa", "type": 0}))["id"]
    # Types grow from parent to child: the main account cannot become a group above its group.
    assert problems(put(api, CHART, {"id": main["id"], "baseCode": "120", "name": "Alıcılar", "type": 1,
                                     "code": "120"})) == \
        {"type": "The account has child accounts of type 1; its type must stay below theirs"}
    assert refusal(put(api, CHART, {"id": 999, "baseCode": "1", "name": "x", "type": 0}), 404)


def test_a_used_chart_account_cannot_be_updated(sandbox, customer_api):
    api, customer = customer_api()
    main, _ = tree(api)
    sandbox.control("POST", "accounting/use", {"customer_unique_id": customer["customer_unique_id"],
                                               "kind": "account", "id": main["id"]})
    body = refusal(put(api, CHART, {"id": main["id"], "baseCode": "120", "name": "Alıcılar 2", "type": 0}))
    assert body["detail"] == "This account is used and cannot be changed."


def test_chart_list_filters_and_sorts(sandbox, api):
    main, group = tree(api)
    subs = [sub_account(api, group, unit) for unit in ("001", "002", "003")]
    kasa = chart(api, {"baseCode": "100", "name": "Kasa", "type": 0})

    def ids(conditions, **params):
        query = {"filterQuery": json.dumps(conditions)} if conditions else {}
        return [item["id"] for item in listing(api, CHART, **query, **params)["items"]]

    assert ids([{"category": "Type", "operator": "eşittir", "value": 2}]) == [s["id"] for s in subs]
    assert ids([{"category": "ParentId", "operator": "eşittir", "value": group["id"]}]) == [s["id"] for s in subs]
    assert ids([{"category": "BaseCode", "operator": "eşittir", "value": "100"}]) == [kasa["id"]]
    assert ids([{"category": "Code", "operator": "ile başlayan", "value": "120.0"}]) == [s["id"] for s in subs]
    assert ids([{"category": "Name", "operator": "içeren", "value": "ALICI"}, {"category": "Type", "operator":
                "küçüktür", "value": 2}]) == [main["id"], group["id"]]
    assert ids(None, sortedColumn="Code", isDesc="true")[:1] == [subs[-1]["id"]]
    assert ids(None, sortedColumn="Type") == [main["id"], kasa["id"], group["id"], *[s["id"] for s in subs]]
    assert refusal(api.get("accounting", CHART, params={"pageIndex": 1, "pageSize": 10, "filterQuery": json.dumps(
        [{"category": "Identifier", "operator": "eşittir", "value": "1"}])}))["detail"] == \
        "filterQuery: unknown category 'Identifier'; one of Id, Code, Name, Type, BaseCode, ParentId."
    assert listing(api, CHART, status=400, page_size=501)["detail"] == "pageSize: pageSize must be between 1 and 500."


# --- mappings ------------------------------------------------------------------------------------------------

def test_mappings_and_their_rules(sandbox, customer_api):
    api, customer = customer_api()
    first, second = create(api)["id"], create(api)["id"]
    _main, group = tree(api)
    single = sub_account(api, group, "001")
    pool = sub_account(api, group, "002", pool=True)

    mapping = call(api, "POST", f"{ACCOUNTS}/mapping", json={"currentAccountId": first, "accountId": single["id"],
                                                             "name": "Satışlar"})
    assert mapping == {"id": mapping["id"], "currentAccountId": first, "accountId": single["id"], "name": "Satışlar",
                       "account": {"code": "120.01.001", "name": "Alıcı 001", "isBundleAccount": False}}
    refused = post(api, f"{ACCOUNTS}/mapping", {"currentAccountId": second, "accountId": single["id"]})
    assert problems(refused) == {"accountId": f"Account 120.01.001 is not a pool account and is already mapped to "
                                              f"current account {first}; only a pool account can be mapped to several "
                                              "current accounts"}
    assert problems(post(api, f"{ACCOUNTS}/mapping", {"currentAccountId": first, "accountId": single["id"]})) == \
        {"accountId": f"Account 120.01.001 is already mapped to current account {first}"}
    assert problems(post(api, f"{ACCOUNTS}/mapping", {"currentAccountId": first, "accountId": group["id"],
                                                      "name": "n" * 251})) == {
        "accountId": "Account 120.01 is a group account; only sub-accounts (type 2) can be mapped to a current account",
        "name": "name must be at most 250 characters (got 251)"}
    assert problems(post(api, f"{ACCOUNTS}/mapping", {"currentAccountId": first, "accountId": 999})) == \
        {"accountId": "No chart-of-accounts account with id 999"}
    assert refusal(post(api, f"{ACCOUNTS}/mapping", {"currentAccountId": 999, "accountId": pool["id"]}), 404)

    # A pool account maps to several current accounts.
    for current in (first, second):
        call(api, "POST", f"{ACCOUNTS}/mapping", json={"currentAccountId": current, "accountId": pool["id"]})
    page = call(api, "GET", f"{ACCOUNTS}/mapping", params={"currentAccountId": first, "pageIndex": 1, "pageSize": 1})
    assert set(page) == ENVELOPE_KEYS and page["totalCount"] == 2 and page["totalPages"] == 2 and page["hasNextPage"]
    assert page["items"] == [{"id": mapping["id"], "name": "Satışlar", "branchId": None, "currentAccountId": first,
                              "accountId": single["id"], "accountCode": "120.01.001", "accountName": "Alıcı 001",
                              "adjunctAccount": "001", "baseAccount": "120", "isBundleAccount": False,
                              "accountCurrencyCodeId": 1, "status": 1}]
    assert refusal(api.get("accounting", f"{ACCOUNTS}/mapping", params={"currentAccountId": first}))  # paging needed

    # The pool account mapped twice must stay a pool account.
    body = {"id": pool["id"], "baseCode": "120", "name": "Havuz", "type": 2, "parentId": group["id"],
            "code": "120.01", "unitCode": "002", "currencyCodeId": 1, "isBundleAccount": False}
    assert problems(put(api, CHART, body)) == \
        {"isBundleAccount": "The account is mapped to several current accounts; it must stay a pool account"}

    updated = call(api, "PUT", f"{ACCOUNTS}/mapping", json={"id": mapping["id"], "currentAccountId": first,
                                                            "accountId": single["id"], "name": "Yeni"})
    assert updated["name"] == "Yeni" and updated["customerId"] and updated["accountType"] == 2
    assert {"createDate", "updateDate", "account", "currentAccount", "receiveInvoice", "sendInvoice", "status"} <= \
        set(updated)
    assert updated["currentAccount"]["id"] == first

    sandbox.control("POST", "accounting/use", {"customer_unique_id": customer["customer_unique_id"],
                                               "kind": "mapping", "id": mapping["id"]})
    assert error(delete(api, f"{ACCOUNTS}/mapping/{mapping['id']}")) == \
        "The mapping is used by a record; delete that record first."
    sandbox.control("POST", "accounting/use", {"customer_unique_id": customer["customer_unique_id"],
                                               "kind": "mapping", "id": mapping["id"], "used": False})
    assert call(api, "DELETE", f"{ACCOUNTS}/mapping/{mapping['id']}") == {}
    assert error(delete(api, f"{ACCOUNTS}/mapping/{mapping['id']}"), 404) == f"No mapping with id {mapping['id']}."
    # With the mapping gone the account maps to the second current account.
    call(api, "POST", f"{ACCOUNTS}/mapping", json={"currentAccountId": second, "accountId": single["id"]})


# --- lists: filterQuery, sorting, paging ----------------------------------------------------------------------

@pytest.fixture
def five(sandbox, api):
    """Five accounts: Alfa, Beta, Gama, Delta, Epsilon (ids 1 to 5), Delta with code D1 and a TCKN."""
    names = ("Alfa Ltd.", "Beta A.Ş.", "Gama Ltd.", "Delta Ltd.", "Epsilon A.Ş.")
    made = []
    for name in names:
        fields = {"code": "D1", "identifier": new_tckn(), "surname": "Yılmaz"} if name.startswith("Delta") else {}
        made.append(create(api, name=name, **fields))
    return api, made


def matching(api, *conditions, **params):
    query = {"filterQuery": json.dumps(list(conditions))} if conditions else {}
    return [item["name"].split()[0] for item in listing(api, **query, **params)["items"]]


@pytest.mark.parametrize("category, operator, value, names", [
    ("Id", "eşittir", 2, ["Beta"]),
    ("Id", "eşit değildir", "2", ["Alfa", "Gama", "Delta", "Epsilon"]),
    ("Id", "eşittir değildir", 2, ["Alfa", "Gama", "Delta", "Epsilon"]),
    ("Id", "küçüktür", 3, ["Alfa", "Beta"]),
    ("Id", "küçük ve eşittir", 3, ["Alfa", "Beta", "Gama"]),
    ("Id", "büyüktür", 3, ["Delta", "Epsilon"]),
    ("Id", "büyük ve eşittir", 3, ["Gama", "Delta", "Epsilon"]),
    ("Name", "eşittir", "beta a.ş.", ["Beta"]),
    ("Name", "içeren", "LTD", ["Alfa", "Gama", "Delta"]),
    ("Name", "içermeyen", "ltd", ["Beta", "Epsilon"]),
    ("Name", "ile başlayan", "de", ["Delta"]),
    ("Name", "ile başlamayan", "A", ["Beta", "Gama", "Delta", "Epsilon"]),
    ("Name", "küçüktür", "C", ["Alfa", "Beta"]),
    ("Name", "Büyük  ve eşittir", "E", ["Gama", "Epsilon"]),
    ("Code", "eşittir", "d1", ["Delta"]),
    ("Surname", "içeren", "yıl", ["Delta"]),
])
def test_each_filter_operator(five, category, operator, value, names):
    api, _ = five
    assert matching(api, {"category": category, "operator": operator, "value": value}) == names


def test_identifier_filter_and_conditions_together(five):
    api, made = five
    identifier = made[2]["identifier"]
    assert matching(api, {"category": "Identifier", "operator": "eşittir", "value": identifier}) == ["Gama"]
    assert matching(api, {"category": "Identifier", "operator": "ile başlayan", "value": identifier[:9]},
                    {"category": "Id", "operator": "büyüktür", "value": 1}) == ["Gama"]
    # One object is taken as a list of one.
    query = json.dumps({"category": "Name", "operator": "ile başlayan", "value": "Be"})
    assert [item["name"] for item in listing(api, filterQuery=query)["items"]] == ["Beta A.Ş."]


@pytest.mark.parametrize("raw, detail", [
    ("[{", "filterQuery: is not valid JSON; send an array of {category, operator, value}."),
    ('"Name"', "filterQuery: must be a JSON array of {category, operator, value}."),
    ("[1]", "filterQuery: each condition must be an object {category, operator, value}."),
    (json.dumps([{"category": "TaxOffice", "operator": "eşittir", "value": "x"}]),
     "filterQuery: unknown category 'TaxOffice'; one of Id, Name, Identifier, Code, Surname."),
    (json.dumps([{"category": "Name", "operator": "benzer", "value": "x"}]),
     ("filterQuery: unknown operator 'benzer'; one of eşittir, eşit değildir, eşittir değildir, küçüktür, küçük ve "
     "eşittir, büyüktür, büyük ve eşittir, içeren, içermeyen, ile başlayan, ile başlamayan.")),
    (json.dumps([{"category": "Id", "operator": "içeren", "value": 1}]),
     "filterQuery: Id is a number; the operator 'içeren' applies to text only."),
    (json.dumps([{"category": "Id", "operator": "eşittir", "value": "bir"}]),
     'filterQuery: Id takes a whole number (got "bir").'),
    (json.dumps([{"category": "Name", "operator": "eşittir"}]), "filterQuery: the condition on Name has no value."),
])
def test_bad_filters_are_400_with_a_clear_detail(five, raw, detail):
    api, _ = five
    body = refusal(api.get("accounting", ACCOUNTS, params={"pageIndex": 1, "pageSize": 10, "filterQuery": raw}))
    assert body == {"title": "Bad Request", "detail": detail}


def test_sorting(five):
    api, _ = five
    assert matching(api) == ["Alfa", "Beta", "Gama", "Delta", "Epsilon"]
    assert matching(api, isDesc="true") == ["Epsilon", "Delta", "Gama", "Beta", "Alfa"]
    assert matching(api, sortedColumn="Name") == ["Alfa", "Beta", "Delta", "Epsilon", "Gama"]
    assert matching(api, sortedColumn="Name", isDesc="TRUE") == ["Gama", "Epsilon", "Delta", "Beta", "Alfa"]
    identifiers = [item["identifier"] for item in listing(api, sortedColumn="Identifier")["items"]]
    assert identifiers == sorted(identifiers)
    for params, detail in (({"sortedColumn": "TaxOffice"}, ("sortedColumn: unknown column 'TaxOffice'; one of Id, "
                                                           "Name, Identifier.")),
                           ({"isDesc": "evet"}, "isDesc: must be true or false (got 'evet').")):
        assert refusal(api.get("accounting", ACCOUNTS, params={"pageIndex": 1, "pageSize": 5, **params}))["detail"] \
            == detail


@pytest.mark.parametrize("params, detail", [
    ({"pageIndex": 1, "pageSize": 501}, "pageSize: pageSize must be between 1 and 500."),
    ({"pageIndex": 1, "pageSize": 0}, "pageSize: pageSize must be between 1 and 500."),
    ({"pageIndex": 0, "pageSize": 10}, "pageIndex: pageIndex must be at least 1."),
    ({"pageIndex": 1}, "pageSize: The pageSize field is required."),
    ({"pageIndex": "x", "pageSize": 10}, "pageIndex: The value 'x' is not valid for pageIndex."),
])
def test_paging_limits(sandbox, api, params, detail):
    assert refusal(api.get("accounting", ACCOUNTS, params=params)) == {"title": "Bad Request", "detail": detail}


# --- control actions ---------------------------------------------------------------------------------------------

def test_seeded_accounts_are_valid_and_paged(sandbox, customer_api):
    api, customer = customer_api()
    mine = create(api)
    seeded = sandbox.control("POST", "accounting/seed-current-accounts",
                             {"customer_unique_id": customer["customer_unique_id"], "count": 1203})
    assert seeded == {"created": 1203, "first_id": 2, "last_id": 1204}
    pages = [listing(api, page_index=index) for index in (1, 2, 3, 4)]
    assert [(p["totalCount"], p["totalPages"], len(p["items"]), p["hasNextPage"], p["hasPreviousPage"])
            for p in pages] == [(1204, 3, 500, True, False), (1204, 3, 500, True, True), (1204, 3, 204, False, True),
                                (1204, 3, 0, False, True)]
    items = [item for page in pages for item in page["items"]]
    assert [item["id"] for item in items] == list(range(1, 1205))
    identifiers = [item["identifier"] for item in items]
    assert len(set(identifiers)) == 1204 and all(vkn.is_valid(number) for number in identifiers)
    # A seeded identifier is taken like any other; a second seed continues the ids.
    assert problems(post(api, ACCOUNTS, an_account(identifier=identifiers[-1])))["identifier"].startswith(
        f"A current account with identifier {identifiers[-1]} already exists")
    again = sandbox.control("POST", "accounting/seed-current-accounts",
                            {"api_key": api.http.headers["x-api-key"], "count": 10, "branch_id": 4})
    assert again == {"created": 10, "first_id": 1205, "last_id": 1214}
    last = call(api, "GET", f"{ACCOUNTS}/1214")
    assert last["branchId"] == 4 and vkn.is_valid(last["identifier"]) and last["identifier"] not in identifiers
    assert mine["id"] == 1


def test_the_use_control_action(sandbox, customer_api):
    api, customer = customer_api()
    account = create(api)
    sandbox.control("POST", "accounting/use", {"customer_unique_id": customer["customer_unique_id"],
                                               "kind": "current_account", "id": account["id"]})
    assert call(api, "GET", f"{ACCOUNTS}/{account['id']}")["isUsed"] is True
    for body, message in (({"kind": "invoice", "id": 1}, "kind must be one of"),
                          ({"kind": "mapping", "id": 42}, "no mapping with id 42")):
        with pytest.raises(RuntimeError, match=message):
            sandbox.control("POST", "accounting/use", {"customer_unique_id": customer["customer_unique_id"], **body})
    with pytest.raises(RuntimeError, match="count must be between"):
        sandbox.control("POST", "accounting/seed-current-accounts",
                        {"customer_unique_id": customer["customer_unique_id"], "count": 0})


# --- posting needs the customer's mapping (document 3, 2.6 and 4.2) ------------------------------------------

def map_customer(api, identifier, code=None, name="Müşteri A.Ş."):
    """The current account of identifier (and code) mapped to a sub-account, made through the API as a customer
    does in the accounting interface: the account when there is none, a sub-account, the mapping."""
    items = listing(api, filterQuery=json.dumps([{"category": "Identifier", "operator": "eşittir",
                                                  "value": identifier}]))["items"]
    found = [item for item in items if (call(api, "GET", f"{ACCOUNTS}/{item['id']}")["code"] or None) == code]
    account = found[0] if found else create(api, name=name, identifier=identifier, code=code or ...,
                                            **({"surname": "Yılmaz"} if len(identifier) == 11 else {}))
    main = chart(api, {"baseCode": "120", "name": "Alıcılar", "type": 0, "code": f"120-{account['id']}"})
    sub = sub_account(api, main, f"{account['id']:03d}")
    return call(api, "POST", f"{ACCOUNTS}/mapping", json={"currentAccountId": account["id"], "accountId": sub["id"]})


def test_posting_an_invoice_whose_customer_has_no_mapping_is_refused(sandbox, api):
    from tests.sandbox.test_invoices import ARCHIVE_VKN, an_archive, get, moved, save

    unknown = save(api, an_archive())["generalInfoModel"]  # the customer is no current account at all
    refused = error(moved(api, "post", [{"ettn": unknown["ettn"], "isSend": True}]))
    assert refused == (f"Nothing was posted: invoice {unknown['invoiceNumber']} ({unknown['ettn']}): the current "
                       f"account {ARCHIVE_VKN} has no account mapping (it is not among the current accounts).")
    account = create(api, name="Ayşe Yılmaz Ltd.", identifier=ARCHIVE_VKN)  # made, but not mapped yet
    coded = save(api, an_archive(currentAccountCode="B-2"))["generalInfoModel"]
    items = [{"ettn": unknown["ettn"], "isSend": True}, {"ettn": coded["ettn"], "isSend": True}]
    refused = error(moved(api, "post", items))
    assert (f"the current account Ayşe Yılmaz Ltd. ({ARCHIVE_VKN}, id {account['id']}) has no account mapping: map "
            "it to a sub-account first") in refused
    assert f"the current account {ARCHIVE_VKN} / B-2 has no account mapping" in refused  # the code tells them apart
    map_customer(api, ARCHIVE_VKN)
    refused = error(moved(api, "post", items))  # all or none: the one with code B-2 holds both back
    assert unknown["invoiceNumber"] not in refused and coded["invoiceNumber"] in refused
    assert get(api, unknown["ettn"])["recordStatus"] == 0
    map_customer(api, ARCHIVE_VKN, code="B-2")
    assert moved(api, "post", items).json() == {}
    assert [get(api, item["ettn"])["recordStatus"] for item in items] == [1, 1]
    assert moved(api, "reverse", items).json() == {}  # reversing asks for nothing of the kind


# --- names read only as document 3 spells them ----------------------------------------------------------------

@pytest.mark.parametrize("condition, member", [
    ({"Category": "Name", "operator": "eşittir", "value": "x"}, "Category"),
    ({"category": "Name", "OPERATOR": "eşittir", "value": "x"}, "OPERATOR"),
    ({"category": "Name", "operator": "eşittir", "Value": "x"}, "Value"),
])
def test_condition_members_in_another_letter_case_are_refused(sandbox, api, condition, member):
    for path in (ACCOUNTS, CHART):
        body = refusal(api.get("accounting", path, params={"pageIndex": 1, "pageSize": 10,
                                                             "filterQuery": json.dumps([condition])}))
        assert body["title"] == "Bad Request" and f"filterQuery: unknown member '{member}'" in body["detail"]


@pytest.mark.parametrize("path, params, detail", [
    (ACCOUNTS, {"filterQuery": json.dumps([{"category": "name", "operator": "eşittir", "value": "x"}])},
     "filterQuery: unknown category 'name'; it is spelled Name (names are case-sensitive)."),
    (ACCOUNTS, {"filterQuery": json.dumps([{"category": "IDENTIFIER", "operator": "eşittir", "value": "1"}])},
     "filterQuery: unknown category 'IDENTIFIER'; it is spelled Identifier (names are case-sensitive)."),
    (ACCOUNTS, {"sortedColumn": "name"}, "sortedColumn: unknown column 'name'; it is spelled Name (names are "
                                         "case-sensitive)."),
    (CHART, {"filterQuery": json.dumps([{"category": "code", "operator": "eşittir", "value": "120"}])},
     "filterQuery: unknown category 'code'; it is spelled Code (names are case-sensitive)."),
    (CHART, {"sortedColumn": "baseCode"}, "sortedColumn: unknown column 'baseCode'; it is spelled BaseCode (names "
                                          "are case-sensitive)."),
])
def test_list_names_in_another_letter_case_are_refused(sandbox, api, path, params, detail):
    assert refusal(api.get("accounting", path, params={"pageIndex": 1, "pageSize": 10, **params})) == \
        {"title": "Bad Request", "detail": detail}


def test_the_names_the_back_office_sends_are_the_documents(sandbox, api):
    account = create(api, code="K-1")
    found = listing(api, sortedColumn="Id", isDesc="true", filterQuery=json.dumps(
        [{"category": "Identifier", "operator": "eşittir", "value": account["identifier"]}]))["items"]
    assert [item["id"] for item in found] == [account["id"]]
    main = chart(api, {"baseCode": "120", "name": "Alıcılar", "type": 0})
    found = listing(api, CHART, filterQuery=json.dumps([{"category": "Code", "operator": "eşittir", "value": "120"}]))
    assert [item["id"] for item in found["items"]] == [main["id"]]


def test_a_bank_record_or_mapping_in_another_branch_is_refused(sandbox, api):
    account = create(api, branchId=7)
    message = "The current account does not belong to branch 8"
    assert problems(add_response(api, "bank", account["id"], a_bank(branchId=8))) == {"branchId": message}
    main = chart(api, {"baseCode": "120", "name": "Alıcılar", "type": 0})
    sub = sub_account(api, main)
    mapping = {"currentAccountId": account["id"], "accountId": sub["id"]}
    assert problems(post(api, f"{ACCOUNTS}/mapping", {**mapping, "branchId": 8})) == {"branchId": message}
    assert call(api, "POST", f"{ACCOUNTS}/mapping", json={**mapping, "branchId": 7})["currentAccountId"] == \
        account["id"]
