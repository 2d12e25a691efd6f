"""The class poll's pure parts: a question and its votes (:mod:`.poll`), the question bank (:mod:`.questions`, its
words :mod:`.text`) and the results figure (:mod:`.figures`).

A lecturer asks one question, the students vote, and the class's answers are
shown beside torch's. Every right answer here is computed with lnviz and torch
in float64, never typed by hand. Nothing here imports streamlit.
"""
