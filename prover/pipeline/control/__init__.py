"""The live controller: the knobs a UI, `--switch`, a fleet or an attached client turn mid-run,
and the convenience methods every controller face shares."""
