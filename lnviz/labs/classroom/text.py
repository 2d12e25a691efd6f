"""The class poll's words: each question's prompt, options and explanation, and the class page's prose.

This module is only text, so it can be read and edited on its own; the
numbers are :mod:`lnviz.labs.classroom.questions`'s, computed by torch.
``{name}`` is filled in with :meth:`str.format` from the values that module
computes (``{amount:g}`` writes a float as ``:g`` does; a value already
written, with a real minus sign, comes as text).

:data:`QUESTIONS` is the bank in the order a lecture might ask it: for each
question id, its ``kind``, the text fields of
:class:`~lnviz.labs.classroom.question.Question` (``prompt``, ``choices``,
``why``) that are not computed, a number question's fixed range and
rounding (``lo``, ``hi``, ``decimals``, ``tolerance``, ``drag``) and a cells
question's ``axes``. An option's order
here is the order of the outcomes its builder compares torch's with.
"""

QUESTIONS: dict[str, dict] = {
    "ln-cell": dict(
        kind="number",
        prompt="Sample {i} has μ = {mean} and σ² = {var}. Its feature {j} is x = {cell}. "
        "With γ = {gain:g}, β = {bias:g} and ε = 1e-5, what is LN's y there?",
        why="x̂ = (x − μ) / √(σ² + ε) = {x_hat}, and y = {gain:g} · x̂ + {bias:g}.",
        lo=-10.0,
        hi=10.0,
    ),
    "one-sample-coupling": dict(
        kind="choice",
        prompt="A batch has {batch} samples. Sample {sample} is replaced by a fresh random row, scaled by "
        "{amount:g}. Whose outputs change under BN (training mode), and whose under LN?",
        choices=(
            "BN: every sample's. LN: sample {sample}'s only.",
            "BN: sample {sample}'s only. LN: every sample's.",
            "Both: sample {sample}'s only.",
            "Both: every sample's.",
        ),
        why="BN's μ and σ² for each feature pool all {batch} samples. So every output moves: by up to "
        "{moved} in the samples other than {sample}. LN's μ and σ² are each sample's own. Only sample "
        "{sample}'s LN outputs move.",
    ),
    "bn-one-sample-formula": dict(
        kind="number",
        prompt="Suppose BN applied its formula to a batch of one sample anyway. With x = {x:g}, γ = {gain:g}, "
        "β = {bias:g} and ε = 1e-5, what would y be?",
        why="That is β. The batch mean is the sample itself, so x − μ = 0 and σ² = 0: "
        "y = γ · 0 / √ε + β. F.batch_norm in eval mode, with running_mean = {x:g} and running_var = 0, gives "
        "{fused!r}: β to {digits} decimals. In training mode it refuses one value per channel.",
        lo=-5.0,
        hi=5.0,
        tolerance=0.005,
    ),
    "bn-one-sample": dict(
        kind="choice",
        prompt="x has shape (1, 4): a batch of one sample. What does "
        "`F.batch_norm(x, running_mean, running_var, weight, bias, training=True)` do?",
        choices=("Returns β for every feature", "Returns 0 for every feature", "Returns NaN", "Raises ValueError"),
        why="torch raises ValueError: “{message}”. nn.BatchNorm1d does the same in training mode. The formula "
        "alone would give β (with the default ε = 1e-5), since x − μ = 0 and σ² = 0. In eval mode, with running "
        "statistics, one sample is fine.",
    ),
    "constant-row-eps0": dict(
        kind="choice",
        prompt="Sample 0 is constant: every feature is {constant:g}. With ε = 0, γ = 1 and β = {bias:g}, "
        "what does LN give for it?",
        choices=("0 for every feature", "β for every feature", "NaN for every feature", "An error"),
        why="x − μ = 0 and σ² = 0, so x̂ = 0/0: torch gives NaN for all {features} features. "
        "With ε = 1e-5, x̂ = 0 and y = β: torch gives {with_eps}.",
    ),
    "outlier-others": dict(
        kind="number",
        prompt="Sample {i} has {h} features. Feature {j} is an outlier, x = {outlier}; the other {rest} are "
        "standard normal. With ε = 1e-5, what x̂ does LN give those {rest}, on average?",
        why="Those {rest} range from {least} to {most}. The outlier dominates the sample's μ and σ. "
        "Were the {rest} exactly 0, each would get −1/√{rest} ≈ {zeros}. BN normalizes feature {j} in a "
        "column of its own.",
        lo=-3.0,
        hi=3.0,
    ),
    "ln-invariance": dict(  # its options are the invariance lab's own names of the transforms
        kind="choice",
        prompt="Which change leaves LN's output unchanged? (Ba, Kiros and Hinton 2016, Table 1)",
        why="Scaling one case by δ = {factor:g} scales its summed inputs, and so their μ and σ, by {factor:g}. "
        "LN's output moves by at most {case}, from ε alone. Scaling one unit's weights moves it by up to "
        "{weights}. Adding one vector to every case moves it by up to {recenter}.",
    ),
    "shift-rms-vs-ln": dict(
        kind="choice",
        prompt="Every summed input of one sample is shifted by the same amount. Whose output for that sample changes?",
        choices=("Only LN's", "Only RMSNorm's", "Both", "Neither"),
        why="LN subtracts the sample's μ, which takes up the shift: its output is {ln}. RMSNorm does not "
        "subtract μ: its output moves by up to {rms}. The invariance table's weight matrix re-centering, "
        "W → W + 1vᵀ, shifts all of case n's summed inputs by vᵀxₙ, as here.",
    ),
    "rms-shifted-row": dict(
        kind="number",
        prompt="A sample's summed inputs are ({row}): (1, 2, 3, 4) shifted by {shift:g}. With γ = 1 and "
        "ε = 1e-5, what does RMSNorm give for the first?",
        why="RMSNorm divides by √(mean(x²) + ε) = {rms} (ε inside the root, as `F.rms_norm` puts it; Zhang and "
        "Sennrich's RMS has none) and does not subtract μ. LN subtracts μ first: it gives {ln}, as it does for "
        "(1, 2, 3, 4).",
        lo=-5.0,
        hi=5.0,
    ),
    "train-eval-shift": dict(
        kind="choice",
        prompt="A test batch is shifted by {shift:g} standard deviations in every feature. The features' σ "
        "differ, so the shift does too: from {least} to {most}. Which output does the shift leave unchanged?",
        choices=(
            "BN in training mode (the batch's own μ, σ²)",
            "BN in eval mode (running μ, σ²)",
            "LN",
            "None of them",
        ),
        why="BN in training mode is {train}: the batch's own μ takes up the shift. With eval mode's running μ, "
        "outputs move by up to {eval}. LN's move by up to {ln}: a per-feature shift moves each "
        "sample's μ and σ (dataset re-centering, ✗ for LN in the invariance table).",
    ),
    "longer-sequence": dict(
        kind="choice",
        prompt="Training sequences have at most {length} steps; a test sequence has {total}. Per-step BN keeps "
        "one μ and σ² per training step. Which norm has the statistics it needs at step {step}?",
        choices=("Only LN", "Only per-step BN", "Both", "Neither"),
        why="LN computes μ and σ² from the token's own {features} features, at any step. Per-step BN needs 2 "
        "training samples at a step: here it has them at steps 0 to {last} only, and the lab gives NaN after "
        "that. One remedy reuses the last training step's statistics for longer sequences (Cooijmans et al. "
        "2016).",
    ),
    "sequence-missing-steps": dict(
        kind="number",
        prompt="Seed {seed}: {batch} training sequences, the longest {length} steps, the second-longest "
        "{second}. Per-step BN needs 2 real samples at a step. How many of the test sequence's {total} steps "
        "have no BN statistics?",
        why="Only {reaching} training sequence reaches step {first}, so steps {first} to "
        "{before} have too few samples, and steps {length} to {last} have none. LN needs nothing but the token "
        "itself.",
        lo=0.0,
        decimals=0,
        tolerance=0.0,
    ),
    # Its prompt and options are beside the model's numbers they name, in transformer_question.
    "transformer-largest-sigma": dict(kind="choice"),
    # Tap the cells: the student builds the set a statistic pools; torch's is its gradient's support
    # (lnviz.labs.classroom.cells). A row or column is named by its index, as the grid's labels show it.
    "bn-mu-cells": dict(
        kind="cells",
        prompt="x is a batch of {batch} samples (rows) by {features} features (columns). In training mode, which "
        "cells does BN's μ for the marked cell read? Tap them all.",
        why="BN pools one feature over the batch: μ for feature {j} is ({values}) / {batch} = {mu}. Its gradient "
        "∂μ/∂x is 1/{batch} on those {batch} cells and 0 on the other {rest}.",
        axes=("sample", "feature"),
    ),
    "ln-sigma-cells": dict(
        kind="cells",
        prompt="x is a batch of {batch} samples (rows) by {features} features (columns). Which cells does LN's "
        "σ = √(σ² + ε) for the marked cell read? Tap them all.",
        why="LN pools one sample over its features: σ for sample {i} comes from its {features} values, σ = {sigma}. "
        "Its gradient (x − μ) / ({features} σ) runs from {least} to {most} on those {features} cells, and is 0 on "
        "the other samples' {rest} cells.",
        axes=("sample", "feature"),
    ),
    "group-norm-cells": dict(
        kind="cells",
        prompt="x has shape (N, C, L) = ({batch}, {channels}, {positions}): each row is one sample's channel, each "
        "column a position. With G = {groups} groups, which cells does GroupNorm's μ for the marked cell read?",
        why="G = {groups} splits the {channels} channels into groups of {size}: channel {c} is in the group of "
        "channels {first} and {last}. μ pools that group within sample {n}, at all {positions} positions: "
        "{count} values, μ = {mu}. The other sample's cells are not read.",
        axes=("row", "position"),
    ),
    "instance-norm-cells": dict(
        kind="cells",
        prompt="x has shape (N, C, L) = ({batch}, {channels}, {positions}): each row is one sample's channel, each "
        "column a position. Which cells does InstanceNorm's μ for the marked cell read?",
        why="InstanceNorm pools one channel of one sample over its {positions} positions: row n{n} c{c}, "
        "μ = {mu}. LN on this x would read sample {n}'s other channels too; BN, channel {c} of every sample.",
        axes=("row", "position"),
    ),
    "token-ln-cells": dict(
        kind="cells",
        prompt="A toy transformer's LayerNorm, H = {features}, gets “{sentence}” as {tokens} tokens (rows) of "
        "{features} features (columns). Which cells does its σ for the marked cell read?",
        why="`nn.LayerNorm(H)` normalizes each token over its own H features: σ for “{token}” comes from its "
        "{features} values, σ = {sigma}, and the other {others} tokens don't enter. all-MiniLM-L6-v2's LayerNorms "
        "do the same, at H = 384.",
        axes=("token", "feature"),
    ),
    # Drag to predict: a number question answered on a slider over its range.
    "outlier-x-hat-drag": dict(
        kind="number",
        prompt="Sample {i} has {h} features: feature {j} is an outlier, x = {outlier}, the other {rest} are "
        "standard normal. With ε = 1e-5, drag to LN's x̂ for the outlier.",
        why="The outlier pulls the sample's μ to {mu} and its σ to {sigma}. However far one value lies, LN's x̂ "
        "for it is at most √(H − 1) = √{rest} ≈ {bound} (Samuelson's inequality, biased σ²; ε only lowers it).",
        lo=0.0,
        hi=40.0,
        decimals=1,
        tolerance=0.25,  # the slider's stops every 0.5 (Question.step): 80 over the range, 4.0 the right one
        drag=True,
    ),
}

# --- the class page -------------------------------------------------------------------------------------------

INTRO = (
    "Predict first, then see: the presenter asks, everyone answers on a phone, and the class's answers appear "
    "beside torch's only when the presenter reveals them."
)
TEACH = (
    "Starts a room of {n} questions. Answers are anonymous: a random id in each browser's cookie, no name. A room "
    "ends after 6 idle hours."
)
LOBBY_CAVEAT = "This link opens the class page. A room's own join link is on the presenter's screen."
# A code that can't be a room's: what is wrong with it ({why}: WRONG_LENGTH or WRONG_CHARACTERS), then CODE_RULE.
BAD_CODE = "{code} can't be a room code: {why} {rule}"
BAD_LINK = "This link's room code, {code}, can't be one: {why} {rule}"
WRONG_LENGTH = "it has {n} characters."
WRONG_CHARACTERS = "{chars} {verb} in no room code."
CODE_RULE = (
    "A code has {length} characters: the digits {digits} and the letters A to Z but {left_out}, as the projector shows."
)
UNKNOWN = " Ask the presenter for the code, or start a room."  # after the store's own words for an unknown room
KEPT = (
    "What is kept: the room code, a random id in this browser's cookie, and each answer's choice, for 6 idle hours; "
    "so that one device can't answer for a crowd, a hash of this browser's cookie and of its address, with the ids "
    "it answered as. No name, no free text."
)
DOWN = (
    "The class's shared store can't be reached just now, so answers can't be sent or shown. The rest of lnviz "
    "works as usual. This page tries again every second and carries on by itself once the store is back."
)
FULL = (
    "The class's shared store is full, so it can't take this just now; every room and answer it holds is kept. "
    "Try again in a few minutes, or tell whoever runs this server."
)
PHASE_NAMES = {1: "first answers", 2: "second answers, after discussion"}
CLOSED = "This room is closed. Start another from the class page."
CLOSED_PHONE = "The presenter has closed this room."
LAST = "That was the last question. Thank you!"
COUNT_HELP = (
    "How many phones have answered this round. What they answered stays hidden until you reveal it, so the first "
    "answers don't sway the rest."
)
AGAIN_HELP = (
    "Peer instruction: after neighbours have argued, the same question once more, before torch's answer, shown "
    "beside the first."
)
REVEAL_HELP = (
    "Ends this round and shows the class's answers, or only that the round is over if you hide them. torch's "
    "answer stays hidden until Show answer."
)
ANSWER_HELP = (
    "Shows torch's answer and why, here and on every phone, with how many moved to it between rounds. No round is "
    "asked after it."
)
CHART_ALT = "The class's answers, each round, with torch's answer marked."
CHART_ALT_OPEN = "The class's answers, each round; torch's answer is not shown yet."
SENT = "Your answer is in. You can change it until the reveal."
OUT_OF_RANGE = "{guess} is outside this question's range, {span}: nothing was sent."
NOT_AN_ANSWER = "That is not one of this question's answers."
NUMBER_HOW = "Answer with a number {span}."
DRAG_HOW = "Drag to a number {span}, then Send."
CELLS_HOW = "Tap the cells on your phone, then Send."
NOT_ANSWERED = "You did not answer this round."
ROUND_OVER = "This round is over. torch's answer comes when the presenter shows it."
HIDDEN_PHONE = "The presenter keeps the class's answers to themselves for now."
SENDING = "Sending your answer…"
NONE_REVEALED = "No round has been revealed yet."
GONE = "This room has ended. Ask the presenter for the code of another."
MISSING = "Loading this question…"
RECONNECTING = "Lost touch with the class for a moment: reconnecting…"
COMING_BACK = "The class's store is coming back: this page keeps following the room and carries on by itself."
BACK = "The class's store is back. {held} This page shows what it holds."
HELD_NONE = "It holds no answer from this phone for this round: answer now, if you had not."
HELD_CHOICE = "It holds your answer **{letter}. {choice}**."
HELD_GUESS = "It holds your guess **{guess}**."
HELD_CELLS = "It holds your cells: **{cells}**."

# --- peer instruction (lnviz.labs.classroom.peer): the presenter's own view, and what the class sees at the answer ---

SHARE = "{right} of {answered} ({percent}\u00a0%)"  # never "(67" at a line's end, "%)" on the next
NO_ANSWERS = "nobody answered"
# After each round, by the share right (Crouch and Mazur 2001): for the presenter's eyes only.
ADVICE = {
    "explain": "Under 35 % right: too few to convince their neighbours. Explain it first, with the live view that "
    "shows it, then ask again.",
    "discuss": "Between 35 and 70 % right: ask everyone to find a neighbour who answered differently and convince "
    "them, then press **Ask again**.",
    "answer": "Over 70 % right: press **Show answer**, say why in a sentence, and move on.",
    "last": "The second round is in: press **Show answer**, with how many moved to it.",
}
RIGHT_ONCE = "Right: {first}."
SHIFT = "Right in round 1: {first}; in round 2: {second}.{moved}"
SHIFT_MOVED = " Of the {both} who answered both rounds, {to_right} moved to torch's answer and {away} away from it."

# The projector, after a round's reveal and before torch's answer.
HIDE = "Hide the class's answers"
HIDE_HELP = "A reveal then shows only that the round is over, so that neighbours argue without seeing the majority."
SHOW = "Show the class's answers"
SHOW_HELP = "A reveal shows the class's answers, without torch's."
HIDDEN_PROJECTOR = "Round {round} is over. The class's answers stay hidden for now."
# The presenter's own view (ui.poll.presenter): what only the presenter sees.
VIEW_NOTE = "Your own view: only you see it. The projector shows the class what it should see."
TORCH_FOR_YOU = "torch's answer: {answer}"
TORCH_LATER = "torch's answer is computed when you show it: {why}"
RIGHT_SO_FAR = "Right so far: {share}"
RIGHT_NOW = "Right: {share}"
NEXT_QUESTION = "Next: {prompt}"
LAST_QUESTION = "This is the last question."
OWN_VIEW = "Your own view"
OPEN_VIEW = "Open it in a new tab"
OWN_VIEW_HELP = (
    "Opens, in a new tab of this browser, what only you should see: the share of the class that is right, what to "
    "do next and the next question. The projector keeps showing what the class should see."
)
TAKE = "Present from another device"
TAKE_HELP = "A one-time code that opens your own view on another device: your phone, the podium's PC."
TAKE_HOW = (
    "On the other device, scan this, open the link, or open the class page and type the code under **Present a "
    "room here**. It works once, within 5 minutes; that device then presents this room beside this one."
)
TAKE_CAUTION = (
    "Anyone who sees this code can use it first. If this screen is projected, blank it until the other device "
    "shows the room."
)
HOSTS = {1: "1 more device presents this room.", 2: "{n} more devices present this room."}
SIGN_OUT = "Sign them out"
SIGNED_OUT = "The other devices no longer present this room."
TAKEN_HERE = "This device now presents the room: this is your own view, beside the projector."
TAKEN_THERE = "Another device now presents this room."
TAKE_HERE = "Present a room here"
TAKE_FIELD = "Presenter's code"
BAD_TAKE = (
    "{code} can't be a presenter's code: a presenter's code has {length} letters and digits, as the presenter's "
    "screen shows it (a room's code, which students type, has {room_length})."
)
