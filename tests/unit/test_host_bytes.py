"""What a worker holds on the host, counted honestly (prover/groth16/host_bytes.py): prep_msm's
splits measured on the family (the same bytes a variable at other sizes), the witness with its
classes, a/b/c only while the host builds them, prep's page-locked copy where the backend pins
it; and the start-up line names each part."""
from __future__ import annotations

import threading
import time

import pytest

from prover import events as ev
from prover.groth16 import host_bytes
from prover.groth16 import phases as P
from prover.groth16 import prep_nb
from prover.pipeline.keys.host_ram import HostRam, say_fit


@pytest.mark.parametrize("k", [12, 16])
def test_prep_bytes_a_variable_hold_at_other_sizes(k):
    circuit = P.make_circuit(k, 3)
    syn = P.synthesize(circuit, 9)
    parts = prep_nb.split_arrays(syn.density, syn.z, prep_nb.presence_from_circuit(circuit), circuit.num_inputs)
    real = sum(x.nbytes for split in parts for x in split)
    assert real == pytest.approx(host_bytes.prep_bytes_per_var() * circuit.num_vars, rel=0.06)
    assert host_bytes.STAND_IN_PREP_PER_VAR == pytest.approx(host_bytes.prep_bytes_per_var(), rel=0.02)


def test_a_workers_parts():
    n, k = 1000, 10
    w = host_bytes.worker_bytes(n, k)
    assert w["witness"] == 33 * n and w["abc"] == 96 << k
    assert w["prep"] == int(host_bytes.prep_bytes_per_var() * n)
    pinned = host_bytes.worker_bytes(n, k, pinned_prep=True)
    assert pinned["prep"] == int(2 * host_bytes.prep_bytes_per_var() * n)  # the splits and their page-locked copies
    gpu = host_bytes.worker_bytes(n, k, abc_on_host=False, field_vars=40)
    assert gpu["abc"] == 0 and w["zpack"] == 0  # a/b/c built on the GPU: z's upload form instead
    assert gpu["zpack"] == 12 * 32 + 32 * 40  # 1000 variables: 32 words of the table; 40 field values
    assert host_bytes.worker_bytes(n, k, 4.0)["abc"] == 4 * (96 << k)  # modelled: scaled


class Ledger:
    def __init__(self) -> None:
        self.events: list = []

    def __call__(self, cls, **fields):
        self.events.append(cls(t=0.0, **fields))


def test_the_start_up_line_says_what_a_worker_holds():
    led = Ledger()
    h = HostRam(led, time.monotonic, threading.Event(), lambda: 0)
    h.configure(host_bytes.worker_bytes(127_533_061, 27, pinned_prep=True), frozenset({"abc", "prep"}))
    say_fit(h, led, 4)
    text = [e for e in led.events if isinstance(e, ev.Note)][-1].text
    for part in ("witness 3.9 GiB (z + its classes)", "abc 12.0 GiB (a/b/c built on the host, page-locked)",
                 "prep 3.8 GiB (prep_msm's splits + their page-locked copies)"):
        assert part in text, text


def test_the_start_up_line_says_z_s_upload_form_where_the_gpu_makes_a_b_c():
    """abc gpu at 2^27 on CUDA: z and its classes stay on the host (pageable: prep_msm reads them),
    z's upload form is page-locked (the pre-stage's DMA), no a/b/c."""
    led = Ledger()
    h = HostRam(led, time.monotonic, threading.Event(), lambda: 0)
    sizes = host_bytes.worker_bytes(127_533_061, 27, pinned_prep=True, abc_on_host=False, field_vars=4_718_596)
    assert sizes["zpack"] == 47_824_908 + 150_995_072
    h.configure({k: v for k, v in sizes.items() if v}, frozenset({"zpack", "prep"}))
    say_fit(h, led, 4, abc="gpu")
    text = [e for e in led.events if isinstance(e, ev.Note)][-1].text
    for part in ("witness 3.9 GiB (z + its classes)",
                 "zpack 0.2 GiB (z's upload form: classes as bits, field values packed, page-locked)",
                 "prep 3.8 GiB (prep_msm's splits + their page-locked copies)", "a/b/c made on the GPU"):
        assert part in text, text
    assert "abc " not in text.split("; a/b/c")[0]
