"""Who the limits count against: a *client*, which is a browser, and an *address*, hashed. Pure: no Streamlit.

- :func:`client`: one browser, known by the random token in Streamlit's XSRF
  cookie, which every tab of that browser sends; or, without that cookie (a
  script), one session. The heavy-work slots, the CPU budgets, the fair turns
  and the poll's votes per browser are kept per client. Not the address: a
  classroom behind one NAT shares it.
- :func:`address`: a public address, hashed so that nothing keeps it as it is;
  "" for any other (not limited). The poll limits voters and rooms per address
  too, for a script that discards its cookies. An address the app can't see
  is :data:`UNSEEN` to the poll (:func:`counted`): one address for them all,
  so that the poll's limits per address still hold behind a proxy that does not say
  who its visitors are.
- Acting on shared state needs a *proved* client (:mod:`server.proof`):
  a browser that kept the signed cookie the server gave it; its key is then
  "proved " and a hash.

A *session* is one tab's Streamlit session: what uploads are held per. A
*visitor* is the person, in the words a page shows.
"""

from __future__ import annotations

import binascii
import hashlib
import ipaddress


def client(session: str, xsrf_cookie: str | None) -> str:
    """The browser if its XSRF cookie is readable ("browser " and a hash), else the session ("session " and its id).

    Streamlit's XSRF cookie ("2|mask|masked token|time") carries one random
    token per browser, masked afresh on every page load; every tab of the
    browser sends it. Unmasked and hashed, it names the browser without
    keeping the token. A client that sends no cookie (a script) is one session.
    """
    parts = (xsrf_cookie or "").split("|")
    if len(parts) == 4 and parts[0] == "2":
        try:
            mask, masked = binascii.unhexlify(parts[1]), binascii.unhexlify(parts[2])
        except (binascii.Error, ValueError):
            mask = b""
        if len(mask) == 4 and masked:
            token = bytes(b ^ mask[i % 4] for i, b in enumerate(masked))
            return "browser " + hashlib.sha256(token).hexdigest()[:16]
    return "session " + session


def address(ip: object) -> str:
    """``ip`` hashed ("address " and a hash) when it is a public address; "" for any other.

    A private or loopback address is a proxy's that the server does not trust
    to forward the visitor's (a Kubernetes ingress, a hosting platform's
    front), shared by every visitor, or a LAN's. Anything that is not an
    address as text (AppTest's mock connection gives none) is no address.
    """
    try:
        public = isinstance(ip, str) and ipaddress.ip_address(ip).is_global
    except ValueError:
        public = False
    return "address " + hashlib.sha256(ip.encode()).hexdigest()[:16] if public else ""


UNSEEN = "address unseen"  # every address the app can't see, counted as one by the poll's limits per address


def counted(ip: object) -> str:
    """The address the poll's limits count ``ip`` as: its hash when it is public (:func:`address`), else
    :data:`UNSEEN`."""
    return address(ip) or UNSEEN
