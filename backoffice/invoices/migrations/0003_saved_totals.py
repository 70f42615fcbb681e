"""The figures computed when an invoice is saved, kept in full: each line's withholding and other tax, the invoice's
VAT, added and deducted taxes. The push and the invoice page read them instead of computing them again. Lines saved
before are given theirs from what they kept (the same rules as invoices/totals.py: a line's withholding is its VAT
times the code's share, an other tax its net times the rate, each rounded half up to the cent)."""

from decimal import ROUND_HALF_UP, Decimal

from django.db import migrations, models

from backoffice.core import codes

CENT = Decimal("0.01")


def _money(value):
    return Decimal(value).quantize(CENT, rounding=ROUND_HALF_UP)


def fill(apps, schema_editor):
    Invoice, InvoiceLine = apps.get_model("invoices", "Invoice"), apps.get_model("invoices", "InvoiceLine")
    sums = {}
    for line in InvoiceLine.objects.order_by("invoice_id", "pk").iterator(chunk_size=2000):
        if line.withholding_code:
            line.withholding_amount = _money(line.vat_amount * (codes.withholding_rate(line.withholding_code) or 0))
        if line.other_tax_code and line.other_tax_rate:
            line.other_tax_amount = _money(line.line_extension_amount * line.other_tax_rate / 100)
        if line.withholding_amount or line.other_tax_amount:
            line.save(update_fields=["withholding_amount", "other_tax_amount"])
        vat, added, deducted = sums.get(line.invoice_id, (Decimal(0), Decimal(0), Decimal(0)))
        deducts = line.other_tax_code in codes.DEDUCTED_TAX_CODES
        sums[line.invoice_id] = (vat + line.vat_amount, added + (0 if deducts else line.other_tax_amount),
                                 deducted + (line.other_tax_amount if deducts else 0))
    for pk, (vat, added, deducted) in sums.items():
        Invoice.objects.filter(pk=pk).update(vat_total=vat, added_taxes_total=added, deducted_taxes_total=deducted)


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
