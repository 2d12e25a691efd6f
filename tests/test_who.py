"""server.who: a client is a proved browser (else a session), an address is a public one, hashed."""

import pytest

from server import who


def test_an_unproved_session_is_a_client_of_its_own_named_by_its_id():
    assert who.session("session-1") == "session session-1" != who.session("session-2")


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
