import django_filters
from django.utils.translation import gettext_lazy as _

from backoffice.core.choices import SyncState
from backoffice.core.generic import BaseFilterSet, DateFromFilter, DateToFilter, YesNoFilter
from backoffice.core.fields import LocalizedDecimalField

from . import answers
from .choices import InvoiceStatus, InvoiceType, MatchState, PostingStatus, Profile, RecordType
from .models import Invoice, Taxpayer

DIRECTIONS = (("out", _("Outgoing")), ("in", _("Incoming")))


class AmountFilter(django_filters.NumberFilter):
    field_class = LocalizedDecimalField  # typed the Turkish way: 1.250,75


class InvoiceFilterSet(BaseFilterSet):
    search_fields = ("invoice_number", "target_title", "target_vkn_tckn", "description")
    direction = django_filters.ChoiceFilter(choices=DIRECTIONS, label=_("Direction"), method="filter_direction")
    record_type = django_filters.ChoiceFilter(choices=RecordType.choices, label=_("Invoice kind"))
    profile = django_filters.ChoiceFilter(choices=Profile.choices, label=_("Profile"))
    invoice_type = django_filters.ChoiceFilter(choices=InvoiceType.choices, label=_("Invoice type"))
    remote_status = django_filters.ChoiceFilter(choices=InvoiceStatus.choices, label=_("Status"))
    record_status = django_filters.ChoiceFilter(choices=PostingStatus.choices, label=_("Posting"))
    sync_state = django_filters.ChoiceFilter(choices=SyncState.choices, label=_("Sync state"))
    account = django_filters.CharFilter(field_name="target_vkn_tckn", label=_("Tax or national id"))
    date_from = DateFromFilter("issue_date", lookup_expr="gte")  # a date field: no __date
    date_to = DateToFilter("issue_date", lookup_expr="lte")
    amount_min = AmountFilter(field_name="payable_amount", lookup_expr="gte", label=_("Payable from"))
    amount_max = AmountFilter(field_name="payable_amount", lookup_expr="lte", label=_("Payable up to"))
    # the dashboard's "not on the platform yet": invoices the platform has given no status
    on_platform = YesNoFilter(method="filter_on_platform", label=_("On the platform"))
    # issue 33: incoming commercial invoices by their 8 days to answer (index invoices_to_answer), and those whose
    # lines differ from the goods we accepted (index invoices_co_match)
    answer_due = django_filters.ChoiceFilter(choices=answers.DUE_CHOICES, label=_("Answer"),
                                             method="filter_answer_due")
    match_state = django_filters.ChoiceFilter(choices=MatchState.choices, label=_("Against the goods"),
                                              method="filter_match_state")

    class Meta:
        model = Invoice
        fields = ("q", "direction", "record_type", "profile", "invoice_type", "remote_status", "record_status",
                  "sync_state", "account", "date_from", "date_to", "amount_min", "amount_max", "on_platform",
                  "answer_due", "match_state")

    def filter_direction(self, queryset, name, value):
        return queryset.filter(is_send=(value == "out")) if value else queryset

    def filter_on_platform(self, queryset, name, value):
        return queryset if value is None else queryset.filter(remote_status__isnull=not value)

    def filter_answer_due(self, queryset, name, value):
        return answers.due(queryset, value)

    def filter_match_state(self, queryset, name, value):
        return queryset.filter(is_send=False, match_state=value) if value else queryset


class TaxpayerFilterSet(BaseFilterSet):
    search_fields = ("identifier", "title", "alias")

    class Meta:
        model = Taxpayer
        fields = ("q",)
