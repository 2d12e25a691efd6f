"""``make load``'s default mode (benchmarks/load.py) and its crowd modes (benchmarks/crowd_report.py) on a copy of
docs/benchmarks.md: each replaces its own section, or its own row of the class table, with today's figures. The runs
themselves are benchmarks (minutes of a server under load): ``make load`` runs them, not the tests."""

from __future__ import annotations

from benchcheck import written

from benchmarks import crowd_report, load, page
from benchmarks.crowd import ClassReport, Student
from benchmarks.memory import Memory
from benchmarks.oracle import Plan

MACHINE = "Made-up CPU, 3 cores, 7.0 GiB, torch at 1 thread; load average 0.42 at the start, 0.43 at the end"
WHEN = "2030-01-02 03:04 UTC"


def test_the_load_run_replaces_its_section_with_latency_by_action(tmp_path):
    outcomes = [
        load.Outcome(
            Plan(i, "gaussian", 8, 8, i),
            [
                load.Action("open", 900.0),
                *(load.Action("gain", 100.0 + k) for k in range(8)),
                load.Action("seed", 555.0),
            ],
            checks=10,
            control_rejected=True,
        )
        for i in range(3)
    ]
    memory = Memory([(1.0, 300.0), (5.0, 321.0), (9.0, 333.0)], {"sessions open": 5.0, "drive over": 9.0})
    ran = load.LoadReport("socket", 3, 45.0, outcomes, memory, [])
    folder = tmp_path / "artifacts"
    (section,) = written(
        tmp_path,
        lambda path: page.publish(
            "load", load.section(ran, WHEN, MACHINE), path, load.markdown(ran, WHEN, MACHINE), folder
        ),
        "load",
    )
    assert section.startswith(f"## Many users (`make load`, {WHEN})")
    text = " ".join(section.split())
    assert MACHINE in text and "3 sessions against one `streamlit run app.py`" in text and "for 45 s" in text
    assert "0 errors in 27 actions, 0 mismatches in 30 checks" in text and "peak 333 MiB" in text
    assert "| new seed | 3 | 555 | 555 | 555 |" in section
    assert "| check | result | |" in (folder / "load.md").read_text()  # the verdicts are the whole report's


def _class(servers: int, sessions: int, first_ms: float, move_ms: float) -> ClassReport:
    students = [Student(Plan(i, "gaussian", 16, 32, 1), own_link=False) for i in range(sessions)]
    for s in students:
        s.first_view_ms, s.moves, s.moves_at, s.checks = first_ms, [move_ms] * 4, [10.0, 20.0, 30.0, 40.0], 4
    memory = [Memory([(0.0, 200.0 + r)], {"idle": 0.0}) for r in range(servers)]
    spread = {f"10.0.0.{r}:8501": sessions // servers for r in range(servers)} if servers > 1 else {}
    return ClassReport("class", servers, sessions, 60.0, 60.0, 3.0, students, memory, (10.0, 50.0), spread=spread)


def test_a_class_run_replaces_its_own_row_of_the_class_table(tmp_path):
    key, row = crowd_report.class_row(_class(2, 200, 1234.0, 567.0))
    (section,) = written(tmp_path, lambda path: crowd_report.write_row(key, row, WHEN, MACHINE, path), "class")
    table = section.split("\n\n")[2].splitlines()[2:]
    assert len(table) == 6  # the other rows stay, and this one is in place of the page's 200 on 2 replicas
    assert table[5] == (
        "| 200 sessions, 2 replicas behind docs/deploy.md's nginx (100 and 100 WebSockets) | 1,234 / 1,234 ms "
        "| 567 / 567 ms (target p95 ≤ 1 s: PASS) | 20.0 | 401 MiB for all | 0, 0 in 800 checks |"
    )
    assert section.startswith(f'## A class on one link (`make load LOAD_ARGS="--mode class ..."`, {WHEN})')
    assert MACHINE in " ".join(section.split())
    assert "Streamlit's full garbage collection" in section  # what follows the table is the page's own


def test_a_throughput_run_replaces_its_row_and_a_new_kind_of_run_adds_one_once(tmp_path):
    key, row = crowd_report.throughput_row(10, 1500, 30.0, [100.0, 200.0], ["one"], idle=190)
    new_key, new_row = crowd_report.class_row(_class(1, 30, 80.0, 90.0))

    def write(path):
        crowd_report.write_row(key, row, WHEN, MACHINE, path)
        crowd_report.write_row(new_key, new_row, WHEN, MACHINE, path)

    (section,) = written(tmp_path, write, "class")
    table = section.split("\n\n")[2].splitlines()[2:]
    assert (
        table[2]
        == "| … with 190 more sessions idle in the process | – | 150 / 195 ms | **50.0** (target ≥ 30: PASS) | – | 1 |"
    )
    assert len(table) == 7 and table[6].startswith("| 30 sessions, one process | 80 / 80 ms | 90 / 90 ms")
