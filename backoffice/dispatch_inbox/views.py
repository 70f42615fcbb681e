"""Pages of the receiving side: the incoming notes (what still needs an answer and how many days are left), one
note with its lines, documents and replies, the answers (accept or reject several at once, a partial acceptance,
a ReceiptAdvice file), our replies and the incoming exports. They are tabs of the dispatch notes' section.

Views validate, call one service and redirect; every queryset is the active company's (another company's note is
a 404). The forms that answer a note carry a one-time key (Back and resubmit, a second tab, a company switched in
another tab); the services lock the note, so two answers never both go.
"""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions, batch, domains
from backoffice.core.choices import SyncState
from backoffice.core.generic.documents import register_document_view
from backoffice.core.generic.families import register_export_pages
from backoffice.core.generic.guarded import SubmissionGuardMixin
from backoffice.core.generic.reading import register_read_view
from backoffice.core.generic.registry import model_url, register_model_view, register_model_views
from backoffice.core.generic.views import (
    BaseObjectView,
    BulkAction,
    BulkActionView,
    ObjectDetailView,
    ObjectListView,
    describe_fields,
    safe_return_url,
)
from backoffice.core.jobs import enqueue, runs_of
from backoffice.core.roles import EDITORS, EVERYONE, has_role
from backoffice.core.security import parse_ids
from backoffice.remote.errors import RateLimited, RemoteError

from . import answers, documents, filters, mirror, replies, tables
from .choices import ANSWERING_STATUSES, AWAITING_ANSWER, REPLY_WORKING_STATUSES, DispatchError, DocumentKind, ReplyWay
from .conf import setting
from .families import INCOMING_EXPORTS
from .forms import AnswerForm, PartialAcceptanceForm, ReplyUploadForm
from .models import DispatchReply, IncomingNote

dispatch_api = domains.api("dispatch")

ANSWER_ACTIONS = ("approve", "reject")
ANSWER_AT_ONCE = 500  # one call to the platform (a list's page is at most 500 too)


class IncomingListView(ObjectListView):
    """The inbox: by default what still needs an answer, the oldest first, with the days left."""

    model = IncomingNote
    table = tables.IncomingNoteTable
    filterset = filters.IncomingNoteFilterSet
    refresh_interval = 5
    title = gettext_lazy("Incoming dispatch notes")

    def needs_refresh(self, queryset):
        # one index each (an OR of the two reads every note of a large inbox)
        return (queryset.filter(remote_status__in=ANSWERING_STATUSES).exists()
                or queryset.exclude(pending_action="").exists())

    def get_table_kwargs(self):
        # what needs an answer: the one with the fewest days left first
        if self.request.GET.get("view") == "awaiting" and not self.request.GET.get("sort"):
            return {"order_by": ("received_at",)}
        return {}

    def render(self, context, status=200):
        company = self.request.company
        waiting = IncomingNote.objects.filter(company=company, remote_status=AWAITING_ANSWER)
        context.update(awaiting_count=waiting.count(),
                       view=self.request.GET.get("view") or "",
                       export_url=model_url(INCOMING_EXPORTS.model, "start"),
                       answer_days=int(setting("DISPATCH_ANSWER_DAYS")))
        return super().render(context, status)


class IncomingDetailView(ObjectDetailView):
    model = IncomingNote

    def get_extra_context(self, note):
        user = self.request.user
        lines, lines_error = [], ""
        try:
            # the page's own refresh (every few seconds while an answer moves) never asks the platform again for
            # lines it could not give a moment ago; opening the page does
            lines = (list(note.lines.all()) if note.lines_read_at is None and self.request.headers.get("HX-Request")
                     else documents.lines_load(note))
        except RateLimited as exc:
            lines_error = _("The platform allows only so many calls a minute; the lines show in %(seconds)s "
                            "seconds.") % {"seconds": max(1, round(exc.wait))}
        except (RemoteError, DispatchError) as exc:
            lines_error = exc.user_message() if isinstance(exc, RemoteError) else str(exc)
        ours = list(note.replies.select_related("created_by").prefetch_related("lines"))
        may_answer = has_role(user, *EDITORS) and not answers.answer_refusal(note)
        moving = bool(note.pending_action) or note.remote_status in ANSWERING_STATUSES or any(
            reply.sync_state in (SyncState.QUEUED, SyncState.SENDING) or reply.remote_status in REPLY_WORKING_STATUSES
            for reply in ours)
        fields = describe_fields(note, ("despatch_number", "issue_date", "issue_time", "sender_title",
                                        "sender_identifier", "profile", "received_at", "receipt_number"),
                               user=user)
        return {
            "fields": [field for field in fields if field.value not in (None, "")],
            "lines": lines, "lines_error": lines_error, "answers": [
                (reply, reply_buttons(reply, user)) for reply in ours],
            "may_answer": may_answer, "days_left": mirror.days_left(note), "runs": runs_of(note),
            "actions": actions.buttons(note, user), "refresh_interval": 3 if moving else None,
            "answer_url": model_url(IncomingNote, "bulk", action="approve"),
            "reject_url": model_url(IncomingNote, "bulk", action="reject"),
        }


def reply_buttons(reply, user) -> list:
    """The reply's status changes, and "Send again" for one whose sending failed (its push asks the platform
    first whether an earlier attempt arrived)."""
    return actions.buttons(reply, user) + batch.resend_buttons(
        reply, user, ready=lambda failed: failed.way in (ReplyWay.PARTIAL, ReplyWay.UBL))


class IncomingBulkView(BulkActionView):
    """The list's bulk actions; accepting or rejecting asks the answer's details first (AnswerForm)."""

    model = IncomingNote
    required_roles = EVERYONE

    def get_template_names(self):
        return ["dispatch_inbox/incomingnote_answer.html" if self.kwargs.get("action") in ANSWER_ACTIONS
                else "generic/bulk_confirm.html"]

    def post(self, request, *args, **kwargs):
        action = kwargs["action"]
        if action not in ANSWER_ACTIONS:
            return super().post(request, *args, **kwargs)
        if not has_role(request.user, *EDITORS):
            raise PermissionDenied
        list_url = model_url(IncomingNote, "list")
        return_url = safe_return_url(request, request.POST.get("return_url"), list_url)
        selected = parse_ids(request.POST.getlist("pk"))
        notes = list(self.get_queryset().filter(pk__in=selected).order_by("pk")[:ANSWER_AT_ONCE])
        if not notes:
            messages.warning(request, _("Select at least one record first."))
            return redirect(return_url)
        if len(set(selected)) > ANSWER_AT_ONCE:
            messages.warning(request, _("At most %(count)s notes are answered at once; these are the first "
                                        "%(count)s of your selection.") % {"count": ANSWER_AT_ONCE})
        confirmed = bool(request.POST.get("confirm"))
        form = AnswerForm(data=request.POST if confirmed else None, notes=notes,
                          initial={"decision": action})
        context = {"bulk_action": self.actions[action], "action_name": action, "objects": notes, "form": form,
                   "count": len(notes), "pks": [note.pk for note in notes], "return_url": return_url,
                   "refusals": [(note, refusal) for note in notes if (refusal := answers.answer_refusal(note))]}
        if not confirmed or not form.is_valid():
            return self.render(context, status=400 if confirmed else 200)
        data = form.cleaned_data
        try:
            replies.answer_request(notes, approve=data["decision"] == "approve", prefix=data["prefix"],
                                   reason=data["reason"], delivered_at=data["delivered_at"], user=request.user)
        except DispatchError as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
            return self.render(context, status=400)
        messages.success(request, _("Your answer is on its way to the platform; the notes show its status in a "
                                    "moment."))
        return redirect(return_url if len(notes) > 1 else model_url(notes[0], "detail"))


IncomingBulkView.actions = {
    **actions.bulk_actions(IncomingNote),
    "approve": BulkAction(gettext_lazy("Accept"), function=None, required_roles=EDITORS, style="success",
                          confirm=gettext_lazy("The selected notes will be accepted: the senders are told you "
                                               "received the goods in full.")),
    "reject": BulkAction(gettext_lazy("Reject"), function=None, required_roles=EDITORS, style="danger",
                         confirm=gettext_lazy("The selected notes will be rejected with your reason: the senders "
                                              "are told you did not take the goods.")),
}

register_model_views(IncomingNote, prefix="incoming", list=IncomingListView, detail=IncomingDetailView,
                     bulk=IncomingBulkView)


class AnswerPage(SubmissionGuardMixin, BaseObjectView):
    """A page answering one note: refused (back to the note) when the note cannot be answered now. Each page gives
    its form (form(note, data, files) -> (form, None), or (None, the response instead)), the answer it saves
    (save(note, form), raising DispatchError when refused) and what it says once the answer went."""

    model = IncomingNote
    required_roles = EDITORS
    found = None  # what the check of a ReceiptAdvice file found

    def page(self, note, form, status=200):
        return self.render({"object": note, "form": form, "found": self.found, "detail_url": model_url(note, "detail")},
                           status=status)

    def get(self, request, pk):
        note = get_object_or_404(self.get_queryset(), pk=pk)
        refusal = answers.answer_refusal(note)
        if refusal:
            messages.warning(request, refusal)
            return redirect(model_url(note, "detail"))
        form, answered = self.form(note)
        return answered or self.page(note, form)

    def post(self, request, pk):
        note = get_object_or_404(self.get_queryset(), pk=pk)
        form, answered = self.form(note, request.POST, request.FILES)
        if answered is not None:
            return answered
        reply, answered = self.guarded_submit(self.guard_for(note), form, lambda: self.save(note, form),
                                              refused=DispatchError, invalid=lambda: self.page(note, form, status=400))
        if answered is not None:
            return answered
        messages.success(request, self.done_message(reply))
        return redirect(model_url(note, "detail"))


@register_model_view(IncomingNote, "partial", path="<id:pk>/partial/")
class PartialAcceptanceView(AnswerPage):
    """Per line: what was accepted, what was rejected and why; sent at once (the platform queues it)."""

    action = "partial"

    def form(self, note, data=None, files=None):
        try:
            return PartialAcceptanceForm(data=data, note=note, lines=documents.lines_load(note)), None
        except RateLimited as exc:
            messages.error(self.request, _("The platform allows only so many calls a minute; try again in %(seconds)s "
                                           "seconds.") % {"seconds": max(1, round(exc.wait))})
        except RemoteError as exc:
            messages.error(self.request, exc.user_message())
        except DispatchError as exc:
            messages.error(self.request, str(exc))
        return None, redirect(model_url(note, "detail"))

    def save(self, note, form):
        data = form.cleaned_data
        return answers.partial_save(note, answers=form.answers(), delivered_at=data["delivered_at"],
                                    contact=data["delivery_contact"], prefix=data["prefix"], user=self.request.user)

    def done_message(self, reply):
        return _("Your answer is on its way to the platform; the note shows its status in a moment.")


@register_model_view(IncomingNote, "reply_upload", path="<id:pk>/reply-upload/")
class ReplyUploadView(AnswerPage):
    """The user's own ReceiptAdvice, checked before anything is sent; the findings shown with their lines."""

    action = "reply_upload"

    def form(self, note, data=None, files=None):
        return ReplyUploadForm(data=data, files=files), None

    def save(self, note, form):
        data, upload = form.cleaned_data, form.cleaned_data["file"]
        try:
            return answers.ubl_reply(note, name=upload.name, data=upload.read(),
                                     requested_status=data["requested_status"], user=self.request.user,
                                     manual_number=data["numbering"] == "manual", prefix=data.get("prefix") or "")
        except answers.UblReplyRefused as exc:
            self.found = exc.receipt
            raise

    def done_message(self, reply):
        if reply.requested_status:
            return _("The file passed the check; the reply is on its way to the platform.")
        return _("The file passed the check; the reply is saved on the platform as a draft. Send it from the note's "
                 "page.")


register_document_view(IncomingNote, documents.NOTE_DOCUMENTS, attachment_kinds=(DocumentKind.UBL,),
                       refused=(DispatchError,), back_label=gettext_lazy("Back to the incoming note"),
                       record_label=gettext_lazy("Incoming dispatch note"))


register_read_view(IncomingNote, lambda company: enqueue(mirror.inbox_mirror, company=company.pk, args=[company.pk]),
                   name="mirror", whole=True,
                   message=gettext_lazy("Incoming notes and replies are being read from the platform."),
                   running=gettext_lazy("Incoming notes and replies are already being read from the platform."))


# --- our replies ---------------------------------------------------------------------------------------------
class ReplyListView(ObjectListView):
    model = DispatchReply
    table = tables.DispatchReplyTable
    filterset = filters.DispatchReplyFilterSet
    refresh_interval = 5
    title = gettext_lazy("Our replies")
    working_statuses = REPLY_WORKING_STATUSES

    def base_queryset(self):
        return super().base_queryset().select_related("note")

    def needs_refresh(self, queryset):
        return super().needs_refresh(queryset) or queryset.exclude(pending_action="").exists()


class ReplyDetailView(ObjectDetailView):
    """A reply is shown on its note's page."""

    model = DispatchReply

    def get(self, request, pk):
        reply = get_object_or_404(self.get_queryset(), pk=pk)
        return redirect(f"{model_url(reply.note, 'detail')}#reply-{reply.pk}")


class ReplyBulkView(BulkActionView):
    model = DispatchReply
    required_roles = EDITORS
    tab = "incoming"  # its buttons are on the note's page
    actions = {**actions.bulk_actions(DispatchReply), "resend": batch.resend_action(
        refused=gettext_lazy("Only replies whose sending failed can be sent again."),
        confirm=gettext_lazy("The selected replies whose sending failed will be sent again; the platform is asked "
                             "first whether an earlier attempt arrived."))}


register_model_views(DispatchReply, prefix="replies", list=ReplyListView, detail=ReplyDetailView,
                     bulk=ReplyBulkView)


register_document_view(DispatchReply, documents.REPLY_DOCUMENTS, attachment_kinds=(DocumentKind.UBL, DocumentKind.ZIP),
                       refused=(DispatchError,), tab="incoming", back_label=gettext_lazy("Back to the incoming note"),
                       record_label=gettext_lazy("Dispatch note reply"))


# --- exports of incoming notes (core.families) -------------------------------------------------------------------
register_export_pages(
    INCOMING_EXPORTS, prefix="incoming/exports", section="dispatch", tab="exports",
    title=gettext_lazy("Incoming dispatch note exports"),
    empty_text=gettext_lazy("No exports of incoming notes yet. Start one from the incoming notes."),
    start_links=((None, gettext_lazy("Export incoming dispatch notes")),),
    heading=lambda kind: _("Excel export: incoming dispatch notes"), home=lambda kind: model_url(IncomingNote, "list"))

