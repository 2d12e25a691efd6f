"""A link read once, at the door (issue 48): lnviz.views.links.canonical, pure, and server.door's middleware, in process.

Torch-free and fast: no page runs here. A page opened through the door is AppTest's (``harness.apptest.run_page``
passes every query through it) and the browser's (tests/test_browser_links.py, tests/test_base_path.py).
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from itsdangerous import BadSignature

from harness import aio
from lnviz.views import links, pages
from lnviz.views.links import canonical
from server import door


def read(page: str, query: str) -> links.Canonical:
    return canonical(page, parse_qsl(query, keep_blank_values=True))


def test_a_canonical_link_passes_unchanged_on_every_page():
    for entry in pages.PAGES:
        for query in ("", f"v={links.LINK_VERSION}", "present=1&embed=true", "zzz=1&note=abc"):
            got = read(entry.name, query)
            assert not got.changed and got.notes == () and got.query == tuple(parse_qsl(query)), (entry.name, query)
    kept = "batch=6&v=4&features=10&gain=1.5&dist=heterogeneous+samples&hide=eps&preset=small-batch&own=ab12"
    assert not read("explorer", kept).changed  # in its order, a control equal to its default included
    assert not read("explorer", "batch=8").changed
    assert not read("transformer", "text=Hello+there.&layer=2").changed
    assert not read("class", "room=ABCDEFGH").changed


def test_a_value_between_two_stops_takes_the_nearest_with_its_note():
    got = read("explorer", "batch=100")
    assert dict(got.query) == {"batch": "96", "v": str(links.LINK_VERSION)}
    assert got.notes == ("Batch size B: `100` is not one of the slider's stops; using 96.",)
    assert dict(read("explorer", "batch=16.0").query)["batch"] == "16"  # a stop written otherwise: as the table


def test_an_index_past_the_end_of_its_grid_is_the_last_with_its_note():
    got = read("explorer", "batch=100&sample=999&feature=40")
    assert dict(got.query) == {"batch": "96", "sample": "95", "feature": "11", "v": "4"}
    assert "Sample i: 999 is past the last of 96; using 95." in got.notes
    assert "Feature j: 40 is past the last of 12; using 11." in got.notes  # H: the default 12
    lesson = read("explorer", "preset=small-batch&sample=7")  # B: the lesson's 4
    assert dict(lesson.query)["sample"] == "3" and lesson.notes == ("Sample i: 7 is past the last of 4; using 3.",)
    family = read("family", "batch=3&channels=4&positions=5&sample=5&channel=9&position=7")
    assert {k: v for k, v in family.query if k in ("sample", "channel", "position")} == {
        "sample": "2",
        "channel": "3",
        "position": "4",
    }
    assert dict(read("coupling", "batch=4&sample=9").query)["sample"] == "3"
    assert dict(read("sequences", "features=8&feature=20").query)["feature"] == "7"
    # With your own data the grid is the data's, which the door doesn't know: the page lowers it, with a note.
    assert not read("explorer", "own=ab12&sample=999").changed
    assert not read("explorer", "sample=7").changed  # inside the default 8 × 12


def test_a_link_from_every_earlier_version_opens_its_view_in_todays_words():
    v1 = read("explorer", "row=2&col=5")  # no v, and names only version 1 used
    assert dict(v1.query) == {
        "sample": "2",
        "feature": "5",
        "batch": "16",
        "features": "32",
        "draw": "whole",
        "view": "charts",
        "v": "4",
    }
    assert "Sample i: this link calls it `row`, now `sample`; using 2." in v1.notes
    assert any("earlier lnviz" in n and "Batch size B = 16" in n for n in v1.notes)
    v2 = read("explorer", "v=2&gain=2")
    assert dict(v2.query) == {"gain": "2", "draw": "whole", "view": "charts", "v": "4"}
    walk = read("walkthrough", "v=1&step=3")  # counted from 0 then
    assert dict(walk.query)["step"] == "4" and any("counts from 0" in n for n in walk.notes)
    v3 = read("explorer", "v=3&batch=5")
    assert dict(v3.query) == {"batch": "5", "draw": "whole", "v": "4"}
    assert v3.notes == ("This link is from an earlier lnviz, whose defaults it keeps: Draw = whole.",)
    assert dict(read("invariance", "v=2").query) == {"v": "4"}  # nothing changed there since: today's version
    renamed = read("explorer", f"stage=x_hat&v={links.LINK_VERSION}")  # renamed while links carried v
    assert dict(renamed.query) == {"output": "x_hat", "v": "4"} and "now `output`" in renamed.notes[0]


def test_a_value_of_the_wrong_type_is_the_default_and_leaves_the_link():
    got = read("explorer", "seed=inf&view=&gain=lots&affine=True&batch=6&batch=7")
    assert dict(got.query) == {"affine": "true", "batch": "7", "v": "4"}
    assert [n.split(":")[0] for n in got.notes] == ["Batch size B", "Seed", "Gain γ", "Details"]
    assert "(batch was given 2 times; the last one counts)" in got.notes[0]


def test_a_preset_and_hide_name_only_what_the_page_has():
    got = read("explorer", "preset=bogus&hide=eps,zzz,seed")
    assert dict(got.query) == {"hide": "eps,seed", "v": "4"}
    assert "preset: `bogus` is not a lesson" in got.notes[0] and "hide: `zzz` is not a control" in got.notes[1]
    other = read("coupling", "preset=small-batch")
    assert dict(other.query) == {"v": "4"} and other.notes == (
        "preset: `small-batch` is a lesson of another page (/explorer); ignored here.",
    )


QUERY_KEYS = sorted({name for c in pages.CONTROLS.values() for p in c for name in (p.key, *p.old_keys)})
JUNK = st.one_of(
    st.sampled_from(["", "nan", "inf", "-1", "0", "1", "2", "3", "7", "12.7", "100", "999", "1e12", "true", "x_hat"]),
    st.sampled_from(["charts", "whole", "small-batch", "eps,seed,zzz", "heterogeneous samples", "1e-05"]),
    st.text(max_size=8),
)
PAIRS = st.lists(
    st.tuples(st.sampled_from([*QUERY_KEYS, "v", "preset", "hide", "own", "present", "note", "zzz"]), JUNK),
    max_size=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(page=st.sampled_from([entry.name for entry in pages.PAGES]), pairs=PAIRS)
def test_the_canonical_link_is_canonical_so_the_redirect_never_loops(page, pairs):
    got = canonical(page, pairs)
    again = canonical(page, got.query)
    assert not again.changed and again.notes == (), (pairs, got.query, again.query)
    table = pages.CONTROLS[page]
    for key, value in got.query:
        if key in table.keys():  # each control once, a value its widget takes as written
            assert [k for k, _ in got.query].count(key) == 1
            assert table[key].parse(value) == (table[key].parse(value)[0], None)
            assert table[key].format(table[key].parse(value)[0]) == value
    assert got.changed == (list(got.query) != pairs)


# The middleware, in process: a stand-in for Streamlit behind it.


def call(path: str, query: str = "", method: str = "GET", base: str = "") -> tuple[int, dict[bytes, bytes], bool]:
    """(status, headers, whether Streamlit was reached) for a request through the door."""
    reached: list[bool] = []

    async def streamlit(scope, receive, send) -> None:
        reached.append(True)
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/html")]})
        await send({"type": "http.response.body", "body": b"<html>"})

    sent: list[dict] = []

    async def send(message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "query_string": query.encode()}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("server.base_path.prefix", lambda: base)
        aio.run(door.Door(streamlit)(scope, None, send))  # a thread of its own: a browser test may hold a loop here
    return sent[0]["status"], dict(sent[0].get("headers", [])), bool(reached)


def test_the_door_redirects_a_pages_html_to_the_canonical_link_with_its_notes_signed():
    status, headers, reached = call("/", "batch=100&sample=999")
    assert (status, reached) == (302, False) and headers[b"cache-control"] == b"no-store"
    target = urlsplit(headers[b"location"].decode())
    assert target.path == "./"  # relative: under whatever path a proxy serves the app at
    query = parse_qsl(target.query)
    assert query[:3] == [("batch", "96"), ("sample", "95"), ("v", "4")] and query[3][0] == door.NOTE
    notes = door._serializer().loads(query[3][1])
    assert notes == list(read("explorer", "batch=100&sample=999").notes)
    # The canonical link passes, its notes with it: no second redirect.
    assert call("/", target.query) == (200, {b"content-type": b"text/html"}, True)


def test_the_door_knows_every_page_path_and_nothing_else():
    for entry in pages.PAGES:
        for path in entry.paths:
            status, headers, _ = call(f"/{path}", "v=2")
            assert status == 302 and headers[b"location"].decode().startswith(f"./{path}?"), path
    for path in ("/_stcore/health", "/static/js/x.js", "/api/proof", "/nowhere", "/walkthrough/x"):
        assert call(path, "batch=100")[0] == 200, path
    assert call("/", "batch=100", method="POST")[0] == 200
    assert call("/", "batch=100", method="HEAD")[0] == 302


def test_under_a_base_path_the_door_answers_under_it():
    assert call("/lnviz/walkthrough", "v=2", base="/lnviz")[1][b"location"].startswith(b"./walkthrough?")
    assert call("/lnviz/", "v=2", base="/lnviz")[1][b"location"].startswith(b"./?")
    assert call("/lnviz", "v=2", base="/lnviz")[1][b"location"].startswith(b"./lnviz?")  # resolves to /lnviz?…
    assert call("/walkthrough", "v=2", base="/lnviz")[0] == 200  # outside the path: not a page of this app


def test_a_note_the_door_did_not_sign_is_not_read():
    token = door._serializer().dumps(["Batch size B: using 96."])
    assert door._serializer().loads(token, max_age=door.NOTE_S) == ["Batch size B: using 96."]
    forged = token[:-2] + ("AA" if not token.endswith("AA") else "BB")
    with pytest.raises(BadSignature):
        door._serializer().loads(forged, max_age=door.NOTE_S)
