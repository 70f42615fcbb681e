"""What a failure is, in the user's language: the texts of a failed platform call, kept on the record and shown
on its page. Refusals of the company's credentials name who can fix them (an administrator) and how; our own
failures are never worded or headed as the platform's refusal (issue 9). Below the models, which show a
record's last error through error_heading() and error_text()."""

from django.utils.translation import gettext as _

from backoffice.remote import endpoints, errors
from backoffice.remote.errors import ApiKeyRequired, CredentialsUnsendable, RemoteError


def credentials_refused_text() -> str:
    return _("The platform did not accept the company's credentials (API key or service user). An administrator "
             "must correct them on the company page and test the connection.")


def permission_refused_text(operation: str = "") -> str:
    """A 403, naming the permission the operation needs where the documents name one (endpoints.PERMISSIONS)."""
    if endpoints.PERMISSIONS.get(operation) == endpoints.LISTING:
        return _("The platform accepted the company's credentials but they lack the e-ticket listing permission, "
                 "which the ticket reports need. An administrator must have it granted to the API key or service "
                 "user in the platform's portal, then test the connection on the company page.")
    return _("The platform accepted the company's credentials but does not allow them this operation (no "
             "permission). An administrator must have the permission granted in the platform's portal, then test "
             "the connection on the company page.")


def credential_label(field: str) -> str:
    labels = {"api_key": _("API key"), "service_username": _("service user name"),
              "service_password": _("service user password")}
    return labels.get(field, field)


def unsendable_text(field: str) -> str:
    return _("The company's %(field)s contains characters that cannot be sent (only printable ASCII letters, digits "
             "and signs are allowed); nothing was sent to the platform. An administrator must correct it on the "
             "company page and test the connection.") % {"field": credential_label(field)}


def api_key_required_text() -> str:
    return _("Company management takes only an API key (the platform refuses a service user's token there), and "
             "this company has none; nothing was sent. An administrator must add the API key on the company page "
             "(the service user can stay for the documents).")


def failure(exc: RemoteError) -> tuple[str, str]:
    """(message to keep on the record, ErrorSource value) of a failed platform call."""
    source = getattr(exc, "source", "") or errors.LOCAL
    if isinstance(exc, CredentialsUnsendable):
        return unsendable_text(exc.field), source
    if isinstance(exc, ApiKeyRequired):
        return api_key_required_text(), source
    if source == errors.CREDENTIALS:
        return credentials_refused_text(), source
    if source == errors.PERMISSION:
        return permission_refused_text(getattr(exc, "operation", "")), source
    if source == errors.NETWORK:
        return network_text(exc), source
    return exc.user_message(), source


def network_text(exc) -> str:
    """No answer, in the reader's language; the technical reason in brackets for whoever investigates."""
    return _("The platform could not be reached or did not answer in time (%(reason)s). If it keeps happening, "
             "check the company's service URLs and the network.") % {"reason": exc.user_message()}


def error_heading(source: str) -> str:
    """Heading of a record's error alert, by ErrorSource."""
    headings = {
        errors.PLATFORM: _("The platform refused"),
        errors.CREDENTIALS: _("The company's credentials were refused"),
        errors.PERMISSION: _("The company's credentials lack a permission"),
        errors.NETWORK: _("No answer from the platform"),
        errors.LOCAL: _("Sending failed here, before the platform was reached"),
    }
    return headings.get(source, _("Sending failed"))


def error_text(source: str, message: str) -> str:
    """A record's last error as shown: a refusal of the credentials in the reader's language (the stored
    text is in the language of the worker that wrote it), anything else as kept."""
    if not message:
        return ""
    if source == errors.CREDENTIALS:
        return credentials_refused_text()
    if source == errors.PERMISSION:
        return permission_refused_text()
    return message
