"""Dispatch note pages: the list (filters, bulk send and back-to-draft, export), the note form with its lines and
drivers, the UBL upload with the schema's findings, one page per note with its actions and documents, the replies
received to our notes, the exports (core.families) and the dispatch-note users' directory.

Views validate, call one service and redirect; every queryset is the active company's (another company's note is
a 404). The documents view is the one place a view waits for the platform (a PDF asked for now).
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions, batch, domains
from backoffice.core.choices import SyncState
from backoffice.core.generic.directory import register_directory_pages
from backoffice.core.generic.documents import register_document_view
from backoffice.core.generic.families import register_export_pages
from backoffice.core.generic.reading import register_read_view
from backoffice.core.generic.registry import (extra_bulk_actions, model_url, register_model_view, register_model_views,
                                              target_label)
from backoffice.core.generic.views import (
    BulkAction,
    BulkActionView,
    ObjectDetailView,
    ObjectEditView,
    ObjectListView,
    describe_fields,
    totals_by_currency,
)
from backoffice.core.jobs import enqueue, runs_of
from backoffice.core.roles import EDITORS, has_role

from . import filters, invoicing, mirror, push, services, tables, taxpayers
from .choices import INVOICEABLE_STATUSES, DispatchStatus, DocumentKind, Source
from .receipts import answered_lines
from .families import DISPATCH_EXPORTS
from .forms import DispatchNoteForm, DriverFormSet, LineFormSet, UblReplaceForm, UblUploadForm
from .models import DispatchDriver, DispatchLine, DispatchNote, DispatchTaxpayer, ReceivedReply

accounts_api = domains.api("current_accounts")


class NoteListView(ObjectListView):
    model = DispatchNote
    table = tables.DispatchNoteTable
    filterset = filters.DispatchNoteFilterSet
    refresh_interval = 5
    working_statuses = mirror.BUSY_STATUSES

    def render(self, context, status=200):
        context["export_url"] = model_url(DISPATCH_EXPORTS.model, "start")
        return super().render(context, status)


def receiver_details(account) -> dict:
    """What the form shows beside the receiver as it is typed: the dispatch mailboxes, the default address that
    fills the delivery address."""
    address = account and (account.address_set.filter(is_default=True).first() or account.address_set.first())
    return {"boxes": taxpayers.mailboxes(account.identifier) if account else [],
            "generic_alias": taxpayers.generic_alias(), "address": address,
            "directory_loaded": taxpayers.directory_loaded()}


class NoteEditView(ObjectEditView):
    """Create and update (only a draft or a note in error), lines and drivers in formsets."""

    model = DispatchNote
    form = DispatchNoteForm
    form_company = True
    formsets = {"lines": LineFormSet, "drivers": DriverFormSet}
    saves = staticmethod(services.note_save)
    lookups = {"receiver": accounts_api.account_lookup(template="dispatch/includes/receiver.html",
                                                       details=receiver_details)}
    refused = services.DispatchError
    invalid_status = 400
    tab = "new"

    def locked_message(self, note):
        return services.edit_refusal(note)

    def form_context(self, note, formsets):
        company = self.request.company
        return {
            "empty_line": formsets["lines"].empty_form, "empty_driver": formsets["drivers"].empty_form,
            # what the form offers as it is typed: the company's recent products and drivers
            "products": list(DispatchLine.objects.filter(note__company=company).order_by("-note_id")
                             .values_list("product_name", flat=True)[:200].iterator()),
            "known_drivers": list(DispatchDriver.objects.filter(note__company=company).order_by("-note_id")
                                  .values_list("name", "surname", "tckn")[:50]),
        }

    def success_message(self, note, is_new):
        return _("Draft saved; it goes to the platform as a draft and is not sent to GİB. Send it from its page "
                 "when the goods are ready.")


class NoteDetailView(ObjectDetailView):
    model = DispatchNote

    def base_queryset(self):
        return super().base_queryset().select_related("created_by", "current_account")

    def get_extra_context(self, note):
        user = self.request.user
        may_edit = has_role(user, *EDITORS)
        buttons = actions.buttons(note, user) + batch.resend_buttons(note, user)
        groups = (
            (_("Dispatch note"), ("despatch_number", "profile", "issue_date", "issue_time", "shipment_date",
                                  "local_reference_id", "xslt_code", "source", "numbering", "created_by")),
            (_("Receiver"), ("receiver_name", "receiver_identifier", "receiver_code", "target_alias",
                             "receiver_district", "receiver_city", "receiver_country")),
            (_("Delivery address"), ("delivery_district", "delivery_city", "delivery_zip_code", "delivery_country")),
            (_("Shipment"), ("carrier_title", "carrier_vkn_tckn", "plate_number")),
            (_("Actual buyer and seller"), ("buyer_identifier", "buyer_name", "buyer_surname", "buyer_district",
                                            "buyer_city", "seller_identifier", "seller_name", "seller_surname",
                                            "seller_district", "seller_city")),
            (_("Envelope to the tax authority"), ("envelope_id", "envelope_status", "envelope_message")),
        )
        lines, receipt, answered = answered_lines(note)
        moving = (bool(note.pending_action) or note.sync_state in (SyncState.QUEUED, SyncState.SENDING)
                  or note.remote_status in mirror.BUSY_STATUSES)
        return {
            # a card only for what the note has (no empty buyer, seller or envelope cards)
            "field_groups": [(title, fields) for title, fields in
                             ((title, describe_fields(note, names, user=user)) for title, names in groups)
                             if any(field.value not in (None, "") for field in fields)],
            "lines": lines, "drivers": list(note.drivers.all()), "runs": runs_of(note),
            "receipt": receipt, "answered_lines": answered,
            "actions": buttons,
            "edit_url": model_url(note, "edit") if may_edit and note.source == Source.FORM and note.is_editable
            else None,
            "on_platform": bool(note.remote_id), "refresh_interval": 3 if moving else None,
            "replace_url": model_url(note, "replace") if may_edit and not services.replace_refusal(note) else None,
            "invoicing": invoicing_card(note, may_edit),
        }


def invoicing_card(note, may_edit) -> dict:
    """The note's invoice (a link), or its days left to be invoiced; and "Faturalaştır" when the invoices domain
    registered it (core's bulk actions of another app) and the receiver's answer is in."""
    _label, url = target_label(note.invoiced_target) if note.invoiced_target else (None, None)
    left = invoicing.days_left(note)
    action = extra_bulk_actions(DispatchNote).get("invoice")
    invoice_url = None
    if action is not None and may_edit and note.remote_status in INVOICEABLE_STATUSES:
        invoice_url = f"{reverse(action.url_name)}?pk={note.pk}"
    return {"label": invoicing.invoiced_label(note), "url": url, "days": left, "late": max(0, -(left or 0)),
            "marked": invoicing.marked(note), "invoice_url": invoice_url,
            "action_label": action.label if action is not None else ""}


class NoteBulkView(BulkActionView):
    model = DispatchNote
    required_roles = EDITORS


def send_runner(request, queryset):
    try:
        return len(push.send_request(queryset.order_by("pk")))
    except push.AlreadySent as exc:
        messages.info(request, str(exc))
    except services.DispatchError as exc:
        messages.error(request, str(exc))
    return 0


def send_details(request, queryset):
    """The send confirmation's rows (receiver, mailbox, total), totals per currency and the notes refused."""
    notes = list(queryset.order_by("pk"))
    rows = push.send_rows(notes)
    return {"rows": rows[:NoteBulkView.max_listed], "currency_totals": totals_by_currency(rows),
            "refused": [f"{note}: {reason}" for note in notes if (reason := push.send_refusal(note))],
            "totals_are": "total"}  # a dispatch note's goods value, not an amount payable


def _bulk_actions():
    found = actions.bulk_actions(DispatchNote)
    send = found["send"]
    # The status change 0 -> 20 sends the note to the tax authority: its own confirmation (issue 29).
    found["send"] = BulkAction(gettext_lazy("Send to GİB"), send_runner, confirm=send.confirm, style=send.style,
                               required_roles=send.required_roles, template="generic/send_confirm.html",
                               details=send_details, check=gettext_lazy("I checked the recipient and the total."))
    return found


def elsewhere_runner(invoiced):
    def run(request, queryset):
        return invoicing.mark_elsewhere(queryset, invoiced=invoiced)
    return run


BULK_ACTIONS = {**_bulk_actions(), "invoiced_elsewhere": BulkAction(
    gettext_lazy("Invoiced elsewhere"), elsewhere_runner(True), style="secondary", required_roles=EDITORS,
    confirm=gettext_lazy("The selected notes were invoiced outside this back office (before it, or in another "
                         "program): they leave the 7-day watch. Notes an invoice of ours bills are not changed.")),
    "not_invoiced_elsewhere": BulkAction(
    gettext_lazy("Back on the invoicing watch"), elsewhere_runner(False), style="secondary", required_roles=EDITORS,
    confirm=gettext_lazy("The selected notes marked as invoiced elsewhere are counted by the 7-day watch again.")),
    "resend": batch.resend_action(
    refused=gettext_lazy("Only notes whose sending failed can be sent again."),
    confirm=gettext_lazy("The selected notes whose sending failed will be sent again; the platform is asked first "
                         "whether an earlier attempt arrived."))}
NoteBulkView.actions = BULK_ACTIONS

register_model_views(DispatchNote, prefix="", list=NoteListView, detail=NoteDetailView, edit=NoteEditView,
                     bulk=NoteBulkView)


@register_model_view(DispatchNote, "upload", path="upload/")
class NoteUploadView(ObjectEditView):
    """UBL-TR files: checked against the schema and the tax authority's rules before anything is saved; the
    findings are shown per file with their line."""

    model = DispatchNote
    form = UblUploadForm
    form_company = True
    action = tab = "upload"
    refused = services.DispatchError
    invalid_status = 400
    findings = ()  # of each file, when the upload is refused
    created = ()  # the notes the upload made

    def form_context(self, obj, formsets):
        return {"findings": self.findings}

    def save_form(self, form):
        upload, data = form.cleaned_data["file"], form.cleaned_data
        try:
            self.created = services.ubl_upload(
                company=self.request.company, user=self.request.user, name=upload.name, data=upload.read(),
                requested_status=DispatchStatus.DRAFT, numbering=data["numbering"], prefix=data.get("prefix") or "",
                target_alias=data["target_alias"], local_reference_id=data["local_reference_id"],
                xslt_code=data["xslt_code"])
        except services.UblRefused as exc:
            self.findings = exc.despatches
            raise
        return self.created[0]  # a replay of the form shows the first

    def success_message(self, note, is_new):
        if len(self.created) > 1:
            return _("%(count)s dispatch notes passed the check and go to the platform as drafts; none is sent to "
                     "GİB until you send it.") % {"count": len(self.created)}
        return _("The file passed the check; the dispatch note goes to the platform as a draft and is not sent to "
                 "GİB until you send it.")

    def return_url(self, note):
        return model_url(DispatchNote, "list") if len(self.created) > 1 else model_url(note, "detail")


@register_model_view(DispatchNote, "replace", path="<id:pk>/replace/")
class NoteReplaceView(ObjectEditView):
    """A UBL note that failed, or is a draft or in error, corrected by its file: checked like an upload first."""

    model = DispatchNote
    action = "replace"
    locked_message = staticmethod(services.replace_refusal)

    def page(self, note, form, findings=(), status=200):
        return self.render({"object": note, "form": form, "findings": findings,
                            "detail_url": model_url(note, "detail")}, status=status)

    def get(self, request, *args, **kwargs):
        note = self.get_object()
        return self.locked(note) or self.page(note, UblReplaceForm())

    def post(self, request, *args, **kwargs):
        note = self.get_object()
        form = UblReplaceForm(data=request.POST, files=request.FILES)
        findings = []

        def save():
            upload = form.cleaned_data["file"]
            try:
                return services.ubl_replace(note, name=upload.name, data=upload.read(),
                                            requested_status=DispatchStatus.DRAFT)
            except services.UblRefused as exc:
                findings.extend(exc.despatches)
                raise

        _note, answered = self.guarded_submit(None, form, save, refused=services.DispatchError,
                                              invalid=lambda: self.page(note, form, findings, status=400))
        if answered is not None:
            return answered
        messages.success(request, _("The corrected file passed the check; the note goes to the platform as a draft and "
                                    "is not sent to GİB until you send it."))
        return redirect(model_url(note, "detail"))


# The note's PDF, HTML, UBL or ZIP (standard layout or the company's), fetched once at a status and kept.
register_document_view(DispatchNote, mirror.NOTE_DOCUMENTS, attachment_kinds=(DocumentKind.UBL, DocumentKind.ZIP),
                       refused=(services.DispatchError,), back_label=gettext_lazy("Back to the dispatch note"),
                       record_label=gettext_lazy("Dispatch note"))


register_read_view(DispatchNote, lambda company: enqueue(mirror.outbox_mirror, company=company.pk, args=[company.pk]),
                   name="mirror", whole=True, roles=EDITORS,
                   message=gettext_lazy("New dispatch notes are being read from the platform."),
                   running=gettext_lazy("New dispatch notes are already being read from the platform."))


# --- replies received to our outgoing notes ------------------------------------------------------------------
class ReceivedReplyListView(ObjectListView):
    model = ReceivedReply
    table = tables.ReceivedReplyTable
    filterset = filters.ReceivedReplyFilterSet
    title = gettext_lazy("Replies to our dispatch notes")

    def base_queryset(self):
        return super().base_queryset().select_related("note")


register_model_views(ReceivedReply, prefix="receipts", list=ReceivedReplyListView)


# --- exports (core.families) -------------------------------------------------------------------------------
register_export_pages(
    DISPATCH_EXPORTS, prefix="exports", section="dispatch", tab="exports", title=gettext_lazy("Dispatch note exports"),
    empty_text=gettext_lazy("No exports yet. Start one from the dispatch note list."),
    start_links=((None, gettext_lazy("Export dispatch notes")),),
    heading=lambda kind: _("Excel export: dispatch notes"), home=lambda kind: model_url(DispatchNote, "list"))


# --- the dispatch-note users' directory ----------------------------------------------------------------------
register_directory_pages(
    DispatchTaxpayer, prefix="users", section="dispatch", tab="taxpayers", title=gettext_lazy("Dispatch-note users"),
    table=tables.DispatchTaxpayerTable, filterset=filters.DispatchTaxpayerFilterSet,
    request_refresh=taxpayers.taxpayers_request,
    started=gettext_lazy("The dispatch-note users' list is being read; this takes a few minutes."),
    running=gettext_lazy("The dispatch-note users' list is already being read."),
    note=gettext_lazy("Receivers listed here get their dispatch notes at their own mailbox; anyone else at the "
                      "generic mailbox %(alias)s."), note_context=lambda: {"alias": taxpayers.generic_alias()})
