"""The dashboard: the Textual apps (app.py: one run, live, attached or replayed; compare_app.py:
runs side by side), their live controls and row actions' confirmations (live_controls.py),
how the panels share the screen (layout.py), what is remembered (prefs.py), the dashboard on a
cuzk daemon (cuzk_watch.py) and in a browser (webserve.py). It stands on sources/, widgets/ and
cli/; nothing below imports it."""
