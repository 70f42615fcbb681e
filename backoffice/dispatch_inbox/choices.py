"""Choices of the receiving side (document 3, 2.9 and 3.3): which operation carries our reply, and the statuses an
incoming note and a reply of ours go through. The statuses themselves are dispatch's (DispatchStatus, ReplyStatus)."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from backoffice.core import domains

dispatch_api = domains.api("dispatch")
# One vocabulary for both directions of a note: the statuses, answers, document kinds and refusal are dispatch's.
Answer, DispatchError, DispatchStatus, DocumentKind, ReplyStatus = (
    dispatch_api.Answer, dispatch_api.DispatchError, dispatch_api.DispatchStatus, dispatch_api.DocumentKind,
    dispatch_api.ReplyStatus)

REPLY_WORKING_STATUSES = (ReplyStatus.QUEUED, ReplyStatus.DELIVERED)
REPLY_EDITABLE_STATUSES = (ReplyStatus.DRAFT, ReplyStatus.ERROR)
# An incoming note waits for our answer in 70; while a reply of ours is on its way it is in 61, 81 or 91; a reply
# that failed leaves it in 62, 82 or 92 (the reply is corrected and sent again).
AWAITING_ANSWER = DispatchStatus.AWAITING_APPROVAL
ANSWERING_STATUSES = (DispatchStatus.APPROVING, DispatchStatus.REJECTING, DispatchStatus.PARTIALLY_ACCEPTING)
ANSWER_ERROR_STATUSES = (DispatchStatus.APPROVAL_ERROR, DispatchStatus.REJECTION_ERROR,
                         DispatchStatus.PARTIAL_ACCEPTANCE_ERROR)


class ReplyWay(models.TextChoices):
    """Which operation of document 3, 4.5 carries the reply."""

    APPROVE_REJECT = "approve_reject", _("Approve or reject")
    PARTIAL = "partial", _("Partial acceptance")
    UBL = "ubl", _("ReceiptAdvice UBL file")
    PLATFORM = "platform", _("Read from the platform")
