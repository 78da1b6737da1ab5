"""benchmarks/bench_table.py, run as the coordinator runs it (--quick, the MLP only): the table's shape, the raw
numbers in --json, and an efficiency against the measured machine limit that is a share of it, in (0, 1]."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("be_f32", "ort_f32", "be_int8", "ort_int8", "be_ort_qdq")


@pytest.mark.slow
def test_quick_table_on_the_mlp(tmp_path: Path) -> None:
    out = tmp_path / "table.json"
    cmd = [sys.executable, "benchmarks/bench_table.py", "--quick", "--models", "mlp", "--threads", "1", "2"]
    done = subprocess.run([*cmd, "--json", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Error" not in done.stderr, done.stderr[-2000:]  # every engine was built and ran

    lines = done.stdout.splitlines()
    table = [line for line in lines if line.startswith("|")]
    head = [c.strip() for c in table[0].strip("|").split("|")]
    assert head[:3] == ["model", "MMAC", "threads"] and "fp32 eff." in head and "int8 eff." in head
    assert set(table[1].replace("|", "")) <= set("-:"), table[1]
    body = [[c.strip() for c in line.strip("|").split("|")] for line in table[2:]]
    assert [r[0] for r in body] == ["mlp", "mlp", "geo-mean, 1 thread", "geo-mean, 2 threads"]
    assert all(len(r) == len(head) for r in body), body
    assert [r[2] for r in body] == ["1", "2", "1", "2"]
    preamble = "\n".join(lines[: lines.index(table[0])])
    assert "onnxruntime" in preamble and "median of 10" in preamble and "limit per core" in preamble
    for flag in ("avx2", "avx512f", "avx512_vnni", "avx_vnni"):
        assert f"{flag} yes" in preamble or f"{flag} no" in preamble, flag

    data = json.loads(out.read_text())
    meta, rows = data["meta"], data["rows"]
    assert meta["cpu_model"] and meta["threads"] == [1, 2] and meta["repeats"] == 10
    assert meta["limit_fp32_flops_per_core"] > 1e9 and meta["limit_int8_ops_per_core"] > 1e9
    assert [r["threads"] for r in rows] == [1, 2]
    for r in rows:
        assert r["macs"] > 0 and not r["errors"], r
        for engine in ENGINES:
            assert r[f"{engine}_ms"] > 0, (engine, r)
            assert 0 < r[f"{engine}_eff"] <= 1, (engine, r)
            limit = meta["limit_fp32_flops_per_core" if engine.endswith("f32") else "limit_int8_ops_per_core"]
            expect = 2 * r["macs"] / (r[f"{engine}_ms"] / 1e3) / (limit * r["threads"])
            assert r[f"{engine}_eff"] == pytest.approx(expect, rel=1e-9)
        assert r["fp32_ratio"] == pytest.approx(r["be_f32_ms"] / r["ort_f32_ms"])
        assert r["int8_ratio"] == pytest.approx(r["be_int8_ms"] / r["ort_int8_ms"])
