"""A client is a browser, proved once: a signed first-party cookie, given on the first visit and required after.

A script that discards its cookies was a new client with every session, so
every per-client limit started afresh for it (issue 30). Now whatever changes
shared state (a vote, a room, a share, an upload, a place in a queue) needs a
*proved* client: one whose connection brings back the cookie :data:`COOKIE`
that the server set on the page's HTML (:mod:`ui.proof`'s middleware).

- The cookie is ``1.{nonce}.{issued}.{mac}``: a random nonce, the time it was
  issued and an HMAC-SHA256 of both under the deployment's secret, so no one
  can make one up, and every replica that shares the secret (``LNVIZ_SECRET``,
  :func:`secret_from_env`) accepts another's. Without that variable each
  process draws its own, which suits one process alone.
- The client it proves is the nonce's hash (:func:`client`): every tab of the
  browser, across reloads, for :data:`MAX_AGE_S`. Nothing about the person.
- New proofs are a budget (:class:`Minter`): so many per public address per
  window, shared by every replica; the addresses a replica can't see share one
  budget on that replica. A script that mints cookies gets that rate, not a crowd.
  Over it, the page gets a cookie that says when to come back (:func:`wait_s`), and no proof.

Pure: no Streamlit.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from limits.storage import Storage

from lnviz.serving.limits import Limits
from lnviz.serving.quota import Quota
from lnviz.serving.store import StoreDown

COOKIE = "lnviz_proof"
SECRET_ENV = "LNVIZ_SECRET"  # every replica of a deployment must be given the same
MAX_AGE_S = 30 * 86400  # a proof is good this long after it was issued; the browser is given a fresh one then
SKEW_S = 300  # a proof issued this far in the future (another replica's clock) is still good
_NONCE = re.compile(r"[A-Za-z0-9_-]{22}")
_WAIT = "wait."

NEEDS = (
    "This needs your browser to keep this site's cookies, which show the server that a browser and not a script "
    "is asking: allow cookies for this site, then reload the page."
)
WAIT = (
    "More new browsers than this server lets in at once have come from your network lately: reload this page in {s} s."
)


def secret_from_env(environ: Mapping[str, str]) -> bytes:
    """The key proofs are signed with: ``LNVIZ_SECRET``'s, the same on every replica; else a random one, this
    process's alone (a proof then holds until the process restarts)."""
    raw = environ.get(SECRET_ENV, "").strip()
    return hashlib.sha256(raw.encode()).digest() if raw else secrets.token_bytes(32)


def _mac(secret: bytes, body: str) -> str:
    return base64.urlsafe_b64encode(hmac.new(secret, body.encode(), hashlib.sha256).digest()[:18]).decode()


def mint(secret: bytes, now: float) -> str:
    """A new proof, issued at ``now`` (seconds since the epoch)."""
    body = f"1.{secrets.token_urlsafe(16)}.{int(now)}"
    return f"{body}.{_mac(secret, body)}"


def client(secret: bytes, token: object, now: float) -> str | None:
    """The client ``token`` proves ("proved " and a hash of its nonce), or None: not one of ours, altered, or
    older than :data:`MAX_AGE_S`."""
    if not isinstance(token, str) or len(token) > 80:
        return None
    parts = token.split(".")
    if len(parts) != 4 or parts[0] != "1" or not _NONCE.fullmatch(parts[1]) or not parts[2].isdigit():
        return None
    if not -SKEW_S <= now - int(parts[2]) <= MAX_AGE_S:
        return None
    if not hmac.compare_digest(parts[3], _mac(secret, ".".join(parts[:3]))):
        return None
    return "proved " + hashlib.sha256(parts[1].encode()).hexdigest()[:16]


def waiting(retry_after_s: int, now: float) -> str:
    """The cookie a browser refused a proof is given: when it may try again. It proves nothing."""
    return f"{_WAIT}{int(now) + retry_after_s}"


def wait_s(token: object, now: float) -> int | None:
    """Whole seconds until a browser given :func:`waiting` may try again; None if ``token`` is no such, or its
    time has come."""
    if not isinstance(token, str) or not token.startswith(_WAIT) or not token[len(_WAIT) :].isdigit():
        return None
    left = math.ceil(int(token[len(_WAIT) :]) - now)
    return left if left > 0 else None


@dataclass
class Minter:
    """Whether a visitor from ``address`` may be given a new proof now: :meth:`admit`.

    A public address (:func:`lnviz.serving.who.address`) has ``proofs_per_address`` per ``proof_window_s``,
    counted in ``shared`` (the Redis every replica shares, else this process); "" (an address this replica
    can't see: a proxy's, a LAN's) is one key of ``proofs_per_replica`` in this process alone. A shared store
    that can't be reached is replaced by this process's count for that address, never by no count.
    """

    limits: Limits
    shared: Storage | None = None

    def __post_init__(self) -> None:
        lim, window = self.limits, max(1, math.ceil(self.limits.proof_window_s))
        self._address = Quota("proofs-address", lim.proofs_per_address, window, self.shared)
        self._here = Quota("proofs-address", lim.proofs_per_address, window)
        self._replica = Quota("proofs-replica", lim.proofs_per_replica, window)

    def admit(self, address: str) -> int:
        """0 when a new proof may be given to a visitor from ``address`` (and it is counted); else the whole
        seconds until one may."""
        if not self.limits.enabled:
            return 0
        quotas = [self._address, self._here] if address else [self._replica]
        for quota in quotas:
            try:
                if quota.hit(address or "unseen"):
                    return 0
                return quota.retry_after_s(address or "unseen")
            except StoreDown:
                continue  # the shared count can't be reached: this process's count instead
        return max(1, math.ceil(self.limits.proof_window_s))
