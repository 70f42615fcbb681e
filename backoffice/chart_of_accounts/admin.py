from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import Account


@admin.register(Account)
class AccountAdmin(RemoteRecordAdmin):
    list_display = ("full_code", "name", "company", "type", "is_bundle_account", "sync_state")
    list_filter = ("type", *RemoteRecordAdmin.list_filter)
    search_fields = ("full_code", "name", "remote_id")
    readonly_fields = (*RemoteRecordAdmin.readonly_fields, "full_code", "parent_remote_id", "has_child")
    raw_id_fields = ("parent",)
