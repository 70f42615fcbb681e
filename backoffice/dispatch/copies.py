"""Copy of an outgoing dispatch note (issue 29, section 5): a new note with the same receiver, addresses, shipment
and lines, dated now (Istanbul), saved as a draft exactly as a new note of the form is (services.note_save with
requested status 0: it reaches the platform as a draft, sent later by the status change 0 -> 20). It gets a new
localReferenceId and a new number (the next of its prefix, or the platform's); nothing the platform gave the original
(its id, number, statuses, envelope) is copied.
"""

from django.db import transaction
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core.generic.registry import model_url, register_model_view
from backoffice.core.generic.guarded import GuardedButtonView
from backoffice.core.generic.views import BaseObjectView
from backoffice.core.roles import EDITORS

from . import services
from .choices import DispatchStatus, Numbering, Source
from .models import DispatchDriver, DispatchLine, DispatchNote

# What the user wrote on the original and a copy keeps.
COPIED_FIELDS = (
    "profile", "currency_code", "xslt_code", "prefix", "current_account", "receiver_identifier", "receiver_name",
    "receiver_code", "target_alias", "receiver_city", "receiver_district", "receiver_country", "delivery_district",
    "delivery_city", "delivery_zip_code", "delivery_country", "carrier_title", "carrier_vkn_tckn", "plate_number",
    "buyer_identifier", "buyer_name", "buyer_surname", "buyer_city", "buyer_district", "buyer_country",
    "seller_identifier", "seller_name", "seller_surname", "seller_city", "seller_district", "seller_country", "notes",
)
LINE_FIELDS = ("product_name", "product_code", "quantity", "unit_code", "unit_price", "vat_rate")


def copy_refusal(note) -> str:
    """Why this note cannot be copied ("" when it can)."""
    if note.source == Source.UBL:
        return _("This note came from a UBL file: copy it in the program that wrote the file and upload the new "
                 "file.")
    if note.source != Source.FORM or not note.lines.exists():
        return _("This note was written outside this back office and its lines are not kept here, so it cannot be "
                 "copied. Copy it where it was written, or write a new note.")
    return ""


@transaction.atomic
def note_copy(original, *, user=None) -> DispatchNote:
    """A new draft with the original's receiver, shipment and lines, dated now, saved as a new note of the form is
    (services.note_save: a new number and localReferenceId, sent to the platform as a draft, status 0)."""
    refusal = copy_refusal(original)
    if refusal:
        raise services.DispatchError(refusal)
    now = timezone.localtime()  # TIME_ZONE is Europe/Istanbul
    note = DispatchNote(company=original.company, source=Source.FORM, requested_status=DispatchStatus.DRAFT,
                        issue_date=now.date(), issue_time=now.time().replace(microsecond=0),
                        # the goods leave with the new note, not when the original's did
                        shipment_date=now.replace(second=0, microsecond=0) if original.shipment_date else None,
                        **{name: getattr(original, name) for name in COPIED_FIELDS})
    # A number typed by hand is the original's own: the copy takes the next number of that prefix instead.
    note.numbering = Numbering.SERIES if original.numbering == Numbering.MANUAL else original.numbering
    if note.numbering == Numbering.SERIES and not note.prefix:
        note.prefix = original.despatch_number[:3]
    lines = [DispatchLine(**{name: getattr(line, name) for name in LINE_FIELDS}) for line in original.lines.all()]
    drivers = [DispatchDriver(name=driver.name, surname=driver.surname, tckn=driver.tckn)
               for driver in original.drivers.all()]
    return services.note_save(note, lines, drivers, user=user)


@register_model_view(DispatchNote, "copy", path="<id:pk>/copy/")
class NoteCopyView(GuardedButtonView, BaseObjectView):
    """GET: a small confirmation page (nothing changes); POST: the copy, then its page, where it is followed to
    the platform as a draft and then edited or sent."""

    model = DispatchNote
    action = "copy"
    required_roles = EDITORS
    refused = services.DispatchError

    def get(self, request, pk):
        note = get_object_or_404(self.get_queryset(), pk=pk)
        return self.render({"object": note, "refusal": copy_refusal(note), "detail_url": model_url(note, "detail")})

    def guarded(self, note):  # the note's own refusal comes before the key's
        return not copy_refusal(note)

    def perform(self, note):
        return note_copy(note, user=self.request.user)

    def done_message(self, note, copy):
        return _("A copy of %(note)s was saved as a draft dated today; it is going to the platform as a draft, "
                 "nothing is sent to the receiver. Check it, then send it.") % {"note": note}
