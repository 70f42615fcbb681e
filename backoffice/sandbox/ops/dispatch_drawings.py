"""The PDF and HTML of every dispatch document of the sandbox (an outgoing note, an incoming note, our reply, a
receiver's reply to our note), drawn from its stored UBL in the standard layout or the customer's
(isStandartXslt), under the path with and without the {isStandartXslt} segment (the facts file: public clients
differ)."""

from ..api import Call, operation
from . import dispatch_ubl as ubl
from .dispatch import standard, wrapped
from .dispatch_life import settle


def stored_xml(call: Call, doc) -> bytes:
    return bytes(doc.blob)


def drawn_documents(path: str, *, find, pdf, html, xml=stored_xml, xslt_code=lambda doc: None, with_kind=False):
    """Register GET {path}/pdf and {path}/html of the document find(call, id) gives. pdf and html draw it from
    (root, status, layout), and the reply's kind (accept, reject, partial) with with_kind."""

    def drawn(call: Call, id, isStandartXslt, draw):
        layout_standard = standard(isStandartXslt)
        settle(call)
        doc = find(call, id)
        kind = (doc.data.get("kind"),) if with_kind else ()
        return draw(ubl.parse_stored(xml(call, doc)), doc.status, ubl.layout_of(layout_standard, xslt_code(doc)),
                    *kind)

    def pdf_document(call: Call, id, isStandartXslt=None):
        return wrapped(drawn(call, id, isStandartXslt, pdf))

    def html_document(call: Call, id, isStandartXslt=None):
        return wrapped(drawn(call, id, isStandartXslt, html).encode("utf-8"))

    for suffix in ("", "/{isStandartXslt}"):
        operation("dispatch", "GET", f"{path}/pdf{suffix}")(pdf_document)
        operation("dispatch", "GET", f"{path}/html{suffix}")(html_document)
    return pdf_document, html_document
