from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import Journal, Period


@admin.register(Period)
class PeriodAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "remote_id", "remote_status", "task_status", "task_progress", "sync_state")
    list_filter = ("remote_status", "sync_state")
    search_fields = ("remote_id",)


@admin.register(Journal)
class JournalAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "check_state", "findings_count", "sync_state", "created_at")
    list_filter = ("check_state", "sync_state")
    search_fields = ("source_name", "remote_id")
    raw_id_fields = ("created_by", "period")
