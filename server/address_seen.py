"""Whether this server sees its visitors' addresses, said to the presenter on /class when it does not.

The poll's limits per address (:mod:`server.poll`) need each visitor's public address. Behind a proxy that
uvicorn does not trust to forward it (``FORWARDED_ALLOW_IPS``; docs/deploy.md, "Whose address the app sees"), every
visitor has the proxy's address, a private or loopback one, and the poll counts every address it can't see as one
(:func:`server.who.address` gives no hash for it): its per-address limits then hold for the whole class
together. The presenter is told, in one sentence drawn by :func:`say_if_unseen`, from the address the server sees
for the presenter's own browser: behind the same front as the class.
"""

from __future__ import annotations

import ipaddress

import streamlit as st

from server import limits, who


def unseen(ip: object) -> bool:
    """Whether ``ip`` (``st.context.ip_address``) is one the limits can't tell visitors by: None, which Streamlit
    gives for the loopback (127.0.0.1 and ::1), or a valid address that is no public one. Anything else is no
    address at all (AppTest's mock connection): nothing to say about one."""
    if ip is None:
        return True
    try:
        ipaddress.ip_address(ip if isinstance(ip, str) else "")
    except ValueError:
        return False
    return who.address(ip) == ""


def sentence(lim: limits.Limits) -> str:
    """What the presenter is told when the server sees no public address: plain, with the limits' numbers."""
    return (
        "This server sees no public address for your browser, only a proxy's or a local network's, and it counts "
        "every visitor without one as one address. Each browser still answers as its own first voter and opens its "
        "own first room; what browsers do beyond that is counted together: "
        f"{lim.voters_per_address:,} more voters in a room at first, and {lim.rooms_per_address:,} more rooms a "
        "minute."
    )


def say_if_unseen() -> None:
    """On the projector: :func:`sentence`, when this run's address is one the limits can't tell visitors by."""
    try:
        ip = st.context.ip_address
    except Exception:  # no request behind this run
        return
    lim = limits.current()
    if lim.enabled and unseen(ip):
        st.caption(sentence(lim))
