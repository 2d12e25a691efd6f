"""The stage's glue: the element drawn from torch's numbers (:mod:`ui.stage.stage`) and its route for another γ
and β (:mod:`ui.stage.stage_at`). It stands on the page kit."""
