"""What the platform says of invoices, read back: its two lists mirrored (incrementally, and whole once a day),
one invoice in full (in the background when a page finds its kept copy stale, at once on "Read again"), and the
statuses of those it still works on, polled on the invoice service within the company's status-query budget
(document 1, section 8; core.polling runs INVOICES_POLL)."""

from datetime import timedelta

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs, payloads, polling, resources, schedule, sync
from backoffice.core.choices import SyncState
from backoffice.core.models import Company, JobRun
from backoffice.core.platform import client_for, limiter, rate_rule
from backoffice.core.polling import StatusPoll
from backoffice.remote.accounting_invoices import AccountingInvoiceClient
from backoffice.remote.common import field

from .choices import WORKING_STATUSES, InvoiceStatus, RecordType
from . import matching
from .from_dispatch import invoice_moved, invoices_moved, invoices_read, sync_notes
from .models import Invoice, ListSync
from .services import POLL, InvoiceError, accounting, full_fields, item_fields, service, setting


class InvoiceNotFound(InvoiceError):
    """The platform answered that it does not have the invoice (get invoice: 404)."""


# --- the mirror of the platform's two lists ------------------------------------------------------------------
def _store(company, is_send, items) -> int:
    return resources.mirror_store(Invoice, items, company=company, fields_of=item_fields, is_send=is_send)


@jobs.job(gettext_lazy("Read invoices from the platform"))
def invoices_mirror(company_id, full=False) -> str:
    """Both lists of one company: what changed since the last run stopped (updateDateUtc, newest first), or the
    whole lists once a day, after which the synced invoices the walk did not see are asked for one by one and
    dropped only when the platform says it no longer has them."""
    company = Company.objects.get(pk=company_id)
    client = accounting(company)
    new = read = dropped = 0
    whole_any, read_out = False, set()
    for is_send in (True, False):
        state, _created = ListSync.objects.get_or_create(company=company, is_send=is_send)
        whole = full or state.full_at is None or not state.changed_until or (
            timezone.now() - state.full_at).total_seconds() >= setting("INVOICE_FULL_SYNC_SECONDS")
        if whole:
            pages = client.all_pages(is_send)
        else:
            since = state.changed_until - timedelta(seconds=setting("INVOICE_SYNC_OVERLAP_SECONDS"))
            pages = client.changed_since(is_send, since.isoformat())
        started, seen, newest = timezone.now(), set(), state.changed_until
        for page in sync.pages_with_progress(pages):
            new += _store(company, is_send, page["items"])
            read += len(page["items"])
            for item in page["items"]:
                seen.add(str(field(item, "ettn") or ""))
                moment = payloads.moment(field(item, "updateDateUtc"), naive_utc=True)
                if moment and (newest is None or moment > newest):
                    newest = moment
        if whole:
            dropped += _drop_missing(company, client, is_send, seen, started)
        whole_any = whole_any or whole
        if is_send:
            read_out |= {ettn.lower() for ettn in seen if ettn}
        ListSync.objects.filter(pk=state.pk).update(changed_until=newest, **({"full_at": started} if whole else {}))
    # A number given, an invoice declined or cancelled elsewhere: the dispatch notes they bill follow (the daily whole
    # walk holds every note against every invoice; a reading of the changes, the invoices it brought).
    if whole_any:
        sync_notes(company)
    else:
        invoices_read(company, read_out)
    if matching.to_check(company).exists():  # new incoming commercial invoices: held against the goods
        matching.match_request(company)
    return _("%(count)s invoice(s) read, %(new)s new, %(dropped)s no longer on the platform.") % {
        "count": read, "new": new, "dropped": dropped}


def _drop_missing(company, client, is_send, seen, started) -> int:
    """The synced invoices a whole walk did not list (synced before it began) are asked for one by one: one
    deleted during the walk shifts the pages, so not being listed is not proof. At most a few hundred a day."""
    unseen = (Invoice.objects.filter(company=company, is_send=is_send, sync_state=SyncState.SYNCED, pending_action="",
                                     synced_at__lt=started).exclude(remote_id="").exclude(remote_id__in=list(seen))
              .order_by("pk")[:int(setting("INVOICE_PRUNE_CHECKS"))])
    gone = [invoice.pk for invoice in unseen if client.invoice(invoice.remote_id, is_send) is None]
    return Invoice.objects.filter(pk__in=gone, sync_state=SyncState.SYNCED, pending_action="").delete()[0] if gone \
        else 0


def mirror_request(company):
    return jobs.enqueue(invoices_mirror, company=company, args=[company.pk])


@jobs.job(gettext_lazy("Read invoices from the platform (every company)"))
def invoices_mirror_all() -> str:
    count = jobs.enqueue_per_company(invoices_mirror, name="invoices_mirror")
    return _("%(count)s compan(ies) asked.") % {"count": count}


# --- one invoice in full -----------------------------------------------------------------------------------
def _fresh(invoice) -> bool:
    return bool(invoice.detail_read_at) and (timezone.now() - invoice.detail_read_at).total_seconds() < setting(
        "INVOICE_DETAIL_FRESH_SECONDS")


def invoice_read(invoice, *, force=False, interactive=True) -> Invoice | None:
    """The invoice in full from the platform (get invoice), kept in detail; InvoiceNotFound when the platform no
    longer has it. Fresh enough copies are not read again."""
    if not invoice.remote_id or (_fresh(invoice) and not force):
        return invoice
    answer = client_for(invoice.company, AccountingInvoiceClient, interactive=interactive).invoice(
        invoice.remote_id, invoice.is_send)
    if answer is None:
        # Not deleted on one answer: the daily walk asks again before it drops anything.
        raise InvoiceNotFound(_("The platform does not find this invoice now. If it was deleted there, it leaves "
                                "this list with the next daily reading."))
    fields = full_fields(answer)
    fields.pop("remote_id", None)
    now = timezone.now()
    idle = Q(pk=invoice.pk, pending_action="", sync_state__in=(SyncState.SYNCED, SyncState.FAILED))
    # Synced: the platform's record wins. Failed after it reached the platform (an update it refused): its
    # status and posting are still the platform's to tell. On its way: only the record is kept.
    if Invoice.objects.filter(idle, sync_state=SyncState.SYNCED).update(
            detail=answer, detail_read_at=now, status_read_at=now, **fields) == 0:
        platform_owned = {name: fields[name] for name in ("remote_status", "record_status", "invoice_number")
                          if name in fields}
        if not Invoice.objects.filter(idle).update(detail=answer, detail_read_at=now, **platform_owned):
            Invoice.objects.filter(pk=invoice.pk).update(detail=answer, detail_read_at=now)
    invoice.refresh_from_db()
    invoice_moved(invoice)  # a number or a status read now: the dispatch notes it bills follow
    return invoice


@jobs.job(gettext_lazy("Read the invoice from the platform"))
def invoice_refresh(pk) -> str:
    """The read a page asks for when its kept copy is stale (a page GET never calls the platform)."""
    try:
        invoice_read(Invoice.objects.select_related("company").get(pk=pk), interactive=False)
    except InvoiceNotFound as exc:
        return str(exc)
    return _("Read again from the platform.")


def read_soon(invoice) -> JobRun | None:
    """A background read (invoice_refresh, one at a time) of an idle synced invoice whose kept copy is older than
    INVOICE_DETAIL_FRESH_SECONDS: the run while it goes on, else None. One that ended within that time is not asked
    again, so a read the platform refuses is not repeated at every refresh of the page (its run says why)."""
    if not invoice.remote_id or invoice.sync_state != SyncState.SYNCED or invoice.is_busy or _fresh(invoice):
        return None
    target = sync.record_target(Invoice, invoice.pk)
    since = timezone.now() - timedelta(seconds=setting("INVOICE_DETAIL_FRESH_SECONDS"))
    if JobRun.objects.filter(name=invoice_refresh.job_name, target=target, finished_at__gte=since).exists():
        return None
    return jobs.enqueue(invoice_refresh, company=invoice.company_id, target=target, args=[invoice.pk])


# --- statuses on the invoice service, within the status-query budget ------------------------------------------
def poll_budget(company) -> int:
    """Status calls one poll may make now: the background's share of the tier's status-query limit over one poll
    interval, and never more than what is left of that share in the current window (polls that follow a send
    run every few seconds; the rest of the limit stays free for "Read again"). 100 per 180 minutes at T1 gives
    one call a run; the lists' own invoiceStatus keeps the rest current."""
    rule = rate_rule("invoice.outbox_status_list")
    if rule is None:
        return int(setting("INVOICE_POLL_CALLS"))
    limit, minutes = rule.limit(company.tier)
    share = limit * setting("INVOICE_POLL_SHARE")
    per_run = max(1, int(share * setting("INVOICE_POLL_INTERVAL") / (minutes * 60)))
    left = int(share) - limiter().used(str(company.pk), company.tier, rule)
    return max(0, min(per_run, left))


def _settle(invoice, answer) -> dict | None:
    status = payloads.integer(field(answer, "status"))
    if status is None:
        return None
    message = payloads.text(field(answer, "message"))
    if status == invoice.remote_status and message == invoice.status_message:
        return None
    return {"remote_status": status, "status_message": message}


def _polled():
    """What polling asks about: what the platform still works on, and for a while after a send its drafts too
    (a platform that answers a save with 0 may still issue it)."""
    since = timezone.now() - timedelta(minutes=setting("INVOICE_POLL_FOLLOW_MINUTES"))
    return Invoice.objects.filter(Q(remote_status__in=WORKING_STATUSES) | Q(remote_status=InvoiceStatus.DRAFT,
                                                                         synced_at__gte=since))


def _next_batch(line, size) -> list:
    """An outgoing e-invoice goes with the others waiting (POST /v2/outboxinvoice/status, many ids); an e-archive
    or incoming one on its own path."""
    oldest = line.first()
    if oldest is None or oldest.service_kind != "outbox":
        return [oldest] if oldest else []
    return list(line.filter(is_send=True, record_type=RecordType.EINVOICE)[:size])


def _statuses(company, invoices) -> dict:
    client = service(company)
    if invoices[0].service_kind == "outbox":
        answers = client.outbox_status_list([invoice.remote_id for invoice in invoices]) or []
        return {str(field(answer, "id")): answer for answer in answers}
    return {invoice.remote_id: client.status(invoice.service_kind, invoice.remote_id) for invoice in invoices}


def _recently_sent_working(company) -> bool:
    since = timezone.now() - timedelta(minutes=setting("INVOICE_POLL_FOLLOW_MINUTES"))
    return Invoice.objects.filter(company=company, sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES,
                                  synced_at__gte=since).exists()


# The statuses of what the platform still works on, the least recently read first, within the budget; every
# invoice asked is marked read, so one that keeps failing never blocks the others. A send is followed every few
# seconds while it is recent; the rate limit ends a run (the next one goes on).
INVOICES_POLL = StatusPoll(
    name=POLL, label=gettext_lazy("Read invoice statuses"), model=Invoice, select=_polled, fetch=_statuses,
    settle=_settle, batch=lambda company: int(setting("INVOICE_POLL_IDS")), calls=poll_budget, take=_next_batch,
    stamp="status_read_at", follow_seconds=lambda: setting("INVOICE_POLL_FOLLOW_MINUTES") * 60,
    follow_delay=lambda: setting("INVOICE_POLL_FOLLOW_SECONDS"), keep_following=_recently_sent_working,
    defer_when_limited=False, after=invoices_moved)


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# Both lists, from where the last run stopped; once a day the whole lists, to learn of deletions.
schedule.register(func=invoices_mirror_all, interval=900, name="invoices_mirror", job_timeout=1800)
# Statuses the platform still works on, within the company's status-query budget.
polling.register(INVOICES_POLL, every=300)
