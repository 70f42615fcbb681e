from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST
from django.views.generic import TemplateView

from .health import health_report
from .middleware import SESSION_KEY
from .roles import companies_for


class DashboardView(TemplateView):
    template_name = "core/dashboard.html"


@require_POST
def switch_company(request):
    company = get_object_or_404(companies_for(request.user), pk=request.POST.get("company"))
    request.session[SESSION_KEY] = company.pk
    messages.success(request, _("You are now working for %(company)s.") % {"company": company.name})
    target = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        target = "/"
    return redirect(target)


@login_not_required
@never_cache
def health(request):
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)


def permission_denied(request, exception=None):
    return render(request, "errors/403.html", status=403)


def page_not_found(request, exception=None):
    return render(request, "errors/404.html", status=404)


def server_error(request):
    return render(request, "errors/500.html", status=500)
