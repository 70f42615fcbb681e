"""The demo secrets: generated randomly once, kept in var/demo-credentials.txt, never committed.

Kept apart from the command so that scripts/run.py can read them without Django.
"""

import secrets
import uuid
from pathlib import Path

FILENAME = "demo-credentials.txt"

# Role -> user name of the demo user with that role.
DEMO_USERS = {"accounting": "muhasebe", "manager": "yonetici", "administrator": "yonetim"}
# The operator of the installation: a superuser, the only kind of user of the Django admin and the RQ
# dashboard (they see every company).
DEMO_OPERATOR = "operator"


def _generated():
    values = {f"password.{username}": secrets.token_urlsafe(12) for username in [*DEMO_USERS.values(), DEMO_OPERATOR]}
    values.update({
        "company_a.customer_id": str(uuid.uuid4()),
        "company_a.api_key": secrets.token_urlsafe(32),
        "company_b.customer_id": str(uuid.uuid4()),
        "company_b.service_username": "demo-lojistik-servis",
        "company_b.service_password": secrets.token_urlsafe(16),
        "sandbox.admin_user": "sandbox-admin",
        "sandbox.admin_password": secrets.token_urlsafe(12),
        "sandbox.control_token": secrets.token_urlsafe(24),
    })
    return values


def read(path: Path) -> dict:
    values = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.lstrip().startswith("#") and "=" in line:
                key, _, value = line.partition("=")
                values[key.strip()] = value.strip()
    return values


def load_or_create(var_dir: Path) -> dict:
    """The stored values, completed with new random ones for any key missing (first run: all)."""
    path = Path(var_dir) / FILENAME
    stored = read(path)
    values = {**_generated(), **stored}
    if values != stored:
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = ["# Demo logins and secrets, made by `manage.py seed_demo`. Local only: never commit."]
        lines += [f"{key} = {value}" for key, value in sorted(values.items())]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        path.chmod(0o600)
    return values
