"""``make load LOAD_ARGS="--mode poll"`` (benchmarks/class_poll.py): its counting of lost and double votes, its
percentiles and CPU arithmetic, how it reads Streamlit's ids and the page's words, and its report's verdicts. The
run itself is a benchmark (minutes of 200 phones on two replicas): ``make load`` runs it, not the tests."""

from __future__ import annotations

import argparse
import os
import random

import pytest

from benchmarks import class_poll, load
from benchmarks.stats import percentile


def test_a_vote_confirmed_on_the_phone_and_absent_from_redis_is_lost():
    t = class_poll.tally({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "2"})
    assert (t.cast, t.counted, t.lost, t.double, t.differ) == (3, 2, 1, 0, 0)


def test_a_vote_in_redis_under_an_id_no_phone_holds_is_double():
    # a phone that came back under a new voter id would be counted twice: its old id and this one
    t = class_poll.tally({"a": "1"}, {"a": "1", "a-again": "1"}, ["a", "b"])
    assert (t.lost, t.double, t.unconfirmed) == (0, 1, 0)


def test_a_vote_in_redis_whose_confirmation_never_reached_its_phone_is_unconfirmed_not_double():
    t = class_poll.tally({"a": "1"}, {"a": "1", "b": "2"}, ["a", "b"])
    assert (t.cast, t.counted, t.lost, t.double, t.unconfirmed) == (1, 2, 0, 0, 1)


def test_a_changed_answer_counts_once_and_must_be_the_last_one_confirmed():
    assert class_poll.tally({"a": "B"}, {"a": "B"}).differ == 0
    assert class_poll.tally({"a": "B"}, {"a": "A"}).differ == 1  # the earlier answer was kept instead


def test_a_number_stored_rounded_is_the_same_answer():
    assert class_poll.same("0.5", "0.50") and class_poll.same("Raises ValueError", "Raises ValueError")
    assert not class_poll.same("0.51", "0.50") and not class_poll.same("A", "B")


def test_the_percentile_interpolates_and_is_nan_for_nothing():
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == pytest.approx(50.5)
    assert percentile(values, 95) == pytest.approx(95.05)
    assert percentile([], 95) != percentile([], 95)  # NaN


def test_cpu_is_a_percentage_of_one_core_and_the_added_share_is_measured_side_by_side():
    assert class_poll.cpu_percent(10.0, 12.0, 20.0) == pytest.approx(10.0)
    idle = class_poll.Window("idle", 20, [1.0, 2.0], 1)
    busy = class_poll.Window("busy", 20, [9.5, 14.0], 200)
    assert class_poll.added(idle, busy) == pytest.approx([8.5, 12.0])


def test_cpu_seconds_reads_this_process():
    before = class_poll.cpu_seconds(os.getpid())
    sum(i * i for i in range(200_000))
    assert class_poll.cpu_seconds(os.getpid()) >= before > 0


def test_three_rounds_are_ask_ask_again_then_the_next_question():
    assert class_poll.plan_rounds(3) == [("open", 0, 1), ("again", 0, 2), ("next", 1, 1)]
    assert class_poll.plan_rounds(4)[-1] == ("again", 1, 2)


def test_an_elements_key_is_read_from_its_id():
    assert class_poll.key_of("$$ID-6c86bdddc8a774279f8200a2727de725-answer") == "answer"
    assert class_poll.key_of("$$ID-0123abcd-class_results") == "class_results"
    assert class_poll.key_of("") == "" and class_poll.key_of("plain") == ""
    assert class_poll.key_of("$$ID-0123abcd-class_next_v12") == "class_next"  # a presenter's button, at any version


def test_a_number_guess_is_sent_with_its_forms_send_within_the_range_its_label_gives():
    assert class_poll.bounds("Your guess, from \u221210 to 2.5") == (-10.0, 2.5)
    number = class_poll.Answer("id", "number_input", lo=-1.0, hi=1.0, send="send-id")
    value, send = class_poll.widget_states(number, "0.25")
    assert value.double_value == 0.25 and send.id == "send-id" and send.trigger_value
    assert len(class_poll.widget_states(class_poll.Answer("id", "radio", ("A", "B")), "B")) == 1  # a tap sends itself


def test_a_choice_is_an_option_or_a_number_within_bounds_and_a_change_differs():
    rng = random.Random(1)
    radio = class_poll.Answer("id", "radio", ("A", "B", "C"))
    number = class_poll.Answer("id", "number_input", lo=-1.0, hi=1.0)
    assert all(class_poll.choice_for(radio, rng, avoid="A") in ("B", "C") for _ in range(50))
    values = [float(class_poll.choice_for(number, rng)) for _ in range(50)]
    assert all(-1.0 <= v <= 1.0 for v in values)
    assert class_poll.widget_state(number, "0.25").double_value == 0.25
    assert class_poll.widget_state(radio, "B").string_value == "B"


def report(lost: int = 0, double: int = 0, reveal_ms: float = 500.0, busy_cpu: float = 8.0, join_ms: float = 900.0):
    rounds = []
    for k, (_, index, rnd) in enumerate(class_poll.plan_rounds(3)):
        x = class_poll.Round(f"question {index + 1}, round {rnd}", index, rnd)
        gone, extra = (lost if k == 1 else 0), (double if k == 2 else 0)
        x.tally = class_poll.Tally(200, 200 - gone + extra, gone, extra, 0)
        x.revealed = [reveal_ms] * 200
        rounds.append(x)
    windows = [class_poll.Window("idle", 20, [1.0, 1.0], 1), class_poll.Window("busy", 20, [1.0 + busy_cpu, 2.0], 200)]
    return class_poll.PollReport(200, 2, 60, 20, rounds, windows, [join_ms] * 200, [300.0] * 90, 90, [])


def verdicts(text: str) -> dict[str, str]:
    rows = [line.split("|") for line in text.splitlines() if "PASS" in line or "MISS" in line]
    return {cells[1].strip(): cells[3].strip() for cells in rows}


def test_a_run_on_target_passes_every_row():
    text = class_poll.poll_markdown(report(), "0.1", "0.2")
    assert len(verdicts(text)) == 4 and all("PASS" in v for v in verdicts(text).values()), text
    assert "| question 1, round 2 | 200 | 0 | 200 | 0 | 0 | 0 | 0 | 500 | 500 | 0 |" in text


@pytest.mark.parametrize(
    ("kwargs", "failing"),
    [
        ({"lost": 1}, "0 votes lost"),
        ({"double": 2}, "0 votes lost"),
        ({"reveal_ms": 2500.0}, "the reveal"),
        ({"busy_cpu": 10.5}, "200 waiting phones"),
        ({"join_ms": 3100.0}, "join"),
    ],
)
def test_each_missed_target_fails_its_row(kwargs, failing):
    text = class_poll.poll_markdown(report(**kwargs), "0.1", "0.2")
    failed = [row for row, v in verdicts(text).items() if "MISS" in v]
    assert len(failed) == 1 and failed[0].startswith(failing), text


def test_load_hands_the_poll_mode_over_with_two_replicas(monkeypatch):
    seen: list[argparse.Namespace] = []
    monkeypatch.setattr(class_poll, "main", lambda args: seen.append(args) or 0)
    assert load.main(["--mode", "poll"]) == 0
    (args,) = seen
    assert (args.replicas, args.phones, args.rounds, args.arrive) == (2, 200, 3, 60.0)


def test_the_pages_words_say_whether_a_vote_is_in_or_why_not():
    from lnviz.serving import poll

    assert class_poll.outcome(["Your answer is in. You can change it until the reveal."]) == "in"
    assert class_poll.outcome([poll.REFUSED["revealed"]]) == "revealed"
    assert class_poll.outcome(["Something else"]) is None


def test_a_choice_is_stored_as_its_options_index_and_a_number_as_it_is():
    assert class_poll.stored_as(class_poll.Answer("id", "radio", ("A", "B", "C")), "C") == "2"
    assert class_poll.stored_as(class_poll.Answer("id", "number_input"), "0.25") == "0.25"
