"""The kernel CLI (benchmarks/kernels.py): its arguments and its table name the grid as the bench does, and
``make bench`` puts its summary on a copy of docs/benchmarks.md."""

import dataclasses
import math

import pytest
from benchcheck import written

from benchmarks import kernels, page, run
from lnviz.labs import bench


def _measured(batch: int, features: int) -> bench.Measurement:
    return bench.Measurement(
        variant="copy",
        label="copy",
        norm="copy",
        batch=batch,
        features=features,
        dtype="float32",
        device="cpu",
        threads=1,
        times=(1e-3,),
        seconds=1e-3,
        bytes=2 * batch * features * 4,
        gbps=1.0,
        max_error=0.0,
        rel_error=0.0,
    )


def test_features_are_the_sweeps_h_and_the_old_flag_still_reads():
    assert kernels.parse_args([]).features == list(bench.SWEEP_FEATURES)
    assert kernels.parse_args(["--features", "1023,1024"]).features == [1023, 1024]
    assert kernels.parse_args(["--hiddens", "7"]).features == [7]  # the command docs/benchmarks.md records


def test_the_table_gives_h_then_b_of_each_case():
    header, rule, row = kernels.markdown([_measured(batch=6, features=100)]).splitlines()
    assert header.startswith("| dtype | H | B | kernel |") and rule.startswith("|---|")
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:3] == ["float32", "100", "6"] and not math.isnan(float(cells[5]))


def test_make_bench_replaces_the_kernel_section_with_a_row_per_case_and_keeps_the_whole_table(tmp_path):
    variants = ["copy", "ln_naive", "ln_fused", "rms_naive", "rms_fused", "bn_train", "bn_eval"]
    cases = [("float32", 64, 512), ("float32", 8192, 4), ("bfloat16", 64, 1024), ("bfloat16", 8192, 8)]
    results = [
        dataclasses.replace(
            _measured(batch, features), dtype=dtype, variant=v, label=v, seconds=(1000 * k + i + 0.4) * 1e-6
        )
        for k, (dtype, features, batch) in enumerate(cases, start=1)
        for i, v in enumerate(variants)
    ]
    folder = tmp_path / "artifacts"
    body = run.kernels_section(results, "2030-01-02 03:04 UTC")
    (section,) = written(
        tmp_path, lambda path: page.publish("kernels", body, path, kernels.markdown(results), folder), "kernels"
    )
    assert section.startswith("## Norm kernels on the CPU (`make bench`, 2030-01-02 03:04 UTC)")
    assert (
        f"`python -m benchmarks.kernels {' '.join(run.KERNEL_ARGS)}`" in section and "on the machine above" in section
    )
    rows = [line for line in section.splitlines() if line.startswith(("| float32", "| bfloat16"))]
    assert rows[1] == "| float32 | 8192 | 4 | 2,000 | 2,001 | 2,002 | 2,003 | 2,004 | 2,005 | 2,006 |"
    assert len(rows) == 4  # a row per case; the long table, a row per kernel, is kept beside the page
    assert len((folder / "kernels.md").read_text().splitlines()) == 2 + len(results)


def test_a_section_that_would_pass_the_pages_300_lines_is_refused_and_the_page_left_as_it_was(tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text("# Benchmarks\n\n<!-- kernels:start -->\nold\n<!-- kernels:end -->\n")
    with pytest.raises(page.PageTooLong):
        page.write_section("kernels", "| row |\n" * 300, path)
    assert path.read_text() == "# Benchmarks\n\n<!-- kernels:start -->\nold\n<!-- kernels:end -->\n"
