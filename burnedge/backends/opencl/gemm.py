"""The tiled GEMM kernel every dense op and convolution shares: C[z, m, n] = sum_k A(z, m, k) * B(z, k, n).

A caller gives three inline functions: ``lda(A, W, z, m, k)`` and ``ldb(A, W, z, k, n)`` load one element (a
convolution's ``ldb`` is the implicit im2col: it computes the input pixel, zero in the padding) and
``st(A, W, z, m, n, acc)`` stores one result with its epilogue (bias, residual, activation). The kernel:

1. a work-group computes a TM x TN tile of C; each of its (TN/RN) x (TM/RM) work items keeps RM x RN
   accumulators in registers (register tiling: every value read from local memory feeds RM or RN FMAs);
2. for every TK-slice of K the group loads the A tile (TM x TK) and the B tile (TK x TN) into local memory
   (padded by one column against bank conflicts), waits at a barrier, and accumulates;
3. the items store their RM x RN results through ``st`` (bounds checked where M or N is not a tile multiple).

Work item (tx, ty) owns rows ty + i*TY and columns tx + j*TX, so neighbouring items read neighbouring columns.
`CONFIGS` are the tile shapes a tuner picks from (tune.py); `heuristic` orders them for a problem.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CONFIGS", "Config", "gemm_source", "heuristic", "reduce_source", "split_k"]


@dataclass(frozen=True)
class Config:
    tm: int
    tn: int
    tk: int
    rm: int
    rn: int

    @property
    def name(self) -> str:
        return f"{self.tm}x{self.tn}x{self.tk}r{self.rm}x{self.rn}"

    @property
    def local(self) -> tuple[int, int, int]:
        return (self.tn // self.rn, self.tm // self.rm, 1)

    def global_size(self, m: int, n: int, z: int) -> tuple[int, int, int]:
        tx, ty, _ = self.local
        return (-(-n // self.tn) * tx, -(-m // self.tm) * ty, z)


CONFIGS = {
    c.name: c
    for c in (
        Config(128, 64, 16, 8, 4),
        Config(64, 64, 16, 4, 4),
        Config(32, 64, 16, 2, 4),
        Config(32, 32, 16, 2, 2),
        Config(16, 32, 32, 1, 2),
        Config(16, 16, 32, 1, 1),
        Config(8, 32, 32, 1, 1),
        Config(4, 64, 32, 1, 1),
        Config(1, 64, 64, 1, 1),
    )
}


def heuristic(m: int, n: int, z: int, compute_units: int) -> list[str]:
    """Config names for an M x N (x z) problem, best guess first: the largest tile that still gives every compute
    unit two work-groups; skinny tiles for the few rows of a batch-1 dense layer. `compute_units` 0 means a CPU
    device (PoCL): a middle tile, which its compiler builds quickly."""
    names = list(CONFIGS)
    if compute_units == 0 and m > 8:
        return ["32x32x16r2x2", *[x for x in names if x != "32x32x16r2x2"]]
    if m <= 4:
        first = "1x64x64r1x1" if m == 1 else "4x64x32r1x1"
        return [first, *[x for x in names if x != first]]
    if m <= 8:
        return ["8x32x32r1x1", *[x for x in names if x != "8x32x32r1x1"]]
    square = [x for x in names if CONFIGS[x].tm >= 16]
    for k, name in enumerate(square):
        c = CONFIGS[name]
        if -(-m // c.tm) * -(-n // c.tn) * z >= 2 * compute_units:
            return square[k:] + square[:k]
    return list(reversed(square))


def split_k(m: int, n: int, k: int, z: int, compute_units: int) -> int:
    """Slices of K computed by separate work-groups when the output alone leaves most compute units idle (a
    batch-1 ResNet's last convolutions: 512 x 49 outputs, K = 4608); 1 on CPUs (compute_units 0)."""
    tiles = -(-m // 32) * -(-n // 32) * z
    if compute_units == 0 or tiles >= compute_units or k < 1024:
        return 1
    s = min(8, max(2, compute_units // tiles), k // 256)
    return -(-k // split_chunk(k, s))


def split_chunk(k: int, split: int) -> int:
    """The K range of one slice: a multiple of 64 (every tile shape's TK divides it)."""
    per = -(-k // split)
    return -(-per // 64) * 64


def reduce_source(m: int, n: int, z: int, split: int, helpers: str, partial: str) -> str:
    """The kernel summing the `split` partial products of every output (at `partial`) through ``st``."""
    return f"""{helpers}
__kernel void KERNEL_NAME(__global uchar *A, __global const uchar *W) {{
  const long i = get_global_id(0);
  if (i >= {z * m * n}) return;
  const int z = i / {m * n}, r = i % {m * n}, mg = r / {n}, ng = r % {n};
  __global const float *P = {partial};
  float acc = 0.0f;
  for (int s = 0; s < {split}; s++) acc += P[((long)(z * {split} + s) * {m} + mg) * {n} + ng];
  KERNEL_NAME_st(A, W, z, mg, ng, acc);
}}"""


def gemm_source(cfg: Config, m: int, n: int, k: int, helpers: str, split: int = 1, partial: str = "") -> str:
    """The kernel (named KERNEL_NAME) of one problem, after `helpers` (the lda / ldb / st functions, which the
    caller names with the KERNEL_NAME prefix: ``KERNEL_NAME_lda`` ...). With `split` > 1 the z range holds
    z x split work-group layers, each summing one K slice into the float buffer `partial` (reduce_source adds
    them up)."""
    tx, ty, _ = cfg.local
    nt = tx * ty
    mcheck = m % cfg.tm != 0
    ncheck = n % cfg.tn != 0
    kcheck = k % cfg.tk != 0
    chunk = split_chunk(k, split) if split > 1 else k
    if split > 1:
        zline = f"const int z = get_group_id(2) / {split}, k_lo = (get_group_id(2) % {split}) * {chunk};"
        k_hi = f"min(K, k_lo + {chunk})"
        store = "P[((long)get_group_id(2) * M + mg) * N + ng] = acc[i][j]"
    else:
        zline, k_hi, store = (
            "const int z = get_group_id(2), k_lo = 0;",
            "K",
            "KERNEL_NAME_st(A, W, z, mg, ng, acc[i][j])",
        )

    def guard(cond: list[str], value: str) -> str:
        return f"(({' && '.join(cond)}) ? {value} : 0.0f)" if cond else value

    a_cond = (["mg < M"] if mcheck else []) + (["kg < K"] if kcheck else [])
    b_cond = (["ng < N"] if ncheck else []) + (["kg < K"] if kcheck else [])
    a_val = guard(a_cond, "KERNEL_NAME_lda(A, W, z, mg, kg)")
    b_val = guard(b_cond, "KERNEL_NAME_ldb(A, W, z, kg, ng)")
    store_cond = " && ".join((["mg < M"] if mcheck else []) + (["ng < N"] if ncheck else [])) or "1"
    return f"""{helpers}
__kernel __attribute__((reqd_work_group_size({tx}, {ty}, 1)))
void KERNEL_NAME(__global uchar *A, __global const uchar *W) {{
  const int M = {m}, N = {n}, K = {k};
  const int lx = get_local_id(0), ly = get_local_id(1), tid = ly * {tx} + lx;
  const int n0 = get_group_id(0) * {cfg.tn}, m0 = get_group_id(1) * {cfg.tm};
  {zline}{f"__global float *P = {partial};" if split > 1 else ""}
  __local float As[{cfg.tk}][{cfg.tm + 1}];
  __local float Bs[{cfg.tk}][{cfg.tn + 1}];
  float acc[{cfg.rm}][{cfg.rn}];
  #pragma unroll
  for (int i = 0; i < {cfg.rm}; i++)
    #pragma unroll
    for (int j = 0; j < {cfg.rn}; j++) acc[i][j] = 0.0f;
  const int k_end = {k_hi};
  for (int k0 = k_lo; k0 < k_end; k0 += {cfg.tk}) {{
    for (int e = tid; e < {cfg.tm * cfg.tk}; e += {nt}) {{
      const int mm = e / {cfg.tk}, kk = e % {cfg.tk}, mg = m0 + mm, kg = k0 + kk;
      As[kk][mm] = {a_val};
    }}
    for (int e = tid; e < {cfg.tk * cfg.tn}; e += {nt}) {{
      const int kk = e / {cfg.tn}, nn = e % {cfg.tn}, ng = n0 + nn, kg = k0 + kk;
      Bs[kk][nn] = {b_val};
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
    #pragma unroll
    for (int kk = 0; kk < {cfg.tk}; kk++) {{
      float a[{cfg.rm}], b[{cfg.rn}];
      #pragma unroll
      for (int i = 0; i < {cfg.rm}; i++) a[i] = As[kk][ly + i * {ty}];
      #pragma unroll
      for (int j = 0; j < {cfg.rn}; j++) b[j] = Bs[kk][lx + j * {tx}];
      #pragma unroll
      for (int i = 0; i < {cfg.rm}; i++)
        #pragma unroll
        for (int j = 0; j < {cfg.rn}; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }}
    barrier(CLK_LOCAL_MEM_FENCE);
  }}
  #pragma unroll
  for (int i = 0; i < {cfg.rm}; i++)
    #pragma unroll
    for (int j = 0; j < {cfg.rn}; j++) {{
      const int mg = m0 + ly + i * {ty}, ng = n0 + lx + j * {tx};
      if ({store_cond}) {store};
    }}
}}"""
