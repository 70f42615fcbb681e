"""A registry of the views of each model (NetBox's register_model_view), so that an app's urls.py stays one
line per model.

    # views.py
    register_model_views(Company, prefix="companies", list=CompanyListView, detail=CompanyDetailView,
                         edit=CompanyEditView)
    # any other named view: an object action, a detail tab, a child list, a page of the model's family
    @register_model_view(EventTicket, "html", path="<id:pk>/html/")
    class TicketHtmlView(...): ...
    # urls.py
    urlpatterns = [*get_model_urls("core", "company")]

URL names are "<app_label>:<model_name>_<name>": the app's urls.py sets app_name = app_label. A view's
roles are its `required_roles` (a role set of core/roles.py).
"""

from django.apps import apps
from django.urls import NoReverseMatch, path, reverse

from ..registry import registry
from ..roles import has_role
from ..text import capfirst

# action -> (route below the prefix, whether it takes a pk)
ROUTES = {
    "list": ("", False),
    "add": ("add/", False),
    "bulk": ("bulk/<slug:action>/", False),
    "detail": ("<id:pk>/", True),
    "edit": ("<id:pk>/edit/", True),
    "delete": ("<id:pk>/delete/", True),
}

# Kept in the registry's stores (core.registry), each by (app_label, model_name): "model_views" (action -> view
# class), "model_routes" (the named views beyond ROUTES: name -> route below the prefix), "model_prefixes" and
# "bulk_actions" (those another app adds to the model's list; each posts the selection to its own URL, url_name).


def _key(model):
    return model._meta.app_label, model._meta.model_name


def register_model_view(model, action, *, prefix=None, path=None):
    """Decorator: register a view class for one action of a model; `path` (below the model's prefix) for a
    named view that is not one of ROUTES, e.g. "<id:pk>/html/" or "history/"."""

    def decorator(view_class):
        if path is not None:
            registry["model_routes"].setdefault(_key(model), {})[action] = path
        register_model_views(model, prefix=prefix, **{action: view_class})
        return view_class

    return decorator


def register_view_of(model, action, base, *, path, **attrs):
    """Build the model's view class of a named action (`<Model><Action>View`, from `base` with `attrs`) and register
    it under `path`; returns the class."""
    view = type(f"{model.__name__}{action.title()}View", (base,), {"model": model, **attrs})
    return register_model_view(model, action, path=path)(view)


def _route(key, action):
    """(route below the prefix, whether it takes a pk) of a registered action."""
    if action in ROUTES:
        return ROUTES[action]
    route = registry["model_routes"].get(key, {})[action]
    return route, "<id:pk>" in route


def register_model_views(model, *, prefix=None, **views):
    """Register views by action (list, detail, edit, add, delete, bulk). `edit` also serves `add`
    unless `add` is given."""
    key, prefixes = _key(model), registry["model_prefixes"]
    unknown = set(views) - set(ROUTES) - set(registry["model_routes"].get(key, {}))
    if unknown:
        raise ValueError(f"unknown generic view action(s) (give a path): {', '.join(sorted(unknown))}")
    if "edit" in views and "add" not in views and "add" not in registry["model_views"].get(key, {}):
        views["add"] = views["edit"]
    for view_class in views.values():
        if getattr(view_class, "model", None) is None and getattr(view_class, "queryset", None) is None:
            view_class.model = model
    registry["model_views"].setdefault(key, {}).update({action: view for action, view in views.items() if view})
    if prefix is not None:  # "" puts the model's pages at the root of its app's URLs
        prefixes[key] = prefix.strip("/")
    elif key not in prefixes:
        prefixes[key] = model._meta.model_name


def register_bulk_action(model, name, bulk_action):
    """Add a bulk action to a model's list from another app (e.g. passenger lists on the passenger-ticket
    list). bulk_action.url_name is the view that receives the selected "pk" values by POST."""
    if not bulk_action.url_name:
        raise ValueError("a bulk action registered from another app needs url_name")
    registry["bulk_actions"].setdefault(_key(model), {})[name] = bulk_action


def extra_bulk_actions(model) -> dict:
    return dict(registry["bulk_actions"].get(_key(model), {}))


def get_model_urls(app_label, model_name):
    """URL patterns of every view registered for the model."""
    key = (app_label, model_name)
    views = registry["model_views"].get(key)
    if views is None:
        raise LookupError(f"no view is registered for {app_label}.{model_name}")
    prefix = registry["model_prefixes"][key]
    patterns = []
    # Named views first: "history/" must not be taken for a pk of "<id:pk>/".
    for action in [*registry["model_routes"].get(key, {}), *ROUTES]:
        view_class = views.get(action)
        if view_class is not None:
            route = _route(key, action)[0]
            patterns.append(path(f"{prefix}/{route}".replace("//", "/") if prefix else route, view_class.as_view(),
                                 name=f"{model_name}_{action}"))
    return patterns


def get_model_view(model, action):
    return registry["model_views"].get(_key(model), {}).get(action)


def user_may(user, model, action) -> bool:
    """Whether the view of this action exists and the user has one of its roles."""
    view_class = get_model_view(model, action)
    if view_class is None:
        return False
    roles = getattr(view_class, "required_roles", ())
    return not roles or has_role(user, *roles)


def model_url(model_or_instance, action, /, **kwargs):
    """URL of a registered action of a model (or of one record), or None when there is none."""
    model = model_or_instance if isinstance(model_or_instance, type) else type(model_or_instance)
    if get_model_view(model, action) is None:
        return None
    app_label, model_name = _key(model)
    if _route((app_label, model_name), action)[1]:
        kwargs.setdefault("pk", model_or_instance.pk)
    try:
        return reverse(f"{app_label}:{model_name}_{action}", kwargs=kwargs)
    except NoReverseMatch:  # registered but not (yet) in the URLconf
        return None


def target_label(target: str):
    """What a job worked on, as people read it: ("Etkinlik bileti 12", its detail URL or None), from the
    internal "app_label.model:pk[+...]" (core.sync.record_target, selection_target; no query: a list of jobs
    stays one query)."""
    label, _sep, rest = (target or "").partition(":")
    pk = rest.split("+", 1)[0]
    try:
        model = apps.get_model(label) if label else None
    except (LookupError, ValueError):
        model = None
    if model is None:
        return target, None
    if not pk.isdigit():
        return capfirst(model._meta.verbose_name), None
    return f"{capfirst(model._meta.verbose_name)} {pk}", model_url(model, "detail", pk=int(pk))
