"""The `c2tui` command: a click group whose subcommands live one per file in c2tui/commands/.

Each subcommand module exposes a click command named `command`; modules are imported lazily
so that `c2tui summary` never pays for importing Textual, and a missing optional piece fails
only the subcommand that needs it.
"""
from __future__ import annotations

import errno
import importlib
import io
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING, Any, NoReturn

import click

from c2tui.cli.exits import OK, RUN, USAGE

if TYPE_CHECKING:
    from rich.console import Console

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
    "cuzk-proof": "cuzk_proof",  # a cuzk job's proof bytes laid out for verify (prover/cuzk)
    "export": "export",
    "serve": "serve",
    "attach": "attach",
    "config": "config",
    "status": "status",
    "experiment": "experiment",
    "tune": "tune",
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

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        """click's main, with every way out one line and a documented status (docs/exit-codes.md):
        a ClickException is a usage error (2), never click's 1 ("a proof failed"); Ctrl-C, SIGTERM
        and SIGHUP are 3 (a command's own handling, e.g. a dashboard's, comes first);
        stdout closed or full (`> /dev/full`, `| head -0`) is one line and 3, not a traceback
        at exit; an input too big or deep for memory is 2."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        _guard_streams()
        from c2tui.cli.stop_signals import FirstStops

        stops = FirstStops().install()  # SIGINT, SIGTERM, SIGHUP as one Ctrl-C for every command (3, one line):
        try:  # a second signal is only noted (SIGTERM then SIGHUP cut a lock's release: a traceback)
            rv = super().main(args, prog_name, complete_var, False, **extra)
            code = rv if isinstance(rv, int) else OK
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (OK if exc.code is None else USAGE)
            if type(sys.stdout).__name__ == "_PacifyFlushWrapper":  # click met EPIPE and exits 1
                code = _say("cannot write the output: Broken pipe", RUN)
        except click.ClickException as exc:
            exc.show()
            code = USAGE if exc.exit_code == 1 else exc.exit_code
        except (click.Abort, KeyboardInterrupt, EOFError):
            code = _say("interrupted", RUN)
        except OSError as exc:
            if exc.errno not in (errno.EPIPE, errno.ENOSPC, errno.EIO, errno.EBADF):
                raise
            code = _say(f"cannot write the output: {exc.strerror or exc}", RUN)
        except (MemoryError, RecursionError) as exc:
            code = _say(f"the input is too large or too deeply nested ({type(exc).__name__})", USAGE)
        _exit(code, stops)

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


class _ClosedBinary(io.RawIOBase):
    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        raise OSError(errno.EBADF, "stdout is closed")


class _ClosedStdout(io.TextIOBase):
    """Stands in for a closed stdout (`>&-`): a command that prints, text or bytes (`-o -`),
    fails in one line (3)."""

    buffer = _ClosedBinary()

    def write(self, s: str) -> int:
        raise OSError(errno.EBADF, "stdout is closed")

    def isatty(self) -> bool:
        return False


def _pipe_closed(console: Console) -> None:
    """rich's Console ends a broken pipe with SystemExit(1), the code for "a proof failed";
    raise it as the OSError it is, for main to say in one line with status 3."""
    console.quiet = True
    raise BrokenPipeError(errno.EPIPE, "Broken pipe")


def _guard_streams() -> None:
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w")
    from rich.console import Console

    setattr(Console, "on_broken_pipe", _pipe_closed)  # a patch of rich's class, for every console


def _say(message: str, code: int) -> int:
    try:
        print(f"error: {message}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass
    return code


def _exit(code: int, stops: Any = None) -> NoReturn:
    """Flush stdout here, where a failure can still be said in one line and change the status;
    then point it at /dev/null so the interpreter's own flush at exit has nothing to fail on.
    A process ignores stop signals from here to its end (Python's finalisation puts back the
    default action, and a second Ctrl-C 1 ms after the first killed it by the signal); a
    command run inside another program (CliRunner) gives them back."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError) as exc:
        code = _say(f"cannot write the output: {getattr(exc, 'strerror', None) or exc}", RUN) if code == OK else code
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):  # not a real stream (CliRunner): nothing to guard
        if stops is not None:
            stops.uninstall()
        sys.exit(code)
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except OSError:
        pass
    if stops is not None and threading.current_thread() is threading.main_thread():
        for s in stops.SIGNALS:  # exiting already, with the status that says what happened
            signal.signal(s, signal.SIG_IGN)
    sys.exit(code)


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
