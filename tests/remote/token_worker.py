"""A worker process for the shared token cache test: `python -m tests.remote.token_worker`.

Sets Django up as a worker does (settings of the environment it was started with: the test run's Redis and
sandbox), builds a bearer transport on the deployment's token store (core.platform.token_store(): the
queue's Redis, core.crypto), reads its config as JSON from stdin, prints "ready", waits for "go" on stdin,
makes `calls` calls and prints {"tokens": [...], "statuses": [...]} as its last line.
"""

import json
import sys


def main() -> int:
    import django

    django.setup()
    from backoffice.core import platform
    from backoffice.remote.invoices import InvoicesClient
    from backoffice.remote.transport import SERVICE_USER, Transport, TransportConfig

    job = json.loads(sys.stdin.readline())
    config = TransportConfig(company_key=job["company_key"], tier=1, base_urls=job["base_urls"],
                             auth_method=SERVICE_USER, username=job["username"], password=job["password"],
                             max_retries=0)
    transport = Transport(config, token_store=platform.token_store())
    transport.session.trust_env = False  # loopback only, never through a proxy
    invoices = InvoicesClient(transport)
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return 2
    statuses = [invoices.outbox_status(job["invoice_id"])["status"] for _ in range(job["calls"])]
    print(json.dumps({"tokens": sorted(set(transport._seen_tokens)), "statuses": statuses}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
