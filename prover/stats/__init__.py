"""The statistics every figure rests on: intervals (intervals.py), an experiment's figures from
its holds' counts (experiment.py), and holds sized from the run (plan.py). A leaf: nothing of
prover is imported here, so the fold (which counts) and the experiments (which decide) both
stand on it."""
