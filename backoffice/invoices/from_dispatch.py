"""Faturalaştır (issue 33, point 1): a local draft invoice made from one or several approved outgoing dispatch notes of
one customer, with their lines at the quantities the receiver accepted, and the notes it bills (DispatchReference).

How the invoice carries the notes: the JSON model of document 3 (2.6) has no member for a dispatch note in a save
or an update (UBL's cac:DespatchDocumentReference; the despatchId and despatchItemId of a saved line are the
platform's answer, not ours to send). So the draft writes each note the way integrators do, one note line each,
"İrsaliye No: ABC2026000000001 İrsaliye Tarihi: 01.12.2026" (in Turkish: it is printed on the invoice), and an
e-archive draft hides the "İrsaliye yerine geçer" text (hideDespatchMessage): its goods had an e-dispatch note.
docs/README-goods-to-invoice.md says the same.

A note is invoiced while an invoice that references it stands: deleted, declined (80), returned (90) or cancelled
(10, 100), the invoice frees it (FREEING_STATUSES). An invoice in error (40) still holds its notes: it is corrected
and sent again. The dispatch domain keeps which invoice bills each note for its 7-day watch (dispatch.api
set_invoiced); sync_notes() tells it, after a draft is made, an invoice is deleted, and a poll or a list reading
changed statuses.
"""

from decimal import Decimal

from django.contrib import messages
from django.db import transaction
from django.db.models.signals import pre_delete
from django.dispatch import receiver
from django.http import Http404
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import domains
from backoffice.core.choices import SyncState
from backoffice.core.generic.guarded import SubmissionGuardMixin
from backoffice.core.generic.registry import model_url, register_bulk_action, register_model_view
from backoffice.core.generic.views import BaseObjectView, BulkAction, safe_return_url
from backoffice.core.roles import EDITORS
from backoffice.core.security import parse_ids
from backoffice.core.submissions import replay_message, submitted_object

from . import services, taxpayers
from .choices import InvoiceStatus, Profile, RecordType
from .models import DispatchReference, Invoice, InvoiceLine

dispatch_api = domains.api("dispatch")
accounts_api = domains.api("current_accounts")

FREEING_STATUSES = (InvoiceStatus.DECLINED, InvoiceStatus.RETURNED, InvoiceStatus.CANCELLED,
                    InvoiceStatus.EARCHIVE_CANCELLED)
MAX_NOTES = 50  # one invoice; its lines stay within the form's 500


class FromDispatchRefused(services.InvoiceError):
    pass


def standing(references):
    """References whose invoice still bills the note."""
    return references.exclude(invoice__remote_status__in=FREEING_STATUSES)


def first_invoices(company, note_pks) -> dict:
    """{note pk: the first standing invoice that bills it} of these notes."""
    found = {}
    for reference in standing(DispatchReference.objects.filter(invoice__company=company, note_id__in=note_pks)
                              ).select_related("invoice").order_by("invoice_id"):
        found.setdefault(reference.note_id, reference.invoice)
    return found


def refusal(notes) -> str:
    """Why these notes cannot be invoiced together ("" when they can). Already invoiced is not a refusal: the
    confirmation names the first invoice and asks (invoiced_before)."""
    if not notes:
        return _("Select at least one dispatch note.")
    if len(notes) > MAX_NOTES:
        return _("One invoice bills at most %(count)s dispatch notes; select fewer.") % {"count": MAX_NOTES}
    waiting = [note for note in notes if note.remote_status not in dispatch_api.INVOICEABLE_STATUSES]
    if waiting:
        return _("Only notes the receiver approved (or accepted in part) are invoiced here: %(notes)s.") % {
            "notes": "; ".join(f"{note} ({note.get_remote_status_display() or _('not on the platform')})"
                               for note in waiting)}
    customers = {(note.receiver_identifier, note.receiver_code) for note in notes}
    if len(customers) > 1:
        return _("An invoice bills one customer, and these notes go to %(count)s: %(notes)s. Select the notes of one "
                 "customer.") % {"count": len(customers), "notes": "; ".join(
                     f"{note} → {note.receiver_name or note.receiver_identifier}" for note in notes)}
    currencies = {note.currency_code for note in notes}
    if len(currencies) > 1:
        return _("These notes are in different currencies (%(currencies)s): an invoice has one.") % {
            "currencies": ", ".join(sorted(currencies))}
    unread = [str(note) for note in notes if note.remote_status == dispatch_api.DispatchStatus.PARTIALLY_ACCEPTED
              and not dispatch_api.answered_lines(note)[2]]
    if unread:  # invoiced at what was dispatched, it would bill what the receiver refused
        return _("The receiver accepted these notes in part, and its reply's lines are not read yet: %(notes)s. "
                 "Wait a few minutes (the replies are read with the incoming notes) and try again.") % {
                     "notes": ", ".join(unread)}
    bare = [str(note) for note in notes if not note.lines.exists()]
    if bare:
        return _("These notes were read from the platform's list, which gives no lines, so there is nothing to "
                 "invoice from here: %(notes)s. Write the invoice by hand.") % {"notes": ", ".join(bare)}
    return ""


def invoiced_before(notes) -> list:
    """[(note, the first invoice that bills it)] of the notes already invoiced."""
    if not notes:
        return []
    first = first_invoices(notes[0].company, [note.pk for note in notes])
    return [(note, first[note.pk]) for note in notes if note.pk in first]


def note_lines(note) -> list[dict]:
    """Each line of the note with what the invoice takes of it: the accepted quantity where the receiver answered
    the line, else the quantity dispatched; a line rejected in full is left out (shown, not invoiced)."""
    lines, receipt, answered = dispatch_api.answered_lines(note)
    rows = []
    for position, line in enumerate(lines, start=1):
        answer = getattr(line, "answer", None) if answered else None
        accepted = answer.accepted if answer is not None else None
        invoiced = line.quantity if accepted is None else accepted
        rows.append({"line": line, "position": position, "dispatched": line.quantity, "accepted": accepted,
                     "rejected": answer.rejected if answer is not None else Decimal(0),
                     "reason": answer.reason if answer is not None else "", "invoiced": invoiced,
                     "plain": format(invoiced.normalize(), "f")})
    return rows


def _invoice_line(note, row) -> InvoiceLine:
    line = row["line"]
    return InvoiceLine(
        inventory_service_code=(line.product_code or line.product_name)[:100], quantity=row["invoiced"],
        unit_code=line.unit_code or "C62", unit_price=line.unit_price, vat_rate=line.vat_rate,
        despatch_source=f"{note.despatch_number} · {row['position']}"[:40], despatched_quantity=row["dispatched"],
        accepted_quantity=row["accepted"])


def note_text(note) -> str:
    """The note line the invoice carries for a dispatch note, as integrators write it (printed on the invoice)."""
    day = note.issue_date.strftime("%d.%m.%Y") if note.issue_date else ""
    return f"İrsaliye No: {note.despatch_number} İrsaliye Tarihi: {day}".strip()


def _customer(note):
    if note.current_account_id:
        return note.current_account
    pair = (note.receiver_identifier, note.receiver_code)
    return accounts_api.invoice_accounts(note.company, [pair])[pair]


def _last_prefix(company) -> str:
    return (Invoice.objects.filter(company=company, is_send=True).exclude(prefix="").order_by("-pk")
            .values_list("prefix", flat=True).first() or "")


def _draft(notes, *, user) -> Invoice:
    first = notes[0]
    account = _customer(first)
    boxes = taxpayers.mailboxes(first.receiver_identifier)
    kind = RecordType.EINVOICE if boxes else RecordType.EARCHIVE
    numbers = ", ".join(note.despatch_number for note in notes)
    invoice = Invoice(
        company=first.company, is_send=True, created_by=user, issue_date=timezone.localdate(),
        sync_state=SyncState.LOCAL, record_type=kind,
        profile=Profile.TEMELFATURA if kind == RecordType.EINVOICE else Profile.EARSIVFATURA,
        target_alias=boxes[0].alias if len(boxes) == 1 else "", current_account=account,
        current_account_code=first.receiver_code, target_vkn_tckn=first.receiver_identifier,
        target_title=(str(account) if account is not None else first.receiver_name)[:500],
        currency_code=first.currency_code or "TRY", prefix=_last_prefix(first.company),
        description=(_("Goods of dispatch notes %(numbers)s") % {"numbers": numbers})[:500],
        notes="\n".join(note_text(note) for note in notes),
        hide_despatch_message=kind == RecordType.EARCHIVE)
    invoice.new_ettn()
    return invoice


def invoice_from_notes(notes, *, user=None, again=False) -> Invoice:
    """A local draft (nothing sent) billing these notes; the notes are invoiced from now on. `again`: the user
    confirmed invoicing notes another invoice already bills. Under the notes' row locks, so two users (or a
    double click past the form's key) cannot both invoice a note without seeing the other's invoice."""
    with transaction.atomic():
        pks = sorted(note.pk for note in notes)
        notes = list(dispatch_api.DispatchNote.objects.select_for_update().filter(pk__in=pks).order_by(
            "issue_date", "despatch_number", "pk"))
        reason = refusal(notes)
        if reason:
            raise FromDispatchRefused(reason)
        before = invoiced_before(notes)
        if before and not again:
            raise FromDispatchRefused(already_message(before))
        lines = [_invoice_line(note, row) for note in notes for row in note_lines(note) if row["invoiced"] > 0]
        if not lines:
            raise FromDispatchRefused(_("The receiver rejected every line of these notes: there is nothing to "
                                        "invoice."))
        invoice = services.draft_store(_draft(notes, user=user), lines)
        DispatchReference.objects.bulk_create([DispatchReference(
            invoice=invoice, note=note, despatch_number=note.despatch_number, issue_date=note.issue_date)
            for note in notes])
        sync_notes(invoice.company, pks)
    return invoice


def already_message(before) -> str:
    return _("Already invoiced: %(pairs)s. Tick the confirmation to invoice them again.") % {
        "pairs": "; ".join(_("%(note)s by invoice %(invoice)s") % {"note": note, "invoice": label(invoice)}
                           for note, invoice in before)}


def label(invoice) -> str:
    """How the watch names the invoice that bills a note: its number, else its draft's ettn."""
    return invoice.invoice_number or f"{(invoice.ettn or invoice.remote_id)[:8]}…"


def target(invoice) -> str:
    return f"{invoice._meta.label_lower}:{invoice.pk}"


def sync_notes(company, note_pks=None) -> int:
    """Tell the dispatch domain which invoice bills each note (its first standing one), and which notes no invoice
    bills any more; only what changed is written. Without note_pks: every note of the company."""
    references = standing(DispatchReference.objects.filter(invoice__company=company, note__isnull=False))
    shown = dispatch_api.invoiced_notes(company)
    if note_pks is not None:
        references, shown = references.filter(note_id__in=note_pks), shown.filter(pk__in=note_pks)
    first = {}
    for note_pk, pk, number, ettn, remote_id in references.order_by("invoice_id").values_list(
            "note_id", "invoice_id", "invoice__invoice_number", "invoice__ettn", "invoice__remote_id"):
        first.setdefault(note_pk, (number or f"{(ettn or remote_id)[:8]}…", f"invoices.invoice:{pk}"))
    now = {pk: (label_, target_) for pk, label_, target_ in shown.values_list("pk", "invoiced_as", "invoiced_target")}
    marks = {pk: mark for pk, mark in first.items() if now.get(pk) != mark}
    marks.update({pk: ("", "") for pk in now.keys() - first.keys()})
    return dispatch_api.set_invoiced(company, marks) if marks else 0


def invoice_moved(invoice) -> int:
    """An invoice's number or status changed (it landed, it was read again): the notes it bills follow."""
    pks = list(DispatchReference.objects.filter(invoice_id=invoice.pk, note__isnull=False).values_list("note_id",
                                                                                                       flat=True))
    return sync_notes(invoice.company, pks) if pks else 0


def invoices_moved(company, invoices) -> int:
    """Invoices whose number or status changed (a status poll, a list reading): the notes they bill follow; one
    query for the notes of all of them."""
    pks = list(DispatchReference.objects.filter(invoice__in=[invoice.pk for invoice in invoices], note__isnull=False)
               .values_list("note_id", flat=True))
    return sync_notes(company, pks) if pks else 0


def invoices_read(company, ettns) -> int:
    """The outgoing invoices a reading of the list brought (by ettn): the notes they bill follow."""
    pks = list(DispatchReference.objects.filter(invoice__company=company, invoice__is_send=True,
                                                invoice__remote_id__in=list(ettns), note__isnull=False)
               .values_list("note_id", flat=True))
    return sync_notes(company, pks) if pks else 0


services.landed_hooks.append(invoice_moved)


@receiver(pre_delete, sender=Invoice, dispatch_uid="invoices_free_notes")
def _free_notes(sender, instance, **kwargs):
    """An invoice deleted frees its notes, once the deletion is committed."""
    pks = list(DispatchReference.objects.filter(invoice=instance, note__isnull=False).values_list("note_id",
                                                                                                  flat=True))
    if pks:
        company = instance.company
        transaction.on_commit(lambda: sync_notes(company, pks))


# --- the page ------------------------------------------------------------------------------------------------------
@register_model_view(Invoice, "from_dispatch", path="from-dispatch/")
class InvoiceFromDispatchView(SubmissionGuardMixin, BaseObjectView):
    """The selected notes (the dispatch list's checkboxes by POST, or a note's button by GET ?pk=) with the lines
    the invoice takes and why; the confirming POST makes the draft and opens its form. Nothing is sent."""

    model = Invoice
    action = "from_dispatch"
    required_roles = EDITORS

    def get_template_names(self):
        return ["invoices/invoice_from_dispatch.html"]

    def selected(self, values):
        """The active company's notes of these pks; one that is not (another company's) is a 404."""
        pks = set(parse_ids(values))
        notes = list(dispatch_api.DispatchNote.objects.filter(company=self.request.company, pk__in=pks)
                     .select_related("current_account", "company").order_by("issue_date", "despatch_number", "pk"))
        if len(notes) != len(pks):
            raise Http404
        return notes

    def guard_target(self, context):
        return context.get("notes") if not context.get("refusal") else None

    def page(self, notes, *, status=200, error="", unchecked=False):
        before = invoiced_before(notes)
        back = safe_return_url(self.request, self.request.POST.get("return_url") or self.request.GET.get(
            "return_url"), model_url(dispatch_api.DispatchNote, "list") or "/")
        rows = [(note, note_lines(note)) for note in notes]
        return self.render({"notes": notes, "rows": rows, "refusal": refusal(notes), "error": error,
                            "before": before, "unchecked": unchecked, "return_url": back,
                            "customer": notes[0].receiver_name if notes else "",
                            "skipped": sum(1 for _note, lines in rows for row in lines if row["invoiced"] <= 0)},
                           status=status)

    def get(self, request):
        if not request.GET.getlist("pk"):
            return redirect(model_url(dispatch_api.DispatchNote, "list") or "/")
        return self.page(self.selected(request.GET.getlist("pk")))

    def post(self, request):
        notes = self.selected(request.POST.getlist("pk"))
        if not notes:
            messages.warning(request, _("Select at least one record first."))
            return redirect(model_url(dispatch_api.DispatchNote, "list") or "/")
        if not request.POST.get("confirm"):  # from the list: the page, nothing made yet
            return self.page(notes)
        again = bool(request.POST.get("again"))
        unconfirmed = bool(invoiced_before(notes)) and not again  # after the key: a replay opens the first draft
        try:
            invoice, answered = self.guarded_submit(
                self.guard_for(notes), None, lambda: invoice_from_notes(notes, user=request.user, again=again),
                valid=lambda: not unconfirmed, invalid=lambda: self.page(notes, status=400, unchecked=unconfirmed))
        except FromDispatchRefused as exc:
            return self.page(notes, status=400, error=str(exc))
        if answered is not None:
            return answered
        messages.success(request, _("A draft invoice of %(count)s dispatch note(s) was saved; nothing was sent. Check "
                                    "it, save it, then send it from its page.") % {"count": len(notes)})
        return redirect(model_url(invoice, "edit"))

    def replayed(self, submission):
        """Back and confirm again (or a second click) opens the draft the first made: never a second invoice."""
        made = submitted_object(submission) if submission.user_id == self.request.user.pk else None
        messages.info(self.request, replay_message(submission, made))
        visible = made is not None and made.company_id == self.request.company.pk
        return redirect(model_url(made, "edit") if visible else model_url(Invoice, "list"))


# The dispatch note list's button (its selection is posted here).
register_bulk_action(dispatch_api.DispatchNote, "invoice", BulkAction(
    gettext_lazy("Invoice the notes"), None, style="success", required_roles=EDITORS,
    url_name="invoices:invoice_from_dispatch"))
