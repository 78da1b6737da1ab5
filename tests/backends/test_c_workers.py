"""The C runtime's worker pool (kernels/workers.h): every item of a parallel loop done exactly once whatever the
threads, callers racing for the pool, shutdown and restart, a fork's child; under ThreadSanitizer where the
compiler has it. Sessions opened and closed in a loop leave no thread behind."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import burnedge
from burnedge import limits
from tests.backends.test_runner_hardening import CC

KERNELS = Path(burnedge.__file__).parent / "backends" / "c" / "kernels"

# a driver: loops of every size on 1..8 threads, four callers at once, shutdowns between, a fork's child
DRIVER = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "workers.h"

typedef struct { int *hits; long n; int threads; int bad; } job;

static void mark(void *ctx, int tid, long lo, long hi) {
    job *j = ctx;
    if (tid < 0 || tid >= j->threads || lo < 0 || hi > j->n || lo >= hi) __atomic_store_n(&j->bad, 1, 5);
    for (long i = lo; i < hi; i++) __atomic_fetch_add(&j->hits[i], 1, 5);
}

static int loops(int rounds) {
    int fails = 0;
    for (int r = 0; r < rounds; r++)
        for (long n = 1; n <= 300; n = n * 3 + 1)
            for (int t = 1; t <= 8; t++) {
                job j = {calloc(n, sizeof(int)), n, t, 0};
                be_parallel(t, n, mark, &j);
                for (long i = 0; i < n; i++) fails += j.hits[i] != 1;
                fails += j.bad;
                free(j.hits);
            }
    return fails;
}

static void *caller(void *arg) { return (void *)(long)loops(*(int *)arg); }

int main(void) {
    int fails = loops(3), rounds = 4;
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, caller, &rounds);
    for (int i = 0; i < 4; i++) {
        void *f;
        pthread_join(th[i], &f);
        fails += (int)(long)f;
    }
    for (int i = 0; i < 20; i++) {
        fails += loops(1);
        fails += be_pool_shutdown() != 0 || be_pool_workers() != 0;
    }
    fails += loops(1);
    pid_t child = fork();
    if (child == 0) _exit(loops(1) != 0);
    int status = 0;
    waitpid(child, &status, 0);
    fails += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    printf("fails %d workers %d\n", fails, be_pool_workers());
    return fails != 0;
}
"""


def _tsan_works(tmp: Path) -> bool:
    """Whether this compiler builds and runs a ThreadSanitizer program (some kernels' memory layouts refuse it)."""
    src, exe = tmp / "probe.c", tmp / "probe"
    src.write_text("int main(void) { return 0; }\n")
    made = subprocess.run([CC, "-fsanitize=thread", str(src), "-o", str(exe)], capture_output=True)
    return made.returncode == 0 and subprocess.run([str(exe)], capture_output=True).returncode == 0


@pytest.mark.skipif(CC is None, reason="no C compiler")
def test_pool_does_every_item_once_under_races_shutdowns_and_fork(tmp_path):
    tsan = ["-fsanitize=thread", "-g", "-O1"] if _tsan_works(tmp_path) else ["-O1"]
    (tmp_path / "driver.c").write_text(DRIVER)
    exe = tmp_path / "driver"
    sources = [str(tmp_path / "driver.c"), str(KERNELS / "reference" / "workers.c")]
    # as on a 16-CPU machine whatever this one has: the pool grows while its older workers are starting
    includes = ["-I", str(KERNELS), "-I", str(KERNELS / "reference")]
    cmd = [CC, *tsan, "-std=gnu11", "-pthread", "-DBE_POOL_CPUS=16", *includes, *sources]
    subprocess.run([*cmd, "-o", str(exe)], check=True)
    env = {**os.environ, "TSAN_OPTIONS": "halt_on_error=1 exitcode=66 die_after_fork=0"}
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120, env=env)
    assert "ThreadSanitizer" not in r.stderr, r.stderr[-4000:]
    assert r.returncode == 0 and "fails 0" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])


def _conv_model() -> burnedge.Model:
    """A conv + gemm + elementwise chain large enough that every kernel splits its work over the pool."""
    rng = np.random.default_rng(0)
    w = helper.make_tensor("w", TensorProto.FLOAT, [32, 16, 3, 3], rng.standard_normal(32 * 16 * 9).tolist())
    fc = helper.make_tensor("fc", TensorProto.FLOAT, [32 * 32 * 32, 10], rng.standard_normal(32 * 32 * 320).tolist())
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["c"], ["s"]),
        helper.make_node("Mul", ["c", "s"], ["m"]),
        helper.make_node("Flatten", ["m"], ["f"]),
        helper.make_node("MatMul", ["f", "fc"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [w, fc],
    )
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def _threads_now() -> int:
    return len(os.listdir("/proc/self/task"))


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in /proc (Linux)")
def test_sessions_opened_and_closed_in_a_loop_leave_no_thread_and_agree(tmp_path):
    path = burnedge.export(_conv_model(), tmp_path / "pool.bedge")
    x = {"x": np.random.default_rng(1).standard_normal((1, 16, 32, 32)).astype(np.float32)}
    want = burnedge.Session(path, threads=1).run(x)["y"]
    before = _threads_now()
    for i in range(12):
        with burnedge.Session(path, threads=2 + i % 3) as s:
            np.testing.assert_array_equal(s.run(x)["y"], want)
            assert s.executable.workers() == min(1 + i % 3, len(os.sched_getaffinity(0)) - 1)
        assert s.executable.workers() == 0
    assert _threads_now() == before


def test_threads_are_bounded_by_the_limit(tmp_path):
    path = burnedge.export(_conv_model(), tmp_path / "pool.bedge")
    with limits.raised(max_threads=4), pytest.raises(limits.LimitError, match="max_threads"):
        burnedge.Session(path, threads=5)


def _int8_model() -> burnedge.Model:
    """A float net whose int8 steps are each large enough to split over the pool (conv, depthwise conv, average
    pool, softmax over many rows, a wide gemm), quantized by export."""
    rng = np.random.default_rng(2)

    def const(name, shape, scale=0.2):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [const("w", [32, 16, 3, 3]), const("dw", [32, 1, 3, 3]), const("fc", [32 * 16 * 16, 64], 0.02)]
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("Conv", ["r", "dw"], ["d"], pads=[1, 1, 1, 1], group=32),
        helper.make_node("AveragePool", ["d"], ["p"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Softmax", ["p"], ["s"], axis=1),
        helper.make_node("Flatten", ["s"], ["f"]),
        helper.make_node("MatMul", ["f", "fc"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "int8pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))


def test_int8_kernels_on_the_pool_give_the_same_bytes_on_any_threads(tmp_path):
    """The int8 kernels that ran OpenMP loops now share be_parallel's chunks: byte for byte the same on 1, 2 and
    4 threads (and the pool really ran: workers started)."""
    rng = np.random.default_rng(3)
    feeds = [{"x": rng.standard_normal((1, 16, 32, 32)).astype(np.float32)} for _ in range(4)]
    path = burnedge.export(_int8_model(), tmp_path / "q.bedge", quantize="int8", calibration=feeds[:3])
    want = [burnedge.Session(path, threads=1).run(f)["y"] for f in feeds]
    for threads in (2, 4):
        with burnedge.Session(path, threads=threads) as s:
            for f, w in zip(feeds, want):
                np.testing.assert_array_equal(s.run(f)["y"], w)
            if len(os.sched_getaffinity(0)) > 1:
                assert s.executable.workers() >= 1
    assert all(check.max_abs == 0 for check in burnedge.verify(path))


def test_the_c_build_needs_no_openmp(tmp_path):
    """Threads are the pool's own: no -fopenmp in the flags, no OpenMP pragma in a kernel, no libgomp linked."""
    from burnedge.backends.c import build

    tc = build.host_toolchain()
    assert not any("openmp" in f or "gomp" in f for f in (*tc.cflags, *tc.ldflags))
    for f in KERNELS.rglob("*.[ch]"):
        for line in f.read_text().splitlines():
            code = line.split("//")[0]
            pragma = "#pragma omp" in code or '_Pragma("omp' in code
            assert not pragma or f.name == "burnedge.h", f"{f.relative_to(KERNELS)}: {line.strip()}"
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        return

    def mapped() -> set[str]:
        return {line.split()[-1] for line in maps.read_text().splitlines() if line.endswith(".so")}

    before = mapped()
    with burnedge.Session(burnedge.export(_int8_model(), tmp_path / "q.bedge"), threads=2):
        libs = mapped() - before  # the model's library (libgomp itself would show here too)
    assert libs and not any("gomp" in lib for lib in libs), libs
    for lib in libs:
        assert b"libgomp" not in Path(lib).read_bytes(), lib


def test_rare_float_loops_on_the_pool_agree_with_one_thread_and_the_reference():
    """The float loops that were OpenMP pragmas (LpNormalization, Hardmax, LpPool, 3-D pools, float64 reductions,
    RMSNormalization), at sizes over their split thresholds: the same floats on 1 and 3 threads, and the reference's."""
    rng = np.random.default_rng(4)
    feeds = {
        "x": rng.standard_normal((2, 16, 32, 40)).astype(np.float32),
        "v": rng.standard_normal((1, 4, 8, 8, 8)).astype(np.float32),
        "d": rng.standard_normal((4, 64, 256)),
    }
    nodes = [
        helper.make_node("LpNormalization", ["x"], ["a"], axis=1, p=2),
        helper.make_node("Hardmax", ["x"], ["h"], axis=1),
        helper.make_node("LpPool", ["x"], ["lp"], kernel_shape=[3, 3], p=2),
        helper.make_node("MaxPool", ["v"], ["m3"], kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
        helper.make_node("AveragePool", ["v"], ["a3"], kernel_shape=[3, 3, 3], pads=[1] * 6),
        helper.make_node("ReduceL2", ["d", "axes"], ["r"], keepdims=0),
        helper.make_node("RMSNormalization", ["x", "scale"], ["n"], axis=-1),
    ]
    scale = numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "scale")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16, 32, 40]),
        helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 4, 8, 8, 8]),
        helper.make_tensor_value_info("d", TensorProto.DOUBLE, [4, 64, 256]),
    ]
    outs = [
        helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in ("a", "h", "lp", "m3", "a3", "r", "n")
    ]
    g = helper.make_graph(nodes, "rare", ins, outs, [scale, axes])
    model = burnedge.load(helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)]))
    one = burnedge.Session(model, backend="c", threads=1).run(feeds)
    many = burnedge.Session(model, backend="c", threads=3).run(feeds)
    ref = burnedge.Session(model).run(feeds)
    for name in one:
        np.testing.assert_array_equal(many[name], one[name], err_msg=name)
        np.testing.assert_allclose(one[name], ref[name], rtol=1e-4, atol=1e-5, err_msg=name)
