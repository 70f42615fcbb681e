"""Helpers of the bulk actions' pages (core.generic.views.BulkActionView)."""


def totals_by_currency(rows) -> list[tuple]:
    """[(currency, total, documents)] of send-confirmation rows ({"total", "currency"}): amounts in different
    currencies are never added."""
    found = {}
    for row in rows:
        total, count = found.get(row["currency"], (0, 0))
        found[row["currency"]] = (total + (row["total"] or 0), count + 1)
    return [(currency, total, count) for currency, (total, count) in sorted(found.items())]


def bulk_delete(request, queryset):
    count = 0
    for obj in queryset:  # one by one so that model delete() logic and signals run
        obj.delete()
        count += 1
    return count
