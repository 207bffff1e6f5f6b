"""The machine's health beside the run (issue 36): the GPU's own figures from NVML (gpu.py), the
host's CPUs and memory pressure from /proc (host.py), and the VRAM growth test across
partitions (vram_growth.py). Pure readers and tests; the engine's sampler
(prover/pipeline/health_sampler.py) calls them off the hot path and emits the events."""
