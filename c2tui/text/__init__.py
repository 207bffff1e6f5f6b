"""The text views: what the commands print (rich, fitted to the terminal's width): the summary,
a comparison, the segments, the start-up, an experiment's and a tune's results, status's health
lines, run's line on quit. They render the fold's models (prover's door); below them only
widgets/alerts (the OOM words the screen says too) and cli/outpath (a report written to a file)."""
