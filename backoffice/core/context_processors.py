from django.conf import settings

from .choices import Role
from .roles import companies_for, user_roles


def backoffice(request):
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"active_company": None}
    roles = user_roles(user)
    if not roles:  # a user without a role sees no company, not even its name (core.middleware)
        return {"active_company": None, "user_roles": roles, "LANGUAGES": settings.LANGUAGES}
    return {
        "active_company": getattr(request, "company", None),
        "user_companies": companies_for(user).only("pk", "name"),
        "user_roles": roles,
        "is_administrator": Role.ADMINISTRATOR in roles,
        "is_manager": bool(roles & {Role.MANAGER, Role.ADMINISTRATOR}),
        "is_accounting": bool(roles & {Role.ACCOUNTING, Role.ADMINISTRATOR}),
        "LANGUAGES": settings.LANGUAGES,
    }
