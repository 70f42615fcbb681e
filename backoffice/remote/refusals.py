"""A refusal inside a success answer: the platform answers some failures with HTTP 2xx and a body whose Error is
set (document 1, section 7: "null, or Error"). Plain Python: the transport reads every 2xx answer through
refusal_in."""

import json as jsonlib
import re

# A member named Error in any letter case, as a JSON body writes it: what a refusal in a 2xx answer needs.
ERROR_KEY = re.compile(rb'"[Ee][Rr][Rr][Oo][Rr]"\s*:')


def refusal_in(content: bytes | None):
    """The JSON object of a 2xx answer that is a refusal all the same, else None: the platform answers some
    failures with a success status and a body whose Error is set (document 1, section 7: ticket cancel and
    status change {"Error": {"title", "detail"}}, accounting {"Error": "text"}, dispatch status change and Excel
    download an Error object). "Error": null or empty is a success. Judged by the first bytes, not the
    Content-Type: a download labelled as a file may carry the refusal (a ZIP starts "PK", a PDF "%PDF")."""
    head = (content or b"")[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head.startswith(b"{") or not ERROR_KEY.search(content):  # most answers are read no further
        return None
    try:
        data = jsonlib.loads(content.decode("utf-8-sig"))
    except ValueError:  # UnicodeDecodeError is one
        return None
    if not isinstance(data, dict):
        return None
    error = next((value for key, value in data.items() if str(key).lower() == "error"), None)
    return data if filled(error) else None


def filled(value) -> bool:
    """Whether an Error value says something: text that is not blank, an object with a filled member."""
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, dict):
        return any(filled(item) for item in value.values())
    if isinstance(value, list):
        return any(filled(item) for item in value)
    return bool(value)  # a number or flag: 0 and false say nothing
