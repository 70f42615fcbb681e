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
