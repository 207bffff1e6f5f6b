"""`c2tui verify DIR`: check a snarkjs-layout Groth16 proof directory.

Exit status: 0 valid, 1 invalid (well-formed but the pairing check fails), 2 unreadable
or malformed input (the message names the file and what is wrong)."""
from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console


@click.command("verify")
@click.argument("directory", type=click.Path(path_type=Path))
def command(directory: Path) -> None:
    """Verify DIR/proof.json against DIR/verification_key.json and DIR/public.json."""
    from prover import proof_files as export
    from prover import groth16_phases

    verify = groth16_phases.verify

    console = Console(stderr=True, soft_wrap=True)  # never break a file path across lines
    if not directory.is_dir():
        console.print(f"[bold red]unreadable[/]: {directory} is not a directory")
        sys.exit(2)
    try:
        vk = export.load_vk(directory / export.VK_FILE)
        proof = export.load_proof(directory / export.PROOF_FILE)
        public = export.load_public(directory / export.PUBLIC_FILE)
    except export.MalformedInput as exc:
        console.print(f"[bold red]malformed input[/]: {exc}", highlight=False)
        sys.exit(2)
    if vk.insecure:
        console.print("[bold yellow]warning[/]: this verification key comes from an INSECURE seeded setup: "
                      "anyone who knows the seed can forge proofs that verify", highlight=False)
    if len(public) != vk.num_public:
        console.print(f"[bold red]malformed input[/]: {directory / export.PUBLIC_FILE}: {len(public)} public inputs but the verifying key expects {vk.num_public}", highlight=False)
        sys.exit(2)
    if verify(vk, public, proof):
        console.print("[bold green]valid[/]: the proof verifies")
        sys.exit(0)
    console.print("[bold red]INVALID[/]: the pairing check fails")
    sys.exit(1)
