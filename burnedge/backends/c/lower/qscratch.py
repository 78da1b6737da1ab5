"""How many thread slices an int8 kernel's scratch needs: the thread count its driver settles on, decided from
constant shapes (qconv.c, qconv_nhwc.c, qconv_dw_nhwc.c, qgemm.c), so small layers reserve one slice, not
BE_Q_MAX_THREADS."""

from __future__ import annotations

from ....ir import Graph
from .quantized import MAX_THREADS

__all__ = ["PAR_MIN_QMACS", "kernel_threads", "lean", "plan_threads"]

# isa.h BE_PAR_MIN_QMACS of the sets that split the least work (portable, NEON without sdot): the int8 GEMM and
# convolution drivers (qgemm.c, qconv.c, qconv_nhwc.c) may use more than one thread from there, so their scratch
# holds a slice per thread
PAR_MIN_QMACS = 100000


def plan_threads(graph: Graph, most: int = MAX_THREADS) -> int:
    """The most threads a kernel of `graph`'s plan may run with: the kernel's own maximum `most`, or fewer when
    the plan is capped (Graph.threads; the generated code clamps every run to it)."""
    return min(most, graph.threads) if graph.threads > 0 else most


def lean(graph: Graph) -> bool:
    """A one-thread plan (a microcontroller's): kernels take their least scratch (one output row per band)."""
    return graph.threads == 1


def kernel_threads(work: float, threshold: float, jobs: int, graph: Graph | None = None) -> int:
    """The most threads a driver uses: one below its work threshold, else BE_Q_MAX_THREADS (or the plan's cap),
    never more than jobs. The run's own `threads` can only lower it, so this many slices always suffice."""
    nt = 1 if work < threshold else (plan_threads(graph) if graph is not None else MAX_THREADS)
    return max(1, min(nt, jobs))
