"""Dispatch-note service, the Excel exports of outgoing and incoming notes (document 3, 2.9 and 4.5): start,
history and download over exports.py. The filters are the same for both: ids, status (any of the status list),
isArchived (true matches nothing: the sandbox archives nothing), startDate / endDate (outgoing: the send date, when
the note was last queued, so a note never sent matches no such range; incoming: the creation), issueStartDate /
issueEndDate (the issue date) and targetVknTckn (outgoing: the receiver; incoming: the sender, the other party).
"""

from ..api import Call
from ..models import Document
from . import dispatch_rules as rules
from . import exports
from .common import BOOLEAN, INTEGER, STRING, array, blank, iso, moment, read_body
from .dispatch import BASE, INBOX, NOTE, note_key
from .dispatch_life import settle
from .dispatch_rules import STATUSES

INBOX_BASE = "/v1/inboxdespatch"
EXPORT_MODEL = {"ids": array(STRING), "status": INTEGER, "isArchived": BOOLEAN, "startDate": STRING,
                "endDate": STRING, "issueStartDate": STRING, "issueEndDate": STRING, "targetVknTckn": STRING}


def _status_name(doc) -> str:
    return rules.TURKISH_STATUS_NAMES.get(doc.status, "")


EXPORT_COLUMNS = (
    ("ETTN", lambda doc: doc.key), ("İrsaliye No", lambda doc: doc.number), ("Durum", lambda doc: doc.status),
    ("Durum Açıklaması", _status_name),
    ("İrsaliye Tarihi", lambda doc: doc.data.get("issueDate")),
    ("Gönderim Tarihi", lambda doc: doc.data.get("sentDate")), ("Oluşturma Tarihi", lambda doc: iso(doc.created)),
    ("Alıcı VKN/TCKN", lambda doc: doc.data["target"]["vknTckn"]),
    ("Alıcı Unvanı", lambda doc: doc.data["target"]["title"]),
    ("Yerel Referans", lambda doc: doc.data.get("localReferenceId")), ("Mesaj", lambda doc: doc.data.get("message")),
)
INBOX_COLUMNS = (
    ("ETTN", lambda doc: doc.key), ("İrsaliye No", lambda doc: doc.number), ("Durum", lambda doc: doc.status),
    ("Durum Açıklaması", _status_name),
    ("İrsaliye Tarihi", lambda doc: doc.data.get("issueDate")), ("Oluşturma Tarihi", lambda doc: iso(doc.created)),
    ("Gönderen VKN/TCKN", lambda doc: doc.data["sender"]["vknTckn"]),
    ("Gönderen Unvanı", lambda doc: doc.data["sender"]["title"]),
    ("Yanıt No", lambda doc: (doc.data.get("reply") or {}).get("number")),
)
FILE_STEM, INBOX_FILE_STEM = "giden-irsaliyeler", "gelen-irsaliyeler"


def _export_filters(body) -> dict:
    body, problems, filters = exports.filters_of(body, EXPORT_MODEL, STATUSES)
    filters["isArchived"] = body.get("isArchived") is True
    for name in ("startDate", "issueStartDate"):
        exports.date_filter(body, name, problems, filters, end=False)
    for name in ("endDate", "issueEndDate"):
        exports.date_filter(body, name, problems, filters, end=True)
    if not blank(body.get("targetVknTckn")):
        filters["targetVknTckn"] = body["targetVknTckn"].strip()
    problems.raise_any()
    return filters


def _exported(call: Call, kind: str, filters: dict) -> list[Document]:
    if filters["isArchived"]:
        return []  # the sandbox archives nothing
    notes = Document.objects.filter(customer=call.customer, kind=kind).defer("blob").order_by("created", "pk")
    if filters.get("ids"):
        notes = notes.filter(key__in=[note_key(value) for value in filters["ids"]])
    if "status" in filters:
        notes = notes.filter(status=filters["status"])
    if "targetVknTckn" in filters:
        party = "data__target__vknTckn" if kind == NOTE else "data__sender__vknTckn"
        notes = notes.filter(**{party: filters["targetVknTckn"]})
    chosen = []
    for doc in notes.iterator(chunk_size=1000):
        ranged = moment(doc.data.get("sentDate")) if kind == NOTE else doc.created
        issued = moment(doc.data.get("issueDate"))
        if exports.within(ranged, filters.get("startDate"), filters.get("endDate")) and \
                exports.within(issued, filters.get("issueStartDate"), filters.get("issueEndDate")):
            chosen.append(doc)
    return chosen


def _start(call: Call, kind: str, columns: tuple, stem: str, sheet: str):
    filters = _export_filters(read_body(call))
    settle(call)

    def build():
        docs = _exported(call, kind, filters)
        rows = [[name for name, _ in columns]] + [[column(doc) for _, column in columns] for doc in docs]
        return exports.archive({f"{stem}.xlsx": exports.xlsx({sheet: rows})}), len(docs)

    return exports.start(call, kind, stem, filters, build)


# --- the operations of outgoing and incoming notes ------------------------------------------------------------------

exports.routes("dispatch", BASE, NOTE, lambda call: _start(call, NOTE, EXPORT_COLUMNS, FILE_STEM, "İrsaliyeler"))
exports.routes("dispatch", INBOX_BASE, INBOX, lambda call: _start(call, INBOX, INBOX_COLUMNS, INBOX_FILE_STEM,
                                                                  "Gelen İrsaliyeler"))
