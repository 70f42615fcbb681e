"""Each field rule of document 1 (2.2 to 2.4) fed bad input: the message is on the field, and nothing is
saved or sent."""

import uuid

import pytest
from django.core.exceptions import ValidationError

from backoffice.core.choices import SyncState
from backoffice.core.models import JobRun, RemoteCall
from backoffice.core.validators import validate_platform_email
from backoffice.subcompanies.models import SubCompany, SubCompanyOperation
from tests.conftest import confirm_post, form_post, guard_fields

from .conftest import bad_check_digit, new_tckn, new_vkn, subcompany_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client, administrator):
    client.force_login(administrator)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    return client


@pytest.fixture
def on_platform(company):
    return SubCompany.objects.create(company=company, name="Alt A.Ş.", identifier=new_vkn(), remote_id=str(uuid.uuid4()),
                                     sync_state=SyncState.SYNCED)


def nothing_saved_or_sent(*models):
    for model in models:
        assert not model.objects.exists(), model
    assert not JobRun.objects.exists() and not RemoteCall.objects.exists()


def field_error(response, field, message):
    assert response.status_code == 200
    form = response.context["form"]
    assert field in form.errors, form.errors
    html = response.content.decode()
    assert message in html and f'id="id_{field}_errors"' in html  # shown under the field
    return form


@pytest.mark.parametrize("field,value,message", [
    # Random numbers under stable ids: xdist workers must collect the same names.
    pytest.param("identifier", bad_check_digit(new_vkn()), "its check digit does not match", id="vkn-check-digit"),
    pytest.param("identifier", bad_check_digit(new_tckn()), "its check digits do not match", id="tckn-check-digits"),
    ("identifier", "123456789", "Enter a tax number (VKN, 10 digits) or a national id (TCKN, 11 digits)."),
    ("identifier", "123456789012", "Enter a tax number (VKN, 10 digits) or a national id (TCKN, 11 digits)."),
    ("identifier", "12345abcde", "Enter a tax number (VKN, 10 digits)"),
    ("contact_phone", "4321234567", "ten digits starting with 5"),
    ("contact_phone", "0432 123 45 67", "ten digits starting with 5"),
    ("contact_phone", "532123456", "ten digits starting with 5"),
    ("quantity", "0", "The quantity must be a positive number"),
    ("quantity", "-5", "The quantity must be a positive number"),
    ("contact_email", "not-an-email", "Enter a valid email address."),
    # The platform refuses a domain without a dot (document 1, 2.2); Django alone lets localhost through.
    ("contact_email", "ayse@b", "The domain of an e-mail address has a dot"),
    ("contact_email", "ayse@localhost", "The domain of an e-mail address has a dot"),
    ("contact_email", "ayse@[IPv6:::1]", "The domain of an e-mail address has a dot"),
    ("name", "", "This field is required."),
    ("contact_full_name", "", "This field is required."),
])
def test_create_subcompany_field_rules(admin, field, value, message):
    response = form_post(admin, "/sub-companies/add/", subcompany_data(**{field: value}))
    field_error(response, field, message)
    nothing_saved_or_sent(SubCompany)


def test_an_email_domain_without_a_dot_is_refused_in_turkish(client, administrator):
    client.force_login(administrator)
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "tr"
    response = form_post(client, "/sub-companies/add/", subcompany_data(contact_email="ayse@localhost"))
    field_error(response, "contact_email", "E-posta adresinin alan adında nokta bulunur")
    nothing_saved_or_sent(SubCompany)


@pytest.mark.parametrize("value", ["ayse@firma.com.tr", "a.b+c@alt.example.com", "ayse@[127.0.0.1]"])
def test_an_email_the_platform_takes_is_accepted(value):
    validate_platform_email(value)


def test_the_record_refuses_it_too_as_the_admin_site_edits_it(on_platform):
    on_platform.contact_email = "ayse@localhost"
    with pytest.raises(ValidationError) as raised:
        on_platform.full_clean()
    assert "alan adında nokta bulunur" in " ".join(raised.value.message_dict["contact_email"])  # the default: Turkish


def test_a_valid_tckn_is_accepted(admin, rq_queue):
    response = form_post(admin, "/sub-companies/add/", subcompany_data(identifier=new_tckn()))
    record = SubCompany.objects.get()
    assert response.status_code == 302 and response.url == f"/sub-companies/{record.pk}/"
    assert record.sync_state == SyncState.QUEUED and JobRun.objects.get().name == "subcompany_push"


@pytest.mark.parametrize("value,message", [("0", "The quantity must be a positive number"),
                                           ("", "This field is required."), ("abc", "Enter a whole number.")])
def test_credit_quantity_must_be_positive(admin, on_platform, value, message):
    response = form_post(admin, f"/sub-companies/{on_platform.pk}/credit/", {"quantity": value, "show_over_usage": "on"})
    form = field_error(response, "quantity", message)
    assert form.fields["show_over_usage"].help_text  # its meaning is explained in the form
    nothing_saved_or_sent(SubCompanyOperation)


def test_show_over_usage_is_explained(admin, on_platform):
    html = admin.get(f"/sub-companies/{on_platform.pk}/credit/").content.decode()
    assert "showOverUsage" in html and "deduct the over-usage the company has already run up" in html


@pytest.mark.parametrize("types,message", [
    ([], "Choose at least one product."),
    (["6"], "6 is not one of the platform&#x27;s product types."),
    (["2", "99"], "99 is not one of the platform&#x27;s product types."),
    (["x"], "x is not one of the platform&#x27;s product types."),
])
def test_product_types_must_be_chosen_from_the_ten(admin, on_platform, types, message):
    response = form_post(admin, f"/sub-companies/{on_platform.pk}/products/", {"product_types": types})
    field_error(response, "product_types", message)
    nothing_saved_or_sent(SubCompanyOperation)


def test_the_product_form_lists_the_ten_types_by_name(admin, on_platform):
    html = admin.get(f"/sub-companies/{on_platform.pk}/products/").content.decode()
    for value, name in [(1, "Accounting"), (7, "E-dispatch note"), (13, "E-adisyon (restaurant bill)")]:
        assert f'value="{value}"' in html and name in html
    assert 'value="6"' not in html


def test_bulk_forms_check_their_fields_too(admin, on_platform):
    other = SubCompany.objects.create(company=on_platform.company, name="Alt B", remote_id=str(uuid.uuid4()),
                                      sync_state=SyncState.SYNCED)
    pks = [on_platform.pk, other.pk]
    response = confirm_post(admin, "/sub-companies/bulk/add_credit/", {"pk": pks, "confirm": "1", "quantity": "0"})
    field_error(response, "quantity", "The quantity must be a positive number")
    response = confirm_post(admin, "/sub-companies/bulk/add_products/",
                            {"pk": pks, "confirm": "1", "product_types": ["6"]})
    field_error(response, "product_types", "not one of the platform")
    response = confirm_post(admin, "/sub-companies/bulk/add_products/", {"pk": pks, "confirm": "1"})
    field_error(response, "product_types", "Choose at least one product.")
    nothing_saved_or_sent(SubCompanyOperation)


def test_a_credit_offer_sent_twice_is_one_request(admin, on_platform, rq_queue):
    """Back and send again, or a second tab: the offer already sent is shown, no second credit is handed out."""

    url = f"/sub-companies/{on_platform.pk}/credit/"
    page = admin.get(url).content.decode()
    guard = guard_fields(page)
    data = {**guard, "quantity": "500", "show_over_usage": "on"}
    assert admin.post(url, data).status_code == 302
    again = admin.post(url, data)
    operation = SubCompanyOperation.objects.get()
    assert again.status_code == 302 and again["Location"] == f"/sub-companies/requests/{operation.pk}/"
    assert JobRun.objects.count() == 1


def test_a_bulk_credit_offer_confirmed_twice_is_one_request(admin, on_platform, rq_queue):
    """Back on the confirmation page and confirm again: the request already sent, no second batch of credit."""

    url = "/sub-companies/bulk/add_credit/"
    page = admin.post(url, {"pk": [on_platform.pk]}).content.decode()
    guard = guard_fields(page)
    data = {**guard, "pk": [on_platform.pk], "confirm": "1", "quantity": "500"}
    assert admin.post(url, data).status_code == 302
    again = admin.post(url, data)
    operation = SubCompanyOperation.objects.get()
    assert again.status_code == 302 and again["Location"] == f"/sub-companies/requests/{operation.pk}/"
