"""The concept check's words: each item's prompt, options and why, its short topic, and the check's prose.

Only text, as :mod:`.text` is for the poll; the numbers are :mod:`.check`'s, computed by torch and filled in with
:meth:`str.format`. An option's order here is the order of the outcomes its builder compares torch's with.
Each item is a misconception students bring to LN and BN, some of them held by our own sources; the wrong
options state it, so that a student who holds it finds it there.
"""

ITEMS: dict[str, dict] = {
    "check-ln-axis": dict(
        topic="What LN averages",
        prompt="x is a mini-batch: {batch} samples (rows) × {features} features (columns). LN's output for "
        "sample {i}, feature {j} depends on which inputs?",
        choices=(
            "Sample {i}'s {features} features: its row",
            "Feature {j} in all {batch} samples: its column",
            "Every value of the mini-batch",
            "Only x at sample {i}, feature {j}",
        ),
        why="LN normalizes each sample over its own features. torch's gradient of that output is non-zero at the "
        "{features} cells of row {i} and exactly 0 at the other {zeros}. BN's, in training mode, would depend on "
        "column {j}.",
    ),
    "check-ln-batch-size": dict(
        topic="LN and the batch size",
        prompt="A sample goes through LN (`F.layer_norm`) once in a mini-batch of {batch}, and once alone, in a "
        "batch of 1. Its output:",
        choices=(
            "is the same both times",
            "changes, because the batch it is averaged with changed",
            "can't be computed alone: LN needs at least 2 samples",
        ),
        why="torch's two outputs are {same}. LN's μ and σ² are the sample's own, so the batch size does not "
        "enter. BN in training mode would refuse a batch of 1.",
    ),
    "check-bn-eval": dict(
        topic="BN at test time",
        prompt="`nn.BatchNorm1d({features})`, with its defaults, saw {steps} mini-batches in training mode. After "
        "`.eval()`, it normalizes a test batch with which μ and σ²?",
        choices=(
            "The test batch's own, per feature",
            "The running averages it kept in training, per feature",
            "μ = 0 and σ² = 1",
            "Each test sample's own, over its features",
        ),
        why="In eval mode BN reads `running_mean` and `running_var`, which each training batch moved (momentum "
        "{momentum:g}): torch's output matches them to {match}. The test batch's own statistics would give "
        "outputs up to {own} away. (Built with `track_running_stats=False`, BN would use the batch's own.)",
    ),
    "check-gamma-beta": dict(
        topic="What γ and β do",
        prompt="BN in training mode takes x̂ = (x − μ) / √(σ² + ε) for each feature over the batch, then "
        "y = γ · x̂ + β, with γ and β learned, one of each per feature. What do γ and β do?",
        choices=(
            "Undo the normalization: y = x, whatever γ and β are learned",
            "Give each feature a new mean β and spread |γ| (up to ε); y = x only if γ = √(σ² + ε) and β = μ",
            "Nothing: BN keeps γ = 1 and β = 0 and leaves scale and shift to the next layer",
            "Scale and shift x itself: y = γ · x + β",
        ),
        why="For γ and β drawn at random, as training might leave them, each feature's y has mean β (to {mean}) "
        "and standard deviation |γ| · σ / √(σ² + ε), whatever x's were. Only γ = √(σ² + ε) and β = μ, the "
        "batch's own, give back x (to {back}). Ioffe and Szegedy (2015) added γ and β so that BN can represent "
        "the identity, if that were optimal; training sets them to whatever helps.",
    ),
    "check-transformer-token": dict(
        topic="LN in a transformer",
        prompt="In a transformer, x has shape (B, T, H) = ({b}, {t}, {h}): {b} sequences of {t} tokens, each "
        "token {h} features. `nn.LayerNorm({h})`'s output at sequence {s}, token {tok} depends on which inputs?",
        choices=(
            "Token {tok}'s own {h} features",
            "Every token of sequence {s}: all {t} × {h} values",
            "Token {tok} of every sequence in the batch",
            "Every value of the batch",
        ),
        why="LN pools one token's features. torch's gradient of that output is non-zero only at token {tok}'s "
        "{h} features, and exactly 0 at the other {zeros} values. Attention, not LN, mixes the tokens.",
    ),
    "check-ln-eval": dict(
        topic="LN at test time",
        prompt="A network with `nn.LayerNorm` is trained, put in `.eval()`, and given one test sample at a time. "
        "Which μ and σ² does LN use then?",
        choices=(
            "Running averages kept in training, as BN does",
            "The test sample's own, over its features, as in training",
            "None: it needs a mini-batch, so one sample at a time fails",
        ),
        why="`nn.LayerNorm` keeps no running statistics: it holds γ and β and no buffer. Its output for one "
        "sample is {same} in eval mode as in training mode. BN is the one whose two modes differ.",
    ),
    "check-ln-output": dict(
        topic="What LN standardizes",
        prompt="After LN with γ = 1 and β = 0, on a mini-batch of {batch} samples × {features} features, what "
        "has mean 0 and variance 1 (up to ε)?",
        choices=(
            "Each sample, over its features: each row",
            "Each feature, over the batch: each column",
            "Both: each row and each column",
            "Neither",
        ),
        why="Every row's mean is within {mean} of 0 and its variance within {var} of 1 (ε keeps it just under). "
        "The columns' means range from {lo} to {hi}. BN in training mode, with γ = 1 and β = 0, would "
        "standardize the columns instead.",
    ),
}

# --- the check's page words ---------------------------------------------------------------------------------

PHASES = {"pre": "before the lecture", "post": "after the lecture"}
VIEW_LABEL = "The projector shows"
VIEWS = {"questions": "Questions", "check": "Concept check"}
VIEW_HELP = "The class's questions, one at a time, or the concept check asked before and after the lecture."
INTRO = (
    "{n} questions on what LN and BN do, asked before the lecture and again after it. Phones answer all of them at "
    "their own pace; you see the share right each time and the class's normalized gain."
)
OPEN = {  # the check's next step, by its step now: (label, help)
    "": ("Open the check, before the lecture", "Phones get all the questions at once until you close it."),
    "pre-closed": ("Open the check again, after the lecture", "The same questions; each phone's answers are paired."),
}
CLOSE = ("Close the check", "No more answers; each phone's answers are kept, and the projector counts them.")
OPEN_HEADING = "Concept check, {phase}: answer on your phone"
OPEN_BODY = (
    "{n} questions, at your own pace. You can change an answer until the check closes. Anonymous: only the "
    "class's counts are shown, never who answered what."
)
RESULTS_HEADING = "Concept check: the share right before and after"
NOT_RUN = "Nobody has answered yet. Open the check at the start of the lecture, and again at its end."
HOW_G = (
    "g = (after − before) / (1 − before), Hake's normalized gain (1998): the share of the possible gain the class "
    "made. It is computed on the pairs, the phones that answered a question both times."
)
FEW = "\\* Fewer than {n} pairs: one phone moves g a lot."
UNDEFINED = "undefined: every pair was right before, so there was nothing left to gain."
CSV_LABEL = "The counts as CSV"
CSV_HELP = "Per question and overall: how many answered and were right before and after, the pairs and g. No ids."
COUNT_PHONES = "Phones"
COUNT_ANSWERS = "Answers: {n}"  # no plural to get wrong ("1 answers")
COUNT_HELP = "How many phones have answered, and how many answers they gave. What they answered stays hidden."

# The phone's words.
PHONE_HEADING = "Concept check, {phase}"
PHONE_INTRO = (
    "{n} questions. Answer at your own pace; you can change an answer until the presenter closes the check. It "
    "is not graded: only the class's counts are shown."
)
PHONE_PROGRESS = "Answered {k} of {n}."
PHONE_SAVED = "Saved."
