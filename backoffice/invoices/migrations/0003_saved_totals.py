"""The figures computed when an invoice is saved, kept in full: each line's withholding and other tax, the invoice's
VAT, added and deducted taxes. The push and the invoice page read them instead of computing them again. Lines saved
before are given theirs from what they kept (the same rules as invoices/totals.py: a line's withholding is its VAT
times the code's share, an other tax its net times the rate, each rounded half up to the cent)."""

from decimal import ROUND_HALF_UP, Decimal

from django.db import migrations, models
from django.db.models import Exists, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from backoffice.core import codes

CENT = Decimal("0.01")
CHUNK = 2000


def _money(value):
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def _fill_lines(InvoiceLine):
    """The lines with a withholding or another tax (few): their amounts, in chunks."""
    other_tax = ~Q(other_tax_code="") & Q(other_tax_rate__isnull=False)
    taxed = InvoiceLine.objects.filter(~Q(withholding_code="") | other_tax)
    changed = []
    for line in taxed.order_by("pk").iterator(chunk_size=CHUNK):
        if line.withholding_code:
            line.withholding_amount = _money(line.vat_amount * (codes.withholding_rate(line.withholding_code) or 0))
        if line.other_tax_code and line.other_tax_rate:
            line.other_tax_amount = _money(line.line_extension_amount * line.other_tax_rate / 100)
        changed.append(line)
        if len(changed) >= CHUNK:
            InvoiceLine.objects.bulk_update(changed, ["withholding_amount", "other_tax_amount"])
            changed = []
    InvoiceLine.objects.bulk_update(changed, ["withholding_amount", "other_tax_amount"])


def fill(apps, schema_editor):
    Invoice, InvoiceLine = apps.get_model("invoices", "Invoice"), apps.get_model("invoices", "InvoiceLine")
    _fill_lines(InvoiceLine)
    # The invoices' sums in one statement (a million invoices are not read into Python).
    lines = InvoiceLine.objects.filter(invoice=OuterRef("pk")).order_by().values("invoice")
    deducts = Q(other_tax_code__in=codes.DEDUCTED_TAX_CODES)

    def total(field, *filters):
        return Coalesce(Subquery(lines.filter(*filters).annotate(sum=Sum(field)).values("sum")), Value(Decimal(0)),
                        output_field=models.DecimalField(max_digits=18, decimal_places=2))

    Invoice.objects.filter(Exists(lines)).update(
        vat_total=total("vat_amount"), added_taxes_total=total("other_tax_amount", ~deducts),
        deducted_taxes_total=total("other_tax_amount", deducts))


class Migration(migrations.Migration):
    dependencies = [("invoices", "0002_search_text")]

    operations = [
        migrations.AddField("invoice", "vat_total", models.DecimalField(
            blank=True, decimal_places=2, max_digits=18, null=True, verbose_name="VAT")),
        migrations.AddField("invoice", "added_taxes_total", models.DecimalField(
            blank=True, decimal_places=2, max_digits=18, null=True, verbose_name="Other taxes added")),
        migrations.AddField("invoice", "deducted_taxes_total", models.DecimalField(
            blank=True, decimal_places=2, max_digits=18, null=True, verbose_name="Stopaj deducted")),
        migrations.AddField("invoiceline", "withholding_amount", models.DecimalField(
            decimal_places=2, default=0, max_digits=18, verbose_name="withholding")),
        migrations.AddField("invoiceline", "other_tax_amount", models.DecimalField(
            decimal_places=2, default=0, max_digits=18, verbose_name="other tax")),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
