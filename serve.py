"""Serve lnviz: ``streamlit run app.py``, with the app's heavy imports started at once.

    python serve.py [streamlit options, e.g. --server.port 8501]

A Streamlit server imports nothing of the app until the first browser has
loaded the frontend and asked for a run; that first run then spends seconds
importing torch, pandas and plotly while the viewer looks at an empty page.
Here those imports run in a background thread from the moment the server
starts, alongside the browser loading the frontend, so the first run finds
them done. Everything else is ``streamlit run``: same options, same config.
"""

import sys
import threading
import time


def warm_imports(wait_s: float = 15.0) -> None:
    """Import what every page needs, once the server is up.

    Waiting for the server first keeps the imports from slowing its own start
    (they share the interpreter lock). A page that imports one of these modules
    meanwhile waits on Python's import lock until it is complete.
    """
    from streamlit.runtime import Runtime, RuntimeState

    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline and (not Runtime.exists() or Runtime.instance().state == RuntimeState.INITIAL):
        time.sleep(0.05)
    import pandas  # noqa: F401
    import plotly.graph_objects  # noqa: F401
    import torch  # noqa: F401

    import lnviz.figures  # noqa: F401


def main(argv: list[str]) -> int:
    threading.Thread(target=warm_imports, name="lnviz-warm-imports", daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", "app.py", *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
