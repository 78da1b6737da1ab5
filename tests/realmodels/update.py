"""Measures the real models and rewrites expected.tsv; prints one line per model.

python -m tests.realmodels.update [--models a,b] [--dry]

Only the models named are measured; the others keep their rows. A float tolerance set by hand (`pass 1e-3`) is
kept while the model stays within it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import warnings
from pathlib import Path

from . import expectations
from .catalog import MODELS, chosen
from .measure import check_float, check_int8


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="", help="comma-separated names (default: all)")
    ap.add_argument("--dry", action="store_true", help="print the rows, leave expected.tsv alone")
    a = ap.parse_args()
    names = chosen(a.models)
    warnings.simplefilter("ignore")
    rows = expectations.read()
    for name in names:
        start = time.perf_counter()
        old = rows.get(name, expectations.Row(name))
        with tempfile.TemporaryDirectory() as tmp:
            f_status, f_note = expectations.float_row(check_float(MODELS[name], Path(tmp)), old.float)
            q_status, q_note = expectations.int8_row(check_int8(MODELS[name], Path(tmp)))
        rows[name] = expectations.Row(name, f_status, f_note, q_status, q_note)
        print(f"{rows[name].line()}\t({time.perf_counter() - start:.0f} s)", flush=True)
    if not a.dry:
        expectations.write(rows)


if __name__ == "__main__":
    main()
