"""The platform's front door: routing per service, authentication, fault switches, rate limits, paging.

Operations register themselves with @operation(service, method, pattern) in backoffice/sandbox/ops/;
"{name}" in a pattern captures one path segment and is passed to the handler as a keyword.
A handler takes a Call and returns something JSON-serialisable (or an HttpResponse), or raises ApiError.
"""

import json
import time
import uuid
from dataclasses import dataclass, field

from django.http import HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt

from . import faults, ratelimit
from .models import AccessToken, ApiKey, Customer, RequestLog, SandboxSetting

SERVICES = ("auth", "ticket", "invoice", "accounting", "ledger", "dispatch", "crm")
API_KEY_ONLY = ("crm",)  # document 1, section 5, rule 2: company management takes an API key only
MAX_PAGE_SIZE = 500  # document 1, section 8
TOKEN_PATH = ("auth", "POST", "/v1/token")
# Set in the WSGI environ: sandbox_serve can close a connection without answering (CAN_DROP), and the view
# asks it to (DROP). The request log shows such a request with status 0.
CAN_DROP, DROP = "sandbox.can_drop", "sandbox.drop"
NO_ANSWER = 0


class Dropped(Exception):
    """The sandbox was reset while this request slept in a fault: answer, but leave no trace."""


class NoAnswer(Exception):
    """An after_apply "drop" fault: the operation took effect, the caller gets no answer at all."""


class ApiError(Exception):
    def __init__(self, status: int, body, headers=None):
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}

    def response(self):
        response = JsonResponse(self.body, status=self.status, safe=False)
        for name, value in self.headers.items():
            response[name] = value
        return response


def problem(status: int, title: str, detail: str, **headers) -> ApiError:
    return ApiError(status, {"title": title, "detail": detail}, headers)


def binding_failed(errors: dict) -> ApiError:
    """The body does not fit the operation's model (a wrong JSON type, an unknown or misspelt field): 422 with
    the messages per field, as ASP.NET problem details carry them, and a detail naming each field."""
    detail = "; ".join(f"{name}: {' '.join(messages)}" for name, messages in errors.items())
    return ApiError(422, {"title": "One or more validation errors occurred.", "detail": detail, "errors": errors})


def invalid(field_name: str, message: str) -> ApiError:
    """Validation failure as the platform sends it: 422 with {field: [messages]}."""
    return ApiError(422, {field_name: [message]})


@dataclass
class Call:
    request: object
    service: str
    path: str  # relative to the service prefix, e.g. /v2/outboxinvoice/abc/status
    arrived: float = 0.0  # monotonic clock, the time rate limits count the request at
    customer: Customer | None = None
    settings: SandboxSetting | None = None
    kwargs: dict = field(default_factory=dict)

    @property
    def query(self):
        return SpelledQuery(self.request.GET)

    def json(self):
        try:
            return json.loads(self.request.body or b"null")
        except ValueError:
            raise invalid("body", "The request body is not valid JSON.") from None


class SpelledQuery:
    """The query string read as document 3 spells its names (issue 28): a name the operation asks for, sent in
    another letter case (SortedColumn, IsDesc, BranchId), is a 400 naming the spelling, never a filter, order or
    flag silently left out. Names the operation does not ask for are ignored, as the platform ignores them."""

    def __init__(self, query):
        self._query = query

    def _spelled(self, name: str) -> str:
        if name not in self._query:
            for given in self._query:
                if given.lower() == name.lower():
                    raise problem(400, "Validation failed", f"{given}: unknown query parameter; this operation "
                                                            f"spells it {name} (names are case-sensitive).")
        return name

    def get(self, name, default=None):
        return self._query.get(self._spelled(name), default)

    def getlist(self, name, default=None):
        return self._query.getlist(self._spelled(name), default)

    def __getitem__(self, name):
        return self._query[self._spelled(name)]

    def __contains__(self, name):
        return self._spelled(name) in self._query

    def __iter__(self):
        return iter(self._query)


# --- routing --------------------------------------------------------------------------------------

ROUTES: list[tuple[str, str, list[str], object]] = []


def operation(service: str, method: str, pattern: str):
    def register(handler):
        ROUTES.append((service, method, ratelimit.split(pattern), handler))
        return handler

    return register


def resolve(service: str, method: str, path: str):
    """(handler, kwargs), or None when no operation has this path, or "method" when only the method differs.

    Where two patterns match, a literal segment goes before a placeholder, the first segment where they differ
    deciding (as ASP.NET ranks routes): /v1/currentaccount/address before /v1/currentaccount/{id}, whatever
    module registered its operations first."""
    segments = ratelimit.split(path)
    path_known, best, best_rank = False, None, None
    for route_service, route_method, pattern, handler in ROUTES:
        if route_service != service or len(pattern) != len(segments):
            continue
        kwargs = {}
        for wanted, got in zip(pattern, segments):
            if wanted.startswith("{"):
                kwargs[wanted.strip("{}")] = got
            elif wanted.lower() != got.lower():
                break
        else:
            if route_method != method:
                path_known = True
                continue
            rank = tuple(not wanted.startswith("{") for wanted in pattern)
            if best is None or rank > best_rank:
                best, best_rank = (handler, kwargs), rank
    return best or ("method" if path_known else None)


# --- paging: the one place that knows both envelope spellings ---------------------------------------

def page_params(call: Call, index_name="pageIndex", size_name="pageSize"):
    """(page_index, page_size) from the query; both required, index from 1, size 1..500."""
    values = []
    for name, low, high in ((index_name, 1, None), (size_name, 1, MAX_PAGE_SIZE)):
        raw = call.query.get(name)
        if raw in (None, ""):
            raise invalid(name, f"The {name} field is required.")
        try:
            value = int(raw)
        except ValueError:
            raise invalid(name, f"The value '{raw}' is not valid for {name}.") from None
        if value < low or (high is not None and value > high):
            limit = f"between {low} and {high}" if high else f"at least {low}"
            raise invalid(name, f"{name} must be {limit}.")
        values.append(value)
    return tuple(values)


def envelope(items: list, total: int, page_index: int, page_size: int, capitalised=False) -> dict:
    """The paged envelope of document 2, 2.5, over one page already cut: camelCase (most services) or capitalised
    (the ledger service)."""
    pages = -(-total // page_size) if total else 0
    body = {"pageIndex": page_index, "pageSize": page_size, "totalCount": total, "totalPages": pages,
            "hasNextPage": page_index < pages, "hasPreviousPage": page_index > 1, "items": items}
    return {name[0].upper() + name[1:]: value for name, value in body.items()} if capitalised else body


def paged(items: list, page_index: int, page_size: int, capitalised=False) -> dict:
    """The envelope of one page of a list built in memory."""
    start = (page_index - 1) * page_size
    return envelope(items[start:start + page_size], len(items), page_index, page_size, capitalised)


# --- authentication ---------------------------------------------------------------------------------

def authenticate(request, settings: SandboxSetting):
    """(customer, via_bearer) or raises 401. Document 1, section 5: x-api-key or a live bearer token (one that
    has not outlived its lifetime, nor served token_max_uses calls when that is set)."""
    key = request.headers.get("x-api-key")
    if key:
        api_key = ApiKey.objects.select_related("customer").filter(key=key).first()
        if api_key is None:
            raise problem(401, "Unauthorized", "The API key is not valid.")
        return api_key.customer, False
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        access = AccessToken.objects.select_related("customer").filter(token=token.strip()).first()
        if access is None or access.expires_at <= timezone.now() or not access.use(settings.token_max_uses):
            raise problem(401, "Unauthorized", "The access token is not valid or has expired.")
        return access.customer, True
    raise problem(401, "Unauthorized", "Credentials are missing: send x-api-key or Authorization: Bearer.")


# --- the view ---------------------------------------------------------------------------------------

@csrf_exempt
def service_view(request, service, rest=""):
    # sandbox_serve stamps the request when its first line is read; runserver does not.
    arrived = request.META.get("sandbox.arrived") or time.monotonic()
    call = Call(request=request, service=service, path="/" + rest.strip("/"), arrived=arrived)
    try:
        response = handle(call)
    except ApiError as error:
        response = error.response()
    except Dropped:
        return JsonResponse({"title": "Service Unavailable", "detail": "The sandbox was reset."}, status=503)
    except NoAnswer:
        RequestLog.objects.create(method=request.method, path=request.path[:500], status=NO_ANSWER,
                                  customer=call.customer)
        if request.META.get(CAN_DROP):
            request.META[DROP] = True  # sandbox_serve sends nothing and closes the connection
            return HttpResponse(status=502)
        # Another server (runserver) cannot drop a connection: the nearest thing is a gateway error.
        return JsonResponse({"title": "Bad Gateway", "detail": "Connection dropped after the operation took "
                                                               "effect (serve with sandbox_serve for a real drop)."},
                            status=502)
    response["X-Correlation-Id"] = str(uuid.uuid4())
    RequestLog.objects.create(method=request.method, path=request.path[:500], status=response.status_code,
                              customer=call.customer)
    return response


def handle(call: Call):
    """Auth, expire_tokens, storm_429, rate limit, latency, timeout, error_rate, the operation, timeout_after,
    then an after_apply error or drop.

    The rate limit comes after the storm (a storm uses up no slot) and before the slow and failing
    faults (an injected 5xx still counted as a call, as a gateway in front of a failing backend would).
    """
    request = call.request
    method = request.method
    call.settings = SandboxSetting.load()
    plan = faults.plan(request.path, method)
    via_bearer = False
    if (call.service, method, call.path) != TOKEN_PATH:
        call.customer, via_bearer = authenticate(request, call.settings)
    if via_bearer and call.service in API_KEY_ONLY:
        raise problem(401, "Unauthorized", "The company-management service requires an API key (x-api-key header, "
                                           "created in the portal); a bearer token is not accepted here.")
    if via_bearer and plan.expire_tokens():
        raise problem(401, "Unauthorized", "The access token has expired.")
    storm = plan.storm_429()
    if storm:
        raise problem(429, "Too Many Requests", "Rate limit exceeded.", **{"Retry-After": str(storm)})
    if call.customer is not None:
        wait = ratelimit.check(call.customer.pk, call.customer.tier, call.service, method, call.path,
                               call.settings.rate_limit_scale, at=call.arrived)
        if wait:
            raise problem(429, "Too Many Requests",
                          f"Rate limit exceeded. Try again in {wait} seconds.", **{"Retry-After": str(wait)})
    delay = plan.latency_ms() / 1000 + plan.timeout_seconds()
    if delay and not faults.sleep(delay):
        raise Dropped
    error_status = plan.error_status()
    if faults.success(error_status):  # the platform's refusal inside a success answer (document 1, section 7)
        raise ApiError(error_status, faults.refusal(call.service, "The sandbox was told to refuse this request."))
    if error_status:
        raise problem(error_status, "Injected fault", "The sandbox was told to fail this request.")
    found = resolve(call.service, method, call.path)
    if found is None:
        raise problem(404, "Not Found", f"No operation at {method} {request.path}.")
    if found == "method":
        raise problem(405, "Method Not Allowed", f"{method} is not allowed at {request.path}.")
    handler, call.kwargs = found
    try:
        result = handler(call, **call.kwargs)
    except ApiError:
        _after_apply(plan, call.service)
        raise
    _after_apply(plan, call.service)
    if isinstance(result, HttpResponse):
        return result
    return JsonResponse(result, safe=False)


def _after_apply(plan, service: str) -> None:
    """Faults after the operation has run (and committed, each operation commits its own transaction): a
    timeout_after rule keeps the caller waiting; an after_apply rule answers its error status instead of the
    outcome, or no answer at all."""
    late = plan.timeout_seconds(after=True)
    if late and not faults.sleep(late):
        raise Dropped
    fault = plan.after_apply()
    if fault is None:
        return
    mode, status = fault
    if mode == "drop":
        raise NoAnswer
    if faults.success(status):
        raise ApiError(status, faults.refusal(service, "The sandbox was told to refuse this request after applying "
                                                       "it."))
    raise problem(status, "Injected fault", "The sandbox was told to fail this request after applying it.")


def server_error(request, *args, **kwargs):
    return JsonResponse({"title": "Internal Server Error", "detail": "The sandbox failed."}, status=500)


def not_found(request, *args, **kwargs):
    return JsonResponse({"title": "Not Found", "detail": f"No operation at {request.method} {request.path}."},
                        status=404)
