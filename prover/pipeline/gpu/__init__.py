"""One seat per GPU: everything a GPU section meets on its GPU. The room (who may hold how much
of the VRAM budget, and when sections begun under new knobs may start), the locks, the
device-global sync, the VRAM marks, the words an OOM is explained with, and the run's GPU
compute."""
