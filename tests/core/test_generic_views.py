"""The generic list / detail / edit / delete / bulk-action views, exercised on the test app's Probe
(a RemoteRecord) with a URLconf of this module: the way a domain app will use them."""

from io import BytesIO

import pytest
from django import forms
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import include, path
from openpyxl import load_workbook

from backoffice.core.choices import Role, SyncState
from backoffice.core.generic import (
    BaseFilterSet,
    BaseTable,
    BulkAction,
    BulkActionView,
    ChoiceBadgeColumn,
    DateTimeColumn,
    LinkedColumn,
    ObjectDeleteView,
    ObjectDetailView,
    ObjectEditView,
    ObjectListView,
    bulk_delete,
    get_model_urls,
    model_url,
    register_model_views,
)
from backoffice.core.generic.registry import register_model_view
from tests.conftest import form_post, guard_fields
from tests.testapp.models import Probe

ANY_ROLE = (Role.ACCOUNTING, Role.MANAGER, Role.ADMINISTRATOR)


class ProbeTable(BaseTable):
    remote_id = LinkedColumn()
    sync_state = ChoiceBadgeColumn(SyncState)
    created_at = DateTimeColumn()

    class Meta(BaseTable.Meta):
        model = Probe
        fields = ("remote_id", "sync_state", "attempts", "last_error", "created_at")


class ProbeFilterSet(BaseFilterSet):
    search_fields = ("remote_id", "last_error")

    class Meta:
        model = Probe
        fields = ("q", "sync_state")


class ProbeForm(forms.ModelForm):
    class Meta:
        model = Probe
        fields = ("remote_id", "attempts")

    def clean_remote_id(self):
        value = self.cleaned_data["remote_id"]
        if not value.startswith("P"):
            raise forms.ValidationError("A probe id starts with P.")
        return value


class ProbeListView(ObjectListView):
    required_roles = ANY_ROLE
    queryset = Probe.objects.all()
    table = ProbeTable
    filterset = ProbeFilterSet


class ProbeDetailView(ObjectDetailView):
    required_roles = ANY_ROLE
    queryset = Probe.objects.all()


class ProbeEditView(ObjectEditView):
    required_roles = (Role.ACCOUNTING, Role.ADMINISTRATOR)
    queryset = Probe.objects.all()
    form = ProbeForm


def requeue(request, queryset):
    return queryset.update(sync_state=SyncState.QUEUED)


class ProbeBulkView(BulkActionView):
    required_roles = ANY_ROLE
    queryset = Probe.objects.all()
    actions = {
        "requeue": BulkAction("Send again", requeue),
        "delete": BulkAction("Delete", bulk_delete, style="danger", required_roles=(Role.ADMINISTRATOR,)),
    }


register_model_views(Probe, prefix="probes", list=ProbeListView, detail=ProbeDetailView, edit=ProbeEditView,
                     bulk=ProbeBulkView)


@register_model_view(Probe, "delete")
class ProbeDeleteView(ObjectDeleteView):
    required_roles = (Role.ADMINISTRATOR,)
    queryset = Probe.objects.all()


urlpatterns = [
    path("", include("backoffice.urls")),
    path("", include((get_model_urls("testapp", "probe"), "testapp"))),
]

# The database engine matters here (list filtering, ordering and paging in SQL): CI's SQLite pass runs these too.
pytestmark = [pytest.mark.urls(__name__), pytest.mark.database]


def probes(company, count, **fields):
    return Probe.objects.bulk_create(
        [Probe(company=company, remote_id=f"P{i:04d}", **fields) for i in range(count)]
    )


@pytest.fixture
def signed_in(client, accountant):
    client.force_login(accountant)
    return client


# --- registry -------------------------------------------------------------------------------------

def test_the_registry_gives_every_action_its_url(company):
    probe = Probe.objects.create(company=company, remote_id="P1")
    assert model_url(Probe, "list") == "/probes/"
    assert model_url(Probe, "add") == "/probes/add/"  # edit also serves add
    assert model_url(probe, "detail") == f"/probes/{probe.pk}/"
    assert model_url(probe, "edit") == f"/probes/{probe.pk}/edit/"
    assert model_url(probe, "delete") == f"/probes/{probe.pk}/delete/"
    assert model_url(Probe, "bulk", action="requeue") == "/probes/bulk/requeue/"
    names = {pattern.name for pattern in get_model_urls("testapp", "probe")}
    assert names == {"probe_list", "probe_add", "probe_bulk", "probe_detail", "probe_edit", "probe_delete"}


def test_the_registry_refuses_unknown_actions_and_models():
    with pytest.raises(ValueError):
        register_model_views(Probe, archive=ProbeListView)
    with pytest.raises(LookupError):
        get_model_urls("testapp", "localcall")


# --- list -----------------------------------------------------------------------------------------

def test_the_list_shows_the_active_companys_records_only(signed_in, company, other_company):
    probes(company, 3)
    Probe.objects.create(company=other_company, remote_id="PFOREIGN")
    response = signed_in.get("/probes/")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count('name="pk"') == 3  # selection checkboxes: bulk actions are available
    assert "PFOREIGN" not in html
    assert 'class="badge text-bg-secondary"' in html  # the sync state badge
    assert f'href="/probes/{Probe.objects.filter(company=company).first().pk}/"' in html  # linked column


def test_search_and_filter(signed_in, company):
    probes(company, 4)
    Probe.objects.filter(remote_id="P0001").update(last_error="platform said no", sync_state=SyncState.FAILED)
    html = signed_in.get("/probes/", {"q": "said no"}).content.decode()
    assert "P0001" in html and "P0002" not in html
    html = signed_in.get("/probes/", {"sync_state": SyncState.FAILED}).content.decode()
    assert "P0001" in html and "P0000" not in html
    html = signed_in.get("/probes/", {"q": "nothing like this"}).content.decode()
    assert "Nothing matches these filters" in html or "filtrelere uyan kayıt yok" in html


def test_pagination_per_page_and_sorting(signed_in, company):
    probes(company, 60)
    html = signed_in.get("/probes/").content.decode()
    assert html.count('name="pk"') == 50  # 50 per page by default
    assert "page=2" in html
    assert signed_in.get("/probes/", {"page": 2}).content.decode().count('name="pk"') == 10
    assert signed_in.get("/probes/", {"per_page": 25}).content.decode().count('name="pk"') == 25
    # A per-page value that is not offered falls back to the default; a page past the end to the last.
    assert signed_in.get("/probes/", {"per_page": 100000}).content.decode().count('name="pk"') == 50
    assert signed_in.get("/probes/", {"page": 99}).status_code == 200
    html = signed_in.get("/probes/", {"sort": "-remote_id", "per_page": 25}).content.decode()
    assert html.index("P0059") < html.index("P0058")


def test_htmx_gets_the_table_alone(signed_in, company):
    probes(company, 2)
    response = signed_in.get("/probes/", {"q": "P"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="object-list")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith("<div id=\"object-list\"") or 'id="object-list"' in html[:300]
    assert "<html" not in html and "app-sidebar" not in html
    full = signed_in.get("/probes/").content.decode()
    assert "<html" in full and 'hx-target="#object-list"' in full


def test_the_list_page_costs_the_same_number_of_queries_for_5_or_50_rows(signed_in, company):
    probes(company, 5)
    signed_in.get("/probes/")  # warm caches (content types, session)
    with CaptureQueriesContext(connection) as few:
        assert signed_in.get("/probes/").status_code == 200
    probes(company, 45)
    with CaptureQueriesContext(connection) as many:
        assert signed_in.get("/probes/").content.decode().count('name="pk"') == 50
    assert len(many.captured_queries) == len(few.captured_queries), [q["sql"] for q in many.captured_queries]


# --- export ---------------------------------------------------------------------------------------

def _workbook(response):
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    assert "attachment" in response["Content-Disposition"] and ".xlsx" in response["Content-Disposition"]
    return load_workbook(BytesIO(b"".join(response.streaming_content)))


def test_excel_export_of_the_current_filter(signed_in, company, other_company):
    probes(company, 70)  # more than a page: the export is not paginated
    Probe.objects.filter(remote_id__in=["P0003", "P0004"]).update(sync_state=SyncState.FAILED,
                                                                  last_error="=HYPERLINK(\"http://x\")")
    Probe.objects.create(company=other_company, remote_id="P0003", sync_state=SyncState.FAILED)
    sheet = _workbook(signed_in.get("/probes/", {"export": "xlsx"})).active
    assert sheet.max_row == 71  # header + 70
    sheet = _workbook(signed_in.get("/probes/", {"export": "xlsx", "sync_state": SyncState.FAILED})).active
    rows = list(sheet.iter_rows(values_only=True))
    header, data = rows[0], rows[1:]
    assert len(header) == 5 and "pk" not in header  # the selection column is not exported
    assert sorted(row[0] for row in data) == ["P0003", "P0004"]  # the other company's P0003 is not
    assert {row[1] for row in data} == {str(SyncState.FAILED.label)}  # the label, not the badge HTML
    assert all(row[4].tzinfo is None for row in data)  # real (local) datetimes
    # Someone else's text never becomes a formula.
    cell = sheet.cell(row=2, column=4)
    assert cell.value.startswith("=HYPERLINK") and cell.data_type == "s"


# --- detail, edit, delete -------------------------------------------------------------------------

def test_detail(signed_in, company):
    probe = Probe.objects.create(company=company, remote_id="P42", last_error="line one\nline two")
    html = signed_in.get(f"/probes/{probe.pk}/").content.decode()
    assert "P42" in html and "<pre" in html
    assert f"/probes/{probe.pk}/edit/" in html
    assert f"/probes/{probe.pk}/delete/" not in html  # deleting needs the administrator role


def test_create_sets_the_active_company_and_says_so(signed_in, company):
    response = form_post(signed_in, "/probes/add/", {"remote_id": "P77", "attempts": 0}, follow=True)
    probe = Probe.objects.get(remote_id="P77")
    assert probe.company == company
    assert response.redirect_chain[-1][0] == f"/probes/{probe.pk}/"
    assert any(str(probe) in str(message) for message in response.context["messages"])


def test_form_errors_are_shown_on_the_field(signed_in, company):
    probe = Probe.objects.create(company=company, remote_id="P1")
    response = signed_in.post(f"/probes/{probe.pk}/edit/", {"remote_id": "X1", "attempts": "many"})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="id_remote_id_errors"' in html and "A probe id starts with P." in html
    assert 'id="id_attempts_errors"' in html
    assert html.count("is-invalid") >= 2
    probe.refresh_from_db()
    assert probe.remote_id == "P1"


def test_update_returns_to_a_local_return_url_only(signed_in, company):
    probe = Probe.objects.create(company=company, remote_id="P1")
    response = signed_in.post(f"/probes/{probe.pk}/edit/", {"remote_id": "P2", "attempts": 1,
                                                             "return_url": "/probes/?q=P"})
    assert response["Location"] == "/probes/?q=P"
    response = signed_in.post(f"/probes/{probe.pk}/edit/", {"remote_id": "P3", "attempts": 1,
                                                             "return_url": "https://evil.example.com/"})
    assert response["Location"] == f"/probes/{probe.pk}/"


def test_delete_asks_for_confirmation_first(client, administrator, company):
    probe = Probe.objects.create(company=company, remote_id="P9")
    client.force_login(administrator)
    response = client.get(f"/probes/{probe.pk}/delete/")
    assert response.status_code == 200
    assert str(probe) in response.content.decode() and 'method="post"' in response.content.decode()
    assert Probe.objects.filter(pk=probe.pk).exists()  # looking is harmless
    response = client.post(f"/probes/{probe.pk}/delete/")
    assert response["Location"] == "/probes/"
    assert not Probe.objects.filter(pk=probe.pk).exists()


def test_another_companys_record_is_a_404_for_every_action(client, administrator, other_company):
    probe = Probe.objects.create(company=other_company, remote_id="P5")
    client.force_login(administrator)
    for url in (f"/probes/{probe.pk}/", f"/probes/{probe.pk}/edit/", f"/probes/{probe.pk}/delete/"):
        assert client.get(url).status_code == 404
    for url in (f"/probes/{probe.pk}/edit/", f"/probes/{probe.pk}/delete/"):
        assert client.post(url, {"remote_id": "P6", "attempts": 0}).status_code == 404
    probe.refresh_from_db()
    assert probe.remote_id == "P5"


def test_roles_of_each_view(client, manager, company):
    probe = Probe.objects.create(company=company, remote_id="P1")
    client.force_login(manager)
    assert client.get("/probes/").status_code == 200
    assert client.get(f"/probes/{probe.pk}/edit/").status_code == 403  # edit: accounting or administrator
    assert "/probes/add/" not in client.get("/probes/").content.decode()  # no button for what is refused


# --- bulk actions ---------------------------------------------------------------------------------

def test_bulk_action_confirms_then_acts_on_the_selection(signed_in, company, other_company):
    mine = probes(company, 3, sync_state=SyncState.FAILED)
    foreign = Probe.objects.create(company=other_company, remote_id="PX", sync_state=SyncState.FAILED)
    selection = [mine[0].pk, mine[1].pk, foreign.pk]
    response = signed_in.post("/probes/bulk/requeue/", {"pk": selection, "return_url": "/probes/"})
    assert response.status_code == 200
    html = response.content.decode()
    listed = lambda obj: f">{obj}</li>" in html  # noqa: E731
    assert "Send again" in html and listed(mine[0]) and listed(mine[1])
    assert not listed(foreign) and not listed(mine[2])
    assert Probe.objects.filter(sync_state=SyncState.QUEUED).count() == 0  # nothing happened yet

    response = signed_in.post("/probes/bulk/requeue/", {"pk": selection, "confirm": "1", "return_url": "/probes/"})
    assert response["Location"] == "/probes/"
    assert set(Probe.objects.filter(sync_state=SyncState.QUEUED).values_list("pk", flat=True)) == {
        mine[0].pk, mine[1].pk}  # not the third, not the other company's


def test_bulk_action_without_selection_or_role(signed_in, company):
    probe = Probe.objects.create(company=company, remote_id="P1")
    response = signed_in.post("/probes/bulk/requeue/", {"return_url": "/probes/"}, follow=True)
    assert any("Select at least one" in str(m) or "en az bir" in str(m) for m in response.context["messages"])
    assert signed_in.post("/probes/bulk/archive/", {"pk": [probe.pk]}).status_code == 404
    assert signed_in.post("/probes/bulk/delete/", {"pk": [probe.pk], "confirm": "1"}).status_code == 403
    assert Probe.objects.filter(pk=probe.pk).exists()
    # The list offers only the actions this user may run.
    html = signed_in.get("/probes/").content.decode()
    assert 'data-bulk-action="requeue"' in html and 'data-bulk-action="delete"' not in html


def test_bulk_delete(client, administrator, company):
    made = probes(company, 3)
    client.force_login(administrator)
    client.post("/probes/bulk/delete/", {"pk": [p.pk for p in made[:2]], "confirm": "1"})
    assert list(Probe.objects.values_list("remote_id", flat=True)) == ["P0002"]


# --- templates ------------------------------------------------------------------------------------

def test_a_model_template_overrides_the_generic_one(signed_in, company, settings, tmp_path):
    (tmp_path / "testapp").mkdir()
    (tmp_path / "testapp" / "probe_detail.html").write_text("OVERRIDDEN {{ object.remote_id }}")
    probe = Probe.objects.create(company=company, remote_id="P1")
    assert "OVERRIDDEN" not in signed_in.get(f"/probes/{probe.pk}/").content.decode()
    templates = [dict(settings.TEMPLATES[0])]
    templates[0]["DIRS"] = [tmp_path, *templates[0]["DIRS"]]
    settings.TEMPLATES = templates
    assert signed_in.get(f"/probes/{probe.pk}/").content.decode() == "OVERRIDDEN P1"


def test_every_generic_create_form_is_guarded(signed_in, company):
    """The generic create page carries the one-time key and the company (core.submissions): sent twice, one
    record; sent without them, nothing."""

    page = signed_in.get("/probes/add/").content.decode()
    guard = guard_fields(page)
    assert guard["opened_for"] == str(company.pk)
    first = signed_in.post("/probes/add/", {**guard, "remote_id": "P78", "attempts": 0})
    again = signed_in.post("/probes/add/", {**guard, "remote_id": "P79", "attempts": 0})
    probe = Probe.objects.get()
    assert first.status_code == again.status_code == 302 and again["Location"] == f"/probes/{probe.pk}/"
    bare = signed_in.post("/probes/add/", {"remote_id": "P80", "attempts": 0})
    assert bare.status_code == 200 and Probe.objects.count() == 1
