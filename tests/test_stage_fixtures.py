"""The fixtures of the stage's JavaScript tests (tests/js/fixtures/) are what torch and lnviz write today.

``make test`` runs the JavaScript tests themselves (``node --test tests/js/``) before pytest; this
keeps what they check against from going stale: a change to the payload, to torch's numbers or to
:func:`lnviz.text.format_number` fails here until ``python -m harness.stage_fixtures`` rewrites them.
"""

from harness import stage_fixtures


def test_the_committed_fixtures_are_the_ones_torch_and_lnviz_write_now():
    built = stage_fixtures.build()
    assert sorted(built) == sorted(p.name for p in stage_fixtures.FOLDER.glob("*.json"))
    for name, value in built.items():
        committed = (stage_fixtures.FOLDER / name).read_text(encoding="utf-8")
        assert committed == stage_fixtures.dumps(value), (
            f"tests/js/fixtures/{name} is stale: python -m harness.stage_fixtures"
        )
