"""What tests/ and benchmarks/ share: a real server (server), headless Chromium (chromium), when a page has
settled (settle) and the tab that waits for it (tab, with a tab's frames on the network layer in wire), nginx in
front of replicas (nginx), a redis-server for the shared poll store (redis), two replicas on one Redis behind
nginx (replicas), AppTest runs of a page (apptest) and a WebSocket client that speaks Streamlit's protocol
(wsclient).

Neither tests/ nor benchmarks/ imports the other; both import this.
"""
