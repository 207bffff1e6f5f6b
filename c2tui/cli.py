"""The `c2tui` command: a click group whose subcommands live one per file in c2tui/commands/.

Each subcommand module exposes a click command named `command`; modules are imported lazily
so that `c2tui summary` never pays for importing Textual, and a missing optional piece fails
only the subcommand that needs it.
"""
from __future__ import annotations

import importlib

import click

# name -> module under c2tui.commands (each defines `command`)
SUBCOMMANDS: dict[str, str] = {
    "run": "run",
    "record": "record",
    "replay": "replay",
    "summary": "summary",
    "screenshot": "screenshot",
    "compare": "compare",
    "prove": "prove",
    "verify": "verify",
    "export": "export",
    "serve": "serve",
    "attach": "attach",
    "config": "config",
    "status": "status",
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is used. Options before any
    subcommand are run's: `c2tui --backend sim` is `c2tui run --backend sim`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # a NUL cannot reach a path call (ValueError there); exec never passes one, a caller might
        if any("\x00" in a for a in args):
            raise click.UsageError("an argument contains a NUL byte")
        if args and args[0].startswith("-") and args[0] not in ctx.help_option_names:
            args = ["run", *args]
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        module_name = SUBCOMMANDS.get(name)
        if module_name is None:
            return None
        try:
            module = importlib.import_module(f"c2tui.commands.{module_name}")
        except ModuleNotFoundError as exc:  # a subcommand not built yet
            if exc.name and exc.name.startswith("c2tui.commands"):
                return None
            raise
        return module.command


@click.group(cls=LazyGroup, invoke_without_command=True)
@click.pass_context
def main(ctx: click.Context) -> None:
    """c2tui: watch and steer a GPU Groth16 prover (SupraSeal C2 shape)."""
    if ctx.invoked_subcommand is None:
        run_cmd = LazyGroup.get_command(main, ctx, "run")  # type: ignore[arg-type]
        if run_cmd is None:
            click.echo(ctx.get_help())
            return
        ctx.invoke(run_cmd)


if __name__ == "__main__":
    main()
