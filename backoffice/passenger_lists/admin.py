from django.contrib import admin

from .models import PassengerList, PassengerListExport, PassengerListReportItem, PassengerListReportRun


@admin.register(PassengerList)
class PassengerListAdmin(admin.ModelAdmin):
    list_display = ("__str__", "company", "expedition_number", "expedition_time", "vehicle_plate", "state",
                    "sync_state", "total_payable_amount", "created_at")
    list_filter = ("state", "sync_state", "is_manual_plate", "company")
    search_fields = ("passenger_list_number", "remote_id", "expedition_number", "vehicle_plate")
    readonly_fields = ("remote_id", "passenger_list_number", "sync_state", "attempts", "synced_at", "last_error",
                       "ticket_count", "total_payable_amount", "total_commission_amount",
                       "total_commission_tax_amount", "replaced_by", "reported_at", "created_at", "updated_at")
    raw_id_fields = ("created_by", "tickets")


@admin.register(PassengerListExport)
class PassengerListExportAdmin(admin.ModelAdmin):
    list_display = ("__str__", "company", "state", "created_at", "fetched_at")
    list_filter = ("state",)


@admin.register(PassengerListReportRun)
class PassengerListReportRunAdmin(admin.ModelAdmin):
    list_display = ("__str__", "company", "state", "pages_done", "total_pages", "item_count", "is_current")
    list_filter = ("state",)


@admin.register(PassengerListReportItem)
class PassengerListReportItemAdmin(admin.ModelAdmin):
    list_display = ("passenger_list_number", "company", "report_date", "expedition_number", "total_payable_amount")
    raw_id_fields = ("run",)
