"""The platform's Session reads the environment once per origin, not at every call (issue 32: requests' proxy
look-up ran per call), and still honours it: proxies, no_proxy, the CA bundle. ~/.netrc is never read."""

import urllib.request

import pytest
import requests

from backoffice.remote.sessions import new_session

URL = "https://api.platform.example/v1/event-ticket"


@pytest.fixture
def environment(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def merged(session, url=URL):
    return session.merge_environment_settings(url, {}, None, None, None)


def test_the_proxies_and_ca_bundle_of_the_environment_are_read_once_per_origin(environment, monkeypatch):
    environment.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    environment.setenv("NO_PROXY", "direct.example")
    environment.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/our-bundle.pem")
    reads = []
    real = urllib.request.getproxies_environment
    monkeypatch.setattr(urllib.request, "getproxies_environment", lambda: reads.append(1) or real())
    session = new_session()

    first = merged(session)
    assert first["proxies"]["https"] == "http://proxy.example:3128"
    assert first["verify"] == "/etc/ssl/our-bundle.pem"
    assert "https" not in merged(session, "https://direct.example/x")["proxies"]  # no_proxy honoured
    looked = len(reads)
    environment.setenv("HTTPS_PROXY", "http://elsewhere.example:8080")
    for _ in range(20):
        assert merged(session)["proxies"]["https"] == "http://proxy.example:3128"
    assert len(reads) == looked  # not read again for a known origin

    assert merged(new_session())["proxies"]["https"] == "http://elsewhere.example:8080"  # a new Session reads anew


def test_a_calls_own_proxies_and_verify_win_and_trust_env_off_leaves_the_environment_out(environment):
    environment.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    environment.setenv("CURL_CA_BUNDLE", "/etc/ssl/curl.pem")
    session = new_session()
    own = session.merge_environment_settings(URL, {"https": "http://own.example:1"}, None, False, None)
    assert (own["proxies"]["https"], own["verify"]) == ("http://own.example:1", False)

    session.trust_env = False
    assert merged(session) == {"proxies": {}, "stream": False, "verify": True, "cert": None}


def test_a_call_goes_through_the_proxy_of_the_environment(environment, sandbox):
    url = sandbox.service_url("ticket") + "/v1/city/list"
    environment.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(requests.exceptions.ProxyError):
        new_session().get(url, timeout=5)
    environment.setenv("NO_PROXY", "127.0.0.1")
    assert new_session().get(url, timeout=5).status_code in (200, 401)  # reached the sandbox directly


def test_netrc_never_adds_credentials_to_a_call(environment, tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine api.platform.example login someone password secret\n")
    netrc.chmod(0o600)
    environment.setenv("NETRC", str(netrc))
    request = requests.Request("GET", URL, headers={"Authorization": "Bearer ours"})

    assert requests.Session().prepare_request(request).headers["Authorization"] != "Bearer ours"  # what requests does
    assert new_session().prepare_request(request).headers["Authorization"] == "Bearer ours"
