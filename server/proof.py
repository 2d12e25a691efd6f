"""A client is a browser that paid for its identity: a proof of work, then a signed cookie it keeps.

Counting new identities per address failed: a script took an address's 600 proofs of the hour in 3 s, and every
browser behind that address (a lecture hall's NAT, a hosting platform's one address) then waited an hour
(issue 47). Now an identity costs its maker CPU, and nothing is refused for being counted:

- :func:`challenge`: an ALTCHA challenge (PyPI's ``altcha``, its challenge format v1): the SHA-256 of a random
  salt and a secret number of 0..``work``, signed with the deployment's secret, good for :data:`CHALLENGE_S`.
  The page's script (lnviz/web/proof/solve.js) finds the number by trying them, ``work / 2`` hashes on average:
  about a second of a phone's CPU at the default price, and as much of a script's (a SHA-256 in JavaScript
  costs about what Python's ``hashlib`` does per call).
- :func:`solved`: whether a payload sent back solves a challenge of ours that has not expired
  (``altcha.verify_solution_v1``), and its price and key. :class:`Price` spends each challenge once.
- :func:`mint` and :func:`client`: the cookie :data:`COOKIE`, a random nonce signed and timestamped by
  ``itsdangerous`` (every replica that shares ``LNVIZ_SECRET``, :func:`secret_from_env`, accepts another's),
  good for :data:`MAX_AGE_S`; the client it proves is the nonce's hash.
- :class:`Price`: what the next proof costs a visitor from an address. ``proofs_at_price`` a minute cost
  ``proof_work`` (a class of 500 arriving over two minutes); past that the price doubles per as many again,
  up to ``2**proof_doublings`` times, and falls back as the minute passes. A script minting identities pays
  more for each; a student behind the same address pays the same for its one, and is never refused.

Pure: no Streamlit.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

import altcha
from itsdangerous import BadSignature, TimestampSigner
from limits.storage import Storage

from server.limits import Limits, StoreDown
from server.quota import Quota

COOKIE = "lnviz_proof"
SECRET_ENV = "LNVIZ_SECRET"  # every replica of a deployment must be given the same
MAX_AGE_S = 30 * 86400  # a proof is good this long after it was issued; the browser proves itself again then
SKEW_S = 300  # a proof issued this far in the future (another replica's clock) is still good
CHALLENGE_S = 120  # a challenge must be solved and sent back within this
_LONGEST = 120  # characters of a cookie of ours (about 60): anything longer is not one

NEEDS = (
    "This needs your browser to keep this site's cookies and run its scripts, which show the server that a "
    "browser and not a script is asking: allow them for this site, then reload the page."
)


def secret_from_env(environ: Mapping[str, str]) -> bytes:
    """The key proofs and challenges are signed with: ``LNVIZ_SECRET``'s, the same on every replica; else a random
    one, this process's alone (a proof then holds until the process restarts)."""
    raw = environ.get(SECRET_ENV, "").strip()
    return hashlib.sha256(raw.encode()).digest() if raw else secrets.token_bytes(32)


class _Signer(TimestampSigner):
    """``itsdangerous``'s signer, on a clock the caller gives (a test's, or the request's ``now``)."""

    def __init__(self, secret: bytes, now: float) -> None:
        super().__init__(secret, salt=COOKIE)
        self._now = now

    def get_timestamp(self) -> int:
        return int(self._now)


def mint(secret: bytes, now: float) -> str:
    """A new proof, issued at ``now`` (seconds since the epoch): ``{nonce}.{time}.{signature}``."""
    return _Signer(secret, now).sign(secrets.token_urlsafe(16)).decode()


def client(secret: bytes, token: object, now: float) -> str | None:
    """The client ``token`` proves ("proved " and a hash of its nonce), or None: not one of ours, altered, older
    than :data:`MAX_AGE_S` or issued more than :data:`SKEW_S` ahead of ``now``."""
    if not isinstance(token, str) or len(token) > _LONGEST:
        return None
    try:  # read at now + SKEW_S, so that a proof from a replica whose clock is ahead is not "from the future"
        nonce = _Signer(secret, now + SKEW_S).unsign(token, max_age=MAX_AGE_S + SKEW_S)
    except (BadSignature, ValueError):
        return None
    return "proved " + hashlib.sha256(nonce).hexdigest()[:16]


def challenge(secret: bytes, work: int, now: float) -> dict[str, object]:
    """A new ALTCHA challenge of price ``work`` (the secret number is drawn from 0..work), as the page's script
    reads it; its price and expiry are in its salt, which the signature covers."""
    expires = datetime.datetime.fromtimestamp(now + CHALLENGE_S, tz=datetime.UTC)
    options = altcha.ChallengeOptionsV1(hmac_key=secret, max_number=work, expires=expires, params={"work": str(work)})
    made = altcha.create_challenge_v1(options).to_dict()
    return {key.lower(): value for key, value in made.items()}  # maxNumber as the format names it: maxnumber


@dataclass(frozen=True)
class Solved:
    """A challenge of ours, solved: its price, and the key that spends it once (its signature)."""

    work: int
    key: str


def solved(secret: bytes, payload: object) -> Solved | None:
    """The challenge ``payload`` (ALTCHA's: base64 of a JSON object) solves, if it is one of ours, solved and not
    expired (``altcha.verify_solution_v1`` checks the hash, the signature and the expiry); else None."""
    if not isinstance(payload, str) or len(payload) > 1024:
        return None
    ok, _ = altcha.verify_solution_v1(payload, secret, check_expires=True)
    if not ok:
        return None
    found = altcha.PayloadV1.from_base64(payload)
    _, expires, params = found.parse_salt()
    work = params.get("work", [""])[0]
    if expires is None or not work.isdigit():
        return None
    return Solved(int(work), hmac.new(secret, found.signature.encode(), hashlib.sha256).hexdigest()[:32])


class Price:
    """What a new proof costs a visitor from an address now, and the count that sets it (see the module's
    docstring); each solved challenge spent once.

    The count is kept in ``shared`` (the Redis every replica shares, else this process) for a public address;
    "" (an address this replica can't see: a proxy's, a LAN's) is one count in this process alone. A shared
    store that can't be reached is replaced by this process's count, never by none.
    """

    def __init__(self, limits: Limits, shared: Storage | None = None) -> None:
        self.limits = limits
        window = max(1, round(limits.proof_window_s))
        many = limits.proofs_at_price * (2 + limits.proof_doublings) * 1000  # a count no one reaches in a window
        self._shared = Quota("proofs", many, window, shared, exact=False)
        self._here = Quota("proofs", many, window, exact=False)
        self._spent = Quota("proofs-spent", 1, CHALLENGE_S * 2, shared)
        self._spent_here = Quota("proofs-spent", 1, CHALLENGE_S * 2)

    def _count(self, address: str) -> tuple[Quota, str]:
        return (self._shared, address) if address else (self._here, "unseen")

    def recent(self, address: str) -> int:
        """New proofs given to visitors from ``address`` in the last proof window (about: a sliding counter)."""
        quota, key = self._count(address)
        try:
            return quota.count(key)
        except StoreDown:
            return self._here.count(key)

    def work(self, address: str) -> int:
        """The price of the next proof for a visitor from ``address``: ``proof_work``, doubled per
        ``proofs_at_price`` proofs given there in the last window past the first, at most ``proof_doublings``
        times."""
        lim = self.limits
        doublings = min(lim.proof_doublings, self.recent(address) // max(1, lim.proofs_at_price))
        return lim.proof_work * 2**doublings

    def spend(self, done: Solved, address: str) -> str:
        """Take ``done`` as the price of a new proof for a visitor from ``address``: "ok" (counted), "spent" (this
        challenge was used already), or "cheap" (the price there has more than doubled since it was given: the
        browser asks for another)."""
        if done.work * 2 < self.work(address):
            return "cheap"
        for spent in (self._spent, self._spent_here):
            try:
                if not spent.hit(done.key):
                    return "spent"
                break
            except StoreDown:
                continue  # the shared count can't be reached: this process's instead
        quota, key = self._count(address)
        try:
            quota.hit(key)
        except StoreDown:
            self._here.hit(key)
        return "ok"
