"""The on-disk key cache: one .npz per key, named by circuit and key id, with the set-up's label
and a sha256 over the arrays inside, written atomically (temp file + os.replace).

Written and read one array at a time: the writer brings each query to the host only when its
turn comes (a key resident on the device is never whole on the host), hashing as it writes; the
reader checks the hash as it reads and, given `upload`, puts each query on the device as soon as
it is read (a resident key then holds one query's bytes of host RAM at a time, not the key's).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np

from prover.groth16.circuit import CIRCUIT_NAME, Circuit
from prover.groth16.keys import QUERIES, ProvingKey, VerifyingKey
from prover.settings import KernelSettings

CACHE_FORMAT = 3  # 2: keyed by key id, with the setup's label inside; 3: the H query in coset-Lagrange form
RANDOM, INSECURE = "random", "insecure-seeded"
# upload(group, host xy array) -> the query as device-resident points
Upload = Callable[[str, np.ndarray], Any]


def default_cache_dir(kernels: KernelSettings | None = None) -> Path:
    given = (kernels if kernels is not None else KernelSettings.from_env()).cache_dir
    return Path(given) if given else Path.home() / ".cache" / "c2tui" / "keys"


def key_id(vk: VerifyingKey) -> str:
    """A short name for a key: the sha256 of the verifying key's points (16 hex digits)."""
    return _content_hash(vk.arrays())[:16]


def _prefix(circuit: Circuit, insecure_seed: int | None) -> str:
    base = f"{CIRCUIT_NAME}-k{circuit.constraints_log2}-c{circuit.seed}-{circuit.digest()[:16]}"
    return base + ("-key-" if insecure_seed is None else f"-INSECURE-seed{insecure_seed}-key-")


def cache_path(circuit: Circuit, vk: VerifyingKey, cache_dir: Path, insecure_seed: int | None = None) -> Path:
    return cache_dir / f"{_prefix(circuit, insecure_seed)}{key_id(vk)}.npz"


def cached_keys(circuit: Circuit, cache_dir: Path, insecure_seed: int | None = None) -> list[Path]:
    """This circuit's cache files of the given kind, newest first."""
    try:
        found = list(cache_dir.glob(f"{_prefix(circuit, insecure_seed)}*.npz"))
    except OSError:
        return []
    return sorted(found, key=lambda p: (p.stat().st_mtime if p.exists() else 0.0, p.name), reverse=True)


def _hash_one(h: Any, name: str, a: np.ndarray) -> None:
    a = np.ascontiguousarray(a)
    h.update(f"{name}:{a.dtype.str}:{a.shape}".encode())
    h.update(a.data if a.size else b"")


def _content_hash(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        _hash_one(h, name, arrays[name])
    return h.hexdigest()


def _held(a: np.ndarray) -> Callable[[], np.ndarray]:
    """An array already on the host, as the writer's maker of it."""
    return lambda: a


def _key_items(pk: ProvingKey, vk: VerifyingKey, circuit: Circuit) -> dict[str, Callable[[], np.ndarray]]:
    """Every array of the file by name, each made when called (a resident query downloaded)."""
    items: dict[str, Callable[[], np.ndarray]] = {}
    for k, v in pk.arrays().items():
        items[f"pk_{k}"] = _held(v) if isinstance(v, np.ndarray) else v.to_host
    for k, a in vk.arrays().items():
        items[f"vk_{k}"] = _held(a)
    meta = np.array([CACHE_FORMAT, pk.num_inputs], dtype=np.int64)
    label = np.frombuffer(vk.setup_label.encode(), np.uint8)  # the file says how its key was made
    digest = np.frombuffer(bytes.fromhex(circuit.digest()), np.uint8)
    items |= {"meta": _held(meta), "setup_label": _held(label), "circuit_digest": _held(digest)}
    return items


def _write_member(zf: zipfile.ZipFile, name: str, a: np.ndarray) -> None:
    with zf.open(name + ".npy", "w", force_zip64=True) as f:
        np.lib.format.write_array(f, np.ascontiguousarray(a), allow_pickle=False)


def save_keys(path: Path, pk: ProvingKey, vk: VerifyingKey, circuit: Circuit) -> None:
    """Write atomically (temp file + os.replace) with a sha256 of the content inside, one array
    at a time (np.load reads it as np.savez's)."""
    items = _key_items(pk, vk, circuit)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        h = hashlib.sha256()
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
            for name in sorted(items):
                a = items[name]()
                _hash_one(h, name, a)
                _write_member(zf, name, a)
                del a
            _write_member(zf, "sha256", np.frombuffer(h.digest(), np.uint8))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _group(query: str) -> str:
    return "g2" if query.endswith("g2_query") else "g1"


def load_keys(path: Path, circuit: Circuit, upload: Upload | None = None) -> tuple[ProvingKey, VerifyingKey]:
    """Load and check a cache file; raises ValueError if damaged or for another circuit. With
    `upload`, the five queries go to the device as they are read (a resident key)."""
    from prover.groth16 import prep_nb

    arrays: dict[str, Any] = {}
    h = hashlib.sha256()
    with np.load(path, allow_pickle=False) as data:
        if "sha256" not in data.files:
            raise ValueError("sha256 mismatch")
        stored = bytes(data["sha256"])
        meta = data["meta"] if "meta" in data.files else None
        if meta is None or int(meta[0]) != CACHE_FORMAT or "circuit_digest" not in data.files \
                or bytes(data["circuit_digest"]).hex() != circuit.digest():
            raise ValueError("written for another circuit or format")
        # a resident key's presence bits, read as its queries go up (made exactly when upload is given)
        presence = np.zeros(circuit.num_vars, dtype=np.uint8) if upload is not None else None
        for name in sorted(f for f in data.files if f != "sha256"):
            a = data[name]
            _hash_one(h, name, a)
            query = name[3:]
            if upload is not None and presence is not None and name.startswith("pk_") and query in QUERIES:
                if query != "h_query":
                    bit = np.uint8(1 << prep_nb.QUERIES.index(query[:-6]))
                    prep_nb.mark_present(a, bit, int(meta[1]) if query == "l_query" else 0, presence)
                a = upload(_group(query), a)
            arrays[name] = a
    if h.digest() != stored:
        raise ValueError("sha256 mismatch")
    pk_f = {k[3:]: v for k, v in arrays.items() if k.startswith("pk_")}
    vk_f = {k[3:]: v for k, v in arrays.items() if k.startswith("vk_")}
    label = bytes(arrays["setup_label"]).decode()
    if label not in (RANDOM, INSECURE):
        raise ValueError(f"unknown setup label {label!r}")
    return (ProvingKey(**pk_f, num_inputs=int(arrays["meta"][1]), presence=presence),
            VerifyingKey(**vk_f, setup_label=label))
