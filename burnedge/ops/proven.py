"""What the ONNX node tests prove each backend runs: (op, backend) -> {dtype: passing tests}, from proven.tsv.

The file is written by `python -m tests.conformance.proven` from the conformance expectations (every node test a
backend passes, with the op and dtypes of each of its nodes) and checked against them by the test suite, so
`burnedge ops` shows what was measured, not what a backend claims.
"""

from __future__ import annotations

from pathlib import Path

PATH = Path(__file__).with_name("proven.tsv")


def load(path: Path = PATH) -> dict[tuple[str, str], dict[str, int]]:
    """{(op key, backend): {onnx dtype name: number of passing node tests with that op at that dtype}}."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            op, backend, dtype, tests = line.split("\t")
            out.setdefault((op, backend), {})[dtype] = int(tests)
    return out
