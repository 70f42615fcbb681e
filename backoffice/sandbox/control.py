"""Control API for tests and `make run` seeding: /_control/..., only with SANDBOX_CONTROL_TOKEN set.

Every request must carry X-Sandbox-Control: <that token>; anything else is a plain 404, as if the
API did not exist.
"""

import hmac
import json

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

from . import faults, ratelimit
from .api import NO_ANSWER
from .models import AccessToken, ApiKey, Customer, FaultRule, RequestLog, SandboxSetting, ServiceUser

FAULT_FIELDS = ("path", "method", "error_rate", "error_status", "latency_ms", "latency_jitter_ms", "timeout_seconds",
                "timeout_after", "after_apply", "storm_429", "retry_after", "expire_tokens", "remaining")
SETTING_FIELDS = ("token_lifetime_seconds", "token_max_uses", "rate_limit_scale", "ticket_processing_seconds",
                  "ticket_error_rate", "export_ready_seconds", "clock_offset_seconds")


class BadRequest(Exception):
    pass


def _allowed(request) -> bool:
    token = settings.SANDBOX_CONTROL_TOKEN
    given = request.headers.get("X-Sandbox-Control", "")
    return bool(token) and hmac.compare_digest(given.encode(), token.encode())


def _body(request) -> dict:
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        raise BadRequest("body is not JSON") from None
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    return body


def reset(body):
    with transaction.atomic():
        FaultRule.objects.all().delete()
        AccessToken.objects.all().delete()
        RequestLog.objects.all().delete()
        SandboxSetting.objects.all().delete()
        SandboxSetting.load()  # again with the fields' defaults
        if body.get("customers"):
            Customer.objects.all().delete()
    ratelimit.limiter.clear()
    faults.interrupt_sleepers()
    return {"reset": True}


def customer_create(body):
    """Create or update a customer (keyed by customer_unique_id when given) with its credentials."""
    if not body.get("name"):
        raise BadRequest("name is required")
    fields = {"name": body["name"], "credits": int(body.get("credits", 1000)),
              "listing_permission": bool(body.get("listing_permission", True))}
    with transaction.atomic():
        if body.get("customer_unique_id"):
            customer, _ = Customer.objects.update_or_create(customer_unique_id=body["customer_unique_id"],
                                                            defaults=fields)
        else:
            customer = Customer.objects.create(**fields)
        if body.get("api_key"):
            ApiKey.objects.update_or_create(key=body["api_key"], defaults={"customer": customer})
        if body.get("username"):
            if not body.get("password"):
                raise BadRequest("password is required with username")
            ServiceUser.objects.update_or_create(username=body["username"],
                                                 defaults={"customer": customer, "password": body["password"]})
    return {"id": customer.pk, "customer_unique_id": str(customer.customer_unique_id), "name": customer.name,
            "credits": customer.credits, "tier": customer.tier, "api_key": body.get("api_key"),
            "username": body.get("username")}


def fault_create(body):
    unknown = set(body) - set(FAULT_FIELDS)
    if unknown:
        raise BadRequest(f"unknown fields: {', '.join(sorted(unknown))}")
    fields = {name: value for name, value in body.items() if value is not None or name == "remaining"}
    if "method" in fields:
        fields["method"] = fields["method"].upper()
    rule = FaultRule(**fields)
    rule.full_clean()
    rule.save()
    return {"id": rule.pk}


def faults_delete(body):
    deleted, _ = FaultRule.objects.all().delete()
    return {"deleted": deleted}


def settings_update(body):
    setting = SandboxSetting.load()
    for name in SETTING_FIELDS:
        if body.get(name) is not None:
            setattr(setting, name, body[name])
    setting.full_clean()
    setting.save()
    return {name: getattr(setting, name) for name in SETTING_FIELDS}


def stats(body):
    """Requests per path and status; tokens_issued since the reset; responses_401 (expired or refused
    credentials); no_answer: requests an after_apply "drop" fault left unanswered (status 0 in the log)."""
    rows = RequestLog.objects.values("method", "path", "status").annotate(count=Count("pk")).order_by(
        "path", "method", "status")
    by_status = {}
    for row in RequestLog.objects.values("status").annotate(count=Count("pk")):
        by_status[str(row["status"])] = row["count"]
    return {"requests": list(rows), "tokens_issued": AccessToken.objects.count(), "by_status": by_status,
            "responses_401": by_status.get("401", 0), "no_answer": by_status.get(str(NO_ANSWER), 0)}


ACTIONS = {
    ("POST", "reset"): reset,
    ("POST", "customers"): customer_create,
    ("POST", "faults"): fault_create,
    ("DELETE", "faults"): faults_delete,
    ("POST", "settings"): settings_update,
    ("GET", "stats"): stats,
}


def control_action(method: str, name: str):
    """Register a service module's own control action (e.g. bulk data for benchmarks) at /_control/<name>."""

    def register(handler):
        ACTIONS[(method, name)] = handler
        return handler

    return register


@csrf_exempt
def control_view(request, action):
    handler = ACTIONS.get((request.method, action.strip("/")))
    if not _allowed(request) or handler is None:
        return JsonResponse({"title": "Not Found", "detail": "No such path."}, status=404)
    try:
        body = _body(request) if request.method == "POST" else {}
        return JsonResponse(handler(body))
    except ValidationError as error:
        return JsonResponse({"title": "Bad Request", "detail": error.message_dict}, status=400)
    except (BadRequest, ValueError, TypeError) as error:
        return JsonResponse({"title": "Bad Request", "detail": str(error)}, status=400)
