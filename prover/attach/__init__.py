"""Attach: serve a running prover's events and controller on a socket (docs/attach.md)."""
