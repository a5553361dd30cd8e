"""Every kernel file compiles, on a machine without a GPU, with the loader's own flags.

NVRTC is what runs on the GPU machine; nvcc -ptx with the same include path, defines and
language standard catches the same syntax and type errors here, so a kernel that does not
compile never costs GPU time. Skipped where nvcc is absent.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from morphgpu import kernels

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

FILES = kernels.kernel_files()
IDS = [str(p.relative_to(kernels.PACKAGE_DIR)) for p in FILES]
_INCLUDE = re.compile(r'#\s*include\s*[<"](morphgpu/[^>"]+)[>"]')


def _includes(path: Path, seen: set[Path] | None = None) -> set[Path]:
    """The package headers a file pulls in, transitively."""
    seen = set() if seen is None else seen
    for rel in _INCLUDE.findall(path.read_text()):
        header = kernels.INCLUDE_DIR / rel
        if header.exists() and header not in seen:
            seen.add(header)
            _includes(header, seen)
    return seen


def _variants(path: Path) -> list[tuple[str, dict]]:
    """Default and 64-bit index widths everywhere; the cooperative barrier where it is used."""
    out = [("default", {}), ("int64", {"MG_VID_T": "long long", "MG_EID_T": "long long"})]
    if any(h.name == "barrier.cuh" for h in _includes(path)):
        out.append(("coop", {"MG_BARRIER_COOP": None}))
    if "MG_ADJ_PARAMS" in path.read_text():  # kernels over either adjacency layout
        out.append(("paged", {"MG_PAGED": None, "MG_PAGE_SHIFT": 4, "MG_EID_T": "long long"}))
        out.append(("paged32", {"MG_PAGED": None, "MG_PAGE_SHIFT": 5, "MG_EID_T": "int"}))
    if "MST_KEY_KIND" in path.read_text():  # every weight kind boruvka.cu reads
        out += [
            ("mst-int32", {"MST_KEY_KIND": 1, "MST_WEIGHT_T": "int"}),
            ("mst-float32", {"MST_KEY_KIND": 2, "MST_WEIGHT_T": "float", "MST_WEIGHT_FLOAT": 1}),
            ("mst-float64", {"MST_KEY_KIND": 3, "MST_WEIGHT_T": "double", "MST_WEIGHT_FLOAT": 1}),
            ("mst-int64", {"MST_KEY_KIND": 4, "MST_WEIGHT_T": "long long"}),
            # scripts/mst_profile.py's builds: phase stamps, another pass plan
            ("mst-profile", {"MST_KEY_KIND": 1, "MST_WEIGHT_T": "int", "MST_PROFILE": None,
                             "MST_FIRST_PASS_HALVES": 8, "MST_MAX_PASSES": 2}),
            ("mst-profile-static", {"MST_KEY_KIND": 3, "MST_WEIGHT_T": "double",
                                    "MST_WEIGHT_FLOAT": 1, "MST_PROFILE": None,
                                    "MST_LIVE_SPLIT_SHARE": 0, "MST_SMALL_ROW": 8}),
        ]
    # the exact builds a wing can request (its fixed list, issue 19), beside the above
    for rel, requests in _REQUESTS.items():
        if path == kernels.resolve(rel):
            for name, defines in requests():
                if defines not in [d for _, d in out]:
                    out.append((name, defines))
    return out


def _dmr_requests() -> list[tuple[str, dict]]:
    from morphgpu import barrier  # noqa: PLC0415
    from morphgpu.dmr import gpu  # noqa: PLC0415

    out = []
    for mode in barrier.BARRIER_MODES:
        for _, kernel, defines in gpu.kernel_requests(mode):
            extra = barrier.mode_defines(mode) if kernel == "refine_tail" else {}
            out.append((f"cavity{defines['MAX_CAVITY']}-{kernel}-{mode}", {**defines, **extra}))
    return out


def _sp_walk_requests() -> list[tuple[str, dict]]:
    """The local search as sp/gpu.py builds it: a fixed clause width (its loops unroll)."""
    from morphgpu.sp import gpu  # noqa: PLC0415

    base = {"LS_BLOCK": gpu.LS_BLOCK, "LS_GROUP": gpu.LS_GROUP, "MG_BARRIER_COOP": None}
    return [(f"width{w}", {**base, "LS_WIDTH": w}) for w in (3, gpu.FIXED_WIDTH_MAX)]


def _sp_survey_requests() -> list[tuple[str, dict]]:
    """The sweeps as sp/gpu.py builds them: a fixed clause width, 32-bit slot codes."""
    from morphgpu.sp import gpu  # noqa: PLC0415

    return [(f"width{w}", {"SP_WIDTH": w, "SP_CODE_T": "int"})
            for w in (3, gpu.FIXED_WIDTH_MAX)]


def _bfs_tiled_requests() -> list[tuple[str, dict]]:
    """Both local-level forms bfs/gpu/tiled.py picks (edges per lane and pass)."""
    from morphgpu.bfs.gpu import tiled  # noqa: PLC0415

    return [(f"eb{tiled.edges_per_pass(mean)}",
             {"MG_TILED_BLOCK": tiled.BLOCK, "MG_TILED_EB": tiled.edges_per_pass(mean),
              "MG_BARRIER_COOP": None}) for mean in (2.0, 6.0)]


_REQUESTS = {"dmr/kernels/dmr.cu": _dmr_requests, "sp/kernels/walk.cu": _sp_walk_requests,
             "sp/kernels/survey.cu": _sp_survey_requests,
             "bfs/kernels/tiled.cu": _bfs_tiled_requests}


CASES = [
    pytest.param(path, variant, id=f"{rel}-{name}")
    for path, rel in zip(FILES, IDS)
    for name, variant in _variants(path)
]


@pytest.mark.parametrize("path,variant", CASES)
def test_kernel_compiles(path, variant, tmp_path):
    cmd = kernels.nvcc_command(path, tmp_path / "out.ptx", variant)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{path} failed to compile with {variant}:\n{proc.stderr}"


def test_there_are_kernels():
    assert FILES, "no .cu files found in the package"
