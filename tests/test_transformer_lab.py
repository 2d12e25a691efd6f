"""The /transformer lab: the pretrained model through the project's own loading code, with torch as the oracle.

The model is checked and loaded once per test session (the ``bert`` fixture), as the app loads it once per process.
"""

from __future__ import annotations

import gc
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT, assert_no_exception, run_page
from figcheck import assert_plotly_valid
from test_questions import check_link

from lnviz.labs import transformer
from lnviz.labs.transformer import figures, files, model
from ui import page as page_kit

CPU = torch.device("cpu")
WEATHER = ("The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium.")


@pytest.fixture(scope="session")
def bert() -> model.Model:
    checked = files.check()
    assert checked.ok, checked.problem
    return model.load(checked)


def test_the_published_similarity_table_is_reproduced(bert):
    """sentence-transformers' README for all-MiniLM-L6-v2: mean pooling over the real tokens, then L2-normalized."""
    emb = transformer.embeddings(transformer.run(bert, "\n".join(WEATHER), CPU, torch.float64))  # (3, H)
    sim = emb @ emb.T  # (3, 3)
    assert round(float(sim[0, 1]), 4) == 0.6660  # weather, sunny
    assert round(float(sim[0, 2]), 4) == 0.1046  # weather, stadium
    assert round(float(sim[1, 2]), 4) == 0.1411  # sunny, stadium


def test_each_of_the_13_recorded_layernorms_is_f_layer_norm_of_its_input_in_float64(bert):
    result = transformer.run(bert, "The cat sat on the mat because it was tired.\nHi.", CPU, torch.float64)
    assert len(result.inputs) == 13 == len(result.outputs)
    for where, x in result.inputs.items():
        assert x.dtype == torch.float64 and x.shape[-1] == 384
        want = F.layer_norm(x, (384,), result.weight[where], result.bias[where], 1e-12)
        torch.testing.assert_close(result.outputs[where], want, rtol=0, atol=1e-12)
        assert transformer.site(result, where[0], where[1]).check <= 1e-12
    # The hooks record the model's own modules: the last one's output is the encoder's last hidden state.
    ids, mask, _ = transformer.tokenize(bert, result.sentences)
    with torch.inference_mode():
        last = bert.on(CPU, torch.float64)(input_ids=ids, attention_mask=mask).last_hidden_state
    torch.testing.assert_close(result.outputs[(5, "ffn")], last, rtol=0, atol=0)


def test_a_site_s_statistics_are_torch_s(bert):
    result = transformer.run(
        bert, "A long sentence of many words, longer than the next.\nShort one.", CPU, torch.float64
    )
    got = transformer.site(result, 2, "attention")
    x, real = result.inputs[(2, "attention")], result.mask  # (S, T, H), (S, T)
    torch.testing.assert_close(got.ln_std, x.var(-1, unbiased=False).sqrt())
    tokens = x[real]  # (N, H): the real tokens only
    torch.testing.assert_close(got.bn_std, tokens.var(0, unbiased=False).sqrt())
    torch.testing.assert_close(got.bn_std_padded, x.reshape(-1, 384).var(0, unbiased=False).sqrt())
    bn = F.batch_norm(
        tokens, None, None, result.weight[(2, "attention")], result.bias[(2, "attention")], True, 0.0, 1e-12
    )
    torch.testing.assert_close(got.bn_y[real], bn)
    s, t, _j, value = got.largest
    assert real[s, t] and abs(value) == float(tokens.abs().max())
    _ws, _wt, std = got.widest
    assert std == float(x.var(-1, unbiased=False).sqrt()[real].max())
    assert not bool((~real).all())  # the batch has padding, which the largest never comes from


@pytest.mark.parametrize(
    "text, said",
    [
        ("", "empty"),
        ("  \n\t\n", "empty"),
        ("a\x07b", "U+0007"),
        ("left\u202eright", "U+202E"),
        ("zero\u200bwidth", "U+200B"),
        ("\n".join(["x"] * 9), "at most 8"),
        ("x" * 2001, "at most 2,000"),
    ],
)
def test_hostile_text_gets_one_plain_sentence(text, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        transformer.sentences(text)


def test_a_sentence_over_64_tokens_is_refused_not_cut(bert):
    with pytest.raises(ValueError, match="Sentence 2 has 66 tokens"):
        transformer.tokenize(bert, ("ok", " ".join(["word"] * 64)))
    _, _mask, tokens = transformer.tokenize(bert, ("🙂 héllo",))
    assert "[UNK]" in tokens[0] and tokens[0][0] == "[CLS]"


def test_the_window_sorted_by_size_starts_at_the_largest_feature(bert):
    site = transformer.site(transformer.run(bert, "The cat sat on the mat.", CPU), 0, "ffn")
    by_size = transformer.window(site.x, 0, 12, True)
    assert int(by_size[0]) == site.largest[2]
    assert transformer.window(site.x, 380, 12, False).tolist() == list(range(372, 384))
    result = transformer.run(bert, "The cat.\nA dog ran home.", CPU)
    for fig in (
        figures.fig_ln(result, site := transformer.site(result, 1, "ffn"), by_size, "y"),
        figures.fig_bn(result, site, by_size, "x_hat"),
        figures.fig_affine(site, site.largest[2]),
        figures.fig_padding(result, site, site.largest[2]),
    ):
        assert_plotly_valid(fig)
    assert list(figures.fig_ln(result, site, by_size, "y").layout.yaxis.ticktext)[:2] == ["1: [CLS]", "1: the"]


def test_only_saturated_cells_carry_a_number_short_enough_for_the_cell(bert):
    """At layer 0's ffn LayerNorm, features by size, in x's and LN y's panels: a number has as few digits as it
    can, 2 or its whole part's ("8.1", "12", "223"; "8.13" was cut off by its 30 px cell); cells inside the
    colour scale carry none."""
    result = transformer.run(bert, "The cat sat on the mat because it was tired.", CPU)
    site = transformer.site(result, 0, "ffn")
    cols = transformer.window(site.x, 0, 12, True)
    for output in ("x", "y"):
        for heat in (d for d in figures.fig_ln(result, site, cols, output).data if d.type == "heatmap"):
            z, text = np.asarray(heat.z, dtype=float), np.asarray(heat.text)
            limit = figures.saturation(z)
            assert (text[np.abs(z) <= limit] == "").all()
            hot = np.abs(z) > limit
            assert hot.any()
            for value, written in zip(z[hot], text[hot], strict=True):
                digits = sum(c.isdigit() for c in written)
                assert digits <= max(2, len(str(int(abs(value))))), (value, written)
                assert abs(float(written.replace("−", "-")) - value) <= 0.05 * abs(value), (value, written)


def _copy(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    for name in files.NEEDED:
        shutil.copy(files.bundled() / name, folder / name)
    return folder


def test_changed_weights_are_refused(tmp_path):
    folder = _copy(tmp_path)
    assert files.check({files.DIR_ENV: str(folder)}).ok  # a copy of the same model checks against the official hash
    weights = folder / files.WEIGHTS
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit of one weight
    weights.write_bytes(bytes(data))
    checked = files.check({files.DIR_ENV: str(folder)})
    assert not checked.ok and "not the expected file" in checked.problem
    with pytest.raises(ValueError, match="not the expected file"):
        model.load(checked)
    # Another checkpoint names its own hash.
    assert files.check({files.DIR_ENV: str(folder), files.HASH_ENV: files.sha256(weights)}).ok
    (folder / files.TOKENIZER).unlink()
    assert "lacks tokenizer.json" in files.check({files.DIR_ENV: str(folder)}).problem


def test_no_other_page_or_module_imports_transformers():
    """Every lnviz and ui module (but the stage's component, which needs a server), and the question bank
    built, without transformers or tokenizers."""
    code = (
        "import importlib, pathlib, sys\n"
        "ui = [p for p in sorted(pathlib.Path('ui').glob('*.py')) if p.stem != 'stage']\n"
        "for p in sorted(pathlib.Path('lnviz').rglob('*.py')) + ui:\n"
        "    importlib.import_module('.'.join(p.with_suffix('').parts).removesuffix('.__init__'))\n"
        "from lnviz.labs.classroom import questions\n"
        "questions.bank()\n"
        "print(sorted(m for m in ('transformers', 'tokenizers') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_link_opens_that_view_and_says_its_largest_values(bert):
    query = {"text": "The cat sat on the mat because it was tired.", "layer": "1", "site": "attention"}
    at = run_page("pages/transformer.py", query)
    assert_no_exception(at)
    # Issue 47, attack 2: once its run is over, the session holds no run of the model (a callback of the page's
    # script kept its globals, 16 MiB a text, in each of the 128 sessions Streamlit keeps): only the kit's cache does.
    page_kit.results.cache_clear()
    gc.collect()
    assert not [o for o in gc.get_objects() if isinstance(o, transformer.Run)]
    result = transformer.run(bert, query["text"], CPU)
    x = result.inputs[(1, "attention")][0]  # (T, H): one sentence, no padding
    t, j = divmod(int(x.abs().argmax()), x.shape[1])
    sigma = x.var(-1, unbiased=False).sqrt()  # (T,)
    said = " ".join(m.value for m in at.markdown)
    assert f"at `{result.tokens[0][t]}` (token {t}), feature {j}." in said
    assert f"x = {float(x[t, j]):.4g}" in said
    assert f"largest σ** is `{result.tokens[0][int(sigma.argmax())]}` (token {int(sigma.argmax())})" in said
    assert "max |Δ| = 0.0e+00" in said
    assert len(at.get("plotly_chart")) == 3  # one sentence: no padding chart


@pytest.mark.parametrize(
    "text, said",
    [
        ("", "empty"),
        ("bell\x07", "U+0007"),
        ("\n".join(f"s{i}" for i in range(12)), "at most 8"),
        ("word " * 20_000, "first 2,000 are kept"),  # 100 KB: cut to the box's 2,000 characters, then too many tokens
        ("word " * 20_000, "at most 64 are taken"),
    ],
)
def test_a_hostile_link_gets_a_clear_sentence_and_nothing_else(text, said):
    at = run_page("pages/transformer.py", {"text": text})
    assert_no_exception(at)
    assert not at.get("plotly_chart")
    shown = " ".join(w.value for w in at.warning) + " ".join(i.value for i in at.info)
    assert said in shown, shown


def test_a_text_control_cuts_a_long_link_value_and_says_so():
    from lnviz.views import pages

    p = pages.controls("transformer")["text"]
    value, note = p.parse("a" * 100_000)
    assert value == "a" * 2000 and "100,000 characters long; the first 2,000 are kept" in note
    assert p.parse("two\nlines") == ("two\nlines", None) and p.holds("two\nlines") and not p.holds("a" * 2001)


def test_the_poll_question_is_answered_by_the_model_when_first_read(bert):
    from lnviz.labs.classroom import questions, transformer_question

    q = questions.by_id("transformer-largest-sigma")
    result = transformer.run(bert, transformer_question.SENTENCE, CPU, torch.float64)
    x = result.inputs[(0, "ffn")][0]  # (T, H): one sentence
    sigma = x.var(-1, unbiased=False).sqrt()  # (T,)
    token = result.tokens[0][int(sigma.argmax())]
    assert q.choices[q.answer].split(",")[0] == token
    assert f"σ = {float(sigma.max()):.4g}" in q.why and q.right(str(q.answer))
    check_link(q.link)


def test_tokens_are_shown_as_text_never_as_markup(bert):
    result = transformer.run(bert, "a <b>bold</b> & [link](x) *star*", CPU)
    labels = figures.row_labels(result)
    assert "&lt;" in labels and "&gt;" in labels and "&amp;" in labels
    assert not any("<" in label or ">" in label for label in labels)
    at = run_page("pages/transformer.py", {"text": "*star* _x_"})
    assert_no_exception(at)
    assert all("`" in m.value for m in at.metric if m.label in ("At token, feature", "Largest σ"))


def test_padding_is_never_the_largest_nor_in_the_masked_bn():
    """A hand-made run whose padded cell holds the largest |x|: the page names a real token's, and BN over the real
    tokens leaves the padding out."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 4, generator=g, dtype=torch.float64)  # (S, T, H)
    x[1, 2, 1] = 100.0  # padding
    mask = torch.tensor([[True, True, True], [True, True, False]])  # (S, T)
    where = (0, "embeddings")
    ones, zeros = torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
    result = transformer.Run(
        ("a b c", "a b"),
        (("[CLS]", "a", "[SEP]"), ("[CLS]", "[SEP]", "[PAD]")),
        mask,
        {where: x},
        {where: F.layer_norm(x, (4,), ones, zeros, 1e-12)},
        {where: ones},
        {where: zeros},
        1e-12,
        1,
        "cpu",
        "float64",
        0.0,
    )
    site = transformer.site(result, 0, "embeddings")
    s, t, _, value = site.largest
    assert mask[s, t] and abs(value) == float(x[mask].abs().max())
    torch.testing.assert_close(site.bn_mean, x[mask].mean(0))
    assert float(site.bn_mean_padded[1]) > 10 > float(site.bn_mean[1].abs())
