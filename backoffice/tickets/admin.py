from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import EventTicket, PassengerTicket, TicketLine, TicketLineTax, TicketNote


class LineInline(admin.TabularInline):
    model = TicketLine
    extra = 0
    fields = ("position", "service_type", "service_description", "amount", "discount_rate", "discount_amount",
              "vat_rate", "vat_amount")


class TicketAdmin(RemoteRecordAdmin):
    list_display = ("ticket_number", "company", "remote_status", "sync_state", "payable_amount", "created_at")
    list_filter = ("remote_status", "sync_state", "company")
    search_fields = ("ticket_number", "remote_id", "identifier")
    readonly_fields = (*RemoteRecordAdmin.readonly_fields, "status_message", "total_amount", "total_discount",
                       "total_vat", "total_taxes", "payable_amount")
    raw_id_fields = ("created_by",)


# Each kind with its lines (a line points to its ticket by the kind's own key).
for _model, _key in ((EventTicket, "event_ticket"), (PassengerTicket, "passenger_ticket")):
    admin.site.register(_model, TicketAdmin, inlines=[type(f"{_model.__name__}LineInline", (LineInline,),
                                                          {"fk_name": _key})])


@admin.register(TicketLineTax)
class TicketLineTaxAdmin(admin.ModelAdmin):
    list_display = ("line", "tax_code", "taxt_rate", "taxt_amount")
    raw_id_fields = ("line",)


@admin.register(TicketNote)
class TicketNoteAdmin(admin.ModelAdmin):
    list_display = ("note", "event_ticket", "passenger_ticket")
    raw_id_fields = ("event_ticket", "passenger_ticket")
