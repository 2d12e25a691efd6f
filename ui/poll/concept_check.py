"""The concept check on /class (issue 49): the presenter's screen of it, and a phone's part of the class's element.

- The presenter chooses what the projector shows, the questions or the check (:func:`shown`, in the sidebar); it
  follows the room: the check once it opens or closes a phase, from any tab of the presenter's.
- The check's screen (:func:`screen`): while a phase is open, how to join and how many phones answered; else
  the share right per item before and after, the class's normalized gain on the pairs and the CSV of counts
  (:func:`results_rows`, :func:`lnviz.labs.classroom.check.to_csv`). The buttons open and close the phases.
- A phone (:func:`phone_part`): every item, without its answer, and this voter's answers of the open phase; the
  element draws them while the stream says a phase is open, and sends each tap as the trigger value ``check``,
  which :func:`answer` stores.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from lnviz.labs.classroom import check as items
from lnviz.labs.classroom import check_text as words
from lnviz.labs.classroom import render, text
from lnviz.text import MINUS
from server import address_seen, check, events, poll, proved
from server.limits import StoreDown, StoreFull
from server.process_store import store
from ui.kit.page import Page
from ui.poll import classroom, live
from ui.poll import projector as poll_screen

VIEW = "class_check_view"  # the sidebar's choice: "questions" or "check"
_STEP = "class_check_step"  # the check's step this session last drew, so that the view follows a change of it
_SENT = "class_check_sent"  # the number of the last answer this session's callback took (the element's own count)
_SAID = "class_check_said"  # what the last answer came to, for the element to say beside its item
PHONE_KEY = "class_phone"  # the phone's element (ui.poll.phone.KEY): its trigger values


def shown(room: poll.Room) -> bool:
    """The presenter's choice of what the projector shows, in the sidebar; whether it is the check. It follows the
    room: the check from the moment a phase opens or closes, the questions before the check is run."""
    if st.session_state.get(_STEP) != room.check:
        st.session_state[_STEP] = room.check
        st.session_state[VIEW] = "check" if room.check else "questions"
    with st.sidebar:
        st.segmented_control(
            words.VIEW_LABEL,
            list(words.VIEWS),
            format_func=words.VIEWS.get,
            key=VIEW,
            required=True,
            help=words.VIEW_HELP,
            width="stretch",  # the two options, stacked in the sidebar, as wide as each other
        )
    return st.session_state.get(VIEW) == "check" and not room.closed


# --- the projector --------------------------------------------------------------------------------------------


def percent(right: int, answered: int) -> str:
    """ "40 % of 25", or "–" when nobody answered."""
    return f"{round(100 * right / answered)} % of {answered}" if answered else "–"


def gain_text(counts: items.Counts) -> str:
    """g to 2 decimals with a real minus sign; "–" without pairs; "undefined" when every pair was right before."""
    if not counts.pairs:
        return "–"
    if counts.gain is None:
        return "undefined"
    return f"{counts.gain:.2f}".replace("-", MINUS)


def results_rows(found: items.Results) -> list[dict[str, str]]:
    """The results table: per item and for all, the share right before and after, the pairs and g."""
    rows = [(items.topic(q.id), c) for q, c in found.per_item]
    rows.append((f"All {len(found.per_item)} questions", found.total))
    return [
        {
            "Question": name,
            "Before": percent(c.pre_right, c.pre_answered),
            "After": percent(c.post_right, c.post_answered),
            "Pairs": f"{c.voters}{' *' if c.pairs and c.few else ''}",
            "g": gain_text(c),
        }
        for name, c in rows
    ]


def notes(found: items.Results) -> list[str]:
    """What the table's marks mean, each said only where the table has one."""
    said = [words.HOW_G]
    rows = [c for _, c in found.per_item] + [found.total]
    if any(c.pairs and c.few for c in rows):
        said.append(words.FEW.format(n=items.FEW_PAIRS))
    if any(c.pairs and c.gain is None for c in rows):
        said.append(words.UNDEFINED)
    return said


def results_of(code: str) -> items.Results:
    """The check's counts from the store's answers of both phases (the presenter's run only)."""
    return items.results(items.items(), store().check_answers(code, "pre"), store().check_answers(code, "post"))


def count_of(room: poll.Room) -> None:
    """How many phones answered the open phase, and how many answers: the class's element follows the stream."""
    data = {
        "mode": "count",
        "source": "check",
        "url": live.stream_url(room.code),
        "room": events.state(room, 0, lambda r: ([], None), events.check_part(store(), room)),
        "version": room.version,
        "text": {"count_help": words.COUNT_HELP, "phones": words.COUNT_PHONES, "answers": words.COUNT_ANSWERS},
    }
    live.element("class_check_count", data)


def step_button(room: poll.Room, secret: str) -> None:
    """The check's next step, the primary button: open a phase, or close the one that is open."""
    phase = check.open_phase(room.check)
    action = check.CLOSE if phase else check.OPEN
    if room.after(action) is None:
        return
    label, why = words.CLOSE if phase else words.OPEN[room.check]
    st.button(
        label,
        key=poll_screen.button_key(action, room.version),
        on_click=poll_screen.act,
        args=(room.code, secret, action, room.version),
        type="primary",
        icon=":material/stop_circle:" if phase else ":material/quiz:",
        help=why,
    )


def results(room: poll.Room, secret: str) -> None:
    """The table of counts; beside it, the check's next step, the CSV to download and what the table's marks mean."""
    found = results_of(room.code)
    st.markdown(f"### {words.RESULTS_HEADING}")
    table, side = st.columns([2, 1], gap="medium")
    beside = side.container(key="class_check_side")
    with beside:
        step_button(room, secret)
    if not (found.total.pre_answered or found.total.post_answered):
        with table:
            st.info(words.NOT_RUN)
        return
    with table, st.container(key="class_check_results"):
        st.table(results_rows(found), hide_index=True)
    with beside:
        st.download_button(
            words.CSV_LABEL,
            data=items.to_csv(found),
            file_name="concept-check.csv",
            mime="text/csv",
            key="class_check_csv",
            on_click="ignore",
            help=words.CSV_HELP,
            icon=":material/download:",
        )
        st.caption("\n\n".join(notes(found)))


def screen(page: Page, room: poll.Room, secret: str) -> None:
    """The presenter's screen of the check: see the module's docstring. While a phase is open, how to join beside
    the count; else the results across the screen, with no join box (nobody needs to join until the next phase)."""
    phase = check.open_phase(room.check)
    n = len(items.items())
    classroom.said(toast=page.presenting)
    main, side = st.columns([3, 2], gap="large") if phase else (st.container(), st.container())
    if phase:
        with side:
            poll_screen.join(room, revealed=False, count=count_of)
    with st.sidebar if page.presenting else side:
        poll_screen.door(room, secret)
        address_seen.say_if_unseen()
    with main:
        if phase:
            st.markdown(f"### {words.OPEN_HEADING.format(phase=words.PHASES[phase])}")
            st.markdown(words.OPEN_BODY.format(n=n))
            step_button(room, secret)
        elif not room.check:
            st.markdown(f"### {words.VIEWS['check']}")
            st.markdown(words.INTRO.format(n=n))
            step_button(room, secret)
        else:
            results(room, secret)


# --- a phone ---------------------------------------------------------------------------------------------------


def phone_part(room: poll.Room) -> dict[str, Any]:
    """What a phone's element needs of the check: every item without its answer, this voter's answers of the open
    phase (the store's), what the last answer came to, and the words."""
    phase = check.open_phase(room.check)
    ids = tuple(q.id for q in items.items())
    mine = store().check_mine(room.code, classroom.voter(), phase, ids) if phase else {}
    return {
        "items": [{"id": q.id, **render.entry(q)} for q in items.items()],
        "mine": {"phase": phase, "answers": mine, "n": st.session_state.get(_SENT)},
        "said": st.session_state.pop(_SAID, None),
        "text": {
            "phases": words.PHASES,
            "heading": words.PHONE_HEADING,
            "intro": words.PHONE_INTRO.format(n=len(ids)),
            "progress": words.PHONE_PROGRESS,
            "saved": words.PHONE_SAVED,
            "sending": text.SENDING,
        },
    }


def _say(kind: str, message: str, sent: dict[str, Any]) -> None:
    st.session_state[_SAID] = {"kind": kind, "text": message, "phase": sent["phase"], "item": sent["item"]}


def sent_answer() -> dict[str, Any] | None:
    """The element's answer of this run, ``{phase, item, answer, n}``, if it is one."""
    found = (st.session_state.get(PHONE_KEY) or {}).get("check")
    if not isinstance(found, dict):
        return None
    phase, item, n = found.get("phase"), found.get("item"), found.get("n")
    if phase not in check.PHASES or not isinstance(item, str) or not isinstance(n, int) or isinstance(n, bool):
        return None
    return {"phase": phase, "item": item, "answer": found.get("answer"), "n": n}


def answer(code: str) -> None:
    """A phone's tap on an item's option, stored as this voter's answer to it in that phase (a change replaces
    it); what it came to is said beside the item."""
    if (why := proved.refusal()) is not None:
        classroom.say("warning", why)
        return
    sent = sent_answer()
    if sent is None:
        return
    st.session_state[_SENT] = sent["n"]
    item = items.by_id(sent["item"])
    choice = item.parse(sent["answer"]) if item is not None else None
    if choice is None:
        _say("warning", text.NOT_AN_ANSWER, sent)
        return
    try:
        outcome = store().check_vote(code, classroom.voter(), sent["phase"], item.id, choice, *classroom.sender())
    except StoreFull:
        _say("warning", text.FULL, sent)
        return
    except StoreDown:  # perhaps stored, perhaps not: once the store answers, the page shows which
        classroom.went_down()
        return
    sentences = check.REFUSED | poll.REFUSED
    if outcome in sentences:
        _say("warning", poll.said(sentences, outcome, store().limits), sent)
    else:
        _say("success", words.PHONE_SAVED, sent)
