"""The PDF, HTML, UBL and ZIP of every dispatch document of the sandbox (an outgoing note, an incoming note, our
reply, a receiver's reply to our note), drawn from its stored UBL in the standard layout or the customer's
(isStandartXslt), the PDF and HTML under the path with and without the {isStandartXslt} segment (the facts file:
public clients differ)."""

from ..api import Call, operation
from . import dispatch_ubl as ubl
from . import exports
from .common import wrapped
from .dispatch import standard
from .dispatch_life import settle


def stored_xml(call: Call, doc) -> bytes:
    return bytes(doc.blob)


def drawn_documents(path: str, *, find, pdf, html, xml=stored_xml, xslt_code=lambda doc: None, with_kind=False,
                    zipped=False) -> None:
    """Register GET {path}/pdf, {path}/html and {path}/ubl of the document find(call, id) gives, and with zipped
    {path}/zip/{isStandartXslt}. pdf and html draw it from (root, status, layout), and the reply's kind (accept,
    reject, partial) with with_kind."""

    def drawn(call: Call, id, isStandartXslt, draw):
        """(the document, its XML, what draw makes of it)."""
        layout_standard = standard(isStandartXslt)
        settle(call)
        doc = find(call, id)
        content = xml(call, doc)
        kind = (doc.data.get("kind"),) if with_kind else ()
        return doc, content, draw(ubl.parse_stored(content), doc.status,
                                  ubl.layout_of(layout_standard, xslt_code(doc)), *kind)

    def pdf_document(call: Call, id, isStandartXslt=None):
        return wrapped(drawn(call, id, isStandartXslt, pdf)[2])

    def html_document(call: Call, id, isStandartXslt=None):
        return wrapped(drawn(call, id, isStandartXslt, html)[2].encode("utf-8"))

    def ubl_document(call: Call, id):
        settle(call)
        return wrapped(xml(call, find(call, id)))

    def zip_document(call: Call, id, isStandartXslt):
        """Document 3, 4.5: Get ZIP takes isStandartXslt (no route without it): the UBL and its HTML in that
        layout."""
        doc, content, page = drawn(call, id, isStandartXslt, html)
        return wrapped(exports.archive({f"{doc.number}.xml": content, f"{doc.number}.html": page.encode("utf-8")}))

    for suffix in ("", "/{isStandartXslt}"):
        operation("dispatch", "GET", f"{path}/pdf{suffix}")(pdf_document)
        operation("dispatch", "GET", f"{path}/html{suffix}")(html_document)
    operation("dispatch", "GET", f"{path}/ubl")(ubl_document)
    if zipped:
        operation("dispatch", "GET", f"{path}/zip/{{isStandartXslt}}")(zip_document)
