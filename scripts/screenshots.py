#!/usr/bin/env python3
"""Screenshots of the main pages at 1400x900 and 390x844 into docs/screenshots/ (NAME-1400.png, NAME-390.png).

    .venv/bin/python scripts/screenshots.py            # every page, both widths
    .venv/bin/python scripts/screenshots.py -k 390     # one width (any pytest argument goes through)

It starts its own live server with a working day's data (tests/browser/test_layout.py: a company with a long
name, tickets in every status with ordinary and huge amounts, a report, a passenger list, sub-companies from
the sandbox's usage report, jobs, members), Redis and the sandbox (tests/services_plugin.py), and drives
Debian's Chromium (/usr/bin/chromium, headless, --no-sandbox --disable-gpu, no background networking) with
Playwright in Turkish and Istanbul time. The same run checks that no page scrolls sideways and that no
table's status badge is cut off or out of sight: it fails, listing them, when one is.
"""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST = "tests/browser/test_layout.py"


def main(argv: list[str]) -> int:
    python = ROOT / ".venv" / "bin" / "python"
    env = {**os.environ, "SCREENSHOTS": "1"}  # tests/browser/conftest.py: save into docs/screenshots/
    env.setdefault("DJANGO_DEVELOPMENT", "1")  # as `make`: the development settings
    command = [str(python if python.exists() else sys.executable), "-m", "pytest", TEST, "-q", "-m", "browser",
               "-p", "no:cacheprovider", *argv]
    code = subprocess.call(command, cwd=ROOT, env=env)
    folder = ROOT / "docs" / "screenshots"
    names = sorted(p.name for p in folder.glob("*-1400.png")) + sorted(p.name for p in folder.glob("*-390.png"))
    print(f"{len(names)} screenshots in {folder.relative_to(ROOT)}/: " + ", ".join(names))
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
