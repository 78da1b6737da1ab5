"""DynamicQuantizeLinear: float32 to uint8 over the input's own range, widened to include 0, as the reference
computes it in float32: scale = (hi - lo) / 255, zero point = clamp(rint(-lo / scale)), y = clamp(rint(x / scale)
+ zero point), rounding half to even (nearbyintf in the default rounding mode, numpy's rint); a zero range gives
zeros, scale 0 and zero point 0."""

from __future__ import annotations

import numpy as np

from ....ir import Node
from . import Ctx, lower


@lower("DynamicQuantizeLinear")
def dynamic_quantize_linear(ctx: Ctx, node: Node) -> str:
    x = node.inputs[0]
    y, scale, zp = (list(node.outputs) + ["", ""])[:3]
    ctx.require(ctx.dtype(x) == np.float32, f"no C DynamicQuantizeLinear on {ctx.dtype(x)} (float32 only)")
    n = ctx.size(x)
    s_out = f"{ctx.tensor(scale)}[0] = s;" if scale else ""
    z_out = f"{ctx.tensor(zp)}[0] = (uint8_t)z;" if zp else ""
    y_ptr = ctx.tensor(y) if y else "0"
    return "\n".join([
        "{",
        f"  const float *xp = {ctx.tensor(x)};",
        f"  uint8_t *yp = {y_ptr};",
        "  float lo = 0.0f, hi = 0.0f;",
        f"  for (long i = 0; i < {n}; i++) {{ lo = xp[i] < lo ? xp[i] : lo; hi = xp[i] > hi ? xp[i] : hi; }}",
        "  const float s = (hi - lo) / 255.0f;",
        "  float z = 0.0f;",
        "  if (s != 0.0f) { z = nearbyintf(0.0f - lo / s); z = z < 0.0f ? 0.0f : (z > 255.0f ? 255.0f : z); }",
        f"  if (yp) for (long i = 0; i < {n}; i++) {{",
        "    float q = s != 0.0f ? nearbyintf(xp[i] / s) + z : 0.0f;",
        "    yp[i] = (uint8_t)(q < 0.0f ? 0.0f : (q > 255.0f ? 255.0f : q));",
        "  }",
        f"  {s_out}",
        f"  {z_out}",
        "}",
    ])  # fmt: skip
