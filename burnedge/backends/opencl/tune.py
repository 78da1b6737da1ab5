"""GEMM tile shapes chosen per device: measured once, then read from $BURNEDGE_HOME/cache/opencl/tune/<device>.json.

The table maps a problem (``gemm:MxNxKxZ``: every convolution and dense layer is one) to the name of the
gemm.CONFIGS entry that ran it fastest on this device. A model's problems not in the table yet are measured
while it compiles (on GPUs by default; `OpenCLBackend(tune=True)` anywhere): every candidate built into one
small program, each run a few times on a scratch arena, the fastest by device time kept. Without tuning the
heuristic's first guess runs and nothing is written. The values computed do not matter (timing only); the
scratch buffers are as large as the model's, so every address a kernel forms is inside them.
"""

from __future__ import annotations

import json

import numpy as np

from ...files import write_atomic
from ...plan import Plan
from .runtime import build_options, cache_root, cl, compute_units, device, device_key

__all__ = ["Tuner"]

REPEATS = 5


class Tuner:
    def __init__(self, plan: Plan, tune: bool | None):
        self.plan = plan
        self.context, self.device = device()
        self.enabled = bool(self.device.type & cl.device_type.GPU) if tune is None else tune
        self.path = cache_root() / "tune" / f"{device_key(self.device)}.json"
        try:
            self.table: dict[str, str] = json.loads(self.path.read_text()) if self.path.is_file() else {}
        except (OSError, ValueError):
            self.table = {}
        self.measured = 0  # problems measured by this tuner (the cache makes it 0 the second time)

    @property
    def compute_units(self) -> int:
        """The device's compute units, 0 for a device that is no GPU (gemm.heuristic)."""
        return compute_units()

    def cached(self) -> dict[str, str]:
        return dict(self.table)

    def choose(self, key: str, variants: dict[str, tuple[str, tuple, tuple]], weight_bytes: int) -> str:
        """The fastest of `variants` (name -> (kernel source, global size, local size)) for problem `key`."""
        names = list(variants)
        if not self.enabled or len(names) == 1:
            return names[0]
        source = "\n".join(src.replace("KERNEL_NAME", f"tune{i}") for i, (src, _, _) in enumerate(variants.values()))
        try:
            prg = cl.Program(self.context, source).build(options=build_options(self.device))
        except cl.Error:
            return names[0]
        queue = cl.CommandQueue(self.context, self.device, properties=cl.command_queue_properties.PROFILING_ENABLE)
        mf = cl.mem_flags
        arena = cl.Buffer(self.context, mf.READ_WRITE, max(self.plan.arena_bytes, 64))
        weights = cl.Buffer(
            self.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.zeros(max(weight_bytes, 64), np.uint8)
        )
        best, best_t = names[0], float("inf")
        for i, (name, (_, gs, local)) in enumerate(variants.items()):
            k = cl.Kernel(prg, f"tune{i}")
            k.set_args(arena, weights)
            try:
                cl.enqueue_nd_range_kernel(queue, k, gs, local).wait()
                evs = [cl.enqueue_nd_range_kernel(queue, k, gs, local) for _ in range(REPEATS)]
                queue.finish()
            except cl.Error:  # too many resources for this device: not a candidate
                continue
            t = sorted(ev.profile.end - ev.profile.start for ev in evs)[REPEATS // 2]
            if t < best_t:
                best, best_t = name, t
        self.table[key] = best
        self.measured += 1
        write_atomic(self.path, json.dumps(self.table, indent=1, sort_keys=True).encode())
        return best
