"""Guards for service URLs that a user typed (a company's own base URLs), against server-side request
forgery: the back-office must not become a way to reach its own network, nor send a company's
credentials to a host of the typist's choosing.

A typed URL must be https, name an allowed host (the provider's hosts are configuration), carry no user
info, query or fragment (a trailing "#" would swallow the operation's path), and resolve only to public
addresses. The address check runs again at every connection (GuardedAdapter), on the very address the
socket connects to, so a name that resolves to a public address when the form is saved and to 127.0.0.1
later (DNS rebinding) is refused then too. URLs from settings and the environment are trusted as set and
never pass through here.

Plain Python, like all of remote/: the allow-list is handed in by the caller.
"""

import ipaddress
import socket
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .errors import RemoteError


class UnsafeURL(ValueError):
    """A typed URL the back-office will not call. `code` names the rule, for the form's message."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def host_allowed(host: str, allowed_hosts) -> bool:
    """`host` equals an entry, or an entry ".example.com" covers it and its subdomains."""
    host = (host or "").lower().rstrip(".")
    for entry in allowed_hosts:
        entry = entry.lower().strip().rstrip(".")
        if not entry:
            continue
        if entry.startswith("."):
            if host == entry[1:] or host.endswith(entry):
                return True
        elif host == entry:
            return True
    return False


def public_address(address: str) -> bool:
    """Only globally routable unicast addresses: no loopback, private, link-local, shared (CGNAT),
    reserved, multicast or unspecified one, and no IPv6 form of any of them (::ffff:127.0.0.1)."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def resolve_public(host: str, port: int) -> list[tuple]:
    """The addresses of host:port as getaddrinfo gives them, refused if any is not public (a name
    with one private address among public ones is a name that can reach inside)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise UnsafeURL("unresolvable", f"the host name {host} cannot be resolved ({exc})") from None
    if not infos:
        raise UnsafeURL("unresolvable", f"the host name {host} cannot be resolved")
    for info in infos:
        if not public_address(info[4][0]):
            raise UnsafeURL("private", f"{host} resolves to {info[4][0]}, which is not a public address")
    return infos


def check_url(url: str, allowed_hosts) -> None:
    """Raise UnsafeURL when a typed service URL breaks a rule; return None when it may be used."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeURL("invalid", "the URL cannot be read") from None
    if parts.scheme != "https":
        raise UnsafeURL("scheme", "only https URLs are allowed")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise UnsafeURL("userinfo", "a URL may not carry a user name or password")
    if parts.query or parts.fragment or "#" in url or "?" in url:
        raise UnsafeURL("suffix", "a service URL may not have a query (?) or a fragment (#)")
    host = parts.hostname or ""
    if not host:
        raise UnsafeURL("invalid", "the URL has no host")
    if not host_allowed(host, allowed_hosts):
        raise UnsafeURL("host", f"{host} is not one of the platform's hosts allowed by the settings")
    resolve_public(host, port or 443)


# --- connect-time check ------------------------------------------------------------------------------

class _GuardedConnectionMixin:
    def _new_conn(self):
        # Resolve once, check every address, then connect to a checked address: the name is not looked
        # up again between check and connect. TLS still verifies the certificate against the host name.
        try:
            infos = resolve_public(self._dns_host, self.port)
        except UnsafeURL as exc:
            raise RemoteError(f"refused to connect: {exc}", permanent=True) from None
        original = self._dns_host
        self._dns_host = infos[0][4][0]
        try:
            return super()._new_conn()
        finally:
            self._dns_host = original


class GuardedHTTPConnection(_GuardedConnectionMixin, HTTPConnection):
    pass


class GuardedHTTPSConnection(_GuardedConnectionMixin, HTTPSConnection):
    pass


class _GuardedHTTPPool(HTTPConnectionPool):
    ConnectionCls = GuardedHTTPConnection


class _GuardedHTTPSPool(HTTPSConnectionPool):
    ConnectionCls = GuardedHTTPSConnection


class GuardedAdapter(HTTPAdapter):
    """A requests adapter for typed URLs: the URL rules before sending, the address rule at connect."""

    def __init__(self, allowed_hosts, **kwargs):
        self.allowed_hosts = tuple(allowed_hosts)
        super().__init__(max_retries=0, **kwargs)

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _GuardedHTTPPool, "https": _GuardedHTTPSPool}

    def proxy_manager_for(self, proxy, **proxy_kwargs):
        # Through a proxy the address checked would be the proxy's: typed URLs are never proxied.
        raise RemoteError("refused: a typed service URL is never called through a proxy", permanent=True)

    def send(self, request, **kwargs):
        parts = urlsplit(request.url)
        if parts.scheme != "https" or not host_allowed(parts.hostname or "", self.allowed_hosts):
            raise RemoteError(f"refused to call {parts.scheme}://{parts.hostname}: not an allowed https host "
                              "of the platform", permanent=True)
        kwargs["proxies"] = {}
        return super().send(request, **kwargs)


def mount_guard(session: requests.Session, url: str, allowed_hosts) -> None:
    """Send every request under `url`'s origin through the guarded adapter."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    adapter = GuardedAdapter(allowed_hosts)
    session.mount(origin + "/", adapter)
    session.mount(origin, adapter)


def guarded(session: requests.Session, url: str, allowed_hosts) -> bool:
    """Whether every request under `url`'s origin already goes through a guard of these allowed hosts."""
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    adapters = [session.adapters.get(origin + "/"), session.adapters.get(origin)]
    return all(isinstance(a, GuardedAdapter) and a.allowed_hosts == tuple(allowed_hosts) for a in adapters)


def guard_session(session: requests.Session, urls, allowed_hosts) -> requests.Session:
    """Mount the guard for each typed URL whose origin has no such guard yet. A session shared between
    threads is guarded once, before it is shared: mounting reorders the session's adapters, which a thread
    choosing an adapter at that moment must not see."""
    for url in urls:
        if not guarded(session, url, allowed_hosts):
            mount_guard(session, url, allowed_hosts)
    return session
