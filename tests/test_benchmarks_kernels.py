"""The kernel CLI (benchmarks/kernels.py): its arguments and its table name the grid as the bench does."""

import math

from benchmarks import kernels
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
