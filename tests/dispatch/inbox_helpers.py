"""What the tests of the receiving side share: incoming notes made on the sandbox (its control action), the sandbox
customer's own VKN (the receiver of notes between two sandbox companies), quick settings and a ReceiptAdvice."""

import hashlib
from datetime import timedelta
from decimal import Decimal

from django.utils import timezone
from stdnum.tr import vkn

from backoffice.core.choices import SyncState
from backoffice.dispatch.models import ReceivedReply, ReceivedReplyLine
from backoffice.dispatch_inbox.mirror import inbox_mirror
from backoffice.dispatch_inbox.models import DispatchReply, IncomingLine, IncomingNote, ReplyLine

from .receipt_samples import receipt_xml

LINES = [{"name": "Çimento 50 kg", "quantity": 40, "unit_code": "C62"},
         {"name": "Kum", "quantity": 12, "unit_code": "TNE"},
         {"name": "Tuğla", "quantity": 500, "unit_code": "C62"}]
SENDER_VKN = "4840000006"


def delivered_recently(hours=1):
    """A delivery a little while ago, but never before today: the notes arriving now are issued today (Istanbul),
    and a delivery before the note's day is refused, which an hour ago is just after midnight."""
    now = timezone.localtime()
    return max(now - timedelta(hours=hours), now.replace(hour=0, minute=0, second=0, microsecond=0))


def customer(company) -> dict:
    return {"customer": str(company.customer_unique_id)}


def quick(sandbox, company, **settings):
    """Replies and notes settle at once (20 -> 50 -> 60) on the sandbox's next read."""
    sandbox.control("POST", "dispatch/settings", {**customer(company), "processing_seconds": 0,
                                                  "approve_seconds": 0, "error_rate": 0, **settings})


def arrive(sandbox, company, *, count=1, lines=LINES, sender_vkn=SENDER_VKN, **fields) -> list[dict]:
    """Incoming notes that arrive on the platform for `company` now (the sandbox's control action)."""
    # a little earlier: the list's endDate stays a little behind now (dispatch.services.list_end)
    created = (timezone.now() - timedelta(seconds=10)).isoformat()
    answer = sandbox.control("POST", "dispatch/incoming", {**customer(company), "count": count, "lines": lines,
                                                           "sender_vkn": sender_vkn, "created": created,
                                                           "sender_title": "Tek Kutu Lojistik A.Ş.", **fields})
    return answer["notes"]


def mirrored(company, *, walk=False):
    """The incoming list read now; returns the company's incoming notes, oldest first."""
    inbox_mirror(company.pk, walk=walk)
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
    return receipt_xml(
        uuid=uuid, number=number, issue_date=now.date(), issue_time=now.time().replace(microsecond=0),
        despatch_number=note.despatch_number, despatch_issue_date=note.issue_date or now.date(),
        supplier=(note.sender_identifier, note.sender_title), customer=(sandbox_vkn(note.company), "Alıcı A.Ş."),
        delivery_datetime=now, delivery_contact="Ayşe Yılmaz", lines=lines, prefix=prefix)


def incoming_day(company, now, ours=None):
    """The receiving side of a working day, as the mirror keeps it: a note awaiting an answer with its lines, one
    being partially accepted by our reply, one rejected, one overdue; and a receiver's partial acceptance of our note
    `ours` (its first line answered)."""
    synced = {"sync_state": SyncState.SYNCED, "synced_at": now, "status_read_at": now}
    notes = []
    for index, (status, days, sender, title) in enumerate((
            (70, 1, "4840000006", "Tek Kutu Lojistik A.Ş."), (91, 2, "1234567890", "Örnek Ticaret A.Ş."),
            (80, 4, "3920000003", "Hızlı Nakliyat A.Ş."), (70, 9, "4840000006", "Tek Kutu Lojistik A.Ş."))):
        note = IncomingNote.objects.create(
            company=company, remote_id=f"5c3e9b1a-0000-4000-8000-00000000040{index}", remote_status=status,
            despatch_number=f"TKL202600000001{index}", sender_identifier=sender, sender_title=title,
            profile="TEMELIRSALIYE", issue_date=(now - timedelta(days=days)).date(), received_at=now - timedelta(days=days),
            line_count=3, payable_amount=Decimal("18450.00"), currency_code="TRY", lines_read_at=now, **synced)
        IncomingLine.objects.bulk_create([
            IncomingLine(note=note, position=1, line_id="1", product_name="Çimento 50 kg", quantity=40, unit_code="C62"),
            IncomingLine(note=note, position=2, line_id="2", product_name="Kum", quantity=12, unit_code="TNE"),
            IncomingLine(note=note, position=3, line_id="3", product_name="Tuğla", quantity=500, unit_code="C62")])
        notes.append(note)
    reply = DispatchReply.objects.create(
        company=company, note=notes[1], way="partial", answer="partial", remote_id="6d4f0c2b-0000-4000-8000-000000000501",
        remote_status=50, receipt_number="IRY2026000000007", prefix="IRY", delivered_at=now - timedelta(hours=3),
        delivery_contact="Ayşe Yılmaz", envelope_status="1000", **synced)
    ReplyLine.objects.bulk_create([
        ReplyLine(reply=reply, line_id="1", product_name="Çimento 50 kg", delivered=40, accepted=40),
        ReplyLine(reply=reply, line_id="2", product_name="Kum", delivered=12, accepted=12),
        ReplyLine(reply=reply, line_id="3", product_name="Tuğla", delivered=500, accepted=450, rejected=50,
                  reason="Kırık tuğla")])
    DispatchReply.objects.create(
        company=company, note=notes[2], way="approve_reject", answer="reject", reason="Sipariş edilmedi",
        remote_id="6d4f0c2b-0000-4000-8000-000000000502", remote_status=60, receipt_number="RED2026000000001", **synced)
    if ours is not None:
        received = ReceivedReply.objects.create(
            company=company, remote_id="8e5a1d3c-0000-4000-8000-000000000601", receipt_number="ALC2026000000003",
            remote_status=60, received_at=now - timedelta(hours=1), despatch_id=ours.remote_id,
            despatch_number=ours.despatch_number, note=ours, sender_identifier=ours.receiver_identifier,
            sender_title=ours.receiver_name, answer="partial", lines_read_at=now)
        ReceivedReplyLine.objects.create(reply=received, line_id="1", product_name="Çimento 50 kg", accepted=36,
                                         rejected=4, reason="Yırtık torba")
    return notes[0]
