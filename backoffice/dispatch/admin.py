from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import DispatchNote, DispatchTaxpayer


@admin.register(DispatchNote)
class DispatchNoteAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "issue_date", "receiver_name", "remote_status", "sync_state")
    list_filter = ("source", "sync_state")
    search_fields = ("despatch_number", "remote_id", "local_reference_id", "receiver_identifier")
    raw_id_fields = ("created_by", "current_account")


@admin.register(DispatchTaxpayer)
class DispatchTaxpayerAdmin(admin.ModelAdmin):
    list_display = ("identifier", "alias", "title", "app_type", "seen_at")
    search_fields = ("identifier", "alias", "title")
