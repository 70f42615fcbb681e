"""Token issuer: POST {auth_url}/v1/token (document 1, section 5; response shape from document 4)."""

import hmac

from ..api import ApiError, Call, invalid, operation, problem
from ..models import AccessToken, ServiceUser

CLIENT_ID = "serviceApi"


@operation("auth", "POST", "/v1/token")
def token(call: Call):
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
