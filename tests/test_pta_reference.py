"""The shared LSG programs against their reference solutions, and GPU against CPU.

perl, gcc, python and svn take 4 to 27 s each on the CPU path of a 2-core machine, so their
CPU variants run only with MORPHGPU_SLOW=1; the GPU variants run wherever a GPU is. php and
mplayer have no reference: the GPU solution must equal the CPU one (CPU needs ~15/45 GB RAM).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from morphgpu import pta

SLOW = os.environ.get("MORPHGPU_SLOW") == "1"
slow = pytest.mark.skipif(not SLOW, reason="slow CPU variant: set MORPHGPU_SLOW=1")
# The points-to facts of each reference solution, counted independently of our solver.
REFERENCE_FACTS = {"perl": 44896634, "gcc": 8202328, "python": 276148304, "svn": 217859777}


def _prefix(shared, name: str):
    return shared("data", "pta", f"{name}_nodes.txt.gz").with_name(name)


def _check_reference(shared, name: str, device: str) -> None:
    sol = pta.solve(pta.load(_prefix(shared, name)), device=device)
    ref = pta.read_solution(shared("data", "pta", f"{name}_correct_soln_001.txt.gz"))
    assert sol.differences(ref) == []
    assert sol.n_facts == REFERENCE_FACTS[name]


@pytest.mark.parametrize("name", ["ex", "gcc", "gdb", "mplayer", "perl", "php", "pine",
                                  "python", "svn"])
def test_every_shared_program_loads(shared, name):
    """Load only (the big ones take minutes to solve on the CPU), with no switches."""
    cs = pta.load(_prefix(shared, name))
    assert cs.n_constraints > 0 and cs.obj_size[cs.last_object + 1:].max() == 0


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(REFERENCE_FACTS))
def test_reference_gpu(shared, name):
    _check_reference(shared, name, "gpu")


@slow
@pytest.mark.parametrize("name", sorted(REFERENCE_FACTS))
def test_reference_cpu(shared, name):
    _check_reference(shared, name, "cpu")


@pytest.mark.gpu
@slow
@pytest.mark.parametrize("name", ["php", "mplayer"])
def test_gpu_equals_cpu_without_reference(shared, name):
    cs = pta.load(_prefix(shared, name))
    on_gpu = pta.solve(cs, device="gpu")
    on_cpu = pta.solve(cs, device="cpu")
    assert on_gpu.differences_from(on_cpu) == []
    assert np.array_equal(on_gpu.sizes(), on_cpu.sizes())
