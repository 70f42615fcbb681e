"""An edit page with lines and a typeahead declared on core's edit view (ObjectEditView.formsets and .lookups,
core.generic.lines), on the test app's Memo: the record and its lines saved in one transaction, nothing half-saved
when a line is invalid or the save is refused, back-and-resubmit makes no second record; the lookup answers only
the user's company's records and needs a signed-in editor."""

import pytest
from django.urls import reverse

from backoffice.core.choices import SyncState
from backoffice.core.generic.registry import model_url
from backoffice.current_accounts.models import CurrentAccount
from tests.conftest import form_post, guard_fields, make_user
from tests.testapp import views as memo_pages
from tests.testapp.models import Memo, MemoLine
from tests.tickets.conftest import login

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.testapp.urls")]

ADD = "/memos/add/"


@pytest.fixture
def web(client, accountant, company):
    return login(client, accountant, company)


def memo_data(*lines, title="Memo", initial=0, **extra):
    data = {"title": title, "lines-TOTAL_FORMS": str(len(lines)), "lines-INITIAL_FORMS": str(initial),
            "lines-MIN_NUM_FORMS": "1", "lines-MAX_NUM_FORMS": "5", **extra}
    for index, line in enumerate(lines):
        data.update({f"lines-{index}-{name}": value for name, value in line.items()})
    return data


def test_the_page_gives_the_lines_by_name_with_their_empty_form(web, company):
    memo = Memo.objects.create(company=company, title="Memo")
    MemoLine.objects.create(memo=memo, text="first", quantity=2)
    response = web.get(model_url(memo, "edit"))
    assert response.status_code == 200
    lines = response.context["lines"]
    assert lines.prefix == "lines" and [form.instance.text for form in lines.forms] == ["first"]
    html = response.content.decode()
    assert 'name="lines-0-text"' in html and 'name="lines-__prefix__-text"' in html  # the "add a line" template
    assert 'name="lines-TOTAL_FORMS"' in html


def test_the_record_and_its_lines_are_saved_together(web, company):
    response = form_post(web, ADD, memo_data({"text": "one", "quantity": "1"}, {"text": "two", "quantity": "3"}))
    memo = Memo.objects.get()
    assert response.status_code == 302 and response["Location"] == model_url(memo, "detail")
    assert memo.company == company
    assert list(memo.lines.values_list("text", "quantity")) == [("one", 1), ("two", 3)]


def test_an_invalid_line_saves_nothing_and_says_so_on_its_field(web, company):
    response = form_post(web, ADD, memo_data({"text": "one", "quantity": "1"}, {"text": "two", "quantity": "0"}))
    assert response.status_code == 400
    assert response.context["lines"].forms[1].errors == {"quantity": ["A line needs a quantity."]}
    assert not Memo.objects.exists() and not MemoLine.objects.exists()
    response = form_post(web, ADD, memo_data())  # no line at all
    assert response.status_code == 400 and response.context["lines"].non_form_errors()
    assert not Memo.objects.exists()


def test_a_refused_save_keeps_nothing_of_the_record(web, company, monkeypatch):
    def refuse(formset, *args, **kwargs):
        raise memo_pages.MemoRefused("The platform's rules refuse this memo.")

    monkeypatch.setattr(memo_pages.MemoLineFormSet, "save", refuse)  # the record is saved by then
    response = form_post(web, ADD, memo_data({"text": "one", "quantity": "1"}))
    assert response.status_code == 400
    assert response.context["form"].non_field_errors() == ["The platform's rules refuse this memo."]
    assert not Memo.objects.exists()


def test_back_and_resubmit_makes_no_second_record(web, company):
    page = web.get(ADD).content.decode()
    data = {**guard_fields(page), **memo_data({"text": "one", "quantity": "1"})}
    first = web.post(ADD, data)
    second = web.post(ADD, data)
    memo = Memo.objects.get()
    assert first.status_code == 302 and second.status_code == 302
    assert second["Location"] == model_url(memo, "detail") and memo.lines.count() == 1


def test_an_update_changes_adds_and_removes_lines(web, company):
    memo = Memo.objects.create(company=company, title="Memo")
    keep, drop = (MemoLine.objects.create(memo=memo, text=text, quantity=1) for text in ("keep", "drop"))
    data = memo_data({"id": str(keep.pk), "memo": str(memo.pk), "text": "kept", "quantity": "4"},
                     {"id": str(drop.pk), "memo": str(memo.pk), "text": "drop", "quantity": "1", "DELETE": "on"},
                     {"text": "new", "quantity": "2"}, title="Memo 2", initial=2)
    response = web.post(model_url(memo, "edit"), data)
    assert response.status_code == 302, response.context and response.context["lines"].errors
    memo.refresh_from_db()
    assert memo.title == "Memo 2"
    assert list(memo.lines.values_list("text", "quantity")) == [("kept", 4), ("new", 2)]


def test_another_companys_record_is_a_404(web, other_company):
    theirs = Memo.objects.create(company=other_company, title="Theirs")
    assert web.get(f"/memos/{theirs.pk}/edit/").status_code == 404
    assert web.post(f"/memos/{theirs.pk}/edit/", memo_data({"text": "x", "quantity": "1"})).status_code == 404
    assert not MemoLine.objects.exists()


# --- the lookup -----------------------------------------------------------------------------------------------
def account(company, identifier, name):
    return CurrentAccount.objects.create(company=company, identifier=identifier, name=name, remote_id=identifier,
                                         sync_state=SyncState.SYNCED)


def test_the_lookup_is_registered_as_the_models_view(company):
    assert reverse("testapp:memo_account") == "/memos/account/" == model_url(Memo, "account")


def test_the_lookup_answers_with_the_users_companys_records_only(web, company, other_company):
    ours = account(company, "1234567890", "Ayşe Yılmaz Ltd.")
    account(other_company, "1234567891", "Ayla Başka A.Ş.")
    response = web.get("/memos/account/", {"account": "12345"})
    assert response.status_code == 200
    assert [option.pk for option in response.context["options"]] == [ours.pk]
    html = response.content.decode()
    assert "Ayşe Yılmaz" in html and "Ayla" not in html
    chosen = web.get("/memos/account/", {"account": "1234567890"})
    assert chosen.context["account"] == ours and chosen.context["identifier"] == "1234567890"
    # Another company's id names nothing here, and says what to type.
    theirs = web.get("/memos/account/", {"account": "1234567891"})
    assert theirs.context["account"] is None and theirs.context["options"] == []
    assert theirs.context["error"] and "Ayla" not in theirs.content.decode()


def test_the_lookup_waits_for_two_characters(web, company):
    account(company, "1234567890", "Ayşe Yılmaz Ltd.")
    response = web.get("/memos/account/", {"account": "1"})
    assert response.context["options"] == [] and response.context["error"] == ""


def test_the_lookup_needs_a_signed_in_editor(client, company):
    account(company, "1234567890", "Ayşe Yılmaz Ltd.")
    answer = client.get("/memos/account/", {"account": "Ayşe"})
    assert answer.status_code in (302, 403) and "Ayşe" not in answer.content.decode()
    reader = login(client, make_user("okur", "manager", [company]), company)
    assert reader.get("/memos/account/", {"account": "Ayşe"}).status_code == 403


def test_a_view_that_names_its_save_service_hands_it_the_unsaved_record_its_lines_and_the_user(
        web, accountant, company, monkeypatch):
    seen = {}

    def memo_save(memo, lines, *, user):
        seen.update(saved_before=memo.pk is not None, lines=[(line.text, line.quantity) for line in lines], user=user)
        memo.save()
        for line in lines:
            line.memo = memo
            line.save()
        return memo

    monkeypatch.setattr(memo_pages.MemoEditView, "saves", staticmethod(memo_save))
    response = form_post(web, ADD, memo_data({"text": "one", "quantity": "1"}, {"text": "two", "quantity": "3"}))
    memo = Memo.objects.get()
    assert response.status_code == 302 and response["Location"] == model_url(memo, "detail")
    assert seen == {"saved_before": False, "lines": [("one", 1), ("two", 3)], "user": accountant}
    assert list(memo.lines.values_list("text", "quantity")) == [("one", 1), ("two", 3)]


def test_a_save_service_that_refuses_keeps_nothing_and_says_why_on_the_form(web, company, monkeypatch):
    def memo_save(memo, lines, *, user):
        memo.save()  # then the domain's rule refuses: the whole save is undone
        raise memo_pages.MemoRefused("The platform's rules refuse this memo.")

    monkeypatch.setattr(memo_pages.MemoEditView, "saves", staticmethod(memo_save))
    response = form_post(web, ADD, memo_data({"text": "one", "quantity": "1"}))
    assert response.status_code == 400
    assert response.context["form"].non_field_errors() == ["The platform's rules refuse this memo."]
    assert not Memo.objects.exists()
