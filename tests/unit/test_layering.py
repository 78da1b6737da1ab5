"""The floor plan, checked: import layers, no import circle, the C backend named only by itself, short files.

Reads the source with `ast` and regular expressions (nothing is imported), so it runs in well under a second:
1. every module of `burnedge/` has a rank in LAYERS; an import goes to a lower rank or stays in its own group;
2. no circle among module-level imports (TYPE_CHECKING blocks excepted: they never run);
3. no `burnedge` import inside a function outside `burnedge/cli*.py` (lazy imports hide circles and upward arrows);
4. nothing outside `burnedge/backends/c/` names the C backend (it is reached through the backend registry);
5. no Python file over MAX_LINES; no C kernel file that uses two instruction sets.
"""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "burnedge"
C_BACKEND = PACKAGE / "backends" / "c"
KERNELS = C_BACKEND / "kernels"
MAX_LINES = 400

# The pipeline as ranks, lowest first (DESIGN.md, "The pipeline, as data flows"). A key is a module or package and
# everything under it ("cli*": cli.py and cli_*.py; "burnedge": only burnedge/__init__.py, the public API). A module
# may import a lower rank or its own group; two groups of one rank are peers and neither imports the other.
LAYERS: dict[str, int] = {
    "burnedge.errors": 0,  # the exception types: imports nothing of burnedge
    "burnedge.version": 0,  # __version__, in one place (bundles record it)
    "burnedge.dtypes": 1,  # helpers every stage may use
    "burnedge.files": 1,
    "burnedge.limits": 1,  # the one table of limits on what an input may ask (nodes, bytes, trips)
    "burnedge.host": 1,  # the one module that probes this machine
    "burnedge.feeds": 1,  # the one feed check and the one output comparison
    "burnedge.ir": 2,
    "burnedge.ops": 3,
    "burnedge.model": 4,  # Model = Graph + its inputs and outputs, what importers and nn return
    "burnedge.importers": 5,
    "burnedge.passes": 5,
    "burnedge.analysis": 5,
    "burnedge.quantize": 6,
    "burnedge.nn": 6,  # modules named as PyTorch names them, traced to a Model with the importer's infer_and_fold
    "burnedge.zoo": 7,  # architectures in burnedge.nn with their upstream checkpoints; burnedge.load dispatches here
    "burnedge.plan": 7,
    "burnedge.bundle": 8,  # the bundle format: reads and writes files, compiles and loads nothing
    "burnedge.targets": 8,
    "burnedge.backends": 9,
    "burnedge.compiler": 10,
    "burnedge.exporter": 11,
    "burnedge.session": 11,
    "burnedge.verifier": 11,  # verify: a bundle against its own test vectors
    "burnedge.emulate": 11,
    "burnedge.firmware": 11,
    "burnedge.timeline": 12,
    "burnedge.examples": 12,
    "burnedge.cli*": 13,
    "burnedge.__main__": 14,
    "burnedge": 14,
}

# x86 and ARM names a C file may use (comments are stripped first). isa.h tests both families' compiler macros, once.
X86 = re.compile(
    r"\w*mmintrin\.h|\b__AVX\w*|\b__SSE\w*|\b__FMA__|\b__F16C__|\b__x86_64__|\b__m(?:128|256|512)\w*"
    r"|\b_mm(?:256|512)?_\w+"
)
ARM = re.compile(
    r"arm_neon\.h|arm_acle\.h|\b__ARM_NEON\w*|\b__ARM_FEATURE_\w+|\b__aarch64__"
    r"|\b(?:u?int|float|poly)(?:8|16|32|64)x\d+(?:x\d+)?_t\b|\bv(?:ld|st)\d+q?_\w+|\bv(?:dot|mmla)q?_\w+"
    r"|\bv[a-z]+q_[suf](?:8|16|32|64)\b"
)
COMPILER_MACROS = re.compile(r"\w+\.h|__\w+__|__[A-Z][A-Z0-9_]*")  # what isa.h may name from both families
C_COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
NAMES_C_BACKEND = re.compile(r"backends[./]c\b")


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the burnedge module it names (a name from a package counts as its __init__)
    line: int
    in_function: bool
    type_checking: bool

    def where(self) -> str:
        return f"{modules()[self.source].relative_to(ROOT)}:{self.line}"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def group(module: str) -> str | None:
    """The LAYERS key a module belongs to (the most specific), or None."""
    keys = [
        k
        for k in LAYERS
        if module == k
        or (k != "burnedge" and module.startswith(k + "."))
        or (k.endswith("*") and (fnmatch.fnmatchcase(module, k) or fnmatch.fnmatchcase(module, k + ".*")))
    ]
    return max(keys, key=len) if keys else None


def _canonical(name: str) -> str:
    """The nearest existing module: `burnedge.ops.conv._geo` -> `burnedge.ops.conv`."""
    while name not in modules() and "." in name:
        name = name.rpartition(".")[0]
    return name


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Collector(ast.NodeVisitor):
    def __init__(self, module: str, path: Path) -> None:
        self.module, self.found = module, []
        self.package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        self.functions = self.type_checking = 0

    def visit_FunctionDef(self, node: ast.AST) -> None:
        self.functions += 1
        self.generic_visit(node)
        self.functions -= 1

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def visit_If(self, node: ast.If) -> None:
        if not _is_type_checking(node.test):
            return self.generic_visit(node)
        self.type_checking += 1
        for stmt in node.body:
            self.visit(stmt)
        self.type_checking -= 1
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self.package.split(".")[: len(self.package.split(".")) - (node.level - 1)]
            base = ".".join(base + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        for alias in node.names:  # `from . import conv` names a module; `from . import Ctx` the package
            sub = f"{base}.{alias.name}"
            self._add(sub if sub in modules() else base, node)

    def _add(self, name: str, node: ast.stmt) -> None:
        if name == "burnedge" or name.startswith("burnedge."):
            target = _canonical(name)
            if target != self.module:
                self.found.append(Import(self.module, target, node.lineno, self.functions > 0, self.type_checking > 0))


@functools.cache
def imports() -> tuple[Import, ...]:
    found: list[Import] = []
    for module, path in modules().items():
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except SyntaxError as exc:
            pytest.fail(f"{path.relative_to(ROOT)}: {exc}")
        collector = _Collector(module, path)
        collector.visit(tree)
        found += collector.found
    return tuple(dict.fromkeys(found))


def _report(title: str, problems: list[str]) -> str:
    return f"{title} ({len(problems)}):\n  " + "\n  ".join(problems)


def test_every_module_has_a_layer():
    unknown = [f"{m} ({p.relative_to(ROOT)})" for m, p in modules().items() if group(m) is None]
    assert not unknown, _report("modules without a rank: add them to LAYERS in tests/unit/test_layering.py", unknown)


def test_no_import_goes_up_a_layer():
    problems = []
    for imp in imports():
        src, dst = group(imp.source), group(imp.target)
        if src is None or dst is None or src == dst:
            continue
        if LAYERS[dst] > LAYERS[src]:
            kind = "upward"
        elif LAYERS[dst] == LAYERS[src]:
            kind = "between peers"
        else:
            continue
        context = " (in a function)" if imp.in_function else " (TYPE_CHECKING)" if imp.type_checking else ""
        problems.append(
            f"{imp.where()}: {imp.source} [{src}, rank {LAYERS[src]}] imports {imp.target} "
            f"[{dst}, rank {LAYERS[dst]}]: {kind}{context}"
        )
    assert not problems, _report("imports against the layers (LAYERS in tests/unit/test_layering.py)", problems)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """One circle per strongly connected component (Tarjan), each as a path that returns to its start."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    circles = []
    for component in components:  # the shortest way back to the component's first module
        start, members = component[0], set(component)
        paths, seen = [[start]], {start}
        while paths:
            path = paths.pop(0)
            nxt = sorted(edges.get(path[-1], set()) & members)
            if start in nxt:
                circles.append([*path, start])
                break
            for w in nxt:
                if w not in seen:
                    seen.add(w)
                    paths.append([*path, w])
    return circles


def test_no_import_circle():
    edges: dict[str, set[str]] = {}
    lines: dict[tuple[str, str], str] = {}
    for imp in imports():
        if not imp.in_function and not imp.type_checking:
            edges.setdefault(imp.source, set()).add(imp.target)
            lines.setdefault((imp.source, imp.target), imp.where())
    circles = [
        " -> ".join(path) + "   (" + ", ".join(lines[a, b] for a, b in zip(path, path[1:])) + ")"
        for path in _cycles(edges)
    ]
    assert not circles, _report("import circles among module-level imports", circles)


def test_no_burnedge_import_inside_a_function():
    problems = [
        f"{imp.where()}: {imp.source} imports {imp.target} inside a function"
        for imp in imports()
        if imp.in_function and not fnmatch.fnmatchcase(modules()[imp.source].name, "cli*.py")
    ]
    assert not problems, _report("burnedge imports inside functions (only burnedge/cli*.py may)", problems)


def test_nothing_outside_the_c_backend_names_it():
    problems = []
    for path in modules().values():
        if path.is_relative_to(C_BACKEND):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if NAMES_C_BACKEND.search(line):
                problems.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    problems += [
        f"{imp.where()}: {imp.source} imports {imp.target}"
        for imp in imports()
        if (imp.target == "burnedge.backends.c" or imp.target.startswith("burnedge.backends.c."))
        and not modules()[imp.source].is_relative_to(C_BACKEND)
    ]
    assert not problems, _report("the C backend named outside burnedge/backends/c/ (use the registry)", problems)


def test_no_python_file_is_too_long():
    long = []
    for folder in ("burnedge", "tests", "benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            count = len(path.read_text(encoding="utf-8").splitlines())
            if count > MAX_LINES:
                long.append(f"{path.relative_to(ROOT)}: {count} lines")
    assert not long, _report(f"Python files over {MAX_LINES} lines (split them by responsibility)", long)


def test_no_c_file_mixes_two_isas():
    problems = []
    for path in sorted(p for p in KERNELS.rglob("*") if p.suffix in (".c", ".h")):
        code = C_COMMENT.sub(" ", path.read_text(encoding="utf-8"))
        x86, arm = set(X86.findall(code)), set(ARM.findall(code))
        if path.name == "isa.h":
            x86 = {t for t in x86 if not COMPILER_MACROS.fullmatch(t)}
            arm = {t for t in arm if not COMPILER_MACROS.fullmatch(t)}
        if x86 and arm:
            problems.append(
                f"{path.relative_to(ROOT)}: x86 {', '.join(sorted(x86)[:4])}; ARM {', '.join(sorted(arm)[:4])}"
            )
    assert not problems, _report("C kernel files that use both x86 and ARM (one ISA per file)", problems)
