"""E-ledger pages: the platform's periods (progress of the task, parts, previews, the certificates), and the
journal workspace (a file checked line by line, its errors grouped and in Excel, the upload once it is clean).

Views validate, call one service and redirect; every queryset is the active company's (another company's
period or journal is a 404). The preview is the one place a view waits for the platform.
"""

from urllib.parse import urlencode

from django.contrib import messages
from django.db.models import Count
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions
from backoffice.core.generic.documents import document_response
from backoffice.core.generic.export import XLSX
from backoffice.core.generic.reading import register_read_view
from backoffice.core.generic.registry import model_url, register_model_view, register_model_views
from backoffice.core.generic.views import (BaseObjectView, BulkActionView, ObjectDetailView, ObjectEditView,
                                           ObjectListView)
from backoffice.core.jobs import runs_of
from backoffice.core.roles import EDITORS, EVERYONE, has_role
from backoffice.remote.errors import NoAnswer, RateLimited, RemoteError

from . import checking, mirror, periods, services, tables, workbook_writer
from .choices import CheckState, PreviewType
from .forms import JournalForm
from .journal_rules import RULES, field_label
from .models import Finding, Journal, Part, Period

FINDINGS_PER_PAGE = 100


def xlsx_download(filename, content=b"") -> HttpResponse:
    response = HttpResponse(content, content_type=XLSX)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


# --- periods -----------------------------------------------------------------------------------------------

class PeriodListView(ObjectListView):
    queryset = Period.objects.annotate(part_count=Count("parts"))
    table = tables.PeriodTable
    title = gettext_lazy("E-ledger periods")
    refresh_interval = 3

    def needs_refresh(self, queryset):
        return periods.unsettled_periods().filter(company=self.request.company).exists()


class PeriodDetailView(ObjectDetailView):
    fields = ("remote_id", "fiscal_year_start", "fiscal_year_end", "split_size", "time_stamp", "without_tax_detail",
              "is_liquidation", "is_active", "synced_at", "parts_read_at")

    def get_extra_context(self, period):
        parts = list(period.parts.prefetch_related("book_entries"))
        approved = period.remote_status in periods.approved_statuses()
        working = periods.unsettled_periods().filter(pk=period.pk).exists()
        return {
            "parts": [(part, [(kind, label, model_url(part, "preview", kind=kind))
                              for kind, label in PreviewType.choices
                              if kind != PreviewType.APPROVED_CERTIFICATE or approved]) for part in parts],
            "journals": list(period.journals.all()[:5]),
            "actions": actions.buttons(period, self.request.user),
            "may_edit": has_role(self.request.user, *EDITORS),
            "parts_url": model_url(period, "parts"),
            "runs": runs_of(period),
            "working": working,
            "refresh_interval": 3 if period.is_busy or working else None,
        }


class PeriodBulkView(BulkActionView):
    required_roles = EVERYONE
    actions = actions.bulk_actions(Period)


register_model_views(Period, prefix="", list=PeriodListView, detail=PeriodDetailView, bulk=PeriodBulkView)


register_read_view(Period, lambda company: mirror.mirror_request(company.pk), name="mirror", whole=True,
                   roles=EDITORS, message=gettext_lazy("Reading the periods from the platform."),
                   running=gettext_lazy("The periods are already being read from the platform."))
register_read_view(Period, mirror.parts_request, name="parts", message=gettext_lazy(
    "Reading the parts from the platform; this page shows them when done."))


@register_model_view(Part, "preview", prefix="parts", path="<id:pk>/preview/<int:kind>/")
class PartPreviewView(BaseObjectView):
    """A preview of a part as the platform makes it: shown in a sandboxed frame, or downloaded."""

    required_roles = EVERYONE
    section, tab = "ledger", "periods"  # a part has no list of its own: its period's
    action = "preview"  # its template: ledger/part_preview.html

    def get(self, request, pk, kind):
        part = get_object_or_404(self.get_queryset().select_related("period"), pk=pk)
        if kind not in PreviewType.values:
            raise Http404
        error, status = "", 200
        try:
            content, content_type = services.preview_fetch(part, kind)
        except RateLimited as exc:
            error, status = _("The platform allows only so many calls a minute; try again in %(seconds)s seconds.") % {
                "seconds": max(1, round(exc.wait))}, 429
        except NoAnswer:
            error, status = _("The platform did not answer in time. It may be busy: try again in a moment."), 504
        except RemoteError as exc:
            error, status = exc.user_message(), 502
        except services.LedgerError as exc:
            error, status = str(exc), 409
        context = {"object": part, "period": part.period, "kind": kind, "label": PreviewType(kind).label,
                   "detail_url": model_url(part.period, "detail")}
        if error:
            return self.render({**context, "error": error}, status=status)
        name = f"{part.period.fiscal_year_start or ''}-{part.index_number}-{PreviewType(kind).name.lower()}"
        is_html = "html" in content_type.lower()
        if request.GET.get("download") or not is_html and "pdf" not in content_type.lower():
            extension = "html" if is_html else "pdf" if "pdf" in content_type.lower() else "xml" \
                if "xml" in content_type.lower() else "bin"
            return document_response(content, filename=f"{name}.{extension}", content_type=content_type,
                                     download=True)
        if not is_html:  # a PDF: the browser shows it (sandboxed unless its bytes are a PDF)
            return document_response(content, filename=f"{name}.pdf", content_type=content_type, download=False)
        response = self.render({**context, "html": content.decode("utf-8", errors="replace")})
        response._csp_update = {"style-src": ["'unsafe-inline'"]}  # the frame's own styles; still no script
        return response


# --- journals ----------------------------------------------------------------------------------------------

class JournalListView(ObjectListView):
    queryset = Journal.objects.select_related("period", "created_by")
    table = tables.JournalTable
    title = gettext_lazy("Journals")
    refresh_interval = 3

    def needs_refresh(self, queryset):
        return queryset.filter(check_state__in=[CheckState.WAITING, CheckState.CHECKING]).exists() or \
            super().needs_refresh(queryset)


class JournalCreateView(ObjectEditView):
    form = JournalForm
    refused = services.LedgerError
    tab = "new"

    def get_form_kwargs(self):
        kwargs = {"company": self.request.company}
        if self.request.method == "GET":  # "Upload a corrected file": the form opens on the journal's fields
            kwargs["initial"] = {name: value for name, value in self.request.GET.items()
                                 if name in JournalForm.base_fields and name != "file"}
        return kwargs

    def save_form(self, form):
        data = form.cleaned_data
        return services.journal_create(
            company=self.request.company, user=self.request.user, source=data["file"], start=data["start_date"],
            end=data["end_date"], split_size=data["split_size"], time_stamp=data["time_stamp"],
            without_tax_detail=data["without_tax_detail"], y_line=form.y_line())

    def success_message(self, journal, is_new):
        return _("The journal is being checked; its errors, if any, show here line by line.")

    def render_form(self, obj, form, status=200):
        return self.render({"object": obj, "form": form, "is_new": True, "cancel_url": model_url(Journal, "list"),
                            "template_url": model_url(Journal, "template"), "rules": RULES},
                           status=status)


class JournalDetailView(ObjectDetailView):
    fields = ()

    def get_extra_context(self, journal):
        rule = self.request.GET.get("rule", "")
        findings = journal.findings.all()
        if rule:
            findings = findings.filter(rule=rule)
        try:
            page = min(max(1, int(self.request.GET.get("page", 1))), 10 ** 6)
        except ValueError:
            page = 1
        shown = list(findings.order_by("line", "pk")[(page - 1) * FINDINGS_PER_PAGE:page * FINDINGS_PER_PAGE + 1])
        for finding in shown:
            finding.sentence = RULES.get(finding.rule, finding.rule)
            finding.label = field_label(finding.field)
        by_rule = sorted(((code, RULES.get(code, code), count)
                          for code, count in (journal.findings_by_rule or {}).items()), key=lambda item: -item[2])
        checking_now = journal.check_state in (CheckState.WAITING, CheckState.CHECKING)
        return {
            "findings": shown[:FINDINGS_PER_PAGE], "rule": rule, "page": page,
            "next_page": page + 1 if len(shown) > FINDINGS_PER_PAGE else None,
            "previous_page": page - 1 if page > 1 else None,
            "by_rule": by_rule, "rules": RULES, "kept": journal.findings.count() if journal.findings_count
            else 0,
            "is_excel": journal.source_kind == "xlsx",
            "upload_url": model_url(journal, "upload"),
            "upload_refusal": services.upload_refusal(journal) if journal.check_state == CheckState.PASSED else "",
            "report_url": model_url(journal, "report"),
            "again_url": model_url(Journal, "add") + "?" + urlencode({
                "start_date": journal.start_date, "end_date": journal.end_date, "split_size": journal.split_size,
                **(journal.y_line or {})}),
            "may_edit": has_role(self.request.user, *EDITORS),
            "runs": runs_of(journal),
            "period": journal.period,
            "refresh_interval": 2 if checking_now or journal.is_busy or (
                journal.period_id and periods.unsettled_periods().filter(pk=journal.period_id).exists()) else None,
        }


register_model_views(Journal, prefix="journals", list=JournalListView, add=JournalCreateView,
                     detail=JournalDetailView)


@register_model_view(Journal, "upload", path="<id:pk>/upload/")
class JournalUploadView(BaseObjectView):
    """A confirmation first: an upload starts the platform's legally binding process."""

    required_roles = EDITORS
    action = "upload"  # its template: ledger/journal_upload.html

    def get(self, request, pk):
        journal = get_object_or_404(self.get_queryset(), pk=pk)
        refusal = services.upload_refusal(journal)
        return self.render({"object": journal, "refusal": refusal, "detail_url": model_url(journal, "detail"),
                            "archive_size": journal.archive.size if not refusal else 0})

    def post(self, request, pk):
        journal = get_object_or_404(self.get_queryset(), pk=pk)
        try:
            services.journal_upload_request(journal)
        except services.LedgerError as exc:
            messages.error(request, str(exc))
            return redirect(model_url(journal, "detail"))
        messages.success(request, _("The journal is on its way to the platform; its period's progress shows here."))
        return redirect(model_url(journal, "detail"))


class JournalFileView(BaseObjectView):
    """A file of the journal, downloaded by anyone who sees the journal."""

    model = Journal
    required_roles = EVERYONE

    def get(self, request, pk):
        return self.download(get_object_or_404(self.get_queryset(), pk=pk))


@register_model_view(Journal, "report", path="<id:pk>/errors.xlsx")
class JournalReportView(JournalFileView):
    """The journal's errors as an Excel file (the first LEDGER_FINDINGS_KEPT; the counts per rule are all)."""

    def download(self, journal):
        response = xlsx_download(f"journal-{journal.pk}-errors.xlsx")
        workbook_writer.findings_report(
            response, Finding.objects.filter(journal=journal).order_by("line", "pk").iterator(),
            journal.findings_by_rule or {}, source_rows=checking.source_rows(journal))
        return response


@register_model_view(Journal, "template", path="template.xlsx")
class JournalTemplateView(JournalFileView):
    def get(self, request):
        return xlsx_download("yevmiye-sablonu.xlsx", workbook_writer.template())


@register_model_view(Journal, "source", path="<id:pk>/file/")
class JournalSourceView(JournalFileView):
    def download(self, journal):
        if not journal.source or not journal.source.storage.exists(journal.source.name):
            raise Http404(_("The file is no longer kept here."))
        return FileResponse(journal.source.open("rb"), as_attachment=True, filename=journal.source_name)
