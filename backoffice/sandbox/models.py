"""State of the simulated platform: its customers, their credentials, fault switches and a request log."""

import secrets
import uuid
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from backoffice.core.tiers import tier_for_credits  # the platform's tiers, the back office's table


class Customer(models.Model):
    """A company on the platform; its credits set the rate-limit tier (document 1, section 8)."""

    customer_unique_id = models.UUIDField(_("customerUniqueId"), default=uuid.uuid4, unique=True)
    name = models.CharField(_("name"), max_length=200)
    credits = models.PositiveBigIntegerField(_("credits"), default=1000)
    # Document 1, section 5, rule 5: the ticket service's reports also need the e-ticket listing permission.
    listing_permission = models.BooleanField(_("e-ticket listing permission"), default=True)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("customer")
        verbose_name_plural = _("customers")

    def __str__(self):
        return f"{self.name} ({self.customer_unique_id})"

    @property
    def tier(self) -> int:
        return tier_for_credits(self.credits)


class ApiKey(models.Model):
    # Plain text on purpose: the simulator holds demo credentials only and its admin shows them.
    key = models.CharField(_("key"), max_length=200, unique=True)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(_("name"), max_length=100, blank=True)

    class Meta:
        verbose_name = _("API key")
        verbose_name_plural = _("API keys")

    def __str__(self):
        return f"{self.name or _('API key')} ({self.customer.name})"


class ServiceUser(models.Model):
    username = models.CharField(_("username"), max_length=200, unique=True)
    password = models.CharField(_("password"), max_length=200)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="service_users")

    class Meta:
        verbose_name = _("service user")
        verbose_name_plural = _("service users")

    def __str__(self):
        return self.username


class AccessToken(models.Model):
    token = models.CharField(_("token"), max_length=100, unique=True)
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="tokens")
    expires_at = models.DateTimeField(_("expires at"))
    uses = models.PositiveIntegerField(_("uses"), default=0,
                                       help_text=_("Calls made with the token; counted while a use limit is set."))
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("access token")
        verbose_name_plural = _("access tokens")

    def __str__(self):
        return f"{self.customer.name} until {self.expires_at:%Y-%m-%d %H:%M:%S}"

    @classmethod
    def issue(cls, customer, lifetime_seconds):
        return cls.objects.create(
            token=secrets.token_urlsafe(32), customer=customer,
            expires_at=timezone.now() + timedelta(seconds=lifetime_seconds),
        )

    def use(self, max_uses: int) -> bool:
        """Count one call; False once the token has served max_uses calls (0: no limit, nothing counted).
        A conditional update, so that concurrent calls never share the last use."""
        if not max_uses:
            return True
        return AccessToken.objects.filter(pk=self.pk, uses__lt=max_uses).update(uses=F("uses") + 1) == 1


class FaultRule(models.Model):
    """A fault switch; effects apply in the order expire_tokens, storm_429, latency, timeout, error_rate,
    then the operation, then a timeout_after rule's sleep, then an after_apply rule's error or drop."""

    BEFORE, AFTER_ERROR, AFTER_DROP = "", "error", "drop"
    AFTER_APPLY_CHOICES = [
        (BEFORE, _("before the operation (nothing applied)")),
        (AFTER_ERROR, _("after the operation: answer the error status")),
        (AFTER_DROP, _("after the operation: close the connection without an answer")),
    ]

    path = models.CharField(_("path glob"), max_length=300, default="*",
                            help_text=_("Matched against the full path with the service prefix, e.g. /invoice/v2/*."))
    method = models.CharField(_("method"), max_length=10, default="*", help_text=_("GET, POST, ... or *."))
    error_rate = models.FloatField(_("error rate"), default=0.0, help_text=_("0 to 1: share of requests failed."))
    error_status = models.PositiveSmallIntegerField(_("error status"), default=500)
    latency_ms = models.PositiveIntegerField(_("added latency (ms)"), default=0)
    latency_jitter_ms = models.PositiveIntegerField(
        _("random extra latency (ms)"), default=0,
        help_text=_("Up to this much more, drawn anew for every request: a platform a real network away."))
    timeout_seconds = models.FloatField(_("timeout (s)"), default=0.0,
                                        help_text=_("Sleep this long before answering."))
    timeout_after = models.BooleanField(
        _("time out after processing"), default=False,
        help_text=_("Run the operation first, then sleep timeout_seconds: a call that times out after the "
                    "platform acted on it."),
    )
    after_apply = models.CharField(
        _("error or drop after applying"), max_length=5, blank=True, default=BEFORE, choices=AFTER_APPLY_CHOICES,
        help_text=_("When the error_rate dice say fail: before the operation (nothing applied), or after it ran and "
                    "committed, answering error_status or dropping the connection (the platform acted, the caller "
                    "does not know)."),
    )
    storm_429 = models.BooleanField(_("429 storm"), default=False)
    retry_after = models.PositiveIntegerField(_("Retry-After of the storm (s)"), default=1)
    expire_tokens = models.BooleanField(_("expire every bearer token"), default=False)
    remaining = models.PositiveIntegerField(_("remaining uses"), null=True, blank=True,
                                            help_text=_("Apply only this many times; empty means always."))
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["pk"]
        verbose_name = _("fault rule")
        verbose_name_plural = _("fault rules")

    def __str__(self):
        return f"{self.method} {self.path}"

    def clean(self):
        # An after_apply rule fires only on the error_rate dice: without a rate it would silently do nothing.
        if self.after_apply and self.error_rate <= 0:
            raise ValidationError({"error_rate": _("Give an error rate above 0 with an error or drop after applying "
                                                   "(1 fails every matching request).")})

    def claim(self) -> bool:
        """Take one use; False once a limited rule is used up (conditional update: safe across threads)."""
        if self.remaining is None:
            return True
        return FaultRule.objects.filter(pk=self.pk, remaining__gt=0).update(remaining=F("remaining") - 1) == 1


class SandboxSetting(models.Model):
    """Singleton (pk 1)."""

    token_lifetime_seconds = models.PositiveIntegerField(_("token lifetime (s)"), default=86400)
    token_max_uses = models.PositiveIntegerField(
        _("token uses"), default=0,
        help_text=_("A bearer token answers 401 (expired) after this many calls; 0 means no limit."),
    )
    rate_limit_scale = models.FloatField(
        _("rate-limit window scale"), default=1.0,
        help_text=_("Every rate-limit window is multiplied by this (tests shrink it)."),
    )
    ticket_processing_seconds = models.FloatField(
        _("ticket processing time (s)"), default=5.0, validators=[MinValueValidator(0)],
        help_text=_("A queued ticket (20) settles to approved (60) or error (40) this long after it was queued."),
    )
    ticket_error_rate = models.FloatField(
        _("ticket error rate"), default=0.0, validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text=_("0 to 1: share of queued tickets that settle to error (40) instead of approved (60)."),
    )
    export_ready_seconds = models.FloatField(
        _("export preparation time (s)"), default=3.0, validators=[MinValueValidator(0)],
        help_text=_("An Excel export appears in the export history this long after it was started."),
    )
    clock_offset_seconds = models.FloatField(
        _("clock offset (s)"), default=0.0,
        help_text=_("Added to the sandbox's clock for processing delays and export expiry (tests jump ahead)."),
    )

    class Meta:
        verbose_name = _("sandbox setting")
        verbose_name_plural = _("sandbox settings")

    def __str__(self):
        return str(_("Sandbox settings"))

    @classmethod
    def load(cls):
        return cls.objects.get_or_create(pk=1)[0]


class RequestLog(models.Model):
    method = models.CharField(_("method"), max_length=10)
    path = models.CharField(_("path"), max_length=500)
    status = models.PositiveSmallIntegerField(_("status"))
    customer = models.ForeignKey(Customer, on_delete=models.SET_NULL, null=True, blank=True)
    created = models.DateTimeField(_("created"), auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-pk"]
        verbose_name = _("request")
        verbose_name_plural = _("request log")

    def __str__(self):
        return f"{self.method} {self.path} {self.status}"


class Document(models.Model):
    """Whatever the simulated platform keeps for a customer (tickets, passenger lists, exports,
    sub-companies, credit offers...), its fields as JSON. One generic table keeps the simulator small
    and lets each service module own its kinds without schema changes."""

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="documents")
    kind = models.CharField(_("kind"), max_length=40)
    key = models.CharField(_("key"), max_length=64, help_text=_("ettn, exportId, credit id, ..."))
    number = models.CharField(_("number"), max_length=40, blank=True, db_index=True)
    status = models.IntegerField(_("status"), null=True, blank=True)
    data = models.JSONField(_("data"), default=dict, blank=True)
    blob = models.BinaryField(_("file"), null=True, blank=True)
    created = models.DateTimeField(_("created"), default=timezone.now)
    updated = models.DateTimeField(_("updated"), auto_now=True)
    due_at = models.DateTimeField(_("settles at"), null=True, blank=True,
                                  help_text=_("When a queued document is processed (approved or error)."))

    class Meta:
        constraints = [models.UniqueConstraint(fields=["customer", "kind", "key"], name="sandbox_document_key")]
        indexes = [
            models.Index(fields=["customer", "kind", "created"], name="sandbox_doc_kind_created"),
            # Duplicate ticket numbers and look-ups by number; queued documents due for processing.
            models.Index(fields=["customer", "kind", "number"], name="sandbox_doc_kind_number"),
            models.Index(fields=["customer", "kind", "status", "due_at"], name="sandbox_doc_kind_due"),
        ]
        verbose_name = _("document")
        verbose_name_plural = _("documents")

    def __str__(self):
        return f"{self.kind} {self.number or self.key}"
