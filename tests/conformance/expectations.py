"""Reads and writes expectation files: one line per node test, `name<TAB>status<TAB>reason`.

status: `pass`; `fail` (burnedge lacks something: the reason says what); `impossible` (no static plan can hold
what the test needs: a sequence, a string on a numeric arena...; the reason is burnedge's StaticPlanError)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent
STATUSES = ("pass", "fail", "impossible")


def path_for(backend: str) -> Path:
    return HERE / f"expected_{backend}.tsv"


def read(backend: str) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    p = path_for(backend)
    if not p.exists():
        return out
    for line in p.read_text().splitlines():
        if line and not line.startswith("#"):
            name, status, reason = (line.split("\t") + ["", ""])[:3]
            out[name] = (status, reason)
    return out


def write(backend: str, results: dict[str, tuple[str, str]]) -> None:
    lines = [
        f"# ONNX node tests on the {backend} backend: name, status (pass|fail|impossible), reason. Regenerate with",
        f"#   python -m tests.conformance.update --backend {backend}",
    ]
    lines += [f"{n}\t{s}\t{r}".rstrip("\t") for n, (s, r) in sorted(results.items())]
    path_for(backend).write_text("\n".join(lines) + "\n")


_cache: dict[str, dict[str, tuple[str, str]]] = {}


def read_cached(backend: str) -> dict[str, tuple[str, str]]:
    if backend not in _cache:
        _cache[backend] = read(backend)
    return _cache[backend]
