"""`c2tui prove`: one real Groth16 proof on the CPU, written as snarkjs JSON.

The setup's toxic waste comes from the OS's randomness (keys cached by key id);
`--insecure-seeded-setup` derives it from --seed instead, for byte-reproducible tests: such
keys are labelled "insecure-seeded" in verification_key.json (anyone who knows the seed can
forge proofs for them). The proof's randomisers r, s come from `secrets` (zero knowledge);
`--insecure-seeded-proofs` derives them from --seed and --instance (the same bytes every
time, and anyone with the key can tell the witness: said in the output). Exit status: 0 the proof verifies, 1 it does not, 2 bad options."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click
from rich.console import Console
from rich.table import Table

from c2tui.cli.exits import OutPath

T = TypeVar("T")


@click.command("prove")
@click.option("--constraints-log2", "k", type=click.IntRange(8, 27), required=True, help="circuit size: 2^K constraints")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=1, show_default=True, help="circuit seed (and setup seed with --insecure-seeded-setup)")
@click.option("--instance", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True, help="which witness / public inputs")
@click.option("--out", "out", type=OutPath(file_okay=False, path_type=Path), required=True, help="output directory")
@click.option("--cache-dir", type=OutPath(file_okay=False, path_type=Path), default=None, help="key cache (default $C2TUI_CACHE or ~/.cache/c2tui/keys)")
@click.option("--insecure-seeded-setup", "insecure", is_flag=True,
              help="derive the setup's toxic waste from --seed (reproducible; INSECURE: the seed forges proofs)")
@click.option("--insecure-seeded-proofs", "insecure_proofs", is_flag=True,
              help="derive r, s from --seed/--instance (reproducible bytes; INSECURE: no zero knowledge)")
@click.option("--force", is_flag=True, help="replace proof.json, verification_key.json, public.json in --out")
def command(k: int, seed: int, instance: int, out: Path, cache_dir: Path | None, insecure: bool,
            insecure_proofs: bool, force: bool) -> None:
    """Prove one instance of the 2^K circuit; exit 0 only if the proof verifies."""
    from c2tui.cli import outpath
    from c2tui.cli.exits import INVALID, RUN, fail, writable_dir
    from prover import proof_files as export
    from prover import groth16_phases as P
    from prover import default_cache_dir

    writable_dir(out, "--out")
    for name in (export.PROOF_FILE, export.VK_FILE, export.PUBLIC_FILE):
        outpath.check(out / name, "--out", force=force)
    writable_dir(cache_dir or default_cache_dir(), "--cache-dir")
    console = Console(stderr=True)
    times: list[tuple[str, float]] = []

    def timed(name: str, fn: Callable[..., T], *args: object) -> T:
        t0 = time.perf_counter()
        result = fn(*args)
        times.append((name, time.perf_counter() - t0))
        return result

    circuit = timed("make_circuit", P.make_circuit, k, seed)
    try:
        pk, vk = timed("load_or_setup", lambda: P.load_or_setup(circuit, seed, cache_dir, insecure_seeded=insecure))
    except OSError as exc:  # the key cache could not be written (no space, I/O error)
        fail(f"cannot write the key cache: {exc.strerror or exc}", RUN)
    syn = timed("synthesize", P.synthesize, circuit, instance)
    prep = timed("prep_msm", P.prep_msm, syn, pk)
    h = timed("ntt_h", P.ntt_h, syn.a, syn.b, syn.c)
    g1 = timed("msm_g1", P.msm_g1, prep, h, pk)
    b2 = timed("b_g2_msm", P.b_g2_msm, prep, pk)
    r, s = P.randomisers(seed, instance, insecure_seeded=insecure_proofs)
    proof = timed("assemble", P.assemble, syn, g1, b2, pk, r, s)
    ok = timed("verify", P.verify, vk, syn.public_ints(), proof)
    for name, data in export.dir_files(proof, vk, syn.public_ints()):
        outpath.write_whole(out / name, data, force=force)

    label = " [INSECURE seeded setup]" if insecure else ""
    label += " [INSECURE seeded proofs]" if insecure_proofs else ""
    table = Table(title=f"prove 2^{k} (seed {seed}, instance {instance}){label}", min_width=40)
    table.add_column("phase")
    table.add_column("seconds", justify="right")
    for name, dt in times:
        table.add_row(name, f"{dt:.3f}")
    table.add_row("prove total", f"{sum(dt for n, dt in times if n not in ('make_circuit', 'load_or_setup', 'verify')):.3f}")
    console.print(table)
    if insecure_proofs:
        console.print("[bold red]INSECURE seeded proofs[/]: r, s come from --seed/--instance; with the key, anyone can tell the witness")
    if ok:
        console.print(f"[bold green]proof verified[/]: wrote {out}/proof.json, verification_key.json, public.json")
    else:
        console.print("[bold red]PROOF DID NOT VERIFY[/]")
        sys.exit(INVALID)
