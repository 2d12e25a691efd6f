"""The concept check on the room's public stream (server.events): its step, and while a phase is open how many
voters answered and how many answers they gave, each change sent once by the hub; never an answer, before or after
the presenter closes its phase."""

from __future__ import annotations

import asyncio
import json

from harness import aio
from server import check, events, poll
from server.limits import Limits
from server.store import MemoryStore


def _nothing(room):
    return [], None


def test_the_stream_carries_the_checks_step_and_counts_and_never_an_answer():
    store = MemoryStore()
    room, secret = poll.open_room(store, ("bn-one-sample",))

    def public() -> dict:
        found = store.room(room.code)
        return events.state(found, 0, _nothing, events.check_part(store, found))

    assert public()["check"] == {"step": "", "voters": 0, "answers": 0}
    store.act(room.code, secret, check.OPEN, 0)
    store.check_vote(room.code, "voter-ann", "pre", "check-ln-axis", "1")
    store.check_vote(room.code, "voter-ann", "pre", "check-bn-eval", "2")
    store.check_vote(room.code, "voter-bob", "pre", "check-ln-axis", "3")
    shown = public()
    assert shown["check"] == {"step": "pre", "voters": 2, "answers": 3}
    assert events.event_id(shown) == "1.0.2.3"
    for step in ("pre-closed", "post", "post-closed"):
        store.act(
            room.code, secret, check.CLOSE if step.endswith("closed") else check.OPEN, store.room(room.code).version
        )
        shown = public()
        assert shown["check"]["step"] == step
        text = json.dumps(shown)
        assert "voter-" not in text and "check-ln-axis" not in text and "check-bn-eval" not in text
    assert shown["check"] == {"step": "post-closed", "voters": 0, "answers": 0}  # no counts once no phase is open


def test_the_hub_sends_an_answer_to_the_check_as_a_new_count_and_nothing_for_a_changed_one():
    async def main() -> None:
        store = MemoryStore()
        room, secret = poll.open_room(store, ("bn-one-sample",))
        store.act(room.code, secret, check.OPEN, 0)
        hub = events.Hub(lambda: store, _nothing, Limits(), look_s=3600)
        sub = hub.subscribe(room.code, asyncio.get_running_loop())

        async def sent() -> list[dict]:
            hub.look_all()
            await asyncio.sleep(0)  # the loop runs the hand-overs the look scheduled
            found = list(sub.pending)
            sub.pending.clear()
            return found

        assert [e["check"] for e in await sent()] == [{"step": "pre", "voters": 0, "answers": 0}]
        store.check_vote(room.code, "ann", "pre", "check-ln-axis", "1")
        assert [e["check"]["answers"] for e in await sent()] == [1]
        store.check_vote(room.code, "ann", "pre", "check-ln-axis", "0")  # a change: nothing new to count
        assert await sent() == []
        store.check_vote(room.code, "ann", "pre", "check-bn-eval", "0")
        assert [(e["check"]["voters"], e["check"]["answers"]) for e in await sent()] == [(1, 2)]
        hub.unsubscribe(sub)

    aio.run(main())  # a loop of its own: a browser test before this one may have left one running here
