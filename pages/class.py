"""The class poll: the class predicts, then sees its answers beside torch's.

The presenter starts a room; students join at /class?room=CODE on their phones
and answer; the presenter reveals the answers, asks again after the
neighbours have argued, and moves on. The store is lnviz.serving.rooms; who
is who, and the poll, are ui.classroom.
"""

import streamlit as st

from lnviz import text
from lnviz.figures.qr import qr_svg
from lnviz.labs.classroom import figures, poll, questions
from lnviz.serving import rooms
from ui import boot, classroom
from ui import store as shared_store
from ui.page import Page

# In a room the question is the heading, on the projector and on a phone: the page's title is left out, and its
# height goes to the question, the buttons and the whole results chart (a 1280 × 720 projector, a 390 × 844 phone).
page = Page.start(title=not st.query_params.get("room"))
INTRO = (
    "Predict first, then see: the presenter asks, everyone answers on a phone, and the class's answers appear "
    "beside torch's only when the presenter reveals them."
)
store = shared_store.store()
PHASE_NAMES = {1: "first answers", 2: "second answers, after discussion"}


def act(code: str, secret: str, action: str, version: int) -> None:
    """A presenter's button, pressed on a page that drew the room at ``version``: the store applies it only with
    the room's secret and only at that version. A press the room has moved past (the second click of a double
    click, a second tab that is behind) changes nothing, silently: this run draws the room as it is."""
    try:
        store.act(code, secret, action, version)
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


def vote(code: str, room: rooms.Room, question: poll.Question) -> None:
    """The student's choice, sent as it is made (a tap, or Send): one vote per voter per round, a change
    replaces it. The page then shows the answer the store holds, whatever this came to."""
    raw = st.session_state.get("answer")
    choice = question.parse(raw)
    if choice is None:
        if question.kind == "number" and raw is not None:
            message = f"{written(raw)} is outside this question's range, {span(question)}: nothing was sent."
        else:
            message = "That is not one of this question's answers."
        st.session_state["class_said"] = ("warning", message)
        return
    try:
        outcome = store.vote(code, classroom.voter(), room.index, room.round, choice, *classroom.sender())
    except rooms.StoreDown:  # perhaps counted, perhaps not: once the store answers, the page shows which
        st.session_state["class_down"] = True
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
    """Join first (most visitors are students on phones), in a form so that Enter after the code joins; then
    starting a room, a secondary button under its own heading."""
    page.say(INTRO)
    said()
    left, right = st.columns(2, gap="large")
    with left:
        st.subheader("Join a class")
        with st.form("class_join_form", border=False, enter_to_submit=True):
            st.text_input("Room code", key="class_join", max_chars=4 * rooms.CODE_LENGTH, placeholder="e.g. K7PM-Q2XD")
            st.form_submit_button("Join", key="class_join_go", on_click=join, type="primary", icon=":material/login:")
    with right:
        st.subheader("Teach one")
        st.caption(
            f"Starts a room of {len(questions.bank())} questions. Answers are anonymous: a random id in each "
            "browser's cookie, no name. A room ends after 6 idle hours."
        )
        st.button("Start a room", key="class_start", on_click=start, icon=":material/co_present:")
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


def rounds_of(room: rooms.Room, question: poll.Question) -> list[dict[str, int]]:
    """Each revealed round's counts, round 1 first."""
    last = room.round if room.phase != "ask" else room.round - 1
    return [poll.tally(question, store.votes(room.code, room.index, r).values()) for r in range(1, last + 1)]


def chart(room: rooms.Room, question: poll.Question) -> None:
    """The revealed rounds as a chart, and the same counts as text (``class_results``)."""
    rounds = rounds_of(room, question)
    page.chart(
        figures.fig_results(question, rounds, presenting=page.presenting),
        key="class_chart",
        alt="The class's answers, each round, with torch's answer marked.",
    )
    with st.container(key="class_results"):
        st.text(figures.results_text(question, rounds))


def explain(question: poll.Question) -> None:
    """Why torch gives that answer, and the live view that shows it."""
    st.markdown(question.why)
    link = question.link + ("&present=1" if page.presenting else "")
    st.link_button("See why, live", link, icon=":material/play_circle:")


def results(room: rooms.Room, question: poll.Question, mine: str | None) -> None:
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


def ask(question: poll.Question, room: rooms.Room, large: bool = True) -> None:
    st.caption(f"Question {room.index + 1} of {len(room.questions)} · round {room.round}: {PHASE_NAMES[room.round]}")
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
            ask(question, room, large=not revealed)
            if not revealed:  # once revealed, the chart names the choices
                if question.kind == "choice":
                    st.markdown("\n\n".join(f"**{chr(65 + i)}.** {c}" for i, c in enumerate(question.choices)))
                else:
                    st.markdown(f"Answer with a number {span(question)}.")
        presenter_buttons(room, secret)
        if revealed:
            chart(room, question)


BUTTONS = (  # action, label, icon, help
    ("reveal", "Reveal", ":material/visibility:", None),
    (
        "again",
        "Ask again",
        ":material/replay:",
        "Peer instruction: after neighbours have argued, the same question once more, shown beside the first.",
    ),
    ("next", "Next", ":material/skip_next:", None),
    ("close", "Close room", ":material/close:", None),
)


def button_key(action: str, version: int) -> str:
    """A presenter's button is a new widget at each version of the room (``class_next_v3``), so a press of a page
    drawn earlier (a double click's second click) reaches the store with the version that page drew."""
    return f"class_{action}_v{version}"


def presenter_buttons(room: rooms.Room, secret: str) -> None:
    """Reveal, Ask again, Next and Close in one row, each as wide as its label, above the results so the
    projector never scrolls to them."""
    enabled = {
        "reveal": room.phase == "ask",
        "again": room.phase == "reveal" and room.round == 1,
        "next": room.phase != "done",
        "close": True,
    }
    with st.container(horizontal=True, key="class_buttons"):
        for action, label, icon, help in BUTTONS:
            st.button(
                label,
                key=button_key(action, room.version),
                on_click=act,
                args=(room.code, secret, action, room.version),
                disabled=not enabled[action],
                type="primary" if action == "reveal" else "secondary",
                icon=icon,
                help=help,
                width="content",
            )


def written(value: float) -> str:
    return f"{value:g}".replace("-", text.MINUS)


def span(question: poll.Question) -> str:
    """A number question's range in words: "from −10 to 10"."""
    return f"from {written(question.lo)} to {written(question.hi)}"


def stored_widget_value(question: poll.Question, mine: str | None) -> int | float | None:
    return None if mine is None else int(mine) if question.kind == "choice" else float(mine)


def back_from_outage(question: poll.Question, mine: str | None) -> None:
    """After the store could not be reached: say that it is back and which answer of this phone's it holds."""
    if mine is None:
        held = "It holds no answer from this phone for this round: answer now, if you had not."
    elif question.kind == "choice":
        held = f"It holds your answer **{chr(65 + int(mine))}. {question.choices[int(mine)]}**."
    else:
        held = f"It holds your guess **{mine}**."
    st.info(f"The class's store is back. {held} This page shows what it holds.", icon=":material/cloud_done:")


def answer_form(room: rooms.Room, question: poll.Question) -> None:
    """A tap sends a choice; a guess is typed, with its range beside it, and sent by Send or Enter."""
    if question.kind == "choice":
        st.radio(
            "Your answer",
            range(len(question.choices)),
            format_func=lambda i: f"{chr(65 + i)}. {question.choices[i]}",
            index=None,
            key="answer",
            on_change=vote,
            args=(room.code, room, question),
        )
        return
    with st.form("class_guess", border=False, enter_to_submit=True):
        st.number_input(  # no min or max: a value out of range is sent to vote(), which says so in words
            f"Your guess, {span(question)}",
            value=None,
            step=10.0**-question.decimals,
            format=f"%.{question.decimals}f",
            key="answer",
        )
        st.form_submit_button("Send", key="class_send", on_click=vote, args=(room.code, room, question), type="primary")


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
    ask(question, room)
    voter = classroom.voter()
    mine = store.mine(room.code, voter, room.index, room.round)
    if st.session_state.pop("class_down", False):
        back_from_outage(question, mine)
    if room.phase == "ask":
        # The store's answer, never a widget's default: a run that could not reach the store drew no widget,
        # so Streamlit dropped its state, and a vote that failed may or may not have been counted.
        st.session_state["answer"] = stored_widget_value(question, mine)
        answer_form(room, question)
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
    st.session_state["class_down"] = True  # the next run that reaches the store says so and shows what it holds
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
