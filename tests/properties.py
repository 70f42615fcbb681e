"""Hypothesis in the suite, declared once (tests/conftest.py loads it before any test module is imported).

`make test` (profile "suite"): every property runs the same examples every run (derandomised, no example
database), so a run's time and outcome do not change from one run to the next. `make test-deep` (profile
"deep", HYPOTHESIS_PROFILE=deep): random examples, DEEP_FACTOR times as many, for a release or a nightly run.
A property says its own count through examples(n), never a bare max_examples.
"""

import os

from hypothesis import settings

DEEP_FACTOR = 10

settings.register_profile("suite", derandomize=True, database=None, deadline=None, max_examples=40,
                          print_blob=True)
settings.register_profile("deep", derandomize=False, database=None, deadline=None, max_examples=40 * DEEP_FACTOR,
                          print_blob=True)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "suite")
settings.load_profile(PROFILE)


def examples(count: int) -> int:
    """A property's example count in this run: as written in the suite, DEEP_FACTOR times that in the deep run."""
    return count * DEEP_FACTOR if PROFILE == "deep" else count
