"""The words of the Pre-LN/Post-LN section, built from the profile it shows.

The computation is :mod:`lnviz.labs.training.transformer`. The sentences after the chart
follow the numbers on it: Post-LN's gradients grow towards the output only in
some stacks (at 2 to 4 blocks this one is flat), and Pre-LN's fall here, while
Xiong et al. (2020, §3.4) report about equal norms. Sources:

- Xiong et al. 2020, *On Layer Normalization in the Transformer Architecture*:
  Theorem 1 (§3.3) bounds from above ‖∂L̃/∂W^{2,L}‖_F, the last layer's second FFN
  matrix, by O(d√(ln d)) for Post-LN and O(d√(ln d / L)) for Pre-LN; §3.4,
  Fig. 3(a, b): Post-LN's expected gradients grow with the layer index,
  Pre-LN's "almost keeps the same"; §3.4: "we hypothesize that the gradient
  scale is one of the reasons that the Post-LN Transformer needs a careful
  learning rate scheduling".
- Liu et al. 2020, *Understanding the Difficulty of Training Transformers*,
  abstract: "unbalanced gradients are not the root cause of the instability of
  training"; a heavy dependency on the residual branch amplifies updates.
- Shleifer, Weston and Ott 2021, *NormFormer*, abstract: during pretraining,
  Pre-LN's "gradients at early layers are much larger than at later layers".
"""

from __future__ import annotations

import math

from lnviz.labs.training.transformer import HEADS, SAMPLES, TOKENS, WIDTH, GradProfile

# Last block over first: above TREND the gradient grows towards the output, below 1/TREND it falls,
# between the two the profile is flat. Compared as shown on the page, to two decimals.
TREND = 1.1


def intro(draws: int) -> str:
    """What the section measures, above the chart."""
    return (
        "Where LN sits in a Transformer changes its gradients at initialization (Xiong et al. 2020). Post-LN "
        "normalizes after each residual add; Pre-LN before each sublayer, plus once at the end. Both stacks below "
        f"get the same weights and inputs: width d = {WIDTH}, {HEADS} heads, {SAMPLES} sequences of {TOKENS} "
        "tokens, Xavier-uniform weights, random labels. For each block the chart shows the norm of the loss "
        "gradient over all of the block's parameters (attention, feed-forward and LN), averaged over "
        f"{draws} draws, computed live."
    )


def chart_alt(depth: int) -> str:
    """The gradient chart's text alternative."""
    return f"Gradient norm of each of {depth} blocks, Post-LN against Pre-LN."


def trend(rise: float) -> str:
    """ "grows", "falls" or "flat", for a last/first ratio as the page prints it (two decimals)."""
    shown = round(rise, 2)
    if shown > TREND:
        return "grows"
    if shown < round(1 / TREND, 2):
        return "falls"
    return "flat"


def _post(rise: float) -> str:
    ratio = f"the last block's gradient is {rise:.2f}× the first's"
    return {
        "grows": f"Here Post-LN's gradient grows towards the output: {ratio}, the direction Xiong et al. report "
        "(§3.4, Fig. 3).",
        "flat": f"At this depth Post-LN's profile is flat: {ratio}. Xiong et al. report Post-LN gradients that "
        "grow towards the output (§3.4, Fig. 3); this stack does not show that here.",
        "falls": f"Here Post-LN's gradient falls towards the output: {ratio}, against the growth Xiong et al. "
        "report (§3.4, Fig. 3).",
    }[trend(rise)]


def _pre(rise: float) -> str:
    ratio = f"the last block's gradient is {rise:.2f}× the first's"
    same = "Xiong et al. report Pre-LN norms that stay about the same across layers (§3.4, Fig. 3)"
    return {
        "falls": f"Pre-LN's gradient falls towards the output: {ratio}. {same}; this stack does not reproduce "
        "that. Shleifer et al. (2021, NormFormer) report the same direction as here, during pretraining: "
        "gradients at early layers much larger than at later ones.",
        "flat": f"Pre-LN's profile is flat: {ratio}. {same}.",
        "grows": f"Pre-LN's gradient grows towards the output: {ratio}. {same}.",
    }[trend(rise)]


def after_chart(profile: GradProfile) -> str:
    """The measured ratios, and what Xiong et al.'s Theorem 1 does and does not say about them."""
    depth = profile.depth
    top = profile.post[-1] / profile.pre[-1]
    text = (
        f"At the last block, Post-LN's gradient norm is **{top:.1f}×** Pre-LN's. Xiong et al.'s Theorem 1 "
        "(2020, §3.3) gives upper bounds on the gradient of one matrix, the last layer's second feed-forward "
        "weight: O(d√(ln d)) for Post-LN against O(d√(ln d / L)) for Pre-LN. The ratio of the bounds grows like "
        f"√L (√{depth} = {math.sqrt(depth):.1f} here). Bounds are not values: the theorem does not say the "
        "gradients differ by that much, and the chart measures all of a block's parameters, not that one matrix."
    )
    if depth < 2:
        return text + "\n\nWith one block there is no first-to-last profile: add blocks to see one."
    return f"{text}\n\n{_post(GradProfile.rise(profile.post))}\n\n{_pre(GradProfile.rise(profile.pre))}"


WARM_UP = (
    "Xiong et al. hypothesize that the large gradients near Post-LN's output are one of the reasons it needs a "
    "learning-rate warm-up (§3.4). Liu et al. (2020) find that unbalanced gradients are not the root cause of the instability; "
    "they point to Post-LN's heavy dependence on its residual branches, which amplifies parameter updates. Under "
    "Adam each parameter's step is divided by the running RMS of its own gradient, so a gradient that is larger "
    "by a constant factor does not by itself give a larger step."
)
