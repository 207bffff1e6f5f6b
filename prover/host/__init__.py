"""Generic compiled host kernels (numba, ``nogil=True``, ``cache=True``): the sparse Fr
products of a CSR matrix (matvec). Each call is single-threaded and releases the GIL, so
worker threads running whole partitions really run in parallel. The circuit-specific kernels
live beside their references in prover/groth16/ (*_nb.py); their warm-up is groth16/warm.py.
"""
