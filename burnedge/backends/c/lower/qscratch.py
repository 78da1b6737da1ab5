"""How many thread slices an int8 kernel's scratch needs: the thread count its driver settles on, decided from
constant shapes (qconv.c, qconv_nhwc.c, qconv_dw_nhwc.c, qgemm.c), so small layers reserve one slice, not
BE_Q_MAX_THREADS."""

from __future__ import annotations

from .quantized import MAX_THREADS

__all__ = ["kernel_threads"]


def kernel_threads(work: float, threshold: float, jobs: int) -> int:
    """The most threads a driver uses: one below its work threshold, else BE_Q_MAX_THREADS, never more than jobs.
    The run's own `threads` can only lower it, so this many slices always suffice."""
    nt = 1 if work < threshold else MAX_THREADS
    return max(1, min(nt, jobs))
