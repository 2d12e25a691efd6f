"""How many CPUs a shared server's process may keep busy, and how many threads torch's kernels get there.

Not the host's core count: the container's quota (``/sys/fs/cgroup/cpu.max``)
and the process's CPU affinity (:func:`usable_cpus`). The heavy-work slots
(:mod:`server.limits`) and torch's intra-op threads are sized from it.
"""

from __future__ import annotations

import os


def cpus_from(cpu_max: str | None, affinity: int | None, cpu_count: int | None) -> int:
    """The CPUs a process may keep busy, from what the system says (at least 1).

    ``cpu_max``: the text of cgroup v2's ``cpu.max``, "QUOTA PERIOD" in
    microseconds or "max PERIOD" for no quota (None: no such file); a quota of
    1.5 CPUs counts as 1. ``affinity``: how many cores the process may be
    scheduled on (``len(os.sched_getaffinity(0))``); ``cpu_count``: the host's.
    The smallest of what is known wins.
    """
    known = [n for n in (affinity, cpu_count) if n]
    fields = (cpu_max or "").split()
    if len(fields) == 2 and fields[0] != "max":
        try:
            quota, period = int(fields[0]), int(fields[1])
        except ValueError:
            pass
        else:
            if quota > 0 and period > 0:
                known.append(max(1, quota // period))
    return max(1, min(known, default=1))


def usable_cpus(root: str = "/sys/fs/cgroup") -> int:
    """:func:`cpus_from` this process's cgroup quota, CPU affinity and core count."""
    try:
        with open(os.path.join(root, "cpu.max"), encoding="ascii") as f:
            cpu_max: str | None = f.read()
    except (OSError, UnicodeDecodeError):
        cpu_max = None
    affinity = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    return cpus_from(cpu_max, affinity, os.cpu_count())


def server_threads(cpus: int | None = None) -> int:
    """Threads for torch's CPU kernels when many sessions share one server process.

    Each session's rerun runs in a thread of its own, and each torch kernel
    fans out over a pool of intra-op threads shared by the whole process; with
    many users, more threads than cores only add contention, and the small
    kernels of a teaching app gain little from more (measured here: on a busy
    2-core machine, small ops ran 3 to 100 times slower with 2 OpenMP threads
    than with 1). Half the cores, at least 1 and at most 4, leaves room for
    concurrent reruns. ``LNVIZ_TORCH_THREADS`` overrides it.
    """
    override = os.environ.get("LNVIZ_TORCH_THREADS", "").strip()
    if override.isdigit() and int(override) > 0:
        return int(override)
    cpus = cpus or usable_cpus()
    return max(1, min(4, cpus // 2))


def configure_threads() -> int:
    """Set torch's intra-op thread count for a shared server (:func:`server_threads`), once per process."""
    from lnviz.maths import device  # torch: the limits read the CPUs (server.limits.current) without it

    return device.set_threads_once(server_threads())
