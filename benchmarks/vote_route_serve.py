"""``python -m benchmarks.vote_route_serve python -m streamlit run app.py …``: ``app.py`` served with the throwaway
vote route of :mod:`benchmarks.vote_route` beside its own routes, for that measurement only.

``harness.server.start_app``'s ``prefix`` puts this before its command; ``ui.poll.routes.routes`` is wrapped before
``app.py`` calls it, and Streamlit's command line then runs in this process as ``streamlit run`` would.
"""

import sys

from streamlit.web import cli

from benchmarks import vote_route
from ui.poll import routes

_own = routes.routes
routes.routes = lambda: [*_own(), vote_route.route()]
sys.argv = ["streamlit", *sys.argv[sys.argv.index("streamlit") + 1 :]]
sys.exit(cli.main())
