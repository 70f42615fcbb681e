"""The journal upload form: the file (the tab-separated text of document 3, 2.8, or the Excel template), the
range and the options of the platform's upload (4.4), and for an Excel journal the Y line's fields, which the
sheet does not hold. Every rule on its field; the range checked against the platform's periods as mirrored
(the upload checks them again on the platform's word)."""

from datetime import date, timedelta

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core.fields import TaxIdField

from . import services, workbook
from .models import Journal

EXTENSIONS = (".txt", ".xlsx")


def _previous_month():
    end = date.today().replace(day=1) - timedelta(days=1)
    return end.replace(day=1), end


def max_upload_bytes() -> int:
    return int(getattr(settings, "LEDGER_MAX_UPLOAD_BYTES", 2 * 1024 ** 3))


def max_xlsx_bytes() -> int:
    """An Excel journal's rows are read one by one but its shared strings whole: a smaller limit than the text's
    (20,000 rows of the template pack to about 3 MB; workbook.limits() has the rest)."""
    return int(getattr(settings, "LEDGER_MAX_XLSX_BYTES", 16 * 1024 ** 2))


class DateInput(forms.DateInput):
    input_type = "date"

    def __init__(self):
        super().__init__(format="%Y-%m-%d")


class JournalForm(forms.ModelForm):
    file = forms.FileField(
        label=gettext_lazy("Journal file"),
        help_text=gettext_lazy("The journal as the tax authority's tab-separated text (.txt, UTF-8), or the Excel "
                               "template filled in (.xlsx)."),
        widget=forms.ClearableFileInput(attrs={"accept": ",".join(EXTENSIONS)}))
    fiscal_year_start = forms.DateField(label=gettext_lazy("Fiscal year starts"), required=False, widget=DateInput(),
                                        help_text=gettext_lazy("Excel journals only (the Y line)."))
    fiscal_year_end = forms.DateField(label=gettext_lazy("Fiscal year ends"), required=False, widget=DateInput(),
                                      help_text=gettext_lazy("Excel journals only (the Y line)."))
    batch_id = forms.CharField(label=gettext_lazy("Branch number"), required=False, max_length=20, initial="0",
                               help_text=gettext_lazy("batchID of the Y line: 0 for the head office (Excel "
                                                      "journals only)."))
    entity_identifier = TaxIdField(label=gettext_lazy("Tax or national id"), required=False,
                                   help_text=gettext_lazy("The company's VKN or TCKN (Excel journals only)."))

    first_line_counter = forms.IntegerField(
        label=gettext_lazy("First line counter"), required=False, min_value=1,
        help_text=gettext_lazy("Excel journals only, and only when the month before is not on the platform: the line "
                               "counter this month starts at (one past the last line of the month before). Left "
                               "empty, it is taken from the platform's month before, or 1 at the start of the "
                               "fiscal year."))

    class Meta:
        model = Journal
        fields = ("start_date", "end_date", "split_size", "time_stamp", "without_tax_detail")
        widgets = {"start_date": DateInput(), "end_date": DateInput()}
        help_texts = {
            "start_date": gettext_lazy("The first day of the month uploaded."),
            "end_date": gettext_lazy("The last day of the month (or of the last month) uploaded."),
            "split_size": gettext_lazy("The platform splits the journal into parts of at most this many megabytes "
                                       "(1 to 150); an entry is never split."),
            "time_stamp": gettext_lazy("Only when access to the tax authority has problems."),
            "without_tax_detail": gettext_lazy("Only when access to the tax authority has problems."),
        }

    def __init__(self, *args, company=None, **kwargs):
        given = kwargs.get("initial") or {}
        super().__init__(*args, **kwargs)
        self.company = company
        if not self.is_bound:
            # ModelForm's initial already holds the unsaved journal's fields (no dates, the model's 150 MB): the
            # defaults replace those, not what the page was opened with.
            start, end = _previous_month()
            defaults = {"start_date": start, "end_date": end, "fiscal_year_start": start.replace(month=1, day=1),
                        "fiscal_year_end": start.replace(month=12, day=31), "split_size": 100}
            self.initial.update({name: value for name, value in defaults.items() if name not in given})
        self.fields["split_size"].widget.attrs.update(min=1, max=services.MAX_SPLIT_SIZE)

    def clean_split_size(self):
        value = self.cleaned_data["split_size"]
        if value is None or not 1 <= value <= services.MAX_SPLIT_SIZE:
            raise ValidationError(_("The part size is 1 to %(max)s MB.") % {"max": services.MAX_SPLIT_SIZE})
        return value

    def clean_file(self):
        upload = self.cleaned_data["file"]
        name = upload.name.lower()
        if not name.endswith(EXTENSIONS):
            raise ValidationError(_("Upload the journal as a .txt (the tax authority's text) or an .xlsx (the "
                                    "template)."))
        if not upload.size:
            raise ValidationError(_("The file is empty."))
        limit = max_xlsx_bytes() if name.endswith(".xlsx") else max_upload_bytes()
        if upload.size > limit:
            raise ValidationError(_("The file is larger than %(size)s MB; upload the months apart.")
                                  % {"size": limit // 1024 ** 2})
        if name.endswith(".xlsx"):  # a ZIP bomb is refused here, on its directory, not in the worker
            try:
                workbook.check_size(upload)
            except workbook.WorkbookError as exc:
                raise ValidationError(str(exc)) from None
        return upload

    def clean_batch_id(self):
        value = (self.cleaned_data.get("batch_id") or "").strip()
        if value and not value.isdigit():
            raise ValidationError(_("The branch number is digits only (0 for the head office)."))
        return value

    @property
    def is_excel(self) -> bool:
        upload = self.cleaned_data.get("file")
        return bool(upload) and upload.name.lower().endswith(".xlsx")

    def clean(self):
        data = super().clean()
        start, end = data.get("start_date"), data.get("end_date")
        if start and end:
            refusal = services.range_refusal(self.company, start, end) if self.company else \
                services.range_shape_refusal(start, end)
            if refusal:
                self.add_error(*refusal)
        if self.is_excel:
            for name in ("fiscal_year_start", "fiscal_year_end", "batch_id", "entity_identifier"):
                if not data.get(name) and name not in self.errors:
                    self.add_error(name, _("An Excel journal needs this for the Y line."))
            first, last = data.get("fiscal_year_start"), data.get("fiscal_year_end")
            if first and last and last <= first:
                self.add_error("fiscal_year_end", _("The fiscal year ends after it starts."))
            elif first and last and start and end and not (first <= start and end <= last):
                self.add_error("fiscal_year_start", _("The months uploaded lie inside the fiscal year."))
        return data

    def y_line(self) -> dict | None:
        if not self.is_excel:
            return None
        values = {name: self.cleaned_data[name] for name in
                  ("fiscal_year_start", "fiscal_year_end", "batch_id", "entity_identifier")}
        if self.cleaned_data.get("first_line_counter"):
            values["first_line_counter"] = self.cleaned_data["first_line_counter"]
        return values
