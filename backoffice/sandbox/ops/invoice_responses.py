"""Invoice service: answers to incoming commercial invoices (TICARIFATURA) and the cancellation of e-archive invoices,
on the paths of the provider's client (the facts file): GET /v1/invoiceresponse/getbyinvoiceid/{id}, POST
/v1/invoiceresponse, PUT /v1/invoiceresponse/retryinvoiceresponselist and PUT /v1/earchive/cancelinvoice. The
invoices are the store's (invoice_store.py); incoming invoices with content of a test's choosing, awaiting an answer,
come from the control action invoices/incoming (invoice_control.py).

Document kinds (customer-scoped):
  invoice_response           key the answer's id (a GUID), number the invoice's ettn, status responseStatus,
                             due_at its next move; data {invoiceNumber, status (60 / 80 as asked), reason, message,
                             envelopeId, createdDate, updatedDate, machine {queuedAt, step, path, attempt,
                             errorMessage}}.
  invoice_response_settings  key "settings"; data {processing_seconds, error_rate, error_message} (control action).

Choices where the documents say "not shown" (the back office's client, remote/invoices.py, is written against
them):
- The answer's body is the provider's .NET client's ApproveRejectInvoiceModel (ePlatformComTr/eplatform-api-dotnet-
  client, src/ePlatform.Api.eBelge.Invoice/Models/ApproveRejectInvoiceModel.cs; InboxInvoiceClient.ApproveReject):
  {InvoiceId (GUID), Status (int), Reason (string), ResponseStatus (int?, a field of its answers: ignored when
  sent)}, spelled as that client sends them (PascalCase; another spelling answers 422, as every body here). Status
  is the invoice status the answer asks for, 60 accept (KABUL) or 80 reject (RED): that client types it int and names
  no values; 60 and 80 are Approved and Declined of its InvoiceStatus enum (another public client guesses 1 and 2).
  A rejection needs its Reason.
- The POST and the GET answer one shape, the fields of the provider's DocumentResponseModel and
  ApproveRejectInvoiceModel: {id, customerId, invoiceId, invoiceNumber, envelopeId, status (60 / 80 as asked),
  responseStatus (the answer's life), reason, message, createdDate, updatedDate} (UTC moments as the store's).
- Only an incoming TICARIFATURA invoice awaiting an answer (70) is answered, within 8 days of its receipt (its
  createDateUtc). Those come from invoices/incoming; an incoming invoice the accounting service's save records, or
  invoices/seed makes, is approved (60) and awaits none. Refusals answer 400 {"title", "detail"}, the field first
  ("InvoiceId: ..."), in Turkish then in English; an id no incoming invoice has 404 (an outgoing invoice's id too,
  as the inbox paths answer it).
- An answer's life, settled lazily on every read of the store (as the outgoing invoices'): queued (20) -> sent to the
  tax authority (50, an envelope id given) -> approved (60), one step every processing_seconds / 2 (the customer's
  answer settings; by default the sandbox's ticket_processing_seconds), fixed when it was queued; the share
  error_rate (decided by the answer's id and attempt; 0 and 1 exact) goes 20 -> error (40) with error_message. The
  invoice reads 61 (being accepted) or 81 (being rejected) while its answer runs, 60 or 80 once it is through, 62 or
  82 when it failed; its updateDateUtc follows the answer's moves. The answer settings are this life's fault switch
  (POST /_control/invoices/responses/settings): faults.py acts on a call, not on what the platform later does with
  an answer it took.
- Time: the sandbox's clock (common.now: clock_offset_seconds moves it) against createDateUtc, which
  invoices/incoming lets a test choose. An invoice still awaiting an answer 8 days after its receipt is accepted by
  the platform itself: 65 (automatic approval), its updateDateUtc the moment the period ended. No answer of ours
  exists then: GET getbyinvoiceid answers 404 (as for every invoice without an answer), its detail saying when the
  invoice was accepted automatically; the invoice's status (65) is the marker.
- One answer per invoice: a second is refused with the text of the first ("already answered ..."); an answer in
  error is sent again by retryinvoiceresponselist only.
- retryinvoiceresponselist takes a JSON array of invoice ids (the provider's client's List<Guid>): their answers in
  error (40) are queued again, a new attempt. All or none: an invoice with no answer, or whose answer is not in
  error, is refused (400, naming each); ids no incoming invoice has 404; a body that is no non-empty array of ids
  422, as a body that does not fit the answer's model (both operations). Answers null.
- cancelinvoice takes a JSON array of invoice ids: approved (60) outgoing e-archive invoices become e-archive
  cancelled (100), their updateDateUtc the moment of the cancellation. All or none: an e-invoice ("e-Fatura iptal
  edilemez ..."), an incoming invoice, one not approved (draft, cancelled, queued, running, error) refused with a
  text per id (400); ids the store does not know 404. One cancelled already counts as done (200, left as it is): the
  PUT sent again after a lost answer must not fail. Answers null.
"""

import uuid
from datetime import datetime, timedelta

from django.utils import timezone

from ..api import Call, binding_failed, operation
from ..control import BadRequest, control_action
from ..models import Document
from .common import INTEGER, STRING, Problems, blank, check_model, locked, named_customer, now, read_body, refused
from .invoice_store import (APPROVED, E_ARCHIVE, EARCHIVE_CANCELLED, ERROR, INCOMING, OUTGOING, QUEUED, SENT,
                            SETTLERS, canonical, find, settle, stamp)
from .statuses import goes_wrong

RESPONSE, RESPONSE_SETTINGS = "invoice_response", "invoice_response_settings"
BASE = "/v1/invoiceresponse"
COMMERCIAL = "TICARIFATURA"
AWAITING, AUTOMATIC = 70, 65  # the incoming invoice's statuses (the provider's InvoiceStatus enum)
ACCEPT, REJECT = 60, 80  # Status of the body: the invoice status the answer asks for
KINDS = {ACCEPT: "KABUL", REJECT: "RED"}
ANSWERING, FAILED = {ACCEPT: 61, REJECT: 81}, {ACCEPT: 62, REJECT: 82}
ANSWER_PERIOD = timedelta(days=8)  # the law's 8 days to answer a commercial invoice
RESPONSE_MODEL = {"InvoiceId": STRING, "Status": INTEGER, "Reason": STRING, "ResponseStatus": INTEGER}
ERROR_MESSAGE = "Uygulama yanıtı GİB tarafından reddedildi: şematron kontrolünde hata bulundu (sandbox hata oranı)."
DEFAULT_SETTINGS = {"processing_seconds": None, "error_rate": 0.0, "error_message": ERROR_MESSAGE}
STATUS_NAMES = {0: "taslak (draft)", 10: "iptal (cancelled)", 20: "kuyrukta (queued)", 30: "işleniyor (running)",
                40: "hata (error)", 50: "GİB'e iletildi (sent to the tax authority)", 60: "onaylandı (approved)"}


def when(moment: datetime) -> str:
    """A moment as the messages write it: Türkiye's time, to the minute."""
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")


def name_of(doc: Document) -> str:
    return f"{doc.number} ({doc.key})" if doc.number else doc.key


# --- the answer period --------------------------------------------------------------------------------------------

def await_answer(doc: Document) -> None:
    """An incoming commercial invoice put to await its answer (70) until 8 days after its receipt (createDateUtc)."""
    deadline = datetime.fromisoformat(doc.data["createDateUtc"]) + ANSWER_PERIOD
    doc.status, doc.due_at = AWAITING, deadline
    doc.data = {**doc.data, "answerDeadline": stamp(deadline)}


def deadline_of(doc: Document) -> datetime:
    given = doc.data.get("answerDeadline")
    return datetime.fromisoformat(given) if given else \
        datetime.fromisoformat(doc.data["createDateUtc"]) + ANSWER_PERIOD


def _accepted_automatically(doc: Document) -> None:
    ended = deadline_of(doc)
    doc.status, doc.due_at = AUTOMATIC, None
    doc.data = {**doc.data, "updateDateUtc": stamp(ended),
                "message": f"8 gün içinde yanıtlanmadığı için {when(ended)} tarihinde otomatik kabul edildi "
                           f"(accepted automatically on {when(ended)}: no answer within 8 days)."}


# --- an answer's life ---------------------------------------------------------------------------------------------

def answer_settings(customer) -> dict:
    doc = Document.objects.filter(customer=customer, kind=RESPONSE_SETTINGS, key="settings").first()
    return {**DEFAULT_SETTINGS, **(doc.data if doc else {})}


def _queue(answer: Document, at: datetime, settings: dict, default_seconds: float) -> None:
    """Queue an answer (a new attempt): its path of statuses and the moment of its first move."""
    attempt = (answer.data.get("machine") or {}).get("attempt", 0) + 1
    seconds = settings["processing_seconds"] if settings["processing_seconds"] is not None else default_seconds
    step = float(seconds) / 2
    fails = goes_wrong(str(uuid.uuid5(uuid.UUID(answer.key), str(attempt))), settings["error_rate"])
    answer.status, answer.due_at = QUEUED, at + timedelta(seconds=step)
    answer.data = {**answer.data, "message": "", "envelopeId": None, "updatedDate": stamp(at),
                   "machine": {"queuedAt": stamp(at), "step": step, "attempt": attempt,
                               "path": [QUEUED, ERROR] if fails else [QUEUED, SENT, APPROVED],
                               "errorMessage": settings["error_message"]}}


def _advance(answer: Document, at: datetime) -> None:
    """Every move of the answer's path that is due at `at`, the last dated when it was due."""
    machine = answer.data["machine"]
    queued, step, path = datetime.fromisoformat(machine["queuedAt"]), timedelta(seconds=machine["step"]), \
        machine["path"]
    index = path.index(answer.status) if answer.status in path else 0
    while index < len(path) - 1 and queued + step * (index + 1) <= at:
        index += 1
    answer.status = path[index]
    answer.due_at = queued + step * (index + 1) if index < len(path) - 1 else None
    data = {**answer.data, "updatedDate": stamp(queued + step * index)}
    if answer.status in (SENT, APPROVED) and not data.get("envelopeId"):
        data["envelopeId"] = str(uuid.uuid4())
    if answer.status == ERROR:
        data["message"] = machine["errorMessage"]
    answer.data = data


def _move_invoice(invoice: Document, answer: Document) -> None:
    """The invoice's status as its answer's life has it: 61 / 81 running, 60 / 80 through, 62 / 82 failed."""
    decision = answer.data["status"]
    if answer.status == APPROVED:
        status = decision
    elif answer.status == ERROR:
        status = FAILED[decision]
    else:
        status = ANSWERING[decision]
    invoice.status, invoice.due_at = status, None
    invoice.data = {**invoice.data, "updateDateUtc": answer.data["updatedDate"],
                    "message": answer.data["message"] if answer.status == ERROR else ""}


def settle_answers(customer, at: datetime) -> None:
    """Move the customer's answers whose time has come, their invoices with them, and accept automatically the
    invoices whose answer period ended (lazily: on every read of the store)."""
    due = Document.objects.filter(customer=customer, kind=RESPONSE, status__in=(QUEUED, SENT), due_at__lte=at)
    lapsed = Document.objects.filter(customer=customer, kind=INCOMING, status=AWAITING, due_at__lte=at)
    if not due.exists() and not lapsed.exists():
        return
    with locked(customer):
        answers = list(due)  # again under the lock: a concurrent request may have moved them
        invoices = {doc.key: doc for doc in Document.objects.filter(
            customer=customer, kind=INCOMING, key__in=[answer.number for answer in answers])}
        for answer in answers:
            _advance(answer, at)
            if answer.number in invoices:
                _move_invoice(invoices[answer.number], answer)
        expired = list(lapsed)
        for doc in expired:
            _accepted_automatically(doc)
        Document.objects.bulk_update(answers, ["status", "data", "due_at"], batch_size=500)
        Document.objects.bulk_update([*invoices.values(), *expired], ["status", "data", "due_at"], batch_size=500)


SETTLERS.append(settle_answers)


# --- the answers --------------------------------------------------------------------------------------------------

def answer_view(answer: Document) -> dict:
    data = answer.data
    return {"id": answer.key, "customerId": str(answer.customer.customer_unique_id), "invoiceId": answer.number,
            "invoiceNumber": data["invoiceNumber"], "envelopeId": data.get("envelopeId"), "status": data["status"],
            "responseStatus": answer.status, "reason": data["reason"], "message": data.get("message") or "",
            "createdDate": data["createdDate"], "updatedDate": data["updatedDate"]}


def answer_of(customer, invoice_key: str | None) -> Document | None:
    if not invoice_key:
        return None
    return Document.objects.filter(customer=customer, kind=RESPONSE, number=invoice_key).select_related(
        "customer").first()


def _answer_text(answer: Document) -> str:
    """The first answer as a refusal quotes it."""
    data = answer.data
    text = (f"{KINDS[data['status']]} ({data['status']}), {when(datetime.fromisoformat(data['createdDate']))}, "
            f"yanıt (answer) {answer.key}, durum (responseStatus) {answer.status}")
    if data["reason"]:
        text += f", gerekçe (reason): {data['reason']}"
    if answer.status == ERROR:
        text += "; hata aldı, retryinvoiceresponselist ile yeniden gönderin (it failed: send it again with " \
                "retryinvoiceresponselist)"
    return text


@operation("invoice", "GET", BASE + "/getbyinvoiceid/{id}")
def response_get(call: Call, id):
    """The answer to an incoming invoice; 404 when it has none (accepted automatically included: see the docstring)."""
    settle(call)
    key = canonical(id)
    answer = answer_of(call.customer, key)
    if answer is not None:
        return answer_view(answer)
    invoice = find(call.customer, id)
    if invoice is None:
        raise refused("Not Found", f"Fatura bulunamadı (no invoice with id {id}).", 404)
    if invoice.status == AUTOMATIC:
        ended = when(deadline_of(invoice))
        raise refused("Not Found", f"Yanıt yok: {name_of(invoice)} 8 gün içinde yanıtlanmadığı için {ended} tarihinde "
                                   f"otomatik kabul edildi (65) (no answer: the invoice was accepted automatically on "
                                   f"{ended}).", 404)
    raise refused("Not Found", f"Yanıt yok: {name_of(invoice)} henüz yanıtlanmadı (no answer to this invoice yet).",
                  404)


def _answer_refusal(customer, invoice: Document | None, invoice_id, at: datetime) -> str | None:
    """Why the invoice takes no answer now (the text after "InvoiceId: "); 404 for an id no incoming invoice has."""
    if invoice is None:
        raise refused("Not Found", f"Gelen fatura bulunamadı (no incoming invoice with id {invoice_id}).", 404)
    if invoice.kind == OUTGOING:
        raise refused("Not Found", f"Gelen fatura bulunamadı: {name_of(invoice)} giden bir fatura; yalnız gelen "
                                   f"ticari faturalar yanıtlanır (no incoming invoice with id {invoice_id}: it is an "
                                   f"outgoing invoice; only incoming commercial invoices take an answer).", 404)
    profile = invoice.data["profile"]
    if profile != COMMERCIAL:
        return (f"Yalnız TICARIFATURA senaryolu faturalar yanıtlanır; {name_of(invoice)} {profile} (only commercial "
                f"invoices (TICARIFATURA) take an answer; this one is {profile})")
    first = answer_of(customer, invoice.key)
    if first is not None:
        return f"Fatura zaten yanıtlandı (already answered): {_answer_text(first)}"
    if invoice.status == AUTOMATIC or (invoice.status == AWAITING and deadline_of(invoice) <= at):
        ended = when(deadline_of(invoice))
        return (f"8 günlük yanıt süresi {ended} tarihinde doldu, fatura otomatik kabul edildi (the 8-day answer "
                f"period ended on {ended}; the invoice was accepted automatically)")
    if invoice.status != AWAITING:
        return (f"Fatura yanıt beklemiyor (durum {invoice.status}) (the invoice is not awaiting an answer: status "
                f"{invoice.status})")
    return None


@operation("invoice", "POST", BASE)
def response_send(call: Call):
    """Accept (60) or reject (80, with a reason) an incoming commercial invoice: the answer, queued (20)."""
    body = read_body(call)
    check_model(body, RESPONSE_MODEL)
    problems = Problems()
    invoice_id, decision, reason = body.get("InvoiceId"), body.get("Status"), (body.get("Reason") or "").strip()
    if blank(invoice_id):
        problems.add("InvoiceId", "Fatura kimliği zorunludur (InvoiceId is required: the incoming invoice's id).")
    elif canonical(invoice_id) is None:
        problems.add("InvoiceId", f"'{invoice_id}' bir GUID değil (is not a GUID).")
    if decision is None:
        problems.add("Status", "Yanıt zorunludur: 60 KABUL ya da 80 RED (Status is required: 60 accept or 80 reject).")
    elif decision not in KINDS:
        problems.add("Status", f"Yanıt 60 (KABUL) ya da 80 (RED) olmalı (must be 60 accept or 80 reject; got "
                               f"{decision}).")
    elif decision == REJECT and not reason:
        problems.add("Reason", "Red gerekçesi zorunludur (a rejection needs its reason).")
    problems.raise_any()
    settle(call)
    at = now(call)
    settings = answer_settings(call.customer)
    with locked(call.customer):
        invoice = find(call.customer, invoice_id)  # again under the lock: a concurrent answer may have come first
        refusal = _answer_refusal(call.customer, invoice, invoice_id, at)
        if refusal:
            raise refused("Validation failed", f"InvoiceId: {refusal}.")
        answer = Document(customer=call.customer, kind=RESPONSE, key=str(uuid.uuid4()), number=invoice.key, created=at,
                          data={"invoiceNumber": invoice.number, "status": decision, "reason": reason,
                                "createdDate": stamp(at)})
        _queue(answer, at, settings, call.settings.ticket_processing_seconds)
        answer.save()
        _move_invoice(invoice, answer)
        invoice.save(update_fields=["status", "data", "due_at"])
    return answer_view(answer)


def _ids(call: Call) -> list[str]:
    """The body's invoice ids (a JSON array of strings), each once; 422 for another shape."""
    ids = read_body(call)
    if not isinstance(ids, list) or not ids or not all(isinstance(item, str) and item for item in ids):
        raise binding_failed({"body": ["The body must be a non-empty JSON array of invoice ids (GUIDs)."]})
    return list(dict.fromkeys(ids))


def _documents(call: Call, ids: list[str], kinds, what: str) -> list[Document]:
    """The store's invoices of these ids, in order; 404 naming the ids it does not have."""
    keys = {invoice_id: canonical(invoice_id) for invoice_id in ids}
    found = {doc.key: doc for doc in Document.objects.filter(customer=call.customer, kind__in=kinds,
                                                             key__in=[key for key in keys.values() if key])}
    missing = [invoice_id for invoice_id, key in keys.items() if key not in found]
    if missing:
        raise refused("Not Found", f"{what} bulunamadı (no {'incoming ' if kinds == (INCOMING,) else ''}invoice with "
                                   f"id {', '.join(missing)}).", 404)
    return [found[key] for key in keys.values()]


@operation("invoice", "PUT", BASE + "/retryinvoiceresponselist")
def response_retry(call: Call):
    """The answers in error of these invoices queued again, all or none."""
    ids = _ids(call)
    settle(call)
    at = now(call)
    settings = answer_settings(call.customer)
    with locked(call.customer):
        invoices = _documents(call, ids, (INCOMING,), "Gelen fatura")
        answers = {answer.number: answer for answer in Document.objects.filter(
            customer=call.customer, kind=RESPONSE, number__in=[invoice.key for invoice in invoices])}
        problems = []
        for invoice in invoices:
            answer = answers.get(invoice.key)
            if answer is None:
                problems.append(f"{name_of(invoice)}: yanıtı yok (it has no answer to send again)")
            elif answer.status != ERROR:
                problems.append(f"{name_of(invoice)}: yanıtı hata durumunda değil, durum {answer.status} (its answer "
                                f"is not in error (40): status {answer.status})")
        if problems:
            raise refused("Retry refused", "Hiçbir yanıt yeniden gönderilmedi (nothing was sent again): " +
                          "; ".join(problems) + ".")
        for invoice in invoices:
            _queue(answers[invoice.key], at, settings, call.settings.ticket_processing_seconds)
            _move_invoice(invoice, answers[invoice.key])
        Document.objects.bulk_update(list(answers.values()), ["status", "data", "due_at"])
        Document.objects.bulk_update(invoices, ["status", "data", "due_at"])
    return None


# --- e-archive cancellation ---------------------------------------------------------------------------------------

def _cancel_refusal(doc: Document) -> str | None:
    """Why an invoice is not cancelled (None: it is, or it already was)."""
    if doc.kind == INCOMING:
        return (f"{name_of(doc)}: gelen bir fatura; yalnız giden e-Arşiv faturaları iptal edilir (an incoming "
                "invoice: only outgoing e-archive invoices are cancelled)")
    if doc.data["recordType"] != E_ARCHIVE:
        return (f"{name_of(doc)}: e-Fatura iptal edilemez; e-Fatura alıcısı tarafından reddedilir ya da iade faturası "
                "düzenlenir (an e-invoice cannot be cancelled: its buyer rejects it, or a return invoice is issued)")
    if doc.status not in (APPROVED, EARCHIVE_CANCELLED):
        state = STATUS_NAMES.get(doc.status, str(doc.status))
        return (f"{name_of(doc)}: onaylanmamış e-Arşiv faturası iptal edilemez, durum {doc.status} {state} (only an "
                f"approved (60) e-archive invoice is cancelled; status {doc.status})")
    return None


@operation("invoice", "PUT", "/v1/earchive/cancelinvoice")
def earchive_cancel(call: Call):
    """Approved outgoing e-archive invoices -> e-archive cancelled (100), all or none."""
    ids = _ids(call)
    settle(call)
    at = now(call)
    with locked(call.customer):
        docs = _documents(call, ids, (OUTGOING, INCOMING), "Fatura")
        refusals = [reason for doc in docs if (reason := _cancel_refusal(doc))]
        if refusals:
            raise refused("Cancel refused", "Hiçbir fatura iptal edilmedi (nothing was cancelled): " +
                          "; ".join(refusals) + ".")
        cancelled = [doc for doc in docs if doc.status == APPROVED]  # those cancelled already are left as they are
        for doc in cancelled:
            doc.status, doc.due_at = EARCHIVE_CANCELLED, None
            doc.data = {**doc.data, "updateDateUtc": stamp(at), "message": ""}
        Document.objects.bulk_update(cancelled, ["status", "data", "due_at"])
    return None


# --- control ------------------------------------------------------------------------------------------------------

@control_action("POST", "invoices/responses/settings")
def control_settings(body):
    """{customer, processing_seconds? (0 to 86400; null: the sandbox's ticket_processing_seconds), error_rate? (0 to
    1), error_message?, reset?} -> the customer's answer settings: how long an answer takes from 20 through 50 to 60,
    and the share of answers (queued from now on) that end in error (40) with error_message."""
    customer = named_customer(body, guid_only=True)
    changes = {}
    if "processing_seconds" in body:
        seconds = body["processing_seconds"]
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                    or not 0 <= seconds <= 86400):
            raise BadRequest("processing_seconds must be null or a number from 0 to 86400")
        changes["processing_seconds"] = seconds
    if body.get("error_rate") is not None:
        rate = body["error_rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise BadRequest("error_rate must be a number from 0 to 1")
        changes["error_rate"] = float(rate)
    if body.get("error_message") is not None:
        if not isinstance(body["error_message"], str) or blank(body["error_message"]):
            raise BadRequest("error_message must be a text")
        changes["error_message"] = body["error_message"]
    merged = {**(DEFAULT_SETTINGS if body.get("reset") is True else answer_settings(customer)), **changes}
    Document.objects.update_or_create(customer=customer, kind=RESPONSE_SETTINGS, key="settings",
                                      defaults={"data": merged})
    return merged
