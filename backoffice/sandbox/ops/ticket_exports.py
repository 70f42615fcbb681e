"""The Excel exports of event and passenger tickets (document 2): their filters (ids, status, summary,
archived and the date ranges of each kind), their columns and the optional summary workbook. Starting,
history, download and the 24-hour lifetime are shared (exports.py).
"""

from ..api import Call
from ..models import Document
from . import exports
from .common import BOOLEAN, INTEGER, STRING, array, field, iso, moment, read_body
from .statuses import APPROVED, CANCELLED, DRAFT, ERROR, QUEUED, STATUS_NAMES
from .ticket_rules import customer_name, settle, totals

EXPORT_STATUSES = (DRAFT, QUEUED, ERROR, APPROVED, CANCELLED)

EXPORT_DATES = {
    # filter pair -> what it ranges over (created is the document's own column)
    "event_ticket": {"start": "created", "execution": "ticketDate", "event": "eventTime"},
    "passenger_ticket": {"start": "created", "execution": "ticketDate", "departure": "departureDate"},
}


def _date_names(prefix: str) -> tuple[str, str]:
    return ("startDate", "endDate") if prefix == "start" else (f"{prefix}StartDate", f"{prefix}EndDate")


# Document 2, 4.1 and 4.2: the export bodies (generateSummaryReport for event tickets, isArchived for passenger ones).
EXPORT_MODELS = {
    kind: {"ids": array(STRING), "status": INTEGER, flag: BOOLEAN,
           **{name: STRING for prefix in EXPORT_DATES[kind] for name in _date_names(prefix)}}
    for kind, flag in (("event_ticket", "generateSummaryReport"), ("passenger_ticket", "isArchived"))
}


def _export_filters(kind: str, body) -> dict:
    body, problems, filters = exports.filters_of(body, EXPORT_MODELS[kind], EXPORT_STATUSES)
    for flag in ("generateSummaryReport", "isArchived"):  # the kind's own flag, a boolean: the model binds it
        filters[flag] = field(body, flag) is True
    for prefix in EXPORT_DATES[kind]:
        start, end = _date_names(prefix)
        exports.date_filter(body, start, problems, filters, end=False)
        exports.date_filter(body, end, problems, filters, end=True)
    problems.raise_any()
    return filters


def _matches(kind: str, doc: Document, filters: dict) -> bool:
    for prefix, column in EXPORT_DATES[kind].items():
        start, end = (filters.get(name) for name in _date_names(prefix))
        if start is None and end is None:
            continue
        value = doc.created if column == "created" else moment(doc.data.get(column))
        if not exports.within(value, start, end):
            return False
    return True


def export_tickets(call: Call, kind: str, filters: dict) -> list[Document]:
    if filters.get("isArchived"):
        return []  # the sandbox archives nothing
    tickets = Document.objects.filter(customer=call.customer, kind=kind).order_by("created", "pk")
    if filters.get("ids"):
        tickets = tickets.filter(key__in=filters["ids"])
    if "status" in filters:
        tickets = tickets.filter(status=filters["status"])
    return [doc for doc in tickets.iterator(chunk_size=1000) if _matches(kind, doc, filters)]


EXPORT_COLUMNS = {
    "common": [("ETTN", lambda d, v: d.key), ("Bilet No", lambda d, v: d.number),
               ("Durum", lambda d, v: d.status), ("Bilet Tarihi", lambda d, v: v.get("ticketDate")),
               ("Oluşturma Tarihi", lambda d, v: iso(d.created)), ("Müşteri", lambda d, v: customer_name(v)),
               ("Kimlik", lambda d, v: v.get("identifier")), ("Ödeme Tipi", lambda d, v: v.get("paymentType")),
               ("Para Birimi", lambda d, v: v.get("currencyCode"))],
    "event_ticket": [("Etkinlik", "eventName"), ("Etkinlik Zamanı", "eventTime"), ("Yer", "eventLocation"),
                     ("İl Kodu", "eventCityId"), ("Belediye", "eventMunicipality"), ("Koltuk", "seatNumber"),
                     ("Organizatör VKN/TCKN", "eventOrganizerVknTckn")],
    "passenger_ticket": [("Plaka", "vehiclePlate"), ("Sefer No", "expeditionNumber"),
                         ("Sefer Zamanı", "expeditionTime"), ("Kalkış", "departureDate"),
                         ("Kalkış Yeri", "departureLocation"), ("Varış", "destination"), ("Koltuk", "seatNumber")],
}
AMOUNT_COLUMNS = (("Tutar", "totalAmount"), ("KDV", "totalVat"), ("Ödenecek", "payableAmount"))
FILE_NAMES = {"event_ticket": "etkinlik-biletleri", "passenger_ticket": "yolcu-biletleri"}


def _summary(by_status: dict, count: int) -> list[list]:
    """The rows of the summary workbook: one per status (count and amounts), then the totals."""
    rows = [["Durum", "Kod", "Adet", *[name for name, _ in AMOUNT_COLUMNS]]]
    for status in sorted(by_status):
        number, *amounts = by_status[status]
        rows.append([STATUS_NAMES.get(status, str(status)), status, number, *[round(a, 2) for a in amounts]])
    rows.append(["Toplam", None, count, *[round(sum(t[i] for t in by_status.values()), 2) for i in (1, 2, 3)]])
    return rows


def export_zip(kind: str, docs: list[Document], summary: bool) -> bytes:
    kind_columns = EXPORT_COLUMNS[kind]
    rows = [[name for name, _ in EXPORT_COLUMNS["common"]] + [name for name, _ in kind_columns] +
            [name for name, _ in AMOUNT_COLUMNS]]
    by_status: dict[int, list] = {}
    for doc in docs:
        data, amounts = doc.data, totals(doc.data)
        rows.append([column(doc, data) for _, column in EXPORT_COLUMNS["common"]] +
                    [data.get(name) for _, name in kind_columns] + [amounts[name] for _, name in AMOUNT_COLUMNS])
        tally = by_status.setdefault(doc.status, [0, 0.0, 0.0, 0.0])
        tally[0] += 1
        for index, (_, name) in enumerate(AMOUNT_COLUMNS, start=1):
            tally[index] += amounts[name]
    files = {f"{FILE_NAMES[kind]}.xlsx": exports.xlsx({"Biletler": rows})}
    if summary:
        files["ozet-rapor.xlsx"] = exports.xlsx({"Özet": _summary(by_status, len(docs))})
    return exports.archive(files)


def export_start(call: Call, kind: str):
    filters = _export_filters(kind, read_body(call))
    settle(call)

    def build():
        docs = export_tickets(call, kind, filters)
        return export_zip(kind, docs, filters["generateSummaryReport"]), len(docs)

    return exports.start(call, kind, FILE_NAMES[kind], filters, build)

