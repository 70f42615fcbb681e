"""Hostile .xlsx files, built in the tests (issue 28): a workbook openpyxl writes, with its sheet or extra parts
replaced by what an attacker (or a broken exporter) would put there."""

import io
import random
import zipfile

from openpyxl import Workbook

SHEET = "xl/worksheets/sheet1.xml"
HEAD = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>')
TAIL = b"</sheetData></worksheet>"
MB = 1024 ** 2


def text_cell(column: int, row: int, text: str) -> bytes:
    letter = chr(ord("A") + column) if column < 26 else "A" + chr(ord("A") + column - 26)
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;").replace("\r", "&#13;")
    return f'<c r="{letter}{row}" t="inlineStr"><is><t>{escaped}</t></is></c>'.encode()


def header_row(header) -> bytes:
    return b'<row r="1">' + b"".join(text_cell(index, 1, name) for index, name in enumerate(header)) + b"</row>"


def build(body_chunks=(), *, header=("type", "name"), extra=(), sheet=True) -> bytes:
    """A workbook whose first sheet is the header then body_chunks (bytes, streamed: no <dimension>), plus the
    extra parts given as (name, chunks)."""
    base = io.BytesIO()
    Workbook().save(base)
    out = io.BytesIO()
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in source.infolist():
            if item.filename != SHEET:
                archive.writestr(item, source.read(item.filename))
        if sheet:
            with archive.open(SHEET, "w", force_zip64=True) as part:
                part.write(HEAD + header_row(header))
                for chunk in body_chunks:
                    part.write(chunk)
                part.write(TAIL)
        for name, chunks in extra:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w", force_zip64=True) as part:
                for chunk in chunks:
                    part.write(chunk)
    return out.getvalue()


def _repeat(block: bytes, size: int):
    for _ in range(size // len(block)):
        yield block


def ratio_bomb(header=("type", "name"), size=60 * MB) -> bytes:
    """A sheet of `size` bytes of empty rows packed about 1,000 times: a ~60 KB file."""
    return build(_repeat(b"<row/>" * (MB // 6), size), header=header)


def loose_data(size: int, seed=7):
    """Bytes that pack about 40 times (random text in zeros): under any ratio limit, big once unpacked."""
    rnd = random.Random(seed)
    for _ in range(size // MB):
        noise = rnd.randbytes(12 * 1024).hex().encode()
        yield noise + b"\0" * (MB - len(noise))


def total_bomb(header=("type", "name"), parts=7, size=15 * MB) -> bytes:
    """Parts each under the per-part limit and packed like real XML, together past the total."""
    return build(header=header, extra=[(f"xl/media/pad{index}.bin", loose_data(size, index))
                                       for index in range(parts)])


def empty_rows(header=("type", "name"), rows=2_100_000) -> bytes:
    """A sheet without <dimension> holding `rows` empty rows after its header."""
    def chunks():
        batch = []
        for number in range(2, rows + 2):
            batch.append(b'<row r="%d" spans="1:2"/>' % number)
            if len(batch) == 50_000:
                yield b"".join(batch)
                batch = []
        yield b"".join(batch)
    return build(chunks(), header=header)


def far_row(header=("type", "name"), number=20_000_000) -> bytes:
    """The header, then one row numbered far down (every row between is an empty row)."""
    return build([b'<row r="%d"><c r="A%d"><v>1</v></c></row>' % (number, number)], header=header)


def formula_text(header=("type", "name"), texts=('=HYPERLINK("http://example.invalid","x")', "+1+1", "-2+3",
                                                 "@SUM(A1)", "\tTAB", "\rCR")) -> bytes:
    """Rows whose text (and one real formula) would run in Excel if written back as it is."""
    rows = [b'<row r="%d">' % (index + 2) + text_cell(0, index + 2, text) + text_cell(1, index + 2, "ok") + b"</row>"
            for index, text in enumerate(texts)]
    rows.append(b'<row r="%d"><c r="A%d"><f>1+1</f><v>2</v></c>' % (len(texts) + 2, len(texts) + 2)
                + text_cell(1, len(texts) + 2, "=1+1") + b"</row>")
    return build(rows, header=header)


def traversal(name="../../evil.xml", header=("type", "name")) -> bytes:
    """A workbook carrying a part whose name climbs out of the archive."""
    return build([], header=header, extra=[(name, [b"<x/>"])])
