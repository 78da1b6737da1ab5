"""expected.tsv: what each real model is expected to do, and the verdict on what it did.

One line per model: `model<TAB>float<TAB>float note<TAB>int8<TAB>int8 note`, where
- float is `pass TOL` (max relative error to onnxruntime at most TOL) or `fail` (the note says why);
- int8 is `cosine>=BOUND` (held-out cosine to float at least BOUND), `refused CLASS` (the export raised that
  `burnedge.BurnedgeError` subclass, e.g. the quantizer refusing a result below its target) or `fail`.
Notes hold the measured numbers and messages for people; verdicts read only the status columns. A regression (a
larger error, a lower cosine, a new refusal or crash) fails; so does an improvement (a failing float that passes,
a cosine above its bound by more than IMPROVED, a refusal that became a cosine): the file is then regenerated with
`python -m tests.realmodels.update`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from .measure import Outcome

PATH = Path(__file__).with_name("expected.tsv")
FLOAT_TOLERANCE = 1e-4  # the contract's bound for the C backend against onnxruntime
MARGIN = 0.001  # a recorded cosine bound sits this far below the measured value (float noise across CPUs)
IMPROVED = 0.005  # a cosine this far above its bound asks for the file to be regenerated
UPDATE = "python -m tests.realmodels.update"


@dataclass
class Row:
    model: str
    float: str = "fail"
    float_note: str = ""
    int8: str = "fail"
    int8_note: str = ""

    def line(self) -> str:
        return "\t".join((self.model, self.float, self.float_note, self.int8, self.int8_note)).rstrip("\t")


def read(path: Path = PATH) -> dict[str, Row]:
    rows = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line and not line.startswith("#"):
                fields = (line.split("\t") + [""] * 5)[:5]
                rows[fields[0]] = Row(*fields)
    return rows


def write(rows: dict[str, Row], path: Path = PATH) -> None:
    head = [
        "# Real models (tests/realmodels): float on the C backend vs onnxruntime, int8 with default options vs float",
        "# on held-out real inputs. Columns: model, float (pass TOL | fail), note, int8 (cosine>=BOUND | refused",
        f"# CLASS | fail), note. Regenerate with: {UPDATE} [--models a,b]",
    ]
    path.write_text("\n".join(head + [rows[m].line() for m in sorted(rows)]) + "\n")


# -- rows from outcomes (update.py) ----------------------------------------------------------------------------------
def float_row(out: Outcome, old: str = "") -> tuple[str, str]:
    """A float status and note for `out`; a hand-set tolerance in `old` (`pass 1e-3`) is kept while it holds."""
    if out.kind != "measured":
        return "fail", out.reason
    note = f"max rel err {out.value:.2g} ({out.worst})"
    tol = max(FLOAT_TOLERANCE, _tolerance(old) or 0.0)
    return (f"pass {tol:g}", note) if out.value <= tol else ("fail", f"{note} above {tol:g}")


def int8_row(out: Outcome) -> tuple[str, str]:
    if out.kind == "measured":
        bound = math.floor((out.value - MARGIN) * 1e4) / 1e4
        return f"cosine>={bound:.4f}", f"cosine {out.value:.5f} ({out.worst})"
    if out.kind == "refused":
        return f"refused {out.reason.split(':')[0]}", out.reason
    return "fail", out.reason


def _tolerance(status: str) -> float | None:
    parts = status.split()
    return float(parts[1]) if len(parts) == 2 and parts[0] == "pass" else None


# -- verdicts (the tests) ----------------------------------------------------------------------------------------------
@dataclass
class Verdict:
    """ok: as expected; expected_failure: a recorded failure or refusal happened again; drift: anything else."""

    kind: str
    message: str


def judge_float(row: Row, out: Outcome) -> Verdict:
    tol = _tolerance(row.float)
    measured = out.kind == "measured"
    if tol is not None:
        if measured and out.value <= tol:
            return Verdict("ok", f"max rel err {out.value:.2g} <= {tol:g}")
        got = f"max rel err {out.value:.2g} ({out.worst})" if measured else out.reason
        return Verdict("drift", f"expected float within {tol:g} of onnxruntime, now: {got}")
    if measured and out.value <= FLOAT_TOLERANCE:
        return Verdict("drift", f"expected to fail ({row.float_note}) but passes ({out.value:.2g}): run {UPDATE}")
    return Verdict("expected_failure", row.float_note or out.reason)


def judge_int8(row: Row, out: Outcome) -> Verdict:
    now = f"cosine {out.value:.5f} ({out.worst})" if out.kind == "measured" else f"{out.kind}: {out.reason}"
    if row.int8.startswith("cosine>="):
        bound = float(row.int8.split(">=")[1])
        if out.kind != "measured" or out.value < bound:
            return Verdict("drift", f"expected int8 cosine >= {bound:.4f}, now {now}")
        if out.value > bound + MARGIN + IMPROVED:
            return Verdict("drift", f"int8 improved to {out.value:.5f} (bound {bound:.4f}): run {UPDATE}")
        return Verdict("ok", now)
    if row.int8.startswith("refused "):
        wanted = row.int8.split()[1]
        if out.kind == "refused" and out.reason.split(":")[0] == wanted:
            return Verdict("expected_failure", f"refused as expected: {out.reason}")
        return Verdict("drift", f"expected a refusal ({wanted}), now {now}: run {UPDATE} if that is progress")
    if out.kind == "fail":
        return Verdict("expected_failure", row.int8_note or out.reason)
    return Verdict("drift", f"expected int8 to fail ({row.int8_note}), now {now}: run {UPDATE}")
