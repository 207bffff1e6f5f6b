"""`c2tui attach --cuzk ADDR [--status-url URL]`: the dashboard on a cuzk daemon (Curio's, or
ours). A source like AttachSource: the poller (prover/cuzk/client.py) turns GetStatus and
/status into events, the one fold draws them, and with --record they are written as a
recording, so summary, replay and compare read what was watched. Read-only unless --steer:
then cancel (a row's c / x, or the a prompt) sends CancelProof and says whether the daemon acted.
"""
from __future__ import annotations

from typing import Any

from c2tui.sources.live import LiveSource


class CuzkController:
    """The one control a cuzk daemon has: cancel a job (a sector row here)."""

    def __init__(self, poller: Any) -> None:
        self.poller = poller

    def apply(self, spec: str, source: str = "key") -> bool:
        from prover import parse_target

        name, _, target = spec.partition("=")
        if name.strip().lower() != "cancel":
            raise ValueError(f"{spec!r}: a cuzk daemon takes no knob or job action but cancel")
        kind, key = parse_target("cancel", target)
        sector = key if kind == "sector" else int(str(key)[1:].split("p")[0])
        self.poller.cancel(sector, source)  # raises, in words, when the daemon did not act
        return True

    def __getattr__(self, name: str) -> Any:
        def refuse(*a: Any, **kw: Any) -> Any:
            raise ValueError(f"a cuzk daemon has no {name.removeprefix('set_')} control here: only cancel")
        return refuse


class CuzkSource(LiveSource):
    kind = "attach"

    def __init__(self, address: str, status_url: str | None = None, steer: bool = False, writer: Any = None,
                 token: str | None = None, name: str = "c2tui") -> None:
        from prover import CuzkPoller

        super().__init__(None, label=f"CUZK{'' if steer else ' READ-ONLY'} {address}"[:60])
        self.writer = writer
        self.poller = CuzkPoller(address, status_url, self._take, token=token, name=name)
        self._controller = CuzkController(self.poller) if steer else None

    @property
    def controller(self) -> Any:
        return self._controller

    @property
    def readonly(self) -> bool:
        return self._controller is None

    def _take(self, e: Any) -> None:
        if self.writer is not None:
            self.writer.write(e)
        self.sink(e)

    def connect(self) -> Any:
        return self.poller.first()

    def start(self) -> None:
        self.poller.start()
        super().start()

    def stop(self, timeout: float = 10.0) -> None:
        self.poller.close()
        super().stop(timeout)
        if self.writer is not None:
            self.writer.close()
