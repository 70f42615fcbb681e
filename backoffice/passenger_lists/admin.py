from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import PassengerList


@admin.register(PassengerList)
class PassengerListAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "expedition_number", "expedition_time", "vehicle_plate", "state",
                    "sync_state", "total_payable_amount", "created_at")
    list_filter = ("state", "sync_state", "is_manual_plate", "company")
    search_fields = ("passenger_list_number", "remote_id", "expedition_number", "vehicle_plate")
    readonly_fields = (*RemoteRecordAdmin.readonly_fields, "passenger_list_number", "ticket_count",
                       "total_payable_amount", "total_commission_amount", "total_commission_tax_amount",
                       "replaced_by", "reported_at")
    raw_id_fields = ("created_by", "tickets")
