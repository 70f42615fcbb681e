from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from .models import AccessToken, ApiKey, Customer, Document, FaultRule, RequestLog, SandboxSetting, ServiceUser


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    extra = 0


class ServiceUserInline(admin.TabularInline):
    model = ServiceUser
    extra = 0


@admin.register(Customer)
class CustomerAdmin(admin.ModelAdmin):
    list_display = ["name", "customer_unique_id", "credits", "tier", "created"]
    search_fields = ["name", "customer_unique_id"]
    inlines = [ApiKeyInline, ServiceUserInline]

    @admin.display(description=_("tier"))
    def tier(self, obj):
        return f"T{obj.tier}"


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "customer"]
    list_select_related = ["customer"]


@admin.register(ServiceUser)
class ServiceUserAdmin(admin.ModelAdmin):
    list_display = ["username", "customer"]
    list_select_related = ["customer"]


@admin.register(AccessToken)
class AccessTokenAdmin(admin.ModelAdmin):
    list_display = ["customer", "created", "expires_at", "uses"]
    list_select_related = ["customer"]
    exclude = ["token"]


@admin.register(FaultRule)
class FaultRuleAdmin(admin.ModelAdmin):
    list_display = ["path", "method", "error_rate", "error_status", "latency_ms", "timeout_seconds", "timeout_after",
                    "after_apply", "storm_429", "expire_tokens", "remaining"]
    list_editable = ["error_rate", "latency_ms", "timeout_seconds", "storm_429", "expire_tokens", "remaining"]


@admin.register(SandboxSetting)
class SandboxSettingAdmin(admin.ModelAdmin):
    list_display = ["__str__", "token_lifetime_seconds", "token_max_uses", "rate_limit_scale",
                    "ticket_processing_seconds", "ticket_error_rate", "export_ready_seconds", "clock_offset_seconds"]

    def has_add_permission(self, request):
        return not SandboxSetting.objects.exists()

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(RequestLog)
class RequestLogAdmin(admin.ModelAdmin):
    list_display = ["created", "method", "path", "status", "customer"]
    list_filter = ["status", "method"]
    search_fields = ["path"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("kind", "number", "key", "status", "customer", "created", "due_at")
    list_filter = ("kind", "status")
    search_fields = ("key", "number")
    exclude = ("blob",)
