"""The shared base of every filter set: a `q` search over the model's `search_fields`."""

from datetime import datetime, time, timedelta
from functools import reduce
from operator import or_

import django_filters
from django import forms
from django.db.models import DateTimeField, Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django_filters.constants import EMPTY_VALUES

from ..exports import ExportState
from ..search import folded_search_field, search_filter


class BaseFilterSet(django_filters.FilterSet):
    """Subclasses set `search_fields` (lookups joined by OR, each as icontains unless it has a lookup; the fields
    of the model's FoldedSearchField are searched on that column, the Turkish way)."""

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
        # The fields a model's folded search column holds are searched there, the Turkish way and on its
        # index; the others (a related field, an explicit lookup) as before.
        folded = folded_search_field(queryset.model)
        covered = set(folded.sources) if folded else set()
        conditions = [search_filter(queryset.model, value)] if covered & set(self.search_fields) else []
        conditions += [Q(**{field if "__" in field else f"{field}__icontains": value})
                       for field in self.search_fields if field not in covered]
        return queryset.filter(reduce(or_, conditions))


class YesNoFilter(django_filters.BooleanFilter):
    """A boolean as All / Yes / No."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", forms.Select(choices=[("", _("All")), ("true", _("Yes")), ("false", _("No"))]))
        super().__init__(*args, **kwargs)


def _day_start(day):
    """The first moment of a local day, or None at the calendar's ends (year 1 or 9999: nothing to bound)."""
    if day.year <= 1 or day.year >= 9999:
        return None
    return timezone.make_aware(datetime.combine(day, time.min))


class _DayFilter(django_filters.DateFilter):
    """A day on a date field, or on a datetime field as a range of local moments: `field__date` would cast every
    row to a date and the column's index could not be used (a million-row list)."""

    bound = ""  # "gte": from the day's start; "lt": before the next day's start
    day_lookup = ""  # the lookup on a date field
    day_label = None

    def __init__(self, field_name, **kwargs):
        kwargs.setdefault("widget", forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
        kwargs.setdefault("lookup_expr", self.day_lookup)
        kwargs.setdefault("label", self.day_label)
        super().__init__(field_name=field_name, **kwargs)

    def filter(self, qs, value):
        if value in EMPTY_VALUES:
            return qs
        field = self.model._meta.get_field(self.field_name) if self.model else None
        if not isinstance(field, DateTimeField):
            return qs.filter(**{f"{self.field_name}__{self.lookup_expr}": value})
        if self.bound == "gte":
            start = _day_start(value)
            return qs.filter(**{f"{self.field_name}__gte": start}) if start else qs
        if value.year >= 9999:  # until the calendar's end: everything
            return qs
        end = _day_start(value + timedelta(days=1))
        return qs.filter(**{f"{self.field_name}__lt": end}) if end else qs.none()


class DateFromFilter(_DayFilter):
    """`field >= date` (a date input; the day counts in local time)."""

    bound, day_lookup, day_label = "gte", "gte", _("From")


class DateToFilter(_DayFilter):
    """`field <= date` (the whole day, in local time)."""

    bound, day_lookup, day_label = "lt", "lte", _("To")


def export_filterset(family):
    """The filter bar of a family's export list: a search over file name and id, the kind, the state."""
    kinds = ("kind",) if family.kinds else ()
    attrs = {"search_fields": ("file_name", "export_id"),
             "state": django_filters.ChoiceFilter(choices=ExportState.choices, label=_("State")),
             "Meta": type("Meta", (), {"model": family.model, "fields": ("q", *kinds, "state")})}
    if family.kinds:
        attrs["kind"] = django_filters.ChoiceFilter(choices=family.kinds.choices, label=family.kind_label)
    return type(f"{family.model.__name__}FilterSet", (BaseFilterSet,), attrs)
