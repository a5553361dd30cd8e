"""The command line: info works everywhere; bad arguments give clear errors."""

from __future__ import annotations

import argparse
import json

import pytest

from morphgpu import cli


def test_info_json(capsys):
    assert cli.main(["info", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["morphgpu"] and "gpu" in out and "numpy" in out


def test_no_command_prints_help(capsys):
    assert cli.main([]) == 2
    assert "usage" in capsys.readouterr().out


def test_commands_name_the_subcommands_each_wing_registers():
    for wing in cli.WINGS:
        mod = cli._wing_cli(wing)
        if mod is None:
            continue
        sub = argparse.ArgumentParser().add_subparsers()
        mod.register(sub)
        assert set(sub.choices) == {c for c, w in cli.COMMANDS.items() if w == wing}, wing


def test_a_command_line_needs_only_its_wing():
    assert cli.wings_needed(["sat", "f.cnf"]) == ("sp",)
    assert cli.wings_needed(["-v", "refine", "x.poly"]) == ("dmr",)
    for argv in ([], ["info"], ["demo"], ["-h", "sat"], ["--help"], ["--version"],
                 ["--verb", "sat"], ["nope"]):
        assert cli.wings_needed(argv) == cli.WINGS, argv


def test_top_level_help_still_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        cli.main(["-h", "sat"])
    out = capsys.readouterr().out
    for command in cli.COMMANDS:
        if cli._wing_cli(cli.COMMANDS[command]) is not None:
            assert command in out


def test_an_unknown_command_lists_every_command(capsys):
    with pytest.raises(SystemExit):
        cli.main(["nope"])
    assert "sat" in capsys.readouterr().err
