"""BLS12-381, defined once: the constants (params), Fr over numpy (fr, its Montgomery core
mont, the block pool blocks), the NTT (ntt), the curve glue over py_arkworks (curve), the
compiled per-element arithmetic (fr_nb, fp_nb: numba, nogil), Python-integer curve
arithmetic (curve_int) and references (ref). The CUDA side (kernels/cuda/field.cuh) is checked
against params by a test."""
