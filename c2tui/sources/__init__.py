"""Where the dashboard's state comes from, behind one face (live.Source): the live engine, a
prover attached over --listen (live.py), a recording (replay.py, its lines in event_store.py,
its seek points in seek_points.py) or a cuzk daemon (cuzk.py). Imports nothing else of c2tui."""
