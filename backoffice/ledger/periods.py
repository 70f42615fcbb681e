"""The platform's periods as the rest of the e-ledger reads them: its client, what its status codes mean, and
which periods it still works on.

The platform's status codes of a period are not shown by document 3: which codes mean "being worked on",
"ready", "refused", "approved" and "submission failed" are settings, defaulting to the sandbox's codes
(choices.PeriodStatus), to be confirmed with the provider.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from backoffice.core.choices import SyncState
from backoffice.core.platform import client_for
from backoffice.remote.ledger import LedgerClient

from .choices import PeriodStatus
from .models import Journal, Period


def ledger_client(company, *, interactive=False) -> LedgerClient:
    return client_for(company, LedgerClient, interactive=interactive)


def statuses(name: str, default) -> tuple:
    """A set of the platform's period codes (settings.LEDGER_<name>_STATUSES)."""
    return tuple(int(code) for code in getattr(settings, f"LEDGER_{name}_STATUSES", default))


def working_statuses():  # the platform converts, checks or submits: followed until it stops
    return statuses("WORKING", (PeriodStatus.UPLOADED, PeriodStatus.CONVERTING, PeriodStatus.SENT))


def ready_statuses():  # converted and checked: its certificates can be sent
    return statuses("READY", (PeriodStatus.READY,))


def refused_statuses():  # the platform's checks refused the journal: the range may be uploaded again
    return statuses("REFUSED", (PeriodStatus.ERROR,))


def approved_statuses():
    return statuses("APPROVED", (PeriodStatus.APPROVED,))


def failed_submission_statuses():  # sent again with isTryAgain
    return statuses("SUBMISSION_FAILED", (PeriodStatus.SUBMISSION_FAILED,))


def status_label(code) -> str:
    try:
        return str(PeriodStatus(code).label)
    except ValueError:
        return _("status %(code)s") % {"code": code}


def unsettled_periods():
    """Periods the platform still works on (changed on the platform within a week: an unknown code, or a period
    the platform leaves working, is not followed forever)."""
    return Period.objects.filter(Q(remote_status__in=working_statuses()) | Q(task_status__in=(1, 2))).exclude(
        synced_at__lt=timezone.now() - timedelta(days=7))


def period_follow_needed(company) -> bool:
    return unsettled_periods().filter(company=company).exists() or Journal.objects.filter(
        company=company, sync_state__in=[SyncState.QUEUED, SyncState.SENDING]).exists()
