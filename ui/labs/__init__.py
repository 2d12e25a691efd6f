"""Each lab's own Streamlit side, beside its computation in ``lnviz.labs``: the explorer's details and own data,
the kernel benchmark's measurements, the training race. It stands on the page kit and the stage's glue."""
