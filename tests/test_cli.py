"""The command line: info works everywhere; bad arguments give clear errors."""

from __future__ import annotations

import json

from morphgpu import cli


def test_info_json(capsys):
    assert cli.main(["info", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["morphgpu"] and "gpu" in out and "numpy" in out


def test_no_command_prints_help(capsys):
    assert cli.main([]) == 2
    assert "usage" in capsys.readouterr().out
