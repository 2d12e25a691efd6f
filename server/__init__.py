"""The server: what a shared lnviz server limits and keeps, beside the teaching library (lnviz/), which never
imports it. Who a visitor is (who, proof), the scheduler and the budgets (slots, budget, quota, heap, cpus), one
home for every number (limits), the store and its blobs (store, own_share, own_store), the class poll's rules and
stream (poll, events)."""
