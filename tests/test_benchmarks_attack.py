"""``make load LOAD_ARGS="--mode attack"`` (benchmarks/attack.py): its report judges by issue 20's targets, it reads
Streamlit's messages as they are written, load.py hands the mode over, and the run replaces its sections of a copy
of docs/benchmarks.md. The run itself is a benchmark (minutes of a server under attack): ``make load`` runs it, not
the tests."""

from __future__ import annotations

import argparse

import pytest
from benchcheck import written
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import attack, attack_report, load
from benchmarks.crowd import Student
from benchmarks.memory import Memory
from benchmarks.oracle import Plan


def report(class_ms: dict[str, list[float]], peak_mib: dict[str, float], runs: list[bool]) -> attack.AttackReport:
    """A report whose class answered in ``class_ms`` per phase, whose server peaked at ``peak_mib`` per phase."""
    phases, student, samples = [], Student(Plan(0, "gaussian", 16, 32, 1), own_link=False), []
    for i, name in enumerate(class_ms):
        phase = attack.Phase(name, start=100.0 * i, end=100.0 * i + 50)
        phases.append(phase)
        for k, ms in enumerate(class_ms[name]):
            student.moves.append(ms)
            student.moves_at.append(phase.start + 1 + k * 0.1)
        samples.append((phase.start + 10, peak_mib[name]))
    student.checks = len(student.moves)
    legit = attack.Legit([("Run", ok, 1.0) for ok in runs])
    return attack.AttackReport(1, 10.0, phases, [student], Memory(samples=samples), 0.0, legit)


def verdicts(text: str) -> dict[str, str]:
    rows = [
        line.split("|") for line in text.splitlines() if line.startswith("| ") and ("PASS" in line or "MISS" in line)
    ]
    return {cells[1].strip(): cells[3].strip() for cells in rows}


BASELINE = [50.0] * 20


def test_a_class_within_twice_its_baseline_under_a_small_server_with_fair_runs_passes():
    text = attack_report.attack_markdown(
        report(
            {"no attacker": BASELINE, "stage list": [90.0] * 20}, {"no attacker": 500, "stage list": 900}, [True] * 10
        ),
        "a machine",
    )
    assert all("PASS" in v for v in verdicts(text).values()), text
    assert "| stage list | 20 | 90 | 90 | 1.8 | 900 |" in text


@pytest.mark.parametrize(
    ("slow_ms", "peak", "runs", "failing"),
    [
        (110.0, 900, [True] * 10, "the class's p95 with an attacker"),
        (60.0, 1600, [True] * 10, "peak RSS"),
        (60.0, 900, [True] * 8 + [False] * 2, "a legitimate Run admitted"),
        (60.0, 900, [], "a legitimate Run admitted"),  # no try at all proves nothing
    ],
)
def test_each_missed_target_fails_its_row(slow_ms, peak, runs, failing):
    text = attack_report.attack_markdown(
        report({"no attacker": BASELINE, "uploads": [slow_ms] * 20}, {"no attacker": 500, "uploads": peak}, runs),
        "a machine",
    )
    failed = [row for row, v in verdicts(text).items() if "MISS" in v]
    assert len(failed) == 1 and failed[0].startswith(failing), text


def test_a_move_counts_in_the_phase_its_answer_came_in():
    r = report({"no attacker": [10.0, 20.0], "downloads": [300.0]}, {"no attacker": 1, "downloads": 1}, [True])
    assert r.moves(r.phases[0]) == [10.0, 20.0]
    assert r.moves(r.phases[1]) == [300.0]


def test_run_is_judged_busy_or_admitted_from_the_page_elements():
    busy = ForwardMsg()
    busy.delta.new_element.alert.body = "Busy: the training race is running. Try again in 40 s."
    progress = ForwardMsg()
    progress.delta.new_element.progress.value = 0
    other = ForwardMsg()
    other.delta.new_element.alert.body = "The race could not run"
    assert attack.run_verdict(busy) == "busy"
    assert attack.run_verdict(progress) == "admitted"
    assert attack.run_verdict(other) is None
    assert attack.run_verdict(ForwardMsg(script_finished=ForwardMsg.FINISHED_SUCCESSFULLY)) is None


def test_the_largest_upload_fits_the_upload_limits():
    from lnviz.labs.explorer import upload

    data = attack.big_csv()
    assert 24 * 2**20 < len(data) <= upload.MAX_BYTES
    lines = data.decode().splitlines()
    assert len(lines) == upload.MAX_ROWS and len(lines[0].split(",")) == upload.MAX_COLS
    assert max(map(len, lines)) <= upload.MAX_LINE_CHARS


def test_load_hands_the_attack_mode_over_with_its_own_phase_default(monkeypatch):
    seen: list[argparse.Namespace] = []
    monkeypatch.setattr(attack_report, "main", lambda args: seen.append(args) or 0)
    assert load.main(["--mode", "attack"]) == 0
    (args,) = seen
    assert args.seconds is None and args.sessions is None  # attack_report.main picks 15 s phases and 30 sessions
    assert args.before is None  # issue 47's before and after only with a checkout of main to run


def test_issue_47s_table_has_a_row_per_attack_judged_by_the_honest_user_after():
    from benchmarks import attack_cost

    rows = [attack_cost.Row(name, "got all", "got less", False, key != "8") for key, name, _ in attack_cost.ATTACKS]
    table = attack_cost.markdown(rows, "today", "a machine").splitlines()
    body = [line for line in table if line.startswith(("| 1.", "| 2.", "| 3.", "| 4.", "| 5.", "| 6.", "| 7.", "| 8."))]
    assert len(body) == 8 and all("**fails**" in line for line in body)
    assert [line.endswith("**PASS** |") for line in body] == [True] * 7 + [False]


def test_the_attack_run_replaces_its_section_with_the_phases_and_issue_20s_targets(tmp_path):
    ran = report(
        {"no attacker": BASELINE, "uploads": [70.0] * 20, "downloads": [130.0] * 20},
        {"no attacker": 500, "uploads": 1700, "downloads": 800},
        [True, False],
    )
    store = "### the store's table, for stdout alone\n"
    folder = tmp_path / "artifacts"
    (section,) = written(
        tmp_path,
        lambda path: attack_report.publish(ran, store, None, "2030-01-02 03:04 UTC", "Made-up CPU", path, folder),
        "attack",
    )
    assert section.startswith('## One attacker against a class of 1 (`make load LOAD_ARGS="--mode attack"`, 2030-01-02')
    assert section.count("Made-up CPU") == 1 and "| downloads | 20 | 130 | 130 | 2.6 | 800 |" in section
    text = " ".join(section.split())
    assert "**MISS** (2.6 × at the worst, downloads)" in text and "**MISS** (1,700 MiB)" in text
    assert "**MISS** (1 of 2)" in text and "**PASS** (0 mismatches in 60 checks, 0 errors)" in text
    assert "store's table" not in section and "store's table" in (folder / "attack.md").read_text()


def test_before_and_after_replaces_the_attack_cost_section_too(tmp_path):
    from benchmarks import attack_cost

    ran = report({"no attacker": BASELINE, "uploads": [60.0] * 20}, {"no attacker": 500, "uploads": 900}, [True])
    rows = [attack_cost.Row(name, f"before {key}", f"after {key}", False, True) for key, name, _ in attack_cost.ATTACKS]
    attack, cost = written(
        tmp_path,
        lambda path: attack_report.publish(ran, "", (rows, "Other CPU"), "2030-01-02", "Made-up CPU", path, tmp_path),
        "attack",
        "attack-cost",
    )
    assert "Made-up CPU" in attack and "Other CPU" in " ".join(cost.split())
    assert "`python -m benchmarks.attack_cost --before CHECKOUT_OF_MAIN`" in cost
    assert "| before 8 | **fails** | after 8 | succeeds | **PASS** |" in cost
