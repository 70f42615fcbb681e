"""Deterministic fake data: the same customer and id always give the same answer."""

import hashlib
import uuid
from xml.sax.saxutils import escape
from datetime import datetime, timedelta, timezone

# Invoice status codes (document 4); approved is the most common outcome.
INVOICE_STATUSES = (0, 20, 30, 40, 50, 60, 60, 60, 60, 80, 90)
EARCHIVE_STATUSES = (0, 20, 30, 40, 60, 60, 60, 60, 100)


def seed(customer, *parts) -> int:
    text = ":".join([str(customer.customer_unique_id), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def uuid_for(customer, *parts) -> str:
    return str(uuid.uuid5(customer.customer_unique_id, ":".join(map(str, parts))))


def pick(customer, choices, *parts):
    return choices[seed(customer, *parts) % len(choices)]


def document_number(prefix: str, year: int, counter: int) -> str:
    """16 characters: 3-character prefix, year, 9-digit counter (document 4)."""
    return f"{prefix}{year}{counter:09d}"


def moment(customer, *parts, base=datetime(2025, 1, 1, tzinfo=timezone.utc), days=365) -> datetime:
    return base + timedelta(seconds=seed(customer, *parts) % (days * 86400))


def pdf_bytes(text: str) -> bytes:
    """A small valid one-page PDF showing `text` (ASCII)."""
    text = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return pdf_page(f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("ascii", "replace"))


TURKISH_ONLY = str.maketrans("şŞğĞıİ", "sSgGiI")  # letters Helvetica's WinAnsiEncoding lacks
PDF_LINES = 40


def text_pdf(head: list[str], rows: list[str], tail: list[str] = ()) -> bytes:
    """A one-page PDF 1.4 of lines of text in Helvetica: the head, the first PDF_LINES rows (and how many more),
    the tail. Turkish letters outside WinAnsiEncoding are written without their marks."""
    texts = head + rows[:PDF_LINES] + ([f"... {len(rows) - PDF_LINES} satir daha"] if len(rows) > PDF_LINES else [])
    shown = []
    for text in texts + list(tail):
        encoded = text.translate(TURKISH_ONLY).encode("cp1252", "replace")
        shown.append(b"(%s) Tj T*" % encoded.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)"))
    return pdf_page(b"BT /F1 10 Tf 14 TL 50 800 Td " + b" ".join(shown) + b" ET", b" /Encoding /WinAnsiEncoding")


def pdf_page(stream: bytes, font_encoding: bytes = b"") -> bytes:
    """A valid one-page A4 PDF of a content stream in Helvetica (font_encoding e.g. b" /Encoding /WinAnsiEncoding")."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica%s >>" % font_encoding,
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def ubl_invoice(document_id: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"'
        ' xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">'
        "<cbc:UBLVersionID>2.1</cbc:UBLVersionID><cbc:CustomizationID>TR1.2</cbc:CustomizationID>"
        f"<cbc:ProfileID>TEMELFATURA</cbc:ProfileID><cbc:UUID>{escape(document_id)}</cbc:UUID>"
        "</Invoice>\n"
    ).encode()
