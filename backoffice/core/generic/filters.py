"""The shared base of every filter set: a `q` search over the model's `search_fields`."""

from functools import reduce
from operator import or_

import django_filters
from django import forms
from django.db.models import Q
from django.utils.translation import gettext_lazy as _


class BaseFilterSet(django_filters.FilterSet):
    """Subclasses set `search_fields` (lookups joined by OR, each as icontains unless it has a lookup)."""

    search_fields: tuple = ()

    q = django_filters.CharFilter(
        method="search", label=_("Search"),
        widget=forms.TextInput(attrs={"type": "search", "placeholder": _("Search…"), "autocomplete": "off"}),
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # "All" instead of django-filter's "---------" for an unset choice.
        for filter_ in self.filters.values():
            if isinstance(filter_, django_filters.ChoiceFilter):
                filter_.extra["empty_label"] = _("All")

    def search(self, queryset, name, value):
        value = value.strip()
        if not value or not self.search_fields:
            return queryset
        lookups = [field if "__" in field else f"{field}__icontains" for field in self.search_fields]
        return queryset.filter(reduce(or_, (Q(**{lookup: value}) for lookup in lookups)))


class YesNoFilter(django_filters.BooleanFilter):
    """A boolean as All / Yes / No."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", forms.Select(choices=[("", _("All")), ("true", _("Yes")), ("false", _("No"))]))
        super().__init__(*args, **kwargs)


class DateFromFilter(django_filters.DateFilter):
    """`field >= date` (a date input; the day counts in local time)."""

    def __init__(self, field_name, **kwargs):
        kwargs.setdefault("lookup_expr", "date__gte")
        kwargs.setdefault("widget", forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
        kwargs.setdefault("label", _("From"))
        super().__init__(field_name=field_name, **kwargs)


class DateToFilter(django_filters.DateFilter):
    """`field <= date`."""

    def __init__(self, field_name, **kwargs):
        kwargs.setdefault("lookup_expr", "date__lte")
        kwargs.setdefault("widget", forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
        kwargs.setdefault("label", _("To"))
        super().__init__(field_name=field_name, **kwargs)


def export_filterset(family):
    """The filter bar of a family's export list: a search over file name and id, the kind, the state."""
    from ..exports import ExportState

    kinds = ("kind",) if family.kinds else ()
    attrs = {"search_fields": ("file_name", "export_id"),
             "state": django_filters.ChoiceFilter(choices=ExportState.choices, label=_("State")),
             "Meta": type("Meta", (), {"model": family.model, "fields": ("q", *kinds, "state")})}
    if family.kinds:
        attrs["kind"] = django_filters.ChoiceFilter(choices=family.kinds.choices, label=family.kind_label)
    return type(f"{family.model.__name__}FilterSet", (BaseFilterSet,), attrs)
