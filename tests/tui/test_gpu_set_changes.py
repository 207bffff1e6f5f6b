"""The dashboard survives any change of its GPU and host set (issue 35): a host joining or
leaving, a GPU first seen late, in one frame and across frames, live and in replay. Before,
the app removed the old panels (Textual removes later) and mounted new ones under the same
ids at once: `DuplicateIds: 'gpu0'`, about 1 s into `c2tui run --cluster local:2`. Every
panel's empty state is drawn too (History of a GPU with no points: `max(budget, *())`)."""
from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import sys
from pathlib import Path

import pytest

from tests.helpers.fleet_synth import fleet_start, fleet_stream
from tests.helpers.pty_run import run_in_pty

from c2tui.dashboard.app import DashboardApp
from c2tui.sources.replay import ReplaySource
from c2tui.widgets.gpu_panel import GpuPanel
from c2tui.widgets.history_view import render_history
from prover import events as ev
from prover.fold.apply import fold

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


class _Pal(dict):
    def __missing__(self, key: str) -> str:
        return key


def _states():
    """One host, then two (a host joins), then the first alone (the second left), then none."""
    one = fold(fleet_stream(1, 3.0, gpus=2, distinct=1)).view()
    two = fold(fleet_stream(2, 3.0, gpus=2, distinct=1)).view()
    back = fold([e for e in fleet_stream(2, 3.0, gpus=2, distinct=1)
                 if getattr(e, "host", "h0") != "h1"]).view()
    empty = fold(fleet_start(0)).view()
    return [one, two, back, two, empty, one]


def _panels(app) -> list[int]:
    return [p.gpu for p in app.query(GpuPanel) if not p._closing and not p._closed]


def _drive(pause_between: bool) -> list[list[int]]:
    states = _states()

    async def go() -> list[list[int]]:
        app = DashboardApp(ReplaySource([], playing=False), fps=0.2)
        seen = []
        async with app.run_test(size=(160, 50)) as pilot:
            for st in states:
                app.draw(st)
                if pause_between:
                    await pilot.pause()
                    seen.append(_panels(app))
            for _ in range(3):
                await pilot.pause()
            seen.append(_panels(app))
        assert app.return_code in (0, None), "the app crashed"
        return seen

    return asyncio.run(go())


def test_gpu_set_changes_across_frames():
    seen = _drive(pause_between=True)
    assert seen[:5] == [[0, 1], [0, 1, 2, 3], [0, 1], [0, 1, 2, 3], []]
    assert seen[-1] == [0, 1]


def test_gpu_set_changes_in_one_frame():
    assert _drive(pause_between=False)[-1] == [0, 1]


def test_a_gpu_first_seen_late_in_replay():
    """A gpu_info for a GPU first seen after the first frame, in a replay played through."""
    evs = fleet_stream(1, 2.0, gpus=1, distinct=1)
    late = [ev.GpuInfo(t=2.0, gpu=1, name="late GPU", total_bytes=16 << 30, budget_bytes=16 << 30, simulated=True),
            ev.VramSample(t=2.1, gpu=1, pool_reserved=0, pool_used=0, budget=16 << 30)]
    src = ReplaySource(evs + late, playing=False)

    async def go():
        app = DashboardApp(src, fps=20)
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            app.action_seek_end()
            for _ in range(4):
                await pilot.pause()
            return app.return_code, _panels(app)

    code, panels = asyncio.run(go())
    assert code in (0, None) and panels == [0, 1]


def test_history_draws_a_gpu_with_no_points():
    """One vram_sample for a GPU the history has no points of: drawn, not a TypeError."""
    evs = fleet_stream(1, 5.0, gpus=1, distinct=1)
    st = fold(evs + [ev.VramSample(t=5.0, gpu=7, pool_reserved=0, pool_used=0, budget=1 << 30)])
    lines = [ln.plain for ln in render_history(st, _Pal(), 100, 30)]
    assert any(ln.startswith("g7 VRAM") for ln in lines)


def _proved_on_both(rec: Path, each: int = 2) -> bool:
    """Both hosts joined and each has finished `each` partitions (ok) after the second joined (whole
    lines of the recording as it is flushed)."""
    import json

    if not rec.exists():
        return False
    joined: set[str] = set()
    done: dict[str, int] = {}
    for line in rec.read_text(errors="replace").splitlines():
        if '"host_joined"' not in line and '"partition_done"' not in line:
            continue
        try:
            e = json.loads(line)
        except ValueError:  # the line being written
            continue
        if e.get("kind") == "host_joined":
            joined.add(e.get("host"))
        elif len(joined) == 2 and e.get("ok"):
            done[e.get("host")] = done.get(e.get("host"), 0) + 1
    return joined == {"h0", "h1"} and all(done.get(h, 0) >= each for h in joined)


@pytest.mark.slow
@pytest.mark.timeout(400)
@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray (the fleet extra) not installed")
@pytest.mark.usefixtures("warm_numba_cache")
def test_the_readme_fleet_dashboard_proves_on_both_hosts(tmp_path):
    """`c2tui run --cluster local:2 --backend sim`, the README's fleet dashboard, in a real
    terminal: both hosts join (the GPU set changes under the app) and each proves partitions
    under it, no traceback, and Ctrl-C exits 3. Before: DuplicateIds about 1 s after the hosts
    joined, and exit 0. Ctrl-C goes once the recording shows both hosts' proofs (it was sent at
    a fixed 60 s: a minute of CI whatever the hosts took)."""
    # numba's cache is the suite's own (beside the sources, or NUMBA_CACHE_DIR when set): a cache of
    # its own made both Ray hosts compile every host kernel again, ~40 s of CI's two cores
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "HOME": str(tmp_path)}
    rec = tmp_path / "fleet.jsonl"
    r = run_in_pty([sys.executable, "-m", "c2tui", "run", "--cluster", "local:2", "--backend", "sim", "--record", str(rec)],
                   [(lambda: _proved_on_both(rec), b"\x03")], deadline=300.0, env=env)
    text = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", r.output).decode(errors="replace")
    assert "Traceback" not in text and "DuplicateIds" not in text, text[-4000:]
    assert r.code == 3, (r.code, text[-2000:])
    # both hosts joined (the GPU set changed under the app): read from the session's recording, as
    # the screen's diff updates need not write "host h1 joined" in one piece
    from prover import read_recording

    joined = {e.host for e in read_recording(rec).events if e.kind == "host_joined"}
    assert joined == {"h0", "h1"}, joined


@pytest.mark.parametrize("tail", [
    [],  # the run started, nothing else
    ['{"kind":"vram_sample","t":0.2,"gpu":0,"budget":17179869184,"pool_reserved":0,"pool_used":0}'],  # the 1.4 KB one
    ['{"kind":"worker_started","t":0.2,"gpu":0,"worker":"g0w0"}'],  # a GPU known only by its worker (one the run has)
    ['{"kind":"host_joined","t":0.2,"host":"h0","node":"n","gpus":2,"gpu_offset":0}'],
])
def test_every_panels_empty_state_is_drawn(tmp_path, tail):
    """A screenshot of a recording that has (almost) nothing: every panel draws its empty state."""
    from click.testing import CliRunner

    from c2tui.commands import main

    head = ['{"kind":"c2tui-recording","schema_version":3}',
            '{"kind":"run_started","t":0,"backend":"sim","simulated":true,"profile":"p","proved_log2":8,'
            '"modelled_log2":27,"gpus":' + ("0" if "host_joined" in "".join(tail) else "1") + "}"]
    rec = tmp_path / "tiny.jsonl"
    rec.write_text("\n".join(head + tail) + "\n")
    for size in ("80x24", "220x60"):
        r = CliRunner().invoke(main, ["screenshot", str(rec), "--at", "0.2" if tail else "0", "--size", size, "-o", str(tmp_path / "s.svg"),
                                      "--force"])
        assert r.exit_code == 0 and r.exception is None or isinstance(r.exception, SystemExit), (r.output, r.exc_info)
        assert r.exit_code == 0, r.output
