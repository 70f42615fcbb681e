from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import DispatchReply, IncomingNote


@admin.register(IncomingNote)
class IncomingNoteAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "issue_date", "sender_title", "remote_status", "received_at")
    search_fields = ("despatch_number", "remote_id", "sender_identifier")


@admin.register(DispatchReply)
class DispatchReplyAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "note", "answer", "way", "remote_status", "sync_state")
    list_filter = ("way", "answer", "sync_state")
    search_fields = ("receipt_number", "remote_id", "uuid")
    raw_id_fields = ("created_by", "note")
