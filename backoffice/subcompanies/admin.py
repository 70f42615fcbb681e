from django.contrib import admin

from .models import ReportCustomer, SubCompany, SubCompanyOperation, UsageSnapshot


@admin.register(SubCompany)
class SubCompanyAdmin(admin.ModelAdmin):
    list_display = ["__str__", "company", "identifier", "remote_id", "origin", "sync_state", "last_seen_at"]
    list_filter = ["origin", "sync_state", "company"]
    search_fields = ["name", "identifier", "remote_id"]
    readonly_fields = ["report_row", "created_at", "updated_at"]


@admin.register(SubCompanyOperation)
class SubCompanyOperationAdmin(admin.ModelAdmin):
    list_display = ["__str__", "company", "kind", "sync_state", "created_at"]
    list_filter = ["kind", "sync_state", "company"]
    filter_horizontal = ["subcompanies"]


class ReportCustomerInline(admin.TabularInline):
    model = ReportCustomer
    fields = ["depth", "customer_unique_id", "application_id", "credit_offered", "credit_used", "credit_over_used"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(UsageSnapshot)
class UsageSnapshotAdmin(admin.ModelAdmin):
    list_display = ["__str__", "company", "fetched_at"]
    list_filter = ["company"]
    inlines = [ReportCustomerInline]
