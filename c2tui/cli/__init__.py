"""What the commands share (c2tui/commands/ stands on it; it imports nothing else of c2tui): the
run options (options.py), exits (exits.py), output files (outpath.py), stop signals
(stop_signals.py), --listen, --metrics-port, --grpc and --cluster (the engine a run gets:
cluster.make_engine), and an experiment's session (experiment and tune)."""
