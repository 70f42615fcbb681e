"""The e-ledger: the platform's periods with their parts and book entries (mirrored, document 3, 2.8), and the
journals accountants upload here, checked line by line before anything goes to the platform.

A Journal is the upload (RemoteRecord: its push is the upload, remote_id the period it made). A Period is the
platform's (its list is mirrored; the certificate submission is a record action on it). Findings are our
checker's, one row per problem, the first LEDGER_FINDINGS_KEPT of a journal (the counts per rule are all).
"""

from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from backoffice.core.fields import MONEY
from backoffice.core.models import Company, RemoteRecord, made_by, record_indexes

from .choices import CheckState, GeneralBookType, PeriodStatus, SourceKind, TaskStatus


class Period(RemoteRecord):
    remote_id = models.CharField(_("period id"), max_length=64, blank=True)
    remote_status = models.IntegerField(_("status"), null=True, blank=True, choices=PeriodStatus.choices)
    # FiscalYearStart / FiscalYearEnd: the uploaded range (the upload's StartDate and EndDate).
    fiscal_year_start = models.DateField(_("start date"), null=True, blank=True)
    fiscal_year_end = models.DateField(_("end date"), null=True, blank=True)
    is_active = models.BooleanField(_("active"), default=True)
    split_size = models.PositiveSmallIntegerField(_("part size (MB)"), null=True, blank=True)
    time_stamp = models.BooleanField(_("time stamp"), default=False)
    without_tax_detail = models.BooleanField(_("without tax details"), default=False)
    is_liquidation = models.BooleanField(_("liquidation"), default=False)
    task_id = models.CharField(_("task id"), max_length=64, blank=True)
    task_status = models.IntegerField(_("task status"), null=True, blank=True, choices=TaskStatus.choices)
    task_progress = models.PositiveSmallIntegerField(_("progress"), null=True, blank=True)
    task_message = models.TextField(_("platform message"), blank=True)
    parts_read_at = models.DateTimeField(_("parts read at"), null=True, blank=True)
    seen_at = models.DateTimeField(_("last listed"), null=True, blank=True)

    class Meta(RemoteRecord.Meta):
        ordering = ["-fiscal_year_start", "-pk"]
        constraints = [models.UniqueConstraint(fields=["company", "remote_id"], condition=~Q(remote_id=""),
                                               name="ledger_period_unique_id")]
        indexes = [*record_indexes("ledger_period"),
                   models.Index(fields=["company", "-fiscal_year_start"], name="ledger_period_co_start")]
        verbose_name = _("ledger period")
        verbose_name_plural = _("ledger periods")

    def __str__(self):
        if self.fiscal_year_start and self.fiscal_year_end:
            return f"{self.fiscal_year_start:%d.%m.%Y} – {self.fiscal_year_end:%d.%m.%Y}"
        return str(_("Period %(id)s") % {"id": self.remote_id or self.pk})

    @property
    def range_label(self) -> str:  # how refusals name a period
        return str(self)

    @property
    def status_color(self):
        return PeriodStatus.color(self.remote_status)

    @property
    def task_percent(self) -> int:
        return max(0, min(100, self.task_progress or 0))


class Part(models.Model):
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+")
    period = models.ForeignKey(Period, on_delete=models.CASCADE, related_name="parts")
    remote_id = models.CharField(_("part id"), max_length=64)
    index_number = models.PositiveIntegerField(_("part"))
    period_covered_start = models.DateField(_("from"), null=True, blank=True)
    period_covered_end = models.DateField(_("to"), null=True, blank=True)
    entry_number_start = models.PositiveBigIntegerField(_("first entry"), null=True, blank=True)
    entry_number_end = models.PositiveBigIntegerField(_("last entry"), null=True, blank=True)
    line_number_start = models.PositiveBigIntegerField(_("first line"), null=True, blank=True)
    line_number_end = models.PositiveBigIntegerField(_("last line"), null=True, blank=True)
    debit = models.DecimalField(_("debit"), null=True, blank=True, **MONEY)
    credit = models.DecimalField(_("credit"), null=True, blank=True, **MONEY)

    class Meta:
        ordering = ["period", "index_number"]
        constraints = [models.UniqueConstraint(fields=["period", "remote_id"], name="ledger_part_unique_id")]
        verbose_name = _("ledger part")
        verbose_name_plural = _("ledger parts")

    def __str__(self):
        return str(_("Part %(number)s") % {"number": self.index_number})


class BookEntry(models.Model):
    """A journal or general-ledger book of a part (GeneralbookType); its id is what the previews take."""

    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="+")
    part = models.ForeignKey(Part, on_delete=models.CASCADE, related_name="book_entries")
    remote_id = models.CharField(_("book id"), max_length=64)
    generalbook_type = models.PositiveSmallIntegerField(_("book"), null=True, blank=True,
                                                        choices=GeneralBookType.choices)
    status = models.IntegerField(_("status"), null=True, blank=True)
    data = models.JSONField(default=dict, blank=True)  # the platform's item as it came (ranges, totals)

    class Meta:
        ordering = ["part", "generalbook_type", "pk"]
        constraints = [models.UniqueConstraint(fields=["part", "remote_id"], name="ledger_book_unique_id")]
        verbose_name = _("book entry")
        verbose_name_plural = _("book entries")

    def __str__(self):
        return f"{self.get_generalbook_type_display() or self.generalbook_type} {self.remote_id}"


class Journal(RemoteRecord):
    """A journal (yevmiye) uploaded here: checked by us first, then zipped and uploaded as a period."""

    remote_id = models.CharField(_("period id"), max_length=64, blank=True)
    created_by = made_by(_("uploaded by"))
    # The upload's fields (document 3, 4.4).
    start_date = models.DateField(_("start date"))
    end_date = models.DateField(_("end date"))
    split_size = models.PositiveSmallIntegerField(_("part size (MB)"), default=150)
    time_stamp = models.BooleanField(_("time stamp"), default=False)
    without_tax_detail = models.BooleanField(_("without tax details"), default=False)
    # The uploader's language: the check runs in a worker, and says why a file was refused in it.
    language = models.CharField(_("language"), max_length=10, blank=True)
    # The file as given, the journal text (the same file for a text upload) and the ZIP that goes.
    source_kind = models.CharField(_("file kind"), max_length=4, choices=SourceKind.choices)
    source_name = models.CharField(_("file name"), max_length=255)
    source = models.FileField(_("file"), upload_to="ledger/journals/%Y/%m/")
    text = models.FileField(_("journal text"), upload_to="ledger/journals/%Y/%m/", blank=True)
    archive = models.FileField(_("ZIP"), upload_to="ledger/journals/%Y/%m/", blank=True)
    # An Excel journal: the sheet row of each text line (array of 32-bit ints), so findings name the row.
    rows = models.FileField(upload_to="ledger/journals/%Y/%m/", blank=True)
    # Our check.
    check_state = models.CharField(_("check"), max_length=10, choices=CheckState.choices, default=CheckState.WAITING)
    check_progress = models.PositiveSmallIntegerField(_("progress"), default=0)
    check_message = models.TextField(_("check message"), blank=True)
    checked_at = models.DateTimeField(_("checked at"), null=True, blank=True)
    size = models.PositiveBigIntegerField(_("size"), default=0)
    line_count = models.PositiveIntegerField(_("lines"), default=0)
    entry_count = models.PositiveIntegerField(_("entries"), default=0)
    debit_total = models.DecimalField(_("total debit"), null=True, blank=True, max_digits=22, decimal_places=2)
    credit_total = models.DecimalField(_("total credit"), null=True, blank=True, max_digits=22, decimal_places=2)
    first_date = models.DateField(_("first entry date"), null=True, blank=True)
    last_date = models.DateField(_("last entry date"), null=True, blank=True)
    entity_identifier = models.CharField(_("tax or national id"), max_length=11, blank=True)
    findings_count = models.PositiveIntegerField(_("errors"), default=0)
    findings_by_rule = models.JSONField(default=dict, blank=True)
    parts_plan = models.JSONField(default=list, blank=True)
    # The Y line of an Excel journal (the sheet holds the entries only), as the form gave it.
    y_line = models.JSONField(default=dict, blank=True)
    # The platform's periods of this range before the first upload attempt: a lost answer is found among the others.
    known_periods = models.JSONField(null=True, blank=True)  # None: not noted yet
    period = models.ForeignKey(Period, on_delete=models.SET_NULL, null=True, blank=True, related_name="journals",
                               verbose_name=_("period"))

    class Meta(RemoteRecord.Meta):
        ordering = ["-created_at", "-pk"]
        indexes = [*record_indexes("ledger_journal")]
        verbose_name = _("journal")
        verbose_name_plural = _("journals")

    def __str__(self):
        return f"{self.source_name} ({self.start_date:%d.%m.%Y} – {self.end_date:%d.%m.%Y})"

    @property
    def check_color(self):
        return CheckState.color(self.check_state)

    def file_name(self, extension: str) -> str:
        """yevmiye-202501-202501.zip, the ZIP the upload sends, or .txt, the journal text inside it."""
        return f"yevmiye-{self.start_date:%Y%m}-{self.end_date:%Y%m}.{extension}"


class Finding(models.Model):
    journal = models.ForeignKey(Journal, on_delete=models.CASCADE, related_name="findings")
    line = models.PositiveIntegerField(_("line"))
    row = models.PositiveIntegerField(_("row"), null=True, blank=True)  # the sheet row of an Excel journal
    field = models.CharField(_("field"), max_length=60)
    column = models.PositiveSmallIntegerField(_("column"), default=0)
    rule = models.CharField(_("rule"), max_length=40)
    found = models.CharField(_("found"), max_length=200, blank=True)
    expected = models.CharField(_("expected"), max_length=200, blank=True)

    class Meta:
        ordering = ["line", "pk"]
        indexes = [models.Index(fields=["journal", "line"], name="ledger_finding_line"),
                   models.Index(fields=["journal", "rule", "line"], name="ledger_finding_rule")]
        verbose_name = _("journal error")
        verbose_name_plural = _("journal errors")
