/* Dense matrix products: a register-blocked float32 GEMM (6x16 micro-kernel) with a fused epilogue.
 *
 * Packed layouts (made once at compile time for constant operands, or at run time into scratch):
 *   A panels: rows in panels of BE_MR; panel p holds A(p*MR + r, k) at [p*MR*K + k*MR + r], zero-padded rows.
 *   B panels: columns in panels of BE_NR; panel q holds B(k, q*NR + c) at [q*NR*K + k*NR + c], zero-padded.
 * The epilogue of every output element (i, j) of a product `acc` is
 *   y = act(alpha * acc + beta0 * add0[i*rs0 + j*cs0] + add1[i*rs1 + j*cs1])
 * where add0 (a bias or Gemm's C) and add1 (a residual) may be NULL and broadcast through zero strides.
 */
#ifndef BURNEDGE_GEMM_H
#define BURNEDGE_GEMM_H

#include "burnedge.h"

#define BE_MR 6
#define BE_NR 16
/* kernels use at most this many threads (their scratch holds one slice per thread) */
#define BE_DENSE_MAX_THREADS 4

typedef struct {
    float alpha, beta0;
    const float *add0;
    long rs0, cs0;
    const float *add1;
    long rs1, cs1;
    int act;
    float p0, p1;
} be_epi;

/* One tile: C(r, c) for r < mr <= MR, c < nr <= NR of A(mr x K) * B(K x NR), then the epilogue at (i0 + r, j0 + c).
 * A(r, k) = a[r*rsa + k*csa] (rows past mr are never read); B(k, c) = b[k*ldb + c] for all NR columns. */
void be_gemm_tile(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr, float *c,
                  long ldc, const be_epi *e, long i0, long j0);
void be_gemm_tile_portable(long K, const float *a, long rsa, long csa, int mr, const float *b, long ldb, int nr,
                           float *c, long ldc, const be_epi *e, long i0, long j0);

/* the epilogue of one element, as the tiles apply it */
static inline float be_epi_apply(const be_epi *e, float acc, long i, long j) {
    float y = e->alpha * acc;
    if (e->add0) y += e->beta0 * e->add0[i * e->rs0 + j * e->cs0];
    if (e->add1) y += e->add1[i * e->rs1 + j * e->cs1];
    return be_activate(y, e->act, e->p0, e->p1);
}

/* B(k, j) = b[k*rsb + j*csb] for j0 <= j < j0 + nr, packed as one NR-wide panel (zero columns past nr) */
void be_gemm_pack_b(long K, const float *b, long rsb, long csb, long j0, int nr, float *dst);

/* C(M x N) = epilogue(A * B), C(i, j) at c[i*ldc + j].
 * a_packed: A is in A panels (rsa, csa unused), else A(i, k) = a[i*rsa + k*csa].
 * b_packed: B is in B panels (rsb, csb unused), else B(k, j) = b[k*rsb + j*csb].
 * scratch: be_gemm_scratch(K) floats when B is not packed. */
void be_gemm_f32(long M, long N, long K, const float *a, long rsa, long csa, int a_packed, const float *b, long rsb,
                 long csb, int b_packed, float *c, long ldc, const be_epi *e, float *scratch, int threads);
/* column panels a job keeps in L1 at once (they then meet each A panel in turn), and a thread's scratch slice */
static inline long be_gemm_nb(long K) {
    const long nb = 6144 / (K * BE_NR);
    return nb < 1 ? 1 : (nb > 16 ? 16 : nb);
}
static inline long be_gemm_slice(long K) { return be_gemm_nb(K) * K * BE_NR; }
static inline long be_gemm_scratch(long K) { return (long)BE_DENSE_MAX_THREADS * be_gemm_slice(K) + 64; }

#endif
