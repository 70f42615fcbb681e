import logging

from backoffice.core import redaction as core_redaction
from backoffice.remote.redaction import EXCERPT_LIMIT, MASK, RedactingFilter, excerpt, redact


def test_core_names_still_work():
    assert core_redaction.redact is redact
    assert core_redaction.RedactingFilter is RedactingFilter


def test_secret_fields_tokens_and_literals_are_masked():
    text = ('{"access_token": "tok-123456", "expires_in": "86400"} username=u&password=pw-987654&client_id=serviceApi '
            "Authorization: Bearer abc.def-ghi x-api-key=key-0001 free key-0001")
    cleaned = redact(text, secrets=["key-0001"])
    for secret in ("tok-123456", "pw-987654", "abc.def-ghi", "key-0001"):
        assert secret not in cleaned
    assert '"expires_in": "86400"' in cleaned and "client_id=serviceApi" in cleaned and MASK in cleaned


def test_excerpt_is_redacted_then_capped():
    long = "x" * (EXCERPT_LIMIT - 5) + "secret-value-9999"
    cut = excerpt(long, ["secret-value-9999"])
    assert len(cut) <= EXCERPT_LIMIT and "secret" not in cut
    assert excerpt(b'{"password": "p4ssw0rd"}') == f'{{"password": "{MASK}"}}'


def test_filter_cleans_log_records():
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "sent %s", ("Bearer sekrit-token",), None)
    RedactingFilter().filter(record)
    assert "sekrit" not in record.getMessage()


def test_names_in_any_letter_case_the_pattern_takes_are_masked_though_a_text_is_scanned_only_when_it_holds_one():
    # re.IGNORECASE matches "ı", "İ", "ſ" and the Kelvin sign as ASCII letters: the quick check before the scan too.
    for text, secret in (('{"AUTHORİZATİON": "Basic c2VjcmV0LTEy"}', "c2VjcmV0LTEy"),
                         ('{"Passworđ": "x", "paſſword": "pw-ſ-1234"}', "pw-ſ-1234"),
                         ("authorızatıon=hidden-5678&x=1", "hidden-5678"),
                         ('{"\u212aEY": 1, "TO\u212aEN": "t-9999"}', "t-9999"),
                         ("sent with BEARER abc.def-4321", "abc.def-4321")):
        assert secret not in redact(text), text
    plain = '{"ticketNumber": "PSA2026000000001", "customerFirstName": "Işıl", "amount": 100}'
    assert redact(plain) == plain
