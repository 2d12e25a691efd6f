"""lnviz: Layer Normalization against Batch Normalization, computed live in torch.

Pure computation and pure figure building. This package never imports
streamlit; the pages in ``pages/`` do the rendering.
"""
