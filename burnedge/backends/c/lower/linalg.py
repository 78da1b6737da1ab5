"""Det: the determinant of each square matrix of the trailing two dims, by Gaussian elimination with partial
pivoting (the LU factorisation numpy's det uses), in double; a singular matrix gives 0. Matrices up to 64x64:
the step copies each onto the stack."""

from __future__ import annotations

import math

import numpy as np

from ....ir import Node
from . import Ctx, ctype, lower


@lower("Det")
def det(ctx: Ctx, node: Node) -> str:
    x, y = node.inputs[0], node.outputs[0]
    dt = ctx.dtype(x)
    ctx.require(dt in (np.float32, np.float64), f"no C Det on {dt} (float32 and float64 only)")
    shape = ctx.shape(x)
    ctx.require(len(shape) >= 2 and shape[-1] == shape[-2], f"the input is {list(shape)}, expected [..., M, M]")
    m, batch = shape[-1], math.prod(shape[:-2])
    ctx.require(m <= 64, f"matrices are {m}x{m}: the C Det takes up to 64x64 (it keeps one on the stack)")
    if batch == 0:
        return "/* empty */"
    ct = ctype(dt)
    return "\n".join([
        "{",
        f"  const {ct} *xp = {ctx.tensor(x)};",
        f"  {ct} *yp = {ctx.tensor(y)};",
        f"  for (long b = 0; b < {batch}; b++) {{",
        f"    double a[{m * m}], d = 1.0;",
        f"    for (long i = 0; i < {m * m}; i++) a[i] = xp[b * {m * m} + i];",
        f"    for (long c = 0; c < {m} && d != 0.0; c++) {{",
        "      long p = c;",
        f"      for (long r = c + 1; r < {m}; r++) if (fabs(a[r * {m} + c]) > fabs(a[p * {m} + c])) p = r;",
        f"      if (a[p * {m} + c] == 0.0) {{ d = 0.0; break; }}",
        f"      if (p != c) {{ d = -d; for (long k = 0; k < {m}; k++) {{ const double t = a[c * {m} + k]; "
        f"a[c * {m} + k] = a[p * {m} + k]; a[p * {m} + k] = t; }} }}",
        f"      d *= a[c * {m} + c];",
        f"      for (long r = c + 1; r < {m}; r++) {{",
        f"        const double f = a[r * {m} + c] / a[c * {m} + c];",
        f"        for (long k = c; k < {m}; k++) a[r * {m} + k] -= f * a[c * {m} + k];",
        "      }",
        "    }",
        f"    yp[b] = ({ct})d;",
        "  }",
        "}",
    ])  # fmt: skip
