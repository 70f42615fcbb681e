"""The benchmark's baseline page (tests/benchmarks/test_forms.py): the invoice edit page's view, base template and
shell with a form that has no fields, so that what a form page costs beyond its fields is measured alike. And the
pages of a Memo, declared as a domain declares its pages with lines, a typeahead and kept documents."""

from django import forms

from backoffice.core.documents import KeptDocuments
from backoffice.core.generic.documents import register_document_view
from backoffice.core.generic.lines import Lookup, line_formset
from backoffice.core.generic.registry import register_model_views
from backoffice.core.generic.views import ObjectDetailView, ObjectEditView
from backoffice.core.roles import EDITORS, EVERYONE
from backoffice.current_accounts import api
from backoffice.invoices.views import InvoiceEditView

from .models import Memo, MemoDocument, MemoLine


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


# --- core's declarations on a record of the test app (tests/core/test_line_edit_view.py, test_kept_documents.py) --
class MemoRefused(Exception):
    """A refusal of the save (as a domain service's): shown on the form, nothing kept."""


class MemoForm(forms.ModelForm):
    class Meta:
        model = Memo
        fields = ("title",)


class MemoLineForm(forms.ModelForm):
    class Meta:
        model = MemoLine
        fields = ("text", "quantity")

    def clean_quantity(self):
        if not self.cleaned_data["quantity"]:
            raise forms.ValidationError("A line needs a quantity.")
        return self.cleaned_data["quantity"]


MemoLineFormSet = line_formset(Memo, MemoLine, MemoLineForm, max_num=5)


def account_details(account) -> dict:
    return {"identifier": account.identifier if account else ""}


class MemoEditView(ObjectEditView):
    model = Memo
    required_roles = EDITORS
    form = MemoForm
    formsets = {"lines": MemoLineFormSet}
    lookups = {"account": Lookup(find=api.find_accounts, resolve=api.resolve_account,
                                 template="testapp/account_lookup.html", details=account_details)}
    refused = (MemoRefused,)
    invalid_status = 400

    def form_context(self, memo, formsets):
        return {"empty_line": formsets["lines"].empty_form}


class MemoDetailView(ObjectDetailView):
    model = Memo
    required_roles = EVERYONE


FETCHED = []  # (pk, kind, standard) of every call of the stand-in platform below


def memo_fetch(memo, kind, standard, client):
    """The stand-in platform's document: the memo's title in a PDF, an HTML page or a UBL."""
    FETCHED.append((memo.pk, kind, standard))
    layout = "" if standard else " (company layout)"
    return {"pdf": (f"%PDF-1.7\n{memo.title}{layout}\n%%EOF\n".encode(), "application/pdf"),
            "html": (f"<p>{memo.title}{layout}</p>".encode(), "text/html"),
            "ubl": (f"<Invoice><cbc:ID>{memo.title}</cbc:ID></Invoice>".encode(), "")}[kind]


MEMO_DOCUMENTS = KeptDocuments(MemoDocument, owner="memo", kinds=("pdf", "html", "ubl"), fetch=memo_fetch,
                               name=lambda memo: memo.remote_id, unsent="Not on the platform yet.")

register_model_views(Memo, prefix="memos", detail=MemoDetailView, edit=MemoEditView)
register_document_view(Memo, MEMO_DOCUMENTS, attachment_kinds=("ubl",), back_label="Back", record_label="Memo")
