"""The push jobs of sub-companies and their operations: send and reconcile (through core.sync.record_push).

Creation and credit offers are not idempotent (a second one is real money) and company management gives no
status call: when a request may have arrived (a 5xx, a timeout, a dropped connection), nothing is sent
again before a usage report fetched at least CRM_SETTLE_SECONDS after it says whether it took effect
(the report is given once per 15 minutes; rule 3: creation is processed later). Products are idempotent
(a product the company has is no change), and a cancel answered "no such active offer" is already done.
"""

from datetime import timedelta

from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from backoffice.core import jobs, sync
from backoffice.core.choices import SyncState
from backoffice.core.conf import tunable
from backoffice.core.jobs import job
from backoffice.core.platform import client_for
from backoffice.remote.companies import CompaniesClient
from backoffice.remote.errors import MaybeSent, NoAnswer, RemoteError

from .choices import OperationKind
from .models import ReportCredit, SubCompany, SubCompanyOperation, UsageSnapshot
from .services import CREDIT_ADDS, report_wait_seconds, usage_report_refresh


def _ambiguous(exc: RemoteError) -> bool:
    """Whether the platform may have applied a call that failed this way."""
    return isinstance(exc, (MaybeSent, NoAnswer)) or (not exc.permanent and (exc.status or 0) >= 500)


def _guarded(record, call):
    """Run a non-idempotent call; remember when its outcome is unknown (never resent blindly)."""
    try:
        return call()
    except RemoteError as exc:
        if _ambiguous(exc):
            type(record).objects.filter(pk=record.pk).update(maybe_sent_at=timezone.now())
        raise


def _report_after(record):
    """The first usage report fetched long enough after the request that may have arrived; until there is
    one, the refresh is asked for and the push waits (TryLater: no attempt counted)."""
    after = record.maybe_sent_at + timedelta(seconds=tunable("CRM_SETTLE_SECONDS", 900))
    snapshot = UsageSnapshot.objects.filter(company=record.company, fetched_at__gte=after).order_by("fetched_at").first()
    if snapshot is not None:
        return snapshot
    settle = max((after - timezone.now()).total_seconds(), 0)
    # The refresh waits for the report's window itself (the limiter defers it); here only for the settle time.
    jobs.enqueue(usage_report_refresh, company=record.company_id, args=[record.company_id], delay=settle or None)
    wait = max(settle, report_wait_seconds(record.company) or 0)
    raise jobs.TryLater(wait + 30, _("The platform may have received this request before its answer was lost; "
                                     "waiting for the next usage report to tell before sending it again."))


def subcompany_send(record) -> dict:
    body = {
        "identifier": record.identifier,
        "name": record.name,
        "quantity": record.quantity,
        "contactPersonFullName": record.contact_full_name,
        "contactPersonEmailName": record.contact_email,
        "contactPersonPhoneNumber": record.contact_phone,
    }
    _guarded(record, lambda: client_for(record.company, CompaniesClient).create_company(body))
    return {}


def subcompany_reconcile(record) -> dict | None:
    """Creation shows only in the report (rule 3): a report after the request that shows the identifier
    (snapshot_save gave the record its customerUniqueId) means it arrived; one that does not, that it did not."""
    if record.remote_id:
        return {}
    if record.maybe_sent_at is None:
        return None
    _report_after(record)
    record.refresh_from_db(fields=["remote_id"])
    if record.remote_id:
        return {}
    SubCompany.objects.filter(pk=record.pk).update(maybe_sent_at=None)
    return None


def operation_send(operation) -> dict:
    client = client_for(operation.company, CompaniesClient)
    uids = [s.remote_id for s in operation.subcompanies.order_by("pk")]
    kind = operation.kind
    if kind == OperationKind.CANCEL_CREDIT:
        try:
            answer = client.cancel_credit(uids[0], operation.application_credit_id)
        except RemoteError as exc:
            if exc.status != 404:
                raise
            # The offer is not active any more: cancelled by an earlier attempt whose answer was lost (a DELETE
            # is sent again by the transport after a 5xx), or in the portal. The wanted state holds.
            return {"response": {"alreadyCancelled": True, "detail": exc.user_message()}}
        return {"response": answer if isinstance(answer, (dict, list)) else None}
    if kind == OperationKind.ADD_PRODUCTS:
        return {"response": client.add_products(uids[0], operation.product_types)}
    if kind == OperationKind.ADD_PRODUCTS_BATCH:
        return {"response": client.add_products_batch(uids, operation.product_types)}
    if kind == OperationKind.ADD_CREDIT:
        call = lambda: client.add_credit(uids[0], operation.quantity, show_over_usage=operation.show_over_usage)  # noqa: E731
    elif kind == OperationKind.ADD_CREDIT_BATCH:
        call = lambda: client.add_credit_batch(uids, operation.quantity,  # noqa: E731
                                               show_over_usage=operation.show_over_usage)
    else:
        raise RemoteError(detail=f"unknown operation {kind}", permanent=True)
    answer = _guarded(operation, call)
    return {"response": answer if isinstance(answer, (dict, list)) else None}


def _credit_ids(snapshot, uids) -> dict:
    rows = ReportCredit.objects.filter(customer__snapshot=snapshot, customer__customer_unique_id__in=uids)
    found = {uid: set() for uid in uids}
    for uid, credit_id in rows.values_list("customer__customer_unique_id", "application_credit_id"):
        found[uid].add(credit_id)
    return found


def operation_reconcile(operation) -> dict | None:
    """None: send (again). A credit offer whose outcome is unknown is looked for in a report fetched after it:
    an offer new to every company of the request (absent from the last report before it) means it arrived."""
    if operation.maybe_sent_at is None or operation.kind not in CREDIT_ADDS:
        return None
    after = _report_after(operation)
    uids = [s.remote_id for s in operation.subcompanies.order_by("pk")]
    before = (UsageSnapshot.objects.filter(company=operation.company, fetched_at__lt=operation.maybe_sent_at)
              .order_by("-fetched_at").first())
    known = _credit_ids(before, uids) if before is not None else {uid: set() for uid in uids}
    now = _credit_ids(after, uids)
    new = {uid: now[uid] - known[uid] for uid in uids}
    # Offers other requests added meanwhile are new too: this one arrived only if there are more new offers.
    since = before.fetched_at if before is not None else operation.created_at
    others = {uid: SubCompanyOperation.objects.filter(
        subcompanies__remote_id=uid, kind__in=CREDIT_ADDS, sync_state=SyncState.SYNCED, synced_at__gte=since,
        synced_at__lte=after.fetched_at).exclude(pk=operation.pk).count() for uid in uids}
    if all(len(new[uid]) > others[uid] for uid in uids):
        return {"response": {"foundInReport": after.pk, "newCreditIds": {uid: sorted(ids) for uid, ids in new.items()}}}
    SubCompanyOperation.objects.filter(pk=operation.pk).update(maybe_sent_at=None)
    return None


@job(gettext_lazy("Create sub-company"))
def subcompany_push(pk):
    return sync.record_push(SubCompany, pk, send=subcompany_send, reconcile=subcompany_reconcile)


@job(gettext_lazy("Credit or product request"))
def operation_push(pk):
    return sync.record_push(SubCompanyOperation, pk, send=operation_send, reconcile=operation_reconcile)


# --- what core runs for this domain (read when the app is ready: core.domains) --------------------------------------
# The sweep re-enqueues records whose job was lost.
sync.register_pushable(SubCompany, subcompany_push)
sync.register_pushable(SubCompanyOperation, operation_push)
