import django_tables2 as tables
from django.utils.html import format_html
from django.utils.translation import gettext_lazy as _

from .choices import JobStatus, Role, service_label
from .generic import BaseTable, ChoiceBadgeColumn, DateTimeColumn, LinkedColumn, ProgressColumn
from .generic.registry import target_label
from .models import Company, JobRun, Membership, RemoteCall
from .templatetags.backoffice import http_status_badge


class CompanyTable(BaseTable):
    name = LinkedColumn()
    environment = tables.Column()
    tier = tables.Column(verbose_name=_("tier"), accessor="credit_quantity", orderable=False)
    member_count = tables.Column(verbose_name=_("members"), attrs={"td": {"class": "text-end"},
                                                                   "th": {"class": "text-end"}})

    secondary_columns = ("auth_method", "credit_quantity", "tier", "member_count")

    class Meta(BaseTable.Meta):
        model = Company
        fields = ("name", "environment", "auth_method", "credit_quantity", "tier", "member_count", "is_active")

    def render_environment(self, value, record):
        color = {"production": "danger", "test": "warning"}.get(record.environment, "secondary")
        return format_html('<span class="badge text-bg-{}">{}</span>', color, value)

    def render_tier(self, record):
        return f"T{record.tier}"

    def value_tier(self, record):
        return f"T{record.tier}"


class MembershipTable(BaseTable):
    user = LinkedColumn(verbose_name=_("user"), accessor="user__username")
    full_name = tables.Column(verbose_name=_("name"), accessor="user__first_name", orderable=False)
    email = tables.Column(verbose_name=_("e-mail"), accessor="user__email")
    roles = tables.Column(verbose_name=_("roles"), accessor="user", orderable=False)
    last_login = DateTimeColumn(verbose_name=_("last sign-in"), accessor="user__last_login")

    secondary_columns = ("full_name", "email", "last_login")

    class Meta(BaseTable.Meta):
        model = Membership
        fields = ("user", "full_name", "email", "roles", "last_login")
        order_by = ("user",)

    def render_full_name(self, record):
        return record.user.get_full_name() or "—"

    def value_full_name(self, record):
        return record.user.get_full_name()

    def _roles(self, record):
        labels = dict(Role.choices)
        # user.groups is prefetched by the list view: no query per row.
        return [labels[g.name] for g in record.user.groups.all() if g.name in labels]

    def render_roles(self, record):
        roles = self._roles(record)
        if record.user.is_superuser:
            roles = [_("Superuser")]
        if not roles:
            return format_html('<span class="text-body-secondary">{}</span>', _("no role"))
        return format_html(" ".join(['<span class="badge text-bg-light border">{}</span>'] * len(roles)), *roles)

    def value_roles(self, record):
        return ", ".join(str(r) for r in self._roles(record))


class RemoteCallTable(BaseTable):
    created_at = DateTimeColumn()
    status = tables.Column(empty_values=())  # None (no response) gets its own badge
    path = LinkedColumn(attrs={"td": {"class": "text-truncate font-monospace small mw-28rem"}})
    duration_ms = tables.Column(attrs={"td": {"class": "text-end"}, "th": {"class": "text-end"}})

    secondary_columns = ("service", "operation", "path")
    tertiary_columns = ("method", "duration_ms", "correlation_id")

    class Meta(BaseTable.Meta):
        model = RemoteCall
        fields = ("created_at", "service", "operation", "method", "path", "status", "duration_ms", "correlation_id")

    def render_status(self, value):
        return http_status_badge(value)

    def value_status(self, value):
        return value

    def render_service(self, value):
        return service_label(value)

    def value_service(self, value):
        return str(service_label(value))


class JobRunTable(BaseTable):
    name = LinkedColumn(verbose_name=_("job"), accessor="label", order_by="name")
    status = ChoiceBadgeColumn(JobStatus)
    progress = ProgressColumn()
    message = tables.Column(attrs={"td": {"class": "text-truncate small mw-32rem"}})
    enqueued_at = DateTimeColumn()
    started_at = DateTimeColumn()
    finished_at = DateTimeColumn()

    secondary_columns = ("target", "progress", "message", "enqueued_at")
    tertiary_columns = ("attempts", "started_at", "finished_at")

    class Meta(BaseTable.Meta):
        model = JobRun
        fields = ("name", "target", "status", "progress", "message", "attempts", "enqueued_at", "started_at",
                  "finished_at")
        empty_text = _("No background work yet. Jobs appear here as soon as something is sent or fetched.")

    def render_target(self, value):
        label, url = target_label(value)
        return format_html('<a href="{}">{}</a>', url, label) if url else label

    def value_target(self, value):
        return target_label(value)[0]
