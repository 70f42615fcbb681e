"""Kept documents declared once (core.documents, core.generic.documents), on the test app's Memo: keep() fetches
once and keeps, fetches again after a status change or a later push, refuses an oversized answer, never writes
outside the media folder whatever the platform calls the record; the page registered with one line shows them."""

from datetime import timedelta
from pathlib import Path

import pytest
from django.db import IntegrityError
from django.utils import timezone

from backoffice.core.choices import SyncState
from backoffice.core.documents import DocumentTooLarge, NotOnPlatform, file_name, keep
from backoffice.core.generic.documents import HTML_POLICY
from tests.testapp import views as memo_pages
from tests.testapp.models import Memo, MemoDocument
from tests.tickets.conftest import login

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.testapp.urls")]

PDF = b"%PDF-1.7\n1 0 obj<<>>endobj\n%%EOF\n"


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def fetched():
    memo_pages.FETCHED.clear()
    return memo_pages.FETCHED


def memo(company, **fields):
    values = {"title": "Memo 1", "remote_id": "M-0001", "remote_status": 0, "sync_state": SyncState.SYNCED, **fields}
    return Memo.objects.create(company=company, **values)


class Platform:
    """fetch() of keep(): the answers in turn, each call counted."""

    def __init__(self, *answers):
        self.answers, self.calls = list(answers), 0

    def __call__(self):
        self.calls += 1
        return self.answers.pop(0)


def kept(record, kind, platform, name="M-0001", standard=True):
    return keep(record, kind, platform, model=MemoDocument, owner="memo", name=name, standard=standard)


def files_under(folder: Path) -> list:
    return sorted(path for path in folder.rglob("*") if path.is_file())


# --- keep() -------------------------------------------------------------------------------------------------------
def test_keep_fetches_once_and_keeps(company, media):
    record = memo(company)
    platform = Platform((PDF, "application/pdf"))
    document = kept(record, "pdf", platform)
    assert platform.calls == 1
    assert document.file.read() == PDF and document.content_type == "application/pdf"
    assert document.status == 0 and document.file.name.endswith("/M-0001.pdf")
    again = kept(record, "pdf", platform)
    assert platform.calls == 1 and again.pk == document.pk  # kept: no second call
    assert MemoDocument.objects.count() == 1
    # Each kind and each layout is a copy of its own.
    kept(record, "pdf", Platform((PDF, "")), standard=False)
    assert MemoDocument.objects.count() == 2


def test_a_status_change_fetches_again_and_replaces_the_old_file(company, media, django_capture_on_commit_callbacks):
    record = memo(company)
    first = kept(record, "pdf", Platform((PDF, "application/pdf")))
    old = Path(first.file.path)
    Memo.objects.filter(pk=record.pk).update(remote_status=60)
    record.refresh_from_db()
    platform = Platform((PDF + b"approved", "application/pdf"))
    with django_capture_on_commit_callbacks(execute=True):
        second = kept(record, "pdf", platform)
    assert platform.calls == 1 and second.pk == first.pk and second.status == 60
    assert second.file.read() == PDF + b"approved"
    assert not old.exists()  # replaced, not piled up
    assert files_under(media) == [Path(second.file.path)]


def test_a_later_push_fetches_again(company, media):
    record = memo(company)
    kept(record, "html", Platform((b"<p>before</p>", "text/html")))
    Memo.objects.filter(pk=record.pk).update(synced_at=timezone.now() + timedelta(seconds=1))  # pushed since
    record.refresh_from_db()
    platform = Platform((b"<p>after</p>", "text/html"))
    assert kept(record, "html", platform).file.read() == b"<p>after</p>" and platform.calls == 1


def test_an_oversized_answer_is_refused_and_nothing_is_kept(company, media, settings):
    settings.PLATFORM_DOCUMENT_MAX_BYTES = 1024
    record = memo(company)
    with pytest.raises(DocumentTooLarge) as refused:
        kept(record, "pdf", Platform((b"%PDF" + b"x" * 1024, "application/pdf")))
    assert refused.value.permanent and "MB" in refused.value.user_message()
    assert MemoDocument.objects.count() == 0 and files_under(media) == []
    # The kept copy stays when the new answer is refused.
    copy = kept(record, "pdf", Platform((PDF, "application/pdf")))
    Memo.objects.filter(pk=record.pk).update(remote_status=60)
    record.refresh_from_db()
    with pytest.raises(DocumentTooLarge):
        kept(record, "pdf", Platform((b"y" * 2048, "application/pdf")))
    copy.refresh_from_db()
    assert copy.status == 0 and copy.file.read() == PDF


@pytest.mark.parametrize("name", ["../../../etc/passwd", "/tmp/evil", "..", "a/../../b\\c", "", "ÇĞ İŞ/..\x00"])
def test_the_platforms_names_never_leave_the_media_folder(company, media, tmp_path, name):
    record = memo(company)
    document = kept(record, "ubl", Platform((b"<Invoice/>", "application/xml")), name=name)
    path = Path(document.file.path).resolve()
    assert path.is_relative_to(Path(media).resolve() / "testapp" / "documents")
    assert "/" not in file_name(name, "ubl") and file_name(name, "ubl").endswith(".xml")
    assert files_under(tmp_path) == [path]


def test_not_on_the_platform_yet_asks_nothing(company, media, fetched):
    record = memo(company, remote_id="")
    with pytest.raises(NotOnPlatform, match="Not on the platform yet."):
        memo_pages.MEMO_DOCUMENTS.get(record, "pdf")
    assert fetched == []


def test_a_copy_kept_at_the_same_moment_elsewhere_wins(company, media):
    record = memo(company)

    def platform():  # another tab keeps its copy while this one waits for the platform
        other = MemoDocument(memo=record, kind="pdf", standard=True, status=0, content_type="application/pdf")
        other.file.name = "testapp/documents/other.pdf"
        other.save()
        return PDF, "application/pdf"

    document = kept(record, "pdf", platform)
    assert document.file.name == "testapp/documents/other.pdf"
    assert MemoDocument.objects.count() == 1 and files_under(media) == []  # ours was not left behind


def test_the_declaration_fetches_each_layout_and_one_ubl(company, media, fetched):
    record = memo(company)
    documents = memo_pages.MEMO_DOCUMENTS
    assert documents.get(record, "html", standard=False).file.read() == b"<p>Memo 1 (company layout)</p>"
    documents.get(record, "ubl", standard=False)
    documents.get(record, "ubl")  # the UBL has one layout: kept once
    assert fetched == [(record.pk, "html", False), (record.pk, "ubl", True)]
    with pytest.raises(ValueError):
        documents.get(record, "zip")


def test_kept_for_many_records_in_one_query(company, media, django_assert_num_queries):
    records = [memo(company, remote_id=f"M-{index}") for index in range(3)]
    documents = memo_pages.MEMO_DOCUMENTS
    documents.get(records[0], "pdf")
    documents.get(records[1], "pdf")
    Memo.objects.filter(pk=records[1].pk).update(remote_status=60)  # moved on: its copy is old
    with django_assert_num_queries(1):
        assert documents.kept_for(records, "pdf") == {records[0].pk}


# --- the page -------------------------------------------------------------------------------------------------
@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def page(record, kind, query=""):
    return f"/memos/{record.pk}/document/{kind}/{query}"


def test_the_page_shows_a_kept_document_and_asks_once(web, company, media, fetched):
    record = memo(company)
    response = web.get(page(record, "pdf"))
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert b"".join(response.streaming_content).startswith(b"%PDF")
    html = web.get(page(record, "html"))
    assert html.status_code == 200 and "&lt;p&gt;Memo 1&lt;/p&gt;" in html.content.decode()
    ubl = web.get(page(record, "ubl"))
    assert ubl["Content-Disposition"].startswith("attachment") and ubl["Content-Security-Policy"] == HTML_POLICY
    web.get(page(record, "pdf"))
    assert fetched == [(record.pk, "pdf", True), (record.pk, "html", True), (record.pk, "ubl", True)]
    assert web.get(page(record, "zip")).status_code == 404  # not a kind of this record


def test_the_page_says_why_there_is_no_document(web, company, media, settings):
    waiting = memo(company, remote_id="")
    response = web.get(page(waiting, "pdf"))
    assert response.status_code == 409 and "Not on the platform yet." in response.content.decode()
    settings.PLATFORM_DOCUMENT_MAX_BYTES = 10
    response = web.get(page(memo(company, remote_id="M-2"), "pdf"))
    assert response.status_code == 502 and "larger than" in response.content.decode()


def test_another_companys_record_is_a_404_and_a_visitor_sees_nothing(client, web, company, other_company, media,
                                                                      fetched):
    theirs = memo(other_company)
    assert web.get(page(theirs, "pdf")).status_code == 404
    client.logout()
    assert client.get(page(memo(company, remote_id="M-3"), "pdf")).status_code in (302, 403)
    assert fetched == []


def test_a_race_on_the_unique_key_is_an_integrity_error_of_the_model(company, media):
    """The premise of test_a_copy_kept_at_the_same_moment_elsewhere_wins: one copy per record, kind and layout."""
    record = memo(company)
    MemoDocument.objects.create(memo=record, kind="pdf", content_type="")
    with pytest.raises(IntegrityError):
        MemoDocument.objects.create(memo=record, kind="pdf", content_type="")
