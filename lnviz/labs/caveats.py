"""What lnviz shows where PyTorch refuses to compute, each said once (issue 22).

BatchNorm in training mode has two inputs PyTorch refuses: a batch of one
(B = 1: each feature's batch holds one value) and ε = 0. The explorer, its stage
and the walkthrough all say these in the words below, so a change of wording is
one change.
"""

BN_SINGLE_SAMPLE = (
    "With B = 1 each feature's batch holds one value: μ = x and the biased σ² = 0, so for any ε > 0 "
    "x̂ = 0/√ε = 0 and BN's output is β, whatever the input. PyTorch refuses a feature with a single value in "
    'training mode ("Expected more than 1 value per channel when training"), with or without running '
    "statistics; a running variance, updated with the unbiased σ² · n/(n − 1), could not be updated from it "
    "either. LayerNorm is fine: it normalizes each sample over its own features."
)

BN_ZERO_EPS = (
    'F.batch_norm refuses ε = 0 in training mode ("eps must be positive"), so at ε = 0 BN\'s numbers are '
    "lnviz's own: the formula (x − μ)/√σ², computed with torch tensors, which is the value F.batch_norm "
    "approaches as ε → 0 wherever σ > 0."
)
BN_ZERO_EPS_BADGE = "BN: formula (ε = 0)"  # the stage's badge, beside "torch · float64"
