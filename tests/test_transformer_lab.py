"""The /transformer lab: the pretrained model through the project's own loading code, with torch as the oracle.

The model is checked and loaded once per test session (the ``bert`` fixture), as the app loads it once per process.
"""

from __future__ import annotations

import dataclasses
import gc
import re
import shutil

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from conftest import ROOT, assert_no_exception, run_page
from conftest import figures as drawn
from figcheck import assert_plotly_valid
from test_questions import check_link

from lnviz.figures import plot
from lnviz.labs import transformer
from lnviz.labs.transformer import figures, files, model
from lnviz.labs.transformer import text as text_words
from lnviz.text import quote
from ui.kit import page as page_kit

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
    ids, mask, _, _ = transformer.tokenize(bert, result.sentences)
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
    ],
)
def test_unreadable_text_gets_one_plain_sentence(text, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        transformer.sentences(text)


def test_too_many_sentences_or_characters_are_cut_and_said():
    lines, cuts = transformer.sentences("\n".join(f"s{i}" for i in range(12)))
    assert lines == tuple(f"s{i}" for i in range(8))
    assert cuts == ("Kept the first 8 of the 12 sentences (one per line).",)
    lines, cuts = transformer.sentences("x" * 2001)
    assert lines == ("x" * 2000,) and cuts == ("Kept the first 2,000 of the text's 2,001 characters.",)
    assert transformer.sentences("one\n\ntwo") == (("one", "two"), ())


def test_a_sentence_over_64_tokens_is_cut_as_the_tokenizer_s_truncation_cuts_it(bert):
    """[CLS], the first 62 pieces and [SEP]: the tokenizer's own truncation to 64 is the oracle."""
    from tokenizers import Tokenizer

    long = " ".join(f"word{i}" for i in range(40))  # more than 64 tokens
    ids, mask, tokens, cuts = transformer.tokenize(bert, ("ok", long))
    reference = Tokenizer.from_file(str(files.bundled() / files.TOKENIZER))
    reference.no_padding()  # tokenizer.json pads to 128
    full = reference.encode(long)
    reference.enable_truncation(max_length=64)
    cut = reference.encode(long)
    assert ids.shape == mask.shape == (2, 64) and len(full.ids) > 64
    assert ids[1].tolist() == cut.ids and list(tokens[1]) == cut.tokens and tokens[1][-1] == "[SEP]"
    assert mask[1].all() and mask[0].tolist() == [1] * 3 + [0] * 61 and tokens[0][3:] == ("[PAD]",) * 61
    assert cuts == (
        f"Kept the first 64 tokens of sentence 2 (of {len(full.ids)}): [CLS], the first 62 pieces of its text, "
        "and [SEP].",
    )
    _, _mask, tokens, cuts = transformer.tokenize(bert, ("🙂 héllo",))
    assert "[UNK]" in tokens[0] and tokens[0][0] == "[CLS]" and cuts == ()


def test_the_window_sorted_by_size_starts_at_the_largest_feature(bert):
    result = transformer.run(bert, "The cat sat on the mat.", CPU)
    site = transformer.site(result, 0, "ffn")
    by_size = transformer.window(site.x, result.mask, 0, 12, True)
    assert int(by_size[0]) == site.largest[2]
    assert transformer.window(site.x, result.mask, 380, 12, False).tolist() == list(range(372, 384))
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
    cols = transformer.window(site.x, result.mask, 0, 12, True)
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


def test_a_grid_s_numbers_fit_their_cells_from_the_width_under_which_the_page_hides_them(bert):
    """plot.numbers_fit: a chart that wide gives each heatmap's widest number a cell as wide as it (the number's
    characters at the widest fallback font's ems, at the trace's font size; the cell its share of the plot area in
    its axis's domain, less the gap), and 1 px narrower one cell is too narrow. The default sentence's grid carries
    numbers in a 906 px chart (1366 × 768, the sidebar open) and none in 820 (1280 × 720); in lecture mode, where
    the text is 1.55 times larger, none in 1,200 (the projector, the sidebar closed: "223" at 20 px is 38.5 px in a
    34.5 px cell) and numbers in 1,840 (1920 × 1080). The chart widths are Chromium's."""
    result = transformer.run(bert, "The cat sat on the mat because it was tired.", CPU)
    site = transformer.site(result, 0, "ffn")
    cols = transformer.window(site.x, result.mask, 0, 12, True)

    def fits(fig, width: int) -> bool:
        layout = fig.layout
        for trace in (t for t in fig.data if t.type == "heatmap" and t.texttemplate):
            texts = np.asarray(trace.text, dtype=str)
            d0, d1 = layout["xaxis" + trace.xaxis[1:]].domain
            cell = (width - layout.margin.l - layout.margin.r) * (d1 - d0) / texts.shape[1] - trace.xgap
            if max(plot.text_em(t) for t in texts.ravel()) * trace.textfont.size > cell:
                return False
        return True

    ln, bn = figures.fig_ln(result, site, cols, "y"), figures.fig_bn(result, site, cols, "y")
    for fig in (ln, bn, plot.lecture(ln), plot.lecture(bn)):
        least = plot.numbers_fit(fig)
        assert fits(fig, least) and not fits(fig, least - 1), least
    assert 820 < plot.numbers_fit(ln) <= 906 and 1200 < plot.numbers_fit(plot.lecture(ln)) <= 1840
    assert plot.numbers_fit(plot.lecture(bn)) <= 1200  # BN's output: 12 columns over the whole width


def test_a_number_s_width_in_ems_is_the_widest_fallback_font_s():
    """What the browser draws the grid's numbers in where the theme's Source Sans is not installed under its name
    (Chromium here: DejaVu Sans, 38.5 px for "223" at 20.2 px, 32.1 for "8.9", 49.0 for "−1.5"): no narrower."""
    for text, px, size in (("223", 38.5, 20.2), ("8.9", 32.1, 20.2), ("−1.5", 49.0, 20.2), ("−1.5", 31.6, 13.0)):
        assert plot.text_em(text) * size >= px, text


def test_no_app_text_calls_the_model_a_pretrained_bert():
    """all-MiniLM-L6-v2 is a MiniLM with BERT's architecture, fine-tuned by sentence-transformers (Reimers and
    Gurevych 2019; Wang et al. 2020), not Devlin et al.'s BERT: the class poll's question names it as /transformer
    does, and no page, module, README or docs/ page calls it a pretrained BERT."""
    from lnviz.labs.classroom import transformer_question

    assert "all-MiniLM-L6-v2 (a MiniLM, BERT's architecture)" in transformer_question.PROMPT
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")] + [
        p
        for folder in ("lnviz", "pages", "server", "ui")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in (".py", ".js", ".md", ".css") and "vendor" not in p.parts
    ]
    assert len(files) > 50
    said = {str(p.relative_to(ROOT)) for p in files if re.search(r"pre-?trained BERT\b", p.read_text(), re.I)}
    assert said == set(), said


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


def _shown(at) -> str:
    """Every text the page drew: prose, captions, notes, headers, links, the expanders' and buttons' labels, and
    the charts' trace names (their legends)."""
    kinds = ("markdown", "caption", "info", "warning", "subheader", "page_link")
    texts = [e.value for kind in kinds for e in getattr(at, kind)]
    names = [trace.name or "" for fig in drawn(at) for trace in fig.data]
    return "\n".join(texts + [e.label for e in at.expander] + [b.label for b in at.button] + names)


def _n(value: float) -> str:
    return f"{value:.4g}".replace("-", "−")


def _ln64(x, weight, bias, eps):
    """LN in float64, written out here: μ and the biased σ² over the last dimension, ε inside the root."""
    x = x.double()
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return weight.double() * (x - mu) / (var + eps).sqrt() + bias.double()


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
    where = (1, "attention")
    x = result.inputs[where][0]  # (T, H): one sentence, no padding
    t, j = divmod(int(x.abs().argmax()), x.shape[1])
    sigma = x.var(-1, unbiased=False).sqrt()  # (T,)
    said = _shown(at)
    assert f"at `{result.tokens[0][t]}` (token {t}), feature {j}." in said
    assert f"x = {float(x[t, j]):.4g}" in said
    assert f"largest σ** is `{result.tokens[0][int(sigma.argmax())]}` (token {int(sigma.argmax())})" in said
    # The badge: the hooked output against LN's formula in float64, float32's rounding and no more.
    gap = float(
        (result.outputs[where] - _ln64(result.inputs[where], result.weight[where], result.bias[where], 1e-12))
        .abs()
        .max()
    )
    assert 0 < gap < 1e-4 and f"vs the module's output: max |Δ| = {gap:.1e}" in said
    assert [c.key for c in at.get("plotly_chart")] == ["tf_ln", "tf_bn"]  # one sentence: no batch; γ, β folded


def test_the_badge_checks_the_module_against_ln_s_formula_not_against_the_functional_it_calls(bert, monkeypatch):
    """F.layer_norm broken for the test: the badge still sees the module agree with the formula, as it computes
    the formula itself. And a module whose output is not LN of its input (the unbiased variance, as the Annotated
    Transformer's) is caught."""
    result = transformer.run(bert, "The cat sat on the mat because it was tired.", CPU, torch.float64)
    where = (0, "ffn")
    x, weight, bias = result.inputs[where], result.weight[where], result.bias[where]
    monkeypatch.setattr(F, "layer_norm", lambda x, *args, **kwargs: torch.zeros_like(x))
    assert transformer.site(result, *where).check < 1e-12
    monkeypatch.undo()
    unbiased = weight * (x - x.mean(-1, keepdim=True)) / (x.var(-1, keepdim=True) + 1e-12).sqrt() + bias
    wrong = dataclasses.replace(result, outputs=result.outputs | {where: unbiased})
    check = transformer.site(wrong, *where).check
    assert check == pytest.approx(float((unbiased - _ln64(x, weight, bias, 1e-12)).abs().max()), rel=1e-9)
    assert check > 1e-4  # the badge turns red


def test_two_sentences_compare_each_token_with_the_others_of_its_kind(bert):
    """Each [CLS] is about ten times the text's tokens in σ: the words give [CLS] and [SEP] their own ranges, and
    "the other tokens" are the text's own."""
    text = "The cat sat on the mat because it was tired.\nHi."
    at = run_page("pages/transformer.py", {"text": text, "layer": "0", "site": "ffn"})
    assert_no_exception(at)
    result = transformer.run(bert, text, CPU)
    x = result.inputs[(0, "ffn")]  # (S, T, H), as the hooks recorded it
    sigma = x.var(-1, unbiased=False).sqrt()  # (S, T)
    tokens = np.array(result.tokens)
    real = result.mask.numpy()
    cls, sep = sigma[torch.from_numpy(tokens == "[CLS]")], sigma[torch.from_numpy(tokens == "[SEP]")]
    words = sigma[torch.from_numpy(real & (tokens != "[CLS]") & (tokens != "[SEP]"))]
    assert cls.numel() == sep.numel() == 2 and words.numel() == int(real.sum()) - 4
    assert float(words.max()) < float(cls.min()) / 5  # what the old words hid by counting [CLS] with the rest
    said = _shown(at)
    assert f"the 2 `[CLS]` tokens by {_n(float(cls.min()))} and {_n(float(cls.max()))}" in said, said
    assert f"the 2 `[SEP]` tokens by {_n(float(sep.min()))} and {_n(float(sep.max()))}" in said
    assert f"the {words.numel()} other tokens by {_n(float(words.min()))} to {_n(float(words.max()))}." in said
    j = int(x[result.mask].abs().amax(0).argmax())
    bn = float(x[result.mask][:, j].var(unbiased=False).sqrt())
    pool = f"this batch's {int(real.sum())} real tokens (padding left out), {_n(bn)}"
    assert f"feature {j} of every token by one σ over {pool}" in said
    assert "Cooijmans et al. (2016" in said  # per-position statistics are recurrent BN's


def test_one_sentence_never_speaks_of_padding_nor_of_a_batch(bert):
    at = run_page("pages/transformer.py", {"text": "The cat sat on the mat because it was tired."})
    assert_no_exception(at)
    said = _shown(at)
    assert "padding" not in said.lower() and "1 sentences" not in said and "sentences are padded" not in said
    assert "the sentence's 13 tokens" in said  # BN's σ over this sentence's tokens, all real
    result = transformer.run(bert, "The cat sat on the mat because it was tired.", CPU)
    assert text_words.batch(result, transformer.site(result, 0, "ffn")) == ""  # one sentence is no batch


def test_the_largest_value_is_weighed_against_sun_et_al_s_criterion_and_the_sources_are_named(bert):
    text = "The cat sat on the mat because it was tired."
    at = run_page("pages/transformer.py", {"text": text, "layer": "0", "site": "ffn"})
    assert_no_exception(at)
    result = transformer.run(bert, text, CPU)
    x = result.inputs[(0, "ffn")][result.mask]  # (N, H)
    value, median = float(x.abs().max()), float(x.abs().median())
    said = _shown(at)
    assert f"{value / median:,.0f} times the median |x| ({_n(median)})" in said
    assert value > 100 and value / median < 1000 and "short of 1,000 times the median" in said
    assert "large, not massive in their sense" in said
    for source in (
        'Sun et al. (2024, "Massive Activations in Large Language Models")',
        'Kovaleva et al. 2021, "BERT Busters: Outlier Dimensions that Disrupt Transformers"',
        'Bondarenko et al. 2021, "Understanding and Overcoming the Challenges of Efficient Transformer Quantization"',
        "Reimers and Gurevych (2019",
        'Wang et al. (2020, "MiniLM',
    ):
        assert source in said, source
    assert "pretrained BERT" not in said and "not Devlin et al.'s BERT" in said


def test_the_switched_off_features_of_the_last_layernorm_are_said_with_their_numbers(bert):
    """The last LayerNorm's γ and β are about 1e-32 at a few features: its output is 0 there, and the page says so
    beside the grid, with the numbers read here from the model's own module."""
    text = "The cat sat on the mat because it was tired."
    module = bert.norms()[(5, "ffn")]
    gamma, beta = module.weight.detach(), module.bias.detach()
    off = torch.nonzero((gamma.abs() < 1e-6) & (beta.abs() < 1e-6)).flatten().tolist()
    assert len(off) >= 2 and all(gamma.abs()[j] < 1e-30 for j in off[:2])  # 127 and 223 at the release
    at = run_page("pages/transformer.py", {"text": text, "layer": "5", "site": "ffn"})
    assert_no_exception(at)
    said = _shown(at)
    result = transformer.run(bert, text, CPU)
    y = result.outputs[(5, "ffn")][result.mask][:, off]  # (N, len(off))
    for j in off:
        g, b = (f"{float(v[j]):.1e}".replace("-", "−") for v in (gamma, beta))
        assert f"feature {j}: γ = {g}, β = {b}" in said, said
    assert f"(|y| ≤ {float(y.abs().max()):.1e}".replace("-", "−") in said and "sentence embedding" in said
    early = run_page("pages/transformer.py", {"text": text, "layer": "0", "site": "ffn"})
    assert "Switched off" not in _shown(early)


def test_a_5000_character_link_draws_its_first_64_tokens_and_never_repeats_the_text():
    text = ("word " * 1000)[:5000]
    at = run_page("pages/transformer.py", {"text": text})
    assert_no_exception(at)
    grid = drawn(at)[0]
    assert list(grid.layout.yaxis.ticktext) == ["[CLS]"] + ["word"] * 62 + ["[SEP]"]
    said = _shown(at)
    assert "is 5,000 characters long; the first 2,000 are kept" in said  # the link's note
    assert "Kept the first 64 tokens of the sentence (of 402): [CLS], the first 62 pieces" in said
    assert "word " * 6 not in said  # the kept text is in its box, never written out again
    assert not at.warning


def test_nine_sentences_draw_the_first_eight_and_say_so():
    text = "\n".join(f"Sentence {i}." for i in range(1, 10))
    at = run_page("pages/transformer.py", {"text": text})
    assert_no_exception(at)
    labels = list(drawn(at)[0].layout.yaxis.ticktext)
    assert {label.split(":")[0] for label in labels} == {str(s) for s in range(1, 9)}
    assert "Kept the first 8 of the 9 sentences (one per line)." in _shown(at)


@pytest.mark.parametrize(("text", "said"), [("", "empty"), ("bell\x07", "U+0007")])
def test_unreadable_link_text_gets_a_clear_sentence_and_nothing_else(text, said):
    at = run_page("pages/transformer.py", {"text": text})
    assert_no_exception(at)
    assert not at.get("plotly_chart")
    shown = " ".join(w.value for w in at.warning) + " ".join(i.value for i in at.info)
    assert said in shown, shown


def test_a_text_control_cuts_a_long_link_value_and_says_so_without_writing_it_out():
    from lnviz.views import pages

    p = pages.controls("transformer")["text"]
    value, note = p.parse("a" * 100_000)
    assert value == "a" * 2000 and "100,000 characters long; the first 2,000 are kept" in note
    assert len(note) < 120  # the link's value, quoted short, and not the 2,000 kept characters after it
    assert p.parse("two\nlines") == ("two\nlines", None) and p.holds("two\nlines") and not p.holds("a" * 2001)


def test_the_poll_question_is_answered_by_the_model_when_first_read(bert):
    from test_questions import draws_and_reads

    from lnviz.labs.classroom import questions, transformer_question

    q = questions.by_id("transformer-largest-sigma")
    result = transformer.run(bert, transformer_question.SENTENCE, CPU, torch.float64)
    x = result.inputs[(0, "ffn")][0]  # (T, H): one sentence
    sigma = x.var(-1, unbiased=False).sqrt()  # (T,)
    token = result.tokens[0][int(sigma.argmax())]
    assert q.choices[q.answer].split(",")[0] == token
    assert f"σ = {float(sigma.max()):.4g}" in q.why and q.right(str(q.answer))
    check_link(q.link)
    draws_and_reads(q)  # as every question of the bank does (tests/test_questions.py, which leaves this one to here)


def test_tokens_are_shown_as_text_never_as_markup(bert):
    result = transformer.run(bert, "a <b>bold</b> & [link](x) *star*", CPU)
    labels = figures.row_labels(result)
    assert "&lt;" in labels and "&gt;" in labels and "&amp;" in labels
    assert not any("<" in label or ">" in label for label in labels)
    at = run_page("pages/transformer.py", {"text": "*star* _x_", "layer": "5", "site": "ffn"})
    assert_no_exception(at)
    result = transformer.run(bert, "*star* _x_", CPU)
    s, t, _, _ = transformer.site(result, 5, "ffn").largest
    assert result.tokens[s][t] in ("*", "_") and f"at {quote(result.tokens[s][t])}" in _shown(at)


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
    # The grid's order "by the largest |x|" leaves the padding out too: feature 1 is not first for its padded cell.
    by_size = transformer.window(x, mask, 0, 4, True)
    assert by_size.tolist() == x[mask].abs().amax(0).argsort(descending=True).tolist() and int(by_size[0]) != 1
