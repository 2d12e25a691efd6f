"""The pretrained transformer of the /transformer page: checked and loaded once per process, on first use.

Nothing here runs on import, and no other page calls :func:`loaded`: only that
page waits for the model, or imports ``transformers``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ui.heavy import PerProcess

if TYPE_CHECKING:
    from lnviz.labs.transformer.model import Model


@PerProcess
def loaded() -> Model | str:
    """The model, or one plain sentence saying why it can't be used (missing or altered files): kept either way,
    so a refused file is hashed once, not on every run."""
    from lnviz.labs.transformer import files, model

    checked = files.check()
    if not checked.ok:
        return checked.problem
    try:
        return model.load(checked)
    except (OSError, ValueError) as err:  # a folder whose files transformers can't read as a BERT
        return f"The model's files could not be loaded ({type(err).__name__})."
