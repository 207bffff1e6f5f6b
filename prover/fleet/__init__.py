"""A fleet on Ray: one host engine per Ray node, one scheduler and one event stream in the
driver (docs/fleet.md). Nothing here is imported on one host; Ray only in cluster.py."""
