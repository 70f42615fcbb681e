"""Records the platform keeps as they are: created, updated and deleted, never sent through a status
life (current accounts and their addresses, banks, contacts, mappings; the chart of accounts).

A domain declares a Resource (how to create, update, find and delete one record) and core does the rest:

    ACCOUNTS = Resource(CurrentAccount, create=..., update=..., find=..., after=...)
    # services: resources.queue_change(account) after saving it; resources.request_delete(address)
    # jobs:     @job(_("Send current account")) def current_account_push(pk): return resources.push(ACCOUNTS, pk)

Every push goes through sync.record_push, so the record is claimed once and, when an earlier attempt may
have reached the platform (a 5xx after applying, a timeout, a worker lost), the platform is asked first:
- a create is looked up with `find` (its answer was lost: the platform has it, nothing is sent again);
- an update is sent again as it is (a PUT of the same body changes nothing more);
- a delete is looked up with `exists`; gone is success, and so is a 404 to a DELETE sent again.
A delete the platform refuses (a default address, a mapping in use) leaves the record as it was, with the
platform's Error text shown on it.

The platform's lists come back through mirror_store(): one page at a time, with a query or two and bulk
writes, leaving alone the records whose local change is on its way.
"""

from dataclasses import dataclass
from typing import Callable

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.remote.errors import RemoteError

from . import sync
from .choices import SyncState

DELETE = "delete"
CHANGEABLE = (SyncState.LOCAL, SyncState.FAILED, SyncState.SYNCED)


class ResourceError(Exception):
    """A change refused here; `field` names the form field it belongs to."""

    def __init__(self, message, field=None):
        super().__init__(message)
        self.message, self.field = message, field


@dataclass(frozen=True)
class Resource:
    model: type
    create: Callable  # (record) -> model fields from the platform's answer
    update: Callable  # (record) -> model fields
    find: Callable  # (record) -> model fields when the platform already has it, else None
    delete: Callable | None = None  # (record) -> None
    exists: Callable | None = None  # (record) -> bool: still on the platform
    waits_for: Callable | None = None  # (record) -> why it cannot go yet ("" when it can)
    after: Callable | None = None  # (record) -> None, once a create or update has landed


def queue_change(record):
    """Send a saved record (new or changed) to the platform: -> QUEUED and its push job after commit."""
    model = type(record)
    with transaction.atomic():
        changed = model.objects.filter(pk=record.pk, sync_state__in=CHANGEABLE, pending_action="").update(
            sync_state=SyncState.QUEUED, last_error="", last_error_source="", updated_at=timezone.now())
        if not changed:
            raise ResourceError(_("This record is on its way to the platform; wait until it is there."))
        record.sync_state = SyncState.QUEUED
        return sync.enqueue_push(model, record.pk, record.company_id)


def request_delete(record) -> bool:
    """Delete a record: at once when the platform never had it, else on the platform first (the row goes
    when the platform has deleted it). Returns True when it is already gone."""
    model = type(record)
    with transaction.atomic():
        if not record.remote_id and record.sync_state in (SyncState.LOCAL, SyncState.FAILED):
            # Never created there: a FAILED create was refused by the platform (a transient failure waits QUEUED).
            model.objects.filter(pk=record.pk, remote_id="").delete()
            return True
        changed = model.objects.filter(pk=record.pk, sync_state__in=CHANGEABLE, pending_action="").exclude(
            remote_id="").update(sync_state=SyncState.QUEUED, pending_action=DELETE, last_error="",
                                 last_error_source="", updated_at=timezone.now())
        if not changed:
            raise ResourceError(_("This record is on its way to the platform; wait until it is there."))
        sync.enqueue_push(model, record.pk, record.company_id)
        return False


def push(resource: Resource, pk) -> str:
    """The body of a resource's push job: create, update or delete one record, exactly once."""
    model = resource.model
    record = model.objects.filter(pk=pk).first()
    if record is None:
        return _("The record no longer exists.")
    if record.sync_state == SyncState.QUEUED and resource.waits_for and (reason := resource.waits_for(record)):
        # Stays QUEUED: what it waits for enqueues it again once there (and the sweep would).
        model.objects.filter(pk=pk, sync_state=SyncState.QUEUED).update(last_error=reason, last_error_source="")
        return reason
    deleting = record.pending_action == DELETE

    def send(current):
        if deleting:
            resource.delete(current)
            return {}
        return resource.update(current) if current.remote_id else resource.create(current)

    def reconcile(current):
        if deleting:
            return None if resource.exists(current) else {}
        return None if current.remote_id else resource.find(current)

    try:
        message = sync.record_push(model, pk, send=send, reconcile=reconcile)
    except RemoteError as exc:
        if deleting and exc.permanent:
            # Refused: the record is still on the platform, as it was; the Error says why.
            failed = model.objects.filter(pk=pk, pending_action=DELETE, sync_state=SyncState.FAILED)
            for text in failed.values_list("last_error", flat=True):
                failed.update(pending_action="", sync_state=SyncState.SYNCED,
                              last_error=_("The platform refused to delete it: %(error)s") % {"error": text})
        raise
    if deleting:
        model.objects.filter(pk=pk, pending_action=DELETE, sync_state=SyncState.SYNCED).delete()
        return _("Deleted on the platform.")
    if resource.after:
        landed = model.objects.filter(pk=pk, sync_state=SyncState.SYNCED).first()
        if landed is not None:
            resource.after(landed)
    return message


def mirror_store(model, items, *, company, fields_of, **scope) -> int:
    """Store one page of the platform's list: new records are created SYNCED in one bulk insert, known ones
    take the platform's values where they differ (one bulk update), and records whose local change is on its
    way (not SYNCED) are left alone. fields_of(item) -> (remote_id, {field: value}). `scope` narrows the
    records compared (current_account=... for a child list). Returns how many were new."""
    rows = dict(fields_of(item) for item in items)
    rows.pop("", None)
    if not rows:
        return 0
    names = sorted({name for values in rows.values() for name in values})
    known = {row["remote_id"]: row for row in model.objects.filter(company=company, remote_id__in=list(rows), **scope)
             .values("pk", "remote_id", "sync_state", "pending_action", *names)}
    now = timezone.now()
    new = [model(company=company, remote_id=remote_id, sync_state=SyncState.SYNCED, synced_at=now,
                 status_read_at=now, **scope, **values)
           for remote_id, values in rows.items() if remote_id not in known]
    # A conflict is a local record of the same natural key not yet linked (its push will reconcile).
    model.objects.bulk_create(new, batch_size=500, ignore_conflicts=True)
    changed = []
    for remote_id, values in rows.items():
        row = known.get(remote_id)
        if row is None or row["sync_state"] != SyncState.SYNCED or row["pending_action"]:
            continue
        if any(row[name] != value for name, value in values.items()):
            changed.append(model(pk=row["pk"], status_read_at=now, **values))
    if changed:
        model.objects.bulk_update(changed, [*names, "status_read_at"], batch_size=500)
    return len(new)


def prune_missing(model, *, company, keep, **scope) -> int:
    """Delete the synced records of `scope` the platform no longer lists (remote ids not in `keep`)."""
    return model.objects.filter(company=company, sync_state=SyncState.SYNCED, pending_action="", **scope).exclude(
        remote_id="").exclude(remote_id__in=list(keep)).delete()[0]
