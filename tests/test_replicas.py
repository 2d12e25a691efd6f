"""Two app processes behind nginx: one link, the same numbers through either replica.

The set is tests/conftest.py's ``replicas`` (:mod:`harness.replicas`, shared with
tests/test_shared_own_data.py). The nginx configuration is the one docs/deploy.md gives (read from it by
:mod:`harness.nginx`, so the documented block is the tested one), plus a door
to each replica (:func:`harness.replicas.door`). Chromium opens the same link through replica
A and through replica B and compares every plotly chart's data. Then
browsers, all from 127.0.0.1 like a class behind one NAT address, open the link
through the load balancer: nginx's access log (upstream and routing key of each
request) shows that they spread over both replicas and that each browser's
every request, its websocket reconnecting after a drop included, stayed on its
own. Then ``/static/`` and the stage's files come gzipped and ``/_stcore/metrics`` is not served.
Last, the class poll over both replicas, which share one real Redis as docs/deploy.md has
them do: a class's round, a presenter's double click and two presenter tabs, an outage
of Redis mid-vote, and replica B killed mid-round.
"""

from __future__ import annotations

import gzip
import re
import time
import urllib.error
import urllib.request

import pytest

from harness import nginx
from harness.chromium import VIEWPORT, local_context
from harness.replicas import Replicas
from server.store import RedisStore

# The fixtures browser and open_app; the helpers are imported where used, after
# pytest has loaded the module as a plugin.
pytest_plugins = ("browser",)

LINK = (
    "/?batch=8&features=12&seed=7&dist=heterogeneous+samples&gain=1.5&view=charts"  # charts: plotly draws the numbers
)
OTHER_LINK = LINK.replace("seed=7", "seed=8")

pytestmark = [pytest.mark.browser, pytest.mark.replicas]


def test_the_documented_balancer_is_sticky_by_browser_not_by_address():
    block = nginx.deploy_block()
    assert "ip_hash" not in block, "sticky by address: a class behind one NAT would land on one replica"
    assert re.search(r"^\s*hash \$lnviz_route( consistent)?;", block, re.M), "the upstream must be sticky by browser"


def test_the_balancer_is_the_documented_block_with_only_its_ports_swapped():
    block = nginx.deploy_block()
    want = block
    for old, new in (("server 127.0.0.1:8501;", "server 127.0.0.1:1111;"),
                     ("server 127.0.0.1:8502;", "server 127.0.0.1:2222;"),
                     ("listen 8080;", "listen 127.0.0.1:3333;")):  # fmt: skip
        assert block.count(old) == 1, f"expected {old!r} once in docs/deploy.md's nginx block"
        want = want.replace(old, new)
    assert nginx.balancer([1111, 2222], 3333) == want


def assert_clean(app, where: str, replicas: Replicas) -> None:
    assert not app.exceptions(), f"{where}: {app.exceptions()}{replicas.logs()}"
    assert not app.errors, f"{where}: {app.errors}"


def test_one_link_gives_the_same_numbers_through_either_replica(replicas, open_app):
    from browser import charts_json

    via_a = open_app(replicas.via_a + LINK)
    via_b = open_app(replicas.via_b + LINK)
    assert_clean(via_a, "replica A", replicas)
    assert_clean(via_b, "replica B", replicas)
    charts_a, charts_b = via_a.charts(), via_b.charts()
    assert charts_a, "the link shows no plotly chart"
    assert all(any(t.get(k) for t in chart["traces"] for k in "xyz") for chart in charts_a), "a chart has no data"
    assert charts_json(charts_a) == charts_json(charts_b)
    # The numbers come from the link: another seed, other numbers, on the same replica.
    other = open_app(replicas.via_a + OTHER_LINK)
    assert_clean(other, "replica A, seed 8", replicas)
    assert charts_json(other.charts()) != charts_json(charts_a)

    # Each door reached its own replica, websocket included.
    for page in (via_a, via_b, other):
        page.page.close()
    for door, port in ((replicas.via_a, replicas.port_a), (replicas.via_b, replicas.port_b)):
        rows = replicas.upstreams(int(door.rsplit(":", 1)[1]))
        assert {upstream for upstream, _, _ in rows} == {f"127.0.0.1:{port}"}, rows
        assert any(status == "101" for _, status, _ in rows), f"no websocket through {door}: {rows}"


# What the browsers of the spread test open: the default view, the stage and the formulas without a plotly chart, so
# that six fresh browsers do not each fetch and compile plotly's 4.7 MB chunk, most of that test's time when they
# did. The routing is the same for any page.
SPREAD_LINK = "/?batch=8&features=12&seed=7&dist=heterogeneous+samples&gain=1.5"
BROWSERS = 6  # from one address, like a class behind one NAT
MORE_BROWSERS = 14  # opened only while all so far sit on one replica: six random keys do so 1 time in 32


def open_browser(browser, url: str) -> tuple[object, object, list]:
    """A new browser (its own cookie jar) loading ``url``, its websocket routed through Playwright so a test can drop it.

    Returns (context, AppPage, the list that receives each websocket's server side as it connects); the page is
    loading, not yet settled.
    """
    from browser import AppPage

    context = local_context(browser, viewport=VIEWPORT)
    sockets: list = []
    page = context.new_page()
    page.route_web_socket(re.compile(r".*/_stcore/stream$"), lambda ws: sockets.append(ws.connect_to_server()))
    app = AppPage(page)
    page.on("pageerror", lambda e: app.errors.append(f"pageerror: {e}"))
    app.console = []  # the page's console (the frontend logs its connection's states there), for a failure message
    page.on("console", lambda m: app.console.append(f"{m.type}: {m.text}"))
    page.goto(url, wait_until="commit")
    return context, app, sockets


def route_of(context) -> str:
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    assert "lnviz_route" in cookies, f"nginx set no routing cookie: {cookies}"
    return cookies["lnviz_route"]


# The session is up and its run is over: connected, not running, the page's elements there (the stage's host).
_RAN = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !!app && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && !document.querySelector('[data-testid="stStatusWidget"]')
        && !!document.querySelector('.st-key-live_stage');
}"""


# What the page shows of its session, for a failure message.
_STATE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    const text = (sel) => [...document.querySelectorAll(sel)].map((e) => e.innerText.trim()).join(' | ');
    return {
        connection: app?.getAttribute('data-test-connection-state'),
        script: app?.getAttribute('data-test-script-state'),
        status: text('[data-testid="stStatusWidget"]'),
        dialog: text('[role="dialog"]'),
        stage: !!document.querySelector('.st-key-live_stage'),
    };
}"""


def ran(app, replicas: Replicas | None = None) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        app.page.wait_for_function(_RAN, timeout=180_000, polling=200)
    except PlaywrightTimeout:
        state = app.page.evaluate(_STATE)
        console = "\n".join(getattr(app, "console", [])[-20:])
        logs = replicas.logs() if replicas else ""
        raise AssertionError(f"the page did not settle: {state}\n--- its console ---\n{console}{logs}") from None


def test_browsers_behind_one_address_spread_over_the_replicas_and_each_stays_on_its_own(replicas, browser):
    replica_addresses = {f"127.0.0.1:{replicas.port_a}", f"127.0.0.1:{replicas.port_b}"}
    opened = []  # (context, app, sockets)

    def spread() -> int:
        return len({u for c, *_ in opened for u, _, _ in replicas.upstreams(replicas.lb_port, 0, 0, route_of(c))})

    try:
        while len(opened) < BROWSERS or (spread() < 2 and len(opened) < BROWSERS + MORE_BROWSERS):
            opened.append(open_browser(browser, replicas.lb + SPREAD_LINK))
            ran(opened[-1][1], replicas)
            assert_clean(opened[-1][1], f"browser {len(opened)}", replicas)
        routes = [route_of(c) for c, *_ in opened]
        assert len(set(routes)) == len(routes), "two browsers got the same routing key"

        # A dropped websocket: each page reconnects, and must find its session's replica again. One page at a
        # time: with all six dropped at once, on a loaded CI machine (-n 3), one page once stayed unsettled for
        # 180 s after its reconnect (cause not found; not seen in 10 runs here under load). ran() now says what
        # such a page shows, its console and the replicas' logs.
        for _, app, sockets in opened[:BROWSERS]:
            assert len(sockets) == 1, "the page's websocket did not go through the route"
            sockets[0].close()
            deadline = time.monotonic() + 120
            while len(sockets) < 2 and time.monotonic() < deadline:
                app.page.wait_for_timeout(200)  # Playwright's events reach the test while it waits
            assert len(sockets) == 2, "the page did not reconnect"
            ran(app, replicas)
            assert_clean(app, "after a reconnect", replicas)
        for _, app, _ in opened:
            app.page.close()

        served = {}
        for i, route in enumerate(routes):
            want = 2 if i < BROWSERS else 1  # websockets logged: the dropped one and its reconnection
            rows = replicas.upstreams(replicas.lb_port, websockets=want, route=route)
            sockets_logged = [u for u, status, request in rows if status == "101" and "/_stcore/stream" in request]
            assert len(sockets_logged) == want, (route, rows)
            assert len(rows) > 2, rows  # the page and its assets too
            upstreams = {u for u, _, _ in rows}
            assert len(upstreams) == 1 and upstreams <= replica_addresses, (route, rows)
            served[route] = upstreams.pop()
        assert set(served.values()) == replica_addresses, f"{len(served)} browsers, all on one replica: {served}"
    finally:
        for context, *_ in opened:
            context.close()


def test_static_files_come_gzipped_and_metrics_are_not_served(replicas):
    with urllib.request.urlopen(replicas.lb + "/", timeout=30) as r:
        html = r.read().decode()
    script = re.search(r'"\.?/?(static/js/index\.[^"]+\.js)"', html)  # a new browser's page imports it after its proof
    assert script, html[:2000]
    plain = urllib.request.urlopen(f"http://127.0.0.1:{replicas.port_a}/{script[1]}", timeout=30).read()
    request = urllib.request.Request(f"{replicas.lb}/{script[1]}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.headers.get("Content-Encoding") == "gzip", dict(r.headers)
        body = r.read()
    assert gzip.decompress(body) == plain
    assert len(body) < len(plain) / 2, (len(body), len(plain))
    # The stage's files (its asset_dir) too, through the block's own location for them.
    stage = "_stcore/bidi-components/lnviz.stage/model.js"
    plain = urllib.request.urlopen(f"http://127.0.0.1:{replicas.port_a}/{stage}", timeout=30).read()
    request = urllib.request.Request(f"{replicas.lb}/{stage}", headers={"Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=30) as r:
        assert r.headers.get("Content-Encoding") == "gzip", dict(r.headers)
        assert r.headers.get("Content-Type", "").startswith(("text/javascript", "application/javascript"))
        assert gzip.decompress(r.read()) == plain

    direct = urllib.request.urlopen(f"http://127.0.0.1:{replicas.port_a}/_stcore/metrics", timeout=30)
    assert direct.status == 200  # Streamlit itself always serves them: only the balancer hides them
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(replicas.lb + "/_stcore/metrics", timeout=30)
    assert refused.value.code == 404


# ---- the class poll over both replicas and their one Redis ----


def test_a_class_over_both_replicas_sharing_redis_is_one_class(replicas, contexts):
    from test_browser_classroom import class_round, page_runs

    runs = page_runs(replicas.runs)
    class_round(replicas.via_a, [replicas.via_b, replicas.via_a, replicas.via_b], contexts, runs=runs)
    assert runs() >= 3 + 4  # both replicas count: each phone's first run, and a run per vote at least


def test_a_double_click_and_a_second_tab_on_the_other_replica_each_move_the_room_once(replicas, contexts):
    from test_browser_classroom import PROJECTOR, double_click, open_in, presenter_button, question_number, start_room

    store = RedisStore(replicas.redis.url)
    context = contexts(PROJECTOR)  # one presenter's browser: its cookie holds the room's secret
    first = open_in(context, f"{replicas.via_a}/class?present=1")
    code = start_room(first)
    double_click(first, "next")
    assert store.room(code).index == 1 and question_number(first) == 2
    second = open_in(context, f"{replicas.via_b}/class?room={code}&present=1")  # the same room, on replica B
    assert question_number(second) == 2
    for tab in (first, second):  # both tabs drew version 1: two presses, within a few ms, on two replicas
        tab.settle()
    buttons = [presenter_button(tab, "next") for tab in (first, second)]
    boxes = [b.bounding_box() for b in buttons]
    for tab, box in zip((first, second), boxes, strict=True):
        tab.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    for tab in (first, second):
        tab.page.wait_for_timeout(1500)
        tab.settle()
    assert store.room(code).index == 2
    for tab in (first, second):  # the tab that was behind shows the room as it is, without a word
        tab.page.get_by_text(re.compile(r"^Question 3 of")).first.wait_for(timeout=30_000)
        assert not tab.page.locator("[data-testid=stAlert]").count()


def test_redis_stopped_mid_vote_each_phone_shows_what_it_holds_once_back_by_itself(replicas, contexts):
    """Redis goes away with the votes it held and comes back with them: each phone retries by itself, says the
    store is back, and shows its stored answer or none (never option A by default); no vote lost or doubled."""
    from test_browser_classroom import PHONE, PROJECTOR, SEEN_S, answer, checked, open_in, pick, press, start_room

    store = RedisStore(replicas.redis.url)
    presenter = open_in(contexts(PROJECTOR), f"{replicas.via_a}/class?present=1")
    code = start_room(presenter)
    press(presenter, "next")  # the bank's second question has choices
    room = store.room(code)
    voted, late = (open_in(contexts(PHONE), f"{base}/class?room={code}") for base in (replicas.via_a, replicas.via_b))
    answer(voted, 1)
    (voter,) = store.votes(code, room.index, room.round)
    replicas.redis.stop(keep=True)
    try:
        for phone, option in ((voted, 2), (late, 3)):  # a change of mind and a first answer, neither sent
            pick(phone, option)
            phone.page.get_by_text("can't be reached").first.wait_for(timeout=SEEN_S * 1000)
    finally:
        replicas.redis.start()
    for phone in (voted, late):
        phone.page.get_by_text("The class's store is back").wait_for(timeout=SEEN_S * 1000)
        phone.settle()
        assert not phone.page.get_by_text("can't be reached").count()
    assert checked(voted) == 1 and checked(late) is None
    assert store.votes(code, room.index, room.round) == {voter: "1"}
    answer(late, 3)  # answered again, counted once
    assert store.count(code, room.index, room.round) == 2


def test_a_replica_killed_mid_round_loses_or_doubles_no_vote_and_its_phones_see_the_reveal(replicas, contexts):
    """Through nginx, two replicas and Redis: replica B is killed and started again mid-round; its phones come
    back by themselves (the page's connection, the element's stream), a change of mind sent after it replaces the
    earlier vote, and the reveal reaches every phone on either replica."""
    from test_browser_classroom import (
        CHOICES,
        ELEMENT,
        PHONE,
        PROJECTOR,
        answer,
        open_in,
        page_runs,
        press,
        results,
        start_room,
        wait_count,
    )

    store = RedisStore(replicas.redis.url)
    presenter = open_in(contexts(PROJECTOR), f"{replicas.via_a}/class?present=1")
    code = start_room(presenter)
    press(presenter, "next")  # a choice question
    room = store.room(code)
    bases = [replicas.via_b, replicas.via_b, replicas.via_a]
    phones = [open_in(contexts(PHONE), f"{b}/class?room={code}") for b in bases]
    for phone, option in zip(phones, (0, 1, 2), strict=True):
        answer(phone, option)
    wait_count(presenter, 3)
    replicas.restart(1)  # replica B's process and all it held in memory are gone
    back = 60_000  # B's start, then the element's next try (at most 15 s and a third apart)
    for phone in phones[:2]:
        phone.page.locator(CHOICES).first.wait_for(timeout=back)
        phone.settle()
    answer(phones[0], 2)  # sent to the new replica B
    for phone in phones:
        phone.settle()
    runs = page_runs(replicas.runs)
    before = runs()
    press(presenter, "reveal")
    for phone in phones:
        phone.page.locator(f"{ELEMENT} section.results").wait_for(timeout=back)
        assert "2 votes" in results(phone) and "1 vote" in results(phone)
    assert before > 0 and runs() == before  # on either replica, the reveal came by the stream, not a page run
    votes = store.votes(code, room.index, room.round)
    assert sorted(votes.values()) == ["1", "2", "2"]  # three voters, each once, the change replacing its vote
