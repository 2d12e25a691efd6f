"""server.limits: the numbers, read once; the CPUs.

The scheduler's tests are tests/test_slots.py; whom the limits count against, tests/test_who.py."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from server import cpus as cpu_sizing
from server import limits
from server.limits import Limits

MIB = 2**20
ROOT = Path(__file__).resolve().parents[1]


def test_a_memory_budget_is_read_in_whole_mib_and_anything_else_keeps_the_default():
    assert Limits.from_env({limits.CACHE_ENV: " 64 "}, cpus=2).cache_bytes == 64 * MIB
    for bad in ("", "-1", "lots", "1e9"):
        assert Limits.from_env({limits.OWN_DATA_ENV: bad}, cpus=2).own_data_bytes == 128 * MIB


def test_limits_are_on_by_default_and_lifted_by_the_documented_variable():
    on = Limits.from_env({}, cpus=2)
    assert on.enabled and on.concurrent == 1 and not on.thread_control
    assert Limits.from_env({"LNVIZ_LIMITS": "on"}, cpus=2).enabled
    for value in ("off", "OFF", " 0 ", "false", "no"):
        off = Limits.from_env({limits.ENV: value}, cpus=2)
        assert not off.enabled and off.thread_control and off.concurrent > 1000


def test_off_lifts_every_number_but_the_windows_they_are_counted_in():
    on, off = Limits(), Limits.off()
    assert on.enabled and not off.enabled
    numbers = [f.name for f in dataclasses.fields(Limits) if f.name != "enabled"]
    assert len(numbers) > 30  # every limit of server, not a few
    for name in numbers:
        if name in Limits.WINDOWS:
            assert getattr(off, name) == getattr(on, name) > 0, name
        else:
            assert getattr(off, name) >= limits.LIFTED > getattr(on, name), name


def test_the_memory_budgets_come_from_the_environment_in_mib_with_the_limits_on_or_off():
    assert Limits.from_env({}, cpus=2).cache_bytes == 256 * MIB
    env = {limits.CACHE_ENV: "64", limits.OWN_DATA_ENV: "32"}
    for extra in ({}, {limits.ENV: "off"}):
        lim = Limits.from_env(env | extra, cpus=2)
        assert (lim.cache_bytes, lim.own_data_bytes) == (64 * MIB, 32 * MIB)
    assert Limits.from_env({limits.CACHE_ENV: "lots"}, cpus=2).cache_bytes == 256 * MIB


def test_the_process_reads_its_limits_once(monkeypatch):
    limits.current.cache_clear()
    monkeypatch.setenv(limits.ENV, "off")
    try:
        assert not limits.current().enabled
        monkeypatch.delenv(limits.ENV)
        assert limits.current() is limits.current() and not limits.current().enabled  # read once
        limits.current.cache_clear()
        assert limits.current().enabled
    finally:
        limits.current.cache_clear()


def test_heavy_work_keeps_at_most_half_the_cores_busy():
    assert Limits.from_env({}, cpus=1).concurrent == 1
    assert Limits.from_env({}, cpus=2, threads=1).concurrent == 1
    assert Limits.from_env({}, cpus=8, threads=1).concurrent == 4
    assert Limits.from_env({}, cpus=16, threads=4).concurrent == 2


@pytest.mark.parametrize(
    ("cpu_max", "affinity", "cpu_count", "cpus"),
    [
        ("200000 100000\n", 16, 16, 2),  # a 2-CPU pod on a 16-core node
        ("150000 100000\n", 16, 16, 1),  # 1.5 CPUs keep one action busy, not two
        ("50000 100000\n", 16, 16, 1),  # half a CPU: still one
        ("max 100000\n", 16, 16, 16),  # no quota
        ("max 100000\n", 4, 16, 4),  # taskset / cpuset: the affinity
        (None, None, 8, 8),  # no cgroup v2 file, no affinity call
        ("800000 100000\n", 2, 16, 2),  # a quota above the cores it may run on
        ("garbage", 6, 16, 6),
        ("0 100000", 6, 16, 6),
        (None, None, None, 1),
    ],
)
def test_the_cpus_a_process_may_use_come_from_its_cgroup_quota_and_affinity(cpu_max, affinity, cpu_count, cpus):
    assert cpu_sizing.cpus_from(cpu_max, affinity, cpu_count) == cpus


def test_a_two_cpu_pod_on_a_big_node_runs_one_heavy_action_at_a_time(tmp_path, monkeypatch):
    (tmp_path / "cpu.max").write_text("200000 100000\n")
    monkeypatch.setattr(cpu_sizing.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(cpu_sizing.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert cpu_sizing.usable_cpus(str(tmp_path)) == 2
    assert Limits.from_env({}, cpus=cpu_sizing.usable_cpus(str(tmp_path))).concurrent == 1
    assert cpu_sizing.usable_cpus(str(tmp_path / "nowhere")) == 16


def test_server_threads(monkeypatch):
    monkeypatch.delenv("LNVIZ_TORCH_THREADS", raising=False)
    assert cpu_sizing.server_threads(1) == 1
    assert cpu_sizing.server_threads(2) == 1
    assert cpu_sizing.server_threads(8) == 4
    assert cpu_sizing.server_threads(64) == 4
    monkeypatch.setenv("LNVIZ_TORCH_THREADS", "3")
    assert cpu_sizing.server_threads(2) == 3


def test_reading_the_limits_loads_no_torch():
    """The router installs the limits before a page draws, and a fresh server paints a title while torch loads."""
    probe = "import sys; from server import limits; limits.current(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"
