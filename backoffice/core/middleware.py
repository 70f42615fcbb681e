import time

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from .roles import companies_for, user_roles

SESSION_KEY = "active_company_id"


def _active_company(request):
    """The company the user acts for: the one chosen in the switcher if still allowed, else the first."""
    companies = companies_for(request.user)
    chosen = request.session.get(SESSION_KEY)
    company = companies.filter(pk=chosen).first() if chosen else None
    if company is None:
        company = companies.order_by("name", "pk").first()
        if company is not None:
            request.session[SESSION_KEY] = company.pk
    return company


class ActiveCompanyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # One query per request; plain attribute so that `request.company is None` means "no company".
        request.company = _active_company(request) if request.user.is_authenticated else None
        return self.get_response(request)


# --- sessions end after idle time ------------------------------------------------------------------
LAST_SEEN_KEY = "last_seen"
# Headers of requests that the page makes by itself (htmx polling, static/js/backoffice.js marks them):
# a tab left open on a refreshing list is not a user at work.
BACKGROUND_HEADER = "X-Background-Refresh"
# Write the time of activity at most this often (each write saves the session row).
SEEN_RESOLUTION_SECONDS = 60


class IdleSessionMiddleware:
    """Sign a user out after settings.SESSION_IDLE_SECONDS without a request of their own."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.user.is_authenticated:
            now = int(time.time())
            last = request.session.get(LAST_SEEN_KEY)
            if last is not None and now - int(last) > settings.SESSION_IDLE_SECONDS:
                logout(request)  # LoginRequiredMiddleware then sends the visitor to sign in
                messages.info(request, _("You were signed out after %(hours)s without activity. Sign in again.")
                              % {"hours": _idle_text()})
            elif request.headers.get(BACKGROUND_HEADER) != "1" and (
                    last is None or now - int(last) >= SEEN_RESOLUTION_SECONDS):
                request.session[LAST_SEEN_KEY] = now
        return self.get_response(request)


def _idle_text() -> str:
    seconds = settings.SESSION_IDLE_SECONDS
    if seconds % 3600 == 0:
        hours = seconds // 3600
        return ngettext("%(n)d hour", "%(n)d hours", hours) % {"n": hours}
    minutes = max(1, seconds // 60)
    return ngettext("%(n)d minute", "%(n)d minutes", minutes) % {"n": minutes}


# --- every page needs a role -------------------------------------------------------------------------


def role_not_required(view):
    """Mark a view that a signed-in user without any role may open (signing out)."""
    view.role_not_required = True
    return view


class RoleRequiredMiddleware:
    """A signed-in user without any of the three roles sees nothing but the refusal page: no dashboard,
    no job names, no company details. Public views (login_not_required) and sign-out stay open."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if not request.user.is_authenticated:
            return None
        if not getattr(view_func, "login_required", True) or getattr(view_func, "role_not_required", False):
            return None
        if user_roles(request.user):
            return None
        return render(request, "errors/403.html", {"no_role": True}, status=403)
