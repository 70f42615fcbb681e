"""Template helpers of the UI shell: the side menu, Bootstrap form fields, model URLs, badges."""

import re
from decimal import Decimal, InvalidOperation

from django import forms, template
from django.forms.boundfield import BoundField
from django.template.defaultfilters import floatformat
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

from ..generic.navigation import menu_for
from ..generic.registry import model_url, target_label, user_may
from ..generic.text import capfirst
from ..widgets import (ID_HOLE, NAME_HOLE, VALUE_HOLE, fill_value, page_options, render_widget, text,
                       widget_with_holes)

register = template.Library()


@register.inclusion_tag("includes/nav_menu.html", takes_context=True)
def nav_menu(context):
    request = context["request"]
    return {"groups": menu_for(request) if request.user.is_authenticated else []}


def _widget_class(widget):
    if isinstance(widget, (forms.CheckboxInput, forms.RadioSelect, forms.CheckboxSelectMultiple)):
        return "form-check-input"
    if isinstance(widget, (forms.Select, forms.SelectMultiple)):
        return "form-select"
    return "form-control"


def _bs_attrs(bound_field, size=""):
    """The Bootstrap classes of a field's widget, and its invalid or help marks."""
    widget = bound_field.field.widget
    classes = [_widget_class(widget)]
    if size and classes[0] != "form-check-input":
        classes.append(f"{classes[0]}-{size}")
    errors = bound_field.errors
    if errors:
        classes.append("is-invalid")
    existing = widget.attrs.get("class", "")
    attrs = {"class": " ".join(filter(None, [existing, *classes]))}
    if errors:
        attrs["aria-invalid"] = "true"
        attrs["aria-describedby"] = f"{bound_field.auto_id}_errors"
    elif bound_field.help_text:
        attrs["aria-describedby"] = f"{bound_field.auto_id}_help"
    return attrs


@register.filter
def bs_widget(bound_field, size=""):
    """Render a form field's widget with Bootstrap classes, marked invalid when it has errors (core.widgets writes
    Django's plain widgets in Python)."""
    return render_widget(bound_field, _bs_attrs(bound_field, size))


@register.filter
def is_checkbox(bound_field):
    return isinstance(bound_field.field.widget, forms.CheckboxInput)


@register.filter
def is_checkbox_list(bound_field):
    return isinstance(bound_field.field.widget, forms.CheckboxSelectMultiple)


@register.filter
def is_radio(bound_field):
    widget = bound_field.field.widget  # Django's CheckboxSelectMultiple is a RadioSelect: not one of these
    return isinstance(widget, forms.RadioSelect) and not isinstance(widget, forms.CheckboxSelectMultiple)


FORM_FIELD_TEMPLATE = "generic/includes/form_field.html"


def _laid_out_here(bound_field) -> bool:
    """Whether form_field writes the field itself: all but the radio and checkbox lists (the template's loops)."""
    return not (is_radio(bound_field) or is_checkbox_list(bound_field))


def _field_html(checkbox, required, label_for, label, widget, auto_id, errors, help_text) -> str:
    """generic/includes/form_field.html's checkbox and plain branches; label_for, label, widget and auto_id
    written already."""
    error_div = help_div = ""
    if errors:
        shown = "<br>".join(text(error) for error in errors)
        error_div = f'<div class="invalid-feedback{" d-block" if checkbox else ""}" id="{auto_id}_errors">{shown}</div>'
    if help_text:
        help_div = f'<div class="form-text" id="{auto_id}_help">{text(help_text)}</div>'
    if checkbox:
        return (f'\n<div class="mb-3 form-check">\n  {widget}\n  <label class="form-check-label" for="{label_for}">'
                f"{label}</label>\n  {error_div}\n  {help_div}\n</div>\n\n")
    return (f'\n<div class="mb-3">\n  <label class="form-label{" required" if required else ""}" for="{label_for}">'
            f"{label}</label>\n  {widget}\n  {error_div}\n  {help_div}\n</div>\n\n")


_PLANS = object()  # where a page's field plans are kept among its options
_HOLES = {NAME_HOLE: "{0}", ID_HOLE: "{1}", VALUE_HOLE: "{2}"}
HOLES = re.compile("(" + "|".join(map(re.escape, _HOLES)) + ")")


class _FieldPlan:
    """One field of a formset's line written once for the page, with holes for the name, the id and the value: the
    other lines' same field, when all that shapes its HTML is the same (checked by fits()) and it has no errors,
    only fill them. A line's field is a hundred lines' field: written whole each time it was most of the page."""

    __slots__ = ("kind", "pattern", "widget_type", "template_name", "input_type", "widget_attrs", "choices",
                 "required", "disabled", "localize", "label", "help_text", "use_required_attribute", "renderer_type")

    @classmethod
    def make(cls, bound_field, size):
        field, form = bound_field.field, bound_field.form
        widget = field.widget
        # The plain branch only (not hidden, a checkbox or a list of them: _holed_kind knows no radio list).
        if widget.is_hidden or is_checkbox(bound_field) or bound_field.id_for_label != bound_field.auto_id:
            return None
        holed = widget_with_holes(bound_field, _bs_attrs(bound_field, size))
        if holed is None:
            return None
        plan = cls()
        written, plan.kind = holed
        html = _field_html(False, field.required, ID_HOLE, text(bound_field.label), written, ID_HOLE, (),
                           bound_field.help_text)
        if html.count(NAME_HOLE) != 1 or html.count(VALUE_HOLE) != 1:
            return None  # a label or help that looks like a hole: written whole
        # A format string: the holes its fields, braces written doubled.
        plan.pattern = "".join(_HOLES.get(piece) or piece.replace("{", "{{").replace("}", "}}")
                               for piece in HOLES.split(html))
        plan.widget_type, plan.template_name = type(widget), widget.template_name
        plan.input_type, plan.choices = getattr(widget, "input_type", None), getattr(widget, "choices", None)
        plan.widget_attrs = dict(widget.attrs)
        plan.required, plan.disabled, plan.localize = field.required, field.disabled, field.localize
        plan.label, plan.help_text = field.label, field.help_text
        plan.use_required_attribute, plan.renderer_type = form.use_required_attribute, type(form.renderer)
        return plan

    def fits(self, bound_field) -> bool:
        field, form = bound_field.field, bound_field.form
        widget = field.widget
        return (type(widget) is self.widget_type and field.label is self.label and field.help_text is self.help_text
                and field.required == self.required and field.disabled == self.disabled
                and field.localize == self.localize and widget.template_name == self.template_name
                and getattr(widget, "input_type", None) == self.input_type
                and getattr(widget, "choices", None) is self.choices and widget.attrs == self.widget_attrs
                and form.use_required_attribute == self.use_required_attribute
                and type(form.renderer) is self.renderer_type and type(bound_field) is BoundField
                and not form.errors.get(bound_field.name))

    def fill(self, bound_field, auto_id, options, language) -> str:
        return self.pattern.format(text(bound_field.html_name), text(auto_id),
                                   fill_value(self.kind, bound_field, options, language))


def _planned(bound_field, size, options):
    """The field written from its page's plan (made by the first line that has it), or None: written whole. Only a
    prefixed form's (a formset's line): a form of its own is written once."""
    if options is None or bound_field.form.prefix is None:
        return None
    auto_id = bound_field.auto_id
    if not auto_id:
        return None
    try:
        plans = options[_PLANS]
    except KeyError:
        plans = options[_PLANS] = {}
    language = get_language()
    key = (type(bound_field.form), bound_field.name, size, language)
    plan = plans.get(key)
    if plan is None:
        if bound_field.errors:
            return None
        plan = plans[key] = _FieldPlan.make(bound_field, size) or False  # False: never planned
    return plan.fill(bound_field, auto_id, options, language) if plan and plan.fits(bound_field) else None


@register.simple_tag(takes_context=True)
def form_field(context, bound_field, size=""):
    """A field with its label, errors and help, as generic/includes/form_field.html lays it out. Its hidden,
    checkbox and plain branches are written here (a template per field costs: an invoice's lines have a hundred
    fields), a line's plain field from its page's plan (_FieldPlan), the radio and checkbox lists by the template;
    tests/core/test_fast_widgets.py holds them alike."""
    options = page_options(context.get("request"))
    if (planned := _planned(bound_field, size, options)) is not None:  # a line's field, as the lines before it
        return mark_safe(planned)
    if not _laid_out_here(bound_field):
        return context.template.engine.get_template(FORM_FIELD_TEMPLATE).render(
            context.new({"field": bound_field, "size": size}))
    if bound_field.is_hidden:  # {{ field }}: str(field), with its hidden initial value when it has one
        plain = not bound_field.field.show_hidden_initial and type(bound_field).__str__ is BoundField.__str__
        return mark_safe(f"{render_widget(bound_field, options=options) if plain else text(bound_field)}\n")
    checkbox = is_checkbox(bound_field)
    widget = render_widget(bound_field, _bs_attrs(bound_field, "" if checkbox else size), options)
    return mark_safe(_field_html(checkbox, bound_field.field.required, text(bound_field.id_for_label),
                                 text(bound_field.label), widget, text(bound_field.auto_id), bound_field.errors,
                                 bound_field.help_text))


@register.simple_tag(takes_context=True)
def action_url(context, model_or_object, action, /, **kwargs):
    """URL of an action of a model or record when it exists and the user may use it, else ""."""
    model = model_or_object if isinstance(model_or_object, type) else type(model_or_object)
    if not user_may(context["request"].user, model, action):
        return ""
    return model_url(model_or_object, action, **kwargs) or ""


@register.filter
def http_status_badge(status):
    """An HTTP status as a coloured badge; no status means no response at all."""
    if status is None:
        return format_html('<span class="badge text-bg-danger">{}</span>', _("no response"))
    color = "success" if status < 300 else "info" if status < 400 else "warning" if status < 500 else "danger"
    if status in (401, 403):
        color = "danger"
    return format_html('<span class="badge text-bg-{}">{}</span>', color, status)


@register.filter
def badge(label, color="secondary"):
    return format_html('<span class="badge text-bg-{}">{}</span>', color or "secondary", label)


@register.filter(name="capfirst_i18n")
def capfirst_i18n(value):
    """capfirst that writes Turkish "i" as "İ"."""
    return capfirst(value)


@register.filter
def job_target(target):
    """A job's record as people read it ("Etkinlik bileti 12"), not its internal key."""
    return target_label(target)[0]


@register.filter
def figure(value, least=2):
    """A decimal with the digits it needs and at least `least` (1.250,50; 37,1234; 34,5678), localised: prices,
    quantities and exchange rates that the database keeps with six places."""
    if value in (None, ""):
        return ""
    try:
        exponent = Decimal(str(value)).normalize().as_tuple().exponent
    except InvalidOperation:
        return value
    places = max(int(least), -exponent if isinstance(exponent, int) and exponent < 0 else 0)
    return floatformat(value, f"{places}g")
