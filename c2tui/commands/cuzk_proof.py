"""`c2tui cuzk-proof REQUEST PROOF --constraints-log2 K --out DIR`: a cuzk job's proof bytes
(one 192-byte compressed Groth16 proof a partition, what AwaitProof / Prove return) laid out
as snarkjs directories DIR/p0, DIR/p1, ... for `c2tui verify` (prover/cuzk/proof_dir.py).

REQUEST is the vanilla_proof bytes the client sent (they chose each partition's witness);
the verifying key is read from the prover's key cache, never made anew. Exit 0 written, 2
bad input (the message names it)."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from c2tui.cli.exits import OutPath


@click.command("cuzk-proof")
@click.argument("request", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("proof", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--constraints-log2", "k", type=click.IntRange(8, 27), required=True,
              help="the proof class's circuit size on the prover (c2: its --constraints-log2)")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True, help="the prover's --seed")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="the prover's key cache (default $C2TUI_CACHE or ~/.cache/c2tui/keys)")
@click.option("--insecure-seeded-setup", "insecure", is_flag=True, help="the prover's keys came from a seeded set-up")
@click.option("--out", "out", type=OutPath(file_okay=False, path_type=Path), required=True, help="output directory")
@click.option("--force", is_flag=True, help="replace files in --out")
def command(request: Path, proof: Path, k: int, seed: int, cache_dir: Path | None, insecure: bool, out: Path,
            force: bool) -> None:
    """Lay a cuzk job's proof bytes out for `c2tui verify`, one directory a partition."""
    from c2tui.cli import outpath
    from c2tui.cli.exits import USAGE, fail, writable_dir
    from prover import InputError, default_cache_dir, read_input
    from prover import ProofDirError, proof_dirs

    try:
        req = read_input(request, 256 << 20, "request")
        data = read_input(proof, 1 << 20, "proof")
        dirs = proof_dirs(req, data, k, seed, cache_dir or default_cache_dir(), insecure)
    except (InputError, ProofDirError) as exc:
        fail(str(exc), USAGE)
    writable_dir(out, "--out")
    for i, files in enumerate(dirs):
        d = out / f"p{i}"
        d.mkdir(exist_ok=True)
        for name, blob in files:
            outpath.check(d / name, "--out", force=force)
            outpath.write_whole(d / name, blob, force=force)
    click.echo(f"wrote {len(dirs)} partition(s): " + " ".join(str(out / f'p{i}') for i in range(len(dirs))), err=True)
    sys.exit(0)
