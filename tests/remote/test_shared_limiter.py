"""Four worker processes, one company, one rule: the shared window lets them use the platform's
allowance without a single 429 (document 1, section 8; issue 2 acceptance)."""

import multiprocessing
import os
import time
import uuid

import pytest

from backoffice.remote.ratelimit import RULES_BY_NAME, RateLimiter

from . import hammer

WORKERS = 4
WINDOWS = 2  # the second window's burst at 5.5 s (our margin) shows the sharing; a third adds only time
WINDOW_SECONDS = 5.0  # the status rule's 180 minutes, scaled down on both sides
# The margin of production's shortest window (1 minute: 2 %, 1.2 s), not the 0.5 s floor a 5 s window would get: one
# call stalled 645 ms on a busy machine, longer than that floor, and earned a 429 (RateLimiter.window).
MARGIN = 1.2


@pytest.mark.slow
def test_four_processes_share_one_window_without_429(sandbox, sandbox_company, redis_connection):
    """Slow (over 10 s): the shared limiter's one real-time check, four processes over two windows of 5 s, each
    process's limiter with production's smallest safety margin (MARGIN)."""
    rule = RULES_BY_NAME["status_query"]
    requests_per_window, minutes = rule.limit(sandbox_company.tier)
    assert (sandbox_company.tier, requests_per_window, minutes) == (1, 100, 180)
    scale = WINDOW_SECONDS / (minutes * 60)
    sandbox.configure(rate_limit_scale=scale)

    context = multiprocessing.get_context("spawn")
    ready, results, go, start = context.Queue(), context.Queue(), context.Event(), context.Value("d", 0.0)
    args = (os.environ["REDIS_URL"], scale, f"test-hammer:{uuid.uuid4().hex}", str(sandbox_company.pk),
            sandbox_company.base_urls, sandbox_company.api_key, WINDOWS * WINDOW_SECONDS, ready, go, start, results,
            MARGIN)
    processes = [context.Process(target=hammer.run, args=args) for _ in range(WORKERS)]
    for process in processes:
        process.start()
    for _ in processes:  # every worker imported and connected: start them together
        ready.get(timeout=60)
    start.value = start_at = time.time() + 0.2
    stop_at = start_at + WINDOWS * WINDOW_SECONDS
    go.set()
    counts = [results.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=10)

    ok = sum(c["ok"] for c in counts)
    # A sliding window of W admits N calls in [0, W), N more in [W, 2W), ...: over WINDOWS * W from
    # the common start the platform allows N * elapsed / W calls.
    allowed = requests_per_window * (stop_at - start_at) / WINDOW_SECONDS
    ratio = ok / allowed
    # Over a long run our safety margin caps the rate at W / (W + margin) of the platform's: for the real windows
    # (this rule's 180 minutes, the PDF rule's 1 minute), what the margin costs in production.
    real = RateLimiter(redis_connection)
    ceiling = min(minutes * 60 / real.window(rule, 1), 60 / real.window(RULES_BY_NAME["pdf_generation"], 1))
    stats = sandbox.stats()
    print(f"\nshared limiter: {ok} calls went through of {allowed:.0f} allowed ({ratio:.1%}; long-run ceiling "
          f"{ceiling:.1%}); per worker {counts}; sandbox statuses {stats['by_status']}")
    assert all(process.exitcode == 0 for process in processes)
    assert "429" not in stats["by_status"] and sum(c["platform_429"] for c in counts) == 0
    assert sum(c["errors"] for c in counts) == 0
    assert stats["by_status"] == {"200": ok + WORKERS}  # and one warm-up call each
    assert ratio >= 0.9 and ceiling >= 0.9
