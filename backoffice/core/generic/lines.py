"""What an edit page with lines declares (core.generic.views.ObjectEditView's `formsets` and `lookups`): the line
formsets, and the typeahead that finds a record as it is typed (an invoice's customer, a dispatch note's receiver).

    LineFormSet = line_formset(Invoice, InvoiceLine, LineForm, BaseLineFormSet)   # BaseLineFormSet(LineFormSetBase)

    class InvoiceEditView(ObjectEditView):                          # api: backoffice.current_accounts.api
        formsets = {"lines": LineFormSet}
        lookups = {"customer": Lookup(find=api.find_accounts, resolve=api.resolve_account,
                                      template="invoices/includes/customer.html", details=customer_details)}
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from django.core.exceptions import ValidationError
from django.forms import BaseInlineFormSet, inlineformset_factory
from django.template.response import TemplateResponse
from django.utils.translation import gettext_lazy as _
from django.views import View

from .. import codes
from ..roles import RoleRequiredMixin
from ..widgets import WIDGET_RENDERER, FixedChoices
from .registry import register_model_view

MAX_LINES = 500
UNIT_CHOICES_SHOWN = 40  # the most used units (the code list has two thousand)


class LineFormSetBase(BaseInlineFormSet):
    """A document's lines: at least one kept (not removed), else `empty_message` on the formset."""

    empty_message = _("Add at least one line.")
    default_error_messages = {**BaseInlineFormSet.default_error_messages, "too_few_forms": empty_message}

    def clean(self):
        super().clean()
        if not any(form.errors for form in self.forms) and not any(
                form.cleaned_data and not form.cleaned_data.get("DELETE") for form in self.forms):
            raise ValidationError(self.empty_message)

    def kept(self) -> list:
        """The lines the formset keeps, unsaved, in their order (a service saves them with the record)."""
        return [form.save(commit=False) for form in self.forms
                if form.cleaned_data and not form.errors and not form.cleaned_data.get("DELETE")]


def line_formset(parent, model, form, formset=LineFormSetBase, **options):
    """The inline formset of a document's lines: none extra, at least one and at most MAX_LINES, each removable,
    rendered by core's fast widget renderer. `options` change any of these (a driver list: max_num=5)."""
    return inlineformset_factory(parent, model, form=form, formset=formset, **{
        "extra": 0, "min_num": 1, "validate_min": True, "max_num": MAX_LINES, "validate_max": True,
        "can_delete": True, "renderer": WIDGET_RENDERER, **options})


@cache
def units_shown() -> FixedChoices:
    """The units a line offers, built once: the same for every line, company and language."""
    return FixedChoices(codes.choices(codes.UNIT_CODES)[:UNIT_CHOICES_SHOWN])


def unit_choices(form) -> FixedChoices:
    """The units a line form offers (its unit_code field): units_shown(), and the line's own unit where it is
    another. The Turkish names: the codes are the UN/ECE's English ones."""
    shown = units_shown()
    current = form.initial.get("unit_code") or (form.instance.unit_code if form.instance.pk else "")
    if current and all(code != current for code, _label in shown):
        shown = FixedChoices((*shown, (current, codes.label(codes.UNIT_CODES, current))))
    return shown


@dataclass(frozen=True)
class Lookup:
    """A typeahead of an edit form, answered as an htmx fragment: what the typed text finds (a datalist's options),
    the one record it names (in the context under `param`, the GET parameter's name) or why it names none
    ("error"), and what the form shows beside that record (details(record or None) -> context)."""

    find: Callable  # find(company, text) -> the records offered; only the company's
    resolve: Callable  # resolve(company, text) -> the record the text names; a ValidationError says what to type
    template: str
    param: str = "account"
    min_length: int = 2
    details: Callable | None = None

    def answer(self, company, text) -> dict:
        text = (text or "").strip()
        options, found, error = [], None, ""
        if company is not None and len(text) >= self.min_length:
            options = self.find(company, text)
            try:
                found = self.resolve(company, text)
            except ValidationError as exc:  # its text is the hint
                error = " ".join(exc.messages)
        return {"options": options, self.param: found, "error": error,
                **(self.details(found) if self.details is not None else {})}


class LookupView(RoleRequiredMixin, View):
    """The answer of one Lookup to the active company's user; registered by the edit view that declares it, with
    that view's roles."""

    lookup: Lookup = None
    model = None

    def get(self, request, *args, **kwargs):
        answer = self.lookup.answer(getattr(request, "company", None), request.GET.get(self.lookup.param))
        return TemplateResponse(request, [self.lookup.template], answer)


def register_lookups(view_class):
    """Serve each Lookup an edit view declares (its own `lookups`) as its model's view of that name (URL
    "<name>/", name "<model>_<name>"), with the edit view's roles."""
    for name, lookup in view_class.__dict__.get("lookups", {}).items():
        model = view_class.model if view_class.model is not None else getattr(view_class.queryset, "model", None)
        if model is None:
            raise TypeError(f"{view_class.__name__} declares lookups: give it its model")
        view = type(f"{view_class.__name__}{name.title()}Lookup", (LookupView,), {
            "__module__": view_class.__module__, "lookup": lookup, "model": model,
            "required_roles": view_class.required_roles})
        register_model_view(model, name, path=f"{name}/")(view)
