from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.db.models import F, Q
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from .choices import AuthMethod, Environment, JobStatus, SyncState
from .crypto import EncryptedTextField
from .failures import error_heading, error_text
from .joblabels import job_label
from .tiers import tier_for_credits


# The company's own service URLs, one per service of settings.PLATFORM_SERVICES (auth: auth_url).
BASE_URL_FIELDS = ("auth_url", "ticket_base_url", "invoice_base_url", "accounting_base_url", "ledger_base_url",
                   "dispatch_base_url", "crm_base_url")


class Company(models.Model):
    """One connection to the platform: credentials, environment with its base URLs, and credit tier."""

    name = models.CharField(_("display name"), max_length=200)
    customer_unique_id = models.UUIDField(
        _("platform customer id"), null=True, blank=True, unique=True,
        help_text=_("The company's id on the platform (read from the usage report)."),
    )
    environment = models.CharField(_("environment"), max_length=20, choices=Environment.choices,
                                   default=Environment.SANDBOX)
    auth_method = models.CharField(_("authentication method"), max_length=20, choices=AuthMethod.choices,
                                   default=AuthMethod.API_KEY)
    api_key = EncryptedTextField(_("API key"), blank=True)
    service_username = models.CharField(_("service user name"), max_length=200, blank=True)
    service_password = EncryptedTextField(_("service user password"), blank=True)
    # Empty means the environment's default (settings.PLATFORM_ENVIRONMENTS).
    auth_url = models.URLField(_("token issuer URL"), blank=True)
    ticket_base_url = models.URLField(_("ticket service URL"), blank=True)
    invoice_base_url = models.URLField(_("invoice service URL"), blank=True)
    accounting_base_url = models.URLField(_("accounting service URL"), blank=True)
    ledger_base_url = models.URLField(_("ledger service URL"), blank=True)
    dispatch_base_url = models.URLField(_("dispatch-note service URL"), blank=True)
    crm_base_url = models.URLField(_("company-management service URL"), blank=True)
    credit_quantity = models.PositiveBigIntegerField(
        _("credit quantity"), default=1000,
        help_text=_("Credits bought; the platform allows more calls per minute to companies with more credits."),
    )
    # Document 1, section 8: the limits "depend on the credit quantity bought and the contract". A contract
    # that gives another tier than the credits' (a negotiated one) is set here and wins.
    contract_tier = models.PositiveSmallIntegerField(
        _("contract tier"), null=True, blank=True, choices=[(tier, f"T{tier}") for tier in range(1, 10)],
        help_text=_("Only when the company's contract gives it another rate-limit tier than its credit quantity "
                    "does; empty means the tier of the credit quantity."),
    )
    is_active = models.BooleanField(_("active"), default=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    # The last "Test the connection" (core.platform.connection_test): outcome codes, worded when shown.
    connection_check = models.JSONField(_("last connection test"), default=dict, blank=True, editable=False)
    connection_checked_at = models.DateTimeField(_("connection tested at"), null=True, blank=True, editable=False)

    class Meta:
        ordering = ["name"]
        verbose_name = _("company")
        verbose_name_plural = _("companies")

    def __str__(self):
        return self.name

    def get_absolute_url(self):
        return reverse("core:company_detail", args=[self.pk])

    @property
    def tier(self) -> int:
        """The rate-limit tier: the contract's where set, else the credit quantity's."""
        return self.contract_tier or tier_for_credits(self.credit_quantity)

    def base_url(self, service: str) -> str:
        override = getattr(self, f"{service}_base_url" if service != "auth" else "auth_url", "")
        return (override or settings.PLATFORM_ENVIRONMENTS[self.environment][service]).rstrip("/")

    def typed_base_urls(self) -> list[str]:
        """The service URLs set on this company itself (overrides of the environment's)."""
        return [url for url in (getattr(self, name) for name in BASE_URL_FIELDS) if url]

    @property
    def base_urls(self) -> dict:
        return {service: self.base_url(service) for service in settings.PLATFORM_SERVICES}

    @property
    def secrets(self) -> list[str]:
        """Every secret of this company, for redaction."""
        return [s for s in (self.api_key, self.service_password) if s]

    def clean(self):
        if self.auth_method == AuthMethod.API_KEY and not self.api_key:
            raise ValidationError({"api_key": _("An API key is required for this authentication method.")})
        if self.auth_method == AuthMethod.SERVICE_USER:
            errors = {}
            if not self.service_username:
                errors["service_username"] = _("A service user name is required for this authentication method.")
            if not self.service_password:
                errors["service_password"] = _("A password is required for this authentication method.")
            if errors:
                raise ValidationError(errors)


class Membership(models.Model):
    """A user may act for several companies, one at a time (the switcher)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="memberships")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "company"], name="core_membership_unique")]
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")

    def __str__(self):
        return f"{self.user} @ {self.company}"


def detail_url(record):
    """The page of a record whose app registered its detail view (core.generic.registry names it
    "<app_label>:<model_name>_detail"), or None."""
    try:
        return reverse(f"{record._meta.app_label}:{record._meta.model_name}_detail", kwargs={"pk": record.pk})
    except NoReverseMatch:
        return None


class ErrorSource(models.TextChoices):
    """Where the last error of a record came from (backoffice.remote.errors.SOURCES): only PLATFORM is the
    platform's refusal; the others are worded as what they are."""

    PLATFORM = "platform", _("the platform's refusal")
    CREDENTIALS = "credentials", _("the company's credentials refused")
    PERMISSION = "permission", _("a permission missing")
    NETWORK = "network", _("no answer from the platform")
    LOCAL = "local", _("stopped here, not by the platform")


def record_indexes(prefix: str) -> list:
    """RemoteRecord's indexes under names of at most 30 characters, for an app whose label is too long for the
    default "<app_label>_<class>_..." names (prefix: 20 characters at most)."""
    return [models.Index(fields=["company", "-created_at"], name=f"{prefix}_co_new"),
            models.Index(fields=["sync_state", "updated_at"], name=f"{prefix}_sync"),
            models.Index(fields=["company", "status_read_at"], name=f"{prefix}_read")]


def made_by(verbose_name=_("created by")):
    """Who made a record here; the record stays (with nobody) when the user is deleted."""
    return models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                             related_name="+", verbose_name=verbose_name)


class RemoteRecord(models.Model):
    """Abstract base of every mirrored record: the local copy plus what the platform said of it."""

    company = models.ForeignKey(Company, on_delete=models.PROTECT, related_name="+", verbose_name=_("company"))
    remote_id = models.CharField(_("platform id"), max_length=64, blank=True, db_index=True)
    remote_status = models.IntegerField(_("platform status"), null=True, blank=True)
    sync_state = models.CharField(_("sync state"), max_length=10, choices=SyncState.choices,
                                  default=SyncState.LOCAL)
    last_error = models.TextField(_("last error"), blank=True)
    last_error_source = models.CharField(_("source of the last error"), max_length=12, choices=ErrorSource.choices,
                                         blank=True)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    # A record action asked for and not answered yet (core.actions: "cancel", "send", ...).
    pending_action = models.CharField(_("pending action"), max_length=20, blank=True)
    synced_at = models.DateTimeField(_("synced at"), null=True, blank=True)
    # When the platform's status was last read again (core.refresh): the oldest are read first.
    status_read_at = models.DateTimeField(_("status read at"), null=True, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    class Meta:
        abstract = True
        indexes = [
            # List pages are per company, newest first; the sweep looks up by state and age; the status
            # refresh by when a record was read last.
            models.Index(fields=["company", "-created_at"], name="%(app_label)s_%(class)s_co_new"),
            models.Index(fields=["sync_state", "updated_at"], name="%(app_label)s_%(class)s_sync"),
            models.Index(fields=["company", "status_read_at"], name="%(app_label)s_%(class)s_read"),
        ]

    @classmethod
    def claim(cls, pk, *, from_states=(SyncState.QUEUED,), to_state=SyncState.SENDING) -> bool:
        """Move one record between sync states with a conditional UPDATE.

        Only the caller whose UPDATE changed the row goes on: two workers never send the same record.
        """
        changed = cls.objects.filter(pk=pk, sync_state__in=list(from_states)).update(
            sync_state=to_state, attempts=F("attempts") + 1, updated_at=timezone.now()
        )
        return changed == 1

    @property
    def sync_state_color(self):
        return SyncState.color(self.sync_state)

    def get_absolute_url(self):
        return detail_url(self)

    @property
    def is_busy(self) -> bool:
        """On its way to the platform, or an action on it not answered yet: not to be changed now."""
        return self.sync_state in (SyncState.QUEUED, SyncState.SENDING) or bool(self.pending_action)

    @property
    def last_error_heading(self) -> str:
        """The heading of the record's error alert: "The platform refused" only when it did."""
        return error_heading(self.last_error_source)

    @property
    def last_error_text(self) -> str:
        """The last error as shown: a refusal of the credentials in the reader's language, else as kept."""
        return error_text(self.last_error_source, self.last_error)


# The kinds of document numbered from a series (tickets/services.SERIES_KIND, dispatch/services.SERIES_KIND).
SERIES_KINDS = {"event_ticket": _("Event tickets"), "passenger_ticket": _("Passenger tickets"),
                "dispatch_note": _("Dispatch notes")}


class DocumentSeries(models.Model):
    """Sender-assigned document numbers: prefix + year + 9-digit counter, consecutive from 1."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="series")
    kind = models.CharField(_("document kind"), max_length=40)
    prefix = models.CharField(_("prefix"), max_length=3)
    year = models.PositiveSmallIntegerField(_("year"))
    last_counter = models.PositiveBigIntegerField(_("last counter"), default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["company", "kind", "prefix", "year"], name="core_series_unique"),
            models.CheckConstraint(condition=Q(last_counter__lte=999_999_999), name="core_series_counter_max"),
        ]
        verbose_name = _("document series")
        verbose_name_plural = _("document series")

    def __str__(self):
        return f"{self.kind} {self.prefix}{self.year}"

    MAX_COUNTER = 999_999_999

    @classmethod
    def _locked(cls, *, company, kind: str, prefix: str, year: int) -> "DocumentSeries":
        """The series' row, created when new, locked until the caller's transaction ends."""
        try:
            with transaction.atomic():
                cls.objects.get_or_create(company=company, kind=kind, prefix=prefix, year=year)
        except IntegrityError:  # another allocator created the row first: it exists now
            pass
        return cls.objects.select_for_update().get(company=company, kind=kind, prefix=prefix, year=year)

    @classmethod
    def allocate(cls, *, company, kind: str, prefix: str, year: int) -> str:
        """Return the next number of the series, under a row lock: no gaps, no duplicates.

        Call it inside the transaction that saves the document, so that a rollback gives the number
        back together with the document.
        """
        prefix = prefix.upper()
        with transaction.atomic():
            series = cls._locked(company=company, kind=kind, prefix=prefix, year=year)
            if series.last_counter >= cls.MAX_COUNTER:
                raise ValueError(f"document series {series} is exhausted")
            series.last_counter += 1
            series.save(update_fields=["last_counter"])
        return series.number(series.last_counter)

    @property
    def next_counter(self) -> int:
        return self.last_counter + 1

    def number(self, counter: int) -> str:
        return f"{self.prefix}{self.year:04d}{counter:09d}"

    @property
    def next_number(self) -> str:
        return self.number(self.next_counter)

    def start_refusal(self, next_counter: int) -> str:
        """Why the series cannot start at next_counter (not above its next number, or past the 9 digits), or ""."""
        if self.next_counter < next_counter <= self.MAX_COUNTER:
            return ""
        return _("The next number of %(series)s is %(next)s already (numbers up to %(last)s are used here and never "
                 "given back): enter a higher number, at most %(max)s.") % {
            "series": f"{self.prefix}{self.year:04d}", "next": self.next_counter, "last": self.last_counter,
            "max": self.MAX_COUNTER}

    @classmethod
    def start_at(cls, *, company, kind: str, prefix: str, year: int, next_counter: int) -> "DocumentSeries":
        """An administrator's start of a series above its next number (a series started elsewhere, whose numbers
        up to the platform's last one are taken there): the next document takes `next_counter`. Never at or
        below a number used here (raises ValidationError on next_counter), under the allocators' row lock."""
        prefix = prefix.upper()
        with transaction.atomic():
            series = cls._locked(company=company, kind=kind, prefix=prefix, year=year)
            refusal = series.start_refusal(next_counter)
            if refusal:
                raise ValidationError({"next_counter": refusal})
            series.last_counter = next_counter - 1
            series.save(update_fields=["last_counter"])
        return series


class RemoteCall(models.Model):
    """Audit row of one HTTP call to the platform, secrets redacted."""

    company = models.ForeignKey(Company, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    service = models.CharField(_("service"), max_length=20)
    operation = models.CharField(_("operation"), max_length=60, blank=True)
    method = models.CharField(_("method"), max_length=8)
    path = models.CharField(_("path"), max_length=500)
    status = models.PositiveSmallIntegerField(_("HTTP status"), null=True, blank=True)
    duration_ms = models.PositiveIntegerField(_("duration (ms)"), default=0)
    correlation_id = models.CharField(_("correlation id"), max_length=100, blank=True)
    request_excerpt = models.TextField(_("request"), blank=True)
    response_excerpt = models.TextField(_("response"), blank=True)
    error = models.TextField(_("error"), blank=True)
    created_at = models.DateTimeField(_("time"), default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["company", "-created_at"], name="core_remotecall_co_new")]
        verbose_name = _("remote call")
        verbose_name_plural = _("remote calls")

    def __str__(self):
        return f"{self.method} {self.path} → {self.status}"


class JobRun(models.Model):
    """One piece of background work as the user sees it: what, for whom, and how it ended."""

    name = models.CharField(_("job"), max_length=100)
    company = models.ForeignKey(Company, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    target = models.CharField(_("record"), max_length=200, blank=True)
    status = models.CharField(_("status"), max_length=10, choices=JobStatus.choices, default=JobStatus.QUEUED,
                              db_index=True)
    rq_job_id = models.CharField(_("queue job id"), max_length=64, blank=True)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    message = models.TextField(_("message"), blank=True)
    progress = models.PositiveSmallIntegerField(_("progress (%)"), null=True, blank=True)
    enqueued_at = models.DateTimeField(_("enqueued"), default=timezone.now)
    started_at = models.DateTimeField(_("started"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    # What to run again when the queue loses the job (a killed worker, a Redis restart): core.jobs.reap_lost.
    func_path = models.CharField(_("job body"), max_length=200, blank=True, editable=False)
    job_args = models.JSONField(_("job arguments"), default=list, blank=True, editable=False)
    queue = models.CharField(_("queue"), max_length=50, blank=True, editable=False)
    lost_count = models.PositiveSmallIntegerField(_("times lost"), default=0, editable=False)

    class Meta:
        ordering = ["-enqueued_at", "-id"]
        indexes = [models.Index(fields=["company", "-enqueued_at"], name="core_jobrun_co_new")]
        verbose_name = _("background job")
        verbose_name_plural = _("background jobs")

    def __str__(self):
        return f"{self.label} ({self.get_status_display()})"

    @property
    def label(self) -> str:
        return job_label(self.name)

    @property
    def status_color(self):
        return JobStatus.color(self.status)


class RequestedWork(models.Model):
    """What a company asked the platform for and a job fetches (an export, core.exports; a report's walk through its
    pages, core.reports): for whom, when it was asked for, the job's last word."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+", verbose_name=_("company"))
    message = models.TextField(_("message"), blank=True)
    created_at = models.DateTimeField(_("requested"), auto_now_add=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]


class FormSubmission(models.Model):
    """One use of a creating form's one-time key (core.submissions): a second submission of the same key
    shows what the first one created instead of creating it again. `note` keeps a reason the user gave,
    e.g. for issuing a ticket for a seat that already has one."""

    key = models.UUIDField(_("submission key"), unique=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+")
    target = models.CharField(_("record"), max_length=200, blank=True, db_index=True)
    note = models.TextField(_("reason"), blank=True)
    created_at = models.DateTimeField(_("sent"), default=timezone.now)

    class Meta:
        verbose_name = _("form submission")
        verbose_name_plural = _("form submissions")

    def __str__(self):
        return f"{self.key} → {self.target or '-'}"
