/* Internal to the kernel sets: the channels-last implicit GEMM of qconv_nhwc.c (reference/qconv_nhwc.c has the
 * algorithm). A set's qconv_nhwc.c may define QCONV_NHWC_SET(x, bpack, y, e, g, flags, x_zp, scratch, threads)
 * first: an expression run on every conv, non-zero where the set computed the whole conv itself (else the GEMM below
 * runs); it may use pad_copy, pad_copy_par and gather_rows (defined here, before the driver). */
#ifndef BURNEDGE_QCONV_NHWC_LOOPS_H
#define BURNEDGE_QCONV_NHWC_LOOPS_H

#include "qconv.h"
#include "isa.h" /* BE_PAR_MIN_QMACS, BE_PAR_MIN_COPY_BYTES */
#include "workers.h"

static int qthreads(int threads, double work, long jobs) {
    int nt = threads < BE_Q_MAX_THREADS ? threads : BE_Q_MAX_THREADS;
    if (work < BE_PAR_MIN_QMACS) nt = 1;
    if (nt > jobs) nt = (int)(jobs > 0 ? jobs : 1);
    return nt < 1 ? 1 : nt;
}

/* -- implicit GEMM ------------------------------------------------------------------------------------------- */
/* d[j*C + c] = s[c*hw + j] for j < n, c < C (C a compile-time constant) */
static inline __attribute__((always_inline)) void interleave(const int8_t *s, long hw, long n, const int C,
                                                             int8_t *restrict d) {
    for (long j = 0; j < n; j++)
        for (int c = 0; c < C; c++) d[j * C + c] = s[c * hw + j];
}

/* padded rows r0 .. r0+nrows-1 of the input rows and columns image xi's output reads, channels-last, x_zp outside
 * the image: [nrows][Wp][C] */
static void pad_copy(const int8_t *xi, int in_nhwc, const be_qconv_geo *g, int8_t pad, long r0, long nrows,
                     int8_t *xp) {
    const long C = g->C, hw = (long)g->H * g->W, wp = be_qconv_nhwc_wp(g);
    for (long r = r0; r < r0 + nrows; r++) {
        int8_t *d = xp + (r - r0) * wp * C;
        const long iy = r - g->ph;
        if (iy < 0 || iy >= g->H) {
            memset(d, pad, (size_t)(wp * C));
            continue;
        }
        /* columns j < pw and j >= pw + W are padding; the image's columns lie in between */
        const long jl = g->pw < wp ? g->pw : wp, jr = g->pw + g->W < wp ? g->pw + g->W : wp;
        memset(d, pad, (size_t)(jl * C));
        if (jr < wp) memset(d + jr * C, pad, (size_t)((wp - jr) * C));
        if (jr <= jl) continue;
        if (in_nhwc) {
            memcpy(d + jl * C, xi + (iy * g->W + jl - g->pw) * C, (size_t)((jr - jl) * C));
        } else {
            const int8_t *s = xi + iy * g->W + (jl - g->pw);
            int8_t *dc = d + jl * C;
            const long n = jr - jl;
            switch (C) { /* stems: the planes' rows interleaved with a constant stride (vectorised stores) */
            case 1: memcpy(dc, s, (size_t)n); break;
            case 2: interleave(s, hw, n, 2, dc); break;
            case 3: interleave(s, hw, n, 3, dc); break;
            case 4: interleave(s, hw, n, 4, dc); break;
            default:
                for (long c = 0; c < C; c++) /* a plane's row, scattered C apart */
                    for (long j = 0; j < n; j++) dc[j * C + c] = s[c * hw + j];
            }
        }
    }
}

typedef struct {
    const int8_t *xi;
    int in_nhwc;
    const be_qconv_geo *g;
    int8_t pad, *xp;
    long r0;
} pad_copy_call;

static void pad_copy_rows(void *ctx, int tid, long lo, long hi) {
    const pad_copy_call *c = ctx;
    (void)tid;
    pad_copy(c->xi, c->in_nhwc, c->g, c->pad, c->r0 + lo, hi - lo, c->xp + lo * be_qconv_nhwc_wp(c->g) * c->g->C);
}

/* pad_copy with its rows split over threads from BE_PAR_MIN_COPY_BYTES: a band's copy is not a serial step between
 * the parallel ones */
static void pad_copy_par(const int8_t *xi, int in_nhwc, const be_qconv_geo *g, int8_t pad, long r0, long nrows,
                         int8_t *xp, int threads) {
    if (threads < 2 || (double)nrows * be_qconv_nhwc_wp(g) * g->C < BE_PAR_MIN_COPY_BYTES) {
        pad_copy(xi, in_nhwc, g, pad, r0, nrows, xp);
        return;
    }
    pad_copy_call c = {xi, in_nhwc, g, pad, xp, r0};
    be_parallel(threads, nrows, pad_copy_rows, &c);
}

/* im2col rows of output pixels j0 .. j0+mr-1 from the padded copy: row r = the KH*KW taps' C channels each.
 * Runs of at most 64 bytes go in 8-byte moves that may read up to 7 bytes past the copy (its 64 slack bytes) and
 * write up to 7 past the run (overwritten by the next run, or the 64 slack bytes after the last row). */
static void gather_rows(const int8_t *xp, const be_qconv_geo *g, long oy0, long j0, int mr, int8_t *dst, long K) {
    /* geometry in locals: int8 stores may alias the struct, so its fields would be reloaded on every store */
    const long C = g->C, wp = be_qconv_nhwc_wp(g), run = (long)g->KW * C, OW = g->OW, KH = g->KH, KW = g->KW;
    const long sy = (long)g->sh * wp * C, sx = (long)g->sw * C, ry = (long)g->dh * wp * C, rx = (long)g->dw * C;
    const int one = g->dw == 1;
    long oy = j0 / OW, ox = j0 % OW;
    for (int r = 0; r < mr; r++) {
        int8_t *d = dst + r * K;
        const int8_t *s = xp + (oy - oy0) * sy + ox * sx; /* the copy starts at padded row oy0 * sh */
        for (long ky = 0; ky < KH; ky++, d += run, s += ry) {
            if (one && run <= 64)
                for (long o = 0; o < run; o += 8) memcpy(d + o, s + o, 8); /* short run: no libc call */
            else if (one)
                memcpy(d, s, (size_t)run); /* the KW taps' channels are one run */
            else
                for (long kx = 0; kx < KW; kx++) memcpy(d + kx * C, s + kx * rx, (size_t)C);
        }
        if (++ox == OW) ox = 0, oy++;
    }
}

typedef struct {
    const int8_t *xi, *xp, *bpack;
    int8_t *y, *slices;
    const be_qepi *e;
    const be_qconv_geo *g;
    long n, oy0, p0, p1, C, M, K, ohw;
    int direct, out_nhwc;
} qconv_nhwc_call;

/* row panels lo .. hi-1 of one band (pixels p0 + 6 * job ...) on thread tid's slice */
static void qconv_nhwc_jobs(void *ctx, int tid, long lo, long hi) {
    const qconv_nhwc_call *c = ctx;
    const int8_t *xi = c->xi, *xp = c->xp, *bpack = c->bpack;
    int8_t *y = c->y, *slices = c->slices;
    const be_qepi *e = c->e;
    const be_qconv_geo *g = c->g;
    const long n = c->n, oy0 = c->oy0, p0 = c->p0, p1 = c->p1, C = c->C, M = c->M, K = c->K, ohw = c->ohw;
    const int direct = c->direct, out_nhwc = c->out_nhwc;
    int8_t *rows = slices + (long)tid * be_qconv_nhwc_slice(K, M);
    int8_t *tile = rows + BE_QMR * K + 64, *apanel = tile + BE_QMR * M + 64;
    for (long job = lo; job < hi; job++) {
        const long j0 = p0 + job * BE_QMR;
        const int mr = (int)(p1 - j0 < BE_QMR ? p1 - j0 : BE_QMR);
        const int8_t *a = rows;
        long lda = K, kread = K + 16; /* gathered rows: the next row or the 64 slack bytes follow */
        if (direct) { /* rows read in place: past K only while later pixels of the image follow */
            const long left = (ohw - j0 - mr + 1) * C;
            a = xi + j0 * C;
            lda = C;
            kread = left < C + 16 ? (left > C ? left : C) : C + 16;
        } else {
            gather_rows(xp, g, oy0, j0, mr, rows, K);
        }
        if (out_nhwc) {
            be_qgemm_panel(a, lda, K, kread, mr, M, bpack, y + (n * ohw + j0) * M, M, e, 0, apanel);
        } else {
            be_qgemm_panel(a, lda, K, kread, mr, M, bpack, tile, M, e, 0, apanel);
            int8_t *yi = y + n * M * ohw + j0;
            for (long m = 0; m < M; m++)
                for (int r = 0; r < mr; r++) yi[m * ohw + r] = tile[r * M + m];
        }
    }
}

void be_qconv_nhwc_i8(const int8_t *x, const int8_t *bpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                      int flags, int32_t x_zp, int8_t *scratch, int threads) {
    const long C = g->C, M = g->M, K = C * g->KH * g->KW, hw = (long)g->H * g->W, ohw = (long)g->OH * g->OW;
    const int in_nhwc = flags & 1, out_nhwc = (flags & 2) != 0;
    const int direct = be_qconv_nhwc_direct(g, flags);
    const long pp = (ohw + BE_QMR - 1) / BE_QMR;
    const int nt = qthreads(threads, (double)ohw * M * K, pp);
    const long band = direct ? g->OH : be_qconv_nhwc_band(g);
#ifdef QCONV_NHWC_SET
    if (QCONV_NHWC_SET(x, bpack, y, e, g, flags, x_zp, scratch, threads)) return;
#endif
    int8_t *xp = scratch, *slices = scratch + be_qconv_nhwc_copy(g, flags);
    for (long n = 0; n < g->N; n++) {
        const int8_t *xi = x + n * C * hw;
        for (long oy0 = 0; oy0 < g->OH; oy0 += band) {
            const long oy1 = oy0 + band < g->OH ? oy0 + band : g->OH, p0 = oy0 * g->OW, p1 = oy1 * g->OW;
            const long bp = (p1 - p0 + BE_QMR - 1) / BE_QMR;
            if (!direct)
                pad_copy_par(xi, in_nhwc, g, (int8_t)x_zp, oy0 * g->sh, be_qconv_nhwc_rows_in(g, oy1 - oy0), xp, nt);
            qconv_nhwc_call c = {xi, xp, bpack, y, slices, e, g, n, oy0, p0, p1, C, M, K, ohw, direct, out_nhwc};
            be_parallel(nt, bp, qconv_nhwc_jobs, &c);
        }
    }
}

#endif
