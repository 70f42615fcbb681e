"""Template helpers of the UI shell: the side menu, Bootstrap form fields, model URLs, badges."""

from django import forms, template
from django.utils.html import format_html
from django.utils.translation import gettext as _

from ..generic.navigation import menu_for
from ..generic.registry import model_url, user_may
from ..generic.text import capfirst

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


@register.filter
def bs_widget(bound_field, size=""):
    """Render a form field's widget with Bootstrap classes, marked invalid when it has errors."""
    widget = bound_field.field.widget
    classes = [_widget_class(widget)]
    if size and classes[0] != "form-check-input":
        classes.append(f"{classes[0]}-{size}")
    if bound_field.errors:
        classes.append("is-invalid")
    existing = widget.attrs.get("class", "")
    attrs = {"class": " ".join(filter(None, [existing, *classes]))}
    if bound_field.errors:
        attrs["aria-invalid"] = "true"
        attrs["aria-describedby"] = f"{bound_field.auto_id}_errors"
    elif bound_field.help_text:
        attrs["aria-describedby"] = f"{bound_field.auto_id}_help"
    return bound_field.as_widget(attrs=attrs)


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


@register.inclusion_tag("generic/includes/form_field.html")
def form_field(bound_field, size=""):
    return {"field": bound_field, "size": size}


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
    from ..joblabels import target_label

    return target_label(target)[0]


@register.filter
def figure(value, least=2):
    """A decimal with the digits it needs and at least `least` (1.250,50; 37,1234; 34,5678), localised: prices,
    quantities and exchange rates that the database keeps with six places."""
    from decimal import Decimal, InvalidOperation

    from django.template.defaultfilters import floatformat

    if value in (None, ""):
        return ""
    try:
        exponent = Decimal(str(value)).normalize().as_tuple().exponent
    except InvalidOperation:
        return value
    places = max(int(least), -exponent if isinstance(exponent, int) and exponent < 0 else 0)
    return floatformat(value, f"{places}g")
