"""Company-management service (document 1, sections 2, 3 and 4.2): the usage report, sub-companies,
credit offers and products.

Everything is kept in the generic Document table, owned by the distributor (the calling customer):

  sub_customer  key: the identifier (VKN/TCKN). data: customerUniqueId, identifier, name, contact fields,
                applicationId, poolProduct, ownOffer. due_at: when the asynchronous creation (rule 3) is
                processed; before that the company is not in the report and cannot be addressed.
  credit        key: the credit id (the applicationCreditId). data: customerUniqueId, quantity, isActive, ...
  product       key: "<customerUniqueId>:<productType>".
  crm_setting   key: "creation_delay". data: {"seconds": n} (how long a creation takes, per distributor).

The service takes an API key only (section 5, rule 2: a bearer token answers 401, see api.API_KEY_ONLY), and
bodies of the model of sections 2.2 to 2.4 only (a string for a number, or an unknown member: 422); the
identifier is a VKN or TCKN with valid check digits.

Rules (section 3): 1. the last active offer cannot be cancelled; 2. a company with an active offer of its
own or of another distributor cannot be created; 3. creation is asynchronous; 4. products need the pool
product and an offer. The report is limited to one call per 15 minutes (sandbox/ratelimit.py).
Element fields that document 1 does not show (name, identifier, quantity, isActive, productType, ...) are
this simulator's own choice; the back-office keeps them as JSON and does not rely on their names
beyond what its README lists.
"""

import os
import re
import uuid
from datetime import timedelta

from django.db import transaction
from django.http import JsonResponse

from .. import control, fakes
from ..api import Call, binding_failed, operation, problem
from ..models import Customer, Document
from .common import BOOLEAN, INTEGER, STRING, array, bind, control_customer, now, vkn_tckn_problem

SUB_CUSTOMER, CREDIT, PRODUCT, SETTING = "sub_customer", "credit", "product", "crm_setting"
PRODUCT_TYPES = (1, 2, 3, 4, 5, 7, 8, 11, 12, 13)  # document 1, section 2.4
PHONE_RE = re.compile(r"^5[0-9]{9}$")
EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
# Seconds a creation takes before the company appears in the report; per distributor via the control API.
DEFAULT_CREATION_DELAY = float(os.environ.get("SANDBOX_CRM_CREATION_DELAY", "60"))
CREDIT_ID_BASE = 600_000
CONTROL_MISSING = "customer_unique_id of an existing customer is required"  # the control actions name no API key

# The bodies of document 1, sections 2.2 to 2.4 (JSON types and member names).
CREATE_MODEL = {"identifier": STRING, "name": STRING, "quantity": INTEGER, "contactPersonFullName": STRING,
                "contactPersonEmailName": STRING, "contactPersonPhoneNumber": STRING}
CREDIT_MODEL = {"quantity": INTEGER, "showOverUsage": BOOLEAN}
CREDIT_BATCH_MODEL = {"customerUniqueIds": array(STRING), **CREDIT_MODEL}
PRODUCTS_MODEL = {"productTypes": array(INTEGER)}
PRODUCTS_BATCH_MODEL = {"customerUniqueIds": array(STRING), **PRODUCTS_MODEL}


def _body(call: Call, model: dict) -> dict:
    """The JSON object body, refused (422) when a member is unknown or of another JSON type than the model's."""
    body = call.json()
    if not isinstance(body, dict):
        raise binding_failed({"body": ["The request body must be a JSON object."]})
    errors = bind(body, model)
    if errors:
        raise binding_failed(errors)
    return body


def _positive_int(body, name, errors):
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        errors[name] = [f"The {name} field must be a positive integer."]
    return value


def _uuid_list(body, name, errors):
    values = body.get(name)
    if not isinstance(values, list) or not values:
        errors[name] = [f"The {name} field must be a non-empty array of uuids."]
        return []
    try:
        return [str(uuid.UUID(str(value))) for value in values]
    except ValueError:
        errors[name] = [f"Every {name} entry must be a uuid."]
        return []


def _product_types(body, errors):
    values = body.get("productTypes")
    if not isinstance(values, list) or not values:
        errors["productTypes"] = ["The productTypes field must be a non-empty array of integers."]
        return []
    unknown = [v for v in values if isinstance(v, bool) or v not in PRODUCT_TYPES]
    if unknown:
        errors["productTypes"] = [f"Unknown ProductType value(s): {', '.join(map(str, unknown))}."]
        return []
    return sorted(set(values))


# --- state ------------------------------------------------------------------------------------------

def creation_delay(customer) -> float:
    setting = Document.objects.filter(customer=customer, kind=SETTING, key="creation_delay").first()
    return float(setting.data.get("seconds", DEFAULT_CREATION_DELAY)) if setting else DEFAULT_CREATION_DELAY


def _visible_subs(customer):
    return Document.objects.filter(customer=customer, kind=SUB_CUSTOMER, due_at__lte=now()).order_by(
        "created", "pk")


def _sub_customer(call: Call, customer_unique_id) -> Document:
    """A sub-company of the caller that the platform has finished creating, or 404."""
    try:
        wanted = str(uuid.UUID(str(customer_unique_id)))
    except ValueError:
        raise problem(404, "Not Found", f"No sub-company with customerUniqueId {customer_unique_id}.") from None
    for doc in _visible_subs(call.customer):
        if doc.data.get("customerUniqueId") == wanted:
            return doc
    raise problem(404, "Not Found", f"No sub-company with customerUniqueId {wanted} belongs to this customer.")


def _credits(owner, customer_unique_id, active_only=False):
    docs = Document.objects.filter(customer=owner, kind=CREDIT, data__customerUniqueId=customer_unique_id)
    docs = sorted(docs, key=lambda d: d.pk)
    return [d for d in docs if d.data.get("isActive")] if active_only else docs


def _products(owner, customer_unique_id) -> list[int]:
    docs = Document.objects.filter(customer=owner, kind=PRODUCT, data__customerUniqueId=customer_unique_id)
    return sorted(d.data["productType"] for d in docs)


def _add_credit(owner, sub: Document, quantity: int, show_over_usage: bool) -> Document:
    moment = now()
    data = {"customerUniqueId": sub.data["customerUniqueId"], "quantity": quantity, "isActive": True,
            "showOverUsage": show_over_usage, "createDate": moment.isoformat()}
    if show_over_usage:
        # Document 1, 2.3: the company's over-usage is deducted from the new offer.
        over = _node_figures(owner, sub)["over"]
        data.update(requestedQuantity=quantity, overUsageDeducted=min(over, quantity),
                    quantity=quantity - min(over, quantity))
    doc = Document.objects.create(customer=owner, kind=CREDIT, key=uuid.uuid4().hex, data=data, created=moment,
                                  due_at=sub.due_at)
    doc.key = str(CREDIT_ID_BASE + doc.pk)
    doc.data["id"] = int(doc.key)
    doc.save(update_fields=["key", "data", "updated"])
    return doc


def _rule_4_reason(owner, sub: Document) -> str:
    if not sub.data.get("poolProduct"):
        return "the company does not have the shared pool product"
    if not _credits(owner, sub.data["customerUniqueId"], active_only=True):
        return "the company has no credit offer"
    return ""


# --- figures: deterministic consumption that grows with time -----------------------------------------

def _consumed(customer, key, since, base_quantity, head_start=0) -> int:
    """Credits used: a head start plus 0.5 % to 2 % of the first quantity per hour since `since`."""
    hours = max(0.0, (now() - since).total_seconds() / 3600)
    rate = base_quantity * (5 + fakes.seed(customer, "rate", key) % 16) / 1000
    return head_start + int(rate * hours)


def _usage_items(products, used):
    if not used:
        return []
    if not products:
        return [{"quantity": used}]
    share, rest = divmod(used, len(products))
    return [{"productType": p, "quantity": share + (rest if i == 0 else 0)} for i, p in enumerate(products)]


def _node_figures(owner, sub: Document) -> dict:
    uid = sub.data["customerUniqueId"]
    offered = sum(d.data["quantity"] for d in _credits(owner, uid, active_only=True))
    base = sub.data.get("firstQuantity") or offered or 1
    # Some use from the start (a company rarely begins at zero), unless the control API set it.
    head_start = sub.data.get("headStart", fakes.seed(owner, "head", uid) % (base // 4 + 1))
    consumed = _consumed(owner, uid, sub.due_at or sub.created, base, head_start=head_start)
    return {"offered": offered, "used": min(consumed, offered), "over": max(0, consumed - offered)}


def _sub_node(owner: Customer, sub: Document) -> dict:
    uid = sub.data["customerUniqueId"]
    figures = _node_figures(owner, sub)
    products = _products(owner, uid)
    pool = bool(sub.data.get("poolProduct"))  # no pool product: no pool application to report
    return {
        "customerUniqueId": uid, "applicationId": sub.data.get("applicationId") if pool else None,
        "applicationSource": 2 if pool else None, "applicationStatus": 1 if pool else None,
        "applicationCreateDate": (sub.due_at or sub.created).isoformat() if pool else None,
        "distributors": [{"customerUniqueId": str(owner.customer_unique_id), "name": owner.name}],
        "credits": [{k: v for k, v in d.data.items() if k != "customerUniqueId"} for d in _credits(owner, uid)],
        "usages": _usage_items(products, figures["used"]),
        "overUsages": [{"quantity": figures["over"]}] if figures["over"] else [], "subCustomers": [],
        "identifier": sub.data.get("identifier"), "name": sub.data.get("name"), "products": products,
    }


def usage_report(customer) -> dict:
    """The report of section 2.1: the customer, and its sub-companies once their creation is processed."""
    created, credits = customer.created, customer.credits
    consumed = _consumed(customer, "root", created, credits,
                         head_start=fakes.seed(customer, "used") % (credits // 2 + 1))
    used, over = min(consumed, credits), max(0, consumed - credits)
    return {
        "customerUniqueId": str(customer.customer_unique_id), "applicationId": 100000 + customer.pk,
        "applicationSource": 1, "applicationStatus": 1, "applicationCreateDate": created.isoformat(),
        "distributors": [],
        "credits": [{"id": 500000 + customer.pk, "quantity": credits, "isActive": True,
                     "createDate": created.isoformat()}],
        "usages": [{"productType": 2, "quantity": used}] if used else [],
        "overUsages": [{"quantity": over}] if over else [],
        "subCustomers": [_sub_node(customer, sub) for sub in _visible_subs(customer)], "name": customer.name,
    }


# --- operations -------------------------------------------------------------------------------------

@operation("crm", "GET", "/v1/sharedpoolusage/report")
def sharedpool_usage_report(call: Call):
    return usage_report(call.customer)


@operation("crm", "POST", "/v1/crm/customers")
def create_customer(call: Call):
    """Rule 3: accepted now, processed after the distributor's creation delay. Rule 2 refused."""
    body = _body(call, CREATE_MODEL)
    errors = {}
    identifier = body.get("identifier") or ""
    reason = vkn_tckn_problem(identifier)
    if reason:
        errors["identifier"] = [f"The identifier (tax number or national id) {reason}."]
    for name in ("name", "contactPersonFullName"):
        if not isinstance(body.get(name), str) or not body[name].strip():
            errors[name] = [f"The {name} field is required."]
    quantity = _positive_int(body, "quantity", errors)
    if not EMAIL_RE.match(str(body.get("contactPersonEmailName") or "")):
        errors["contactPersonEmailName"] = ["The contactPersonEmailName field must be an e-mail address."]
    if not PHONE_RE.match(str(body.get("contactPersonPhoneNumber") or "")):
        errors["contactPersonPhoneNumber"] = ["The contactPersonPhoneNumber field must match ^5[0-9]{9}$."]
    if errors:
        raise binding_failed(errors)

    with transaction.atomic():
        existing = list(Document.objects.filter(kind=SUB_CUSTOMER, key=identifier).select_related("customer"))
        for doc in existing:
            other = doc.customer_id != call.customer.pk
            if doc.data.get("ownOffer") or (other and _credits(doc.customer, doc.data["customerUniqueId"], True)):
                raise problem(409, "Company already has an active offer",
                              f"The company {identifier} already has an active credit offer of its own or of another "
                              "distributor, so it cannot be defined through company creation (rule 2).")
        mine = next((doc for doc in existing if doc.customer_id == call.customer.pk), None)
        if mine is not None:  # the company exists: only the offer is defined
            _add_credit(call.customer, mine, quantity, False)
        else:
            moment = now()
            sub = Document.objects.create(
                customer=call.customer, kind=SUB_CUSTOMER, key=identifier, number=identifier, status=0,
                created=moment, due_at=moment + timedelta(seconds=creation_delay(call.customer)),
                data={"customerUniqueId": str(uuid.uuid4()), "identifier": identifier, "name": body["name"].strip(),
                      "contactPersonFullName": body["contactPersonFullName"],
                      "contactPersonEmailName": body["contactPersonEmailName"],
                      "contactPersonPhoneNumber": body["contactPersonPhoneNumber"],
                      "applicationId": 200000 + fakes.seed(call.customer, "application", identifier) % 800000,
                      "poolProduct": True, "firstQuantity": quantity},
            )
            _add_credit(call.customer, sub, quantity, False)
    return JsonResponse({"identifier": identifier, "message": "Accepted: the company appears in the usage report "
                                                              "once processed."}, status=202)


@operation("crm", "POST", "/v1/crm/customers/{customerUniqueId}/addapplicationcredit")
def add_credit(call: Call, customerUniqueId):
    body = _body(call, CREDIT_MODEL)
    errors = {}
    quantity = _positive_int(body, "quantity", errors)
    show_over_usage = body.get("showOverUsage") is True  # the model binds it a boolean
    if errors:
        raise binding_failed(errors)
    sub = _sub_customer(call, customerUniqueId)
    with transaction.atomic():
        credit = _add_credit(call.customer, sub, quantity, show_over_usage)
    return {"customerUniqueId": sub.data["customerUniqueId"], "id": credit.data["id"],
            "quantity": credit.data["quantity"]}


@operation("crm", "POST", "/v1/crm/addbatchapplicationcredit")
def add_credit_batch(call: Call):
    body = _body(call, CREDIT_BATCH_MODEL)
    errors = {}
    uids = _uuid_list(body, "customerUniqueIds", errors)
    quantity = _positive_int(body, "quantity", errors)
    show_over_usage = body.get("showOverUsage") is True  # the model binds it a boolean
    if errors:
        raise binding_failed(errors)
    subs = [_sub_customer(call, uid) for uid in dict.fromkeys(uids)]  # all known, or nothing is done
    with transaction.atomic():
        credits = [_add_credit(call.customer, sub, quantity, show_over_usage) for sub in subs]
    return [{"customerUniqueId": c.data["customerUniqueId"], "id": c.data["id"], "quantity": c.data["quantity"]}
            for c in credits]


def _add_products(call: Call, subs, product_types):
    refused = [(sub, reason) for sub in subs if (reason := _rule_4_reason(call.customer, sub))]
    if refused:
        detail = "; ".join(f"{sub.data['customerUniqueId']}: {reason}" for sub, reason in refused)
        raise problem(409, "Product cannot be added",
                      f"A product can be added only after the company has the shared pool product and a credit "
                      f"offer (rule 4). {detail}.")
    with transaction.atomic():
        for sub in subs:
            uid = sub.data["customerUniqueId"]
            for product_type in product_types:
                Document.objects.get_or_create(
                    customer=call.customer, kind=PRODUCT, key=f"{uid}:{product_type}",
                    defaults={"data": {"customerUniqueId": uid, "productType": product_type}})
    return [{"customerUniqueId": sub.data["customerUniqueId"],
             "productTypes": _products(call.customer, sub.data["customerUniqueId"])} for sub in subs]


@operation("crm", "POST", "/v1/crm/customers/{customerUniqueId}/products")
def add_products(call: Call, customerUniqueId):
    errors = {}
    product_types = _product_types(_body(call, PRODUCTS_MODEL), errors)
    if errors:
        raise binding_failed(errors)
    return _add_products(call, [_sub_customer(call, customerUniqueId)], product_types)[0]


@operation("crm", "POST", "/v1/crm/addbatchproducts")
def add_products_batch(call: Call):
    body = _body(call, PRODUCTS_BATCH_MODEL)
    errors = {}
    uids = _uuid_list(body, "customerUniqueIds", errors)
    product_types = _product_types(body, errors)
    if errors:
        raise binding_failed(errors)
    return _add_products(call, [_sub_customer(call, uid) for uid in dict.fromkeys(uids)], product_types)


@operation("crm", "DELETE", "/v1/crm/customers/{customerUniqueId}/applicationcredits/{applicationCreditId}")
def cancel_credit(call: Call, customerUniqueId, applicationCreditId):
    sub = _sub_customer(call, customerUniqueId)
    uid = sub.data["customerUniqueId"]
    with transaction.atomic():
        active = _credits(call.customer, uid, active_only=True)
        credit = next((d for d in active if d.key == str(applicationCreditId)), None)
        if credit is None:
            raise problem(404, "Not Found", f"No active credit offer {applicationCreditId} for the company {uid}.")
        if len(active) == 1:
            raise problem(409, "Last active offer",
                          f"The credit offer {applicationCreditId} is the last active offer of the company {uid}; "
                          "it cannot be cancelled (rule 1).")
        credit.data.update(isActive=False, cancelDate=now().isoformat())
        credit.save(update_fields=["data", "updated"])
    return {"id": credit.data["id"], "customerUniqueId": uid, "isActive": False}


# --- control API (tests and demo seeding): /_control/crm/... ------------------------------------------

def control_settings(body):
    """Set a distributor's creation delay: {customer_unique_id, creation_delay_seconds}."""
    customer = control_customer(body, by_key=False, missing=CONTROL_MISSING)
    seconds = float(body.get("creation_delay_seconds", DEFAULT_CREATION_DELAY))
    if seconds < 0:
        raise control.BadRequest("creation_delay_seconds must not be negative")
    Document.objects.update_or_create(customer=customer, kind=SETTING, key="creation_delay",
                                      defaults={"data": {"seconds": seconds}})
    return {"creation_delay_seconds": seconds}


def control_sub_customer(body):
    """A sub-company attached by other means (the provider's portal), visible at once, with or without
    the pool product and an offer: {customer_unique_id, identifier, name, pool_product, credit, own_offer,
    used (credits already used)}."""
    customer = control_customer(body, by_key=False, missing=CONTROL_MISSING)
    identifier = str(body.get("identifier") or "")
    if not identifier.isdigit():
        raise control.BadRequest("identifier is required")
    moment = now()
    with transaction.atomic():
        sub = Document.objects.create(
            customer=customer, kind=SUB_CUSTOMER, key=identifier, number=identifier, status=0, created=moment,
            due_at=moment,
            data={"customerUniqueId": str(uuid.uuid4()), "identifier": identifier,
                  "name": body.get("name") or f"Company {identifier}",
                  "applicationId": 200000 + fakes.seed(customer, "application", identifier) % 800000,
                  "poolProduct": bool(body.get("pool_product", True)), "ownOffer": bool(body.get("own_offer")),
                  "firstQuantity": int(body.get("credit") or 0),
                  **({"headStart": int(body["used"])} if body.get("used") is not None else {})},
        )
        credit = _add_credit(customer, sub, int(body["credit"]), False) if body.get("credit") else None
    return {"customer_unique_id": sub.data["customerUniqueId"], "credit_id": credit.data["id"] if credit else None}


control.ACTIONS[("POST", "crm/settings")] = control_settings
control.ACTIONS[("POST", "crm/sub-customers")] = control_sub_customer
