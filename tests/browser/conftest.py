import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# `SCREENSHOTS=1 make test` refreshes the README's pictures; otherwise they go to an ignored folder, so a
# test run leaves the tree clean.
SCREENSHOT_DIR = ROOT / "docs" / "screenshots" if os.environ.get("SCREENSHOTS") == "1" else ROOT / "tests" / "browser" / "artifacts"


def screenshot(page, name: str) -> Path:
    """Save a full-window screenshot as <name>.png and return its path."""
    SCREENSHOT_DIR.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOT_DIR / f"{name}.png"
    page.screenshot(path=str(path))
    return path
