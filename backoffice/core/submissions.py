"""One-time submission keys and the company a form was opened for: how a form that creates a document stays
safe against Back-and-resubmit, a reload, a double click and a company switched in another tab.

    guard = SubmissionGuard(request)               # GET: a new key; POST: the key and company sent back
    guard.refusal()                                 # a message when the form may not be saved at all
    guard.earlier()                                 # the submission that already used this key, if any
    with transaction.atomic():
        guard.claim()                               # the key, taken in the same transaction as the document
        document = services.create(...)
        guard.done(document)

The key is taken with a unique row, so two submissions of one key (two tabs, a double click that slipped
through) never both create: the second waits for the first one's transaction and finds its key taken.
"""

import uuid

from django.apps import apps
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from .models import Company, FormSubmission
from .security import parse_id

KEY_FIELD = "submission_key"
COMPANY_FIELD = "opened_for"


class AlreadySubmitted(Exception):
    """This key was used before; `submission` is the earlier one."""

    def __init__(self, submission):
        self.submission = submission
        super().__init__(str(submission.key))


def _parse_key(value):
    try:
        return uuid.UUID(str(value or ""))
    except ValueError:
        return None


class SubmissionGuard:
    def __init__(self, request):
        self.request = request
        self.company = getattr(request, "company", None)
        if request.method == "POST":
            self.key = _parse_key(request.POST.get(KEY_FIELD))
            self.opened_for = parse_id(request.POST.get(COMPANY_FIELD))
        else:
            self.key = uuid.uuid4()
            self.opened_for = self.company.pk if self.company else None
        self._submission = None

    # --- what the template renders (generic/includes/submission_guard.html) ---------------------------
    def fields(self) -> dict:
        """The hidden fields to send back. After a refusal for a switched company the form is re-shown for
        the company active now, so sending it again means "for this company": the user was told which."""
        return {KEY_FIELD: self.key or uuid.uuid4(), COMPANY_FIELD: self.company.pk if self.company else ""}

    # --- checks --------------------------------------------------------------------------------------
    def refusal(self) -> str | None:
        """Why this submission may not be saved (nothing is saved), or None."""
        if self.key is None or self.opened_for is None:
            return _("This form is out of date (it was opened on an older page). Nothing was saved; check the "
                     "data and send it again.")
        if FormSubmission.objects.filter(key=self.key).exclude(user=self.request.user).exists():
            return _("This form is out of date. Nothing was saved; open the form again.")
        if self.company is None or self.opened_for != self.company.pk:
            # Named only when the user works for it: a typed opened_for never reveals another tenant's name.
            opened = (Company.objects.filter(pk=self.opened_for, memberships__user=self.request.user)
                      .values_list("name", flat=True).first())
            return _("This form was opened for %(opened)s, but the active company is now %(active)s (it was "
                     "switched in another tab). Nothing was saved. Check the data: sending the form again saves "
                     "it for %(active)s.") % {
                "opened": opened or _("another company"),
                "active": self.company.name if self.company else _("no company"),
            }
        return None

    def earlier(self):
        """The earlier submission of this key by this user, if the form was sent before."""
        if self.key is None:
            return None
        return FormSubmission.objects.filter(key=self.key, user=self.request.user).select_related("company").first()

    def claim(self, note=""):
        """Take the key inside the caller's transaction; raises AlreadySubmitted when it is taken."""
        try:
            with transaction.atomic():
                self._submission = FormSubmission.objects.create(
                    key=self.key, user=self.request.user, company=self.company, note=note[:1000])
        except IntegrityError:
            earlier = FormSubmission.objects.filter(key=self.key).select_related("company").first()
            if earlier is None:
                raise
            raise AlreadySubmitted(earlier) from None
        return self._submission

    def done(self, obj):
        """Record what the claimed key created."""
        self._submission.target = f"{obj._meta.label_lower}:{obj.pk}"
        self._submission.save(update_fields=["target"])


def submitted_object(submission):
    """The record an earlier submission created, or None (deleted since, or never finished)."""
    label, _sep, pk = (submission.target or "").partition(":")
    if not label or not pk.isdigit():
        return None
    try:
        model = apps.get_model(label)
    except (LookupError, ValueError):
        return None
    return model._default_manager.filter(pk=int(pk)).first()


def replay_message(submission, obj) -> str:
    when = timezone.localtime(submission.created_at).strftime("%d.%m.%Y %H:%M")
    if obj is None:
        return _("This form was already sent at %(when)s; nothing new was created.") % {"when": when}
    return _("This form was already sent at %(when)s and created %(name)s “%(object)s” in %(company)s; nothing new "
             "was created.") % {"when": when, "name": obj._meta.verbose_name, "object": obj,
                                 "company": submission.company.name}


def notes_for(obj):
    """The notes (override reasons) given when `obj` was created through a guarded form."""
    return list(FormSubmission.objects.filter(target=f"{obj._meta.label_lower}:{obj.pk}").exclude(note="")
                .select_related("user").order_by("created_at"))
