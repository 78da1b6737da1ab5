/* Random-input checks of the int8 kernels a Cortex-M kernel set overrides: every case runs the set's kernel and
 * the reference kernel (the reference set compiled a second time with its public names prefixed ref_) on the same
 * inputs, and compares every output byte, the gaps between rows included. Shapes, data and requantisation
 * parameters come from one xorshift stream (integers only), so the host build (CM_HOST: the reference set on
 * both sides) prints the same hashes of the reference outputs: the check of the device's reference against the
 * host's. Output, one line per kernel: "<kernel> cases=<n> bad=<mismatching cases> hash=<fnv-1a of outputs>". */
#include "qconv.h"
#include "rq32.h"

#ifdef CM_HOST
#include <stdio.h>
static void cm_puts(const char *s) { fputs(s, stdout); }
#else
void cm_puts(const char *s);
#endif

void ref_qgemm_i8(long M, long N, long K, const int8_t *a, long lda, int32_t a_zp, const int8_t *bpack, int8_t *y,
                  long ldy, const be_qepi *e, int16_t *scratch, int threads);
void ref_qgemv_i8(long M, long N, long K, const int8_t *a, long lda, const int8_t *bpack, int8_t *y, long ldy,
                  const be_qepi *e);
void ref_qconv_nhwc_i8(const int8_t *x, const int8_t *bpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                       int flags, int32_t x_zp, int8_t *scratch, int threads);
void ref_qdwconv_nhwc_i8(const int8_t *x, const float *wf, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                         int flags, int32_t x_zp, float *scratch, int threads);
void ref_qconv2d_i8(const int8_t *x, const int16_t *wpack, int8_t *y, const be_qepi *e, const be_qconv_geo *g,
                    int32_t x_zp, int8_t *scratch, int threads);

#ifndef CASES
#define CASES 40
#endif

static uint32_t rng = 0x9E3779B9u;
static uint32_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static int rnd(int n) { return (int)(next() % (uint32_t)n); }
static int range(int lo, int hi) { return lo + rnd(hi - lo + 1); } /* lo..hi */
/* an int8 zero point: the extremes a quarter of the time */
static int32_t zero_point(void) {
    const int r = rnd(8);
    return r == 0 ? -128 : r == 1 ? 127 : range(-128, 127);
}

#define BIG 32768
static int8_t X[BIG], WSRC[BIG], W8[2 * BIG], Y0[BIG], Y1[BIG];
static int16_t W16[BIG];
static float WF[BIG / 2];
static int32_t BIAS[1024], MULT[1024], SHIFT[1024], LIM[1024];
static int8_t SCRATCH[4 * BIG] __attribute__((aligned(64)));

static void fill(int8_t *p, long n) {
    const int r = rnd(10); /* now and then a constant extreme, so sums reach their largest magnitudes */
    for (long i = 0; i < n; i++) p[i] = (int8_t)(r == 0 ? -128 : r == 1 ? 127 : range(-128, 127));
}

/* an epilogue of n channels (arrays zero-padded to 16 more), parameters normalised as qgemm.h says */
static be_qepi epilogue(int n, int per_col) {
    be_qepi e;
    for (int c = 0; c < n + 16; c++) {
        int32_t m = (int32_t)((1u << 30) + (next() >> 2)), s;
        const int r = rnd(12);
        s = r == 0 ? range(1, 20) : r == 1 ? 62 : range(28, 44); /* saturating, vanishing, typical */
        if (r == 2 || c >= n) m = 0, s = 32;
        BIAS[c] = c >= n ? 0 : rnd(6) == 0 ? (int32_t)next() : range(-1 << 20, 1 << 20);
        MULT[c] = m, SHIFT[c] = s;
        LIM[c] = s <= 20 ? 1 : s <= 31 ? (int32_t)(1u << (s - 21)) : INT32_MAX;
    }
    e.bias = rnd(4) == 0 ? NULL : BIAS;
    e.mult = MULT, e.shift = SHIFT, e.lim = LIM;
    e.zp = zero_point();
    const int r = rnd(3);
    e.lo = r == 0 ? -128 : r == 1 ? e.zp : range(-128, 0);
    e.hi = r == 0 ? 127 : range(e.lo, 127);
    e.per_col = per_col;
    return e;
}

/* B panels of the K x N matrix B(k, n) = src[k * N + n] (qgemm.h) */
static void pack_b(const int8_t *src, long K, long N, int8_t *dst) {
    const long k2 = (K + 1) / 2, np = (N + BE_QNR - 1) / BE_QNR;
    for (long q = 0; q < np; q++)
        for (long kp = 0; kp < k2; kp++)
            for (long c = 0; c < BE_QNR; c++)
                for (int j = 0; j < 2; j++) {
                    const long k = 2 * kp + j, n = q * BE_QNR + c;
                    dst[(q * k2 + kp) * 32 + 2 * c + j] = (int8_t)(k < K && n < N ? src[k * N + n] : 0);
                }
}

static uint32_t hash = 2166136261u;
static int compare(long n) {
    int bad = 0;
    for (long i = 0; i < n; i++) {
        bad |= Y0[i] != Y1[i];
        hash = (hash ^ (uint8_t)Y0[i]) * 16777619u;
    }
    return bad;
}
static void prepare(long n) {
    for (long i = 0; i < n; i++) Y0[i] = Y1[i] = 0x55;
}

static void report(const char *name, int cases, int bad) {
    char line[96], *p = line;
    for (const char *s = name; *s; s++) *p++ = *s;
    const char *f1 = " cases=";
    for (const char *s = f1; *s; s++) *p++ = *s;
    char num[12];
    int n = 0, v = cases;
    do num[n++] = (char)('0' + v % 10); while ((v /= 10) > 0);
    while (n) *p++ = num[--n];
    const char *f2 = " bad=";
    for (const char *s = f2; *s; s++) *p++ = *s;
    v = bad;
    do num[n++] = (char)('0' + v % 10); while ((v /= 10) > 0);
    while (n) *p++ = num[--n];
    const char *f3 = " hash=";
    for (const char *s = f3; *s; s++) *p++ = *s;
    for (int i = 7; i >= 0; i--) *p++ = "0123456789abcdef"[(hash >> (4 * i)) & 15];
    *p++ = '\n', *p = 0;
    cm_puts(line);
    hash = 2166136261u;
}

static int check_qgemm(void) {
    int bad = 0, cases = 0;
    while (cases < CASES) {
        const long M = rnd(3) == 0 ? 1 : range(1, 14), N = range(1, 40);
        const long K = rnd(8) == 0 ? range(200, 700) : range(1, 80), lda = K + rnd(3), ldy = N + rnd(3);
        if (M * lda > BIG || M * ldy > BIG || K * N > BIG) continue;
        cases++;
        fill(X, M * lda);
        fill(WSRC, K * N);
        pack_b(WSRC, K, N, W8);
        const be_qepi e = epilogue((int)N, 1);
        const int32_t zp = rnd(3) == 0 ? 0 : zero_point();
        prepare(M * ldy);
        ref_qgemm_i8(M, N, K, X, lda, zp, W8, Y0, ldy, &e, (int16_t *)SCRATCH, 1);
        be_qgemm_i8(M, N, K, X, lda, zp, W8, Y1, ldy, &e, (int16_t *)SCRATCH, 1);
        bad += compare(M * ldy);
    }
    report("qgemm_i8", cases, bad);
    return bad;
}

/* a lean plan's dense layers: a few rows straight from A (no zero point: the lowering folds it) */
static int check_qgemv(void) {
    int bad = 0, cases = 0;
    while (cases < CASES) {
        const long M = rnd(2) ? 1 : range(1, 13), N = range(1, 40);
        const long K = rnd(4) == 0 ? range(200, 700) : range(1, 80), lda = K + rnd(3), ldy = N + rnd(3);
        if (M * lda > BIG || M * ldy > BIG || K * N > BIG) continue;
        cases++;
        fill(X, M * lda);
        fill(WSRC, K * N);
        pack_b(WSRC, K, N, W8);
        const be_qepi e = epilogue((int)N, rnd(4) != 0);
        prepare(M * ldy);
        ref_qgemv_i8(M, N, K, X, lda, W8, Y0, ldy, &e);
        be_qgemv_i8(M, N, K, X, lda, W8, Y1, ldy, &e);
        bad += compare(M * ldy);
    }
    report("qgemv_i8", cases, bad);
    return bad;
}

/* a random conv geometry of one group (dw: depthwise, M = C = G); 0 when it does not fit the buffers */
static int geometry(be_qconv_geo *g, int dw) {
    g->N = rnd(4) == 0 ? 2 : 1;
    g->C = dw ? range(1, 40) : range(1, 24);
    g->M = dw ? g->C : range(1, 24);
    g->G = dw ? g->C : 1;
    const int r = rnd(6);
    g->KH = r == 0 ? 1 : r == 1 ? range(4, 10) : range(1, 3); /* 1x1, a keyword-spotting stem (10x4), 3x3 */
    g->KW = r == 0 ? 1 : r == 1 ? range(1, 4) : range(1, 3);
    g->sh = range(1, 2), g->sw = range(1, 2);
    g->dh = rnd(5) == 0 ? 2 : 1, g->dw = rnd(5) == 0 ? 2 : 1;
    g->ph = rnd(2) ? 0 : range(0, g->KH - 1), g->pw = rnd(2) ? 0 : range(0, g->KW - 1);
    g->H = range(1, 12), g->W = range(1, 12);
    const int eh = range(0, g->ph), ew = range(0, g->pw);
    const int fh = (g->H + g->ph + eh - ((g->KH - 1) * g->dh + 1)), fw = (g->W + g->pw + ew - ((g->KW - 1) * g->dw + 1));
    if (fh < 0 || fw < 0) return 0;
    g->OH = fh / g->sh + 1, g->OW = fw / g->sw + 1;
    g->band = rnd(2) ? 0 : range(1, 3); /* the kernel's own bands, or a lean plan's few rows */
    return (long)g->N * g->C * g->H * g->W <= BIG && (long)g->N * g->M * g->OH * g->OW <= BIG;
}

static int check_qconv_nhwc(void) {
    int bad = 0, cases = 0;
    while (cases < CASES) {
        be_qconv_geo g;
        if (!geometry(&g, 0)) continue;
        const long K = (long)g.C * g.KH * g.KW;
        const int flags = rnd(4);
        if (K * g.M > BIG || be_qconv_nhwc_scratch(&g, flags) > (long)sizeof(SCRATCH)) continue;
        cases++;
        fill(X, (long)g.N * g.C * g.H * g.W);
        fill(WSRC, K * g.M);
        pack_b(WSRC, K, g.M, W8);
        const be_qepi e = epilogue(g.M, 1);
        const int32_t zp = zero_point();
        const long ny = (long)g.N * g.M * g.OH * g.OW;
        prepare(ny);
        ref_qconv_nhwc_i8(X, W8, Y0, &e, &g, flags, zp, SCRATCH, 1);
        be_qconv_nhwc_i8(X, W8, Y1, &e, &g, flags, zp, SCRATCH, 1);
        bad += compare(ny);
    }
    report("qconv_nhwc_i8", cases, bad);
    return bad;
}

static int check_qdwconv_nhwc(void) {
    int bad = 0, cases = 0;
    while (cases < CASES) {
        be_qconv_geo g;
        if (!geometry(&g, 1)) continue;
        const long taps = (long)g.KH * g.KW, c8 = (g.C + 7) / 8 * 8;
        if (taps * c8 > BIG / 2 || be_qdw_nhwc_scratch(&g) * 4 > (long)sizeof(SCRATCH)) continue;
        cases++;
        fill(X, (long)g.N * g.C * g.H * g.W);
        fill(W8, taps * g.C);
        for (long t = 0; t < taps; t++)
            for (long c = 0; c < c8; c++) WF[t * c8 + c] = c < g.C ? (float)W8[c * taps + t] : 0.0f;
        const be_qepi e = epilogue(g.C, 1);
        const int flags = rnd(4);
        const int32_t zp = zero_point();
        const long ny = (long)g.N * g.C * g.OH * g.OW;
        prepare(ny);
        ref_qdwconv_nhwc_i8(X, WF, Y0, &e, &g, flags, zp, (float *)SCRATCH, 1);
        be_qdwconv_nhwc_i8(X, WF, Y1, &e, &g, flags, zp, (float *)SCRATCH, 1);
        bad += compare(ny);
    }
    report("qdwconv_nhwc_i8", cases, bad);
    return bad;
}

/* the NCHW GEMM conv: weights as A panels of int16 pairs, per group (qconv.h), channels are rows */
static int check_qconv_nchw(void) {
    int bad = 0, cases = 0;
    while (cases < CASES) {
        be_qconv_geo g;
        if (!geometry(&g, 0)) continue;
        g.G = rnd(3) == 0 ? 2 : 1;
        if (g.C % g.G || g.M % g.G) continue;
        const int cg = g.C / g.G, mg = g.M / g.G;
        const long K = (long)cg * g.KH * g.KW, k2 = (K + 1) / 2, mp = (mg + BE_QMR - 1) / BE_QMR;
        if (g.G * mp * BE_QMR * k2 * 2 > BIG || be_qconv_scratch(&g) > (long)sizeof(SCRATCH)) continue;
        cases++;
        fill(X, (long)g.N * g.C * g.H * g.W);
        fill(W8, (long)g.M * K);
        for (long gi = 0; gi < g.G; gi++)
            for (long p = 0; p < mp; p++)
                for (long kp = 0; kp < k2; kp++)
                    for (long r = 0; r < BE_QMR; r++)
                        for (int j = 0; j < 2; j++) {
                            const long m = p * BE_QMR + r, k = 2 * kp + j;
                            W16[((gi * mp + p) * k2 + kp) * BE_QMR * 2 + r * 2 + j] =
                                (int16_t)(m < mg && k < K ? W8[(gi * mg + m) * K + k] : 0);
                        }
        const be_qepi e = epilogue(g.M, 0);
        const int32_t zp = zero_point();
        const long ny = (long)g.N * g.M * g.OH * g.OW;
        prepare(ny);
        ref_qconv2d_i8(X, W16, Y0, &e, &g, zp, SCRATCH, 1);
        be_qconv2d_i8(X, W16, Y1, &e, &g, zp, SCRATCH, 1);
        bad += compare(ny);
    }
    report("qconv2d_i8", cases, bad);
    return bad;
}

/* the 32-bit form of the requantisation rule against the rule, over every shift and the accumulator's extremes */
static int check_rq32(void) {
    int bad = 0;
    for (int t = 0; t < 400 * CASES; t++) {
        const int32_t s = range(1, 62), m = rnd(16) == 0 ? (int32_t)(1u << 30) : (int32_t)((1u << 30) + (next() >> 2));
        const int32_t lim = s <= 20 ? 1 : s <= 31 ? (int32_t)(1u << (s - 21)) : INT32_MAX;
        const int r = rnd(8);
        const int32_t near = range(-400, 400) * (1 << (s > 30 && s < 52 ? s - 30 : 0)); /* results near int8's range */
        const int32_t acc = r == 0 ? INT32_MIN : r == 1 ? INT32_MAX : r < 6 ? near : (int32_t)next();
        const int wide = rnd(4) != 0; /* mostly the whole int8 range, so that few results are clamped */
        const int32_t zp = wide ? range(-16, 16) : zero_point(), lo = wide ? -128 : range(-128, 0);
        const int32_t hi = wide ? 127 : range(lo, 127);
        const int8_t want = be_rq1(acc, m, s, lim, zp, lo, hi);
        bad += want != be_rq1_32(acc, m, s, lim, zp, lo, hi);
        hash = (hash ^ (uint8_t)want) * 16777619u;
    }
    report("rq32", 400 * CASES, bad);
    return bad;
}

int main(void) {
    int bad = check_rq32();
    bad += check_qgemm();
    bad += check_qgemv();
    bad += check_qconv_nhwc();
    bad += check_qdwconv_nhwc();
    bad += check_qconv_nchw();
    cm_puts(bad ? "FAIL\n" : "PASS\n");
    return bad != 0;
}
