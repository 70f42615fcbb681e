"""What the copy and print buttons of a dispatch note need (templates/dispatch/includes/copy_actions.html): the copy
URL when the user may use it, why it cannot be used now, a one-time key (core.submissions), and the PDF."""

from django import template

from backoffice.core.generic.registry import model_url, user_may
from backoffice.core.submissions import SubmissionGuard

from .. import copies
from ..models import DispatchNote

register = template.Library()


@register.simple_tag(takes_context=True)
def note_copy_actions(context, note):
    request = context["request"]
    found = {"print_url": model_url(note, "document", kind="pdf") if note.remote_id else ""}
    if user_may(request.user, DispatchNote, "copy"):
        found.update(copy_url=model_url(note, "copy"), copy_refusal=copies.copy_refusal(note),
                     copy_guard=SubmissionGuard(request).fields())
    return found
