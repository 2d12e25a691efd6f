"""Who the limits count against: a *client*, which is a browser, and an *address*, hashed. Pure: no Streamlit.

- A *client* is one browser, known by the signed cookie it paid for with a
  proof of work (:mod:`server.proof`), which every tab of that browser sends;
  until it holds one (a script, or a page in its first second), one session
  (:func:`session`). The heavy-work slots, the CPU budgets, the fair turns
  and the poll's votes per browser are kept per client. Not the address: a
  classroom behind one NAT shares it.
- :func:`address`: a public address, hashed so that nothing keeps it as it is;
  "" for any other (not limited). The poll limits voters and rooms per address
  too, for a script that discards its cookies. An address the app can't see
  is :data:`UNSEEN` to the poll (:func:`counted`): one address for them all,
  so that the poll's limits per address still hold behind a proxy that does not say
  who its visitors are.
- Acting on shared state needs a *proved* client: its key is "proved " and a hash.

A *session* is one tab's Streamlit session: what uploads are held per. A
*visitor* is the person, in the words a page shows.
"""

from __future__ import annotations

import hashlib
import ipaddress


def session(session_id: str) -> str:
    """The client a session is until its browser is proved ("session " and its id): a tab of its own.

    Not Streamlit's XSRF cookie, which every tab of a browser sends too: its
    name and masking are nowhere documented, and a browser that can read a
    page solves the proof within a second, after which its tabs are one client.
    """
    return "session " + session_id


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
