"""What the platform says of invoices, read back: its two lists mirrored (incrementally, and whole once a day),
one invoice in full when it is opened, and the statuses of those it still works on, polled on the invoice
service within the company's status-query budget (document 1, section 8)."""

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core import jobs, resources, sync
from backoffice.core.choices import SyncState
from backoffice.core.models import Company
from backoffice.core.platform import client_for, limiter
from backoffice.remote import endpoints, ratelimit
from backoffice.remote.accounting_invoices import AccountingInvoiceClient
from backoffice.remote.common import field
from backoffice.remote.errors import RateLimited, RemoteError

from .choices import WORKING_STATUSES, InvoiceStatus, RecordType
from .models import Invoice, ListSync
from .services import InvoiceError, _int, _moment, accounting, full_fields, item_fields, service, setting

logger = logging.getLogger("backoffice.invoices")


class InvoiceNotFound(InvoiceError):
    """The platform answered that it does not have the invoice (get invoice: 404)."""


# --- the mirror of the platform's two lists ------------------------------------------------------------------
def _store(company, is_send, items) -> int:
    return resources.mirror_store(Invoice, items, company=company, fields_of=item_fields, is_send=is_send)


def invoices_mirror(company_id, *, full=False) -> str:
    """Both lists of one company: what changed since the last run stopped (updateDateUtc, newest first), or the
    whole lists once a day, after which the synced invoices the walk did not see are asked for one by one and
    dropped only when the platform says it no longer has them."""
    company = Company.objects.get(pk=company_id)
    client = accounting(company)
    new = read = dropped = 0
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
                moment = _moment(field(item, "updateDateUtc"))
                if moment and (newest is None or moment > newest):
                    newest = moment
        if whole:
            dropped += _drop_missing(company, client, is_send, seen, started)
        ListSync.objects.filter(pk=state.pk).update(changed_until=newest, **({"full_at": started} if whole else {}))
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
    from . import jobs as invoice_jobs

    return jobs.enqueue(invoice_jobs.invoices_mirror, company=company, args=[company.pk])


def invoices_mirror_all() -> str:
    from . import jobs as invoice_jobs

    count = jobs.enqueue_per_company(invoice_jobs.invoices_mirror, name="invoices_mirror")
    return _("%(count)s compan(ies) asked.") % {"count": count}


def invoice_read(invoice, *, force=False) -> Invoice | None:
    """The invoice in full from the platform (get invoice), kept in detail; None when the platform no longer
    has it (a synced mirror copy is then dropped). Fresh enough copies are not read again."""
    if not invoice.remote_id:
        return invoice
    fresh = invoice.detail_read_at and (
        timezone.now() - invoice.detail_read_at).total_seconds() < setting("INVOICE_DETAIL_FRESH_SECONDS")
    if fresh and not force:
        return invoice
    answer = client_for(invoice.company, AccountingInvoiceClient, interactive=True).invoice(
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
    return invoice


# --- statuses on the invoice service, within the status-query budget ------------------------------------------
def _status_rule():
    endpoint = endpoints.resolve("invoice.outbox_status_list", getattr(settings, "PLATFORM_ENDPOINTS", {}) or {})
    return ratelimit.rule_for(endpoint.method, endpoint.path)


def poll_budget(company) -> int:
    """Status calls one poll may make now: the background's share of the tier's status-query limit over one poll
    interval, and never more than what is left of that share in the current window (polls that follow a send
    run every few seconds; the rest of the limit stays free for "Read again"). 100 per 180 minutes at T1 gives
    one call a run; the lists' own invoiceStatus keeps the rest current."""
    rule = _status_rule()
    if rule is None:
        return int(setting("INVOICE_POLL_CALLS"))
    limit, minutes = rule.limit(company.tier)
    share = limit * setting("INVOICE_POLL_SHARE")
    per_run = max(1, int(share * setting("INVOICE_POLL_INTERVAL") / (minutes * 60)))
    left = int(share) - limiter().used(str(company.pk), company.tier, rule)
    return max(0, min(per_run, left))


def _settle(invoice, answer) -> dict | None:
    status = _int(field(answer, "status"))
    if status is None:
        return None
    message = str(field(answer, "message") or "")
    if status == invoice.remote_status and message == invoice.status_message:
        return None
    return {"remote_status": status, "status_message": message, "status_read_at": timezone.now()}


def _polled(company):
    """What polling asks about: what the platform still works on, and for a while after a send its drafts too
    (a platform that answers a save with 0 may still issue it), oldest read first."""
    since = timezone.now() - timedelta(minutes=setting("INVOICE_POLL_FOLLOW_MINUTES"))
    return (Invoice.objects.filter(Q(remote_status__in=WORKING_STATUSES) | Q(remote_status=InvoiceStatus.DRAFT,
                                                                          synced_at__gte=since),
                                   company=company, sync_state=SyncState.SYNCED, pending_action="")
            .exclude(remote_id="").order_by(F("status_read_at").asc(nulls_first=True), "pk"))


def invoices_poll(company_id, *, follow=False) -> str:
    """Ask the invoice service the statuses of invoices it still works on, the least recently read first: an
    outgoing e-invoice goes with the others waiting (POST /v2/outboxinvoice/status, many ids), an e-archive or
    incoming one on its own path. Every invoice asked is marked read, whatever the answer, so one that keeps
    failing never blocks the others. Stops at the budget or when the limiter says wait."""
    company = Company.objects.get(pk=company_id)
    client = service(company)
    budget = poll_budget(company)
    started = timezone.now()
    changed = calls = 0
    while calls < budget:
        oldest = _polled(company).first()
        if oldest is None or (oldest.status_read_at and oldest.status_read_at >= started):
            break  # everything asked this run
        many = oldest.service_kind == "outbox"
        batch = list(_polled(company).filter(is_send=True, record_type=RecordType.EINVOICE)
                     [:int(setting("INVOICE_POLL_IDS"))]) if many else [oldest]
        try:
            calls += 1
            if many:
                answers = {str(field(a, "id")): a for a in client.outbox_status_list([i.remote_id for i in batch])
                           or []}
            else:
                answers = {oldest.remote_id: client.status(oldest.service_kind, oldest.remote_id)}
        except RateLimited as exc:
            logger.info("invoice status polling of company %s stopped by the rate limit: %s", company_id, exc)
            break
        except RemoteError as exc:  # kept on the log; the invoices go to the back of the line
            logger.warning("invoice statuses of %s not read: %s", [i.remote_id for i in batch], exc)
            answers = {}
        changed += _keep_statuses(batch, answers)
    if follow and _recently_sent_working(company):
        poll_soon(company_id, delay=setting("INVOICE_POLL_FOLLOW_SECONDS"))
    return _("%(calls)s status call(s), %(changed)s invoice(s) changed.") % {"calls": calls, "changed": changed}


def _keep_statuses(invoices, answers) -> int:
    """The platform's status and message on each invoice; every one asked is marked read (the oldest go first)."""
    now, changed = timezone.now(), 0
    for invoice in invoices:
        answer = answers.get(invoice.remote_id)
        fields = _settle(invoice, answer) if answer else None
        idle = Invoice.objects.filter(pk=invoice.pk, sync_state=SyncState.SYNCED, pending_action="")
        if fields:
            changed += idle.update(**fields)
        else:
            idle.update(status_read_at=now)
    return changed


def _recently_sent_working(company) -> bool:
    since = timezone.now() - timedelta(minutes=setting("INVOICE_POLL_FOLLOW_MINUTES"))
    return Invoice.objects.filter(company=company, sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES,
                                  synced_at__gte=since).exists()


def poll_soon(company_id, delay=None):
    from . import jobs as invoice_jobs

    return jobs.enqueue(invoice_jobs.invoices_poll, company=company_id, args=[company_id], kwargs={"follow": True},
                        delay=setting("INVOICE_POLL_FOLLOW_SECONDS") if delay is None else delay,
                        join_running=False)


def invoices_poll_all() -> str:
    from . import jobs as invoice_jobs

    companies = Invoice.objects.filter(sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES).values_list(
        "company_id", flat=True).distinct()
    count = 0
    for company_id in companies:
        count += jobs.enqueue(invoice_jobs.invoices_poll, company=company_id, args=[company_id]).is_new
    return _("%(count)s compan(ies) polled.") % {"count": count}
