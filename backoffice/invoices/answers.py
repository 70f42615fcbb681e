"""Answers to incoming commercial invoices and the cancellation of e-archive invoices (issue 33, points 4 and 5),
declared as record actions of invoices (core.actions) beside their posting, on the invoice service (the facts file's
paths; the provider's client's bodies, remote/invoices.py).

- A commercial invoice (TICARIFATURA) we received is accepted or rejected (with a reason) within 8 days of its
  arrival (ANSWER_DAYS, counted in Istanbul days from the platform's createDateUtc); one left unanswered is accepted
  by the platform itself (65), which the page says as such. Several are answered by one job, one call each (the
  path takes one invoice). The answer is a state change on the platform: after an outcome we could not read, core
  asks whether the answer is there (getbyinvoiceid) before sending it again, and "already answered as asked" is
  success. The answer's own life (20, 50, 60, or 40 with the platform's text) is followed by RESPONSES_POLL; one in
  error is sent again by "Send the answer again" (retryinvoiceresponselist).
- An approved e-archive invoice of ours is cancelled (100) with a reason; the platform's call takes the ids alone, so
  the reason is kept here with who and when. An e-invoice cannot be cancelled (it is answered by its receiver, or a
  return invoice is written). A refusal keeps the platform's text on the invoice.
"""

from datetime import datetime, time, timedelta

from django import forms
from django.contrib import messages
from django.db.models import Q
from django.http import Http404
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import actions, polling
from backoffice.core import dashboard as core_dashboard
from backoffice.core.generic.registry import model_url, register_bulk_action, register_model_view
from backoffice.core.generic.views import BaseObjectView, BulkAction, safe_return_url
from backoffice.core.payloads import integer, moment
from backoffice.core.polling import StatusPoll
from backoffice.core.roles import EDITORS
from backoffice.core.security import parse_ids
from backoffice.core.registry import registry
from backoffice.remote.common import field
from backoffice.remote.errors import PLATFORM, RemoteError

from . import from_dispatch, services
from .choices import (ANSWER_DAYS, ANSWERABLE_STATUS, RESPONSE_WORKING, Answer, InvoiceStatus, Profile,
                      ResponseStatus)
from .models import Invoice

REASON_LENGTH = 500


# --- the rules ----------------------------------------------------------------------------------------------------
def answer_deadline(invoice):
    """The last day to answer an incoming commercial invoice (Istanbul), from its arrival on the platform."""
    arrived = timezone.localtime(invoice.created_on_platform).date() if invoice.created_on_platform else \
        invoice.issue_date
    return arrived + timedelta(days=ANSWER_DAYS) if arrived else None


def answer_ends_at(invoice):
    """The moment the platform stops taking an answer and accepts the invoice itself: 8 × 24 hours after its
    arrival (the platform counts the moment; the days left of the pages count Istanbul days)."""
    return invoice.created_on_platform + timedelta(days=ANSWER_DAYS) if invoice.created_on_platform else None


def answer_days_left(invoice, today=None) -> int | None:
    """Days left to answer (negative: the period is over), or None when the invoice awaits no answer of ours."""
    if invoice.is_send or invoice.profile != Profile.TICARIFATURA or invoice.response_answer or \
            invoice.remote_status != ANSWERABLE_STATUS:
        return None
    deadline = answer_deadline(invoice)
    return None if deadline is None else (deadline - (today or core_dashboard.today())).days


OPEN, LAST_DAY, OVERDUE = "open", "last_day", "overdue"
DUE_CHOICES = ((OPEN, gettext_lazy("To be answered (within 8 days)")),
               (LAST_DAY, gettext_lazy("Last day today or tomorrow")),
               (OVERDUE, gettext_lazy("8 days ran out, not answered")))


def _arrived_from(day):
    return datetime.combine(day, time.min, tzinfo=core_dashboard.ISTANBUL)


def due(invoices, value, today=None):
    """The list's "answer" filter: incoming commercial invoices awaiting our answer, by arrival (index
    invoices_to_answer); the fewest days left first."""
    today = today or core_dashboard.today()
    waiting = invoices.filter(is_send=False, remote_status=ANSWERABLE_STATUS, profile=Profile.TICARIFATURA)
    first_open = _arrived_from(today - timedelta(days=ANSWER_DAYS))  # the oldest arrival still in its 8 days
    if value == OPEN:
        return waiting.filter(created_on_platform__gte=first_open).order_by("created_on_platform", "pk")
    if value == LAST_DAY:
        return waiting.filter(created_on_platform__gte=first_open,
                              created_on_platform__lt=first_open + timedelta(days=2)).order_by("created_on_platform",
                                                                                               "pk")
    if value == OVERDUE:
        return waiting.filter(created_on_platform__lt=first_open).order_by("-created_on_platform", "-pk")
    return invoices


def answer_refusal(invoice) -> str:
    """Why this invoice cannot be answered now ("" when it can)."""
    if invoice.is_send:
        return _("Only an invoice we received is answered.")
    if invoice.profile != Profile.TICARIFATURA:
        return _("Only a commercial invoice (TICARIFATURA) is answered; a basic invoice is accepted as it arrives.")
    if invoice.pending_action:
        return _("An answer to this invoice is on its way to the platform.")
    if invoice.response_answer:
        return _("Already answered: %(answer)s.") % {"answer": invoice.get_response_answer_display()}
    if invoice.remote_status == InvoiceStatus.AUTO_APPROVED:
        return _("The platform accepted this invoice itself when its 8 days to answer ended.")
    if invoice.remote_status != ANSWERABLE_STATUS:
        return _("This invoice is not awaiting an answer (%(status)s).") % {
            "status": invoice.status_label or _("not on the platform")}
    ends = answer_ends_at(invoice)
    if ends is not None and timezone.now() >= ends:
        return _("The 8 days to answer this invoice ended on %(date)s.") % {
            "date": timezone.localtime(ends).strftime("%d.%m.%Y %H:%M")}
    left = answer_days_left(invoice)
    if ends is None and left is not None and left < 0:
        return _("The 8 days to answer this invoice ended on %(date)s.") % {
            "date": answer_deadline(invoice).strftime("%d.%m.%Y")}
    return ""


def cancel_refusal(invoice) -> str:
    """Why this invoice cannot be cancelled ("" when it can): only an approved e-archive invoice of ours."""
    if not invoice.is_send:
        return _("An invoice we received is cancelled by its supplier, not from here.")
    if invoice.is_einvoice:
        return _("An e-invoice cannot be cancelled: its receiver declines it, or you write a return invoice. Only an "
                 "e-archive invoice is cancelled.")
    if invoice.pending_action:
        return _("A change of this invoice is on its way to the platform.")
    if invoice.remote_status == InvoiceStatus.EARCHIVE_CANCELLED:
        return _("This e-archive invoice is cancelled already.")
    if invoice.remote_status != InvoiceStatus.APPROVED:
        return _("Only an approved e-archive invoice is cancelled; this one is “%(status)s”.") % {
            "status": invoice.status_label or _("not on the platform")}
    return ""


def _checked(refusal_of):
    def check(invoices):
        refused = [f"{invoice} ({reason})" for invoice in invoices if (reason := refusal_of(invoice))]
        if refused:
            raise services.InvoiceActionRefused(_("Nothing was sent. %(invoices)s") % {"invoices": "; ".join(refused)})
    return check


# --- the platform calls (core.actions' client of these actions) -------------------------------------------------
class Answers:
    """Answers: one call per invoice; statuses() tells core which invoices have our answer already (61 accept, 81
    reject, the invoice's statuses while an answer runs), else the invoice's own status."""

    def __init__(self, company, model=None):
        self.client = services.service(company)

    def send(self, ids, *, accept, reason=""):
        """One call per invoice. A failure after some went is made one core asks about (which invoices have our
        answer now), so that those are done and only the others keep the refusal or are sent again."""
        for sent, invoice_id in enumerate(ids):
            try:
                self.client.send_response(invoice_id, accept=accept, reason=reason)
            except RemoteError as exc:
                if not sent:
                    raise
                raise RemoteError(str(exc), status=exc.status, title=exc.title, detail=exc.detail,
                                  operation=exc.operation, permanent=False, source=PLATFORM) from exc

    def statuses(self, ids):
        found = []
        for invoice_id in ids:
            answer = self.client.response_of(invoice_id)
            if answer is not None:
                asked = integer(field(answer, "status"))
                found.append({"id": invoice_id, "status": InvoiceStatus.APPROVING if asked == InvoiceStatus.APPROVED
                              else InvoiceStatus.DECLINING})
            else:
                found.append({"id": invoice_id, **self.client.status("inbox", invoice_id)})
        return found

    def retry(self, ids):
        self.client.retry_responses(ids)


class AnswerRetries(Answers):
    """The retry's statuses are its answers' (responseStatus), which is what that action moves."""

    def statuses(self, ids):
        found = []
        for invoice_id in ids:
            answer = self.client.response_of(invoice_id)
            if answer is not None:
                found.append({"id": invoice_id, "status": integer(field(answer, "responseStatus"))})
        return found


class Cancellations:
    def __init__(self, company, model=None):
        self.client = services.service(company)

    def cancel(self, ids, reason=""):  # the reason is ours (kept on the invoice): the call takes ids
        self.client.earchive_cancel(ids)

    def statuses(self, ids):
        return [{"id": invoice_id, **self.client.status("earchive", invoice_id)} for invoice_id in ids]


def response_fields(answer) -> dict:
    """What we keep of the platform's answer record."""
    asked = integer(field(answer, "status"))
    return {"response_id": str(field(answer, "id") or "")[:64].lower(),
            "response_status": integer(field(answer, "responseStatus")),
            "response_message": str(field(answer, "message") or ""),
            "response_answer": Answer.ACCEPT if asked == InvoiceStatus.APPROVED else Answer.REJECT,
            "response_reason": str(field(answer, "reason") or "")[:REASON_LENGTH],
            "responded_at": moment(field(answer, "createdDate"), naive_utc=True) or timezone.now()}


def _answer_marks(answer):
    """What was answered, kept with each invoice the answer reached (core.actions' marks): the poll follows an answer
    whose record could not be read back (response_status still empty)."""
    def marks(reason=""):
        return {"response_answer": answer, "response_reason": reason[:REASON_LENGTH], "responded_at": timezone.now()}
    return marks


def _read_back(invoices, reason=""):
    """The platform's record of our answers, and the invoices and answers followed soon."""
    client = services.service(invoices[0].company) if invoices else None
    for invoice in invoices:
        try:
            answer = client.response_of(invoice.remote_id)
        except RemoteError:
            answer = None
        if answer is not None:
            Invoice.objects.filter(pk=invoice.pk).update(**response_fields(answer))
    if invoices:
        polling.poll_soon(RESPONSES_POLL, invoices[0].company_id)
        polling.poll_soon(registry["polls"][services.POLL], invoices[0].company_id)


def _cancelled(invoices, reason=""):
    """The reason kept with the cancelled invoices; the dispatch notes they billed are free again."""
    Invoice.objects.filter(pk__in=[invoice.pk for invoice in invoices],
                           remote_status=InvoiceStatus.EARCHIVE_CANCELLED).update(
        cancel_reason=reason[:REASON_LENGTH], cancelled_at=timezone.now())
    for invoice in invoices:
        from_dispatch.invoice_moved(invoice)


def _answer_action(answer, label, statuses, done):
    """Accept or reject: `statuses` the invoice's while the answer runs, once through, and when it failed."""
    return actions.RecordAction(
        str(answer), label, call=lambda client, ids, reason="": client.send(ids, accept=answer == Answer.ACCEPT,
                                                                     reason=reason),
        sources=(ANSWERABLE_STATUS,), leads_to=statuses[0], state_field="remote_status", reached=statuses,
        client=Answers, target=lambda invoice: invoice.remote_id, check=_checked(answer_refusal), takes_params=True,
        marks=_answer_marks(answer), after=_read_back,
        refused=gettext_lazy("Only an invoice awaiting an answer is answered: %(numbers)s"), done=done)


services.POSTING_ACTIONS.add(
    _answer_action(Answer.ACCEPT, gettext_lazy("Accept the invoice"),
                   (InvoiceStatus.APPROVING, InvoiceStatus.APPROVED, InvoiceStatus.APPROVAL_ERROR),
                   lambda count: _("%(count)s invoice(s) accepted.") % {"count": count}),
    _answer_action(Answer.REJECT, gettext_lazy("Reject the invoice"),
                   (InvoiceStatus.DECLINING, InvoiceStatus.DECLINED, InvoiceStatus.DECLINE_ERROR),
                   lambda count: _("%(count)s invoice(s) rejected.") % {"count": count}),
    actions.RecordAction(
        "answer_retry", gettext_lazy("Send the answer again"), call=lambda client, ids: client.retry(ids),
        sources=(ResponseStatus.ERROR,), leads_to=ResponseStatus.QUEUED, state_field="response_status",
        reached=(ResponseStatus.QUEUED, ResponseStatus.SENT, ResponseStatus.DELIVERED), client=AnswerRetries,
        target=lambda invoice: invoice.remote_id, icon="arrow-repeat", style="warning", after=_read_back,
        confirm=gettext_lazy("The answers in error of the selected invoices are sent again."),
        refused=gettext_lazy("Only an answer in error is sent again: %(numbers)s"),
        done=lambda count: _("%(count)s answer(s) sent again.") % {"count": count}),
    actions.RecordAction(
        "earchive_cancel", gettext_lazy("Cancel the e-archive invoice"),
        call=lambda client, ids, reason="": client.cancel(ids, reason=reason), sources=(InvoiceStatus.APPROVED,),
        leads_to=InvoiceStatus.EARCHIVE_CANCELLED, state_field="remote_status", client=Cancellations,
        target=lambda invoice: invoice.remote_id, check=_checked(cancel_refusal), takes_params=True,
        after=_cancelled, undoable=False,
        refused=gettext_lazy("Only an approved e-archive invoice is cancelled: %(numbers)s"),
        done=lambda count: _("%(count)s e-archive invoice(s) cancelled.") % {"count": count}),
)


def answer_request(invoices, *, accept: bool, reason: str = ""):
    """Accept or reject incoming commercial invoices (one job); the rules first, every refused one named."""
    if not accept and not reason.strip():
        raise services.InvoiceActionRefused(_("Say why the invoice is rejected."), field="reason")
    return actions.action_request(Invoice, "accept" if accept else "reject", invoices,
                                  params=None if accept else {"reason": reason.strip()[:REASON_LENGTH]})


def cancel_request(invoices, *, reason: str):
    if not reason.strip():
        raise services.InvoiceActionRefused(_("Say why the invoice is cancelled."), field="reason")
    return actions.action_request(Invoice, "earchive_cancel", invoices,
                                  params={"reason": reason.strip()[:REASON_LENGTH]})


# --- the answer's life ------------------------------------------------------------------------------------------
def _responses(company, invoices) -> dict:
    client = services.service(company)
    answers = {}
    for invoice in invoices:
        answer = client.response_of(invoice.remote_id)
        if answer is not None:
            answers[invoice.remote_id] = answer
    return answers


RESPONSES_POLL = StatusPoll(
    name="invoice_answers_poll", label=gettext_lazy("Follow the answers to invoices"), model=Invoice,
    select=lambda: Invoice.objects.filter(is_send=False).exclude(response_answer="").filter(
        Q(response_status__in=RESPONSE_WORKING) | Q(response_status__isnull=True)),
    fetch=_responses, settle=lambda invoice, answer: polling.changed_fields(invoice, response_fields(answer)),
    batch=lambda company: 20, follow_seconds=lambda: 600, follow_delay=lambda: 5)
polling.register(RESPONSES_POLL, every=300)


# --- pages ---------------------------------------------------------------------------------------------------------
class AnswerForm(forms.Form):
    answer = forms.ChoiceField(label=gettext_lazy("Answer"), widget=forms.RadioSelect,
                               choices=((Answer.ACCEPT, gettext_lazy("Accept")),
                                        (Answer.REJECT, gettext_lazy("Reject"))))
    reason = forms.CharField(label=gettext_lazy("Reason for rejection"), max_length=REASON_LENGTH, required=False,
                             widget=forms.Textarea(attrs={"rows": 2}),
                             help_text=gettext_lazy("Required to reject; the supplier reads it."))
    checked = forms.BooleanField(label=gettext_lazy("I checked the invoice against the goods."), required=True)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("answer") == Answer.REJECT and not (cleaned.get("reason") or "").strip():
            self.add_error("reason", _("Say why the invoice is rejected."))
        return cleaned


class CancelForm(forms.Form):
    reason = forms.CharField(label=gettext_lazy("Reason for cancellation"), max_length=REASON_LENGTH,
                             widget=forms.Textarea(attrs={"rows": 2}))
    checked = forms.BooleanField(label=gettext_lazy("I understand that a cancellation cannot be undone."),
                                 required=True)

    def clean_reason(self):
        reason = (self.cleaned_data.get("reason") or "").strip()
        if not reason:
            raise forms.ValidationError(_("Say why the invoice is cancelled."))
        return reason


class _ChoicePage(BaseObjectView):
    """The selected invoices (the list's checkboxes by POST, an invoice's button by GET ?pk=) with why each can or
    cannot take the action, and the form; the confirming POST starts the job."""

    model = Invoice
    required_roles = EDITORS
    form_class = None
    refusal_of = None
    template = ""

    def get_template_names(self):
        return [self.template]

    def selected(self, values):
        pks = set(parse_ids(values))
        invoices = list(self.get_queryset().filter(pk__in=pks).order_by("issue_date", "pk"))
        if len(invoices) != len(pks):
            raise Http404
        return invoices

    def back(self):
        return safe_return_url(self.request, self.request.POST.get("return_url") or self.request.GET.get(
            "return_url"), model_url(Invoice, "list"))

    def page(self, invoices, form, status=200):
        rows = [(invoice, type(self).refusal_of(invoice)) for invoice in invoices]
        return self.render({"rows": rows, "form": form, "return_url": self.back(), "count": len(invoices),
                            "refused": [invoice for invoice, reason in rows if reason], **self.extra(invoices)},
                           status=status)

    def extra(self, invoices) -> dict:
        return {}

    def get(self, request):
        invoices = self.selected(request.GET.getlist("pk"))
        if not invoices:
            return redirect(model_url(Invoice, "list"))
        return self.page(invoices, self.form_class())

    def post(self, request):
        invoices = self.selected(request.POST.getlist("pk"))
        if not invoices:
            messages.warning(request, _("Select at least one record first."))
            return redirect(self.back())
        if not request.POST.get("confirm"):
            return self.page(invoices, self.form_class())
        form = self.form_class(request.POST)
        if not form.is_valid():
            return self.page(invoices, form, status=400)
        try:
            self.start(invoices, form.cleaned_data)
        except services.InvoiceActionRefused as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
            return self.page(invoices, form, status=400)
        messages.success(request, self.started(form.cleaned_data, len(invoices)))
        return redirect(self.back())


@register_model_view(Invoice, "answer", path="answer/")
class InvoiceAnswerView(_ChoicePage):
    form_class, refusal_of, template = AnswerForm, answer_refusal, "invoices/invoice_answer.html"

    def extra(self, invoices):
        from .matching import shown  # the check against the goods, in the confirmation (matching builds on us)

        checks = shown(invoices)
        for invoice in invoices:  # what the confirmation shows beside each
            invoice.goods_check, invoice.days_left = checks.get(invoice.pk), answer_days_left(invoice)
        return {}

    def start(self, invoices, cleaned):
        answer_request(invoices, accept=cleaned["answer"] == Answer.ACCEPT, reason=cleaned.get("reason") or "")

    def started(self, cleaned, count):
        return _("The answer to %(count)s invoice(s) is on its way; each invoice shows when the platform has it.") % {
            "count": count}


@register_model_view(Invoice, "cancel", path="cancel/")
class InvoiceCancelView(_ChoicePage):
    form_class, refusal_of, template = CancelForm, cancel_refusal, "invoices/invoice_cancel.html"

    def start(self, invoices, cleaned):
        cancel_request(invoices, reason=cleaned["reason"])

    def started(self, cleaned, count):
        return _("The cancellation of %(count)s e-archive invoice(s) is on its way; each invoice shows when the "
                 "platform has done it.") % {"count": count}


# The invoice list's buttons (their selection is posted to the pages above).
register_bulk_action(Invoice, "answer", BulkAction(gettext_lazy("Accept or reject"), None, style="success",
                                                   required_roles=EDITORS, url_name="invoices:invoice_answer"))
register_bulk_action(Invoice, "earchive_cancel", BulkAction(
    gettext_lazy("Cancel e-archive invoices"), None, style="danger", required_roles=EDITORS,
    url_name="invoices:invoice_cancel"))
