"""lnviz.labs.classroom.peer: peer instruction's numbers. The share right and the shift are checked against counts
made by hand from the votes of a real question of the bank (torch's answer: the bank's own), and the advice at each
edge of Crouch and Mazur's 35-70 % band, swept over every share of a class of up to 60."""

from __future__ import annotations

from fractions import Fraction

from lnviz.labs.classroom import peer, questions, text


def test_the_advice_follows_crouch_and_mazurs_band_at_every_share_of_a_class_up_to_60():
    for answered in range(1, 61):
        for right in range(answered + 1):
            share = Fraction(right, answered)  # exact: 7 of 20 is 35 %, inside the band
            expected = "explain" if share < Fraction(35, 100) else "discuss" if share <= Fraction(70, 100) else "answer"
            assert peer.advice(peer.Share(right, answered), 1) == expected, (right, answered)
            assert peer.advice(peer.Share(right, answered), 2) == "last"
    assert peer.advice(peer.Share(0, 0), 1) is None  # nobody answered: nothing to advise
    assert set(text.ADVICE) == {"explain", "discuss", "answer", "last"}


def test_the_share_right_and_the_shift_pair_the_two_rounds_by_voter():
    number = questions.by_id("ln-cell")  # a number question: right within its tolerance
    near, far = number.parse(number.answer), number.parse(number.hi)
    assert number.right(near) and not number.right(far)
    first = {"a": far, "b": far, "c": near, "d": near, "e": far}
    second = {"a": near, "b": far, "c": far, "d": near, "f": near}  # a moved to it, c away; e left, f came
    shift = peer.shift(number, first, second)
    assert shift.first == peer.Share(2, 5) and shift.second == peer.Share(3, 5)
    assert (shift.both, shift.to_right, shift.away) == (4, 1, 1)
    assert shift.said == (
        "Right in round 1: 2 of 5 (40\u00a0%); in round 2: 3 of 5 (60\u00a0%). "
        "Of the 4 who answered both rounds, 1 moved to torch's answer and 1 away from it."
    )
    assert peer.outcome(number, [first, second]) == shift.said
    assert peer.outcome(number, [first]) == "Right: 2 of 5 (40\u00a0%)."
    assert peer.outcome(number, [{}, {}]) == "Right in round 1: nobody answered; in round 2: nobody answered."
