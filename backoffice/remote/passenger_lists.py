"""Passenger lists (document 2, section 4.3): the collective document of one expedition, built by the
platform from the passenger tickets of that expedition.

save() creates (isNewList true) or updates (isNewList false or empty) the list of the expedition given
in the body; query() pages through the lists; export, export history, download and the by-date report
come from ExportsAndReports (endpoint-table prefix "passenger_list"). Paths other than the report's are
defaults of the endpoint table, to be confirmed with the provider.
"""

import datetime

from .common import MAX_PAGE_SIZE, envelope, field, list_params, walk_pages
from .exports import ExportsAndReports


class PassengerListClient(ExportsAndReports):
    prefix = "passenger_list"

    def save(self, payload: dict) -> dict:
        """Create or update a list: {"ettn", "passengerListNumber"}.

        A POST: a timeout after sending raises MaybeSent; look the list up with find() before sending a
        create again. A refusal (no matching ticket, a list already reported, ...) is a RemoteError with
        the platform's title and detail.
        """
        answer = self._call("save", json=payload)
        ettn, number = field(answer, "ettn", "id"), field(answer, "passengerListNumber")
        if not ettn:
            raise ValueError(f"passenger_list.save: the platform's answer has no ettn: {answer!r}")
        return {"ettn": str(ettn), "passengerListNumber": str(number or "")}

    def query(self, page_index: int = 1, page_size: int = MAX_PAGE_SIZE) -> dict:
        """One page of lists: the envelope with items {id, passengerListNumber, expeditionNumber,
        vehiclePlate, expeditionTime, createDate} (document 2, 2.5). At most 500 per page."""
        page = envelope(self._call("query", params=list_params(page_index, page_size)))
        page["items"] = [self._item(item) for item in page["items"]]
        return page

    def query_pages(self, page_size: int = MAX_PAGE_SIZE, start: int = 1):
        """Every page of lists from page `start` on, one envelope at a time."""
        return walk_pages(lambda page_index: self.query(page_index, page_size), start)

    def find(self, *, expedition_number: str, expedition_time: str, vehicle_plate: str | None = None,
             exclude=()) -> dict | None:
        """The newest list of this expedition (and plate, when given) whose id is not in `exclude`, or None:
        how a create that timed out after sending is reconciled. expedition_time is compared as the
        platform wrote it and as an instant, whichever matches."""
        wanted = _moment_key(expedition_time)
        plate = _plate(vehicle_plate) if vehicle_plate is not None else None
        found = None
        for page in self.query_pages():
            for item in page["items"]:
                if item["id"] in exclude or str(item.get("expeditionNumber") or "") != expedition_number:
                    continue
                if _moment_key(item.get("expeditionTime")) != wanted:
                    continue
                if plate is not None and _plate(item.get("vehiclePlate")) != plate:
                    continue
                found = item  # keep walking: the newest one wins
        return found

    @staticmethod
    def _item(item) -> dict:
        item = dict(item) if isinstance(item, dict) else {}
        item["id"] = str(field(item, "id", "ettn") or "")
        item["passengerListNumber"] = str(field(item, "passengerListNumber") or "")
        return item


def _moment_key(value):
    """An expedition time as an instant (aware: in UTC), so that +03:00 and Z spellings compare equal."""
    if isinstance(value, datetime.datetime):
        moment = value
    else:
        try:
            moment = datetime.datetime.fromisoformat(str(value or "").strip())  # Z included (3.11)
        except ValueError:
            return str(value or "").strip()
    if moment.tzinfo is not None:
        moment = moment.astimezone(datetime.UTC)
    return moment.replace(microsecond=0).isoformat()


def _plate(value) -> str:
    """Plates compare without spaces or dashes, in capitals (34 ABC 123 = 34abc-123)."""
    return "".join(ch for ch in str(value or "") if ch.isalnum()).upper()
