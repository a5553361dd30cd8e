"""Shared fixtures: the device parameter, GPU skipping, shared data, hypothesis profiles.

Tests that run on both sides take the ``device`` fixture: it yields "cpu" and "gpu"; the
GPU case carries the ``gpu`` marker (so ``pytest -m gpu`` selects it) and skips when no
usable GPU is present.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from morphgpu import backend
from morphgpu.testing import shared_path

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_collection_modifyitems(config, items):
    if backend.gpu_available():
        return
    skip = pytest.mark.skip(reason=f"no GPU: {backend.gpu_unavailable_reason()}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def device(request) -> str:
    return request.param


@pytest.fixture
def xp(device):
    """The array module of the device under test."""
    return backend.xp_for(device)


@pytest.fixture
def shared():
    """Return a function that finds a file under the shared data, or skips the test."""

    def find(*parts: str):
        p = shared_path(*parts)
        if p is None:
            pytest.skip(f"shared data {'/'.join(parts)} not found (../shared absent)")
        return p

    return find
