"""What tests/ and benchmarks/ share: a real server (server), headless Chromium (chromium), nginx in front of
replicas (nginx), a redis-server for the shared poll store (redis), AppTest runs of a page (apptest) and a
WebSocket client that speaks Streamlit's protocol (wsclient).

Neither tests/ nor benchmarks/ imports the other; both import this.
"""
