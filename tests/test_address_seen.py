"""Whose address the app sees: server.address_seen's rule for the presenter's sentence, what the server listens on, and
whom deploy/k8s tells uvicorn to believe (tests/test_browser_address.py runs it all behind the documented nginx)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml
from uvicorn.middleware.proxy_headers import _TrustedHosts

from server import address_seen
from server.limits import Limits

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("ip", "unseen"),
    [
        (None, True),  # Streamlit's ip_address for 127.0.0.1 and ::1: a proxy on this host, or this machine
        ("::ffff:127.0.0.1", True),  # a dual-stack listen's view of nginx on this host
        ("10.2.3.4", True),  # a Kubernetes ingress's pod, or a LAN
        ("192.168.1.20", True),
        ("1.2.3.4", False),  # a visitor's public address, as a trusted proxy forwards it
        ("2a00:1450:4001:80b::200e", False),
        (object(), False),  # AppTest's mock connection: no address at all, nothing to say
        ("not an address", False),
    ],
)
def test_the_projector_speaks_of_addresses_only_when_the_one_it_sees_is_no_public_one(ip, unseen):
    assert address_seen.unseen(ip) is unseen


def test_the_sentence_gives_the_limits_it_speaks_of():
    said = address_seen.sentence(Limits(voters_per_address=321, rooms_per_address=7))
    assert "321 more voters in a room at first, and 7 more rooms a minute" in said and "no public address" in said


def test_every_plain_streamlit_run_listens_on_ipv4_where_nginx_on_this_host_is_trusted():
    server = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())["server"]
    assert server["address"] == "0.0.0.0"  # not "::", whose IPv4 peers are ::ffff:..., which uvicorn doesn't trust
    assert "127.0.0.1" in _TrustedHosts("127.0.0.1,::1")  # uvicorn's default FORWARDED_ALLOW_IPS
    assert "::ffff:127.0.0.1" not in _TrustedHosts("127.0.0.1,::1")


def test_the_pods_believe_the_forwarded_address_from_the_cluster_network_only():
    docs = list(yaml.safe_load_all((ROOT / "deploy/k8s/deployment.yaml").read_text()))
    (container,) = next(d for d in docs if d["kind"] == "Deployment")["spec"]["template"]["spec"]["containers"]
    trusted = _TrustedHosts({e["name"]: e.get("value") for e in container["env"]}["FORWARDED_ALLOW_IPS"])
    assert "10.42.0.17" in trusted and "172.20.1.9" in trusted  # an ingress controller's pod
    assert "1.2.3.4" not in trusted and "::ffff:10.42.0.17" not in trusted
