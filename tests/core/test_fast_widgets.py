"""Widgets written in Python (core.widgets, issue 30) against Django's own template rendering: the same HTML, parsed
and normalised with lxml (what a browser builds), for plain, selected, unknown, grouped, required, disabled, invalid
and multiple selects, labels with <>&" and Turkish letters, lazy labels in Turkish and English; a list's options
written once for a page and never served to another language or another list; inputs, textareas, checkboxes and
hidden inputs; the formsets' renderer; the form_field layout against its template; and the invoice and dispatch
note pages, with and without errors, alike with and without the fast path."""

import difflib
import re
from contextlib import contextmanager
from datetime import date
from decimal import Decimal

import lxml.html
import pytest
from django import forms
from django.forms.renderers import DjangoTemplates
from django.template import Context, Template
from django.template.loader import get_template
from django.test import RequestFactory
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy

from backoffice.core import widgets
from backoffice.core.choices import SyncState
from backoffice.core.fields import LocalizedDecimalField
from backoffice.core.models import Company
from backoffice.core.templatetags import backoffice as tags
from backoffice.core.widgets import WIDGET_RENDERER, FixedChoices, render_widget
from backoffice.current_accounts.models import CurrentAccount
from backoffice.dispatch.choices import DispatchStatus
from backoffice.dispatch.models import DispatchNote
from backoffice.invoices.choices import RecordType
from backoffice.invoices.forms import LineForm, _line_choices
from backoffice.invoices.models import Invoice
from tests.conftest import form_post
from tests.dispatch.builders import LINE as DISPATCH_LINE
from tests.dispatch.builders import directory, note_data, receiver
from tests.invoices.test_forms_and_views import EARCHIVE_VKN, invoice_data, line
from tests.tickets.conftest import login

KIND = str(RecordType.EARCHIVE)
UNITS = [("", "---------"), ("C62", "Adet"), ("KGM", "Kilogram"), ("LTR", "Litre")]
TURKISH = 'Şişli <b>&"İğne\'</b> çığ ÖÜ'


# --- how the two renderings are compared ----------------------------------------------------------------------------
def _node(element):
    return (element.tag, dict(element.attrib), (element.text or "").strip(),
            [_node(child) for child in element if isinstance(child.tag, str)], (element.tail or "").strip())


def tree(html):
    """The HTML as a browser reads it: elements, attributes (in any order) and text, whitespace between tags
    dropped."""
    return [_node(part) if not isinstance(part, str) else part.strip() for part in lxml.html.fragments_fromstring(html)]


@contextmanager
def djangos_own():
    """Django's rendering, as before issue 30: every widget by its template, every field by form_field.html."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(widgets, "_writer", lambda widget: None)
        patch.setattr(widgets.WidgetRenderer, "render", DjangoTemplates.render)
        patch.setattr(tags, "_laid_out_here", lambda bound_field: False)
        patch.setattr(tags, "_planned", lambda bound_field, size, options: None)
        yield


def bound(field, *, data=None, initial=None, renderer=None):
    """The bound field `code` of a form holding only `field`."""
    form = type("OneField", (forms.Form,), {"code": field})(data=data, initial=initial, renderer=renderer)
    return form["code"]


def same_widget(bound_field, attrs=None, options=None) -> str:
    """The widget written here, asserted the same as Django writes it; returned."""
    fast = render_widget(bound_field, attrs, options)
    reference = bound_field.as_widget(attrs=attrs)
    assert tree(fast) == tree(reference), f"\n{fast}\n!=\n{reference}"
    return fast


# --- selects --------------------------------------------------------------------------------------------------------
def test_a_plain_select_selects_the_blank_choice_as_django_does():
    html = same_widget(bound(forms.ChoiceField(choices=UNITS, required=False)))
    assert html.startswith('<select name="code" id="id_code">') and html.count("<option") == 4
    assert '<option value="" selected>---------</option>' in html and html.count(" selected") == 1


def test_the_value_is_selected_and_only_it():
    html = same_widget(bound(forms.ChoiceField(choices=UNITS), initial={"code": "KGM"}))
    assert '<option value="KGM" selected>Kilogram</option>' in html and html.count(" selected") == 1


def test_a_value_not_in_the_list_selects_nothing():
    for value in ("XYZ", "kgm", 7):
        html = same_widget(bound(forms.ChoiceField(choices=UNITS), initial={"code": value}))
        assert " selected" not in html


def test_a_value_given_twice_is_selected_once_in_a_single_select_and_everywhere_in_a_multiple_one():
    twice = [("a", "A"), ("b", "B"), ("a", "A again")]
    html = same_widget(bound(forms.ChoiceField(choices=twice), initial={"code": "a"}))
    assert html.count(" selected") == 1 and '<option value="a" selected>A</option>' in html
    html = same_widget(bound(forms.MultipleChoiceField(choices=twice), initial={"code": ["a"]}))
    assert html.count(" selected") == 2
    # Several values for a single select: the first option, in the list's order, that is one of them.
    html = same_widget(bound(forms.ChoiceField(choices=UNITS), initial={"code": ["LTR", "KGM"]}))
    assert html.count(" selected") == 1 and '<option value="KGM" selected>' in html


def test_optgroups_and_the_options_beside_them():
    grouped = [("", "---------"), ("Hacim", [("LTR", "Litre"), ("MTQ", "Metreküp")]),
               ("Ağırlık <&>", [("KGM", "Kilogram"), ("TNE", "Ton")]), ("", [("C62", "Adet")]), ("H87", "Parça")]
    for value in ("TNE", "C62", "H87", "", None):
        html = same_widget(bound(forms.ChoiceField(choices=grouped, required=False), initial={"code": value}))
        assert html.count("<optgroup") == 2 and 'label="Ağırlık &lt;&amp;&gt;"' in html  # a blank group: no tag
        assert html.count(" selected") == 1  # None is the blank choice's


def test_required_as_django_decides_it_from_the_first_choice():
    assert " required" in same_widget(bound(forms.ChoiceField(choices=UNITS)))
    without_blank = same_widget(bound(forms.ChoiceField(choices=UNITS[1:])))
    assert " required" not in without_blank  # a browser would select the first: Django leaves `required` out
    assert " required" not in same_widget(bound(forms.ChoiceField(choices=UNITS, required=False)))


def test_a_disabled_select():
    html = same_widget(bound(forms.ChoiceField(choices=UNITS, disabled=True), initial={"code": "LTR"}))
    assert " disabled" in html and '<option value="LTR" selected>' in html


def test_disabled_options_of_a_widget_of_its_own_are_djangos():
    """Django's Select has no disabled options: a widget that adds them (create_option) is rendered by Django."""

    class SomeDisabled(forms.Select):
        def create_option(self, *args, **kwargs):
            option = super().create_option(*args, **kwargs)
            option["attrs"]["disabled"] = option["value"] == "LTR"
            return option

    html = same_widget(bound(forms.ChoiceField(choices=UNITS, widget=SomeDisabled)))
    assert '<option value="LTR" disabled>Litre</option>' in html


def test_an_invalid_select_with_the_bootstrap_marks():
    field = bound(forms.ChoiceField(choices=UNITS, help_text="Birim"), data={"code": "XYZ"})
    assert field.errors
    html = same_widget(field, tags._bs_attrs(field, "sm"))
    assert 'class="form-select form-select-sm is-invalid"' in html and 'aria-invalid="true"' in html
    assert 'aria-describedby="id_code_errors"' in html and " selected" not in html  # XYZ is no option


def test_a_multiple_select():
    html = same_widget(bound(forms.MultipleChoiceField(choices=UNITS[1:]), initial={"code": ["C62", "LTR"]}))
    assert " multiple" in html and html.count(" selected") == 2
    assert " selected" not in same_widget(bound(forms.MultipleChoiceField(choices=UNITS[1:], required=False)))


def test_labels_and_values_are_escaped_turkish_letters_kept():
    choices = [("a&b\"<>'", TURKISH), ("safe", mark_safe("<em>İş</em>")), (3, 4.5), (None, "None is blank")]
    for value in ("a&b\"<>'", "3", ""):
        html = same_widget(bound(forms.ChoiceField(choices=choices), initial={"code": value}))
        assert "Şişli &lt;b&gt;&amp;&quot;İğne&#x27;&lt;/b&gt; çığ ÖÜ" in html
        assert 'value="a&amp;b&quot;&lt;&gt;&#x27;"' in html and "<em>İş</em>" in html  # marked safe: as it is
    assert tree(html)[0][3][0][2] == "Şişli <b>&\"İğne'</b> çığ ÖÜ"  # what the browser shows


@pytest.mark.parametrize("language, none, unit", [("tr", "yok", "Birim"), ("en", "none", "Unit")])
def test_lazy_labels_in_the_active_language(language, none, unit):
    choices = [("", gettext_lazy("none")), ("u", gettext_lazy("Unit"))]
    with translation.override(language):
        html = same_widget(bound(forms.ChoiceField(choices=choices, label=gettext_lazy("Unit"))), options={})
    assert f'<option value="" selected>{none}</option>' in html and f">{unit}</option>" in html


def test_one_pages_options_are_never_served_to_another_language():
    options = {}
    choices = FixedChoices([("", gettext_lazy("none")), ("u", gettext_lazy("Unit"))])
    with translation.override("tr"):
        turkish = same_widget(bound(forms.ChoiceField(choices=choices)), options=options)
    with translation.override("en"):
        english = same_widget(bound(forms.ChoiceField(choices=choices)), options=options)
    # A fixed list keeps its options itself, once a language, for every page.
    assert "Birim" in turkish and "Unit" in english and "Birim" not in english and set(choices.written) == {"tr", "en"}
    with translation.override("en"):
        assert same_widget(bound(forms.ChoiceField(choices=choices)), options={}) == english


def test_one_lists_options_are_never_served_for_another_list():
    """Two companies' lists of the same codes and length, named differently: each select shows its own."""
    options = {}
    ours = same_widget(bound(forms.ChoiceField(choices=[("1", "Merkez depo"), ("2", "Şube")])), options=options)
    theirs = same_widget(bound(forms.ChoiceField(choices=[("1", "Ana depo"), ("2", "Mağaza")])), options=options)
    assert "Merkez depo" in ours and "Ana depo" in theirs and "Merkez" not in theirs and len(options) == 2


def test_every_line_reuses_the_options_written_once_for_the_page():
    options = {}
    with translation.override("tr"):
        for index, (unit, withholding) in enumerate([("C62", ""), ("KGM", "602"), ("LTR", ""), ("ZZZ", "")] * 3):
            form = LineForm(prefix=f"lines-{index}", initial={"unit_code": unit, "withholding_code": withholding})
            for name in ("unit_code", "vat_exemption_reason_code", "withholding_code", "other_tax_code"):
                html = same_widget(form[name], tags._bs_attrs(form[name], "sm"), options)
            assert f'<option value="{withholding}" selected>' in render_widget(form["withholding_code"])
            assert f'<option value="{unit}" selected>' in render_widget(form["unit_code"], options=options)
    # The four lists every line shares are the same objects, each written once a language and kept with itself; a
    # line whose unit is not among the 40 shown has a list of its own (three lines here), and nothing else was
    # written for the page.
    shared = _line_choices()
    forms_ = [LineForm(prefix=f"lines-{index}") for index in range(2)]
    assert all(form.fields[name].choices is shared[name] for form in forms_ for name in shared)
    assert all("tr" in shared[name].written for name in shared) and len(options) == 0


@pytest.mark.django_db
def test_a_model_choice_field_as_django_writes_it(django_assert_max_num_queries):
    companies = [Company.objects.create(name=name, api_key=f"key-{index}")
                 for index, name in enumerate(["Acme A.Ş.", "Çağ <Ltd>", "Örnek & Oğul"])]
    field = bound(forms.ModelChoiceField(Company.objects.order_by("name")), initial={"code": companies[1].pk})
    with django_assert_max_num_queries(1):  # the choices read once, as Django reads them
        html = render_widget(field, options={})
    assert tree(html) == tree(field.as_widget())
    assert f'<option value="{companies[1].pk}" selected>Çağ &lt;Ltd&gt;</option>' in html


# --- inputs ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field, value", [
    (forms.CharField(max_length=20, help_text="?"), 'a <"&\'> İ'),
    (forms.CharField(required=False), None),
    (forms.CharField(widget=forms.TextInput(attrs={"type": "tel", "list": "x", "data-a": True, "b": False})), "0532"),
    (forms.EmailField(), "a@b.com"),
    (forms.URLField(assume_scheme="https"), "https://örnek.com.tr/?a=1&b=2"),
    (forms.CharField(widget=forms.PasswordInput), "secret"),
    (forms.CharField(widget=forms.PasswordInput(render_value=True)), "secret"),
    (forms.CharField(widget=forms.HiddenInput), "7"),
    (forms.IntegerField(), 1250),
    (forms.DecimalField(localize=True), Decimal("1250.5")),
    (LocalizedDecimalField(max_digits=18, decimal_places=2), Decimal("1250.5")),
    (LocalizedDecimalField(max_digits=5, decimal_places=2, max_value=100), Decimal("18")),
    (forms.DateField(widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d")), date(2026, 1, 15)),
    (forms.DateField(localize=True), date(2026, 1, 15)),
    (forms.BooleanField(required=False), True),
    (forms.BooleanField(required=False), False),
    (forms.CharField(widget=forms.Textarea(attrs={"rows": 2})), "Teşekkürler\n</textarea><script>x()</script>"),
    (forms.CharField(widget=forms.Textarea, required=False), ""),
])
@pytest.mark.parametrize("language", ["tr", "en"])
def test_inputs_as_django_writes_them(field, value, language):
    with translation.override(language):
        for form_field in (bound(field, initial={"code": value}), bound(field, data={"code": value or ""})):
            same_widget(form_field, tags._bs_attrs(form_field))
            same_widget(form_field)


def test_a_disabled_input_shows_its_initial_value():
    field = bound(forms.IntegerField(disabled=True, help_text="Yardım"), data={"code": "abc"}, initial={"code": 3})
    html = same_widget(field, tags._bs_attrs(field, "sm"))
    assert " disabled" in html and 'value="3"' in html and 'aria-describedby="id_code_help"' in html


# --- the formsets' renderer ---------------------------------------------------------------------------------------
class EveryKind(forms.Form):
    text = forms.CharField(initial='<"Şişli">')
    hidden = forms.IntegerField(widget=forms.HiddenInput, initial=7)
    box = forms.BooleanField(required=False, initial=True)
    notes = forms.CharField(widget=forms.Textarea, initial="İki\nsatır & <b>")
    unit = forms.ChoiceField(choices=[("", "---------"), ("Hacim", [("LTR", "Litre")]), ("KGM", TURKISH)],
                             initial="LTR")
    units = forms.MultipleChoiceField(choices=UNITS[1:], initial=["C62", "KGM"])
    kind = forms.ChoiceField(widget=forms.RadioSelect, choices=UNITS[1:], initial="C62")


def test_the_widget_renderer_writes_what_djangos_renderer_writes():
    ours, djangos = EveryKind(renderer=WIDGET_RENDERER), EveryKind()
    for name in EveryKind.base_fields:
        assert tree(str(ours[name])) == tree(str(djangos[name])), name
    assert tree(str(ours)) == tree(str(djangos))  # the whole form, by its template, with the same widgets
    bound_ours = EveryKind(data={"text": "", "unit": "XYZ"}, renderer=WIDGET_RENDERER)
    bound_djangos = EveryKind(data={"text": "", "unit": "XYZ"})
    assert tree(str(bound_ours)) == tree(str(bound_djangos))


def test_a_formsets_management_form_and_hidden_ids():
    ours = forms.formset_factory(EveryKind, extra=2, can_delete=True, renderer=WIDGET_RENDERER)(prefix="lines")
    djangos = forms.formset_factory(EveryKind, extra=2, can_delete=True)(prefix="lines")
    assert tree(str(ours.management_form)) == tree(str(djangos.management_form))
    for our_form, django_form in zip(ours.forms, djangos.forms, strict=True):
        assert tree(str(our_form["DELETE"])) == tree(str(django_form["DELETE"]))
        assert tree(str(our_form["hidden"])) == tree(str(django_form["hidden"]))


# --- the form_field layout ------------------------------------------------------------------------------------------
class Layout(forms.Form):
    name = forms.CharField(label=gettext_lazy("Quantity"), help_text=TURKISH, max_length=5)
    unit = forms.ChoiceField(label="Birim <b>", choices=UNITS)
    optional = forms.ChoiceField(choices=UNITS, required=False, help_text=gettext_lazy("none"))
    sale = forms.BooleanField(label="İnternet satışı", help_text="Yalnız e-arşiv", required=True)
    quiet = forms.BooleanField(required=False)
    ident = forms.IntegerField(widget=forms.HiddenInput, required=False)
    kind = forms.ChoiceField(widget=forms.RadioSelect, choices=UNITS[1:], help_text="?")
    kinds = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, choices=UNITS[1:], required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    amount = LocalizedDecimalField(max_digits=18, decimal_places=2, required=False)


def form_field_alike(field, size=""):
    request = RequestFactory().get("/")
    fast = Template("{% load backoffice %}{% form_field field size %}").render(
        Context({"field": field, "size": size, "request": request}))
    with djangos_own():
        reference = get_template("generic/includes/form_field.html").render({"field": field, "size": size})
    assert tree(fast) == tree(reference), f"\n{fast}\n!=\n{reference}"
    return fast


@pytest.mark.parametrize("language", ["tr", "en"])
@pytest.mark.parametrize("data", [None, {"name": "çok uzun <ad>", "unit": "XYZ", "sale": "", "kind": "Z",
                                         "amount": "1.2.3", "ident": "x", "notes": "<b>&"}])
@pytest.mark.parametrize("size", ["", "sm"])
def test_form_field_writes_what_its_template_writes(language, data, size):
    with translation.override(language):
        form = Layout(data=data, initial={"amount": Decimal("1250.5"), "kind": "KGM", "ident": 4})
        for field in form:
            html = form_field_alike(field, size)
            if data and field.errors and not field.is_hidden:
                assert f'id="id_{field.name}_errors"' in html and "invalid-feedback" in html
    if data:
        assert "is-invalid" in form_field_alike(form["unit"], size)


class Line(forms.Form):
    code = forms.CharField(label=gettext_lazy("Quantity"), max_length=5, help_text=TURKISH)
    amount = LocalizedDecimalField(max_digits=18, decimal_places=2, required=False)
    unit = forms.ChoiceField(label=gettext_lazy("Unit"), choices=FixedChoices([("", gettext_lazy("none")), *UNITS[1:]]))
    day = forms.DateField(widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"), required=False)
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    sold = forms.BooleanField(required=False)
    ident = forms.IntegerField(widget=forms.HiddenInput, required=False)


def test_a_lines_fields_written_from_the_pages_plan_as_django_writes_them():
    """Lines of one page: the first writes each field's plan, the others fill it when all that shapes the field is
    the same (a line with errors, a field changed on one line, another list of choices, another language: written
    whole), each line as Django writes it."""
    request = RequestFactory().get("/")
    lines = [Line(prefix=f"lines-{index}", initial={"code": code, "amount": amount, "unit": unit, "day": day,
                                                     "notes": notes, "sold": index % 2, "ident": index})
             for index, (code, amount, unit, day, notes) in enumerate([
                 ("A<1>", Decimal("1250.5"), "KGM", date(2026, 1, 15), "İki\nsatır"),
                 ("", None, "", None, ""),
                 ('"&\'', Decimal("0.10"), "XYZ", date(2025, 12, 31), "<b>"),
                 ("ŞİĞ", Decimal("7"), "C62", None, None)] * 2)]
    lines.append(Line(prefix="lines-8", data={"lines-8-code": "toolong", "lines-8-amount": "1.2.3",
                                              "lines-8-unit": "XYZ"}))
    lines[5].fields["code"].widget.attrs["placeholder"] = "5"  # changed on one line only
    lines[6].fields["code"].required = False
    lines[7].fields["unit"].choices = FixedChoices([("", "---------"), ("KGM", "Kilogram")])
    written = 0
    for index, line in enumerate(lines):
        with translation.override("en" if index == 3 else "tr"):
            for field in line:
                fast = Template("{% load backoffice %}{% form_field field 'sm' %}").render(
                    Context({"field": field, "request": request}))
                with djangos_own():
                    reference = get_template("generic/includes/form_field.html").render(
                        {"field": field, "size": "sm"})
                assert tree(fast) == tree(reference), f"line {index}, {field.name}:\n{fast}\n!=\n{reference}"
                written += 1
    plans = request._widget_options[tags._PLANS]
    # One plan a field and language (hidden and checkbox fields have none): code, amount, unit, day, notes.
    assert sorted(name for (_form, name, _size, _language), plan in plans.items() if plan) == sorted(
        ["code", "amount", "unit", "day", "notes"] * 2)
    assert written == 9 * 7


# --- whole pages ----------------------------------------------------------------------------------------------------
def page_tree(html):
    """A page as a browser reads it, its one-time values left out (the CSRF token, a form's one-time key, nonces,
    and the date and time a new document's form offers: now)."""
    document = lxml.html.document_fromstring(html)
    for element in document.iter():
        element.attrib.pop("nonce", None)
        element.attrib.pop("hx-headers", None)  # the CSRF token again
        if element.get("name") in ("csrfmiddlewaretoken", "submission_key") or element.get("type") in (
                "date", "time", "datetime-local"):
            element.attrib.pop("value", None)
    return _node(document)


def alike(client, method, url, data=None):
    """The page with the fast path and with Django's own rendering: the same; returned (fast)."""
    def fetch():
        return form_post(client, url, data) if method == "post" else client.get(url)

    fast = fetch()
    with djangos_own():
        reference = fetch()
    assert fast.status_code == reference.status_code
    ours, djangos = page_tree(fast.content.decode()), page_tree(reference.content.decode())
    assert ours == djangos, "\n".join(difflib.unified_diff(outline(djangos), outline(ours), "Django", "ours", n=2))
    return fast


def outline(node, depth=0) -> list:
    """A tree's elements one a line, indented, for a readable difference."""
    tag, attributes, text, children, tail = node
    lines = [f"{'  ' * depth}<{tag} {sorted(attributes.items())}> {text!r} {tail!r}"]
    for child in children:
        lines += outline(child, depth + 1)
    return lines


@pytest.fixture
def turkish_web(client, accountant, company):
    CurrentAccount.objects.create(company=company, name="Ayşe Yılmaz Ltd.", identifier=EARCHIVE_VKN, remote_id="11",
                                  sync_state=SyncState.SYNCED)
    receiver(company)
    directory()
    return login(client, accountant, company, language="tr")


def _invoice_lines(count):
    return [line(index, unit_code=("C62", "KGM", "LTR")[index % 3], withholding_code="602" if index % 2 else "")
            for index in range(count)]


@pytest.mark.django_db
def test_the_invoice_page_alike_new_invalid_and_saved(turkish_web):
    add = reverse("invoices:invoice_add")
    alike(turkish_web, "get", add)
    invalid = invoice_data(lines=[*_invoice_lines(2), line(2, quantity="abc", unit_code="XYZ"),
                                  line(3, vat_rate="0", other_tax_rate="5")],
                           kind=KIND, description="", invoice_type="TEVKIFAT", currency_code="USD")
    page = alike(turkish_web, "post", add, invalid)
    assert page.status_code == 400 and 'aria-invalid="true"' in page.content.decode()
    saved = form_post(turkish_web, add, invoice_data(lines=_invoice_lines(4), kind=KIND, invoice_type="TEVKIFAT"))
    assert saved.status_code == 302 and turkish_web.get(saved.url).status_code == 200  # its message shown there
    invoice = Invoice.objects.get()
    html = alike(turkish_web, "get", reverse("invoices:invoice_edit", args=[invoice.pk])).content.decode()
    assert html.count('<option value="602" selected>') == 2 and 'name="lines-3-unit_code"' in html


@pytest.mark.django_db
def test_the_dispatch_note_page_alike_new_invalid_and_saved(turkish_web, company):
    add = reverse("dispatch:dispatchnote_add")
    alike(turkish_web, "get", add)
    lines = [{**DISPATCH_LINE, "unit_code": unit} for unit in ("C62", "KGM", "XYZ")]
    page = alike(turkish_web, "post", add, note_data(lines=lines, plate_number="", drivers=[{"name": "Ayşe"}]))
    assert page.status_code == 400 and 'aria-invalid="true"' in page.content.decode()
    saved = form_post(turkish_web, add, note_data(lines=lines[:2], local_reference_id="R-1"))
    assert saved.status_code == 302 and turkish_web.get(saved.url).status_code == 200  # its message shown there
    note = DispatchNote.objects.get(company=company)
    DispatchNote.objects.filter(pk=note.pk).update(sync_state=SyncState.SYNCED, remote_id="r-1",
                                                   remote_status=DispatchStatus.DRAFT)
    html = alike(turkish_web, "get", reverse("dispatch:dispatchnote_edit", args=[note.pk])).content.decode()
    assert re.search(r'<option value="KGM" selected>', html) and 'name="lines-1-unit_code"' in html
