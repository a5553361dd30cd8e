"""Every kernel file compiles, on a machine without a GPU, with the loader's own flags.

NVRTC is what runs on the GPU machine; nvcc -ptx with the same include path, defines and
language standard catches the same syntax and type errors here, so a kernel that does not
compile never costs GPU time. Skipped where nvcc is absent.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from morphgpu import kernels

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

FILES = kernels.kernel_files()

# Variants a file is also compiled in, beyond the defaults (index widths, barrier kind).
VARIANTS = [
    {},
    {"MG_VID_T": "long long", "MG_EID_T": "long long"},
    {"MG_BARRIER_COOP": None},
]


IDS = [str(p.relative_to(kernels.PACKAGE_DIR)) for p in FILES]


@pytest.mark.parametrize("variant", VARIANTS, ids=["default", "int64", "coop"])
@pytest.mark.parametrize("path", FILES, ids=IDS)
def test_kernel_compiles(path, variant, tmp_path):
    cmd = kernels.nvcc_command(path, tmp_path / "out.ptx", variant)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{path} failed to compile with {variant}:\n{proc.stderr}"


def test_there_are_kernels():
    assert FILES, "no .cu files found in the package"
