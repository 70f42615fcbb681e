"""The platform's refusals read: an error body in whichever of its styles (parse_error), and a refusal inside a
success answer: the platform answers some failures with HTTP 2xx and a body whose Error is set (document 1,
section 7: "null, or Error"). Plain Python: the transport reads every answer through these."""

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


def parse_error(body: bytes | str | None) -> tuple[str, str, object]:
    """(title, detail, parsed body) from the platform's error body, whichever of its styles it uses.

    ticket service {"title", "detail"} (flat or under Error); accounting {"Error": "text"} or a bare
    string; 422 {field: [messages]}; dispatch Error object of unknown fields (shown as it is).
    """
    if body is None or body == b"" or body == "":
        return "", "", None
    text = (body.decode("utf-8", errors="replace") if isinstance(body, bytes) else str(body)).lstrip("\ufeff")
    try:
        data = jsonlib.loads(text)
    except ValueError:
        return "", _plain_text(text), None
    return (*_error_parts(data), data)


def _error_parts(data) -> tuple[str, str]:
    if data is None:
        return "", ""
    if isinstance(data, str):
        return "", data
    if isinstance(data, list):
        return "", "; ".join(_error_parts(item)[1] or str(item) for item in data)
    if not isinstance(data, dict):
        return "", str(data)
    lowered = {str(k).lower(): v for k, v in data.items()}
    # Problem details when one of its members says something; an empty title or detail beside a filled Error
    # ({"Error": "text", "title": null}) is the Error's text.
    problem = any(filled(lowered.get(key)) for key in ("title", "detail", "errors"))
    if problem or ("title" in lowered or "detail" in lowered) and not filled(lowered.get("error")):
        title, detail = str(lowered.get("title") or ""), str(lowered.get("detail") or "")
        errors = lowered.get("errors")
        if isinstance(errors, dict) and errors:  # problem details with validation errors
            detail = "; ".join(filter(None, [detail, _field_messages(errors)]))
        return title, detail
    if "error" in lowered:
        inner = lowered["error"]
        if isinstance(inner, dict):
            inner_lower = {str(k).lower(): v for k, v in inner.items()}
            if "title" in inner_lower or "detail" in inner_lower:
                return str(inner_lower.get("title") or ""), str(inner_lower.get("detail") or "")
            return "", _members(inner)
        return "", "" if inner is None else str(inner)
    if "message" in lowered:
        return "", str(lowered["message"])
    if data and all(isinstance(v, (list, str)) for v in data.values()):
        return "", _field_messages(data)
    return "", str(data)


def _members(error: dict) -> str:
    """An Error object of fields the documents do not give (the dispatch service's), as people can read it: its
    filled members, "name: value"."""
    return "; ".join(f"{name}: {value}" for name, value in error.items() if filled(value)) or str(error)


def _plain_text(text: str) -> str:
    """A non-JSON error body as a message: plain text only; markup (an HTML error or login page of a
    proxy) is not the platform's word and is never shown or kept."""
    text = text.strip()
    if not text or text.startswith("<") or "<html" in text[:500].lower():
        return ""
    return text[:1000]


def _field_messages(errors: dict) -> str:
    return "; ".join(f"{name}: {message}" for name, messages in errors.items()
                     for message in (messages if isinstance(messages, list) else [messages]))
