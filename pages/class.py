"""The class poll: the class predicts, then sees its answers beside torch's.

The presenter starts a room; students join at /class?room=CODE on their phones
and answer; the presenter reveals the answers, asks again after the
neighbours have argued, and moves on. The store is lnviz.serving.rooms; who
is who, and the poll, are ui.classroom.
"""

import streamlit as st

from lnviz.figures.qr import qr_svg
from lnviz.labs.classroom import figures, questions
from lnviz.serving import rooms
from ui import boot, classroom
from ui import store as shared_store
from ui.page import Page

page = Page.start()
INTRO = (
    "Predict first, then see: the presenter asks, everyone answers on a phone, and the class's answers appear "
    "beside torch's only when the presenter reveals them."
)
store = shared_store.store()
PHASE_NAMES = {1: "first answers", 2: "second answers, after discussion"}


def act(code: str, secret: str, action: str) -> None:
    """A presenter's button: the store applies it only with the room's secret, and only where it applies now."""
    try:
        store.act(code, secret, action)
    except rooms.StoreDown:
        st.session_state["class_said"] = ("error", classroom.DOWN)


def start() -> None:
    try:
        room, secret = rooms.open_room(store, tuple(q.id for q in questions.bank()), *classroom.sender())
    except rooms.StoreDown:
        st.session_state["class_said"] = ("error", classroom.DOWN)
        return
    except rooms.OpenRefused as refused:
        st.session_state["class_said"] = ("warning", str(refused))
        return
    classroom.become_presenter(room.code, secret)
    st.query_params["room"] = room.code


def join() -> None:
    code = rooms.valid_code(st.session_state.get("class_join", ""))
    if code is None:
        st.session_state["class_said"] = ("warning", "A room code is 8 letters and digits, as the projector shows.")
    else:
        st.query_params["room"] = code


def vote(code: str, room: rooms.Room, question: questions.Question) -> None:
    """The student's choice, sent as it is made: one vote per voter per round, a change replaces it."""
    choice = question.parse(st.session_state.get("answer"))
    if choice is None:
        st.session_state["class_said"] = ("warning", "That is not one of this question's answers.")
        return
    try:
        outcome = store.vote(code, classroom.voter(), room.index, room.round, choice, *classroom.sender())
    except rooms.StoreDown:
        st.session_state["class_said"] = ("error", classroom.DOWN)
        return
    if outcome in rooms.REFUSED:
        st.session_state["class_said"] = ("warning", rooms.REFUSED[outcome])
    else:
        st.session_state["class_said"] = ("success", "Your answer is in. You can change it until the reveal.")


def said() -> bool:
    """What the last action came to, said once; whether there was anything to say."""
    found = st.session_state.pop("class_said", None)
    if found:
        kind, message = found
        getattr(st, kind)(message)
    return bool(found)


def lobby() -> None:
    page.say(INTRO)
    said()
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Join a class")
        st.text_input("Room code", key="class_join", max_chars=4 * rooms.CODE_LENGTH, placeholder="e.g. K7PM-Q2XD")
        st.button("Join", key="class_join_go", on_click=join, icon=":material/login:")
    with right:
        st.subheader("Teach one")
        st.caption(
            f"Starts a room of {len(questions.bank())} questions. Answers are anonymous: a random id in each "
            "browser's cookie, no name. A room ends after 6 idle hours."
        )
        st.button("Start a room", key="class_start", on_click=start, type="primary", icon=":material/co_present:")
    page.finish(caveat="This link opens the class page. A room's own join link is on the presenter's screen.")


def join_link(code: str) -> str:
    base = (st.context.url or "").split("?")[0].rstrip("/")
    if not base.endswith("/class"):
        base = base.rsplit("/", 1)[0] + "/class" if base else "/class"
    return f"{base}?room={code}"


def count_of(room: rooms.Room | None) -> None:
    if room is None or room.question is None:
        return
    n = store.count(room.code, room.index, room.round)
    with st.container(key="class_count"):
        st.metric(
            "Answered",
            f"{n}",
            help="How many phones have answered this round. What they answered stays hidden "
            "until you reveal it, so the first answers don't sway the rest.",
        )


def rounds_of(room: rooms.Room, question: questions.Question) -> list[dict[str, int]]:
    """Each revealed round's counts, round 1 first."""
    last = room.round if room.phase != "ask" else room.round - 1
    return [questions.tally(question, store.votes(room.code, room.index, r).values()) for r in range(1, last + 1)]


def chart(room: rooms.Room, question: questions.Question) -> None:
    """The revealed rounds as a chart, and the same counts as text (``class_results``)."""
    rounds = rounds_of(room, question)
    page.chart(
        figures.fig_results(question, rounds, presenting=page.presenting),
        key="class_chart",
        alt="The class's answers, each round, with torch's answer marked.",
    )
    with st.container(key="class_results"):
        st.text(figures.results_text(question, rounds))


def explain(question: questions.Question) -> None:
    """Why torch gives that answer, and the live view that shows it."""
    st.markdown(question.why)
    link = question.link + ("&present=1" if page.presenting else "")
    st.link_button("See why, live", link, icon=":material/play_circle:")


def results(room: rooms.Room, question: questions.Question, mine: str | None) -> None:
    """A phone after the reveal: its own answer, the class's as text, torch's, and why.

    No chart: every phone of the class reruns at the reveal, and a chart each cost a replica seconds of CPU
    with a hundred phones on it (``make load LOAD_ARGS="--mode poll"``); the projector shows the chart.
    """
    if mine is not None:
        shown = question.choices[int(mine)] if question.kind == "choice" else mine
        verdict = "right" if question.right(mine) else "not the answer torch gives"
        st.markdown(f"**Your answer:** {shown} ({verdict}).")
    else:
        st.markdown("You did not answer this round.")
    with st.container(key="class_results"):
        st.markdown(figures.results_markdown(question, rounds_of(room, question)))
    explain(question)


def ask(question: questions.Question, number: int, total: int, large: bool = True) -> None:
    st.caption(f"Question {number} of {total}")
    st.markdown(f"### {question.prompt}" if large else f"**{question.prompt}**")


def projector(room: rooms.Room, secret: str) -> None:
    """The projector: the question and the buttons; beside them, how to join and how many have answered.

    After a reveal the chart takes the choices' place, and the join box gives
    its room to the counts as text and why, so a 1280 × 720 screen shows it all.
    """
    question = questions.by_id(room.question) if room.question else None
    revealed = question is not None and room.phase == "reveal" and not room.closed
    said()
    main, side = st.columns([3, 2], gap="large")
    with side:
        link = join_link(room.code)
        if not revealed:
            st.image(qr_svg(link), width=260)
        st.markdown(f"Join at **{link}**")
        with st.container(key="class_code"):
            st.markdown(f"{'####' if revealed else '##'} Code {room.code[:4]}-{room.code[4:]}")
        classroom.poll(room.code, room.version, show_count=count_of)
        if revealed:
            explain(question)
    with main:
        if room.closed:
            st.info("This room is closed. Start another from the class page.")
            return
        if question is None:
            st.success("That was the last question. Thank you!")
        else:
            ask(question, room.index + 1, len(room.questions), large=not revealed)
            if not revealed:  # once revealed, the chart names the choices
                if question.kind == "choice":
                    st.markdown("\n\n".join(f"**{chr(65 + i)}.** {c}" for i, c in enumerate(question.choices)))
                else:
                    st.markdown(f"Answer with a number between {question.lo:g} and {question.hi:g}.")
            st.caption(f"Round {room.round}: {PHASE_NAMES[room.round]}.")
        presenter_buttons(room, secret)
        if revealed:
            chart(room, question)


def presenter_buttons(room: rooms.Room, secret: str) -> None:
    """Reveal, Ask again, Next and Close, above the results so the projector never scrolls to them."""
    buttons = st.columns(4)
    buttons[0].button(
        "Reveal",
        key="class_reveal",
        on_click=act,
        args=(room.code, secret, "reveal"),
        disabled=room.phase != "ask",
        type="primary",
        icon=":material/visibility:",
    )
    buttons[1].button(
        "Ask again",
        key="class_again",
        on_click=act,
        args=(room.code, secret, "again"),
        disabled=not (room.phase == "reveal" and room.round == 1),
        icon=":material/replay:",
        help="Peer instruction: after neighbours have argued, the same question once more, shown beside the first.",
    )
    buttons[2].button(
        "Next",
        key="class_next",
        on_click=act,
        args=(room.code, secret, "next"),
        disabled=room.phase == "done",
        icon=":material/skip_next:",
    )
    buttons[3].button(
        "Close room", key="class_close", on_click=act, args=(room.code, secret, "close"), icon=":material/close:"
    )


def phone(room: rooms.Room) -> None:
    classroom.watch(room.code, room.version)  # this replica's watcher reruns the page when the presenter acts
    boot.rerun_on_reconnect()  # a phone whose replica went lands on the current question on its next one
    if room.closed:
        st.info("The presenter has closed this room.")
        return
    if room.question is None:
        st.success("That was the last question. Thank you!")
        return
    question = questions.by_id(room.question)
    ask(question, room.index + 1, len(room.questions))
    voter = classroom.voter()
    mine = store.mine(room.code, voter, room.index, room.round)
    shown = (room.code, room.index, room.round)
    if st.session_state.get("class_shown") != shown:  # a new question or round: the widget shows this one's vote
        st.session_state["class_shown"] = shown
        st.session_state["answer"] = (int(mine) if question.kind == "choice" else float(mine)) if mine else None
    if room.phase == "ask":
        if question.kind == "choice":
            st.radio(
                "Your answer",
                range(len(question.choices)),
                format_func=lambda i: f"{chr(65 + i)}. {question.choices[i]}",
                key="answer",
                on_change=vote,
                args=(room.code, room, question),
            )
        else:
            st.number_input(
                "Your guess",
                min_value=question.lo,
                max_value=question.hi,
                step=10.0**-question.decimals,
                format=f"%.{question.decimals}f",
                key="answer",
                on_change=vote,
                args=(room.code, room, question),
            )
        if not said() and mine is not None:
            st.caption("Your answer is in. You can change it until the reveal.")
    else:
        said()
        results(room, question, mine)


code = rooms.valid_code(st.query_params.get("room", ""))
try:
    if code is None:
        if st.query_params.get("room"):
            st.warning("The link's room code can't be a room code: 8 letters and digits, as the projector shows.")
        lobby()
    else:
        room = store.room(code)
        if room is None:
            st.warning(rooms.REFUSED["unknown"] + " Ask the presenter for the code, or start a room.")
            lobby()
        else:
            secret = classroom.secret_for(code)
            if secret and rooms.presenter_of(room, secret):
                projector(room, secret)
            else:
                phone(room)
except rooms.StoreDown:
    st.error(classroom.DOWN, icon=":material/cloud_off:")
    if code is not None:
        classroom.poll(code, None)
classroom.keep_cookies()
if not page.presenting:
    st.caption(
        "What is kept: the room code, a random id in this browser's cookie, and each answer's choice, for 6 "
        "idle hours; so that one device can't answer for a crowd, a hash of this browser's cookie and of its "
        "address, with the ids it answered as. No name, no free text."
    )
