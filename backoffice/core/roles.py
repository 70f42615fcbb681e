"""Roles and company scoping: who may see what, in one place."""

from django.core.exceptions import PermissionDenied

from .choices import Role
from .models import Company, Membership

# What each role may do. Managers read everything; administrators also manage companies and see the
# audit log; accounting staff work on documents.
ROLE_GROUPS = {role.value: role.label for role in Role}

# The role sets views ask for, defined once: every page of every domain uses one of these.
EVERYONE = (Role.ACCOUNTING, Role.MANAGER, Role.ADMINISTRATOR)
EDITORS = (Role.ACCOUNTING, Role.ADMINISTRATOR)  # create, send and cancel documents
MANAGERS = (Role.MANAGER, Role.ADMINISTRATOR)  # usage reports, sub-companies
ADMINISTRATORS = (Role.ADMINISTRATOR,)  # companies, members, credit


def user_roles(user) -> set[str]:
    if not user.is_authenticated:
        return set()
    if user.is_superuser:
        return {role.value for role in Role}
    cached = getattr(user, "_backoffice_roles", None)
    if cached is None:
        cached = set(user.groups.filter(name__in=list(ROLE_GROUPS)).values_list("name", flat=True))
        user._backoffice_roles = cached
    return cached


def has_role(user, *roles) -> bool:
    return bool(user_roles(user) & {str(r) for r in roles})


def companies_for(user):
    if not user.is_authenticated:
        return Company.objects.none()
    if user.is_superuser:
        return Company.objects.filter(is_active=True)
    return Company.objects.filter(is_active=True, memberships__user=user)


class RoleRequiredMixin:
    """View mixin: refuse (403) a user without one of `required_roles`."""

    required_roles: tuple = ()

    def dispatch(self, request, *args, **kwargs):
        if self.required_roles and not has_role(request.user, *self.required_roles):
            raise PermissionDenied
        return super().dispatch(request, *args, **kwargs)


class CompanyScopedMixin:
    """View mixin: every queryset is the active company's; another company's record is a 404."""

    def get_queryset(self):
        qs = super().get_queryset()
        company = getattr(self.request, "company", None)
        if company is None:
            return qs.none()
        return qs.filter(company=company)


def may_manage_user(administrator, user) -> bool:
    """Whether an administrator may change this user's roles or password in the product's pages.

    Roles and passwords belong to the user, not to one company: an administrator of A who could reset
    the password of someone who also works for B could sign in as them and read B. So only users who
    work for none but the administrator's own companies, never a superuser, and never oneself (ask
    another administrator; one's own password is changed on the password page)."""
    if not has_role(administrator, "administrator") or user.is_superuser or user.pk == administrator.pk:
        return False
    if administrator.is_superuser:
        return True
    own = Membership.objects.filter(user=administrator).values("company_id")
    return not Membership.objects.filter(user=user).exclude(company_id__in=own).exists()
