"""Thin job entry points: load by id, call one service (the runner owns retries and deferrals). Status changes
and exports run as core jobs of their declarations (services.NOTE_ACTIONS, families.py)."""

from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from backoffice.core.jobs import TryLater, current_run, enqueue, job
from backoffice.core.models import Company

from . import inbox, mirror, replies, services, taxpayers


@job(_("Send dispatch note"), name="dispatch_note_push")
def note_push(pk):
    return services.note_push(pk)


@job(_("Ask dispatch note statuses"), name="dispatch_notes_poll")
def notes_poll(company_id, follow=True):
    """One batch of moving notes; a poll a send asked for (follow) asks again shortly while notes still move,
    for DISPATCH_POLL_FOLLOW_SECONDS after the latest send (mirror.poll_soon)."""
    company = Company.objects.get(pk=company_id)
    changed = mirror.notes_poll(company=company) + inbox.replies_poll(company=company)
    if follow and current_run() is not None and mirror.poll_following(company.pk) and (
            mirror.notes_moving(company=company) or inbox.replies_moving(company=company)):
        raise TryLater(services.setting("DISPATCH_POLL_DELAY_SECONDS"),
                       gettext("Dispatch notes still moving on the platform; asking again shortly."))
    return ngettext("%(count)s dispatch note changed.", "%(count)s dispatch notes changed.", changed) % {
        "count": changed}


def notes_poll_all():
    """Cron: one poll per company with notes the platform still works on."""
    count = 0
    for company in Company.objects.filter(is_active=True):
        if mirror.notes_waiting(company=company) or inbox.replies_moving(company=company):
            count += mirror.poll_soon(company.pk, delay=0, follow=False).is_new
    return count


@job(_("Read new dispatch notes from the platform"), name="dispatch_outbox_mirror")
def outbox_mirror(company_id):
    new = mirror.outbox_mirror(company=Company.objects.get(pk=company_id))
    return ngettext("%(count)s new dispatch note read.", "%(count)s new dispatch notes read.", new) % {"count": new}


def outbox_mirror_all():
    """Cron: the listing of new notes of every active company."""
    return sum(enqueue(outbox_mirror, company=company.pk, args=[company.pk]).is_new
               for company in Company.objects.filter(is_active=True))


@job(_("Read the dispatch-note users' list"), name="dispatch_taxpayers_refresh")
def taxpayers_refresh():
    return taxpayers.taxpayers_refresh()


def taxpayers_request():
    return enqueue(taxpayers_refresh)


@job(_("Send dispatch note reply"), name="dispatch_reply_push")
def reply_push(pk):
    return replies.reply_push(pk)


@job(_("Read incoming dispatch notes and replies from the platform"), name="dispatch_inbox_mirror")
def inbox_mirror(company_id, walk=False):
    return inbox.inbox_mirror(company=Company.objects.get(pk=company_id), walk=walk)


def inbox_mirror_all():
    """Cron: the incoming list and the receipt list of every active company."""
    return sum(enqueue(inbox_mirror, company=company.pk, args=[company.pk]).is_new
               for company in Company.objects.filter(is_active=True))
