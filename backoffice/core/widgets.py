"""Form widgets written in Python, with the HTML Django's own widget templates give.

A form page writes hundreds of widgets, and a select of a long code list (units, exemption reasons, withholding
codes, currencies...) hundreds of <option>s, each one a template of its own through Django's template engine: an
invoice with ten lines spent nine tenths of its time there (issue 30). Here, the same HTML in Python: the same
attributes in the same order, the same escaping (django.utils.html's), `selected` on the same options (the first
match of a single select, every match of a multiple one), optgroups, required, disabled and aria attributes, the id
and name Django gives.

- render_widget(): BoundField.as_widget() for Django's plain inputs, textareas and selects.
- A select's options are written once for a page and list of choices (Options, kept in page_options(request), a
  dict of one request) and marked `selected` for each select: the key is the list itself (a FixedChoices by
  identity, or its values and labels) and the active language, so that one language's labels or one company's
  choices are never served to another. Nothing is kept from one request to the next.
- FixedChoices: a code list built once, which every form of a formset shares instead of normalising its own copy.
- WidgetRenderer: a formset's renderer, for what a template writes with {{ field }} (hidden ids, delete boxes).
- widget_with_holes() / fill_value(): a line's widget written once for the page with holes for the name, the id
  and the value (the form_field tag's plans, core.templatetags.backoffice).

Anything else (a widget, template, renderer or bound field of its own) is rendered by Django, as before;
tests/core/test_fast_widgets.py compares both.
"""

import functools
import html

from django.forms import widgets
from django.forms.boundfield import BoundField
from django.forms.renderers import DjangoTemplates
from django.utils.choices import BaseChoiceIterator
from django.utils.formats import localize
from django.utils.functional import Promise
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.timezone import template_localtime
from django.utils.translation import get_language

_WIDGETS = "django/forms/widgets/"
# Django's templates that are input.html (type, name, value, attributes) and nothing more.
INPUT_TEMPLATES = frozenset(f"{_WIDGETS}{name}.html" for name in (
    "input", "text", "number", "email", "url", "password", "hidden", "date", "datetime", "time", "search", "tel",
    "color", "checkbox"))
TEXTAREA_TEMPLATE = f"{_WIDGETS}textarea.html"
SELECT_TEMPLATE = f"{_WIDGETS}select.html"
OPTION_TEMPLATE = f"{_WIDGETS}select_option.html"


def text(value) -> str:
    """A value as {{ value }} writes it in a widget template: localised when a number or a date, escaped unless
    marked safe, a lazy translation in the active language."""
    if type(value) is not str:
        if isinstance(value, Promise):
            value = str(value)
        elif not isinstance(value, str):
            value = str(localize(template_localtime(value)))
        if type(value) is not str:  # marked safe (or another kind of string): as the template engine does
            return conditional_escape(value)
    return html.escape(value)  # what django.utils.html.escape does, without its wrappers: most values are plain


def attribute(value) -> str:
    """A value as {{ value|stringformat:'s' }} writes it: "%s" and escaped unless marked safe."""
    if type(value) is str:
        return html.escape(value)
    if isinstance(value, str):
        return conditional_escape(value)
    try:  # the stringformat filter
        return html.escape("%s" % (str(value) if isinstance(value, tuple) else value))
    except (TypeError, ValueError):
        return ""


def attributes(attrs) -> str:
    """django/forms/widgets/attrs.html: False leaves an attribute out, True writes its name alone."""
    written = []
    for name, value in attrs.items():
        if value is True:
            written.append(f" {text(name)}")
        elif value is not False:
            written.append(f' {text(name)}="{html.escape(value) if type(value) is str else attribute(value)}"')
    return "".join(written)


class FixedChoices(BaseChoiceIterator):
    """Choices already as Django normalises them ((value, label) pairs, a group's label a list of pairs), taken as
    they are: a field and its widget do not normalise the list again for each form of a formset, and every copy of
    the field and its widget shares it (a tuple, never changed in place: a page's options are kept by its identity).
    Lazy labels stay lazy: they are written in the language active when the page is."""

    def __init__(self, choices):
        self.choices = tuple(choices)
        self.written = {}  # language -> Options: the list never changes, so its options are written once a language

    def options(self, language) -> "Options":
        found = self.written.get(language)
        if found is None:
            found = self.written[language] = Options(self.choices)
        return found

    def __iter__(self):
        return iter(self.choices)

    def __len__(self):
        return len(self.choices)

    def __copy__(self):  # a widget copies its choices with itself: the same list
        return self

    def __deepcopy__(self, memo):
        return self


def _plain(widget, template: str, *methods) -> bool:
    """Whether the widget renders with Django's template and methods: then its HTML can be written here."""
    return widget.template_name == template and _plain_class(type(widget), methods)


@functools.cache
def _plain_class(cls, methods) -> bool:
    return cls.render is widgets.Widget.render and all(getattr(cls, name) is getattr(owner, name)
                                                       for owner, name in methods)


def _input(context) -> str:
    """django/forms/widgets/input.html."""
    value = context.get("value")
    shown = "" if value is None else f' value="{attribute(value)}"'
    return (f'<input type="{text(context.get("type", ""))}" name="{text(context.get("name", ""))}"{shown}'
            f'{attributes(context.get("attrs", {}))}>')


def _textarea(context) -> str:
    """django/forms/widgets/textarea.html."""
    value = context.get("value")
    content = text(value) if value else ""
    name, attrs = text(context.get("name", "")), attributes(context.get("attrs", {}))
    return f'<textarea name="{name}"{attrs}>\n{content}</textarea>'


def _select_from_optgroups(context) -> str | None:
    """django/forms/widgets/select.html from the optgroups Django made (None: an option has a template of its
    own)."""
    parts = [f'<select name="{text(context.get("name", ""))}"{attributes(context.get("attrs", {}))}>']
    for group_name, group_choices, _index in context.get("optgroups", ()):
        if group_name:
            parts.append(f'\n  <optgroup label="{text(group_name)}">')
        for option in group_choices:
            if option.get("template_name") != OPTION_TEMPLATE:
                return None
            parts.append(f'\n  <option value="{attribute(option.get("value"))}"{attributes(option.get("attrs", {}))}>'
                         f'{text(option.get("label"))}</option>')
        if group_name:
            parts.append("\n  </optgroup>")
    parts.append("\n</select>")
    return "".join(parts)


_GROUP_TAG = object()  # an optgroup's opening or closing tag among the options: it has no value


class Options:
    """The <option>s of one list of choices as select.html writes them: written once, then marked `selected` for
    each select's value."""

    __slots__ = ("parts", "values", "keys", "whole", "marks")

    def __init__(self, choices):
        parts, values, escape = [], [], html.escape  # plain strings escaped inline: most labels and values
        for option_value, option_label in choices:  # ChoiceWidget.optgroups
            if option_value is None:
                option_value = ""
            group = isinstance(option_label, (list, tuple))
            if group and option_value:
                parts.append(f'\n  <optgroup label="{text(option_value)}">')
                values.append(_GROUP_TAG)
            for value, label in option_label if group else ((option_value, option_label),):
                shown = escape(value) if type(value) is str else attribute(value)
                label = escape(label) if type(label) is str else text(label)
                parts.append(f'\n  <option value="{shown}">{label}</option>')
                values.append(value)
            if group and option_value:
                parts.append("\n  </optgroup>")
                values.append(_GROUP_TAG)
        self.parts, self.values, self.whole = parts, values, "".join(parts)
        self.keys = [None if value is _GROUP_TAG else str(value) for value in values]
        # Where " selected" goes in `whole` for each option: after its value attribute (a slice, not a join).
        self.marks, offset = [], 0
        for value, part in zip(values, parts):
            self.marks.append(None if value is _GROUP_TAG else offset + part.index('"', part.index('value="') + 7) + 1)
            offset += len(part)

    def html(self, values, multiple: bool) -> str:
        """The options with `selected` on the first option whose value is one of `values` (every such option when
        multiple)."""
        keys = self.keys
        if multiple:
            wanted = set(values)
            chosen = [position for position, key in enumerate(keys) if key in wanted]
        else:
            found = [keys.index(value) for value in values if value in keys]
            chosen = [min(found)] if found else []
        if not chosen:
            return self.whole
        whole, pieces, start = self.whole, [], 0
        for position in chosen:
            mark = self.marks[position]
            pieces += (whole[start:mark], " selected")
            start = mark
        pieces.append(whole[start:])
        return "".join(pieces)


class _Same:
    """An object in a key by identity: a lazy label (its text is not asked for: a translation lookup for each option
    of each select would cost what the options cost) or a FixedChoices (it never changes)."""

    __slots__ = ("held",)

    def __init__(self, held):
        self.held = held

    def __hash__(self):
        return id(self.held)

    def __eq__(self, other):
        return isinstance(other, _Same) and other.held is self.held


def _key_label(label):
    if isinstance(label, Promise):
        return _Same(label)
    if isinstance(label, list):  # a group's choices
        return tuple((value, _key_label(sublabel)) for value, sublabel in label)
    return label


def options_for(choices, options: dict | None, language=None) -> Options:
    """The Options of a list of choices in the active language (given when the caller knows it): a FixedChoices keeps
    its own (it never changes, and holds nothing of a company's); any other list is written once per page, kept in
    `options` (one page's) under its values and labels (a lazy label by identity) and the language."""
    if isinstance(choices, FixedChoices):  # kept with the list itself, for every page
        return choices.options(language or get_language())
    if options is None:
        return Options(choices)
    source = list(iter(choices))  # once, as Django does: a model choice iterator queries on each pass (and list()
    # alone would ask its length first, a COUNT query)
    try:
        key = (language or get_language(),
               tuple((value, label if type(label) is str else _key_label(label)) for value, label in source))
        found = options.get(key)
    except TypeError:  # a value that cannot be a key (an unsaved model instance): written each time
        return Options(source)
    if found is None:
        found = options[key] = Options(source)
    return found


def _select(widget, name, value, attrs, options) -> str:
    values = widget.format_value(value)
    attrs = widget.build_attrs(widget.attrs, attrs)
    if widget.allow_multiple_selected:
        attrs["multiple"] = True
    body = options_for(widget.choices, options).html(values, widget.allow_multiple_selected)
    return f'<select name="{text(name)}"{attributes(attrs)}>{body}\n</select>'


def _select_is_plain(widget) -> bool:
    return (isinstance(widget, widgets.Select) and widget.option_template_name == OPTION_TEMPLATE
            and not widget.option_inherits_attrs and widget.checked_attribute == {"selected": True}
            and _plain(widget, SELECT_TEMPLATE, (widgets.Select, "get_context"), (widgets.ChoiceWidget, "optgroups"),
                       (widgets.ChoiceWidget, "create_option"), (widgets.Widget, "_render"),
                       (widgets.Widget, "build_attrs")))


def _writer(widget):
    """What writes this widget's HTML here (name, value, attrs, options), or None: Django renders it."""
    if _select_is_plain(widget):
        return lambda name, value, attrs, options: _select(widget, name, value, attrs, options)
    if widget.template_name in INPUT_TEMPLATES and _plain(widget, widget.template_name, (widgets.Widget, "_render")):
        return lambda name, value, attrs, options: _input(widget.get_context(name, value, attrs)["widget"])
    if _plain(widget, TEXTAREA_TEMPLATE, (widgets.Widget, "_render")):
        return lambda name, value, attrs, options: _textarea(widget.get_context(name, value, attrs)["widget"])
    return None


def render_widget(bound_field, attrs=None, options: dict | None = None) -> SafeString:
    """bound_field.as_widget(attrs=attrs), written in Python when the widget is one of Django's plain inputs,
    textareas or selects rendered by Django's own templates; by Django otherwise. `options`: a dict kept for one
    request, in which a select's options are reused by every select of the same choices."""
    field, form = bound_field.field, bound_field.form
    widget = field.widget
    write = _writer(widget)
    if write is None or type(form.renderer) not in (DjangoTemplates, WidgetRenderer) or (
            type(bound_field).as_widget is not BoundField.as_widget):
        return bound_field.as_widget(attrs=attrs)
    # BoundField.as_widget, from here on
    if field.localize:
        widget.is_localized = True
    attrs = bound_field.build_widget_attrs(attrs or {}, widget)
    if bound_field.auto_id and "id" not in widget.attrs:
        attrs.setdefault("id", bound_field.auto_id)
    return mark_safe(write(bound_field.html_name, bound_field.value(), attrs, options))


# A field's HTML written once for a page with holes where one line's field differs from another's: the name, the
# id, the value (an input's value attribute, a textarea's text, a select's options). Nothing escaping writes
# changes them.
NAME_HOLE, ID_HOLE, VALUE_HOLE = "\x00\x01n\x00", "\x00\x01i\x00", "\x00\x01v\x00"


def _holed_kind(widget) -> str | None:
    """Which widgets can be written with holes: whose HTML, but for name, id and value, does not follow the value."""
    if _select_is_plain(widget) and isinstance(widget.choices, FixedChoices):
        return "select"
    if (isinstance(widget, widgets.Input) and widget.template_name in INPUT_TEMPLATES
            and _plain(widget, widget.template_name, (widgets.Widget, "_render"), (widgets.Input, "get_context"))):
        return "input"  # not a checkbox (checked) nor a password (no value): their get_context is their own
    if _plain(widget, TEXTAREA_TEMPLATE, (widgets.Widget, "_render"), (widgets.Widget, "get_context")):
        return "textarea"
    return None


def widget_with_holes(bound_field, attrs=None) -> tuple[str, str] | None:
    """render_widget's HTML for this field with NAME_HOLE, ID_HOLE and VALUE_HOLE in place of the name, the id and
    the value, and the widget's kind for fill_value; None when the field is not written so."""
    field, form = bound_field.field, bound_field.form
    widget, auto_id = field.widget, bound_field.auto_id
    kind = _holed_kind(widget)
    if (kind is None or type(form.renderer) not in (DjangoTemplates, WidgetRenderer) or not auto_id
            or "id" in widget.attrs or type(bound_field).as_widget is not BoundField.as_widget):
        return None
    if field.localize:
        widget.is_localized = True
    attrs = bound_field.build_widget_attrs(attrs or {}, widget)
    attrs["id"] = ID_HOLE  # as_widget's setdefault: last, as there
    described = attrs.get("aria-describedby")
    if isinstance(described, str) and described.startswith(auto_id):
        attrs["aria-describedby"] = ID_HOLE + described[len(auto_id):]
    if any(isinstance(value, str) and auto_id in value for value in attrs.values()):
        return None  # the id somewhere else: not a hole this knows
    if kind == "select":
        attrs = widget.build_attrs(widget.attrs, attrs)
        if widget.allow_multiple_selected:
            attrs["multiple"] = True
        written = f'<select name="{NAME_HOLE}"{attributes(attrs)}>{VALUE_HOLE}\n</select>'
    elif kind == "input":
        written = _input(widget.get_context(NAME_HOLE, VALUE_HOLE, attrs)["widget"])
        written = written.replace(f' value="{VALUE_HOLE}"', VALUE_HOLE, 1)  # no value, no attribute
    else:
        written = _textarea(widget.get_context(NAME_HOLE, VALUE_HOLE, attrs)["widget"])
    if written.count(VALUE_HOLE) != 1 or written.count(NAME_HOLE) != 1:
        return None  # a value or a name that a widget of its own changed: written whole
    return written, kind


def fill_value(kind: str, bound_field, options: dict | None, language=None) -> str:
    """What a widget written with holes has in VALUE_HOLE for this field: the value attribute, the text, the
    options."""
    field = bound_field.field
    widget = field.widget
    if field.localize:
        widget.is_localized = True
    shown = widget.format_value(bound_field.value())
    if kind == "select":
        return options_for(widget.choices, options, language).html(shown, widget.allow_multiple_selected)
    if kind == "input":
        return "" if shown is None else f' value="{attribute(shown)}"'
    return text(shown) if shown else ""


class WidgetRenderer(DjangoTemplates):
    """Django's form renderer, writing Django's plain input, textarea and select templates in Python from the
    context they would be given (a formset's hidden ids, its delete boxes and management form): the same HTML, no
    template per widget. Any other template, and any option with a template of its own, is Django's."""

    def render(self, template_name, context, request=None):
        if template_name in INPUT_TEMPLATES:
            return mark_safe(_input(context["widget"]))
        if template_name == TEXTAREA_TEMPLATE:
            return mark_safe(_textarea(context["widget"]))
        if template_name == SELECT_TEMPLATE and (written := _select_from_optgroups(context["widget"])) is not None:
            return mark_safe(written)
        return super().render(template_name, context, request)


WIDGET_RENDERER = WidgetRenderer()


def page_options(request) -> dict | None:
    """The options written for this request so far (None without a request: then nothing is kept)."""
    if request is None:
        return None
    try:
        return request._widget_options
    except AttributeError:
        request._widget_options = {}
        return request._widget_options
