"""What the platform says of invoices, read back: its two lists mirrored (incrementally, and whole once a day),
one invoice in full when it is opened, and the statuses of those it still works on, polled on the invoice
service within the company's status-query budget (document 1, section 8)."""

import logging
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core import jobs, resources, sync
from backoffice.core.choices import SyncState
from backoffice.core.models import Company
from backoffice.core.platform import client_for
from backoffice.remote import endpoints, ratelimit
from backoffice.remote.accounting_invoices import AccountingInvoiceClient
from backoffice.remote.common import field
from backoffice.remote.errors import RateLimited

from .choices import WORKING_STATUSES, RecordType
from .models import Invoice, ListSync
from .services import _int, _moment, accounting, full_fields, item_fields, service, setting

logger = logging.getLogger("backoffice.invoices")


# --- the mirror of the platform's two lists ------------------------------------------------------------------
def _store(company, is_send, items) -> int:
    return resources.mirror_store(Invoice, items, company=company, fields_of=item_fields, is_send=is_send)


def invoices_mirror(company_id, *, full=False) -> str:
    """Both lists of one company: from where the last run stopped (updateDateUtc), or whole once a day (and
    the synced invoices the platform no longer lists are dropped then)."""
    company = Company.objects.get(pk=company_id)
    client = accounting(company)
    new = changed = 0
    for is_send in (True, False):
        state, _created = ListSync.objects.get_or_create(company=company, is_send=is_send)
        whole = full or state.full_at is None or (
            timezone.now() - state.full_at).total_seconds() >= setting("INVOICE_FULL_SYNC_SECONDS")
        since = None
        if not whole and state.changed_until:
            since = (state.changed_until - timedelta(seconds=setting("INVOICE_SYNC_OVERLAP_SECONDS"))).isoformat()
        started, seen, newest = timezone.now(), set(), state.changed_until
        for page in sync.pages_with_progress(client.changed_since(is_send, since)):
            new += _store(company, is_send, page["items"])
            changed += len(page["items"])
            for item in page["items"]:
                seen.add(str(field(item, "ettn") or ""))
                moment = _moment(field(item, "updateDateUtc"))
                if moment and (newest is None or moment > newest):
                    newest = moment
        if whole:
            # Only records that were synced before this walk began: a new one may have landed meanwhile.
            resources.prune_missing(Invoice, company=company, keep=seen, is_send=is_send, synced_at__lt=started)
        ListSync.objects.filter(pk=state.pk).update(changed_until=newest, **({"full_at": started} if whole else {}))
    return _("%(count)s invoice(s) read, %(new)s new.") % {"count": changed, "new": new}


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
        if invoice.sync_state == SyncState.SYNCED and not invoice.pending_action:
            Invoice.objects.filter(pk=invoice.pk, sync_state=SyncState.SYNCED, pending_action="").delete()
            return None
        return invoice
    fields = full_fields(answer)
    fields.pop("remote_id", None)
    now = timezone.now()
    if invoice.sync_state == SyncState.SYNCED and not invoice.pending_action:
        Invoice.objects.filter(pk=invoice.pk).update(detail=answer, detail_read_at=now, status_read_at=now, **fields)
    else:
        Invoice.objects.filter(pk=invoice.pk).update(detail=answer, detail_read_at=now)
    invoice.refresh_from_db()
    return invoice


# --- statuses on the invoice service, within the status-query budget ------------------------------------------
def _status_rule():
    endpoint = endpoints.resolve("invoice.outbox_status_list", getattr(settings, "PLATFORM_ENDPOINTS", {}) or {})
    return ratelimit.rule_for(endpoint.method, endpoint.path)


def poll_budget(company) -> int:
    """Status calls one poll may make: a share of the tier's status-query limit over one poll interval (100 per
    180 minutes at T1 gives one call every five minutes; the lists' own invoiceStatus keeps the rest current)."""
    rule = _status_rule()
    if rule is None:
        return 10
    limit, minutes = rule.limit(company.tier)
    per_run = limit * setting("INVOICE_POLL_INTERVAL") / (minutes * 60) * setting("INVOICE_POLL_SHARE")
    return max(1, int(per_run))


def _settle(invoice, answer) -> dict | None:
    status = _int(field(answer, "status"))
    if status is None:
        return None
    message = str(field(answer, "message") or "")
    if status == invoice.remote_status and message == invoice.status_message:
        return None
    return {"remote_status": status, "status_message": message, "status_read_at": timezone.now()}


def invoices_poll(company_id, *, follow=False) -> str:
    """Ask the invoice service the statuses of invoices it still works on, oldest read first: the outgoing
    e-invoices many at once (POST /v2/outboxinvoice/status), e-archive and incoming ones one by one on their own
    paths. Stops at the budget or when the limiter says wait; what is left waits for the next run."""
    company = Company.objects.get(pk=company_id)
    client = service(company)
    budget = poll_budget(company)
    working = Invoice.objects.filter(company=company, sync_state=SyncState.SYNCED, remote_status__in=WORKING_STATUSES,
                                     pending_action="").exclude(remote_id="").order_by(
        "status_read_at", "pk")
    changed = calls = 0
    try:
        batch = list(working.filter(is_send=True, record_type=RecordType.EINVOICE)[:int(setting("INVOICE_POLL_IDS"))])
        if batch and calls < budget:
            calls += 1
            answers = {str(field(a, "id")): a for a in client.outbox_status_list([i.remote_id for i in batch]) or []}
            changed += _keep_statuses(batch, answers)
        for invoice in working.exclude(is_send=True, record_type=RecordType.EINVOICE)[:max(0, budget - calls)]:
            calls += 1
            changed += _keep_statuses([invoice], {invoice.remote_id: client.status(invoice.service_kind,
                                                                                  invoice.remote_id)})
    except RateLimited as exc:
        logger.info("invoice status polling of company %s stopped by the rate limit: %s", company_id, exc)
    if follow and _recently_sent_working(company):
        poll_soon(company_id, delay=setting("INVOICE_POLL_FOLLOW_SECONDS"))
    return _("%(calls)s status call(s), %(changed)s invoice(s) changed.") % {"calls": calls, "changed": changed}


def _keep_statuses(invoices, answers) -> int:
    """The platform's status and message on each invoice; every one asked is marked read (the oldest go first)."""
    now, changed = timezone.now(), 0
    for invoice in invoices:
        answer = answers.get(invoice.remote_id)
        fields = _settle(invoice, answer) if answer else None
        if fields:
            changed += Invoice.objects.filter(pk=invoice.pk, sync_state=SyncState.SYNCED).update(**fields)
        else:
            Invoice.objects.filter(pk=invoice.pk).update(status_read_at=now)
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
