# The two commands: `make run` (everything up, demo data loaded) and `make test` (the whole suite).
# Both create .venv from python3 (3.11 or newer) and install only when the requirements changed.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Every target here is development (DEBUG, the development secret key): settings.DEVELOPMENT. A production
# start (docker/) never runs make, and without this variable the settings refuse to run on made-up secrets.
export DJANGO_DEVELOPMENT ?= 1
# Extra pytest arguments, e.g. make test PYTEST_ARGS="-m 'not browser' -x" or PYTEST_ARGS=tests/core/test_jobs.py
PYTEST_ARGS ?=
# xdist workers: one more than the cores (many tests wait on a sandbox, a worker process or a browser), each with its
# own database copy, sandbox server and Redis database.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
# Translations: every .po is compiled when it is newer than its .mo.
PO_FILES := $(shell find backoffice -path '*/LC_MESSAGES/*.po' 2>/dev/null)
MO_FILES := $(PO_FILES:.po=.mo)

# apt-get as root only; anyone else is told what is missing. Usage: $(call apt_install,PACKAGE ...)
apt_install = if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	echo "installing Debian package(s): $(1)"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
	else echo "note: Debian package(s) $(1) missing and not installable here (not root or no apt-get)"; fi

.PHONY: help run test test-deep bench bench-scale chaos venv install migrate seed messages test-tools clean distclean

help:
	@echo "make run      migrate, load demo data, start web (:8000), sandbox (:8001), worker, cron, Redis"
	@echo "make test     install what the tests need and run the whole suite"
	@echo "make test-deep  the property tests with ten times the examples, random (a release, a nightly run)"
	@echo "make bench    run the benchmarks (tests/benchmarks, marker bench)"
	@echo "make bench-scale  at scale: 1, 2, 4 workers against a platform 50 ms away; fairness between companies;"
	@echo "                  a worker's memory over 20,000 tickets (tests/benchmarks, marker scale)"
	@echo "make chaos    1,000 documents through real workers under faults, then the mirror against the sandbox"
	@echo "make install | migrate | seed | messages | clean | distclean"

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null || { \
		echo "error: Python 3.11 or newer is needed as '$(PYTHON)' (found: $$($(PYTHON) --version 2>&1))." >&2; \
		echo "       Install it, or point to one: make PYTHON=/path/to/python3.11 ..." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

venv: $(PY)

$(STAMP): requirements.txt requirements-dev.txt requirements-oracle.txt | $(PY)
	$(PY) -m pip install --disable-pip-version-check -q -r requirements-dev.txt
	$(PY) -m pip install --disable-pip-version-check -q --no-deps -r requirements-oracle.txt
	@touch $@

install: $(STAMP)

%.mo: %.po
	@command -v msgfmt >/dev/null 2>&1 || { $(call apt_install,gettext); }
	@if command -v msgfmt >/dev/null 2>&1; then echo "msgfmt $<"; msgfmt --check-format -o $@ $<; \
	elif [ -f $@ ]; then echo "note: no msgfmt (Debian gettext): keeping $@ as it is"; \
	else echo "error: msgfmt (Debian gettext) is needed to compile $<" >&2; exit 1; fi

messages: $(STAMP)
	@command -v xgettext >/dev/null 2>&1 || { $(call apt_install,gettext); }
	$(PY) manage.py makemessages -l tr --no-obsolete --ignore=.venv --ignore=tests --ignore=staticfiles --ignore=node_modules
	$(PY) manage.py compilemessages --ignore=.venv

migrate: $(STAMP) $(MO_FILES)
	$(PY) manage.py migrate --noinput
	@if [ -f backoffice/sandbox/settings.py ]; then \
		$(PY) manage.py migrate --noinput --settings=backoffice.sandbox.settings; fi

seed: migrate
	$(PY) manage.py seed_demo

# scripts/run.py migrates both databases and seeds the demo data itself before starting everything.
run: $(STAMP) $(MO_FILES)
	$(PY) scripts/run.py

# Debian packages the tests use: Chromium for the Playwright browser tests, docker-compose to validate
# docker/compose.yml, iso-codes for the code-list refresh (scripts/refresh_codelists.py). Those tests skip,
# saying why, when a package is missing and cannot be installed.
test-tools:
	@missing=""; \
	[ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	command -v docker-compose >/dev/null 2>&1 || missing="$$missing docker-compose"; \
	[ -d /usr/share/iso-codes/json ] || missing="$$missing iso-codes"; \
	if [ -n "$$missing" ]; then $(call apt_install,$$missing); fi

# pytest's exit code 5 means it collected nothing: for this suite that is a failure, said out loud.
# Parallel (xdist): tests handed out as workers free up, the browser tests as one group on one worker
# (tests/conftest.py); the 15 slowest printed.
PYTEST_PARALLEL = -n $(TEST_WORKERS) --dist loadgroup --durations=15
test: $(STAMP) $(MO_FILES) test-tools
	@$(PY) -m pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no test: failing" >&2; exit 1; fi; exit $$rc

# The property tests (Hypothesis) with random examples, ten times as many as in make test (tests/properties.py):
# for a release or a nightly run.
test-deep: $(STAMP) $(MO_FILES) test-tools
	@HYPOTHESIS_PROFILE=deep $(PY) -m pytest $(PYTEST_PARALLEL) -m hypothesis $(PYTEST_ARGS)

# The workers the benchmarks start run with DEBUG off, as in production (DEBUG keeps and formats every query).
bench: $(STAMP) $(MO_FILES)
	@DJANGO_DEBUG=0 $(PY) -m pytest tests/benchmarks -m "bench and not scale" -s $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make bench: no benchmark collected: failing" >&2; exit 1; fi; exit $$rc

# At scale (issue 32): the sandbox 50 ms away with 1, 2 and 4 worker processes (test_scale.py); one company's 20,000
# tickets against another's invoices (test_fairness.py); a worker's memory over 20,000 tickets (test_memory.py).
bench-scale: $(STAMP) $(MO_FILES)
	@DJANGO_DEBUG=0 $(PY) -m pytest tests/benchmarks -m scale -s $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make bench-scale: no benchmark collected: failing" >&2; exit 1; fi; exit $$rc

clean:
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +
	rm -rf staticfiles .pytest_cache .hypothesis tests/browser/artifacts

# Also the virtual environment and var/ (the development databases and the demo secrets).
distclean: clean
	rm -rf $(VENV) var

# At most 10 minutes: real workers, Redis restarts, kill -9, 500s after applying, 429 storms, expiring tokens;
# then the mirror is held against the sandbox (docs/CHAOS.md). E.g. make chaos CHAOS_ARGS="--seed 7 --keep"
chaos: $(STAMP) $(MO_FILES)
	$(PY) scripts/chaos.py $(CHAOS_ARGS)
