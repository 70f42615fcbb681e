"""Hostile .xlsx files, built in the tests (issue 28): a workbook openpyxl writes, with its sheet or extra parts
replaced by what an attacker (or a broken exporter) would put there."""

import io
import random
import zipfile

from openpyxl import Workbook
from openpyxl.utils import get_column_letter

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
            _write(archive, name, chunks)
    return out.getvalue()


def _write(archive, name: str, chunks) -> None:
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    with archive.open(info, "w", force_zip64=True) as part:
        for chunk in chunks:
            part.write(chunk)


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


def _replaced(data: bytes, name: str, chunks) -> bytes:
    """data with its part `name` replaced (or added) by chunks."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in source.infolist():
            if item.filename != name:
                archive.writestr(item, source.read(item.filename))
        _write(archive, name, chunks)
    return out.getvalue()


def entities(header=("type", "name"), part=SHEET, megabytes=400) -> bytes:
    """A part declaring nested internal entities (a "billion laughs" kept within expat's own amplification
    guard): a few KB that a resolving parser expands to `megabytes` of text in one cell."""
    letters = "".join(random.Random(2).choice("abcdefghij") for _ in range(1000))
    doctype = (f'<!DOCTYPE worksheet [<!ENTITY a "{letters}"><!ENTITY b "{"&a;" * 1000}">'
               f'<!ENTITY c "{"&b;" * megabytes}">]>').encode()
    head = HEAD.replace(b"?>\n", b"?>\n" + doctype, 1)
    body = header_row(header) + b'<row r="2"><c r="B2" t="inlineStr"><is><t>&c;</t></is></c></row>'
    if part == SHEET:
        return _replaced(build(header=header), SHEET, [head, body, TAIL])
    return _replaced(build(header=header), part, [b'<?xml version="1.0"?>\n', doctype, b"<styleSheet/>"])


def big_styles(header=("type", "name"), size=16 * MB) -> bytes:
    """A styles.xml of `size` bytes of fonts, packed like real XML (openpyxl parses styles whole)."""
    rnd = random.Random(4)

    def chunks():
        yield (b'<?xml version="1.0" encoding="UTF-8"?><styleSheet '
               b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><fonts>')
        for _ in range(size // 310_000):
            yield b"".join(b'<font><name val="%x"/></font>' % rnd.getrandbits(16) for _ in range(10_000))
        yield (b'</fonts><cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
               b"</cellXfs></styleSheet>")
    return _replaced(build(header=header), "xl/styles.xml", chunks())


def big_strings(header=("type", "name"), size=15 * MB) -> bytes:
    """A shared-strings part of `size` bytes of short distinct strings (a million of them), under the limit: the
    header is read from it, then no row."""
    rnd = random.Random(3)
    names = b"".join(b"<si><t>%s</t></si>" % name.encode() for name in header)

    def strings():
        yield (b'<?xml version="1.0" encoding="UTF-8"?><sst '
               b'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' + names)
        for _ in range(size // 200_000):
            yield b"".join(b"<si><t>%x</t></si>" % rnd.getrandbits(16) for _ in range(10_000))
        yield b"</sst>"
    cells = b"".join(b'<c r="%s1" t="s"><v>%d</v></c>' % (chr(ord("A") + index).encode(), index)
                     for index in range(len(header)))
    data = _replaced(build(header=header, sheet=False), SHEET, [HEAD.replace(b"<sheetData>", b""), b"<sheetData>",
                                                                b'<row r="1">' + cells + b"</row>", TAIL])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        types = archive.read("[Content_Types].xml")
    types = types.replace(b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                                       b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
    return _replaced(_replaced(data, "[Content_Types].xml", [types]), "xl/sharedStrings.xml", strings())


def wide(header=("type", "name"), rows=19_999, columns=64) -> bytes:
    """Every row filled with numbers to the last column allowed: the most cells a sheet under the row and column
    limits holds."""
    letters = [get_column_letter(index + 1).encode() for index in range(columns)]

    def chunks():
        for start in range(2, rows + 2, 1000):
            yield b"".join(b'<row r="%d">' % row + b"".join(b'<c r="%s%d"><v>%d</v></c>' % (letter, row, row + index)
                                                            for index, letter in enumerate(letters)) + b"</row>"
                           for row in range(start, min(start + 1000, rows + 2)))
    return build(chunks(), header=header)


def _edited(data: bytes, name: str, edit) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return _replaced(data, name, [edit(archive.read(name))])


def external_links(header=("type", "name"), references=2_000, cells=2_000) -> bytes:
    """One external link's part referenced `references` times from the workbook (openpyxl's default reads the part
    whole once per reference)."""
    rel = b'<externalReference xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" r:id="rId99"/>'
    data = _edited(build(header=header), "xl/workbook.xml", lambda xml: xml.replace(
        b"</sheets>", b"</sheets><externalReferences>" + rel * references + b"</externalReferences>"))
    data = _edited(data, "xl/_rels/workbook.xml.rels", lambda xml: xml.replace(b"</Relationships>", (
        b'<Relationship Id="rId99" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        b'externalLink" Target="externalLinks/externalLink1.xml"/></Relationships>')))
    row = b"".join(b'<cell r="A%d"><v>1</v></cell>' % index for index in range(1, cells + 1))
    return _replaced(data, "xl/externalLinks/externalLink1.xml", [
        b'<externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><externalBook><sheetDataSet>'
        b'<sheetData sheetId="0"><row r="1">' + row + b"</row></sheetData></sheetDataSet></externalBook></externalLink>"])


def renamed_root(header=("type", "name"), overrides=270_000) -> bytes:
    """A 16 MB manifest whose root is not called Types (openpyxl does not look at the root's name)."""
    return _edited(build(header=header), "[Content_Types].xml", lambda xml: xml.replace(b"<Types ", b"<Typez ").replace(
        b"</Types>", b"".join(b'<Override PartName="/p%d" ContentType="application/x%d"/>' % (index, index % 97)
                              for index in range(overrides)) + b"</Typez>"))


def wrapped_rows(header=("type", "name"), blocks=8) -> bytes:
    """Rows each wrapped in an element of their own, with 1.9 MB of empty elements between them (what lies
    between wrapped rows is never the rows' siblings)."""
    rnd = random.Random(5)
    filler = b"".join(b'<a v="%08x"/>' % rnd.getrandbits(32) for _ in range(1_900_000 // 16))  # packs ~3 times
    return build([b'<w><row r="%d"><c r="A%d"><v>1</v></c></row></w>' % (row, row) + filler
                  for row in range(2, blocks + 2)], header=header)


def utf32_part(header=("type", "name")) -> bytes:
    """Styles in UTF-32, which expat does not read and lxml does: with entities in them."""
    styles = ('<?xml version="1.0" encoding="UTF-32"?><!DOCTYPE s [<!ENTITY a "aaaaaaaaaa">]>'
              '<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"/>').encode("utf-32")
    return _replaced(build(header=header), "xl/styles.xml", [styles])


def long_prolog(header=("type", "name"), size=60 * MB) -> bytes:
    """A sheet whose first element comes after `size` bytes of comment (expat's time grows with its square)."""
    declaration, rest = HEAD.split(b"\n", 1)

    def chunks():
        yield declaration + b"\n<!--"
        text = bytes(random.Random(size).choices(b"abcdefghij ", k=MB))
        for _ in range(size // MB):
            yield text
        yield b"-->" + rest + header_row(header) + TAIL
    return _replaced(build(header=header), SHEET, chunks())
