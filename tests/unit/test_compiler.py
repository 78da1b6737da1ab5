"""The compiler is the one place that runs passes and plans: it asks the backend for its passes and its kernels'
scratch, and hands the backend a Plan."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge import compiler
from burnedge.backends.base import Backend
from burnedge.backends.numpy import NumpyExecutable
from burnedge.errors import UnsupportedOpError

from .helpers import mlp, mlp_reference

ROOT = Path(burnedge.__file__).parent
# quantize/pipeline.py optimises the float graph it calibrates (its int8 rules see the fused nodes)
MAY_RUN_PASSES = {"compiler.py", "quantize/pipeline.py"}


class Recording(Backend):
    """A backend that asks for a pass, 96 bytes of scratch per node, and rejects Relu; it records what it sees."""

    name = "recording"
    pipeline = ("fuse_epilogue",)

    def __init__(self, reject: str = ""):
        self.reject, self.asked, self.plans = reject, [], []

    def supports(self, node, graph=None):
        return "no Relu here" if node.op_type == self.reject else None

    def scratch(self, graph, node):
        self.asked.append(node.op_type)
        return 96

    def compile(self, plan, threads=1):
        self.plans.append(plan)
        return NumpyExecutable(plan)


def test_compile_runs_the_backend_s_passes_and_plans_its_scratch():
    model = burnedge.load(mlp())
    b = Recording()
    compiled = compiler.compile(model, b)
    assert [n.op_type for n in compiled.plan.steps] == ["FusedMatMul"]  # fuse_epilogue ran: MatMul+Add+Relu
    assert b.asked == ["FusedMatMul"] and b.plans == [compiled.plan]
    assert compiled.plan.scratch[0][1] == 96 and compiled.plan.arena_bytes >= 96
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    np.testing.assert_allclose(compiled.executable.run({"x": x})["y"], mlp_reference(x, mlp()), rtol=1e-6)
    assert [n.op_type for n in model.graph.nodes] == ["MatMul", "Add", "Relu"]  # the model itself is untouched


def test_options_replace_the_backend_s_choices_and_unsupported_ops_fail_once():
    model = burnedge.load(mlp())
    plan = compiler.plan(model, Recording(), compiler.Options(pipeline=()))
    assert [n.op_type for n in plan.steps] == ["MatMul", "Add", "Relu"]
    with pytest.raises(UnsupportedOpError, match="on the recording backend: Relu .*'relu'"):
        compiler.plan(model, Recording(reject="Relu"), compiler.Options(pipeline=()))
    with pytest.raises(burnedge.BurnedgeError, match="threads must be a whole number >= 1"):
        compiler.compile(model, Recording(), compiler.Options(threads=0))


def test_the_numpy_reference_runs_the_graph_as_imported():
    sess = burnedge.Session(burnedge.load(mlp()), backend="numpy")
    assert [n.op_type for n in sess.plan.steps] == ["MatMul", "Add", "Relu"]


def test_nothing_but_the_compiler_runs_passes_or_the_planner():
    calls = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(("passes/", "plan/")):
            continue  # where they are defined
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
                if name == "make_plan" or (name == "optimize" and rel not in MAY_RUN_PASSES):
                    calls.append(f"{rel}:{node.lineno} {name}")
    assert [c for c in calls if not c.startswith("compiler.py")] == []
