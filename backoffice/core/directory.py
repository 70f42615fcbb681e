"""The platform's directories of registered users (e-invoice, e-dispatch): a ZIP of one JSON array of a million
entries and more, which may start with a byte-order mark, read item by item (ijson) and upserted in chunks. Each
domain keeps its own table and says how an item becomes a row."""

import io
import zipfile
from collections.abc import Callable

import ijson
from django.utils import timezone


class _SkipBom(io.RawIOBase):
    """A byte stream without a leading UTF-8 byte-order mark."""

    def __init__(self, stream):
        self.stream, self.first = stream, True

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.stream.read(len(buffer))
        if self.first:
            self.first = False
            if data.startswith(b"\xef\xbb\xbf"):
                data = data[3:] + self.stream.read(3)
        buffer[:len(data)] = data
        return len(data)


def directory_store(archive, *, model, build: Callable, unique_fields, update_fields, chunk=5000) -> int:
    """Upsert every item of the ZIP's JSON array into `model` (build(item, seen_at) -> an unsaved row, or None to
    skip the item) and drop the rows the list no longer has. archive: the ZIP's bytes or a binary file.
    Returns how many items were stored. A list with no usable item leaves the table as it was."""
    started = timezone.now()
    count = 0
    source = io.BytesIO(archive) if isinstance(archive, (bytes, bytearray)) else archive
    with zipfile.ZipFile(source) as zipped:
        member = next((name for name in zipped.namelist() if name.lower().endswith(".json")), None)
        if member is None:
            raise ValueError("the directory ZIP holds no JSON file")
        with zipped.open(member) as raw:
            rows = []
            # use_float: plain floats instead of Decimals where an item has a number (faster; none is money)
            for item in ijson.items(io.BufferedReader(_SkipBom(raw), 1 << 16), "item", use_float=True):
                row = build(item, started)
                if row is None:
                    continue
                rows.append(row)
                if len(rows) >= chunk:
                    count += _upsert(model, rows, unique_fields, update_fields)
                    rows = []
            count += _upsert(model, rows, unique_fields, update_fields)
    if count:
        model.objects.filter(seen_at__lt=started).delete()
    return count


def _upsert(model, rows, unique_fields, update_fields) -> int:
    if rows:
        model.objects.bulk_create(rows, update_conflicts=True, unique_fields=list(unique_fields),
                                  update_fields=list(update_fields))
    return len(rows)
