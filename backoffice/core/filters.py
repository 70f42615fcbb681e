import django_filters
from django.conf import settings
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from .choices import AuthMethod, Environment, JobStatus, Role, service_label
from .generic import BaseFilterSet, DateFromFilter, DateToFilter, YesNoFilter
from .models import Company, JobRun, Membership, RemoteCall


class CompanyFilterSet(BaseFilterSet):
    search_fields = ("name", "service_username")
    environment = django_filters.ChoiceFilter(choices=Environment.choices, label=_("Environment"))
    auth_method = django_filters.ChoiceFilter(choices=AuthMethod.choices, label=_("Authentication method"))
    is_active = YesNoFilter(label=_("Active"))

    class Meta:
        model = Company
        fields = ("q", "environment", "auth_method", "is_active")


class MembershipFilterSet(BaseFilterSet):
    search_fields = ("user__username", "user__first_name", "user__last_name", "user__email")
    role = django_filters.ChoiceFilter(choices=Role.choices, field_name="user__groups__name", label=_("Role"),
                                       distinct=True)

    class Meta:
        model = Membership
        fields = ("q", "role")


STATUS_CLASSES = (
    ("2xx", _("Success (2xx)")),
    ("4xx", _("Refused (4xx)")),
    ("429", _("Rate limited (429)")),
    ("5xx", _("Server error (5xx)")),
    ("none", _("No response")),
)


class RemoteCallFilterSet(BaseFilterSet):
    search_fields = ("path", "operation", "correlation_id", "error")
    service = django_filters.ChoiceFilter(choices=[(s, service_label(s)) for s in settings.PLATFORM_SERVICES],
                                          label=_("Service"))
    method = django_filters.ChoiceFilter(
        choices=[(m, m) for m in ("GET", "POST", "PUT", "PATCH", "DELETE")], label=_("Method"))
    status = django_filters.ChoiceFilter(choices=STATUS_CLASSES, method="filter_status", label=_("Outcome"))
    date_from = DateFromFilter("created_at")
    date_to = DateToFilter("created_at")

    class Meta:
        model = RemoteCall
        fields = ("q", "service", "method", "status", "date_from", "date_to")

    def filter_status(self, queryset, name, value):
        if value == "none":
            return queryset.filter(status__isnull=True)
        if value == "429":
            return queryset.filter(status=429)
        low = {"2xx": 200, "4xx": 400, "5xx": 500}.get(value)
        if low is None:
            return queryset
        return queryset.filter(Q(status__gte=low) & Q(status__lt=low + 100))


class JobRunFilterSet(BaseFilterSet):
    search_fields = ("name", "target", "message")
    status = django_filters.ChoiceFilter(choices=JobStatus.choices, label=_("Status"))
    date_from = DateFromFilter("enqueued_at")
    date_to = DateToFilter("enqueued_at")

    class Meta:
        model = JobRun
        fields = ("q", "status", "date_from", "date_to")
