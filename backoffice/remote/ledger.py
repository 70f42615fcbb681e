"""Electronic ledger service (document 3, sections 2.8, 3.2 and 4.4): periods, their parts and book entries,
the four previews of a part, the certificates sent to the tax authority, and the upload of a journal.

Property names are capitalised in this service; field() reads any capitalisation and envelope() both
spellings, so callers see camelCase envelopes with the platform's own item dicts. Paths not shown by the
documents are defaults of the endpoint table (`ledger.*`). The upload is a POST: after a 5xx or a timeout the
caller looks the period up with find_period() before sending again; the body is streamed from the ZIP on
disk (a ledger ZIP may be 150 MB), never held in memory.
"""

import io
import json
import os
import uuid

from .common import MAX_PAGE_SIZE, Client, envelope, field, items_of, list_params, to_int, walk_pages
from .errors import RemoteError

UPLOAD_PART = "Files"  # document 3; one public client sends "ZipFile" (a setting of the caller)
PREVIEW_TYPES = (1, 2, 3, 4)  # journal, general ledger, journal and ledger certificate, approved certificate


def day(value) -> str:
    """The yyyy-mm-dd of a moment of this service ("2025-01-31T00:00:00"), or ""."""
    return str(value or "")[:10]


class MultipartStream(io.RawIOBase):
    """A multipart/form-data body read from a file as it is sent (requests streams a file-like body that
    knows its length): the text fields, then the file part. Seekable to 0, so a call sent again after a
    renewed token sends the whole body again."""

    def __init__(self, fields: dict, part: str, filename: str, fileobj, content_type="application/zip"):
        super().__init__()
        self.boundary = uuid.uuid4().hex
        head = b"".join(
            f'--{self.boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items())
        head += (f'--{self.boundary}\r\nContent-Disposition: form-data; name="{part}"; filename="{filename}"\r\n'
                 f"Content-Type: {content_type}\r\n\r\n").encode()
        self._pieces = [head, fileobj, f"\r\n--{self.boundary}--\r\n".encode()]
        self._file_size = os.fstat(fileobj.fileno()).st_size
        self._described = {**fields, part: f"<{filename}, {self._file_size} bytes>"}
        self.seek(0)

    @property
    def content_type(self) -> str:
        return f"multipart/form-data; boundary={self.boundary}"

    def __len__(self):
        return len(self._pieces[0]) + self._file_size + len(self._pieces[2])

    def __str__(self):  # what the audit keeps: the fields and the file's name and size, never its bytes
        return "multipart: " + ", ".join(f"{name}={value}" for name, value in self._described.items())

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, offset, whence=io.SEEK_SET):
        if offset != 0 or whence != io.SEEK_SET:
            raise io.UnsupportedOperation("only a rewind to the start")
        self._index, self._offset = 0, 0
        self._pieces[1].seek(0)
        return 0

    def tell(self):  # requests asks where a seekable body stands to count what is left
        return 0 if self._index == 0 and self._offset == 0 else len(self)

    def read(self, size=-1):
        size = len(self) if size is None or size < 0 else size
        out = bytearray()
        while len(out) < size and self._index < 3:
            piece = self._pieces[self._index]
            if self._index == 1:
                chunk = piece.read(size - len(out))
            else:
                chunk = piece[self._offset:self._offset + size - len(out)]
                self._offset += len(chunk)
            if chunk:
                out += chunk
            else:
                self._index, self._offset = self._index + 1, 0
        return bytes(out)


class LedgerClient(Client):
    # --- lists ---------------------------------------------------------------------------------------
    def periods(self, page_index: int = 1, page_size: int = MAX_PAGE_SIZE, *, sorted_column: str | None = None,
                is_desc: bool | None = True) -> dict:
        """One page of periods; isDesc with no column: newest created first (document 3, 4.4)."""
        params = list_params(page_index, page_size, sorted_column=sorted_column, is_desc=is_desc)
        return envelope(self._call("ledger.list_periods", params=params))

    def period_pages(self, *, page_size: int = MAX_PAGE_SIZE):
        return walk_pages(lambda index: self.periods(index, page_size))

    def parts(self, period_id, page_index: int = 1, page_size: int = MAX_PAGE_SIZE) -> dict:
        params = {"periodId": to_int(period_id), **list_params(page_index, page_size, is_desc=False)}
        return envelope(self._call("ledger.list_parts", params=params))

    def part_pages(self, period_id, *, page_size: int = MAX_PAGE_SIZE):
        return walk_pages(lambda index: self.parts(period_id, index, page_size))

    def book_entries(self, part_id) -> list:
        """The book entries of a part (not paged; an envelope is read too)."""
        return items_of(self._call("ledger.book_entries", params={"id": to_int(part_id)}), "items")

    def find_period(self, start: str, end: str, *, exclude=()) -> dict | None:
        """The newest period of this range (yyyy-mm-dd) whose id is not in `exclude`: the upload whose answer
        was lost. The whole list is read (a company has a dozen periods a year)."""
        excluded = {str(value) for value in exclude}
        for page in self.period_pages():
            for item in page["items"]:
                if (day(field(item, "FiscalYearStart")), day(field(item, "FiscalYearEnd"))) == (start, end) and \
                        str(field(item, "Id")) not in excluded:
                    return item
        return None

    def statuses(self, targets) -> list[dict]:
        """[{id, status, message}] of these periods (ids, or the certificate calls' {periodId, isTryAgain}),
        read from the period list: the service has no single-period read (core.actions asks this before a
        submission is sent again)."""
        wanted = {str(t["periodId"] if isinstance(t, dict) else t) for t in targets}
        found = []
        for page in self.period_pages():
            for item in page["items"]:
                if str(field(item, "Id")) in wanted:
                    task = field(item, "Task") or {}
                    found.append({"id": str(field(item, "Id")), "status": field(item, "Status"),
                                  "message": field(task, "Message") or ""})
        return found

    # --- one part ------------------------------------------------------------------------------------
    def preview(self, general_book_id, preview_type: int) -> tuple[bytes, str]:
        """The preview of a journal or ledger entry of a part: (content, content type). Document 3 calls the
        answer "a null body plus the preview content": a JSON answer that carries the content in a field is
        read too."""
        if int(preview_type) not in PREVIEW_TYPES:
            raise ValueError(f"previewType is one of {PREVIEW_TYPES}")
        content, content_type = self._call("ledger.preview", raw=True, params={
            "generalBookId": to_int(general_book_id), "previewType": int(preview_type)})
        if "json" in content_type.lower():
            try:
                data = json.loads(content or b"null")
            except ValueError:
                data = None
            inner = field(data, "content", "html", "data", "preview")
            if not isinstance(inner, str) or not inner:
                raise RemoteError("ledger.preview: the platform sent no preview content", permanent=True,
                                  operation="ledger.preview")
            return inner.encode("utf-8"), "text/html; charset=utf-8"
        return content, content_type

    # --- state changes -------------------------------------------------------------------------------
    def send_certificates(self, period_id, is_try_again: bool, *, with_parameters: bool = True) -> None:
        """Send the period's certificates to the tax authority; is_try_again for a period whose earlier
        submission failed. One public client sends no parameters (a setting of the caller)."""
        params = {"periodId": to_int(period_id), "isTryAgain": "true" if is_try_again else "false"} \
            if with_parameters else None
        self._call("ledger.send_certificates", params=params)

    def upload(self, *, start: str, end: str, split_size: int, time_stamp: bool, without_tax_detail: bool,
               archive, filename: str, part: str = UPLOAD_PART) -> dict:
        """Upload a journal: `archive` an open binary file (the ZIP of the journal text), streamed. Returns the
        period the platform made (2.8)."""
        body = MultipartStream({"StartDate": start, "EndDate": end, "SplitSize": int(split_size),
                                "TimeStamp": "true" if time_stamp else "false",
                                "WithoutTaxDetail": "true" if without_tax_detail else "false"},
                               part, filename, archive)
        answer = self._call("ledger.upload", data=body, headers={"Content-Type": body.content_type})
        if field(answer, "Id") in (None, ""):
            raise RemoteError("ledger.upload: the platform's answer names no period", permanent=False,
                              operation="ledger.upload")
        return answer
