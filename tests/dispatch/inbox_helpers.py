"""What the tests of the receiving side share: incoming notes made on the sandbox (its control action), the sandbox
customer's own VKN (the receiver of notes between two sandbox companies), quick settings and a ReceiptAdvice."""

import hashlib
from datetime import timedelta

from django.utils import timezone
from stdnum.tr import vkn

from backoffice.dispatch import inbox, receipt

LINES = [{"name": "Çimento 50 kg", "quantity": 40, "unit_code": "C62"},
         {"name": "Kum", "quantity": 12, "unit_code": "TNE"},
         {"name": "Tuğla", "quantity": 500, "unit_code": "C62"}]
SENDER_VKN = "4840000006"


def customer(company) -> dict:
    return {"customer": str(company.customer_unique_id)}


def quick(sandbox, company, **settings):
    """Replies and notes settle at once (20 -> 50 -> 60) on the sandbox's next read."""
    sandbox.control("POST", "dispatch/settings", {**customer(company), "processing_seconds": 0,
                                                  "approve_seconds": 0, "error_rate": 0, **settings})


def arrive(sandbox, company, *, count=1, lines=LINES, sender_vkn=SENDER_VKN, **fields) -> list[dict]:
    """Incoming notes that arrive on the platform for `company` now (the sandbox's control action)."""
    # a little earlier: the list's endDate stays a little behind now (inbox.list_end)
    created = (timezone.now() - timedelta(seconds=10)).isoformat()
    answer = sandbox.control("POST", "dispatch/incoming", {**customer(company), "count": count, "lines": lines,
                                                           "sender_vkn": sender_vkn, "created": created,
                                                           "sender_title": "Tek Kutu Lojistik A.Ş.", **fields})
    return answer["notes"]


def mirrored(company, *, walk=False):
    """The incoming list read now; returns the company's incoming notes, oldest first."""
    from backoffice.dispatch.models import IncomingNote

    inbox.inbox_mirror(company=company, walk=walk)
    return list(IncomingNote.objects.filter(company=company).order_by("received_at", "pk"))


def sandbox_vkn(company) -> str:
    """The VKN the sandbox gives a customer (its dispatch_rules.company_vkn): where another customer's note to it
    arrives."""
    digest = int.from_bytes(hashlib.sha256(f"company:{company.customer_unique_id}".encode()).digest()[:8], "big")
    base = str(digest % 900_000_000 + 100_000_000)
    return base + vkn.calc_check_digit(base)


def receipt_for(note, answers, *, uuid, number=None, prefix="IRY") -> bytes:
    """A ReceiptAdvice answering `note` (its lines read): answers {line_id: (received, rejected, reason)}."""
    lines = []
    for line in note.lines.all():
        received, rejected, reason = answers.get(line.line_id, (line.quantity, 0, ""))
        lines.append({"line_id": line.line_id, "name": line.product_name, "unit_code": line.unit_code,
                      "received": received, "rejected": rejected, "reason": reason})
    now = timezone.localtime()
    return receipt.receipt_xml(
        uuid=uuid, number=number, issue_date=now.date(), issue_time=now.time().replace(microsecond=0),
        despatch_number=note.despatch_number, despatch_issue_date=note.issue_date or now.date(),
        supplier=(note.sender_identifier, note.sender_title), customer=("1234567890", "Alıcı A.Ş."),
        delivery_datetime=now, delivery_contact="Ayşe Yılmaz", lines=lines, prefix=prefix)
