"""Electronic ledger service, the four previews of a part (document 3, 4.4): HTML (text/html; charset=utf-8,
Content-Disposition inline). 1 the part's journal (its first 500 entry lines, read again from the stored ZIP), 2 the
general ledger (totals per main account), 3 the journal and ledger certificate (berat), 4 the same approved by the
tax authority, only for an approved period (60). The choices are listed in ledger.py.
"""

import html
import uuid
from datetime import datetime

from django.http import HttpResponse
from django.utils import timezone

from ..api import Call, operation
from ..models import Document
from .common import Problems, refused, whole_number
from .ledger import APPROVED, BOOK, JOURNAL, PART, PERIOD, UNREADABLE, document_of, settle
from .ledger_journal import cents, lines_of, open_member

PREVIEW_TYPES = {1: "journal", 2: "general ledger", 3: "journal and ledger certificate",
                 4: "tax-authority-approved certificate"}
PREVIEW_LINES = 500

STYLE = """body{font-family:sans-serif;font-size:13px;color:#222;margin:16px}
h1{font-size:18px;margin:0 0 4px}h2{font-size:14px;margin:16px 0 4px}
table{border-collapse:collapse;width:100%}th,td{border:1px solid #ccc;padding:3px 6px;text-align:left}
th{background:#f0f0f0}td.n{text-align:right;white-space:nowrap}tr.h td{background:#fafae8;font-weight:bold}
dl{display:grid;grid-template-columns:max-content auto;gap:4px 16px}dt{font-weight:bold}dd{margin:0}
code{word-break:break-all}.note{color:#555;margin:8px 0}.seal{border:2px solid #2a6;padding:8px;margin-top:12px}"""


def _e(value) -> str:
    return html.escape(str(value if value is not None else ""))


def _tl(kurus: int) -> str:
    """An amount as Turkish accounts show it: 1.234,56."""
    sign = "-" if kurus < 0 else ""
    whole, rest = divmod(abs(kurus), 100)
    return f"{sign}{whole:,}".replace(",", ".") + f",{rest:02d}"


def _tl_figure(value) -> str:
    return _tl(round(float(value) * 100))


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html><html lang="tr"><head><meta charset="utf-8"><title>{_e(title)}</title>'
            f"<style>{STYLE}</style></head><body>{body}</body></html>")


def _heading(title: str, period: Document, part: Document) -> str:
    return (f"<h1>{_e(title)}</h1><p class=\"note\">VKN/TCKN {_e(period.data.get('entity', ''))} · dönem "
            f"{_e(period.data['FiscalYearStart'][:10])} – {_e(period.data['FiscalYearEnd'][:10])} · parça "
            f"{part.data['IndexNumber']}</p>")


def _journal(period: Document, part: Document) -> str:
    """The part's entries as a table, read again from the stored journal: its first PREVIEW_LINES lines."""
    upload = period.data.get("upload") or {}
    first, last = part.data["first_line"], part.data["last_line"]
    total = part.data["LineNumberEnd"] - part.data["LineNumberStart"] + 1
    rows, shown, number = [], 0, 0
    try:
        archive, stream = open_member(upload["path"], upload["member"])
    except UNREADABLE:
        return _page("Yevmiye defteri", "<p>Yüklenen dosya okunamadı.</p>")
    with archive, stream:
        for raw, _too_long in lines_of(stream):
            number += 1
            if number < first:
                continue
            if number > last or shown >= PREVIEW_LINES:
                break
            fields = raw.rstrip(b"\r\n").decode("utf-8", "replace").lstrip("\ufeff").split("\t")
            if fields[0] == "H":
                fields += [""] * (8 - len(fields))
                rows.append(f'<tr class="h"><td>{_e(fields[7])}</td><td>{_e(fields[2])}</td>'
                            f'<td colspan="4">{_e(fields[3])} {_e(fields[4])}</td><td colspan="3">'
                            f"{_e(fields[1])}</td></tr>")
                continue
            fields += [""] * (16 - len(fields))
            kurus = cents(fields[6])
            value = _tl(kurus) if kurus is not None else _e(fields[6])
            debit, credit = (value, "") if fields[7] == "D" else ("", value)
            rows.append(f"<tr><td>{_e(fields[1])}</td><td>{_e(fields[8])}</td><td>{_e(fields[2])}</td>"
                        f"<td>{_e(fields[5])}</td><td>{_e(fields[3])} {_e(fields[4])}</td>"
                        f'<td>{_e(fields[15])}</td><td class="n">{debit}</td><td class="n">{credit}</td>'
                        f"<td>{_e(fields[9])} {_e(fields[11])}</td></tr>")
            shown += 1
    count = f"{total:,}".replace(",", ".")  # Turkish thousands
    note = (f'<p class="note">İlk {PREVIEW_LINES} satır gösteriliyor; parçada {count} satır var.</p>'
            if total > shown else f'<p class="note">{count} satır.</p>')
    table = ("<table><tr><th>Satır / madde</th><th>Tarih</th><th>Hesap</th><th>Alt hesap</th><th>Açıklama</th>"
             "<th>Detay</th><th>Borç</th><th>Alacak</th><th>Belge</th></tr>" + "".join(rows) + "</table>")
    return _page("Yevmiye defteri", _heading("Yevmiye Defteri", period, part) + note + table + note)


def _general_ledger(period: Document, part: Document) -> str:
    rows, debit_total, credit_total = [], 0, 0
    for main, (description, debit, credit) in sorted(part.data["ledger"].items()):
        debit_total, credit_total = debit_total + debit, credit_total + credit
        rows.append(f'<tr><td>{_e(main)}</td><td>{_e(description)}</td><td class="n">{_tl(debit)}</td>'
                    f'<td class="n">{_tl(credit)}</td><td class="n">{_tl(debit - credit)}</td></tr>')
    rows.append(f'<tr class="h"><td colspan="2">Toplam</td><td class="n">{_tl(debit_total)}</td>'
                f'<td class="n">{_tl(credit_total)}</td><td class="n">{_tl(debit_total - credit_total)}</td></tr>')
    table = ("<table><tr><th>Ana hesap</th><th>Açıklama</th><th>Borç</th><th>Alacak</th><th>Bakiye</th></tr>"
             + "".join(rows) + "</table>")
    return _page("Büyük defter (kebir)", _heading("Büyük Defter (Kebir)", period, part) + table)


def _certificate(period: Document, part: Document, book: Document, approved: bool) -> str:
    data = part.data
    book_name = "Yevmiye defteri" if book.data["GeneralbookType"] == JOURNAL else "Büyük defter (kebir)"
    facts = [("Defter", book_name), ("VKN/TCKN", period.data.get("entity", "")),
             ("Dönem", f"{period.data['FiscalYearStart'][:10]} – {period.data['FiscalYearEnd'][:10]}"),
             ("Parça", data["IndexNumber"]),
             ("Kapsadığı tarihler", f"{data['PeriodCoveredStart'][:10]} – {data['PeriodCoveredEnd'][:10]}"),
             ("Madde numaraları", f"{data['EntryNumberStart']} – {data['EntryNumberEnd']}"),
             ("Satır numaraları", f"{data['LineNumberStart']} – {data['LineNumberEnd']}"),
             ("Borç toplamı", _tl_figure(data["Debit"])), ("Alacak toplamı", _tl_figure(data["Credit"]))]
    body = "<dl>" + "".join(f"<dt>{_e(name)}</dt><dd>{_e(value)}</dd>" for name, value in facts)
    body += f"<dt>SHA-256</dt><dd><code>{_e(data['sha256'])}</code></dd></dl>"
    title = "Yevmiye Defteri ve Büyük Defter Beratı"
    if approved:
        reference = uuid.uuid5(uuid.NAMESPACE_URL, f"gib:{period.pk}:{data['sha256']}")
        approved_at = period.data.get("ApprovedAt")
        shown_at = f"{timezone.localtime(datetime.fromisoformat(approved_at)):%Y-%m-%d %H:%M}" if approved_at else ""
        body += (f'<div class="seal"><strong>Gelir İdaresi Başkanlığı onayı</strong><br>Onay zamanı '
                 f"{_e(shown_at)}<br>Onay numarası <code>{reference}</code></div>")
        title = "GİB Onaylı " + title
    return _page(title, _heading(title, period, part) + body)


@operation("ledger", "GET", "/v1/period/preview")
def preview(call: Call):
    problems = Problems()
    book_id = whole_number(call, "generalBookId", problems)
    preview_type = whole_number(call, "previewType", problems)
    if preview_type is not None and preview_type not in PREVIEW_TYPES:
        problems.add("previewType", "must be 1 (journal), 2 (general ledger), 3 (journal and ledger certificate) "
                                    f"or 4 (tax-authority-approved certificate); got {preview_type}.")
    problems.raise_any()
    settle(call)
    book = document_of(call, BOOK, book_id, "book entry")
    part = document_of(call, PART, book.data["PartId"], "part")
    period = document_of(call, PERIOD, part.data["PeriodId"], "period")
    if preview_type == 4 and period.status != APPROVED:
        raise refused("Validation failed", f"previewType: the period {period.pk} is not approved yet (status "
                                           f"{period.status}); the approved certificate exists once the tax "
                                           f"authority has approved it (60).")
    if preview_type == 1:
        content = _journal(period, part)
    elif preview_type == 2:
        content = _general_ledger(period, part)
    else:
        content = _certificate(period, part, book, approved=preview_type == 4)
    names = {1: "yevmiye", 2: "kebir", 3: "berat", 4: "onayli-berat"}
    response = HttpResponse(content.encode("utf-8"), content_type="text/html; charset=utf-8")
    response["Content-Disposition"] = (f'inline; filename="{names[preview_type]}-{period.pk}-'
                                       f'{part.data["IndexNumber"]}.html"')
    return response
