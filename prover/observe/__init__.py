"""Operators' surfaces over the event stream: Prometheus metrics and trace export.

Library pieces with no Textual import, so headless `record` can use them.
"""
