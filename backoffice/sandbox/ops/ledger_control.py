"""The sandbox's control actions for the ledger service (ops/ledger.py keeps the store): seed periods in any
state with their parts, set a period's status, and set the timing and the tax authority's answer to the next
certificate submissions. Tests and `make run` call them; the platform has none.

Each takes {"customer": ...}: the customer's id (an integer, as POST /_control/customers answers it), its
customerUniqueId or an API key of it (customer_unique_id or api_key work too, as for the other actions).

The settings are the customer's own (a Document ledger_settings): a test's fresh customer starts from the
defaults (a step of 2 s, certificates approved), and {"reset": true} restores them.
"""

from datetime import date, timedelta


from ..control import BadRequest, control_action
from ..models import Document
from .common import locked, named_customer, now
from .ledger import (APPROVED, CERTIFICATE_FAILURE, CERTIFICATE_OUTCOMES, DEFAULT_SETTINGS, ERROR, FAILED, PERIOD,
                     STATUSES, create_parts, last_counters, ledger_settings, new_period, period_item, previous_period,
                     save_settings, task)
from .ledger_journal import Period, day, money
from .ledger_rules import check_zip
from .ledger_uploads import MAX_SPLIT_SIZE, stored_journal

SEEDED_ERROR = "1 hata. Satır 1: Y: sandbox denetim aracıyla hata durumunda oluşturuldu"
SEED_ENTITY = "1234567890"  # a VKN whose check digit holds
ENTRIES_PER_PART = 4
# The entries a seeded journal is made of, in turn: (entryComment, documentType, lines), a line being
# (accountMainID, accountMainDescription, accountSubID, debitCreditCode, kuruş).
SEED_ENTRIES = (
    ("Peşin satış", "invoice", (("100", "Kasa", "100.01", "D", 120000),
                                ("600", "Yurt İçi Satışlar", "600.01", "C", 100000),
                                ("391", "Hesaplanan KDV", "391.01", "C", 20000))),
    ("Mal alışı", "invoice", (("153", "Ticari Mallar", "153.01", "D", 50000),
                              ("191", "İndirilecek KDV", "191.01", "D", 10000),
                              ("320", "Satıcılar", "320.01", "C", 60000))),
    ("Müşteriden tahsilat", "voucher", (("102", "Bankalar", "102.01", "D", 240000),
                                        ("120", "Alıcılar", "120.01", "C", 240000))),
    ("Kira ödemesi", "other", (("770", "Genel Yönetim Giderleri", "770.01", "D", 35000),
                               ("102", "Bankalar", "102.01", "C", 35000))),
)


def _status(value) -> int:
    if value not in STATUSES or isinstance(value, bool):
        raise BadRequest(f"status must be one of {', '.join(map(str, STATUSES))}")
    return value


def seed_journal(start: date, end: date, parts: int, first_entry: int, first_line: int) -> tuple[bytes, frozenset]:
    """A journal of `parts` x ENTRIES_PER_PART entries spread over the period, that keeps every rule, and the
    entry counters that start a new part."""
    total = parts * ENTRIES_PER_PART
    days = (end - start).days + 1
    lines = [f"Y\t{start.year}-01-01\t{start.year}-12-31\t0000\t{SEED_ENTITY}"]
    line_counter = first_line
    for index in range(total):
        comment, doc_type, entry_lines = SEED_ENTRIES[index % len(SEED_ENTRIES)]
        when = (start + timedelta(days=index * days // total)).isoformat()
        figure = money(sum(value for *_, code, value in entry_lines if code == "D"))
        counter = first_entry + index
        lines.append(f"H\tmuhasebe\t{when}\tY{counter:06d}\t{comment}\t{figure}\t{figure}\t{counter}")
        for number, (main, description, sub, code, value) in enumerate(entry_lines, start=1):
            document = (f"{doc_type}\t\tSND{start.year}{counter:09d}\t\t{when}" if doc_type == "invoice" else
                        f"{doc_type}\tKira sözleşmesi\t\t\t" if doc_type == "other" else f"{doc_type}\t\t\t\t")
            fields = [str(number), str(line_counter), main, description, f"{description} alt hesabı", sub,
                      money(value), code, when, *document.split("\t"), "", comment]
            lines.append("".join(field + "\t" for field in fields))
            line_counter += 1
    breaks = frozenset(first_entry + part * ENTRIES_PER_PART for part in range(1, parts))
    return ("\n".join(lines) + "\n").encode("utf-8"), breaks


def _seed_one(customer, spec: dict, at, step: float) -> int:
    if not isinstance(spec, dict):
        raise BadRequest("each period must be an object {start, end, status, split_size?, parts?}")
    start, end = day(str(spec.get("start", ""))), day(str(spec.get("end", "")))
    if start is None or end is None or start > end:
        raise BadRequest(f"start and end must be dates yyyy-mm-dd, start not after end (got {spec.get('start')!r}, "
                         f"{spec.get('end')!r})")
    status = _status(spec.get("status"))
    split_size, parts = spec.get("split_size", MAX_SPLIT_SIZE), spec.get("parts") or 0
    if not isinstance(split_size, int) or not 1 <= split_size <= MAX_SPLIT_SIZE:
        raise BadRequest(f"split_size must be an integer from 1 to {MAX_SPLIT_SIZE}")
    if not isinstance(parts, int) or not 0 <= parts <= 1000:
        raise BadRequest("parts must be an integer from 0 to 1000")
    message = spec.get("message") or (SEEDED_ERROR if status == ERROR else CERTIFICATE_FAILURE if status == FAILED
                                      else "")
    doc = new_period(customer, start=start, end=end, split_size=split_size, time_stamp=False,
                     without_tax_detail=False, status=status, at=at, upload=None, step=step, message=message)
    if parts:
        # The counters continue from the month before, or start at 1 on the fiscal year's first day.
        counters = None if start == date(start.year, 1, 1) else \
            last_counters(customer, previous_period(customer, start))
        first_entry, first_line = (counters[0] + 1, counters[1] + 1) if counters else (1, 1)
        text, breaks = seed_journal(start, end, parts, first_entry, first_line)
        upload = stored_journal(customer, text)
        outcome = check_zip(upload["path"], upload["member"],
                            Period(start=start, end=end, split_size=split_size, previous=counters), breaks)
        if outcome.errors:  # the seed breaks the platform's own rules: a sandbox bug, said plainly
            raise BadRequest(f"the seeded journal fails the check: {outcome.message}")
        create_parts(customer, doc, outcome.parts, at)
        doc.data = {**doc.data, "upload": upload, "entity": outcome.entity}
        Document.objects.filter(pk=doc.pk).update(data=doc.data)
    return doc.pk


@control_action("POST", "ledger/seed")
def control_seed(body):
    """{customer, periods: [{start, end, status, split_size?, parts?, message?}]} -> {"ids": [...]}: periods made
    directly in those states, created in that order, with that many parts (4 entries each, a journal that keeps
    every rule) and their book entries. The rules of the upload (months in order, no overlap) do not apply."""
    customer = named_customer(body)
    periods = body.get("periods")
    if not isinstance(periods, list) or not periods:
        raise BadRequest("periods must be a non-empty array of {start, end, status, split_size?, parts?}")
    at = now()
    step = float(ledger_settings(customer)["step_seconds"])
    with locked(customer):
        ids = [_seed_one(customer, spec, at + timedelta(microseconds=index), step)
               for index, spec in enumerate(periods)]
    return {"ids": ids}


@control_action("POST", "ledger/status")
def control_status(body):
    """{customer, id, status, message?} -> the period with that status and its Task (a message for 40 and 80,
    by default the sandbox's); the period's life stops there (no further move is due)."""
    customer = named_customer(body)
    status = _status(body.get("status"))
    with locked(customer):
        named = body.get("id")
        if isinstance(named, str) and named.strip().isdigit():
            named = int(named)
        doc = Document.objects.filter(customer=customer, kind=PERIOD, pk=named).first() \
            if isinstance(named, int) and not isinstance(named, bool) else None
        if doc is None:
            raise BadRequest(f"no period with id {body.get('id')!r} for this customer")
        message = body.get("message") or (SEEDED_ERROR if status == ERROR else CERTIFICATE_FAILURE
                                          if status == FAILED else "")
        doc.status, doc.due_at = status, None
        doc.data = {**doc.data, "Task": task(doc.pk, status, message)}
        if status == APPROVED:
            doc.data.setdefault("ApprovedAt", now().isoformat())
        doc.save(update_fields=["status", "due_at", "data"])
    return period_item(doc)


@control_action("POST", "ledger/settings")
def control_settings(body):
    """{customer, step_seconds?, certificates? "approve" | "fail" | "fail_once", reset?} -> the customer's
    settings: the length of a step of the period's life (fixed when a period is uploaded or sent), and the tax
    authority's answer to the next certificate submissions (fail_once: the next one fails, later ones pass)."""
    customer = named_customer(body)
    changes = dict(DEFAULT_SETTINGS) if body.get("reset") else {}
    step = body.get("step_seconds")
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, (int, float)) or not 0 <= step <= 86400:
            raise BadRequest("step_seconds must be a number of seconds from 0 to 86400")
        changes["step_seconds"] = float(step)
    outcome = body.get("certificates")
    if outcome is not None:
        if outcome not in CERTIFICATE_OUTCOMES:
            raise BadRequest(f"certificates must be one of {', '.join(CERTIFICATE_OUTCOMES)}")
        changes["certificates"] = outcome
    return save_settings(customer, changes)
