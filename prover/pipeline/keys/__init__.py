"""Circuits and proving keys by size (the key ring, its loads) and the host-RAM book the keys
and the workers' buffers are admitted under."""
