from django.contrib import admin

from backoffice.core.admin import RemoteRecordAdmin

from .models import Address, Bank, Contact, CurrentAccount, Mapping


@admin.register(CurrentAccount)
class CurrentAccountAdmin(RemoteRecordAdmin):
    list_display = ("__str__", "company", "identifier", "code", "sync_state", "created_at")
    search_fields = ("name", "surname", "identifier", "code", "remote_id")
    readonly_fields = (*RemoteRecordAdmin.readonly_fields, "total_balance", "is_used", "details_read_at")
    raw_id_fields = ("created_by",)


for _model in (Address, Bank, Contact, Mapping):
    admin.site.register(_model, RemoteRecordAdmin, list_display=("__str__", "company", "current_account",
                                                                 "sync_state"),
                        raw_id_fields=("current_account", *(("account",) if _model is Mapping else ())))
