"""The journal checker (backoffice/ledger/journal.py): a well-formed journal passes; each rule, broken by a
small file, gives its finding on the right line and field, with the value found and what was expected; the
part plan; any block size, the fast path and the diagnosis give the same answer; no input makes it raise or
hold the file in memory."""

import codecs
import io
import tracemalloc
from datetime import date

import pytest
from django.utils import translation
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backoffice.ledger.journal import JournalCheck, Options, check_file
from backoffice.ledger.journal_rules import (ENTRY_FIELDS, H_FIELDS, LINE_FIELDS, MAX_LINE_BYTES, RULES, Y_FIELDS,
                                             Finding)
from tests.properties import examples

START, END = date(2025, 1, 1), date(2025, 1, 31)
VKN, TCKN = "1234567890", "10000000146"


@pytest.fixture(autouse=True)
def english():
    with translation.override("en"):
        yield


# --- a small journal, as records of named fields ----------------------------------------------------------------
def y(**fields):
    return ["Y", {"fiscalYearStart": "2025-01-01", "fiscalYearEnd": "2025-12-31", "batchID": "0",
                  "entityIdentifier": VKN, **fields}]


def h(counter, day, total, **fields):
    return ["H", {"enteredBy": "Ayşe Yılmaz", "enteredDate": day, "entryNumber": f"YEV-{counter}",
                  "entryComment": "Satış", "totalDebit": total, "totalCredit": total,
                  "entryNumberCounter": str(counter), **fields}]


def line(number, counter, main, sub, amount, code, day, extra=None, **fields):
    """An entry line of the 16 fields (and `extra`, the fields after them, when given)."""
    values = {name: "" for name in LINE_FIELDS}
    values["documentType"] = "voucher"  # required on every line; a test gives another where it matters
    values.update(lineNumber=str(number), lineNumberCounter=str(counter), accountMainID=main,
                  accountMainDescription=f"Hesap {main}", accountSubID=sub, amount=amount, debitCreditCode=code,
                  postingDate=day, **fields)
    return ["L", values, extra]


def journal():
    """Y, then 3 entries: line 2 H (3 lines, an invoice), line 6 H (2 lines), line 9 H (2 lines, a voucher)."""
    return [
        y(),
        h(1, "2025-01-02", "1250.50"),
        line(1, 1, "120", "120.01", "1250.50", "D", "2025-01-02", documentType="invoice",
             documentNumber="GIB2025000000001", documentDate="2025-01-02", detailComment="Fatura: müşteri Ö."),
        line(2, 2, "600", "600.01", "1000.50", "C", "2025-01-02"),
        line(3, 3, "391", "", "250", "C", "2025-01-02"),
        h(2, "2025-01-05", "300.00"),
        line(1, 4, "770", "770.01", "300.00", "D", "2025-01-05"),
        line(2, 5, "100", "", "300.0", "C", "2025-01-05"),
        h(3, "2025-01-05", "50.25"),
        line(1, 6, "153", "", "50.25", "D", "2025-01-05", documentType="voucher"),
        line(2, 7, "320", "320.01", "50.25", "C", "2025-01-05", documentType="other",
             documentTypeDescription="Dekont"),
    ]


def text(records, newline="\n") -> bytes:
    out = []
    for kind, fields, *rest in records:
        if kind == "Y":
            out.append("\t".join(["Y", *(fields[name] for name in Y_FIELDS[1:])]))
        elif kind == "H":
            out.append("\t".join(["H", *(fields[name] for name in H_FIELDS[1:])]) + "\t")
        elif kind == "L":
            out.append("".join(fields[name] + "\t" for name in LINE_FIELDS) + (rest[0] or ""))
        else:  # a line as it is
            out.append(fields)
    return (newline.join(out) + newline).encode()


def raw(value):
    return ["raw", value]


def check(data: bytes, **options):
    checker = JournalCheck(Options(START, END, **options))
    return list(checker.run([data])), checker.summary


def one(data: bytes, **options) -> Finding:
    findings, _summary = check(data, **options)
    assert len(findings) == 1, findings
    return findings[0]


def shape(finding):
    return finding.line, finding.field, finding.rule, finding.found, finding.expected, finding.column


# --- the well-formed journal ------------------------------------------------------------------------------------
def test_a_well_formed_journal_passes_with_its_summary():
    data = text(journal())
    findings, summary = check(data)
    assert findings == []
    assert (summary.lines, summary.entries, summary.entry_lines) == (11, 3, 7)
    assert (summary.debit_cents, summary.credit_cents) == (160075, 160075)
    assert (summary.first_date, summary.last_date) == (date(2025, 1, 2), date(2025, 1, 5))
    assert (summary.fiscal_year_start, summary.fiscal_year_end) == (date(2025, 1, 1), date(2025, 12, 31))
    assert (summary.batch_id, summary.entity_identifier, summary.findings) == ("0", VKN, 0)
    [part] = summary.parts
    assert (part.index, part.entry_start, part.entry_end, part.line_start, part.line_end) == (1, 1, 3, 1, 7)
    assert (part.bytes, part.offset, part.text_start, part.text_end) == (len(data), 0, 1, 11)


def test_a_bom_crlf_and_trailing_blank_lines_are_accepted():
    data = codecs.BOM_UTF8 + text(journal(), newline="\r\n") + b"\r\n\n"
    findings, summary = check(data)
    assert findings == []
    assert summary.lines == 13 and summary.parts[0].bytes == len(data)


def test_the_optional_groups_and_their_skip_rule():
    currency = "USD\t2025-01-02\t31.25\tUSD\t40.016\tTCMB\tgünlük kur"
    measure = "URN-1\tÜrün\t12.5\tkg\tKGM\t100.04"
    records = journal()
    records[2][2] = currency  # 7 currency fields
    records[3][2] = "\t" * 6 + "\t" + measure  # 17..23 skipped with tabs, then the 6 measure fields
    records[4][2] = currency + "\t" + measure + "\t"  # all 13 and a trailing tab
    records[6][2] = "\t" * 6 + "\t"  # 7 empty fields and a trailing tab
    assert check(text(records))[0] == []
    records[3][2] = "\t" * 6 + "\t" + measure.rsplit("\t", 1)[0]  # 12 fields after field 16
    assert shape(one(text(records))) == (4, "line", "optional_groups", "fields after field 16: 12", "0, 7 or 13", 0)


# --- one test per rule ------------------------------------------------------------------------------------------
def replaced(index, **fields):
    """The journal with record `index` changed (fields by name)."""
    records = journal()
    records[index][1].update(fields)
    return text(records)


RULE_CASES = [
    # rule 1: the Y line
    (0, {"fiscalYearStart": "2025-02-01"},
     (1, "fiscalYearStart", "fiscal_year", "2025-02-01", "on or before 2025-01-01", 2)),
    (0, {"fiscalYearEnd": "2025-01-15"},
     (1, "fiscalYearEnd", "fiscal_year", "2025-01-15", "on or after 2025-01-31", 3)),
    (0, {"fiscalYearEnd": "2024-12-31"}, (1, "fiscalYearEnd", "fiscal_year", "2024-12-31", "after 2025-01-01", 3)),
    (0, {"fiscalYearStart": "01.01.2025"}, (1, "fiscalYearStart", "date_format", "01.01.2025", "2025-01-01", 2)),
    (0, {"batchID": "ŞUBE-1"}, (1, "batchID", "batch_id", "ŞUBE-1", "digits", 4)),
    (0, {"batchID": ""}, (1, "batchID", "required", "", "a value", 4)),
    (0, {"entityIdentifier": "1234567891"},
     (1, "entityIdentifier", "entity_identifier", "1234567891", "a valid tax number (10 digits) or national id "
      "(11 digits)", 5)),
    (0, {"entityIdentifier": "10000000147"},
     (1, "entityIdentifier", "entity_identifier", "10000000147", "a valid tax number (10 digits) or national id "
      "(11 digits)", 5)),
    # rule 2: H lines
    (1, {"enteredBy": ""}, (2, "enteredBy", "required", "", "a value", 2)),
    (1, {"entryNumber": ""}, (2, "entryNumber", "required", "", "a value", 4)),
    (1, {"enteredDate": "2025-02-30"}, (2, "enteredDate", "date_format", "2025-02-30", "yyyy-mm-dd", 3)),
    (1, {"enteredDate": "2/1/2025"}, (2, "enteredDate", "date_format", "2/1/2025", "2025-01-02", 3)),
    (1, {"entryNumberCounter": "1a"}, (2, "entryNumberCounter", "counter_format", "1a", "a whole number above 0", 8)),
    # rule 5: required fields of an entry line
    (3, {"accountMainDescription": ""}, (4, "accountMainDescription", "required", "", "a value", 4)),
    (3, {"debitCreditCode": ""}, (4, "debitCreditCode", "required", "", "D or C", 8)),
    # rule 9: counters
    (6, {"lineNumber": "2"}, (7, "lineNumber", "line_number", "2",
                              "1 (within each entry) or 4 (running on through the period)", 1)),
    (6, {"lineNumber": "01"}, (7, "lineNumber", "counter_format", "01", "1", 1)),
    (6, {"lineNumberCounter": "0"}, (7, "lineNumberCounter", "counter_format", "0", "a whole number above 0", 2)),
    # rule 11: accounts
    (6, {"accountMainID": "77", "accountSubID": "77.01"}, (7, "accountMainID", "main_account", "77",
                                                            "3 or 4 characters", 3)),
    (6, {"accountMainID": "77001"}, (7, "accountMainID", "main_account", "77001", "3 or 4 characters", 3)),
    (6, {"accountSubID": "771.01"}, (7, "accountSubID", "sub_account_prefix", "771.01", "starting with 770", 6)),
    # rule 12: documents
    (6, {"documentType": "Invoice", "documentNumber": "A1", "documentDate": "2025-01-05"},
     (7, "documentType", "document_type", "Invoice", "invoice", 10)),
    (6, {"documentType": "receipt"}, (7, "documentType", "document_type", "receipt",
                                      "invoice, check, voucher or other", 10)),
    (6, {"documentType": "invoice", "documentDate": "2025-01-05"},
     (7, "documentNumber", "document_number", "", "required for invoice", 12)),
    (6, {"documentType": "check", "documentNumber": "ÇEK-7"},
     (7, "documentDate", "document_date", "", "required for check", 14)),
    (6, {"documentType": "other"}, (7, "documentTypeDescription", "document_description", "", "required for other",
                                    11)),
    (6, {"documentType": "voucher", "documentDate": "05.01.2025"},
     (7, "documentDate", "date_format", "05.01.2025", "2025-01-05", 14)),
]


@pytest.mark.parametrize("index, fields, expected", RULE_CASES)
def test_each_rule_on_its_line_and_field(index, fields, expected):
    assert shape(one(replaced(index, **fields))) == expected


def test_an_amount_written_the_turkish_way_and_its_entry():
    findings, _ = check(replaced(6, amount="3.000,00"))
    # The amount cannot be read: its line says so, and the entry's sums are not judged on a guess.
    assert [shape(f) for f in findings] == [(7, "amount", "amount_format", "3.000,00", "3000.00", 7)]
    findings, _ = check(replaced(6, amount="3,000.00"))
    assert [shape(f) for f in findings] == [(7, "amount", "amount_format", "3,000.00", "3000.00", 7)]
    findings, _ = check(replaced(6, amount="300 TL"))
    assert [shape(f) for f in findings] == [
        (7, "amount", "amount_format", "300 TL", "digits with a dot before the decimals, e.g. 1250.50", 7)]


@pytest.mark.parametrize("amount, rule, expected", [
    ("300.001", "amount_decimals", "at most 2 decimals"),
    ("0.00", "amount_positive", "above 0"),
    ("-300.00", "amount_positive", "above 0"),
    ("", "required", "an amount, e.g. 1250.50"),
])
def test_amounts_above_0_with_at_most_2_decimals(amount, rule, expected):
    assert shape(one(replaced(6, amount=amount))) == (7, "amount", rule, amount, expected, 7)


@pytest.mark.parametrize("code, expected", [("c", "C"), ("B", "D or C"), ("DC", "D or C")])
def test_the_debit_credit_code(code, expected):
    assert shape(one(replaced(7, debitCreditCode=code))) == (8, "debitCreditCode", "debit_credit_code", code,
                                                              expected, 8)


def test_entry_dates_inside_the_period_and_in_order():
    records = journal()
    for index, name in ((8, "enteredDate"), (9, "postingDate"), (10, "postingDate")):
        records[index][1][name] = "2025-02-01"
    assert shape(one(text(records))) == (9, "enteredDate", "date_in_period", "2025-02-01",
                                         "between 2025-01-01 and 2025-01-31", 3)
    records = journal()
    records[5][1]["enteredDate"] = "2025-01-01"
    for index in (6, 7):
        records[index][1]["postingDate"] = "2025-01-01"
    assert shape(one(text(records))) == (6, "enteredDate", "date_order", "2025-01-01", "2025-01-02 or later", 3)


def test_a_posting_date_is_its_entrys_date():
    assert shape(one(replaced(7, postingDate="2025-01-06"))) == (8, "postingDate", "posting_date", "2025-01-06",
                                                                 "2025-01-05", 9)
    assert shape(one(replaced(7, postingDate="05.01.2025"))) == (8, "postingDate", "date_format", "05.01.2025",
                                                                 "2025-01-05", 9)


def test_entry_counters_run_on_with_no_gap():
    assert shape(one(replaced(8, entryNumberCounter="4"))) == (9, "entryNumberCounter", "entry_counter", "4", "3", 8)
    assert shape(one(text(journal()), first_entry_counter=5)) == (2, "entryNumberCounter", "entry_counter", "1", "5",
                                                                   8)
    # One gap is one finding: counting goes on from the number found.
    records = journal()
    records[5][1]["entryNumberCounter"] = "7"
    records[8][1]["entryNumberCounter"] = "8"
    assert shape(one(text(records))) == (6, "entryNumberCounter", "entry_counter", "7", "2", 8)


def test_line_counters_run_on_over_the_whole_journal():
    records = journal()
    for index, counter in ((6, 5), (7, 6), (9, 7), (10, 8)):
        records[index][1]["lineNumberCounter"] = str(counter)
    assert shape(one(text(records))) == (7, "lineNumberCounter", "line_counter", "5", "4", 2)
    assert shape(one(text(journal()), first_line_counter=101)) == (3, "lineNumberCounter", "line_counter", "1", "101",
                                                                    2)


def test_an_entry_has_at_least_2_lines():
    records = journal()
    del records[10]
    records[8][1].update(totalCredit="0.00")
    findings, _ = check(text(records))
    assert [shape(f) for f in findings] == [
        (9, "totalCredit", "amount_positive", "0.00", "above 0", 7),
        (9, "line", "entry_min_lines", "1", "at least 2", 0),
        (9, "line", "entry_balance", "debit 50.25, credit 0.00", "equal debit and credit", 0),
    ]


def test_debit_equals_credit_and_the_h_totals():
    findings, _ = check(replaced(4, amount="249.50"))
    # Found when the entry ends, on its H line: line 2, after line 5's entry has been read.
    assert [shape(f) for f in findings] == [
        (2, "line", "entry_balance", "debit 1250.50, credit 1250.00", "equal debit and credit", 0),
        (2, "totalCredit", "header_totals", "1250.50", "1250.00", 7),
    ]
    assert shape(one(replaced(5, totalDebit="301"))) == (6, "totalDebit", "header_totals", "301.00", "300.00", 6)


def test_sub_accounts_of_the_chart_of_accounts():
    accounts = frozenset({"120.01", "600.01", "770.01"})
    assert shape(one(text(journal()), accounts=accounts)) == (
        11, "accountSubID", "sub_account_unknown", "320.01", "a sub-account of the chart of accounts", 6)
    assert check(text(journal()), accounts=accounts | {"320.01"})[0] == []


@pytest.mark.parametrize("extra, field, found, expected", [
    ("USD\t\t31.25\tusd\t\t\t", "amountOriginalCurrency", "usd", "3 capital letters (ISO 4217), e.g. USD"),
    ("USD\t\t\tUSD\t\t\t", "amountOriginalAmount", "", "required when foreign-currency fields are filled"),
    ("\t\t-5\tUSD\t\t\t", "amountOriginalAmount", "-5", "a number above 0"),
    ("\t\t5\tUSD\t0\t\t", "amountOriginalExchangeRate", "0", "a number above 0"),
])
def test_the_foreign_currency_fields(extra, field, found, expected):
    records = journal()
    records[6][2] = extra
    finding = one(text(records))
    assert shape(finding) == (7, field, "currency", found, expected, ENTRY_FIELDS.index(field) + 1)


def test_the_measure_fields():
    records = journal()
    records[6][2] = "\t" * 7 + "K1\tKalem\tbirkaç\t\tKGM\t12"
    assert shape(one(text(records))) == (7, "measurableQuantity", "measure", "birkaç", "a number, e.g. 12.5", 26)
    records[6][2] = "\t" * 6 + "\tK1\tKalem\t3\t\tKGM\t12,5"
    assert shape(one(text(records))) == (7, "measurableCostPerUnit", "measure", "12,5", "a number, e.g. 12.5", 29)


def test_sixteen_fields_each_followed_by_a_tab():
    good = text(journal()).split(b"\n")
    without_last_tab = good[6][:-1]  # line 7: the 16th field without its tab
    data = b"\n".join(good[:6] + [without_last_tab] + good[7:])
    assert shape(one(data)) == (7, "detailComment", "field_count", "tabs: 15", "16 fields, each followed by a tab", 16)
    data = b"\n".join(good[:6] + [b"1\t4\t770\tKasa\t"] + good[7:])
    assert shape(one(data)) == (7, "line", "field_count", "tabs: 4", "16 fields, each followed by a tab", 0)


def test_h_and_y_lines_of_the_wrong_shape():
    records = journal()
    records[5] = raw("H\tAyşe\t2025-01-05\tYEV-2\t300.00\t300.00\t2")
    assert [shape(f) for f in check(text(records))[0]] == [
        (6, "line", "h_line", "fields: 7", "8 fields: H, entered by, entry date, entry number, entry comment, "
                                           "total debit, total credit, entry counter", 0)]
    records = journal()
    records[0] = raw("Y\t2025-01-01\t2025-12-31\t" + VKN)
    assert shape(one(text(records))) == (
        1, "line", "y_line", "fields: 4", "5 fields: Y, fiscal year start, fiscal year end, branch number, tax or national id", 0)


def test_the_y_line_first_and_only_first():
    records = journal()
    del records[0]
    first = one(text(records))
    assert shape(first)[:3] == (1, "line", "y_line") and first.found.startswith("H\\tAyşe Yılmaz\\t2025-01-02")
    records = journal()
    records.insert(5, y())
    assert shape(one(text(records)))[:5] == (6, "line", "y_line", "Y\\t2025-01-01\\t2025-12-31\\t0\\t" + VKN,
                                            "only on line 1")


def test_lines_before_the_first_h_line_and_blank_lines():
    records = journal()
    records.insert(1, records[2])
    finding = one(text(records))
    assert shape(finding)[:3] == (2, "line", "line_before_header") and finding.expected == "an H line before it"
    records = journal()
    records.insert(5, raw(""))
    records.insert(6, raw("  "))
    findings, _ = check(text(records))
    assert [shape(f) for f in findings] == [(6, "line", "blank_line", "", "no blank line (blank lines only at the "
                                                                          "end)", 0),
                                            (7, "line", "blank_line", "", "no blank line (blank lines only at the "
                                                                          "end)", 0)]


@pytest.mark.parametrize("data", [b"", b"\n\n", codecs.BOM_UTF8, text([y()])])
def test_an_empty_journal(data):
    assert shape(one(data)) == (1, "line", "empty_file", "", "a Y line and at least one entry", 0)


def test_a_line_that_is_not_utf8_is_one_finding():
    records = journal()
    records[6][1]["accountMainDescription"] = "Satıcılar"
    data = text(records).replace("Satıcılar".encode(), "Satıcılar".encode("cp1254"))
    finding = one(data)
    assert shape(finding)[:3] == (7, "line", "encoding") and finding.expected == "UTF-8"
    assert "Sat\\xfd" in finding.found  # the wrong bytes, shown escaped


def test_a_line_too_long_is_one_finding_and_not_kept():
    records = journal()
    records[6][1]["detailComment"] = "x" * (MAX_LINE_BYTES + 10)
    data = text(records)
    length = len(data.split(b"\n")[6])
    for blocks in ([data], [data[i:i + 1000] for i in range(0, len(data), 1000)]):
        checker = JournalCheck(Options(START, END))
        findings = list(checker.run(blocks))
        assert [shape(f) for f in findings] == [(7, "line", "line_too_long", f"{length} bytes",
                                                 f"at most {MAX_LINE_BYTES} bytes", 0)]


def test_every_finding_names_a_rule_with_its_sentence():
    assert all(str(sentence).endswith(".") for sentence in RULES.values())
    finding = one(replaced(6, amount="0"))
    assert finding.message == "Amounts are above 0."
    with translation.override("tr"):
        assert finding.message  # translated when the catalogue has it, English otherwise


def test_found_values_are_cut_and_shown_without_control_characters():
    finding = one(replaced(6, documentType="x\x00" + "y" * 500))
    assert finding.found.startswith("x\\x00yyy") and len(finding.found) == 200


# --- the part plan ----------------------------------------------------------------------------------------------
def big_journal(entries, lines_per_entry, comment_bytes):
    records, counter = [y()], 0
    for entry in range(1, entries + 1):
        records.append(h(entry, "2025-01-10", f"{lines_per_entry // 2}.00"))
        for number in range(1, lines_per_entry + 1):
            counter += 1
            records.append(line(number, counter, "120" if number % 2 else "600", "", "1.00",
                                "D" if number % 2 else "C", "2025-01-10", detailComment="ç" * (comment_bytes // 2)))
    return text(records)


def test_parts_keep_entries_whole():
    data = big_journal(entries=7, lines_per_entry=6, comment_bytes=60_000)  # about 360 KB an entry
    findings, summary = check(data, split_size_mb=1)
    assert findings == []
    assert [(p.index, p.entry_start, p.entry_end, p.line_start, p.line_end) for p in summary.parts] == [
        (1, 1, 2, 1, 12), (2, 3, 4, 13, 24), (3, 5, 6, 25, 36), (4, 7, 7, 37, 42)]
    assert all(p.bytes <= 1024 * 1024 for p in summary.parts)
    assert sum(p.bytes for p in summary.parts) == len(data)
    assert [p.offset for p in summary.parts] == [0, *[sum(q.bytes for q in summary.parts[:i]) for i in (1, 2, 3)]]
    # A part starts on its first entry's H line and ends on the line before the next part's.
    lines = data.split(b"\n")
    for part in summary.parts:
        assert lines[part.text_start - 1].startswith(b"Y\t" if part.index == 1 else b"H\t")
        assert data[part.offset:part.offset + part.bytes].count(b"\n") == part.text_end - part.text_start + 1


def test_an_entry_larger_than_a_part():
    data = big_journal(entries=2, lines_per_entry=20, comment_bytes=60_000)  # 1.2 MB an entry
    findings, summary = check(data, split_size_mb=1)
    assert [(f.line, f.field, f.rule, f.expected) for f in findings] == [
        (2, "line", "entry_too_large", "at most 1 MB"), (23, "line", "entry_too_large", "at most 1 MB")]
    first_entry = sum(len(text_line) + 1 for text_line in data.split(b"\n")[:22])  # the Y line goes with it
    assert findings[0].found == f"{first_entry} bytes"
    assert [p.entry_start for p in summary.parts] == [1, 2]


# --- however the text comes ------------------------------------------------------------------------------------
def broken_journal():
    """Several findings of several kinds, an encoding error among them."""
    records = journal()
    records[3][1]["amount"] = "1000,50"
    records[6][1]["lineNumberCounter"] = "9"
    records[7][1]["accountMainDescription"] = "Satıcılar"
    records.insert(8, raw(""))
    data = text(records, newline="\r\n")
    return data.replace("Satıcılar".encode(), "Satıcılar".encode("cp1254"))


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_any_block_size_gives_the_same_findings(size):
    data = broken_journal()
    whole, summary = check(data)
    assert {f.rule for f in whole} >= {"amount_format", "line_counter", "encoding", "blank_line"}
    checker = JournalCheck(Options(START, END))
    blocks = [data[i:i + size] for i in range(0, len(data), size)]
    assert list(checker.run(blocks)) == whole
    assert checker.summary == summary


def slow_check(data, **options):
    checker = JournalCheck(Options(START, END, **options))
    checker.fast = False
    return list(checker.run([data])), checker.summary


def test_check_file_reads_a_file(tmp_path):
    path = tmp_path / "yevmiye.txt"
    path.write_bytes(broken_journal())
    assert check_file(path, Options(START, END)) == check(broken_journal())


SIGNIFICANT = st.sampled_from(["\t", "\n", "\r\n", "\r", "0", "00", "1", "2", "9", "29", ".", ".5", ",", "-", "D", "C",
                               "H", "Y", "a", "İ", " ", "", "2025-01-05", "2024-02-29", "invoice", "check", "voucher",
                               "other", "120", "\t\t\t\t\t\t", "USD", "\x00"])


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 12), SIGNIFICANT), min_size=1, max_size=6),
       st.sampled_from([None, frozenset({"120.01", "600.01"})]), st.sampled_from(["\n", "\r\n"]),
       st.integers(1, 400))
def test_the_fast_path_and_the_diagnosis_agree(edits, accounts, newline, size):
    """The fast path takes a line only when the diagnosis would find nothing in it: on any journal, edited at
    random where it matters, both give the same findings and the same summary, in any blocks."""
    data = text(journal(), newline=newline).decode()
    for position, length, value in edits:
        position %= len(data) + 1
        data = data[:position] + value + data[position + length:]
    data = data.encode()
    expected = slow_check(data, accounts=accounts)
    assert check(data, accounts=accounts) == expected
    checker = JournalCheck(Options(START, END, accounts=accounts))
    assert (list(checker.run(data[i:i + size] for i in range(0, len(data), size))), checker.summary) == expected


def test_the_fast_path_and_the_diagnosis_agree_on_each_rule():
    for index, fields, _expected in RULE_CASES:
        data = replaced(index, **fields)
        assert check(data) == slow_check(data)
    data = broken_journal()
    assert check(data) == slow_check(data)


@settings(max_examples=examples(100), deadline=None)
@given(st.binary(max_size=3000), st.sampled_from([1, 5, 64, 4096]))
def test_random_bytes_never_raise(data, size):
    checker = JournalCheck(Options(START, END))
    findings = list(checker.run(data[i:i + size] for i in range(0, len(data), size)))
    assert all(f.rule in RULES and len(f.found) <= 200 and f.found.isprintable() for f in findings)
    assert checker.summary.findings == len(findings) == sum(checker.summary.by_rule.values())


@settings(max_examples=examples(60), deadline=None)
@given(st.sampled_from(["utf-8", "utf-8-sig", "cp1254", "utf-16", "utf-32", "latin-1"]),
       st.lists(st.tuples(st.integers(0, 2000), st.integers(0, 3 * MAX_LINE_BYTES), st.sampled_from(["x", "\t", "ş"])),
                max_size=3),
       st.sampled_from([1, 333, 65536, 1 << 20]))
def test_any_journal_in_any_encoding_with_huge_lines_never_raises(encoding, runs, size):
    data = text(journal()).decode()
    for position, length, char in runs:
        position %= len(data) + 1
        data = data[:position] + char * length + data[position:]
    data = data.encode(encoding, errors="replace")
    checker = JournalCheck(Options(START, END))
    findings = list(checker.run(data[i:i + size] for i in range(0, len(data), size)))
    assert all(f.rule in RULES and len(f.found) <= 200 for f in findings)
    assert checker.summary.lines == data.count(b"\n") + (not data.endswith(b"\n"))
    if encoding.startswith("utf-8") and not runs:
        assert findings == []


@pytest.mark.parametrize("encoding", ["cp1254", "utf-16", "utf-16-le", "latin-1"])
def test_a_journal_in_another_encoding_says_so(encoding):
    data = text(journal()).decode().encode(encoding, errors="replace")
    findings, _ = check(data)
    assert findings and all(f.rule in RULES for f in findings)
    if encoding == "cp1254":  # the lines with Turkish letters are named, the others read as they are
        assert {f.line for f in findings if f.rule == "encoding"} == {2, 3, 6, 9}


def test_memory_stays_bounded_without_newlines():
    """30 MB with no newline, in 1 MB blocks: one finding, and nothing like the file kept."""
    block = b"1\t2\t" + b"x" * (1024 * 1024 - 4)
    tracemalloc.start()
    try:
        checker = JournalCheck(Options(START, END))
        findings = list(checker.run(block for _ in range(30)))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(f.line, f.rule, f.found) for f in findings] == [
        (1, "line_too_long", f"{30 * len(block)} bytes"), (1, "empty_file", "")]
    assert peak < 4 * 1024 * 1024, peak


def test_memory_stays_bounded_on_a_long_journal():
    """A journal of 20,000 entries: what the checker keeps does not grow with it (tracemalloc, after the
    first entries against the end)."""
    records = [y()]
    counter = 0
    for entry in range(1, 20_001):
        records.append(h(entry, "2025-01-10", "5.00"))
        for number, code in ((1, "D"), (2, "C")):
            counter += 1
            records.append(line(number, counter, "120", "", "5.00", code, "2025-01-10", detailComment="açıklama"))
    data = text(records)
    checker = JournalCheck(Options(START, END))
    tracemalloc.start()
    try:
        run = checker.run(data[i:i + 65536] for i in range(0, len(data), 65536))
        assert list(run) == []
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024, peak  # the blocks and their lines; not the 2 MB journal's 60,000 lines


def test_io_streams_are_blocks_too():
    data = text(journal())
    stream = io.BytesIO(data)
    checker = JournalCheck(Options(START, END))
    assert list(checker.run(iter(lambda: stream.read(10), b""))) == []
    assert checker.summary.entries == 3


# --- line numbers: running on through the period, or 1, 2, 3... within each entry (issue 28) ---------------------
def running(records, first=1):
    """The journal with its lineNumbers running on through the period, from `first` (the documented way)."""
    number = first
    for record in records:
        if record[0] == "L":
            record[1]["lineNumber"] = str(number)
            number += 1
    return records


WITHIN = "within each entry"
RUNNING = "running on through the period"


@pytest.mark.parametrize("first", [1, 101])
def test_line_numbers_running_on_through_the_period_pass(first):
    data = text(running(journal(), first))
    assert check(data) == slow_check(data)
    findings, summary = check(data)
    assert findings == [] and summary.entry_lines == 7
    # The counters are what they were: lineNumberCounter continues the month before whatever lineNumber does.
    assert shape(one(data, first_line_counter=5)) == (3, "lineNumberCounter", "line_counter", "1", "5", 2)


@pytest.mark.parametrize("edit, expected", [
    ({7: "7"}, (8, "lineNumber", "line_number", "7", f"6 ({RUNNING})", 1)),  # a gap
    ({7: "5"}, (8, "lineNumber", "line_number", "5", f"6 ({RUNNING})", 1)),  # a repeat
    ({9: "8", 10: "9"}, (10, "lineNumber", "line_number", "8", f"7 ({RUNNING})", 1)),  # a gap in the last entry
])
def test_a_gap_or_a_repeat_in_running_line_numbers_is_one_finding(edit, expected):
    records = running(journal(), first=2)
    for index, value in edit.items():
        records[index][1]["lineNumber"] = value
    data = text(records)
    assert shape(one(data)) == expected
    assert check(data) == slow_check(data)


def test_a_mix_is_found_on_its_first_line_and_only_there():
    # Running on in the first two entries, then restarting at 1: the third entry's first line.
    records = running(journal())
    records[9][1]["lineNumber"], records[10][1]["lineNumber"] = "1", "2"
    assert shape(one(text(records))) == (10, "lineNumber", "line_number", "1", f"6 ({RUNNING})", 1)
    # Within each entry, then running on: one finding however many entries follow.
    records = journal()
    records[9][1]["lineNumber"], records[10][1]["lineNumber"] = "6", "7"
    records += [h(4, "2025-01-06", "1.00"), line(8, 8, "100", "", "1.00", "D", "2025-01-06"),
                line(9, 9, "600", "", "1.00", "C", "2025-01-06")]
    data = text(records)
    assert shape(one(data)) == (10, "lineNumber", "line_number", "6", f"1 ({WITHIN})", 1)
    assert check(data) == slow_check(data)


def test_a_file_that_follows_neither_names_both_conventions():
    # The second entry decides; 2 is neither 1 (within the entry) nor 4 (running on).
    finding = one(replaced(6, lineNumber="2"))
    assert shape(finding) == (7, "lineNumber", "line_number", "2", f"1 ({WITHIN}) or 4 ({RUNNING})", 1)
    assert "run on through the period" in finding.message and "1, 2, 3... within each entry" in finding.message
    with translation.override("tr"):
        message = finding.message
    assert "dönem boyunca" in message and "her maddede 1, 2, 3" in message
    # Both conventions agree on the first entry (1, 2, 3...): what is expected there is one number.
    assert shape(one(replaced(3, lineNumber="3"))) == (4, "lineNumber", "line_number", "3", "2", 1)


def test_at_least_2_lines_per_entry_whatever_the_numbering():
    records = running(journal())
    del records[10]
    findings, _ = check(text(records))
    assert (9, "line", "entry_min_lines", "1", "at least 2", 0) in [shape(f) for f in findings]
    assert "line_number" not in {f.rule for f in findings}


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 12), SIGNIFICANT), max_size=6),
       st.sampled_from([1, 2, 9, 10_001]), st.sampled_from(["\n", "\r\n"]), st.integers(1, 400))
def test_the_fast_path_and_the_diagnosis_agree_on_running_line_numbers(edits, first, newline, size):
    assert check(text(running(journal(), first), newline=newline))[0] == []
    data = text(running(journal(), first), newline=newline).decode()
    for position, length, value in edits:
        position %= len(data) + 1
        data = data[:position] + value + data[position + length:]
    data = data.encode()
    expected = slow_check(data)
    assert check(data) == expected
    checker = JournalCheck(Options(START, END))
    assert (list(checker.run(data[i:i + size] for i in range(0, len(data), size))), checker.summary) == expected


def test_a_long_journal_numbered_either_way_passes_by_the_fast_path():
    for first in (None, 1, 123_456):
        records, counter = [y()], 0
        for entry in range(1, 2_001):
            records.append(h(entry, "2025-01-10", "5.00"))
            for number, code in ((1, "D"), (2, "C"), (3, "C")):
                counter += 1
                amount = "5.00" if code == "D" else "2.50"
                records.append(line(number if first is None else first + counter - 1, counter, "120", "", amount,
                                    code, "2025-01-10"))
        data = text(records)
        findings, summary = check(data)
        assert findings == [] and summary.entry_lines == 6_000
        records[-1][1]["lineNumber"] = "1" if first is not None else "4"
        assert check(text(records))[0][0].line == len(records)
