"""The pretrained encoder (all-MiniLM-L6-v2, BERT's architecture), loaded by ``transformers`` from local files,
with a hook on each LayerNorm.

This is the only module of lnviz that imports ``transformers``, and only when
:func:`load` is called: no other page pays for it. ``HF_HUB_OFFLINE`` is set
before the import and every file is read with ``local_files_only=True``:
nothing is fetched from a hub.

The 13 LayerNorms of this BERT-architecture encoder, each over the H features of
every token of x: (S, T, H), sentences by tokens by features:

==================  =========================================================
``embeddings``      after the word, position and type embeddings are summed
``attention``, l    after layer l's self-attention and its residual add
``ffn``, l          after layer l's feed-forward block and its residual add
==================  =========================================================

A forward hook on each module (the modules of ``BertModel`` itself, not a
rewritten forward) records what went in and what came out.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor, nn

from lnviz.labs.transformer import files
from lnviz.views import state

SITES = state.SITE.options  # the three LayerNorms a student can pick, as the state table offers them
_SHARED: list[Model | str] = []  # the process's one model, or why there is none (see shared)
_SHARED_LOCK = threading.Lock()


@dataclass(frozen=True)
class Model:
    """A loaded encoder and its tokenizer; :meth:`forward` is safe from several threads (one at a time)."""

    bert: Any  # transformers.BertModel, in eval mode, on the CPU
    tokenizer: Any  # tokenizers.Tokenizer, padding to the longest sentence, never truncating
    folder: str
    layers: int
    hidden: int
    eps: float
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _copies: dict = field(default_factory=dict, repr=False, compare=False)  # (device, dtype) -> module

    def norms(self) -> dict[tuple[int, str], nn.LayerNorm]:
        """The LayerNorm modules by (layer, site); the embeddings' is (0, "embeddings")."""
        return norms(self.bert)

    def on(self, device: torch.device, dtype: torch.dtype) -> Any:
        """The encoder on ``device`` in ``dtype``: one copy each, made on first use."""
        key = (str(device), dtype)
        if key not in self._copies:
            import copy

            bert = self.bert if (device.type == "cpu" and dtype == torch.float32) else copy.deepcopy(self.bert)
            self._copies[key] = bert.to(device=device, dtype=dtype).eval()
        return self._copies[key]

    def forward(
        self, ids: Tensor, mask: Tensor, device: torch.device, dtype: torch.dtype
    ) -> tuple[dict[tuple[int, str], tuple[Tensor, Tensor]], dict[tuple[int, str], nn.LayerNorm]]:
        """Run ids (S, T) with attention mask (S, T); each LayerNorm's (input, output), (S, T, H) on the CPU,
        and its module on the device."""
        with self._lock:
            bert = self.on(device, dtype)
            modules = norms(bert)
            seen: dict[tuple[int, str], tuple[Tensor, Tensor]] = {}
            hooks = [
                module.register_forward_hook(
                    lambda _m, args, out, where=where: seen.__setitem__(where, (args[0].detach(), out.detach()))
                )
                for where, module in modules.items()
            ]
            try:
                with torch.inference_mode():
                    bert(input_ids=ids.to(device), attention_mask=mask.to(device))
            finally:
                for hook in hooks:
                    hook.remove()
        return {k: (x.to("cpu"), y.to("cpu")) for k, (x, y) in seen.items()}, modules


def norms(bert: Any) -> dict[tuple[int, str], nn.LayerNorm]:
    """A BertModel's 13 LayerNorms by (layer, site)."""
    found = {(0, "embeddings"): bert.embeddings.LayerNorm}
    for layer, block in enumerate(bert.encoder.layer):
        found[(layer, "attention")] = block.attention.output.LayerNorm
        found[(layer, "ffn")] = block.output.LayerNorm
    return found


def load(checked: files.Checked) -> Model:
    """The encoder and tokenizer from ``checked.folder`` (whose weights :func:`files.check` has verified).

    ValueError with one plain sentence if the files were refused.
    """
    if not checked.ok or checked.folder is None:
        raise ValueError(checked.problem or "The model's files were not checked.")
    os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: it reads this once
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from tokenizers import Tokenizer
    from transformers import BertModel
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    folder = checked.folder
    tokenizer = Tokenizer.from_file(str(folder / files.TOKENIZER))
    tokenizer.no_truncation()  # too long is cut by lnviz.labs.transformer.tokenize, which says so
    pad = tokenizer.token_to_id("[PAD]")
    tokenizer.enable_padding(pad_id=0 if pad is None else pad, pad_token="[PAD]")  # to the longest sentence
    bert = BertModel.from_pretrained(str(folder), local_files_only=True, use_safetensors=True).eval()
    config = bert.config
    return Model(
        bert=bert,
        tokenizer=tokenizer,
        folder=str(folder),
        layers=config.num_hidden_layers,
        hidden=config.hidden_size,
        eps=float(config.layer_norm_eps),
    )


def shared() -> Model | str:
    """The process's one model, checked and loaded on the first call, or one plain sentence saying why it can't be
    used (missing or altered files). Kept either way: a refused file is hashed once, not on every run. The
    /transformer page and the class poll's question about it share it."""
    with _SHARED_LOCK:
        if not _SHARED:
            checked = files.check()
            if not checked.ok:
                _SHARED.append(checked.problem)
            else:
                try:
                    _SHARED.append(load(checked))
                except (OSError, ValueError) as err:  # a folder whose files transformers can't read as a BERT
                    _SHARED.append(f"The model's files could not be loaded ({type(err).__name__}).")
        return _SHARED[0]
