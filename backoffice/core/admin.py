from django.contrib import admin
from django.db import models
from django.utils.translation import gettext_lazy as _

from .forms import BASE_URL_FIELDS, CompanyForm
from .models import Company, DocumentSeries, JobRun, Membership, RemoteCall


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows written by the machinery (audit, jobs, counters): look, never touch."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class RemoteRecordAdmin(admin.ModelAdmin):
    """A mirrored record: what the platform said and the sync machinery wrote is shown, not edited."""

    readonly_fields = ("remote_id", "remote_status", "sync_state", "pending_action", "attempts", "synced_at",
                       "last_error", "last_error_source", "created_at", "updated_at")
    list_filter = ("sync_state", "company")


def register_family_admin(family) -> None:
    """The export or report family's models in the operators' admin (core.families.register_family)."""
    kinds = ("kind",) if family.kinds else ()
    if hasattr(family, "model"):
        admin.site.register(family.model, list_display=("__str__", "company", *kinds, "state", "created_at",
                                                        "fetched_at"), list_filter=(*kinds, "state"))
        return
    admin.site.register(family.run_model, list_display=("__str__", "company", "state", "pages_done", "total_pages",
                                                        "item_count", "is_current"), list_filter=(*kinds, "state"))
    for item_model in family.item_models.values():
        admin.site.register(item_model, list_display=("__str__", "company", "report_date"), raw_id_fields=("run",))


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 1
    autocomplete_fields = ("user",)


@admin.register(Company)
class CompanyAdmin(admin.ModelAdmin):
    # The same form as the UI: the API key and password are write-only, empty keeps them.
    form = CompanyForm
    list_display = ("name", "environment", "auth_method", "credit_quantity", "is_active")
    list_filter = ("environment", "auth_method", "is_active")
    search_fields = ("name", "service_username")
    inlines = (MembershipInline,)
    fieldsets = (
        (None, {"fields": ("name", "customer_unique_id", "environment", "credit_quantity", "is_active")}),
        (_("Credentials"), {"fields": ("auth_method", "api_key", "service_username", "service_password")}),
        (_("Advanced: service URLs"), {"fields": BASE_URL_FIELDS, "classes": ("collapse",)}),
    )

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if isinstance(db_field, models.URLField):  # as in CompanyForm: no scheme typed means https
            kwargs["assume_scheme"] = "https"
        return super().formfield_for_dbfield(db_field, request, **kwargs)


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user", "company")
    list_filter = ("company",)
    search_fields = ("user__username", "user__email", "company__name")
    autocomplete_fields = ("user",)


@admin.register(RemoteCall)
class RemoteCallAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "company", "service", "method", "path", "status", "duration_ms")
    list_filter = ("service", "method", "status", "company")
    search_fields = ("path", "operation", "correlation_id")
    date_hierarchy = "created_at"


@admin.register(JobRun)
class JobRunAdmin(ReadOnlyAdmin):
    list_display = ("enqueued_at", "company", "name", "target", "status", "attempts", "finished_at")
    list_filter = ("status", "name", "company")
    search_fields = ("name", "target", "message", "rq_job_id")
    date_hierarchy = "enqueued_at"


@admin.register(DocumentSeries)
class DocumentSeriesAdmin(ReadOnlyAdmin):
    list_display = ("company", "kind", "prefix", "year", "last_counter")
    list_filter = ("kind", "year", "company")
