"""One requests.Session per company and process, and the company's transports over it.

A Session keeps the company's connections open between calls (TLS handshakes are the slow part of a call),
so it lives as long as the process: every job, lane (thread) and service client of a company in one process
uses the same one. Entries are keyed with the process id and dropped in a forked child, so that an RQ
work-horse never shares the pooled sockets of the worker it was forked from.

A transport is rebuilt when the company's configuration changes (credentials, base URLs, tier, typed URLs,
or anything else its TransportConfig or the caller's `extra` holds) and when someone changed the config of
the cached one in place (tests do); its Session is kept unless the guards of typed URLs changed.

Plain Python, like all of remote/: the caller hands in the config and how to build a Transport.
"""

import copy
import http.cookiejar
import os
import threading
import weakref
from urllib.parse import urlsplit

import requests
import requests.auth
import requests.utils
from requests.sessions import merge_setting

from .netguard import guard_session

_resettable = weakref.WeakSet()  # what starts afresh in a forked child: token locks, transport pools


def reset_in_child(thing) -> None:
    """Call thing.reset() in every child this process forks from now on (while thing lives)."""
    _resettable.add(thing)


class _OwnCredentials(requests.auth.AuthBase):
    """Every call carries its own credentials in its headers: nothing to add."""

    def __call__(self, request):
        return request


class PlatformSession(requests.Session):
    """A Session that reads the environment once per origin instead of at every call.

    requests looks at the environment for each request of a Session that trusts it: the proxies (and no_proxy)
    and the CA bundle (REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE), at a cost that showed in every push (issue 32). Here
    what it would find for an origin is kept from the first call to it, so proxies and the bundle are honoured as
    before. ~/.netrc is never read (requests would at every call): the session's auth adds nothing, since every
    call carries its own credentials, and a netrc entry would replace a bearer token's Authorization header.
    trust_env = False still leaves the environment out altogether."""

    def __init__(self):
        super().__init__()
        self.auth = _OwnCredentials()
        self._environment: dict[tuple, tuple[dict, str | None]] = {}

    def merge_environment_settings(self, url, proxies, stream, verify, cert):
        if not self.trust_env or (proxies and "no_proxy" in proxies):
            return super().merge_environment_settings(url, proxies, stream, verify, cert)
        parts = urlsplit(url)
        origin = (parts.scheme.lower(), parts.netloc.lower())
        known = self._environment.get(origin)
        if known is None:  # threads may both look once: the same answer
            known = (requests.utils.get_environ_proxies(url),
                     os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE"))
            self._environment[origin] = known
        environ_proxies, bundle = known
        proxies = {**environ_proxies, **(proxies or {})}  # the call's own win, as in requests
        if verify is True or verify is None:
            verify = bundle or verify
        return {"proxies": merge_setting(proxies, self.proxies), "stream": merge_setting(stream, self.stream),
                "verify": merge_setting(verify, self.verify), "cert": merge_setting(cert, self.cert)}


def new_session(guarded_urls=(), allowed_hosts=()) -> requests.Session:
    """A Session for one company: typed URLs behind netguard's adapter, the environment read once
    (PlatformSession), and no cookies (every call carries its own credentials; a shared, long-lived Session must
    not carry state of one call into the next)."""
    session = PlatformSession()
    session.cookies.set_policy(http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    return guard_session(session, guarded_urls, allowed_hosts)


class TransportPool:
    """The Sessions and transports of this process, per company (thread-safe)."""

    def __init__(self):
        self.reset()
        reset_in_child(self)

    def reset(self) -> None:
        """Forget everything (a forked child starts here)."""
        self._lock = threading.Lock()
        # (pid, company key) -> ((guarded URLs, allowed hosts), Session)
        self._sessions: dict[tuple, tuple[tuple, requests.Session]] = {}
        # (pid, company key, variant) -> ((config as built, extra), transport)
        self._transports: dict[tuple, tuple[tuple, object]] = {}

    def transport(self, company_key: str, config, build, *, variant: str = "", extra=()):
        """The company's transport of this variant (e.g. "interactive") for this config: the cached one
        while config and extra are unchanged, else build(session) over the company's Session."""
        pid = os.getpid()
        key = (pid, company_key, variant)
        with self._lock:
            cached = self._transports.get(key)
            # Compared with the live config too: a config changed in place is no longer what was built.
            if cached and cached[0] == (config, extra) and cached[1].config == config:
                return cached[1]
            session = self._session(pid, company_key, tuple(config.guarded_urls), tuple(config.allowed_hosts))
            transport = build(session)
            # A snapshot of the config as built, not shared with the live one (its dicts could change in place).
            self._transports[key] = ((copy.deepcopy(config), extra), transport)
            return transport

    def _session(self, pid, company_key, guarded_urls, allowed_hosts) -> requests.Session:
        guards = (guarded_urls, allowed_hosts)
        cached = self._sessions.get((pid, company_key))
        if cached and cached[0] == guards:
            return cached[1]
        # Other guards: a new Session rather than remounting one that other threads may be using. The old
        # one is left to those threads (closing it would cut their calls) and to the garbage collector.
        session = new_session(guarded_urls, allowed_hosts)
        self._sessions[(pid, company_key)] = (guards, session)
        return session


def _after_fork_in_child() -> None:
    # A pool's entries of the parent (keyed with its pid) are never used here; a lock another thread of the
    # parent held at fork time would never be released here: start afresh.
    for thing in list(_resettable):
        thing.reset()


os.register_at_fork(after_in_child=_after_fork_in_child)
