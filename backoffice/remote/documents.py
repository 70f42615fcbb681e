"""Documents (PDF, HTML, UBL, ZIP) as the platform hands them over.

The platform answers either with the file itself or with an object whose field Response holds it
(base64 for binary files, plain text for HTML). unwrap() gives the file's bytes either way.
"""

import base64
import binascii
import json

_MAGIC = ((b"%PDF", "application/pdf"), (b"PK\x03\x04", "application/zip"), (b"<?xml", "application/xml"))


def sniff(content: bytes, default: str = "application/octet-stream") -> str:
    head = content[:512].lstrip()
    for magic, content_type in _MAGIC:
        if head.startswith(magic):
            return content_type
    if head[:1] == b"<":
        return "text/html" if b"<html" in head.lower() or b"<!doctype html" in head.lower() else "application/xml"
    return default


def unwrap(content: bytes, content_type: str = "") -> tuple[bytes, str]:
    """(file bytes, content type) from a raw answer of a document operation."""
    if "json" in (content_type or "") or content[:1] in (b"{", b'"'):
        try:
            data = json.loads(content)
        except ValueError:
            return content, content_type or sniff(content)
        if isinstance(data, dict):
            data = next((v for k, v in data.items() if k.lower() == "response"), data)
        if isinstance(data, str):
            try:
                decoded = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                decoded = data.encode("utf-8")
            return decoded, sniff(decoded)
        return content, content_type
    return content, content_type or sniff(content)


def download(operation: str, doc: str = ""):
    """A client method that downloads one document of `operation` (remote/endpoints.py): its id, and the layout
    (isStandartXslt: standard, or the company's own) where the operation's path takes one."""

    def method(self, document_id, *, standard: bool = True) -> tuple[bytes, str]:
        # fill_path() takes from path_params only the names the operation's path has.
        path_params = {"id": str(document_id), "isStandartXslt": bool(standard)}
        return unwrap(*self.transport.call(operation, raw=True, path_params=path_params))

    method.__doc__ = doc or None
    return method
