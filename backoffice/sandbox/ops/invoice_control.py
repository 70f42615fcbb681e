"""The sandbox's control actions for invoices (ops/invoice_store.py keeps the store): seed invoices in bulk, set an
invoice's status, register users on the taxpayer list, write the UBL of a body no save rule checked (the tax
authority's checks as the tests' oracle). Tests and benchmarks call them; the platform has none."""

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
from .common import blank, create_in_batches, locked, named_customer, now
from .invoice_documents import unchecked_ubl
from .invoice_store import (APPROVED, COUNTER, DEFAULT_ADDRESS, E_ARCHIVE, E_INVOICE, EARSIVFATURA, ERROR,
                            ERROR_MESSAGE, INCOMING, OUTGOING, POSTED, QUEUED, SEEDED, STATUSES, find, priced, queue,
                            record, stamp, totals)
from .invoice_taxpayers import EINVOICE_APP, TAXPAYER, generated_taxpayers, generated_vkn


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
