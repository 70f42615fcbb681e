"""Core pieces the domains share instead of writing them each (issue 31): "Send again" (core.batch), the domain's own
rules before an action (ActionSet.check), the documented rate limit of an operation (core.platform), the asking of
statuses one record at a time (core.polling), a dashboard list with its counts (core.dashboard), an upload's size
limit and a tax id field (core.fields), the form's company (ObjectEditView.form_company), a form's errors on an
import row (core.imports) and the units a line offers (core.generic.lines)."""

from types import SimpleNamespace

import pytest
from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Q
from django.test import RequestFactory
from django.utils.translation import override

from backoffice.core import actions, batch, codes, platform, polling
from backoffice.core.choices import SyncState
from backoffice.core.dashboard import ROWS, counted
from backoffice.core.fields import SizedFileField, TaxIdField
from backoffice.core.generic.lines import UNIT_CHOICES_SHOWN, unit_choices, units_shown
from backoffice.core.generic.registry import model_url
from backoffice.core.generic.views import ObjectEditView
from backoffice.core.imports import Checked, form_errors
from backoffice.core.registry import registry
from backoffice.core.roles import EDITORS
from backoffice.dispatch.models import DispatchLine, DispatchNote
from backoffice.remote import endpoints, ratelimit
from backoffice.remote.errors import RateLimited, RemoteError
from tests.conftest import make_user
from tests.testapp.models import Probe


# --- "Send again" ----------------------------------------------------------------------------------------------
def test_the_resend_action_is_for_editors_with_the_domains_texts():
    action = batch.resend_action(refused="Only notes whose sending failed.", confirm="They are sent again.")
    with override("en"):
        assert (str(action.label), action.confirm, action.required_roles) == (
            "Send again", "They are sent again.", EDITORS)


@pytest.mark.django_db
def test_the_resend_action_refuses_a_selection_without_a_failed_record(company, monkeypatch):
    refused = []
    monkeypatch.setattr(batch.messages, "error", lambda request, message: refused.append(message))
    Probe.objects.create(company=company, sync_state=SyncState.SYNCED)
    action = batch.resend_action(refused="Only probes whose sending failed.", confirm="")
    assert action.function(None, Probe.objects.all()) == 0 and refused == ["Only probes whose sending failed."]


@pytest.mark.django_db
def test_the_resend_button_shows_for_an_editor_on_a_failed_idle_record(company, accountant):
    reader = make_user("okur", "manager", [company])  # reads, never sends
    note = DispatchNote(company=company, sync_state=SyncState.FAILED)
    url = model_url(DispatchNote, "bulk", action="resend")
    assert [(name, link, icon) for name, link, _label, _style, icon in batch.resend_buttons(note, accountant)] == [
        ("resend", url, "arrow-repeat")]
    assert batch.resend_buttons(note, reader) == []
    note.pending_action = "cancel"  # an action holds it
    assert batch.resend_buttons(note, accountant) == []
    assert len(batch.resend_buttons(note, accountant, ready=lambda record: True)) == 1  # the domain's own rule
    note.sync_state = SyncState.SYNCED
    assert batch.resend_buttons(note, accountant, ready=lambda record: True) == []


# --- the domain's own rules before an action ----------------------------------------------------------------------
def test_an_action_sets_check_runs_first(monkeypatch):
    seen = []

    def check(name, records):
        seen.append((name, records))
        raise actions.ActionRefused("the domain's rule")

    action_set = actions.ActionSet(client=None, check=check, empty="Select one.", actions=[actions.RecordAction(
        "close", "Close", call=None, leads_to=1, refused="%(numbers)s", done=str)])
    monkeypatch.setitem(registry["action_sets"], Probe, action_set)
    with pytest.raises(actions.ActionRefused, match="the domain's rule"):
        actions.action_request(Probe, "close", iter(()))
    assert seen == [("close", [])]  # a list, before the empty selection is refused


# --- the documented rate limit of an operation ---------------------------------------------------------------------
def test_the_rate_rule_of_an_operation_follows_the_deployments_endpoints(settings):
    endpoint = endpoints.resolve("invoice.outbox_status_list")
    assert platform.endpoint_of("invoice.outbox_status_list") == endpoint
    assert platform.rate_rule("invoice.outbox_status_list") == ratelimit.rule_for(endpoint.method, endpoint.path)
    assert platform.rate_rule("invoice.outbox_status_list") is not None
    settings.PLATFORM_ENDPOINTS = {"invoice.outbox_status_list": ("POST", "/v1/somewhere/else")}
    assert platform.endpoint_of("invoice.outbox_status_list").path == "/v1/somewhere/else"
    assert platform.rate_rule("invoice.outbox_status_list") is None


# --- statuses asked one record at a time ---------------------------------------------------------------------------
def test_ask_each_leaves_out_a_record_not_answered_and_stops_at_a_rate_limit():
    records = [SimpleNamespace(remote_id=name) for name in ("a", "b", "c")]

    def ask(remote_id):
        if remote_id == "b":
            raise RemoteError("busy")
        return {"status": remote_id}

    assert polling.ask_each(records, ask, "probe") == {"a": {"status": "a"}, "c": {"status": "c"}}

    def limited(remote_id):
        raise RateLimited(30)

    with pytest.raises(RateLimited):
        polling.ask_each(records, limited, "probe")


def test_changed_fields_are_those_that_differ_and_never_the_id():
    record = SimpleNamespace(remote_id="a", remote_status=10, status_message="")
    assert polling.changed_fields(record, {"remote_id": "b", "remote_status": 10, "status_message": ""}) is None
    assert polling.changed_fields(record, {"remote_id": "b", "remote_status": 20}) == {"remote_status": 20}


# --- a dashboard list with its counts ------------------------------------------------------------------------------
@pytest.mark.django_db
def test_counted_gives_the_first_rows_with_the_counts_of_the_whole_set(company):
    probes = [Probe.objects.create(company=company) for _ in range(ROWS + 2)]
    rows = counted(Probe.objects.order_by("pk"), Q(pk__in=[probes[0].pk, probes[-1].pk]))
    assert [row.pk for row in rows] == [probe.pk for probe in probes[:ROWS]]
    assert {(row.total, row.overdue_total) for row in rows} == {(ROWS + 2, 2)}


# --- an upload's size limit ----------------------------------------------------------------------------------------
def test_a_sized_file_field_refuses_a_larger_file():
    field = SizedFileField(max_bytes=1024 * 1024)
    small = SimpleUploadedFile("a.xml", b"x" * 1024 * 1024)
    assert field.clean(small) is small
    with override("en"), pytest.raises(ValidationError, match="larger than 1 MB"):
        field.clean(SimpleUploadedFile("b.xml", b"x" * (1024 * 1024 + 1)))


# --- the form's company ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("typed,kept,error", [
    ("", "", None), ("  1234567890 ", "1234567890", None), ("10000000146", "10000000146", None),
    ("1234567891", None, "VKN) is not valid"), ("10000000147", None, "TCKN) is not valid"),
    ("12345", None, "10 digits"),
    ("123456789012", None, "at most 11"),
])
def test_a_tax_id_field_keeps_a_valid_vkn_or_tckn_and_refuses_another_on_the_field(typed, kept, error):
    field = TaxIdField(required=False)
    if error is None:
        assert field.clean(typed) == kept
    else:
        with override("en"):
            with pytest.raises(ValidationError) as raised:
                field.clean(typed)
            assert error in " ".join(raised.value.messages)


def test_an_edit_view_gives_its_form_the_company_when_it_says_so():
    request = RequestFactory().get("/")
    request.company = object()
    plain, with_company = ObjectEditView(), type("CompanyEdit", (ObjectEditView,), {"form_company": True})()
    plain.request = with_company.request = request
    assert plain.get_form_kwargs() == {} and with_company.get_form_kwargs() == {"company": request.company}


# --- a form's errors on an import row -----------------------------------------------------------------------------
class CurrencyForm(forms.Form):
    code = forms.CharField()
    currency_code_id = forms.IntegerField()


def test_form_errors_land_in_the_column_their_key_names():
    checked = Checked(columns={"code": "A", "currency": "C"}, labels={"code": "Code", "currency": "Currency"})
    form_errors(checked, 7, CurrencyForm({"code": "", "currency_code_id": "x"}), keys={"currency_code_id": "currency"})
    assert [(error.row, error.column, error.header) for error in checked.errors] == [
        (7, "A", "Code"), (7, "C", "Currency")]


# --- the units a line offers ----------------------------------------------------------------------------------------
class UnitForm(forms.ModelForm):
    class Meta:
        model = DispatchLine
        fields = ("unit_code",)


def test_a_line_offers_the_most_used_units_and_its_own():
    shown = units_shown()
    assert len(list(shown)) == UNIT_CHOICES_SHOWN
    assert unit_choices(UnitForm()) is shown  # the same list for every line
    rare = next(code for code, _label in codes.choices(codes.UNIT_CODES)[UNIT_CHOICES_SHOWN:])
    offered = list(unit_choices(UnitForm(initial={"unit_code": rare})))
    assert offered[:UNIT_CHOICES_SHOWN] == list(shown) and offered[-1][0] == rare
