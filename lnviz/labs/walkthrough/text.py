"""The walkthrough's words: each step's title and plain-language text, and its caveats.

The computation and the formulas with numbers are :mod:`lnviz.labs.walkthrough`;
this module is only prose, so it can be read and edited on its own. ``{i}``,
``{j}`` and ``{n}`` are filled in with the row, the column and the count;
:func:`texts` picks the words for a column of one value (B = 1).
"""

TITLES = {
    "LN": ("the input row", "the row's mean", "centre the row", "the row's variance", "normalize the row", "γ and β"),
    "BN": (
        "the input column",
        "the column's mean",
        "centre the column",
        "the column's variance",
        "normalize the column",
        "γ and β",
    ),
}

TEXTS = {
    "LN": (
        "LayerNorm works on **one sample at a time**: row {i}, its {n} features. No other row is used, "
        "so the result is the same at training and test time and for any batch size.",
        "The mean of the row: add its {n} values and divide by {n}.",
        "Subtract μ from every value of the row. The centred row sums to 0.",
        "The variance is the mean of the squared centred values (row {i} of x shows them). It divides by {n}, not "
        "{n} − 1: the biased estimate, as PyTorch.",
        "Divide the centred row by √(σ² + ε). The row now has mean 0 and variance σ²/(σ² + ε): just under 1 "
        "when ε ≪ σ², smaller when ε is comparable to σ². ε keeps the division finite when σ² is 0.",
        "Scale by γ and shift by β, **one pair per feature** (γₖ, βₖ along the row), learned and shared by every "
        "sample. They set each feature's scale and offset. They cannot give row {i} back its own μ and σ: those "
        "are divided out, and every row gets the same γ and β. So scaling one sample by a positive factor leaves "
        "its LN output unchanged, up to ε (the invariance table's single-case column).",
    ),
    "BN": (
        "BatchNorm works on **one feature at a time**: column {j}, its value in each of the {n} samples. "
        "In training mode every sample's output depends on the rest of the batch.",
        "The mean of the column: add its {n} values, one per sample, and divide by {n}.",
        "Subtract μ from every value of the column. The centred column sums to 0.",
        "The variance is the mean of the squared centred values (column {j} of x shows them). It divides by {n}, "
        "not {n} − 1: the biased estimate PyTorch uses to normalize in training mode.",
        "Divide the centred column by √(σ² + ε). Across the batch, the column now has mean 0 and variance "
        "σ²/(σ² + ε): just under 1 when ε ≪ σ², smaller when ε is comparable to σ².",
        "Scale by γ and shift by β of feature {j}: the whole column shares **one** γ and one β, since they belong "
        "to the feature. Ioffe and Szegedy (2015, §3) chose them so that BN can represent the identity: with the "
        "population's statistics, as BN uses at test time, γⱼ = √(Var[xⱼ] + ε) and βⱼ = E[xⱼ] give back xⱼ exactly "
        "(the paper writes √Var[xⱼ], leaving ε out). In training mode the batch's own μ and σ² change from batch "
        "to batch, so a fixed γⱼ and βⱼ give back x only approximately.",
    ),
}

# With B = 1 the count is 1: "add its 1 values" and "the rest of the batch" would not hold.
BN_ONE_VALUE = (
    "BatchNorm works on **one feature at a time**: column {j}, down the batch. With B = 1 the batch holds one "
    "sample, so the column is a single value and there is no other sample to normalize it against.",
    "The mean of one value is that value: μ = x.",
    "Subtract μ from the column's one value: x − μ = 0.",
    "The biased variance, the mean of the squared centred values, is 0 for one value: σ² = 0. The unbiased "
    "one would divide by B − 1 = 0.",
    "Divide the centred value by √(σ² + ε) = √ε. For ε > 0 that gives x̂ = 0, whatever x was; at ε = 0 it is 0/0.",
    "Scale by γ and shift by β of feature {j}. For ε > 0, x̂ = 0, so y = β whatever the input: the output "
    "carries nothing of x.",
)

# The stage's Play begins and ends with everything shown (lnviz.labs.walkthrough.stage_steps).
INTRO = "Press Play, or step with ← → (a clicker's PageDown): how each norm reduces x, in twelve steps."
OUTRO = (
    "Every row the same way, each by its own μ and σ: LayerNorm involves no other sample. Every column by the "
    "batch's μ and σ: change one sample's value in a column, and in general every BatchNorm output of that column "
    "moves with it."
)
OUTRO_ONE = "Every row the same way, each by its own μ and σ: LayerNorm involves no other sample."


def texts(norm: str, count: int) -> tuple[str, ...]:
    """The six steps' words for ``norm`` ("LN" or "BN") along a line of ``count`` values, to be formatted."""
    return BN_ONE_VALUE if norm == "BN" and count == 1 else TEXTS[norm]


def variance_notes(var: float, eps: float, drawn: bool = True) -> tuple[str, str]:
    """(the note at the variance step, the note at the normalize and γ, β steps) for one σ² and ε.

    ``drawn`` says whether the stage draws the line's NaN cells (hatched); it draws no BN output at B = 1.
    """
    if var + eps == 0:
        hatched = ": those cells are hatched" if drawn else ""
        undefined = (
            "σ² = 0 and ε = 0: every value equals μ, so x̂ = (x − μ)/√(σ² + ε) = 0/0, which is undefined "
            f"(NaN){hatched}. Any ε > 0 makes x̂ = 0 instead; that is what ε is for."
        )
        return "σ² = 0: every value equals μ. With ε = 0 the next step divides by 0.", undefined
    if var == 0:
        return "σ² = 0: every value equals μ.", "σ² = 0, so x̂ = 0/√ε = 0 and y = β: ε turns what would be 0/0 into 0."
    if var < eps:
        shrink = var / (var + eps)
        return "", (
            f"σ² = {var:.3g} is smaller than ε = {eps:g}: ε dominates √(σ² + ε), so x̂ stays small "
            f"(its variance is σ²/(σ² + ε) = {shrink:.3g}, not 1)."
        )
    return "", ""
