from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import Invoice, Taxpayer


@admin.register(Invoice)
class InvoiceAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "is_send", "record_type", "issue_date", "remote_status", "sync_state")
    list_filter = ("is_send", "record_type", "record_status", "sync_state")
    search_fields = ("invoice_number", "remote_id", "target_vkn_tckn", "target_title")
    readonly_fields = (*RemoteRecordAdmin.readonly_fields, "detail", "detail_read_at")
    raw_id_fields = ("created_by", "current_account")


@admin.register(Taxpayer)
class TaxpayerAdmin(admin.ModelAdmin):
    list_display = ("identifier", "alias", "title", "app_type", "seen_at")
    search_fields = ("identifier", "alias", "title")
