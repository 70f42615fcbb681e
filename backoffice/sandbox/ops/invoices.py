"""Accounting service, invoices (document 3, sections 2.6, 3.1 and 4.2): get, save, update, delete, post to
accounting and reverse. The incoming and outgoing lists are in invoice_lists.py, the rules of a save and an update
in invoice_rules.py; the store that these and the invoice service (invoice.py) answer from, with the status machine
of outgoing invoices and the document kinds, in invoice_store.py; the tax authority's list of registered users in
invoice_taxpayers.py. The control actions that seed invoices, set a status and register users are in
invoice_control.py.

Choices where document 3 and the facts file say "not shown" (the back office relies on them):
- Methods and paths are the defaults of backoffice/remote/endpoints.py (accounting_invoice.*). Answers are
  camelCase; amounts are JSON numbers with 2 decimals; dates ISO (issueDate yyyy-MM-dd, issueTime HH:mm:ss,
  createDateUtc and updateDateUtc UTC with microseconds, so that they sort as text).
- A body that does not fit the model (invoice_store.py) answers 422 (common.bind). Ids (branchId, currentAccountId,
  invoiceTaxSettingId, withHoldingId, deliveryTermsId) are integers; amounts, rates and quantities numbers;
  paymentMeansCode a string (a whole number is taken as its digits: the provider's client has an enum).
  Rule failures answer 400 {"title": "Validation failed", "detail": "<field>: <message>; ..."}, all at once,
  nested fields named by their path (generalInfoModel.prefix, invoiceLines[0].taxes[1].taxRate).
- isSend missing is false (incoming), a bool's default. recordType missing is decided by the taxpayer list:
  1 for a registered e-invoice user (AppType 1), else 0. An outgoing e-invoice needs a registered user and one
  of its e-invoice mailboxes; an outgoing e-archive invoice to a registered user is refused. An e-archive
  invoice's profile is EARSIVFATURA (4); an e-invoice's is 0 to 3 (0 when a save leaves it out).
- currencyCode is one of CURRENCY_IDS (the back office's default currencyCodeId list); missing is TRY.
  issueDate missing is today; an outgoing invoice's year must be 20xx (its number holds it).
- An incoming invoice (isSend false) carries the supplier's invoiceNumber (required) and is approved (60).
- ettn: a GUID the client gives is kept (any case; answered lowercase), one the customer already has is refused
  ("generalInfoModel.ettn: already exists ..."), none gives a new one. Get with isSend looks in that direction
  only (404 in the other), without isSend in both.
- What the tax authority's schematron ties to the invoice type is refused at save, as the platform refuses it
  (invoice_rules.py): withholding (and tax 4171) outside TEVKIFAT, IADE and SGK; an exemption reason on a type it
  is not for, or a full exemption on a line with VAT (701-704, 801-812 and 555 may have VAT; 555 must, and beside
  a 555 line no line's VAT may be 0 or come to 0.00); a return (IADE) e-invoice other than TEMELFATURA; an
  issueDate before 2005.
- Lists: filterQuery and sortedColumn as the current-account lists (list_filters.py), with the categories of
  COLUMNS, the members of a condition and sortedColumn spelled exactly as document 3 spells them
  (invoice_lists.py); updateDateUtc and createDateUtc compare as moments (ISO, any offset; naive ones in Türkiye's
  time), issueDate as a day (yyyy-MM-dd or dd.MM.yyyy), the amounts as numbers. Default order: createDateUtc ascending.
- Outgoing numbers: prefix + year of issueDate + 9-digit counter per customer, prefix and year, consecutive,
  never reused. An update keeps the number: another invoiceNumber or prefix is refused.
- Totals (the facts file): line gross = quantity x unitPrice rounded; discount = discountRate% of the gross
  rounded, plus discountAmount rounded (a discount above the gross is refused); net = gross - discount
  (lineExtensionAmount; lineAmount is the gross); VAT = vatRate% of the net rounded; a tax with isWithHolding
  is withholding at taxRate% of the VAT; other taxes taxRate% of the net, 0003 and 0011 (stopaj) deducted from
  the payable, the others added (0015 is refused there: VAT is the line's vatRate). Document figures are the
  sums of the line figures: taxInclusive = net + VAT + added, payable = taxInclusive - withholding - stopaj.
  List items: taxTotal = VAT + added taxes, totalAmount = taxInclusive. ROUND_HALF_UP to 2 places throughout.
- currentAccount of the body is kept with the invoice (its name and address go on the documents); the
  sandbox does not create a current account from it. Else the name and address are the current account's
  (identifier and code) in this store, or the taxpayer list's title.
- Status machine of outgoing invoices (settled lazily on every read, like statuses.py): queued (20) -> running
  (30) -> approved (60) for e-archive, 20 -> 30 -> sent to the tax authority (50) -> approved (60) for
  e-invoice, one step every ticket_processing_seconds / steps (2 or 3), fixed when the invoice was queued. The
  share ticket_error_rate (decided by the ettn; 0 and 1 exact) goes 20 -> error (40) at the first step, with a
  message in Turkish. Every move sets updateDateUtc to the moment of the move. An update of an invoice in
  error queues it again; POST /_control/invoices/status sets any status (20 queues again, others stop it).
- Delete answers 200 {}; its failures {"Error": text}: 404 unknown, 400 posted or an e-invoice. Post and
  reverse take [{ettn, isSend}], all or none: any refusal answers 400 {"Error": every refused one named}.
  Post needs lines, not cancelled (10 or 100), not posted, and the customer's current account (identifier and
  currentAccountCode) mapped to a sub-account (2.6; accounting_mappings.posting_refusal); reverse needs posted.
"""


from .. import fakes
from ..api import Call, binding_failed, operation
from ..models import Document
from .accounting_mappings import posting_refusal
from .common import BOOLEAN, STRING, bind, blank, check_model, failure, locked, now, read_body, refused
from .invoice_rules import invoice_facts
from .invoice_store import (APPROVED, BASE, CANCELLED, COUNTER, E_INVOICE, EARCHIVE_CANCELLED, ERROR, INCOMING,
                            INVOICE_MODEL, NOT_POSTED, OUTGOING, POSTED, counterpart, find, invoice_view, noun, queue,
                            record, settle, stamp)

MOVE_MODEL = {"ettn": STRING, "isSend": BOOLEAN}


def _is_send(call: Call, errors_as_error: bool = False) -> bool | None:
    raw = call.query.get("isSend", "").strip().lower()
    if raw in ("true", "false"):
        return raw == "true"
    if raw == "" and not errors_as_error:
        return None
    text = f"isSend: must be true (outgoing) or false (incoming) (got '{call.query.get('isSend', '')}')."
    raise failure(text) if errors_as_error else refused("Bad Request", text)


# --- get, save, update, delete ------------------------------------------------------------------------------------

@operation("accounting", "GET", BASE + "/{guid}")
def get_invoice(call: Call, guid):
    is_send = _is_send(call)
    settle(call)
    kinds = (OUTGOING, INCOMING) if is_send is None else ((OUTGOING,) if is_send else (INCOMING,))
    doc = find(call.customer, guid, kinds)
    if doc is None:
        where = "" if is_send is None else " outgoing" if is_send else " incoming"
        raise refused("Not Found", f"No{where} invoice with ettn {guid}.", 404)
    return invoice_view(doc)


def _body(call: Call) -> dict:
    body = read_body(call)
    payment = body.get("paymentMeansModel") if isinstance(body, dict) else None
    if isinstance(payment, dict) and isinstance(payment.get("paymentMeansCode"), int) \
            and not isinstance(payment["paymentMeansCode"], bool):
        payment["paymentMeansCode"] = str(payment["paymentMeansCode"])  # the provider's client sends its enum
    check_model(body, INVOICE_MODEL)
    return body


@operation("accounting", "POST", BASE)
def save_invoice(call: Call):
    body = _body(call)
    at = now(call)
    with locked(call.customer):
        facts = invoice_facts(call, body, None)
        identifier = body["currentAccountIdentifier"]
        party = counterpart(call.customer, body, identifier)
        invoice_number = (_issue(call.customer, body["generalInfoModel"]["prefix"], facts["issue_date"].year)
                          if facts["is_send"] else body["generalInfoModel"]["invoiceNumber"])
        data = record(facts, party=party, body=body, identifier=identifier, alias=body.get("currentAccountAlias"),
                      at=at, branch=body.get("branchId"))
        doc = Document(customer=call.customer, kind=OUTGOING if facts["is_send"] else INCOMING, key=facts["ettn"],
                       number=invoice_number, status=APPROVED, created=at, data=data)
        if facts["is_send"]:
            queue(call.settings, doc, at)
        doc.save()
    return invoice_view(doc)


def _issue(customer, prefix: str, year: int) -> str:
    """The next number of prefix and year (the caller holds the customer's lock)."""
    counter, _ = Document.objects.get_or_create(customer=customer, kind=COUNTER, key=f"{prefix}{year}",
                                                defaults={"data": {"last": 0}})
    last = counter.data["last"] + 1
    Document.objects.filter(pk=counter.pk).update(data={"last": last})
    return fakes.document_number(prefix, year, last)


@operation("accounting", "PUT", BASE)
def update_invoice(call: Call):
    body = _body(call)
    general = body.get("generalInfoModel") or {}
    if blank(general.get("ettn")):
        raise refused("Validation failed", "generalInfoModel.ettn: The ettn of the invoice to update is required.")
    settle(call)
    at = now(call)
    with locked(call.customer):
        doc = find(call.customer, general["ettn"], (OUTGOING if body.get("isSend") is True else INCOMING,))
        if doc is None:
            direction = "outgoing" if body.get("isSend") is True else "incoming"
            raise refused("Not Found", f"generalInfoModel.ettn: No {direction} invoice with ettn {general['ettn']}.",
                          404)
        if doc.data["recordStatus"] == POSTED:
            raise refused("Update refused", f"The {noun(doc)} is posted to accounting; reverse the posting first.")
        facts = invoice_facts(call, body, doc)
        identifier = body["currentAccountIdentifier"]
        party = counterpart(call.customer, body, identifier)
        data = record(facts, party=party, body=body, identifier=identifier, alias=body.get("currentAccountAlias"),
                      at=at, branch=body.get("branchId"))
        data.update(createDateUtc=doc.data["createDateUtc"], message=doc.data["message"],
                    machine=doc.data.get("machine"))
        doc.data = data
        if doc.status == ERROR:
            queue(call.settings, doc, at)
        Document.objects.bulk_update([doc], ["status", "data", "due_at"])
    return invoice_view(doc)


@operation("accounting", "DELETE", BASE + "/{ettn}")
def delete_invoice(call: Call, ettn):
    is_send = _is_send(call, errors_as_error=True)
    settle(call)
    with locked(call.customer):
        doc = find(call.customer, ettn, (OUTGOING if is_send else INCOMING,))
        if doc is None:
            raise failure(f"No {'outgoing' if is_send else 'incoming'} invoice with ettn {ettn}.", 404)
        if doc.data["recordStatus"] == POSTED:
            raise failure(f"The {noun(doc)} is posted to accounting: reverse the posting before deleting it.")
        if doc.data["recordType"] == E_INVOICE:
            raise failure(f"The {noun(doc)} is an e-invoice: e-invoices cannot be deleted.")
        doc.delete()
    return {}


# --- post to accounting and reverse -------------------------------------------------------------------------------

def _moves(call: Call) -> list[tuple[str, bool]]:
    """The (ettn, isSend) of the body, each once; 422 for members of another type, Error for a bad shape."""
    body = read_body(call)
    if not isinstance(body, list) or not body:
        raise failure("The body must be a non-empty array of {ettn, isSend}.")
    errors = {}
    for index, item in enumerate(body):
        bind(item, MOVE_MODEL, f"[{index}]", errors)
    if errors:
        raise binding_failed(errors)
    missing = [f"[{index}]" for index, item in enumerate(body)
               if blank(item.get("ettn")) or item.get("isSend") is None]
    if missing:
        raise failure(f"Each item needs ettn and isSend (missing in {', '.join(missing)}).")
    return list(dict.fromkeys((item["ettn"], item["isSend"]) for item in body))


def _move(call: Call, posting: bool):
    moves = _moves(call)
    settle(call)
    at = now(call)
    with locked(call.customer):
        docs, refusals = [], []
        for ettn, is_send in moves:
            doc = find(call.customer, ettn, (OUTGOING if is_send else INCOMING,))
            if doc is None:
                refusals.append(f"no {'outgoing' if is_send else 'incoming'} invoice with ettn {ettn}")
            elif posting and doc.data["recordStatus"] == POSTED:
                refusals.append(f"{noun(doc)} is already posted")
            elif posting and not doc.data["invoice"]["invoiceLines"]:
                refusals.append(f"{noun(doc)} has no lines")
            elif posting and doc.status in (CANCELLED, EARCHIVE_CANCELLED):
                refusals.append(f"{noun(doc)} is cancelled (status {doc.status})")
            elif posting and (unmapped := posting_refusal(
                    call.customer, doc.data["targetVknTckn"], doc.data["invoice"].get("currentAccountCode"))):
                refusals.append(f"{noun(doc)}: {unmapped}")
            elif not posting and doc.data["recordStatus"] != POSTED:
                refusals.append(f"{noun(doc)} is not posted")
            else:
                docs.append(doc)
        if refusals:
            what = "posted" if posting else "reversed"
            raise failure(f"Nothing was {what}: " + "; ".join(refusals) + ".")
        for doc in docs:
            doc.data = {**doc.data, "recordStatus": POSTED if posting else NOT_POSTED, "updateDateUtc": stamp(at)}
        Document.objects.bulk_update(docs, ["data"])
    return {}


operation("accounting", "POST", BASE + "/post")(lambda call: _move(call, posting=True))
operation("accounting", "POST", BASE + "/reverse")(lambda call: _move(call, posting=False))
