"""The BFS kernels' compile-time alternatives compile (tests/test_kernels_compile.py covers
the defaults): the persistent kernel's ELL rows at every width and both index widths, with
and without the visited bitmap and the profile, a paged build, and direction.cu's
alternatives.
nvcc -ptx here stands in for NVRTC on the GPU machine; skipped where nvcc is absent."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from morphgpu import kernels

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

INT64 = {"MG_VID_T": "long long", "MG_EID_T": "long long"}
PERSISTENT = [
    {"MG_BFS_ELL_K": 4},
    {"MG_BFS_ELL_K": 16, "MG_BFS_LOCAL_BITMAP": 1, "MG_BARRIER_COOP": None},
    {"MG_BFS_ELL_K": 16, **INT64},
    {"MG_BFS_ELL_K": 8, "MG_BARRIER_COOP": None},
    {"MG_BFS_ELL_K": 4, "MG_BFS_LOCAL_CAP": 5632, "MG_BFS_PROFILE": None},
    {"MG_BFS_ELL_K": 8, **INT64},
    {"MG_BFS_IDLE_SLEEP_NS": 8192, **INT64},
    {"MG_BFS_ELL_K": 4, "MG_BFS_BLOCK": 512, "MG_BARRIER_COOP": None},
    {"MG_BFS_ELL_K": 8, "MG_BFS_LOCAL_BITMAP": 1, "MG_BARRIER_COOP": None},
    {"MG_BFS_ELL_K": 4, "MG_BFS_LOCAL_BITMAP": 1, **INT64},
    {"MG_BFS_ELL_K": 8, "MG_BFS_LOCAL_BITMAP": 1, "MG_BFS_PROFILE": None},
    {"MG_BFS_LOCAL_BITMAP": 1},  # no ELL rows: the bitmap is compiled out
    {"MG_BFS_PROFILE": None, "MG_PAGED": None, "MG_PAGE_SHIFT": 6},
]
DIRECTION = [{"MG_BFS_FLAT_HUBS": 512, "MG_BARRIER_COOP": None},
             {"MG_BFS_PROFILE": None, **INT64},
             {"MG_BARRIER_COOP": None, **INT64},
             {"MG_BFS_FLAT_HUBS": 2048}]
CASES = ([("bfs/kernels/persistent.cu", {"MG_BFS_BLOCK": 1024, **d}) for d in PERSISTENT]
         + [("bfs/kernels/direction.cu", {"MG_BFS_BLOCK": 512, **d}) for d in DIRECTION])


@pytest.mark.parametrize("path,defines", CASES, ids=[str(d) for _, d in CASES])
def test_bfs_alternative_compiles(path, defines, tmp_path):
    cmd = kernels.nvcc_command(path, tmp_path / "out.ptx", defines)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{path} failed with {defines}:\n{proc.stderr}"
