"""`privtab budget` and `--budget PATH`: one budget file shared by every run."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import privtab as pt
from privtab.cli import main

RELEASING = ["select", "histogram", "mask", "distances"]


@pytest.fixture
def table_csv(tmp_path):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {
            "income": rng.uniform(1000, 90_000, 200).round(2),
            "tax": rng.uniform(0, 9000, 200).round(2),
        }
    )
    path = tmp_path / "in.csv"
    frame.to_csv(path, index=False)
    return path


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def mask(table_csv, tmp_path, budget, epsilon):
    return run(
        "mask",
        table_csv,
        "-o",
        tmp_path / "out.csv",
        "--force",
        "--k",
        5,
        "--epsilon",
        epsilon,
        "--bounds",
        "income=0:100000",
        "--bounds",
        "tax=0:10000",
        "--budget",
        budget,
    )


def test_init_creates_a_private_budget_file(tmp_path):
    path = tmp_path / "adult.budget"
    result = run("budget", "init", path, "--epsilon", 2.0)
    assert result.exit_code == 0, result.output
    assert "budget of ε = 2" in result.output
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert pt.BudgetAccountant.open(path).epsilon == 2.0
    again = run("budget", "init", path, "--epsilon", 3.0)
    assert again.exit_code != 0
    assert "exists already" in again.output
    assert pt.BudgetAccountant.open(path).epsilon == 2.0


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--epsilon", "0"], "must be finite and > 0, got 0.0"),
        (["--epsilon", "inf"], "must be finite and > 0, got inf"),
        ([], "Missing option '--epsilon'"),
        (["--epsilon", "1", "--delta", "2"], "2.0 is not in the range"),
    ],
)
def test_init_validation(tmp_path, args, match):
    result = run("budget", "init", tmp_path / "b.budget", *args)
    assert result.exit_code == 2
    assert match in result.output
    assert not (tmp_path / "b.budget").exists()


def test_runs_share_the_budget_file_and_stop_when_it_is_spent(table_csv, tmp_path):
    budget = tmp_path / "data.budget"
    assert run("budget", "init", budget, "--epsilon", 1.5).exit_code == 0
    first = mask(table_csv, tmp_path, budget, 1.0)
    assert first.exit_code == 0, first.output
    assert "spent ε = 1 of 1.5, 0.5 left" in first.output
    second = mask(table_csv, tmp_path, budget, 1.0)
    assert second.exit_code == 1
    assert "privacy budget exceeded" in second.output
    third = mask(table_csv, tmp_path, budget, 0.5)
    assert third.exit_code == 0, third.output
    acc = pt.BudgetAccountant.open(budget)
    assert acc.spent == 1.5
    assert [e.epsilon for e in acc.ledger] == [1.0, 0.5]
    shown = run("budget", "show", budget)
    assert shown.exit_code == 0, shown.output
    assert shown.output.count("MicroaggregationMasker") == 2
    assert "spent ε = 1.5 of 1.5; remaining 0" in shown.output
    as_json = json.loads(run("budget", "show", budget, "--json").output)
    assert as_json == acc.to_dict()


def test_a_missing_budget_file_stops_before_the_release(table_csv, tmp_path):
    result = mask(table_csv, tmp_path, tmp_path / "none.budget", 1.0)
    assert result.exit_code == 2
    assert "no budget file" in result.output
    assert "privtab budget init" in result.output
    assert not (tmp_path / "out.csv").exists()
    assert not (tmp_path / "none.budget").exists()
    shown = run("budget", "show", tmp_path / "none.budget")
    assert shown.exit_code == 2
    assert "no budget file" in shown.output


@pytest.mark.parametrize("command", RELEASING)
def test_every_releasing_command_takes_a_budget_file(command):
    result = run(command, "--help")
    assert result.exit_code == 0
    # select's own --budget (per_refit | total) keeps its name.
    option = "--budget PATH"
    assert option in result.output
    assert result.output.count("Charge the release to the budget") == 1


@pytest.mark.parametrize("command", ["demo", "kac"])
def test_commands_that_spend_no_budget_of_the_data_take_none(command):
    assert "Charge the release" not in run(command, "--help").output
