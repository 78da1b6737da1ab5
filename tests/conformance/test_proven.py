"""`burnedge ops` shows what the node tests prove: burnedge/ops/proven.tsv is exactly what the expectations say."""

from __future__ import annotations

import json

from burnedge.cli import main
from burnedge.ops.proven import PATH

from . import expectations, proven
from .node_data import node_test_root


def test_proven_file_is_up_to_date():
    assert PATH.read_text() == proven.compute(), "run: python -m tests.conformance.proven"


def test_a_test_proves_only_where_it_passes(capsys):
    """StringConcat passes on numpy and is impossible on C (strings in an arena): only numpy gets its dtypes."""
    assert expectations.read("c")["test_string_concat"][0] == "impossible"
    assert expectations.read("numpy")["test_string_concat"][0] == "pass"
    assert ("StringConcat", "string") in proven.op_dtypes(node_test_root() / "test_string_concat")
    assert main(["ops", "--op", "StringConcat", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert "c" not in row["proven"] and row["proven"]["numpy"]["string"] >= 1
