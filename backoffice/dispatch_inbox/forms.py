"""Forms of the receiving side: the approval or rejection of several notes, the partial acceptance of one (a row
of fields per line, each error on the field that is wrong), a ReceiptAdvice file, and the incoming export. The rules
that need the note's state are the services' (answers.py) too, under a lock."""

from decimal import Decimal

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from backoffice.core import domains
from backoffice.core.fields import LocalizedDecimalField, SizedFileField, as_datetime_input

from .answers import delivery_refusal, quantity_shown
from .choices import ReplyStatus
from .conf import reply_prefix

dispatch_api = domains.api("dispatch")

DECISIONS = (("approve", _("Accept the goods")), ("reject", _("Reject the goods")))
REPLY_SEND_CHOICES = [(ReplyStatus.DRAFT.value, _("Save as a draft (send it later)")),
                      (ReplyStatus.QUEUED.value, _("Send now"))]


def _prefix_field():
    return forms.CharField(label=_("Prefix of the reply number"), max_length=3,
                           initial=reply_prefix,
                           help_text=_("Three capital letters or digits: the platform gives the reply the next number "
                                       "of this prefix."))


def _delivered_field(required):
    return as_datetime_input(forms.DateTimeField(
        label=_("Delivered at"), required=required,
        help_text=_("When the goods actually arrived; not in the future, not before the note's date.")))


def check_delivered(form, name, notes):
    value = form.cleaned_data.get(name)
    if value is not None and (refusal := delivery_refusal(value, notes)):
        raise ValidationError(refusal)
    return value


class AnswerForm(forms.Form):
    """Approve or reject the selected notes (document 3, 4.5: ids, isApprove, prefix, reason, actualDeliveryDate)."""

    decision = forms.ChoiceField(label=_("Answer"), choices=DECISIONS, widget=forms.RadioSelect)
    prefix = _prefix_field()
    reason = forms.CharField(label=_("Reason for rejection"), required=False, max_length=500,
                             widget=forms.Textarea(attrs={"rows": 3}),
                             help_text=_("Required when rejecting: the sender sees it."))
    delivered_at = _delivered_field(required=False)

    def __init__(self, *args, notes=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.notes = list(notes)

    def clean_prefix(self):
        return dispatch_api.clean_prefix(self.cleaned_data.get("prefix"))

    def clean_delivered_at(self):
        return check_delivered(self, "delivered_at", self.notes)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("decision") == "reject" and not (cleaned.get("reason") or "").strip():
            self.add_error("reason", _("Give the reason for the rejection: the sender sees it."))
        return cleaned


class PartialAcceptanceForm(forms.Form):
    """Per line: accepted and rejected quantities and the reason of a rejection; the delivery time and who received
    the goods; the prefix of the reply number (document 3, 2.9: partial accept)."""

    delivered_at = _delivered_field(required=True)
    delivery_contact = forms.CharField(label=_("Received by"), max_length=250,
                                       help_text=_("Who took delivery of the goods."))
    prefix = _prefix_field()

    def __init__(self, *args, note, lines, **kwargs):
        super().__init__(*args, **kwargs)
        self.note, self.lines = note, list(lines)
        for line in self.lines:
            key = self.key(line)
            self.fields[f"accepted_{key}"] = LocalizedDecimalField(
                label=_("Accepted quantity"), max_digits=18, decimal_places=6, min_value=Decimal(0),
                initial=line.quantity)
            self.fields[f"rejected_{key}"] = LocalizedDecimalField(
                label=_("Rejected quantity"), max_digits=18, decimal_places=6, min_value=Decimal(0), required=False,
                initial=Decimal(0))
            self.fields[f"reason_{key}"] = forms.CharField(label=_("Reason"), max_length=500, required=False)

    @staticmethod
    def key(line) -> str:
        return str(line.pk)

    def rows(self):
        """(line, accepted field, rejected field, reason field) for the template."""
        return [(line, self[f"accepted_{self.key(line)}"], self[f"rejected_{self.key(line)}"],
                 self[f"reason_{self.key(line)}"]) for line in self.lines]

    def clean_prefix(self):
        return dispatch_api.clean_prefix(self.cleaned_data.get("prefix"))

    def clean_delivered_at(self):
        return check_delivered(self, "delivered_at", [self.note])

    def clean(self):
        cleaned = super().clean()
        for line in self.lines:
            key = self.key(line)
            accepted, rejected = cleaned.get(f"accepted_{key}"), cleaned.get(f"rejected_{key}") or Decimal(0)
            if accepted is None:
                continue
            if accepted + rejected > line.quantity:
                self.add_error(f"rejected_{key}" if rejected else f"accepted_{key}", _(
                    "Accepted and rejected together exceed the delivered quantity (%(delivered)s).") % {
                    "delivered": quantity_shown(line.quantity)})
            if rejected > 0 and not (cleaned.get(f"reason_{key}") or "").strip():
                self.add_error(f"reason_{key}", _("Give the reason for the rejected quantity."))
        return cleaned

    def answers(self) -> list[dict]:
        return [{"line_id": line.line_id, "accepted": self.cleaned_data[f"accepted_{self.key(line)}"],
                 "rejected": self.cleaned_data.get(f"rejected_{self.key(line)}") or Decimal(0),
                 "reason": self.cleaned_data.get(f"reason_{self.key(line)}") or ""} for line in self.lines]


class ReplyUploadForm(forms.Form):
    """The user's own ReceiptAdvice (document 3, 2.9: the reply as UBL, zipped and Base64-encoded when sent)."""

    file = SizedFileField(label=_("ReceiptAdvice file (XML or ZIP)"), max_bytes=10 * 1024 * 1024,
                          help_text=_("A ReceiptAdvice in UBL-TR 1.2.1 answering this note, or a ZIP holding one. It "
                                      "is checked before anything is sent."))
    numbering = forms.ChoiceField(label=_("Numbering"), widget=forms.RadioSelect, initial="series",
                                  choices=[("series", _("The platform gives the next number of a prefix")),
                                           ("manual", _("The number inside the file"))])
    prefix = forms.CharField(label=_("Prefix of the reply number"), max_length=3, required=False,
                             initial=reply_prefix)
    requested_status = forms.TypedChoiceField(label=_("When to send"), choices=REPLY_SEND_CHOICES, coerce=int,
                                              initial=ReplyStatus.QUEUED.value, widget=forms.RadioSelect)

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("numbering") == "series":
            try:
                cleaned["prefix"] = dispatch_api.clean_prefix(cleaned.get("prefix"))
            except ValidationError as exc:
                self.add_error("prefix", exc)
        return cleaned


class IncomingExportForm(dispatch_api.DispatchExportForm):
    """The export body of document 3, 2.9 for incoming notes: startDate and endDate range over their creation."""

    def __init__(self, *args, kind=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["startDate"].label = _("Received from")
        self.fields["endDate"].label = _("Received until")
        self.fields["targetVknTckn"].label = _("Sender's tax or national id")
