"""Excel export, export history, download and by-date report: the same four operations for every document
family that has them (event and passenger tickets, passenger lists; document 2, sections 4.1 to 4.3).

A family's client subclasses ExportsAndReports and names its endpoint-table prefix.
"""

import datetime

from .common import MAX_PAGE_SIZE, Client, check_page, envelope, field, items_of, walk_pages


class ExportsAndReports(Client):
    """Export, export history, download and by-date report of one document family.

    prefix is the endpoint-table prefix (event_ticket, passenger_ticket, passenger_list): a class
    attribute of a family's client, or given when built; separator goes between it and the operation
    (the dispatch service's exports are dispatch.outbox_export, ...).
    """

    prefix = ""
    separator = "."

    def __init__(self, transport, prefix: str | None = None):
        super().__init__(transport)
        self.prefix = prefix or self.prefix
        if not self.prefix:
            raise ValueError("an endpoint-table prefix is needed")

    def _call(self, operation, **kwargs):
        return self.transport.call(f"{self.prefix}{self.separator}{operation}", **kwargs)

    def export(self, filters: dict) -> str:
        """Start an Excel export (filters of 4.1 / 4.2 / 4.3, platform names); returns its exportId.

        The ZIP appears in export_history() once ready and can be downloaded for 24 hours.
        """
        answer = self._call("export", json=filters or {})
        export_id = answer if not isinstance(answer, dict) else field(answer, "exportId", "id")
        if not export_id:
            raise ValueError(f"{self.prefix}.export: the platform's answer has no exportId: {answer!r}")
        return str(export_id)

    def export_history(self) -> list[dict]:
        """[{"exportId", "createdDate", "fileName"}], as the platform lists them."""
        return [{"exportId": str(field(item, "exportId", "id") or ""),
                 "createdDate": field(item, "createdDate", "createDate"),
                 "fileName": field(item, "fileName") or ""} for item in items_of(self._call("export_history"))]

    def export_download(self, export_id) -> bytes:
        """The export's ZIP (the platform refuses once its 24 hours are over: RemoteError, status 410/404). An
        Error in a 200 answer where the ZIP was expected is a refusal too (the transport raises it, with the
        platform's text), never kept as the file."""
        content, _content_type = self._document("export_download", path_params={"exportId": str(export_id)})
        return content

    def report(self, report_date: datetime.date, page_index: int, page_size: int = MAX_PAGE_SIZE) -> dict:
        """One page of the by-date report: the envelope with items of 2.5 (no records: items [], totalCount 0)."""
        check_page(page_index, page_size)
        day = report_date.isoformat() if isinstance(report_date, datetime.date) else str(report_date)
        answer = self._call("report", path_params={"reportDate": day[:10]},
                            params={"pageIndex": page_index, "pageSize": page_size})
        return envelope(answer)

    def report_pages(self, report_date: datetime.date, page_size: int = MAX_PAGE_SIZE, start: int = 1):
        """Every page of a day's report from page `start` on, one envelope at a time."""
        return walk_pages(lambda page_index: self.report(report_date, page_index, page_size), start)
