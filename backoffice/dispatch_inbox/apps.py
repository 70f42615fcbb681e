from django.utils.translation import gettext_lazy as _

from backoffice.core import domains


class DispatchInboxConfig(domains.DomainConfig):
    """The receiving side of dispatch notes: incoming notes and our replies to them (dispatch is the sending side;
    this app uses it through dispatch.api only)."""

    name = "backoffice.dispatch_inbox"
    verbose_name = _("Incoming dispatch notes")
    declares = ('families', 'mirror', 'polls', 'replies', 'watch')
    uses = ('dispatch',)
