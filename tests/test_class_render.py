"""The class poll's questions as the phone's element gets them (lnviz.labs.classroom.render): text as parts,
never HTML, and torch's answer and reasons only for a reveal."""

from __future__ import annotations

import json

from lnviz.labs.classroom import questions, render
from lnviz.labs.classroom.question import LiveQuestion


def test_markdown_becomes_text_parts_and_html_stays_text():
    assert render.spans("x `F.batch_norm(x)` is **not** <b>bold</b>") == [
        ["", "x "],
        ["code", "F.batch_norm(x)"],
        ["", " is "],
        ["strong", "not"],
        ["", " <b>bold</b>"],
    ]
    assert render.spans("") == []
    assert render.spans("running_mean and running_var") == [["", "running_mean and running_var"]]


def test_every_question_of_the_bank_round_trips_through_its_parts():
    for question in questions.bank():
        entry = render.entry(question)
        joined = "".join(t for _, t in entry["prompt"])
        assert joined == question.prompt.replace("`", "").replace("**", ""), question.id
        assert len(entry["choices"]) == len(question.choices)


def test_torch_s_answer_and_reasons_are_given_only_for_a_reveal_and_a_live_one_is_computed_only_then():
    calls = []
    live = LiveQuestion(
        lambda: calls.append(1) or (1, "torch's **reason**"),
        id="live-one",
        kind="choice",
        prompt="?",
        choices=("a", "b"),
    )
    entry = render.entry(live)
    assert entry["answer"] is None and entry["why"] is None and not calls  # reading it would run the model
    entry = render.entry(live, reveal=True)
    assert entry["answer"] == 1 and entry["why"] == [["", "torch's "], ["strong", "reason"]] and calls == [1]
    for question in questions.bank()[:3]:
        assert render.entry(question)["answer"] is None and render.entry(question)["why"] is None


def test_a_cells_question_gives_the_phone_its_grid_and_a_drag_question_its_slider():
    q = questions.by_id("instance-norm-cells")
    entry = render.entry(q)
    assert entry["grid"] == {
        "rows": q.rows,
        "cols": q.cols,
        "marked": q.marked,
        "axes": list(q.axes),
        "row_names": list(q.row_names),
        "col_names": list(q.col_names),
    }
    assert entry["answer"] is None and entry["answer_text"] is None and not entry["drag"]
    shown = render.entry(q, reveal=True)
    assert shown["answer"] == list(q.answer) and shown["answer_text"] == q.answer_text == "every position of row n1 c2"
    assert json.loads(json.dumps(shown)) == shown  # what the element gets is JSON
    drag = render.entry(questions.by_id("outlier-x-hat-drag"))
    assert drag["drag"] and drag["grid"] is None and (drag["lo"], drag["hi"], drag["step"]) == (0.0, 40.0, 0.5)
    number = render.entry(questions.by_id("ln-cell"), reveal=True)
    assert number["answer_text"] == f"{number['answer']:.4g}".replace("-", "\u2212") and number["grid"] is None
