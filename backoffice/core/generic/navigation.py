"""The side menu: one entry per domain. An entry whose URL does not exist yet is shown greyed with a
"coming soon" badge, so a new app lights its entry up just by adding its URLs."""

from dataclasses import dataclass, field

from django.urls import NoReverseMatch, reverse
from django.utils.translation import gettext_lazy as _

from ..choices import Role
from ..roles import has_role, user_roles


@dataclass(frozen=True)
class MenuItem:
    label: str
    url_name: str
    icon: str  # a Bootstrap Icons name
    roles: tuple = ()


@dataclass(frozen=True)
class Tab:
    """One tab of a section's pages (generic.sections); a tab whose URL does not exist yet is left out."""

    name: str
    label: str
    icon: str
    url_name: str


@dataclass(frozen=True)
class MenuGroup:
    label: str | None
    items: tuple
    roles: tuple = field(default=())
    superuser: bool = False


MENU = (
    MenuGroup(None, (
        MenuItem(_("Dashboard"), "core:dashboard", "speedometer2"),
    )),
    MenuGroup(_("Documents"), (
        MenuItem(_("Tickets"), "tickets:ticket_list", "ticket-perforated"),
        MenuItem(_("Passenger lists"), "passenger_lists:passengerlist_list", "people"),
        MenuItem(_("Invoices"), "invoices:invoice_list", "receipt"),
        MenuItem(_("Dispatch notes"), "dispatch:dispatchnote_list", "truck"),
    )),
    MenuGroup(_("Accounting"), (
        MenuItem(_("Current accounts"), "current_accounts:currentaccount_list", "person-vcard"),
        MenuItem(_("Chart of accounts"), "chart_of_accounts:account_list", "diagram-3"),
        MenuItem(_("E-ledger"), "ledger:period_list", "journal-bookmark"),
    )),
    MenuGroup(_("Company"), (
        MenuItem(_("Sub-companies & usage"), "subcompanies:subcompany_list", "buildings",
                 roles=(Role.MANAGER, Role.ADMINISTRATOR)),
        MenuItem(_("Background work"), "core:jobrun_list", "hourglass-split"),
    )),
    MenuGroup(_("Administration"), (
        MenuItem(_("Companies"), "core:company_list", "building-gear"),
        MenuItem(_("Members"), "core:membership_list", "person-check"),
        MenuItem(_("Document series"), "core:series", "123"),
        MenuItem(_("Remote-call audit"), "core:remotecall_list", "arrow-left-right"),
    ), roles=(Role.ADMINISTRATOR,)),
    # The Django admin and the RQ dashboard see every company: superusers (the operators) only.
    MenuGroup(_("Operations"), (
        MenuItem(_("RQ dashboard"), "django_rq:home", "cpu"),
        MenuItem(_("Django admin"), "admin:index", "gear"),
    ), superuser=True),
)


def _url(name):
    try:
        return reverse(name)
    except NoReverseMatch:
        return None


def menu_for(request):
    """The groups and entries this user sees, each entry with its URL (None: coming soon) and state."""
    user = request.user
    if not user_roles(user):  # without a role every page is refused: show no menu at all
        return []
    groups = []
    for group in MENU:
        if (group.roles and not has_role(user, *group.roles)) or (group.superuser and not user.is_superuser):
            continue
        entries = []
        for item in group.items:
            if item.roles and not has_role(user, *item.roles):
                continue
            url = _url(item.url_name)
            active = bool(url) and (request.path == url if url == "/" else request.path.startswith(url))
            entries.append({"label": item.label, "url": url, "icon": item.icon, "active": active})
        if entries:
            groups.append({"label": group.label, "entries": entries})
    return groups


# The tabs above the pages of each section, by section name (a view's SectionMixin.section) and CSS class.
SECTIONS = {
    "tickets": ("tickets-tabs", (
        Tab("event", _("Event tickets"), "ticket-perforated", "tickets:eventticket_list"),
        Tab("passenger", _("Passenger tickets"), "bus-front", "tickets:passengerticket_list"),
        Tab("exports", _("Exports"), "file-earmark-zip", "tickets:ticketexport_list"),
        Tab("event_report", _("Event report"), "calendar3", "tickets:eventticketreportitem_list"),
        Tab("passenger_report", _("Passenger report"), "calendar3", "tickets:passengerticketreportitem_list"),
    )),
    "passenger_lists": ("passenger-lists-tabs", (
        Tab("lists", _("Passenger lists"), "people", "passenger_lists:passengerlist_list"),
        Tab("tickets", _("Passenger tickets"), "bus-front", "tickets:passengerticket_list"),
        Tab("exports", _("Exports"), "file-earmark-zip", "passenger_lists:passengerlistexport_list"),
        Tab("report", _("Report"), "calendar3", "passenger_lists:passengerlistreportitem_list"),
    )),
    "accounting": ("accounting-tabs", (
        Tab("current_accounts", _("Current accounts"), "person-vcard", "current_accounts:currentaccount_list"),
        Tab("chart", _("Chart of accounts"), "diagram-3", "chart_of_accounts:account_list"),
        Tab("imports", _("Import from Excel"), "file-earmark-spreadsheet", "current_accounts:currentaccount_import"),
    )),
    "invoices": ("invoices-tabs", (
        Tab("invoices", _("Invoices"), "receipt", "invoices:invoice_list"),
        Tab("new", _("New invoice"), "plus-lg", "invoices:invoice_add"),
        Tab("bundles", _("PDF downloads"), "file-earmark-zip", "invoices:pdfbundle_list"),
        Tab("taxpayers", _("Registered users"), "person-lines-fill", "invoices:taxpayer_list"),
    )),
    "ledger": ("ledger-tabs", (
        Tab("periods", _("Periods"), "journal-bookmark", "ledger:period_list"),
        Tab("journals", _("Journals"), "file-earmark-text", "ledger:journal_list"),
        Tab("new", _("New journal"), "upload", "ledger:journal_add"),
    )),
    "dispatch": ("dispatch-tabs", (
        Tab("notes", _("Dispatch notes"), "truck", "dispatch:dispatchnote_list"),
        Tab("new", _("New dispatch note"), "plus-lg", "dispatch:dispatchnote_add"),
        Tab("upload", _("Upload UBL"), "upload", "dispatch:dispatchnote_upload"),
        Tab("incoming", _("Incoming notes"), "inbox", "dispatch_inbox:incomingnote_list"),
        Tab("replies", _("Our replies"), "reply", "dispatch_inbox:dispatchreply_list"),
        Tab("receipts", _("Replies to our notes"), "envelope-check", "dispatch:receivedreply_list"),
        Tab("exports", _("Exports"), "file-earmark-zip", "dispatch:dispatchexport_list"),
        Tab("taxpayers", _("Dispatch-note users"), "person-lines-fill", "dispatch:dispatchtaxpayer_list"),
    )),
    "subcompanies": ("subcompanies-tabs", (
        Tab("dashboard", _("Usage dashboard"), "bar-chart-line", "subcompanies:usage_dashboard"),
        Tab("subcompanies", _("Sub-companies"), "buildings", "subcompanies:subcompany_list"),
        Tab("requests", _("Credit and product requests"), "send", "subcompanies:subcompanyoperation_list"),
        Tab("reports", _("Usage reports"), "clock-history", "subcompanies:usagesnapshot_list"),
    )),
}
