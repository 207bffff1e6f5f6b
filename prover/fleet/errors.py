"""The fleet's one error: a leaf, so cluster.py and gpus.py both raise it without importing each other."""
from __future__ import annotations


class ClusterError(RuntimeError):
    """--cluster is malformed, Ray is missing, or the cluster cannot be reached."""
