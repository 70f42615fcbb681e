"""Where bearer tokens are kept between calls (document 1, section 5, rule 3: the caller renews them).

A store keeps one token per key (token URL, user name, hash of the password: a changed password is a new
key, and the password is never part of one) until the renewal time the transport gives, and a lock per key
so that only one caller at a time asks the token endpoint while the others wait and reuse what it brought.

- LocalTokenStore: this process only (the default of a Transport built without a store).
- RedisTokenStore: every process of a deployment on one Redis. RQ forks a work-horse per job, so a cache
  in the process would die with each job and ask for a new token for almost every job (issue 11). The
  token is kept encrypted (the caller hands in encrypt/decrypt), the key is a keyed hash.

Plain Python, like all of remote/: the Redis connection and the cipher are handed in by the caller.
"""

import contextlib
import hashlib
import hmac
import logging
import threading
import time
import weakref

from redis.exceptions import LockError, RedisError

from .sessions import reset_in_child

logger = logging.getLogger(__name__)

_stores = weakref.WeakSet()  # every store made in this process, for forget_all()


def token_key(token_url: str, username: str, password: str) -> tuple[str, str, str]:
    """The key of a token: token URL, user name and a hash of the password (never the password)."""
    return (token_url, username, hashlib.sha256(password.encode()).hexdigest())


_forget_hooks = []


def on_forget(hook) -> None:
    """Call hook() at forget_all(): how a store this process has not made yet is cleared too (tests)."""
    _forget_hooks.append(hook)


def forget_all() -> None:
    """Drop every token of every store of this process, shared ones included (tests)."""
    for hook in _forget_hooks:
        hook()
    for store in list(_stores):
        store.clear()


class _KeyLocks:
    """One threading.Lock per key, made anew in a forked child (a lock held by another thread of the
    parent at fork time would never be released there)."""

    def __init__(self):
        self.reset()
        reset_in_child(self)

    def reset(self):
        self._mutex = threading.Lock()
        self._locks: dict = {}

    def get(self, key) -> threading.Lock:
        with self._mutex:
            return self._locks.setdefault(key, threading.Lock())


class LocalTokenStore:
    """Tokens of this process: a dict with renewal times on the monotonic clock."""

    def __init__(self):
        self._tokens: dict[tuple, tuple[str, float]] = {}
        self._locks = _KeyLocks()
        _stores.add(self)

    def get(self, key) -> str | None:
        cached = self._tokens.get(key)
        if cached and cached[1] > time.monotonic():
            return cached[0]
        return None

    def put(self, key, token: str, lifetime: float) -> None:
        self._tokens[key] = (token, time.monotonic() + lifetime)

    def drop(self, key, token: str) -> None:
        """Drop the key's token if it is still `token`: another caller may have renewed it already."""
        cached = self._tokens.get(key)
        if cached and cached[0] == token:
            self._tokens.pop(key, None)

    @contextlib.contextmanager
    def lock(self, key, wait: float):
        """Held by one thread of this process at a time; `wait` is for the interface (a fetch is bounded
        by the transport's timeouts)."""
        with self._locks.get(key):
            yield

    def clear(self) -> None:
        self._tokens.clear()


# Drop the key only while it still holds the failed token (compared by its digest: the value is encrypted
# with a fresh nonce each time, so the ciphertexts of one token differ).
_DROP = """
local value = redis.call('GET', KEYS[1])
if value and string.sub(value, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. ' ' then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class RedisTokenStore:
    """Tokens shared by every process on one Redis: "<sha256 of the token> <encrypted token>" under a keyed
    hash of the key, expiring at the renewal time; a Redis lock per key for the fetch. decrypt raises
    ValueError for a value it cannot read (core.crypto.decrypt does).

    A token read or written is also held in this process (a LocalTokenStore of its own) until the moment its
    Redis key expires: a job's calls after its first read nothing from Redis (one GET and PTTL, pipelined, per
    process and token, instead of a GET and a decryption per call). A token the platform refused is dropped here
    and there; a process still holding a token another process found refused learns it from its own 401, which
    the transport answers by dropping it and asking again once.

    When Redis fails the store goes on with what this process holds, so that calls go on with a token per
    process rather than stop (the limiter refuses what it must).
    """

    def __init__(self, connection, encrypt, decrypt, *, prefix: str = "platform-token", key_secret: bytes = b""):
        self.redis = connection
        self.encrypt, self.decrypt = encrypt, decrypt
        self.prefix = prefix
        self.key_secret = key_secret
        self.held = LocalTokenStore()
        self._locks = _KeyLocks()
        self._drop_script = connection.register_script(_DROP)
        _stores.add(self)

    def redis_key(self, key) -> str:
        # Keyed, so that the hash of a weak password in the key cannot be looked up in a table.
        digest = hmac.new(self.key_secret, "\0".join(key).encode(), hashlib.sha256).hexdigest()
        return f"{self.prefix}:{digest}"

    @staticmethod
    def _digest(token: str) -> str:
        return hashlib.sha256(token.encode()).hexdigest()

    def get(self, key) -> str | None:
        held = self.held.get(key)
        if held:
            return held
        try:
            with self.redis.pipeline(transaction=False) as pipe:
                value, left_ms = pipe.get(self.redis_key(key)).pttl(self.redis_key(key)).execute()
        except (RedisError, OSError) as exc:
            self._failed("read", exc)
            return None
        if not value or left_ms is None or left_ms <= 0:  # -2: gone meanwhile; -1 (no expiry): not ours
            return None
        digest, _, ciphertext = (value if isinstance(value, str) else value.decode()).partition(" ")
        try:
            token = self.decrypt(ciphertext)
        except ValueError:  # another key (rotated away), a damaged value: as if none, the next put overwrites it
            return None
        if not token or not hmac.compare_digest(self._digest(token), digest):
            return None
        self.held.put(key, token, left_ms / 1000)
        return token

    def put(self, key, token: str, lifetime: float) -> None:
        if lifetime <= 0:
            return
        self.held.put(key, token, lifetime)
        value = f"{self._digest(token)} {self.encrypt(token)}"
        try:
            self.redis.set(self.redis_key(key), value, px=max(1, int(lifetime * 1000)))
        except (RedisError, OSError) as exc:
            self._failed("write", exc)

    def drop(self, key, token: str) -> None:
        self.held.drop(key, token)
        try:
            self._drop_script(keys=[self.redis_key(key)], args=[self._digest(token)])
        except (RedisError, OSError) as exc:
            self._failed("drop", exc)

    @contextlib.contextmanager
    def lock(self, key, wait: float):
        """Held by one caller of the deployment at a time, for at most `wait` seconds (a holder that died
        frees it then). A caller that waited `wait` seconds in vain goes on without it: one token too many
        is better than no call at all."""
        with self._locks.get(key):  # the threads of this process queue here, not on Redis
            lock = None
            try:
                lock = self.redis.lock(self.redis_key(key) + ":lock", timeout=wait, sleep=0.05,
                                       blocking_timeout=wait)
                if not lock.acquire():
                    logger.warning("token lock not obtained in %.0f s: fetching a token without it", wait)
                    lock = None
            except (RedisError, OSError) as exc:
                self._failed("lock", exc)
                lock = None
            try:
                yield
            finally:
                if lock is not None:
                    with contextlib.suppress(LockError, RedisError, OSError):  # expired meanwhile: not ours now
                        lock.release()

    def clear(self) -> None:
        self.held.clear()
        with contextlib.suppress(RedisError, OSError):
            keys = list(self.redis.scan_iter(match=f"{self.prefix}:*", count=500))
            if keys:
                self.redis.delete(*keys)

    @staticmethod
    def _failed(what: str, exc: Exception) -> None:
        logger.warning("token store: cannot %s Redis (%s); going on with the tokens this process holds", what,
                       type(exc).__name__)


DEFAULT_STORE = LocalTokenStore()
