"""The blocks of the dashboard, declared by the domain apps.

Each app that has something to show first puts it in its own `dashboard.py` (found the way the admin finds
`admin.py`, so core imports no app): a block is a function returning plain data for one template under
templates/core/dashboard/, from one or two aggregate queries of the active company's rows. Records not yet on
the platform (or refused by it) are declared as sync sources instead and counted together in one query.

    # invoices/dashboard.py
    register_block("invoices", template="core/dashboard/invoices.html", build=month_summary, order=10)
    register_sync_source("current_accounts", label=..., queryset=..., url=..., order=10)

Every date the blocks reason with is an Istanbul date (today()), whatever the server's clock zone.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from zoneinfo import ZoneInfo

from django.db.models import Case, CharField, Count, F, IntegerField, Q, Sum, Value, When, Window
from django.utils import timezone
from django.utils.module_loading import autodiscover_modules

from .choices import SyncState
from .registry import registry

ISTANBUL = ZoneInfo("Europe/Istanbul")
# Not on the platform yet (saved here, waiting, being sent) or refused by it.
UNSYNCED_STATES = (SyncState.FAILED, SyncState.LOCAL, SyncState.QUEUED, SyncState.SENDING)
ROWS = 5  # the rows of a block's list (counted)


@dataclass(frozen=True)
class Block:
    name: str
    template: str
    build: Callable  # build(company, *, today, user) -> dict, or None to leave the block out
    order: int = 100


@dataclass(frozen=True)
class SyncSource:
    name: str
    label: object
    queryset: Callable  # queryset(company) -> the company's records of the model
    url: Callable  # url() -> the model's list, filtered with ?sync_state=
    order: int = 100


_discovered = False


def register_block(name, *, template, build, order=100) -> None:
    registry["blocks"][name] = Block(name, template, build, order)


def register_sync_source(name, *, label, queryset, url, order=100) -> None:
    registry["sync_sources"][name] = SyncSource(name, label, queryset, url, order)


def discover() -> None:
    global _discovered
    if not _discovered:
        autodiscover_modules("dashboard")
        _discovered = True


def today() -> date:
    """Today in Istanbul: the day documents are dated and deadlines are counted in."""
    return timezone.localdate(timezone=ISTANBUL)


def blocks(company, *, user, on=None) -> list[dict]:
    """The blocks to draw for the company, in order: {"name", "template", "data"}."""
    discover()
    on = on or today()
    drawn = []
    for block in sorted(registry["blocks"].values(), key=lambda block: (block.order, block.name)):
        data = block.build(company, today=on, user=user)
        if data is not None:
            drawn.append({"name": block.name, "template": block.template, "data": data})
    return drawn


def counted(queryset, overdue: Q):
    """The first ROWS of queryset, each carrying the count of the whole set and of its overdue part."""
    one_if_overdue = Case(When(overdue, then=Value(1)), default=Value(0), output_field=IntegerField())
    return list(queryset.annotate(total=Window(Count("pk")), overdue_total=Window(Sum(one_if_overdue)))[:ROWS])


def sync_summary(company, *, today=None, user=None) -> dict:
    """The records of every sync source not yet on the platform or refused, by state: one UNION ALL query of
    grouped counts (an index on sync_state finds the few unsynced rows among a million synced)."""
    discover()
    sources = sorted(registry["sync_sources"].values(), key=lambda source: (source.order, source.name))
    parts = [source.queryset(company).filter(sync_state__in=UNSYNCED_STATES).order_by()
             .values(source_name=Value(source.name, output_field=CharField()), state=F("sync_state"))
             .annotate(n=Count("pk")) for source in sources]
    counts = {}
    if parts:
        query = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
        counts = {(row["source_name"], row["state"]): row["n"] for row in query}
    groups = []
    for source in sources:
        url = source.url()
        items = [{"state": state, "label": SyncState(state).label, "color": SyncState.color(state),
                  "count": counts[(source.name, state)],
                  "url": f"{url}?sync_state={state}" if url else None}
                 for state in UNSYNCED_STATES if counts.get((source.name, state))]
        groups.append({"name": source.name, "label": source.label, "url": url, "items": items,
                       "total": sum(item["count"] for item in items),
                       "refused": counts.get((source.name, SyncState.FAILED), 0)})
    return {"groups": groups, "total": sum(group["total"] for group in groups)}


register_block("platform", template="core/dashboard/platform.html", build=sync_summary, order=50)

__all__ = ["ISTANBUL", "ROWS", "UNSYNCED_STATES", "blocks", "counted", "register_block", "register_sync_source",
           "sync_summary", "today"]
