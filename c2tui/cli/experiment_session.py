"""What `c2tui experiment` and `c2tui tune` share: their options beside the run options, and the
live prover they drive: the embedded engine (headless, like `record`) or a `--listen` prover
reached with `--attach`, behind one link (prover.experiment: EmbeddedLink | AttachLink), with
an optional recording of everything (the prover's events and the experiment's own).

    with Session.open(kwargs, attach, ...) as s:      # exits 2 on bad input, 3 if it cannot start
        result = Runner(s.link, design).run()
"""
from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any, Callable, TypeVar

import click

from c2tui.cli import outpath, stop_signals
from c2tui.cli.exits import INVALID, RUN, USAGE, OutPath, fail
from c2tui.cli.options import run_option_names
from prover import EngineHandle

F = TypeVar("F", bound=Callable[..., Any])


def session_options(func: F) -> F:
    opts = [
        click.option("--out", "-o", "out", type=OutPath(dir_okay=False, path_type=Path), default=None,
                     help="also record every event (the prover's and the experiment's) to this file"),
        click.option("--force", is_flag=True, help="replace --out if it exists"),
        click.option("--json", "as_json", is_flag=True, help="the results as JSON on stdout (for scripts)"),
        click.option("--attach", "attach", default=None, metavar="ADDRESS",
                     help="steer a prover already running with --listen ADDRESS instead of starting one"),
        click.option("--token-file", default=None, metavar="FILE", help="with --attach over TCP: the server's token"),
        click.option("--name", default="experiment", show_default=True,
                     help="with --attach: how this client's changes are recorded (attach:NAME)"),
        click.option("--quiet", "-q", is_flag=True, help="no progress line"),
    ]
    for o in reversed(opts):
        func = o(func)
    return func


class Failures:
    """Counts failed proofs and partitions in the stream (exit 1, as record)."""

    def __init__(self) -> None:
        self.proofs = self.partitions = 0

    def __call__(self, e: Any) -> None:
        kind = getattr(e, "kind", "")
        if kind == "proof_result" and not e.ok and e.checked:
            self.proofs += 1
        elif kind == "partition_done" and not e.ok:
            self.partitions += 1


class Session:
    def __init__(self) -> None:
        self.link: Any = None
        self.engine: EngineHandle | None = None
        self.client: Any = None
        self.writer: Any = None
        self.filled: dict[str, Any] = {}  # what the sim defaults filled in
        self.address: str | None = None
        self.failures = Failures()
        self.stop = threading.Event()
        self.signals = stop_signals.FirstStops(self.stop)  # installed from start() to close()
        self._out: tuple[Path, Any, bool] | None = None  # the recording to open at start()
        self._closed = False

    @classmethod
    def open(cls, run_kwargs: dict[str, Any], attach: str | None, token_file: str | None, name: str,
             out: Path | None, force: bool) -> "Session":
        s = cls()
        if out is not None:
            outpath.check(out, "--out", force=force)
        if attach is not None:
            given = sorted(k for k in run_option_names() if run_kwargs.get(k) is not None)
            if given:
                raise click.UsageError(f"--attach steers a running prover, started with its own options: drop "
                                       f"--{given[0].replace('_', '-')}")
            s._attach(attach, token_file, name, out, force)
        else:
            s._embedded(run_kwargs, out, force)
        return s

    def _embedded(self, kwargs: dict[str, Any], out: Path | None, force: bool) -> None:
        from prover import ConfigError, RecordingHeader, experiment
        from c2tui.cli.cluster import make_engine
        from c2tui.cli.options import config_from_options

        try:
            cfg = config_from_options(**kwargs)
        except ConfigError as exc:
            raise click.UsageError(str(exc)) from None
        cfg, self.filled = experiment.sim_defaults(cfg)
        self.engine = make_engine(cfg, None)
        if out is not None:
            self._out = (out, RecordingHeader(argv=list(sys.argv), config=cfg.public_dict()), force)
        self.engine.add_sink(self.failures)
        self.link = experiment.EmbeddedLink(self.engine)

    def _attach(self, address: str, token_file: str | None, name: str, out: Path | None, force: bool) -> None:
        from prover import AttachClient, AttachError, RecordingHeader, RemoteController, experiment

        try:
            self.client = AttachClient(address, name=name, token_file=token_file)
            welcome = self.client.connect()
        except AttachError as exc:
            fail(str(exc), USAGE)
        self.address = address
        if out is not None:
            self._out = (out, RecordingHeader.model_validate({**welcome.header, "argv": list(sys.argv),
                                                              "note": f"attached to {address} as {welcome.client}"}), force)
        self.link = experiment.AttachLink(self.client, RemoteController(self.client), [self.failures])

    def start(self) -> None:
        """Start the prover (or begin reading the attached one). SIGINT, SIGTERM and SIGHUP stop
        it: the first as Ctrl-C, the later ones ignored until close(), so the knobs' restore
        that the first starts runs to its end (c2tui/stop_signals.FirstStops)."""
        self.signals.install()
        if self._out is not None:  # opened now: a refusal before this leaves no file behind
            self.writer = _writer(*self._out)
            if self.engine is not None:
                self.engine.add_sink(self.writer.write)
            else:
                self.link.add_sink(self.writer.write)
        if self.engine is not None:
            self.engine.start()
        else:
            self.link.start()

    def close(self, discard: bool = False, reason: str = "experiment over") -> str | None:
        """Stop what this session started (an attached prover goes on); the recording's error, if
        any. discard: remove the recording (the command refused its input after all)."""
        if self._closed:
            return None
        self._closed = True
        self.signals.shielded = True  # a signal now only counts: the recording is closed whole
        if self.engine is not None and not self.engine.finished:
            self.engine.stop(timeout=30, reason=reason)
        if self.client is not None:
            self.client.close()
        error = None
        if self.writer is not None:
            self.writer.close()
            error = self.writer.error
            if discard:
                self.writer.path.unlink(missing_ok=True)
        self.signals.uninstall()
        return error

    @property
    def interrupted(self) -> bool:
        """A stop signal came (during the run, or while closing: then it only counts)."""
        return bool(self.signals.seen)

    def run_info(self) -> dict[str, Any]:
        """What ran, from the prover's RunStarted: every figure says what it is."""
        r = getattr(self.link, "run", None)
        if r is None:
            return {"attached": self.address}
        return {"backend": r.backend, "simulated": r.simulated, "profile": r.profile, "proved_log2": r.proved_log2,
                "modelled_log2": r.modelled_log2, "gpus": r.gpus, "time_scale": r.config.get("time_scale"),
                "workers_per_gpu": r.config.get("workers_per_gpu"), "vram_budget": r.config.get("vram_budget"),
                "sim_defaults": self.filled, "attached": self.address}


def finish(session: Session, failure: str | None, doc: dict[str, Any], as_json: bool, show: Callable[[], None]) -> None:
    """The results (JSON with what ran and whether it finished, or the tables), then the exit
    status: 3 not finished (why on stderr), 1 a proof or partition failed, else 0."""
    if as_json:
        doc = {**doc, "finished": failure is None, "error": failure}
        click.echo(json.dumps(doc, indent=2))
    else:
        show()
    if failure:
        click.echo(f"error: {failure}", err=True)
        sys.exit(RUN)
    f = session.failures
    if f.proofs or f.partitions:
        click.echo(f"FAILED: {f.proofs} proof(s) failed verification, {f.partitions} partition(s) failed", err=True)
        sys.exit(INVALID)


def _writer(out: Path, header: Any, force: bool) -> Any:
    from prover import RecordingError, RecordingWriter

    try:
        return RecordingWriter(out, header, force=force)
    except RecordingError as exc:
        fail(str(exc), RUN)


def run_line(info: dict[str, Any]) -> str:
    """One line naming what the figures are of."""
    if "backend" not in info:
        return f"attached to {info.get('attached')}"
    sim = "SIMULATED " if info["simulated"] else "native " if info["profile"] == "native" else "modelled "
    filled = f" (experiment defaults on sim: {', '.join(f'{k} {v}' for k, v in info['sim_defaults'].items())})" \
        if info.get("sim_defaults") else ""
    where = f", attached to {info['attached']}" if info.get("attached") else ""
    return (f"{sim}{info['backend']} {info['profile']}, proved 2^{info['proved_log2']}, modelled "
            f"2^{info['modelled_log2']}, time scale {info['time_scale']}{filled}{where}")
