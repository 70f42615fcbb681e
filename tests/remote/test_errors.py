"""How the platform's error bodies of every service become title / detail (document 1, section 7)."""

import base64
import json

import pytest

from backoffice.remote.documents import unwrap
from backoffice.remote.refusals import parse_error
from backoffice.remote.transport import _retry_after, _token_lifetime


@pytest.mark.parametrize("body,title,detail", [
    ({"title": "Geçersiz işlem", "detail": "Bilet iptal edilemez."}, "Geçersiz işlem", "Bilet iptal edilemez."),
    ({"Error": {"title": "Hata", "detail": "Durum değiştirilemez."}}, "Hata", "Durum değiştirilemez."),
    ({"Error": "Fatura muhasebeleştirilmiş."}, "", "Fatura muhasebeleştirilmiş."),
    ("Kayıt bulunamadı.", "", "Kayıt bulunamadı."),
    ({"pageSize": ["must be at most 500."], "ettn": ["is required.", "is not a Guid."]}, "",
     "pageSize: must be at most 500.; ettn: is required.; ettn: is not a Guid."),
    ({"Error": {"Code": 12, "Message": "Excel hazır değil"}}, "", "Code: 12; Message: Excel hazır değil"),
    ({"title": "One or more validation errors occurred.", "errors": {"Name": ["required"]}},
     "One or more validation errors occurred.", "Name: required"),
    # a member given as null says nothing: the Error's text is the refusal's (issue 28 review)
    ({"Error": "Fatura bulunamadı", "title": None}, "", "Fatura bulunamadı"),
    ({"title": None, "detail": None, "Error": {"title": "Hata", "detail": "Liste okunamadı."}}, "Hata",
     "Liste okunamadı."),
    ({"title": "", "Error": "Fatura bulunamadı"}, "", "Fatura bulunamadı"),
    ({"title": None, "detail": None, "errors": {"Email": ["bad e-mail"]}}, "", "Email: bad e-mail"),
    ({"title": None, "detail": None}, "", ""),
])
def test_error_styles(body, title, detail):
    parsed_title, parsed_detail, parsed = parse_error(json.dumps(body).encode())
    assert (parsed_title, parsed_detail, parsed) == (title, detail, body)


def test_non_json_and_empty_bodies():
    # An HTML page (a proxy's error or login page) is not the platform's word: never shown.
    assert parse_error(b"<html>Bad Gateway</html>")[:2] == ("", "")
    assert parse_error(b"Service temporarily down")[:2] == ("", "Service temporarily down")
    assert parse_error(b"") == ("", "", None)


def test_token_lifetime_from_a_string():
    assert _token_lifetime("86400") == 86340  # expires_in - 60 s
    assert _token_lifetime("4") == 2  # short test lifetimes: keep half
    assert _token_lifetime(None) == 3540


def test_retry_after():
    assert _retry_after("7") == 7.0
    assert _retry_after(None) == 60.0
    assert _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_unwrap_documents():
    pdf = b"%PDF-1.4 ..."
    assert unwrap(json.dumps({"Response": base64.b64encode(pdf).decode()}).encode(), "application/json") \
        == (pdf, "application/pdf")
    assert unwrap(json.dumps({"Response": "<html><body>bilet</body></html>"}).encode(), "application/json") \
        == (b"<html><body>bilet</body></html>", "text/html")
    assert unwrap(b"PK\x03\x04rest", "application/zip") == (b"PK\x03\x04rest", "application/zip")
