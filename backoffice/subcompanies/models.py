"""Sub-companies, their credit offers and products, and the usage report (document 1, sections 2 to 4).

UsageSnapshot keeps every fetch of the report as it came (raw) and parsed into ReportCustomer rows (the
caller's company and its sub-companies, recursively) with their ReportCredit rows. SubCompany is a
sub-company as the back-office knows it: created here (a RemoteRecord pushed to the platform) or found in
a report. SubCompanyOperation is one credit or product request sent to the platform.
"""

from django.db import models
from django.db.models import Case, Q, Value, When
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.models import Company, RemoteRecord, made_by
from backoffice.core.search import FoldedSearchField
from backoffice.core.validators import validate_platform_email

from .choices import OperationKind, Origin, ProductType, SubCompanyState


class UsageSnapshot(models.Model):
    """One fetch of GET /v1/sharedpoolusage/report: the body as it came, and when."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+", verbose_name=_("company"))
    fetched_at = models.DateTimeField(_("fetched at"), default=timezone.now)
    raw = models.JSONField(_("report as received"))

    class Meta:
        ordering = ["-fetched_at", "-pk"]
        indexes = [models.Index(fields=["company", "-fetched_at"], name="subcomp_snapshot_co_new")]
        verbose_name = _("usage report")
        verbose_name_plural = _("usage reports")

    def __str__(self):
        return _("Usage report of %(time)s") % {
            "time": timezone.localtime(self.fetched_at).strftime("%Y-%m-%d %H:%M")}


class ReportCustomer(models.Model):
    """One company in a snapshot (section 2.1): the caller's own at depth 0, its sub-companies below.

    Fields document 1 names have columns; every other field of the element is kept in `extra`, and the
    array elements (distributors, usages, overUsages) as they came. The three figures are read from
    element fields the document does not show (see report.py); None means the report did not say.
    """

    snapshot = models.ForeignKey(UsageSnapshot, on_delete=models.CASCADE, related_name="customers")
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+", verbose_name=_("company"))
    parent = models.ForeignKey("self", on_delete=models.CASCADE, null=True, blank=True, related_name="children")
    depth = models.PositiveSmallIntegerField(_("depth"), default=0)
    position = models.PositiveIntegerField(_("position"), default=0)
    customer_unique_id = models.CharField(_("platform customer id"), max_length=64, db_index=True)
    application_id = models.BigIntegerField(_("application id"), null=True, blank=True)
    application_source = models.IntegerField(_("application source"), null=True, blank=True)
    application_status = models.IntegerField(_("application status"), null=True, blank=True)
    application_create_date = models.DateTimeField(_("application created"), null=True, blank=True)
    distributors = models.JSONField(_("distributors"), default=list, blank=True)
    usages = models.JSONField(_("usages"), default=list, blank=True)
    over_usages = models.JSONField(_("over-usages"), default=list, blank=True)
    extra = models.JSONField(_("other fields"), default=dict, blank=True)
    credit_offered = models.BigIntegerField(_("credit offered"), null=True, blank=True)
    credit_used = models.BigIntegerField(_("credit used"), null=True, blank=True)
    credit_over_used = models.BigIntegerField(_("credit over-used"), null=True, blank=True)

    class Meta:
        ordering = ["snapshot", "position"]
        verbose_name = _("company in a usage report")
        verbose_name_plural = _("companies in usage reports")

    def __str__(self):
        return self.label

    @property
    def label(self) -> str:
        # "name" is not a field document 1 shows: used only when the report carries it.
        name = self.extra.get("name") if isinstance(self.extra, dict) else None
        return str(name) if name else self.customer_unique_id


class ReportCredit(models.Model):
    """One element of `credits` (section 2.1): its id is the applicationCreditId that cancels it."""

    customer = models.ForeignKey(ReportCustomer, on_delete=models.CASCADE, related_name="credits")
    application_credit_id = models.BigIntegerField(_("offer no."))
    data = models.JSONField(_("element"), default=dict)

    class Meta:
        ordering = ["customer", "pk"]
        verbose_name = _("credit offer in a usage report")
        verbose_name_plural = _("credit offers in usage reports")

    def __str__(self):
        return str(self.application_credit_id)

    @property
    def is_active(self) -> bool:
        # Only an explicit isActive: false (a field document 1 does not show) marks an offer inactive.
        return self.data.get("isActive") is not False

    @property
    def quantity(self):
        value = self.data.get("quantity")
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class SubCompanyQuerySet(models.QuerySet):
    def with_state(self):
        """Annotate `state` (SubCompanyState) so that lists can sort and filter by it."""
        return self.annotate(state_value=Case(
            When(~Q(remote_id=""), then=Value(SubCompanyState.ACTIVE)),
            When(sync_state=SyncState.FAILED, then=Value(SubCompanyState.REFUSED)),
            When(sync_state=SyncState.SYNCED, then=Value(SubCompanyState.WAITING)),
            default=Value(SubCompanyState.SENDING),
            output_field=models.CharField(),
        ))


class SubCompany(RemoteRecord):
    """A sub-company. Created here: the creation request (section 2.2) pushed to the platform, then
    "waiting for the platform" until a report contains its identifier (rule 3). remote_id is its
    customerUniqueId once a report has shown it."""

    origin = models.CharField(_("origin"), max_length=10, choices=Origin.choices, default=Origin.CREATED)
    identifier = models.CharField(_("tax number / national id"), max_length=11, blank=True, db_index=True)
    name = models.CharField(_("company title"), max_length=200, blank=True)
    quantity = models.PositiveBigIntegerField(_("credit quantity"), null=True, blank=True)
    contact_full_name = models.CharField(_("contact person"), max_length=200, blank=True)
    # As the platform checks it (document 1, 2.2), here too: the admin's form edits it.
    contact_email = models.EmailField(_("contact e-mail"), blank=True, validators=[validate_platform_email])
    search_text = FoldedSearchField(sources=("name", "identifier", "contact_full_name", "contact_email"))
    contact_phone = models.CharField(_("contact phone"), max_length=10, blank=True)
    created_by = made_by()
    # Set when the creation timed out after the request left: never sent again without the user's word.
    # When a request that may have reached the platform left (a 5xx, a timeout): it is not sent again before a
    # usage report fetched after it shows whether it took effect (services.*_reconcile).
    maybe_sent_at = models.DateTimeField(_("may have reached the platform at"), null=True, blank=True)
    seen_at = models.DateTimeField(_("first seen in a report"), null=True, blank=True)
    last_seen_at = models.DateTimeField(_("last seen in a report"), null=True, blank=True)
    report_row = models.ForeignKey(ReportCustomer, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+", verbose_name=_("latest report entry"))
    credit_offered = models.BigIntegerField(_("credit offered"), null=True, blank=True)
    credit_used = models.BigIntegerField(_("credit used"), null=True, blank=True)
    credit_over_used = models.BigIntegerField(_("credit over-used"), null=True, blank=True)

    objects = SubCompanyQuerySet.as_manager()

    class Meta(RemoteRecord.Meta):
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(fields=["company", "remote_id"], condition=~Q(remote_id=""),
                                    name="subcompanies_subcompany_unique_customer"),
        ]
        verbose_name = _("sub-company")
        verbose_name_plural = _("sub-companies")

    def __str__(self):
        return self.name or self.identifier or self.remote_id or f"#{self.pk}"

    @property
    def state(self) -> str:
        if self.remote_id:
            return SubCompanyState.ACTIVE
        if self.sync_state == SyncState.FAILED:
            return SubCompanyState.REFUSED
        if self.sync_state == SyncState.SYNCED:
            return SubCompanyState.WAITING
        return SubCompanyState.SENDING

    def get_state_display(self):
        return SubCompanyState(self.state).label

    @property
    def state_color(self):
        return SubCompanyState.color(self.state)


class SubCompanyOperation(RemoteRecord):
    """A credit offer (2.3), a cancellation, or products (2.4) for one sub-company or several at once."""

    kind = models.CharField(_("operation"), max_length=20, choices=OperationKind.choices)
    subcompanies = models.ManyToManyField(SubCompany, related_name="operations", verbose_name=_("sub-companies"))
    quantity = models.PositiveBigIntegerField(_("credit quantity"), null=True, blank=True)
    show_over_usage = models.BooleanField(_("deduct over-usage"), default=False)
    product_types = models.JSONField(_("products"), default=list, blank=True)
    application_credit_id = models.BigIntegerField(_("offer no."), null=True, blank=True)
    # Set when a send timed out after the request left: never sent again without the user's word.
    # When a request that may have reached the platform left (a 5xx, a timeout): it is not sent again before a
    # usage report fetched after it shows whether it took effect (services.*_reconcile).
    maybe_sent_at = models.DateTimeField(_("may have reached the platform at"), null=True, blank=True)
    response = models.JSONField(_("platform's answer"), null=True, blank=True)
    created_by = made_by(_("requested by"))

    class Meta(RemoteRecord.Meta):
        ordering = ["-created_at", "-pk"]
        # RemoteRecord's indexes, with names that fit the 30-character limit.
        indexes = [
            models.Index(fields=["company", "-created_at"], name="subcomp_op_co_new"),
            models.Index(fields=["sync_state", "updated_at"], name="subcomp_op_sync"),
        ]
        verbose_name = _("credit or product request")
        verbose_name_plural = _("credit and product requests")

    def __str__(self):
        return f"{self.get_kind_display()} #{self.pk}"

    def product_labels(self) -> list[str]:
        labels = dict(ProductType.choices)
        return [str(labels.get(value, value)) for value in self.product_types]
