"""The C kernel library by ISA: which sets a toolchain builds, the flattened sources (a set's file replaces the
reference one of its stem), one ISA per file with only isa.h reading the compiler's macros, and a build of the
reference set alone that runs suite models as the host build does (float within tolerance, int8 bit for bit)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

import burnedge
from burnedge.backends.c import build
from burnedge.backends.c.emit import HEADERS, weights_blob
from burnedge.backends.c.runtime import CModel
from tests.backends.c_helpers import prepare, slots

KERNELS = build.KERNEL_DIR
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
X86 = re.compile(r"\w*mmintrin\.h|\b__m(?:128|256|512)\w*|\b_mm(?:256|512)?_\w+|\bBE_ISA_X86\w*")
ARM = re.compile(
    r"arm_neon\.h|arm_acle\.h|\b(?:u?int|float)(?:8|16|32|64)x\d+(?:x\d+)?_t\b|\bBE_ISA_(?:NEON|AARCH64|DOT)\w*"
)
COMPILER_ISA = re.compile(r"\b__(?:AVX|SSE|FMA|F16C|x86_64|i386|ARM_|aarch64|arm__|riscv|mips|powerpc)\w*")
RTOL = 1e-4


def _code(path: Path) -> str:
    return COMMENT.sub(" ", path.read_text())


def _files(where: Path) -> list[Path]:
    return sorted(p for p in where.iterdir() if p.suffix in (".c", ".h"))


# -- which sets --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("arch", "features", "sets"),
    [
        ("x86_64", ["sse2", "avx", "avx2", "fma"], ("reference", "x86")),
        ("x86_64", ["sse2", "avx"], ("reference",)),
        ("aarch64", ["fp", "asimd", "crc32"], ("reference", "arm")),
        ("aarch64", ["fp", "asimd", "asimddp"], ("reference", "arm")),
        ("armv7", ["vfp", "vfpv4", "neon"], ("reference", "arm")),
        ("armv7", ["vfp"], ("reference",)),
        ("riscv64", ["i", "m", "a", "f", "d", "c"], ("reference",)),
    ],
)
def test_kernel_sets_for(arch, features, sets):
    assert build.kernel_sets_for(arch, features) == sets


def test_toolchain_sets():
    host = build.host_toolchain()
    assert host.sets()[0] == "reference" and host.kernel_sets == host.sets()
    portable = build.Toolchain(host.cc, (*host.cflags, "-DBURNEDGE_PORTABLE"), host.ldflags, host.ar, "portable")
    assert portable.sets() == ("reference",)  # the flag wins over any named set
    forced = build.Toolchain(host.cc, (*host.cflags, "-DBURNEDGE_PORTABLE"), kernel_sets=("reference", "x86"))
    assert forced.sets() == ("reference",)
    assert build.Toolchain(host.cc, host.cflags, kernel_sets=("arm",)).sets() == ("reference", "arm")
    # no sets named: what the compiler can build, asked of it (a missing cross compiler: a guess from its name)
    assert build.Toolchain(host.cc, host.cflags).sets() == host.sets()
    assert build.Toolchain("aarch64-nowhere-gcc", ()).sets() == ("reference", "arm")
    assert build.Toolchain("riscv64-nowhere-gcc", ()).sets() == ("reference",)


# -- the flattened sources ---------------------------------------------------------------------------------------
def test_sources_override_by_stem():
    ref = build.kernel_sources()
    assert ref == build.kernel_sources(("reference",))
    assert ref["gemm.c"] == (KERNELS / "reference" / "gemm.c").read_text()
    for s in ("x86", "arm"):
        flat = build.kernel_sources(("reference", s))
        assert all("/" not in n for n in flat)
        for p in _files(KERNELS / s):
            assert flat[p.name] == p.read_text()
        assert set(flat) == set(ref) | {p.name for p in _files(KERNELS / s)}
    with pytest.raises(build.BuildError, match="unknown kernel set 'sse9'"):
        build.kernel_sources(("reference", "sse9"))


def test_set_files_override_a_reference_or_add_its_tiles_and_internal_headers_are_unique():
    headers = [p.name for p in KERNELS.rglob("*.h")]
    assert len(headers) == len(set(headers)), sorted(n for n in headers if headers.count(n) > 1)
    reference = {p.name for p in _files(KERNELS / "reference")}
    for s in ("x86", "arm"):
        for p in _files(KERNELS / s):
            if p.suffix == ".c" and p.name not in reference:  # a tile file the set's own overrides call
                defined = set(re.findall(r"^[a-z][\w \*]*\b(be_\w+)\(", _code(p), re.M))
                internal = " ".join(_code(h) for h in (KERNELS / s).glob(f"{s}_*.h"))
                assert defined and all(name in internal for name in defined), (
                    f"{s}/{p.name} overrides no reference file, and not all of {sorted(defined)} are declared in "
                    f"the set's {s}_*.h for its overrides to call"
                )
            elif p.suffix != ".c":  # (a .c with a reference twin overrides it whole: the twin leaves the build)
                assert p.name.startswith(f"{s}_"), f"{s}/{p.name}: internal headers are named by their set"


def test_generated_code_includes_only_the_public_headers():
    public = {p.name for p in _files(KERNELS)}
    assert set(HEADERS) == public and HEADERS[0] == "burnedge.h"
    for name in public:
        code = _code(KERNELS / name)
        assert not (X86.search(code) or ARM.search(code) or COMPILER_ISA.search(code)), f"{name} names an ISA"
        assert not re.search(r'#include "(isa|x86_\w+|arm_\w+|conv_tile)\.h"', code), name


# -- one ISA per file ---------------------------------------------------------------------------------------------
def test_one_isa_per_file_and_only_isa_h_reads_compiler_macros():
    problems = []
    for path in sorted(KERNELS.rglob("*")):
        if path.suffix not in (".c", ".h"):
            continue
        where = path.parent.name
        code = _code(path)
        x86, arm, macros = set(X86.findall(code)), set(ARM.findall(code)), set(COMPILER_ISA.findall(code))
        if path.name == "isa.h":
            continue
        if macros:
            problems.append(f"{where}/{path.name} tests compiler macros {sorted(macros)} (isa.h decides them)")
        if x86 and arm:
            problems.append(f"{where}/{path.name} mixes x86 {sorted(x86)[:3]} and ARM {sorted(arm)[:3]}")
        if where in ("reference", "kernels") and (x86 or arm):
            problems.append(f"{where}/{path.name} is meant to be portable C: {sorted(x86 | arm)[:3]}")
        if (where == "x86" and arm) or (where == "arm" and x86):
            problems.append(f"{where}/{path.name} holds another ISA: {sorted(x86 | arm)[:3]}")
    assert not problems, "\n".join(problems)


# -- the reference set alone runs the suite as the host build does -----------------------------------------------
@pytest.fixture(scope="module")
def model_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    env = os.environ.get("BURNEDGE_MODEL_CACHE")
    return Path(env) if env else tmp_path_factory.mktemp("models")


def _reference_toolchain() -> build.Toolchain:
    host = build.host_toolchain()
    return build.Toolchain(host.cc, host.cflags, host.ldflags, host.ar, "reference", kernel_sets=("reference",))


def _run(graph, feeds, tc: build.Toolchain | None) -> dict[str, np.ndarray]:
    plan, emitted = prepare(graph)
    ins, outs, consts = slots(plan)
    return CModel(build.build_model(emitted.source, tc), weights_blob(emitted), ins, outs, consts, 2).run(feeds)


@pytest.mark.parametrize("name", ["ds_cnn", "resnet8", "transformer"])
def test_reference_set_runs_suite_models(name, model_cache):
    from tests.models import suite

    path = suite.build_model(name, model_cache)
    model, feeds = burnedge.load(path), suite.example_feeds(path, seed=1)
    want = burnedge.Session(model, backend="numpy").run(feeds)
    got = _run(model.graph, feeds, _reference_toolchain())
    for k, w in want.items():
        err = np.max(np.abs(got[k].astype(np.float64) - w)) / np.max(np.abs(w))
        assert got[k].shape == w.shape and err <= RTOL, f"{name} {k}: relative error {err:.3g}"


@pytest.mark.parametrize("name", ["ds_cnn", "resnet8"])
def test_reference_set_int8_is_bit_exact_with_the_host_build(name, model_cache):
    from burnedge.quantize import quantize_model
    from tests.models import suite

    path = suite.build_model(name, model_cache)
    model = burnedge.load(path)
    graph, _ = quantize_model(model, [suite.example_feeds(path, seed=s) for s in range(4)], progress=False)
    feeds = suite.example_feeds(path, seed=7)
    host, ref = _run(graph, feeds, None), _run(graph, feeds, _reference_toolchain())
    assert host.keys() == ref.keys()
    for k in host:
        np.testing.assert_array_equal(host[k], ref[k], err_msg=f"{name} {k}")
