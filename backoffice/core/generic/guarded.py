"""The one-time key and opened-for company of every form that creates something (core.submissions), and
the steps such a form goes through (guarded_submit)."""

import uuid

from django.contrib import messages
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect

from ..models import FormSubmission
from ..submissions import AlreadySubmitted, SubmissionGuard, replay_message, submitted_object
from .registry import model_url


class SubmissionGuardMixin:
    """The one-time key and opened-for company of a form that creates something (core.submissions), for any
    view with a render(context) and a company-scoped get_queryset. `guarded(obj)` says which forms carry it."""

    def guarded(self, obj) -> bool:
        return True

    def guard_for(self, obj):
        """The submission guard of this request when the form creates a record, else None."""
        if obj is None or not self.guarded(obj):
            return None
        if not hasattr(self, "_guard"):
            self._guard = SubmissionGuard(self.request)
        return self._guard

    def replayed(self, submission):
        """The answer to a second submission of a key: the record it created, nothing new."""
        # Someone else's key (only ever by design, never by chance) shows nothing of theirs.
        obj = submitted_object(submission) if submission.user_id == self.request.user.pk else None
        messages.info(self.request, replay_message(submission, obj))
        visible = obj is not None and getattr(obj, "company_id", None) == getattr(self.request.company, "pk", None)
        return redirect((model_url(obj, "detail") if visible else None) or model_url(self.get_model(), "list") or "/")

    def guarded_save(self, guard, form, save, note=""):
        """save() in one transaction with the key's claim; returns (obj, None) or (None, response)."""
        if guard is None:
            with transaction.atomic():
                obj = save()
                if note:  # an edit's reason (no key to claim) is kept the same way, with the record
                    FormSubmission.objects.create(key=uuid.uuid4(), user=self.request.user, company=obj.company,
                                                  target=f"{obj._meta.label_lower}:{obj.pk}", note=note[:1000])
                return obj, None
        try:
            with transaction.atomic():
                guard.claim(note)
                obj = save()
                guard.done(obj)
        except AlreadySubmitted as exc:
            return None, self.replayed(exc.submission)
        return obj, None

    def check_guard(self, guard, form):
        """Before validation: a replay is answered at once; a refusal is put on the form (or shown as a
        message when there is no form). Returns a response, or None."""
        if guard is None:
            return None
        earlier = guard.earlier()
        if earlier is not None:
            return self.replayed(earlier)
        refusal = guard.refusal()
        if refusal and form is not None:
            form.add_error(None, refusal)
        elif refusal:
            messages.error(self.request, refusal)
            return False
        return None

    def guarded_submit(self, guard, form, save, *, invalid, valid=None, note=None, refused=()):
        """The steps of every form that creates something: a replay answered at once, a refusal of the
        key put on the form, validation (valid(), else form.is_valid()), then save() with the key's claim.
        An exception of `refused` raised by save() goes on the form (its `field` when it has one).
        Returns (record, None), or (None, the response to send: invalid() or the replay)."""
        answered = self.check_guard(guard, form)
        if answered is False:
            return None, invalid()
        if answered is not None:
            return None, answered
        if not (valid() if valid is not None else form.is_valid()):
            return None, invalid()
        try:
            return self.guarded_save(guard, form, save, note=note() if note else "")
        except refused as exc:
            if str(exc) and form is not None:
                field = getattr(exc, "field", None)  # a field this form does not have: the form's own error
                form.add_error(field if field in form.fields else None, str(exc))
            elif str(exc):
                messages.error(self.request, str(exc))
            return None, invalid()

    def guard_target(self, context):
        """What the rendered form creates something about (None: no key on this page)."""
        return context.get("object")

    def render(self, context, status=200):
        guard = self.guard_for(self.guard_target(context))
        if guard is not None:
            context = {**context, "guard": guard.fields()}
        return super().render(context, status)


class GuardedButtonView(SubmissionGuardMixin):
    """A detail page's POST button that makes something new of a record (its one-time key on the button):
    a second click, Back or a second tab shows what the first made. Subclasses give perform(record) and
    done_message(record, new); an exception of `refused` is shown as a message."""

    refused: tuple = ()

    def post(self, request, pk):
        record = get_object_or_404(self.get_queryset(), pk=pk)
        new, answered = self.guarded_submit(self.guard_for(record), None, lambda: self.perform(record),
                                            valid=lambda: True, refused=self.refused,
                                            invalid=lambda: redirect(model_url(record, "detail")))
        if answered is not None:
            return answered
        messages.success(request, self.done_message(record, new))
        return redirect(model_url(new, "detail"))
