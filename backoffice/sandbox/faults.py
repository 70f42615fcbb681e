"""Fault switches: which rules hit this request, each effect asked for in the documented order.

A rule is claimed (one of its `remaining` uses taken) the first time one of its effects actually
fires on a request: an expire_tokens rule does nothing to an API-key request, and an error_rate rule
whose dice say "no" does nothing either, so neither uses up a try.

An error rule of a 2xx error_status answers the platform's refusal inside a success answer (document 1,
section 7: "null, or Error"): that status with a body whose Error is set, in the shape of the path's
service (see refusal); the API answers it.
"""

import random
import threading
from fnmatch import fnmatchcase

from .models import FaultRule


# The Error of a refusal in a 2xx answer, per service (document 1, section 7): the ticket service's object
# with string fields title and detail, the accounting service's text; the dispatch service's object has inner
# fields the documents do not give (one member here), and so has any other service's.
ERROR_SHAPES = {
    "ticket": lambda detail: {"title": "Injected refusal", "detail": detail},
    "accounting": lambda detail: detail,
}


def refusal(service: str, detail: str) -> dict:
    """The body of a refusal answered with a 2xx status: {"Error": ...} in the shape of the service's."""
    shape = ERROR_SHAPES.get(service, lambda text: {"Message": text})
    return {"Error": shape(detail)}


def success(status: int) -> bool:
    return 200 <= status < 300


class Plan:
    def __init__(self, rules):
        self.rules = rules
        self.claimed, self.spent = set(), set()

    def _fires(self, rule) -> bool:
        if rule.pk in self.claimed:
            return True
        if rule.pk in self.spent or not rule.claim():
            self.spent.add(rule.pk)
            return False
        self.claimed.add(rule.pk)
        return True

    def expire_tokens(self) -> bool:
        return any(rule.expire_tokens and self._fires(rule) for rule in self.rules)

    def storm_429(self) -> int:
        """Retry-After seconds of the first storm that fires, 0 when none."""
        return next((max(1, rule.retry_after) for rule in self.rules if rule.storm_429 and self._fires(rule)), 0)

    def latency_ms(self) -> float:
        """The fixed latency of every rule that fires, each with its random extra (0 to latency_jitter_ms)."""
        return sum(rule.latency_ms + random.uniform(0, rule.latency_jitter_ms) for rule in self.rules
                   if (rule.latency_ms or rule.latency_jitter_ms) and self._fires(rule))

    def timeout_seconds(self, after: bool = False) -> float:
        """The sleep before the operation, or (after) the one after it ran: the platform acted, the caller hears
        nothing in time."""
        return max([rule.timeout_seconds for rule in self.rules
                    if rule.timeout_seconds and rule.timeout_after == after and self._fires(rule)], default=0)

    def error_status(self) -> int:
        """The status of the first error rule (before the operation) whose dice say fail, 0 when none."""
        rule = self._failing(after_apply=False)
        return rule.error_status if rule else 0

    def after_apply(self) -> tuple[str, int] | None:
        """After the operation ran and committed: ("error", status) or ("drop", 0) of the first after_apply
        rule whose dice say fail, None when none does."""
        rule = self._failing(after_apply=True)
        return (rule.after_apply, rule.error_status) if rule else None

    def _failing(self, *, after_apply: bool):
        for rule in self.rules:
            if bool(rule.after_apply) == after_apply and rule.error_rate > 0 and random.random() < rule.error_rate \
                    and self._fires(rule):
                return rule
        return None


def plan(path: str, method: str) -> Plan:
    rules = [
        rule for rule in FaultRule.objects.exclude(remaining=0)
        if rule.method.upper() in ("*", method.upper()) and fnmatchcase(path, rule.path or "*")
    ]
    return Plan(rules)


# Requests asleep in a latency or timeout fault wake up when the sandbox is reset, and are then
# dropped unlogged: a test's stats never see a request left over from the test before.
_wake = threading.Condition()
_generation = 0


def interrupt_sleepers():
    global _generation
    with _wake:
        _generation += 1
        _wake.notify_all()


def sleep(seconds: float) -> bool:
    """Sleep; False when a reset came in between."""
    with _wake:
        started = _generation
        _wake.wait_for(lambda: _generation != started, timeout=seconds)
        return _generation == started
