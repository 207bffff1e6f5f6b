"""What an experiment on the sim backend runs at when the command line and --config say nothing.

An experiment needs many verified partitions per hold. The sim device paces each phase to its
modelled time (x time scale) beside the real math at the proved size; at the run defaults
(2^10, time scale 1) a 20 s hold counts ~5 partitions, too few to see a 1.6x difference in
3 cycles. At time scale 0.25 the modelled phases are 4x shorter (4x the count), and at 2^8
the real math (~0.1 s a partition on a loaded 2-core machine) stays well under them, so the
profile's ratios survive: at 2^10 and 0.25 the real NTT and MSM (~0.4 s under load) catch up
with the modelled 0.45 s GPU section and single and two-lock + stream measured the same.
A value given on the command line or in --config always wins; the output names what ran.
"""
from __future__ import annotations

from typing import Any

SIM_DEFAULTS: dict[str, Any] = {"time_scale": 0.25, "constraints_log2": 8}


def sim_defaults(config: Any) -> tuple[Any, dict[str, Any]]:
    """(config with SIM_DEFAULTS for what it left unset, when it runs on the sim backend with
    a modelled profile; what was filled in). The engine's own backend choice decides sim."""
    from prover.pipeline.engine import BackendError, resolve_backend

    try:
        sim = resolve_backend(config.backend) == "sim"
    except BackendError:  # cuda asked for and absent: the engine says so
        return config, {}
    if config.profile == "native" or not sim:
        return config, {}
    fill = {k: v for k, v in SIM_DEFAULTS.items() if k not in config.model_fields_set}
    return (config.model_copy(update=fill) if fill else config), fill
