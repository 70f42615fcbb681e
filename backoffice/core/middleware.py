from .roles import companies_for

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
