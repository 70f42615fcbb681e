"""A ticket as the platform's create and update bodies name it (document 2, sections 2.1 to 2.4), and the
fields by which a ticket the platform holds under our number is told to be ours or another one."""

from django.db.models import prefetch_related_objects
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from backoffice.core.payloads import camel_names, money, num, when

from .models import EventTicket
from .vehicle import operator_body

# Body fields copied as they are: the platform's name is the model field's in camel case (ticket_number is
# ticketNumber). Document 2, 2.1 (both kinds), 2.2 (event) and 2.3 (passenger, with the vehicle operator's).
COMMON_FIELDS = camel_names(
    "document_type", "ticket_number", "prefix", "currency_code", "reference_number", "identifier",
    "customer_first_name", "customer_last_name", "customer_street", "customer_building_name", "customer_building_no",
    "customer_door_no", "customer_town", "customer_district", "customer_city", "customer_post_code",
    "customer_country", "customer_telephone", "customer_email", "is_email_send", "customer_tax_center",
    "payment_type", "payment_description", "record_expenses_vkn_tckn", "record_expenses_title", "xslt_code")
EVENT_FIELDS = camel_names("seat_number", "event_name", "event_location", "event_city", "event_municipality",
                           "event_description", "event_organizer_vkn_tckn")
PASSENGER_FIELDS = camel_names("vehicle_plate", "expedition_number", "departure_location", "destination",
                               "seat_number")


def ticket_payload(ticket, *, update=False) -> dict:
    """The create (or update) body of a ticket, with the platform's field names.

    currencyCode is never empty (TRY); eventCityId is not part of the update model; ettn is required
    for an update; taxes are spelled taxtRate / taxtAmount.
    """
    body = {"status": int(ticket.requested_status), "ticketType": ticket.ticket_type,
            "ticketDate": when(ticket.ticket_date), "exchangeRate": num(ticket.exchange_rate)}
    body.update({key: getattr(ticket, name) for key, name in COMMON_FIELDS.items()})
    body["currencyCode"] = ticket.currency_code or "TRY"
    if isinstance(ticket, EventTicket):
        body.update({key: getattr(ticket, name) for key, name in EVENT_FIELDS.items()})
        body["eventTime"] = when(ticket.event_time)
        if not update:
            body["eventCityId"] = ticket.event_city_id
    else:
        body.update({key: getattr(ticket, name) for key, name in PASSENGER_FIELDS.items()})
        body.update({**operator_body(ticket), "expeditionTime": when(ticket.expedition_time),
                     "departureDate": when(ticket.departure_date)})
    prefetch_related_objects([ticket], "lines__taxes", "notes")  # no-op when the caller prefetched them
    body["ticketLines"] = [
        {"serviceType": line.service_type, "serviceDescription": line.service_description,
         "amount": num(line.amount), "discountRate": num(line.discount_rate),
         "discountAmount": num(line.discount_amount), "vatRate": num(line.vat_rate),
         "vatAmount": num(line.vat_amount),
         "taxes": [{"taxCode": tax.tax_code, "taxName": tax.tax_name, "taxtRate": num(tax.taxt_rate),
                    "taxtAmount": num(tax.taxt_amount)} for tax in line.taxes.all()]}
        for line in ticket.lines.all()
    ]
    body["notes"] = [{"note": note.note} for note in ticket.notes.all()]
    if update:
        body["ettn"] = ticket.remote_id
    return body


# What identifies a ticket besides its number (document 2, 2.1 to 2.3), {platform name: model field}: a ticket
# the platform holds under our number is ours only when these agree (those its answer carries), with its date
# (to the minute) and payable amount (to the cent).
IDENTITY = camel_names("identifier", "customer_first_name", "customer_last_name", "seat_number", "event_name",
                       "expedition_number", "vehicle_plate")


def ticket_differences(ticket, found: dict) -> list[str]:
    """The platform names of the identifying fields where the platform's ticket differs from ours."""
    differ = [key for key, name in IDENTITY.items() if hasattr(ticket, name) and key in found
              and str(found[key] or "").strip() != str(getattr(ticket, name) or "").strip()]
    if found.get("ticketDate") and ticket.ticket_date and not _same_moment(str(found["ticketDate"]),
                                                                          ticket.ticket_date):
        differ.append("ticketDate")
    if found.get("payableAmount") is not None and money(found["payableAmount"]) != money(ticket.payable_amount):
        differ.append("payableAmount")
    return differ


def _same_moment(text: str, ours) -> bool:
    """The platform's ticketDate against ours: to the minute (naive means Istanbul time), or by the day when it
    gives a date only; a date it writes some other way is not held against the ticket."""
    try:
        moment = parse_datetime(text) if len(text.strip()) > 10 else None
        if moment is None:
            day = parse_date(text[:10])
            return day is None or day == timezone.localtime(ours).date()
    except ValueError:
        return True
    if timezone.is_naive(moment):
        moment = timezone.make_aware(moment)
    return moment.replace(second=0, microsecond=0) == ours.replace(second=0, microsecond=0)
