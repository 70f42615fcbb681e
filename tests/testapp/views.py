"""The benchmark's baseline page (tests/benchmarks/test_forms.py): the invoice edit page's view, base template and
shell with a form that has no fields, so that what a form page costs beyond its fields is measured alike."""

from django import forms

from backoffice.invoices.views import InvoiceEditView


class EmptyForm(forms.Form):
    """A form with no fields, taking what the invoice form takes."""

    def __init__(self, *args, instance=None, company=None, **kwargs):
        super().__init__(*args, **kwargs)


class EmptyFormView(InvoiceEditView):
    """The same section, roles, record lookup and lock check as the invoice's edit page; no fields, no lines."""

    form = EmptyForm

    def get_template_names(self):
        return ["testapp/empty_form.html"]

    def render_form(self, invoice, form, status=200, lines=None):
        return self.render({"object": invoice, "form": form, "is_new": invoice.pk is None,
                            "cancel_url": self.cancel_url(invoice)}, status=status)
