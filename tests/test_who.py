"""server.who: a client is a browser (else a session), an address is a public one, hashed."""

import pytest

from server import who


def xsrf_cookie(token: bytes, mask: bytes, when: int = 1700000000) -> str:
    """Streamlit's XSRF cookie: the token masked afresh on each page load."""
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(token))
    return f"2|{mask.hex()}|{masked.hex()}|{when}"


def test_a_browser_is_one_client_across_its_tabs_and_page_loads():
    token, other = bytes(range(32)), bytes(range(1, 33))
    tab1 = who.client("session-1", xsrf_cookie(token, b"\x01\x02\x03\x04"))
    tab2 = who.client("session-2", xsrf_cookie(token, b"\xaa\xbb\xcc\xdd", 1700000099))
    assert tab1 == tab2 and tab1.startswith("browser ") and token.hex() not in tab1
    assert who.client("session-3", xsrf_cookie(other, b"\x01\x02\x03\x04")) != tab1
    # No cookie, or one that is not Streamlit's: the session is the client.
    for cookie in (None, "", "2|zz|00|1", "1|abc", "2|0102|0a0b|1"):
        assert who.client("session-1", cookie) == "session session-1"


def test_a_public_address_is_counted_by_its_hash_only():
    one, again, other = who.address("8.8.4.4"), who.address("8.8.4.4"), who.address("2001:4860:4860::8888")
    assert one == again and one.startswith("address ") and "8.8.4.4" not in one
    assert other.startswith("address ") and other != one


@pytest.mark.parametrize("ip", ["10.0.0.7", "192.168.1.20", "127.0.0.1", "::1", "fd00::1", "not an ip", "", None, 42])
def test_a_proxy_a_lan_or_no_address_is_not_counted(ip):
    assert who.address(ip) == ""


@pytest.mark.parametrize("ip", ["10.0.0.7", "::ffff:127.0.0.1", "127.0.0.1", None])
def test_the_poll_counts_every_address_it_cant_see_as_one_and_a_public_one_by_its_hash(ip):
    assert who.counted(ip) == who.UNSEEN
    assert who.counted("8.8.4.4") == who.address("8.8.4.4") != who.UNSEEN
