import secrets

import pytest
import requests


class Api:
    """Plain HTTP to the sandbox as one customer (x-api-key), or with no credentials at all."""

    def __init__(self, sandbox, api_key=None):
        self.sandbox = sandbox
        self.http = requests.Session()
        self.http.trust_env = False
        if api_key:
            self.http.headers["x-api-key"] = api_key

    def request(self, method, service, path, **kwargs):
        kwargs.setdefault("timeout", 10)
        return self.http.request(method, self.sandbox.service_url(service) + path, **kwargs)

    def get(self, service, path, **kwargs):
        return self.request("GET", service, path, **kwargs)

    def post(self, service, path, **kwargs):
        return self.request("POST", service, path, **kwargs)


@pytest.fixture
def customer_api(sandbox):
    """customer_api(credits=1000) -> (Api with a fresh customer's API key, customer dict)."""

    def make(credits=1000, **fields):
        key = "key-" + secrets.token_hex(12)
        customer = sandbox.add_customer(name=f"Customer {key[-6:]}", credits=credits, api_key=key, **fields)
        return Api(sandbox, key), customer

    return make


@pytest.fixture
def api(customer_api):
    return customer_api()[0]


@pytest.fixture
def anonymous(sandbox):
    return Api(sandbox)
