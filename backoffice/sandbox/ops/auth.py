"""Token issuer: POST {auth_url}/v1/token (document 1, section 5; response shape from document 4)."""

import hmac

from ..api import ApiError, Call, invalid, operation, problem
from ..models import AccessToken, ServiceUser

CLIENT_ID = "serviceApi"


FORM = "application/x-www-form-urlencoded"


def _check_headers(request) -> None:
    """Document 1, section 5, rule 3: the token call carries Cache-Control: no-cache and a form body."""
    content_type = request.headers.get("Content-Type", "").split(";")[0].strip().lower()
    if content_type != FORM:
        raise problem(400, "Bad Request", f"Content-Type must be {FORM} (got '{content_type or 'none'}'): the "
                                          "token request is a form with username, password and client_id.")
    directives = [part.strip().lower() for part in request.headers.get("Cache-Control", "").split(",")]
    if "no-cache" not in directives:
        raise problem(400, "Bad Request", "The token request needs the header Cache-Control: no-cache.")


@operation("auth", "POST", "/v1/token")
def token(call: Call):
    _check_headers(call.request)
    form = call.request.POST
    missing = {name: [f"The {name} field is required."] for name in ("username", "password", "client_id")
               if not form.get(name)}
    if missing:
        raise ApiError(422, missing)
    if form["client_id"] != CLIENT_ID:
        raise invalid("client_id", "The client_id is not valid.")
    user = ServiceUser.objects.select_related("customer").filter(username=form["username"]).first()
    if user is None or not hmac.compare_digest(user.password.encode(), form["password"].encode()):
        raise problem(401, "Unauthorized", "The user name or password is not correct.")
    lifetime = call.settings.token_lifetime_seconds
    access = AccessToken.issue(user.customer, lifetime)
    call.customer = user.customer
    # expires_in is a string on the real platform.
    return {"access_token": access.token, "refresh_token": "", "expires_in": str(lifetime), "token_type": "Bearer"}
