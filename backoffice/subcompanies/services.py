"""Company management (document 1, sections 2 to 4): the only code that writes these records or calls the
platform for them.

Every write saves locally and queues a push job (sync.record_queue, push.py) that runs after the commit;
the record shows its state and the platform's message. A request the platform would refuse for a reason we
can see (rules 1 and 4, a company the platform has not shown yet) is refused here with Refused, before
anything is saved.
"""

import logging
import math
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone

import django_rq
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from redis.exceptions import RedisError
from rq.cron import get_cron_job_history_key

from backoffice.core import jobs, schedule, sync
from backoffice.core.choices import SyncState
from backoffice.core.jobs import job
from backoffice.core.models import Company, JobRun
from backoffice.core.platform import client_for, endpoint_of, limiter, register_connection_keeper
from backoffice.remote.companies import CompaniesClient
from backoffice.remote.errors import RemoteError

from . import report
from .choices import OperationKind, Origin
from .models import ReportCredit, ReportCustomer, SubCompany, SubCompanyOperation, UsageSnapshot

logger = logging.getLogger(__name__)

REFRESH_JOB = "usage_report_refresh"
# The cron entry that enqueues the report refresh of every company (backoffice/cron.py): its name and interval.
USAGE_REPORT_CRON = "usage_report_refresh"
USAGE_REPORT_INTERVAL = 900
CREDIT_ADDS = (OperationKind.ADD_CREDIT, OperationKind.ADD_CREDIT_BATCH)


class Refused(Exception):
    """A request refused before anything was saved or sent; the message is for the user."""

    def __init__(self, message):
        self.message = str(message)
        super().__init__(self.message)


def api_key_missing(company) -> str:
    """Why company management cannot be used for this company, or "": it takes only an API key (document 1,
    section 5, rule 2), which a company working with a service user may not have stored."""
    if company is None or company.api_key:
        return ""
    return _("Company management takes only an API key, and this company has none (its documents go with a "
             "service user). Nothing here can be sent to the platform until an administrator adds the API key on "
             "the company page.")


def _require_api_key(company):
    missing = api_key_missing(company)
    if missing:
        raise Refused(missing)


def _own(company, subcompanies):
    subcompanies = list(subcompanies)
    if not subcompanies:
        raise Refused(_("Choose at least one sub-company."))
    if any(s.company_id != company.pk for s in subcompanies):
        raise Refused(_("A sub-company of another company cannot be used here."))
    return subcompanies


def _require_on_platform(subcompanies):
    waiting = [s for s in subcompanies if not s.remote_id]
    if waiting:
        raise Refused(ngettext(
            "%(names)s is not on the platform yet: no usage report has shown its customerUniqueId.",
            "%(names)s are not on the platform yet: no usage report has shown their customerUniqueId.",
            len(waiting)) % {"names": ", ".join(str(s) for s in waiting)})


# --- reading the state the local rules need -------------------------------------------------------

def report_credits(subcompany) -> list[ReportCredit]:
    """The credit offers of the sub-company in the latest report that showed it."""
    if subcompany.report_row_id is None:
        return []
    return list(subcompany.report_row.credits.all())


def cancellations_under_way(subcompany) -> set[int]:
    """Credit ids whose cancellation is queued, being sent or accepted by the platform."""
    return set(SubCompanyOperation.objects.filter(subcompanies=subcompany, kind=OperationKind.CANCEL_CREDIT)
               .exclude(sync_state=SyncState.FAILED).values_list("application_credit_id", flat=True))


def credits_added_since_report(subcompany) -> int:
    """Credit offers the platform accepted after the latest report that showed the sub-company."""
    since = subcompany.last_seen_at
    ops = SubCompanyOperation.objects.filter(subcompanies=subcompany, kind__in=CREDIT_ADDS, sync_state=SyncState.SYNCED)
    if since is not None:
        ops = ops.filter(synced_at__gt=since)
    return ops.count()


def active_credits(subcompany) -> list[ReportCredit]:
    cancelled = cancellations_under_way(subcompany)
    return [c for c in report_credits(subcompany) if c.is_active and c.application_credit_id not in cancelled]


def rule_4_reason(subcompany) -> str:
    """Why products cannot be added to the sub-company now (rule 4), or ""."""
    if not subcompany.remote_id:
        return _("it is not on the platform yet")
    row = subcompany.report_row
    if row is None:
        return _("it is not in a usage report yet")
    if row.application_id is None:
        return _("it does not have the shared pool product (the usage report shows no pool application for it)")
    if not active_credits(subcompany) and not credits_added_since_report(subcompany):
        return _("it has no credit offer: add one first")
    return ""


# --- writes -----------------------------------------------------------------------------------------

def create_subcompany(*, company, identifier, name, quantity, contact_full_name, contact_email, contact_phone,
                      user=None) -> SubCompany:
    """Create a sub-company with the pool product and an offer (document 1, 2.2).

    Rule 3: the platform processes it later; the record waits until a report contains its identifier.
    Rule 2 (an active offer of its own or of another distributor) comes back as the platform's error.
    """
    _require_api_key(company)
    if SubCompany.objects.filter(company=company, identifier=identifier).exclude(sync_state=SyncState.FAILED).exists():
        raise Refused(_("A sub-company with the identifier %(identifier)s is already known; add a credit offer to "
                        "it instead.") % {"identifier": identifier})
    with transaction.atomic():
        record = SubCompany.objects.create(
            company=company, origin=Origin.CREATED, identifier=identifier, name=name, quantity=quantity,
            contact_full_name=contact_full_name, contact_email=contact_email, contact_phone=contact_phone,
            created_by=user if user is not None and user.is_authenticated else None,
        )
        sync.record_queue(record)
    return record


def _operation(company, kind, subcompanies, user, **fields) -> SubCompanyOperation:
    with transaction.atomic():
        operation = SubCompanyOperation.objects.create(
            company=company, kind=kind, created_by=user if user is not None and user.is_authenticated else None,
            **fields)
        operation.subcompanies.set(subcompanies)
        sync.record_queue(operation)
    return operation


def credit_add(*, company, subcompany, quantity, show_over_usage=False, user=None) -> SubCompanyOperation:
    """Add a credit offer to one company (document 1, 2.3)."""
    return credit_add_batch(company=company, subcompanies=[subcompany], quantity=quantity,
                            show_over_usage=show_over_usage, user=user)


def credit_add_batch(*, company, subcompanies, quantity, show_over_usage=False, user=None) -> SubCompanyOperation:
    """Add the same credit offer to several companies in one call (document 1, 2.3, batch body); one company
    gets the single call."""
    _require_api_key(company)
    subcompanies = _own(company, subcompanies)
    _require_on_platform(subcompanies)
    kind = OperationKind.ADD_CREDIT if len(subcompanies) == 1 else OperationKind.ADD_CREDIT_BATCH
    return _operation(company, kind, subcompanies, user, quantity=quantity, show_over_usage=bool(show_over_usage))


def cancel_refusal(subcompany, application_credit_id) -> str:
    """Why the offer cannot be cancelled now (rule 1 and the report's view of the offer), or ""."""
    if not subcompany.remote_id:
        return _("%(company)s is not on the platform yet.") % {"company": subcompany}
    if application_credit_id in cancellations_under_way(subcompany):
        return _("The credit offer %(id)s is already being cancelled.") % {"id": application_credit_id}
    active = active_credits(subcompany)
    if application_credit_id not in {c.application_credit_id for c in active}:
        return (_("%(company)s has no active credit offer %(id)s in the latest usage report.")
                % {"company": subcompany, "id": application_credit_id})
    if len(active) + credits_added_since_report(subcompany) <= 1:
        return (_("The credit offer %(id)s is the last active offer of %(company)s, and a company's last active "
                  "offer cannot be cancelled. Add another offer first.")
                % {"id": application_credit_id, "company": subcompany})
    return ""


def credit_cancel(*, company, subcompany, application_credit_id, user=None) -> SubCompanyOperation:
    """Cancel a credit offer by its applicationCreditId. Rule 1: never the company's last active offer."""
    _require_api_key(company)
    [subcompany] = _own(company, [subcompany])
    application_credit_id = int(application_credit_id)
    refusal = cancel_refusal(subcompany, application_credit_id)
    if refusal:
        raise Refused(refusal)
    return _operation(company, OperationKind.CANCEL_CREDIT, [subcompany], user,
                      application_credit_id=application_credit_id)


def _check_rule_4(subcompanies):
    refused = [(s, reason) for s in subcompanies if (reason := rule_4_reason(s))]
    if refused:
        reasons = "; ".join(f"{s}: {reason}" for s, reason in refused)
        raise Refused(_("Products can be added only to a company that has the shared pool product and a credit "
                        "offer. %(reasons)s.") % {"reasons": reasons})


def products_add(*, company, subcompany, product_types, user=None) -> SubCompanyOperation:
    """Add products (ProductType values of 2.4) to one company; rule 4 is checked first."""
    return products_add_batch(company=company, subcompanies=[subcompany], product_types=product_types, user=user)


def products_add_batch(*, company, subcompanies, product_types, user=None) -> SubCompanyOperation:
    """Add products to several companies in one call (one company: the single call); refused as a whole if one
    of them fails rule 4."""
    _require_api_key(company)
    subcompanies = _own(company, subcompanies)
    _check_rule_4(subcompanies)
    kind = OperationKind.ADD_PRODUCTS if len(subcompanies) == 1 else OperationKind.ADD_PRODUCTS_BATCH
    return _operation(company, kind, subcompanies, user, product_types=sorted({int(p) for p in product_types}))


def record_resend(record):
    """The user asks to send a failed record again."""
    type(record).objects.filter(pk=record.pk).update(maybe_sent_at=None)
    return sync.record_queue(record)


# --- the usage report -------------------------------------------------------------------------------

def report_wait_seconds(company) -> float | None:
    """Seconds until the report may be asked again (0.0: now), from our shared limiter without using a
    slot; None when the limiter cannot be reached."""
    endpoint = endpoint_of("crm.usage_report")
    try:
        return limiter().wait_time(str(company.pk), company.tier, endpoint.method, endpoint.path)
    except RedisError:
        logger.warning("rate limiter unavailable; cannot tell when the usage report may be asked again")
        return None


def _latest_cron_enqueue():
    """When the cron last enqueued the report refresh (RQ keeps each cron entry's enqueues in Redis)."""
    try:
        newest = django_rq.get_connection("default").zrange(get_cron_job_history_key(USAGE_REPORT_CRON), -1, -1,
                                                             withscores=True)
    except RedisError:
        logger.warning("Redis unavailable; cannot tell when the usage report cron runs next")
        return None
    return datetime.fromtimestamp(newest[0][1], tz=dt_timezone.utc) if newest else None


def next_report_at(company, now=None):
    """About when the next usage report of the company is fetched, or None when nothing says so.

    The cron enqueues the refresh every USAGE_REPORT_INTERVAL seconds from its last run (RQ's record of it in
    Redis; without one, the latest report of the company stands in); the refresh then waits for the platform's
    window (once per 15 minutes per company, document 1, section 8). An anchor older than two intervals means
    the cron is not running, and then nothing is promised."""
    now = now or timezone.now()
    interval = timedelta(seconds=USAGE_REPORT_INTERVAL)
    anchor = _latest_cron_enqueue()
    if anchor is None or now - anchor > 2 * interval:
        latest = UsageSnapshot.objects.filter(company=company).values_list("fetched_at", flat=True).first()
        anchor = latest if latest is not None and now - latest <= 2 * interval else None
    if anchor is None:
        return None
    tick = anchor + interval
    if tick < now:
        tick += interval * math.ceil((now - tick) / interval)
    wait = report_wait_seconds(company) or 0
    return max(tick, now + timedelta(seconds=wait))


def refresh_run(company) -> JobRun | None:
    """The report refresh job queued, running or waiting for the window, if any."""
    return JobRun.objects.filter(name=REFRESH_JOB, company=company, target="", status__in=jobs.ACTIVE).first()


def usage_report_request(*, company) -> JobRun:
    """The manual refresh button: queue the refresh job, only while the platform's window is open
    (1 call per 15 minutes, document 1, section 8), so that it never earns a 429."""
    _require_api_key(company)
    wait = report_wait_seconds(company)
    if wait:
        minutes = max(1, math.ceil(wait / 60))
        raise Refused(ngettext(
            "The platform gives the usage report once every 15 minutes; the next one is possible in %(minutes)s "
            "minute.",
            "The platform gives the usage report once every 15 minutes; the next one is possible in %(minutes)s "
            "minutes.", minutes) % {"minutes": minutes})
    return jobs.enqueue(usage_report_refresh, company=company, args=[company.pk])


@job(gettext_lazy("Refresh the usage report"))
def usage_report_refresh(company_id) -> str:
    """Fetch the report (the limiter defers the job while the window is closed) and keep it."""
    company = Company.objects.filter(pk=company_id, is_active=True).first()
    if company is None:
        return _("The company is gone or inactive; nothing to fetch.")
    body = client_for(company, CompaniesClient).usage_report()
    try:
        snapshot = snapshot_save(company=company, body=body)
    except report.ReportError as exc:
        raise RemoteError(detail=str(exc), permanent=True) from None
    return _("Usage report kept: %(count)s companies.") % {"count": snapshot.customers.count()}


def usage_reports_enqueue():
    """Cron (every 15 minutes): refresh the report of every active company that uses company management
    (it has a report or a sub-company). A company's first report comes from the refresh button, so that
    connections without the company-management service are not asked four times an hour."""
    in_use = Q(Exists(UsageSnapshot.objects.filter(company=OuterRef("pk")))) | Q(
        Exists(SubCompany.objects.filter(company=OuterRef("pk"))))
    count = 0
    for company in Company.objects.filter(in_use, is_active=True):
        if not company.api_key:  # company management takes only an API key: nothing to ask with
            continue
        # Each company at its own offset in the 15 minutes, so that the companies' reads spread.
        count += jobs.enqueue(usage_report_refresh, company=company.pk, args=[company.pk],
                              delay=schedule.company_offset(company.pk, USAGE_REPORT_INTERVAL) or None).is_new
    return count


def snapshot_save(*, company, body, fetched_at=None) -> UsageSnapshot:
    """Keep one report: the raw body, its companies and credits as rows, and the sub-companies it shows
    (a waiting creation whose identifier appears gets its customerUniqueId: rule 3)."""
    root = report.parse(body)
    fetched_at = fetched_at or timezone.now()
    with transaction.atomic():
        snapshot = UsageSnapshot.objects.create(company=company, fetched_at=fetched_at, raw=body)
        rows = _save_rows(company, snapshot, root)
        _update_subcompanies(company, fetched_at, root, rows)
        _learn_customer_unique_id(company, root.customer_unique_id)
    return snapshot


# What a report row keeps of its company as parsed (report.ParsedCustomer), besides the id and the tree.
ROW_FIELDS = ("depth", "application_id", "application_source", "application_status", "application_create_date",
              "distributors", "usages", "over_usages", "extra", "credit_offered", "credit_used", "credit_over_used")


def _save_rows(company, snapshot, root) -> dict:
    """ReportCustomer rows level by level (bulk inserts; a level needs its parents' ids)."""
    rows = {}
    level = [(root, None)]
    position = 0
    while level:
        built = []
        for node, parent in level:
            built.append(ReportCustomer(snapshot=snapshot, company=company, parent=parent, position=position,
                                        customer_unique_id=node.customer_unique_id[:64],
                                        **{name: getattr(node, name) for name in ROW_FIELDS}))
            position += 1
        saved = ReportCustomer.objects.bulk_create(built)
        if any(row.pk is None for row in saved):  # a database that returns no ids: save one by one
            for row in saved:
                row.save()
        credits = []
        next_level = []
        for (node, _parent), row in zip(level, saved):
            rows[id(node)] = row
            credits += [ReportCredit(customer=row, application_credit_id=credit_id, data=element)
                        for credit_id, element in node.credits]
            next_level += [(child, row) for child in node.children]
        ReportCredit.objects.bulk_create(credits)
        level = next_level
    return rows


def _update_subcompanies(company, fetched_at, root, rows):
    known = {s.remote_id: s for s in SubCompany.objects.filter(company=company).exclude(remote_id="")}
    waiting = {s.identifier: s for s in SubCompany.objects.filter(company=company, remote_id="").exclude(identifier="")}
    figures = ("credit_offered", "credit_used", "credit_over_used")
    for node in root.children:
        row = rows[id(node)]
        subcompany = known.get(node.customer_unique_id)
        fields = ["report_row", "last_seen_at", *figures, "updated_at"]
        if subcompany is None:
            match = next((waiting.pop(i) for i in report.identifiers_in(node.extra) if i in waiting), None)
            if match is not None:
                subcompany = match
                subcompany.remote_id, subcompany.seen_at = node.customer_unique_id[:64], fetched_at
                fields += ["remote_id", "seen_at"]
            else:
                identifier = str(node.extra.get("identifier") or "")
                subcompany = SubCompany(
                    company=company, origin=Origin.REPORT, sync_state=SyncState.SYNCED, synced_at=fetched_at,
                    remote_id=node.customer_unique_id[:64], seen_at=fetched_at,
                    name=str(node.extra.get("name") or "")[:200],
                    identifier=identifier if identifier.isdigit() and len(identifier) in (10, 11) else "",
                )
                fields = None
            known[subcompany.remote_id] = subcompany
        subcompany.report_row, subcompany.last_seen_at = row, fetched_at
        for name in figures:
            setattr(subcompany, name, getattr(row, name))
        # Only the report's fields: a push job may be changing the sync state of this row right now.
        subcompany.save(update_fields=fields)


def _learn_customer_unique_id(company, customer_unique_id):
    """The company's own customerUniqueId is read from the report (Company.customer_unique_id)."""
    if company.customer_unique_id:
        return
    try:
        with transaction.atomic():
            Company.objects.filter(pk=company.pk, customer_unique_id__isnull=True).update(
                customer_unique_id=customer_unique_id)
    except Exception as exc:  # IntegrityError: another connection has it; ValidationError: not a uuid
        logger.info("customerUniqueId of %s not recorded: %s", company, type(exc).__name__)


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# The connection test reads the usage report (one call per 15 minutes): the report it got is kept.
register_connection_keeper("crm", lambda company, body: snapshot_save(company=company, body=body))
# The usage report (document 1, section 8: once per 15 minutes per company) of the companies that use company
# management; the job asks the shared limiter first (a closed window defers it). The pages read the entry's name
# and interval back to say when the next report comes.
schedule.register(func=usage_reports_enqueue, interval=USAGE_REPORT_INTERVAL, name=USAGE_REPORT_CRON)
