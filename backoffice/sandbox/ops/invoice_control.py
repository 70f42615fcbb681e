"""The sandbox's control actions for invoices (ops/invoice_store.py keeps the store): seed invoices in bulk, seed one
incoming invoice of chosen content (awaiting an answer when commercial), set an invoice's status, register users on
the taxpayer list, write the UBL of a body no save rule checked (the tax authority's checks as the tests' oracle).
Tests and benchmarks call them; the platform has none. The answers' settings are in invoice_responses.py."""

import hashlib
import re
import uuid
from datetime import date, datetime, timedelta
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from .. import fakes
from ..control import BadRequest, control_action
from ..models import Document, SandboxSetting
from . import provinces
from .common import blank, create_in_batches, is_guid, locked, moment, named_customer, now
from .invoice_documents import unchecked_ubl
from .invoice_responses import await_answer
from .invoice_store import (APPROVED, COUNTER, DEFAULT_ADDRESS, E_ARCHIVE, E_INVOICE, EARSIVFATURA, ERROR,
                            ERROR_MESSAGE, INCOMING, OUTGOING, POSTED, PROFILES, QUEUED, SEEDED, STATUSES, find,
                            priced, queue, record, stamp, totals)
from .invoice_taxpayers import EINVOICE_APP, TAXPAYER, generated_taxpayers, generated_vkn, title_of


@control_action("POST", "invoices/status")
def control_status(body):
    """{customer, ettn, status, message?} -> the invoice's status set: 20 queues an outgoing invoice again; any
    other status stops its machine, with the message (by default the error message for 40, else empty)."""
    customer = named_customer(body, guid_only=True)
    status = body.get("status")
    if status not in STATUSES:
        raise BadRequest(f"status must be one of {', '.join(map(str, STATUSES))}")
    with locked(customer):
        doc = find(customer, body.get("ettn"))
        if doc is None:
            raise BadRequest(f"no invoice with ettn {body.get('ettn')}")
        at = now()
        if status == QUEUED and doc.kind == OUTGOING:
            queue(SandboxSetting.load(), doc, at)
        else:
            doc.status, doc.due_at = status, None
            doc.data = {**doc.data, "updateDateUtc": stamp(at),
                        "message": body.get("message") or (ERROR_MESSAGE if status == ERROR else "")}
        Document.objects.bulk_update([doc], ["status", "data", "due_at"])
    return {"ettn": doc.key, "status": doc.status, "message": doc.data["message"]}


@control_action("POST", "invoices/taxpayers")
def control_taxpayers(body):
    """{customer, add: [{Identifier, Title, Alias, AppType}]} -> those users on the customer's taxpayer list."""
    customer = named_customer(body, guid_only=True)
    items = body.get("add")
    if not isinstance(items, list) or not items:
        raise BadRequest("add must be a non-empty array of {Identifier, Title, Alias, AppType}")
    at = timezone.now().replace(microsecond=0, tzinfo=None).isoformat()
    docs = []
    for item in items:
        if not isinstance(item, dict):
            raise BadRequest("each user must be an object {Identifier, Title, Alias, AppType}")
        identifier, alias, app_type = item.get("Identifier"), item.get("Alias"), item.get("AppType", EINVOICE_APP)
        if not isinstance(identifier, str) or not re.fullmatch(r"[0-9]{10}|[0-9]{11}", identifier):
            raise BadRequest(f"Identifier must be 10 or 11 digits (got {identifier!r})")
        if blank(alias) or not isinstance(app_type, int):
            raise BadRequest("each user needs an Alias and an integer AppType")
        data = {"Identifier": identifier, "Title": item.get("Title") or identifier, "Alias": alias,
                "AppType": app_type, "Type": item.get("Type") or "Özel", "FirstCreationTime": at,
                "AliasCreationTime": at}
        key = hashlib.sha1(f"{app_type}|{identifier}|{alias}".encode()).hexdigest()
        docs.append(Document(customer=customer, kind=TAXPAYER, key=key, number=identifier, data=data))
    with transaction.atomic():
        Document.objects.bulk_create(docs, update_conflicts=True, unique_fields=["customer", "kind", "key"],
                                     update_fields=["data"])
    return {"added": len(docs)}


# Lines the seeded invoices are made of (an invoice takes 1 to 3 in a row): prices, VAT rates, a discount.
SEED_LINES = (
    {"inventoryServiceCode": "HZM-01", "amount": 1, "unitPrice": 1250, "unitCode": "C62", "vatRate": 20},
    {"inventoryServiceCode": "URN-02", "amount": 12, "unitPrice": 37.5, "unitCode": "C62", "vatRate": 20,
     "discountRate": 10},
    {"inventoryServiceCode": "GDA-03", "amount": 2.5, "unitPrice": 84.9, "unitCode": "KGM", "vatRate": 1},
    {"inventoryServiceCode": "KTP-04", "amount": 3, "unitPrice": 129.99, "unitCode": "C62", "vatRate": 10},
    {"inventoryServiceCode": "DNS-05", "amount": 8, "unitPrice": 450, "unitCode": "HUR", "vatRate": 20,
     "discountAmount": 100},
    {"inventoryServiceCode": "NAK-06", "amount": 1, "unitPrice": 3200, "unitCode": "C62", "vatRate": 20},
    {"inventoryServiceCode": "YKT-07", "amount": 40, "unitPrice": 42.15, "unitCode": "LTR", "vatRate": 20},
)


def _seeded(customer, kind: str, first: int, count: int, numbers: int | None, at: datetime):
    """Documents of `count` deterministic approved invoices from sequence number `first`, created one
    millisecond apart up to `at` (so that updateDateUtc tells them apart)."""
    users = [item for item in generated_taxpayers(str(customer.customer_unique_id))[0]
             if item["AppType"] == EINVOICE_APP]
    priced_lines = [priced(line) for line in SEED_LINES] * 2
    combinations = {}  # (first line, how many) -> (lines, figures): computed once
    outgoing = kind == OUTGOING
    for index, sequence in enumerate(range(first, first + count)):
        user = users[sequence % len(users)]
        archive = outgoing and sequence % 3 == 0
        identifier = generated_vkn(customer.customer_unique_id, "archive", sequence) if archive else user["Identifier"]
        start, size = sequence % len(SEED_LINES), 1 + sequence % 3
        if (start, size) not in combinations:
            lines = priced_lines[start:start + size]
            combinations[start, size] = lines, totals(lines)
        lines, figures = combinations[start, size]
        currency, rate = ("USD", Decimal("34.5")) if sequence % 10 == 3 else \
            ("EUR", Decimal("37.25")) if sequence % 17 == 5 else ("TRY", None)
        facts = {"is_send": outgoing, "record_type": E_ARCHIVE if archive else E_INVOICE,
                 "profile": EARSIVFATURA if archive else sequence % 2, "type": 1, "currency": currency, "rate": rate,
                 "issue_date": date(2025, 1, 1) + timedelta(days=sequence % 365), "issue_time": "10:30:00",
                 "lines": lines}
        party = {"name": f"Perakende Müşteri {sequence}" if archive else user["Title"], "taxOffice": None,
                 "accountName": None, "accountCode": None, "branchId": None,
                 "address": {**DEFAULT_ADDRESS, "city": provinces.PROVINCES[sequence % 81]}}
        body = {"description": f"Örnek fatura {sequence}",
                "generalInfoModel": {"prefix": "SND" if outgoing else None, "exchangeRateSource": "TCMB",
                                     "exchangeRateComment": "Döviz satış kuru"}}
        created = at - timedelta(milliseconds=count - index)
        data = record(facts, party=party, body=body, identifier=identifier,
                      alias=None if archive else user["Alias"], at=created, figures=figures)
        if outgoing and sequence % 5 == 0:
            data["recordStatus"] = POSTED
        invoice_number = fakes.document_number("SND", 2025, numbers + index) if outgoing else \
            fakes.document_number("GLN", 2025, sequence)
        yield Document(customer=customer, kind=kind, key=str(uuid.uuid5(customer.customer_unique_id,
                                                                         f"{kind}:{sequence}")),
                       number=invoice_number, status=APPROVED, created=created, data=data)


@control_action("POST", "invoices/seed")
def control_seed(body):
    """{customer, count, direction "incoming" | "outgoing", start?} -> that many approved invoices with
    deterministic data (sequence numbers from start, by default after the last seeded; a sequence number seeded
    again is the same invoice and is not created twice), in bulk: {"created", "first", "last"}. Incoming ones
    come from the taxpayer list's e-invoice users; outgoing ones are numbered SND + 2025 + the counter, every
    third an e-archive invoice, every fifth posted. Some are in USD or EUR."""
    customer = named_customer(body, guid_only=True)
    count = int(body.get("count") or 0)
    if not 1 <= count <= 2_000_000:
        raise BadRequest("count must be between 1 and 2000000")
    direction = body.get("direction")
    if direction not in ("incoming", "outgoing"):
        raise BadRequest("direction must be incoming or outgoing")
    kind = OUTGOING if direction == "outgoing" else INCOMING
    with locked(customer):
        mark, _ = Document.objects.get_or_create(customer=customer, kind=SEEDED, key=direction,
                                                 defaults={"data": {"last": 0}})
        first = int(body["start"]) if body.get("start") is not None else mark.data["last"] + 1
        before = Document.objects.filter(customer=customer, kind=kind).count()
        numbers = None
        if kind == OUTGOING:
            counter, _ = Document.objects.get_or_create(customer=customer, kind=COUNTER, key="SND2025",
                                                        defaults={"data": {"last": 0}})
            numbers = counter.data["last"] + 1
            Document.objects.filter(pk=counter.pk).update(data={"last": counter.data["last"] + count})
        create_in_batches(_seeded(customer, kind, first, count, numbers, now()), 5000, ignore_conflicts=True)
        Document.objects.filter(pk=mark.pk).update(data={"last": max(mark.data["last"], first + count - 1)})
        created = Document.objects.filter(customer=customer, kind=kind).count() - before
    return {"created": created, "first": first, "last": first + count - 1}


@control_action("POST", "invoices/ubl")
def control_unchecked_ubl(body):
    """{customer, invoice: an outgoing save body} -> {"ubl": the UBL the sandbox writes of it}, no save rule applied
    and nothing stored: tests run the tax authority's own checks on bodies the platform refuses."""
    customer = named_customer(body, guid_only=True)
    invoice = body.get("invoice")
    if not isinstance(invoice, dict) or not isinstance((invoice.get("generalInfoModel") or {}).get("issueDate"), str) \
            or blank(invoice.get("currentAccountIdentifier")):
        raise BadRequest("invoice must be a save body with currentAccountIdentifier and generalInfoModel.issueDate")
    return {"ubl": unchecked_ubl(invoice, customer).decode("utf-8")}


# An incoming invoice of a test's choosing (invoices/incoming). Not an option of invoices/seed: that action makes
# volume, deterministic by sequence number (seeded again, the same invoice), approved, from SEED_LINES; this one makes
# one invoice of given content (supplier, receipt moment, goods, the dispatch notes it invoices) whose commercial
# profile awaits an answer (invoice_responses.py).
DEFAULT_SUPPLIER = "1234567890"  # the sandbox's e-invoice user of the examples (every customer's taxpayer list)
INCOMING_LINES = ({"name": "Çimento (50 kg)", "quantity": 40, "unit_code": "C62", "unit_price": 185.5, "vat_rate": 20},
                  {"name": "İnşaat demiri", "quantity": 1250, "unit_code": "KGM", "unit_price": 21.4, "vat_rate": 20})
INCOMING_PROFILES = {"TEMELFATURA": 0, "TICARIFATURA": 1, 0: 0, 1: 1}


def _incoming_lines(value) -> tuple[list[dict], list[str]]:
    """(the lines as the store keeps them, the goods' names) of the body's lines."""
    items = list(INCOMING_LINES) if value is None else value
    if not isinstance(items, list) or not items:
        raise BadRequest("lines must be a non-empty array of {name, quantity, unit_code, unit_price, vat_rate}")
    lines, names = [], []
    for index, line in enumerate(items):
        if not isinstance(line, dict) or not isinstance(line.get("name"), str) or blank(line["name"]):
            raise BadRequest(f"lines[{index}] must be an object with a name")
        figures = {}
        for name, low, default in (("quantity", None, None), ("unit_price", 0, None), ("vat_rate", 0, 20)):
            number = line.get(name, default)
            if isinstance(number, bool) or not isinstance(number, (int, float)) or \
                    (number <= 0 if low is None else number < low) or (name == "vat_rate" and number > 100):
                raise BadRequest(f"lines[{index}].{name} must be a number ({'above 0' if low is None else 'from 0'}"
                                 f"{' to 100' if name == 'vat_rate' else ''})")
            figures[name] = number
        unit = line.get("unit_code") or "C62"
        if not isinstance(unit, str) or not re.fullmatch(r"[A-Z0-9]{2,3}", unit):
            raise BadRequest(f"lines[{index}].unit_code must be a UN/ECE unit code such as C62 or KGM")
        lines.append(priced({"amount": figures["quantity"], "unitPrice": figures["unit_price"], "unitCode": unit,
                             "vatRate": figures["vat_rate"]}))
        names.append(line["name"])
    return lines, names


def _despatches(value) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise BadRequest("despatches must be an array of {number, issue_date}")
    notes = []
    for index, note in enumerate(value):
        number = note.get("number") if isinstance(note, dict) else None
        issued = note.get("issue_date") if isinstance(note, dict) else None
        if not isinstance(number, str) or blank(number) or len(number) > 40:
            raise BadRequest(f"despatches[{index}].number must be the dispatch note's number (at most 40 characters)")
        if not isinstance(issued, str) or not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", issued):
            raise BadRequest(f"despatches[{index}].issue_date must be a date, yyyy-MM-dd")
        try:
            date.fromisoformat(issued)
        except ValueError:
            raise BadRequest(f"despatches[{index}].issue_date must be a date, yyyy-MM-dd") from None
        notes.append({"id": number, "issueDate": issued})
    return notes


def _incoming_supplier(customer, body) -> tuple[str, str, str]:
    """(VKN or TCKN, title, alias) of the supplier of an incoming invoice the control action makes."""
    supplier = body.get("supplier_vkn") or DEFAULT_SUPPLIER
    if not isinstance(supplier, str) or not re.fullmatch(r"[0-9]{10}|[0-9]{11}", supplier):
        raise BadRequest("supplier_vkn must be 10 digits (VKN) or 11 digits (TCKN)")
    title = body.get("supplier_title") or title_of(customer, supplier) or f"Tedarikçi {supplier}"
    alias = body.get("supplier_alias") or "urn:mail:defaultgb@tedarikci.com.tr"
    if not isinstance(title, str) or not isinstance(alias, str):
        raise BadRequest("supplier_title and supplier_alias must be texts")
    return supplier, title, alias


def _incoming_moments(body) -> tuple:
    """(its receipt, createDateUtc; its issue date) of an incoming invoice the control action makes."""
    created = now()
    if body.get("created") is not None:
        created = moment(body["created"]) if isinstance(body["created"], str) else None
        if created is None:
            raise BadRequest("created must be an ISO date and time")
    issued = body.get("issue_date") or timezone.localtime(created).date().isoformat()
    try:
        issue_date = date.fromisoformat(issued) if isinstance(issued, str) else None
    except ValueError:
        issue_date = None
    if issue_date is None:
        raise BadRequest("issue_date must be a date, yyyy-MM-dd")
    return created, issue_date


def _incoming_fields(customer, body) -> dict:
    """The control action's body read and checked: what _incoming_store makes the invoice of."""
    given = body.get("profile", "TICARIFATURA")
    profile = None if isinstance(given, bool) or not isinstance(given, (str, int)) else INCOMING_PROFILES.get(given)
    if profile is None:
        raise BadRequest("profile must be TICARIFATURA or TEMELFATURA (1 or 0)")
    supplier, title, alias = _incoming_supplier(customer, body)
    created, issue_date = _incoming_moments(body)
    ettn = body.get("ettn") or str(uuid.uuid4())
    if not is_guid(ettn):
        raise BadRequest("ettn must be a GUID")
    number = body.get("invoice_number")
    if number is not None and (not isinstance(number, str) or blank(number) or len(number) > 40):
        raise BadRequest("invoice_number must be the supplier's number (at most 40 characters)")
    lines, names = _incoming_lines(body.get("lines"))
    return {"profile": profile, "supplier": supplier, "title": title, "alias": alias, "created": created,
            "issue_date": issue_date, "ettn": str(uuid.UUID(str(ettn))), "number": number, "lines": lines,
            "names": names, "notes": _despatches(body.get("despatches"))}


def _incoming_store(customer, *, profile, supplier, title, alias, created, issue_date, ettn, number, lines, names,
                    notes) -> Document:
    """One incoming e-invoice in the store (under the customer's lock), numbered TDR + year + a counter unless the
    body named its number; a commercial one awaits an answer."""
    facts = {"is_send": False, "record_type": E_INVOICE, "profile": profile, "type": 1, "currency": "TRY",
             "rate": None, "issue_date": issue_date, "issue_time": timezone.localtime(created).strftime("%H:%M:%S"),
             "lines": lines}
    party = {"name": title, "taxOffice": None, "accountName": None, "accountCode": None, "branchId": None,
             "address": dict(DEFAULT_ADDRESS)}
    if find(customer, ettn) is not None:
        raise BadRequest(f"ettn {ettn} is already an invoice of this customer")
    if number is None:
        counter, _ = Document.objects.get_or_create(customer=customer, kind=COUNTER,
                                                    key=f"incoming:TDR{issue_date.year}",
                                                    defaults={"data": {"last": 0}})
        counter.data = {"last": counter.data["last"] + 1}
        counter.save(update_fields=["data"])
        number = fakes.document_number("TDR", issue_date.year, counter.data["last"])
    data = record(facts, party=party, body={"description": f"Gelen fatura {number}", "generalInfoModel": {}},
                  identifier=supplier, alias=alias, at=created)
    data["received"] = {"lineNames": names, "despatches": notes}
    doc = Document(customer=customer, kind=INCOMING, key=ettn, number=number, status=APPROVED, created=created,
                   data=data)
    if PROFILES[profile] == "TICARIFATURA":
        await_answer(doc)
    doc.save()
    return doc


@control_action("POST", "invoices/incoming")
def control_incoming(body):
    """{customer, profile? ("TICARIFATURA" (default) or "TEMELFATURA", or 1 / 0), supplier_vkn? (1234567890),
    supplier_title? (the taxpayer list's title), supplier_alias?, invoice_number? (TDR + the year + a counter of the
    customer), ettn?, created? (ISO: its receipt, createDateUtc; now), issue_date? (yyyy-MM-dd; created's day), lines?
    [{name, quantity, unit_code (C62), unit_price, vat_rate (20)}], despatches? [{number, issue_date}]} ->
    {id, invoiceNumber, invoiceStatus, profile, createDateUtc, answerDeadline}: one incoming e-invoice with that
    content, whose UBL names the goods and the dispatch notes (cac:DespatchDocumentReference). A commercial one
    awaits an answer (70) until 8 days after created (65 at the next read once they are over); a basic one is
    approved (60)."""
    customer = named_customer(body, guid_only=True)
    given = _incoming_fields(customer, body)
    with locked(customer):
        doc = _incoming_store(customer, **given)
    data = doc.data
    return {"id": doc.key, "invoiceNumber": doc.number, "invoiceStatus": doc.status, "profile": data["profile"],
            "createDateUtc": data["createDateUtc"], "answerDeadline": doc.data.get("answerDeadline")}
