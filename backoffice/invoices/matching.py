"""An incoming invoice held against the goods (issue 33, point 3): its lines read from its UBL-TR (ubl.py), the
dispatch notes it bills found (the numbers it names, in cac:DespatchDocumentReference or in a note, else the supplier's
notes of the 7 days before it: dispatch_inbox.api), and per invoice line the quantity and price invoiced beside the
quantity we accepted on our answer to those notes. A line that bills more than we accepted, a product that is on no
note, another unit: the invoice differs (MatchState.MISMATCH), flagged in the list and on its page, and shown in the
answer's confirmation.

Lines meet by what the supplier wrote on both documents: the dispatch line the invoice line names
(cac:DespatchLineReference), else the product code, else the product's name folded the Turkish way (İ/i, I/ı). Several
invoice lines of one product share what was accepted of it, in their order.

The check reads the invoice's UBL and the notes' UBL from the platform, so it runs in the background (a page GET
never calls the platform): after each reading of the lists, for the new incoming invoices, and when someone asks.
"""

from decimal import Decimal

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import codes, domains, jobs
from backoffice.core.models import Company
from backoffice.core.text import search_fold
from backoffice.remote.errors import RateLimited, RemoteError

from . import documents, ubl
from .choices import DocumentKind, MatchState, Profile
from .models import Invoice, InvoiceMatch

inbox_api = domains.api("dispatch_inbox")

BATCH = 20  # invoices checked by one run (each reads its UBL: the UBL-viewing rate rule)


def _key(code, name, unit) -> tuple:
    return ("code", search_fold(code).strip(), unit or "") if code else ("name", search_fold(name).strip(), unit or "")


def _pool(goods_by_note) -> dict:
    """{(note number, line id): goods} and {product key: [goods]} of the notes' lines, each with what is left."""
    by_line, by_product = {}, {}
    for number, goods in goods_by_note:
        for good in goods:
            good = {**good, "note": number, "left": good["accepted"]}
            by_line[(number, good["line_id"])] = good
            for key in {_key(good["code"], good["name"], good["unit"]), _key("", good["name"], good["unit"])}:
                by_product.setdefault(key, []).append(good)
    return {"line": by_line, "product": by_product}


def _found(pool, line, numbers) -> list:
    for line_id, document in line.despatch_line_refs:
        for number in ([document] if document else numbers):
            good = pool["line"].get((number, line_id))
            if good is not None:
                return [good]
    if line.item_code:
        goods = pool["product"].get(_key(line.item_code, line.name, line.unit_code))
        if goods:
            return goods
    return pool["product"].get(_key("", line.name, line.unit_code)) or []


def _other_unit(pool, line) -> bool:
    name = search_fold(line.name).strip()
    return any(key[0] == "name" and key[1] == name and key[2] != line.unit_code for key in pool["product"])


def compare(invoice_ubl, goods_by_note) -> tuple[list[dict], bool]:
    """([one row per invoice line], whether any differs) of an invoice's lines against the notes' accepted goods."""
    pool, numbers = _pool(goods_by_note), [number for number, _goods in goods_by_note]
    rows, differs = [], False
    for line in invoice_ubl.lines:
        goods = _found(pool, line, numbers)
        row = {"line_id": line.line_id, "name": line.name, "unit": line.unit_code, "invoiced": str(line.quantity),
               "price": str(line.unit_price), "accepted": None, "dispatched": None, "notes": [], "problem": ""}
        if not goods:
            row["problem"] = "unit" if _other_unit(pool, line) else "missing"
        elif any(good["accepted"] is None for good in goods):
            row["problem"] = "unanswered"
            row["dispatched"] = str(sum(good["delivered"] for good in goods))
        else:
            left = sum(good["left"] for good in goods)
            row.update(accepted=str(left), dispatched=str(sum(good["delivered"] for good in goods)),
                       notes=sorted({good["note"] for good in goods}))
            if line.quantity > left:
                row["problem"] = "more"
            take = line.quantity
            for good in goods:  # what this line bills is no longer there for the next line of the product
                used = min(good["left"], take)
                good["left"], take = good["left"] - used, take - used
        differs = differs or row["problem"] in ("missing", "unit", "more")
        rows.append(row)
    return rows, differs


PROBLEMS = {
    "missing": gettext_lazy("on no dispatch note of this supplier"),
    "unit": gettext_lazy("in another unit than on the dispatch note"),
    "more": gettext_lazy("bills more than we accepted"),
    "unanswered": gettext_lazy("the dispatch note is not answered yet"),
}


def check(invoice, *, client=None) -> InvoiceMatch:
    """Read the invoice's UBL and its notes' answers (platform calls), compare, keep the result."""
    content = documents.INVOICE_DOCUMENTS.get(invoice, DocumentKind.UBL, client=client).file.read()
    try:
        read = ubl.read_invoice(content)
    except ValueError as exc:
        return _keep(invoice, MatchState.UNREADABLE, error=str(exc))
    numbers = [reference.number for reference in read.despatch_references]
    notes, found_by = inbox_api.billed_notes(invoice.company, supplier=read.supplier.identifier or
                                             invoice.target_vkn_tckn, numbers=numbers, invoice_date=read.issue_date)
    if read.references_in_notes and found_by == "reference":
        found_by = "note"
    if not notes:
        return _keep(invoice, MatchState.NO_NOTES, notes=[{"number": number, "date": None, "pk": None,
                                                           "found_by": ""} for number in numbers])
    goods = [(note.despatch_number, inbox_api.accepted_goods(note)) for note in notes]
    rows, differs = compare(read, goods)
    listed = [{"number": note.despatch_number, "date": note.issue_date.isoformat() if note.issue_date else None,
               "pk": note.pk, "found_by": found_by} for note in notes]
    missing = [number for number in numbers if number not in {note.despatch_number for note in notes}]
    listed += [{"number": number, "date": None, "pk": None, "found_by": ""} for number in missing]
    return _keep(invoice, MatchState.MISMATCH if differs or missing else MatchState.MATCHED, notes=listed, lines=rows)


def _keep(invoice, state, *, notes=(), lines=(), error="") -> InvoiceMatch:
    match, _created = InvoiceMatch.objects.update_or_create(invoice=invoice, defaults={
        "notes": list(notes), "lines": list(lines), "error": error[:2000]})
    Invoice.objects.filter(pk=invoice.pk).update(match_state=state)
    invoice.match_state = state
    return match


def to_check(company):
    """Incoming commercial invoices not checked yet (the ones whose goods came with a dispatch note)."""
    return Invoice.objects.filter(company=company, is_send=False, profile=Profile.TICARIFATURA, match_state="") \
        .exclude(remote_id="")


@jobs.job(gettext_lazy("Check incoming invoices against the goods"))
def invoices_match(company_id, pks=None) -> str:
    """Check the given invoices, or the next unchecked incoming commercial invoices; the rate limit ends a run (the
    next reading goes on)."""
    company = Company.objects.get(pk=company_id)
    invoices = Invoice.objects.filter(company=company, is_send=False, pk__in=pks) if pks else to_check(company)
    done = 0
    for invoice in list(invoices.order_by("pk")[:BATCH]):
        try:
            check(invoice)
        except RateLimited:
            if not done:
                raise
            break
        except inbox_api.DispatchError as exc:  # a supplier's note that cannot be read: said on the invoice
            _keep(invoice, MatchState.UNREADABLE, error=str(exc))
        except RemoteError as exc:
            if not exc.permanent:  # the platform is away: the next reading goes on from here
                return _("%(count)s invoice(s) checked; stopped: %(error)s") % {"count": done, "error": exc}
            # refused for good (the UBL is not there): said on the invoice, so the others are still checked
            _keep(invoice, MatchState.UNREADABLE, error=str(exc.user_message()))
        done += 1
    return _("%(count)s invoice(s) checked against the goods.") % {"count": done}


def match_request(company, pks=None):
    return jobs.enqueue(invoices_match, company=company, args=[company.pk, *([list(pks)] if pks else [])])


def shown(invoices) -> dict:
    """{invoice pk: (state, rows with their problem's words)} of invoices already checked (the pages; no call)."""
    found = {match.invoice_id: match for match in InvoiceMatch.objects.filter(invoice__in=invoices)}
    result = {}
    for invoice in invoices:
        match = found.get(invoice.pk)
        if match is None:
            continue
        rows = [{**row, "problem_text": PROBLEMS.get(row["problem"], ""),
                 "unit_label": codes.label(codes.UNIT_CODES, row["unit"]) if row["unit"] else "",
                 "invoiced": Decimal(row["invoiced"]), "price": Decimal(row["price"]),
                 "accepted": Decimal(row["accepted"]) if row["accepted"] is not None else None}
                for row in match.lines]
        result[invoice.pk] = {"state": invoice.match_state, "label": invoice.get_match_state_display(),
                              "rows": rows, "notes": match.notes, "error": match.error,
                              "checked_at": match.checked_at}
    return result
