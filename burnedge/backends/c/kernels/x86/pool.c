/* Pooling kernels: MaxPool, AveragePool (NCHW, 1D as one row), GlobalAveragePool, GlobalMaxPool.
 *
 * Windowed pools, per plane and output row (separable, "vertical first"):
 *   1. the kernel rows of this output row that fall inside the input are reduced (max or sum) column by column
 *      into a row buffer that also holds the left/right padding (-inf / lowest for max, 0 for sums);
 *   2. each output of the row reduces kernel-width taps of that buffer: stride 1 walks it contiguously (the
 *      compiler vectorises it), stride 2 deinterleaves even columns with AVX2, other strides are scalar;
 *   3. averages divide by the count of taps inside the counting region (rows times columns: it is a box).
 * Rows wider than the buffer take a direct path that visits the valid taps of each window.
 * Planes are independent: threads split them, each output written by one thread.
 * Global pools reduce each plane with 8 (AVX2: 32) independent accumulators.
 */
#include "burnedge.h"
#include "pool.h"
#include "x86_simd.h"


#ifndef BE_POOL_ROW
#define BE_POOL_ROW 1024 /* widest padded row the buffered path takes (two such arrays live on the stack) */
#endif

/* the kernel taps [*a, *b) of the window starting at `start` whose positions lie in [lo, hi) */
static inline void be__taps(int start, int k, int d, int lo, int hi, int *a, int *b) {
    int i = 0, j = k;
    while (i < k && start + i * d < lo) i++;
    while (j > i && start + (j - 1) * d >= hi) j--;
    *a = i;
    *b = j;
}

/* p[0], p[2], ..., p[14] */
static inline __m256 be__even8(const float *p) {
    __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), 0x88);
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
}

#define BE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define BE_ADD(a, b) ((a) + (b))

/* horizontal step: y[o] = OP over kx of buf[o*sw + kx*dw] */
#define BE_HORIZ(NAME, T, OP)                                                                                  \
    static void NAME(const T *buf, T *y, int ow, int kw, int sw, int dw) {                                    \
        if (sw == 1) {                                                                                         \
            for (int o = 0; o < ow; o++) y[o] = buf[o];                                                        \
            for (int k = 1; k < kw; k++) {                                                                     \
                const T *b = buf + k * dw;                                                                     \
                for (int o = 0; o < ow; o++) y[o] = OP(y[o], b[o]);                                            \
            }                                                                                                  \
            return;                                                                                            \
        }                                                                                                      \
        for (int o = 0; o < ow; o++) {                                                                         \
            const T *b = buf + (long)o * sw;                                                                   \
            T m = b[0];                                                                                        \
            for (int k = 1; k < kw; k++) m = OP(m, b[k * dw]);                                                 \
            y[o] = m;                                                                                          \
        }                                                                                                      \
    }

BE_HORIZ(be__hmax_f32, float, BE_MAX)
BE_HORIZ(be__hmax_i8, int8_t, BE_MAX)
BE_HORIZ(be__hmax_u8, uint8_t, BE_MAX)
BE_HORIZ(be__hsum_f32, float, BE_ADD)

/* float horizontal step with the AVX2 stride-2 path; `sum` picks add over max */
static void be__horiz_f32(const float *buf, float *y, int ow, int kw, int sw, int dw, int sum, int simd) {
    if (simd && sw == 2) {
        int o = 0;
        for (; o + 8 <= ow; o += 8) {
            const float *b = buf + 2 * o;
            __m256 m = be__even8(b);
            for (int k = 1; k < kw; k++)
                m = sum ? _mm256_add_ps(m, be__even8(b + k * dw)) : _mm256_max_ps(be__even8(b + k * dw), m);
            _mm256_storeu_ps(y + o, m);
        }
        if (o < ow) (sum ? be__hsum_f32 : be__hmax_f32)(buf + 2 * o, y + o, ow - o, kw, sw, dw);
        return;
    }
    (void)simd;
    (sum ? be__hsum_f32 : be__hmax_f32)(buf, y, ow, kw, sw, dw);
}

/* one plane of a max pool through the row buffer; HORIZ(buf, yrow, ow, kw, sw, dw) does step 2 */
#define BE_MAXPOOL_PLANE(NAME, T, LOWEST, HORIZ)                                                               \
    static void NAME(const T *x, T *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw, int dh, \
                     int dw, int ph, int pw, int simd) {                                                       \
        T buf[BE_POOL_ROW + 32];                                                                               \
        int len = (ow - 1) * sw + (kw - 1) * dw + 1;                                                           \
        int jlo = pw < 0 ? 0 : pw < len ? pw : len; /* buf[j] is column j - pw */                            \
        int jhi = pw + iw < len ? pw + iw : len;                                                               \
        if (jhi < jlo) jhi = jlo;                                                                              \
        for (int j = 0; j < jlo; j++) buf[j] = LOWEST;                                                         \
        for (int j = jhi; j < len + 32; j++) buf[j] = LOWEST;                                                  \
        for (int oy = 0; oy < oh; oy++) {                                                                      \
            int a, b, start = oy * sh - ph;                                                                    \
            be__taps(start, kh, dh, 0, ih, &a, &b);                                                            \
            T *r = buf + jlo;                                                                                  \
            int n = jhi - jlo;                                                                                 \
            if (a == b) {                                                                                      \
                for (int j = 0; j < n; j++) r[j] = LOWEST;                                                     \
            } else {                                                                                           \
                const T *src = x + (long)(start + a * dh) * iw + (jlo - pw);                                   \
                for (int j = 0; j < n; j++) r[j] = src[j];                                                     \
                for (int k = a + 1; k < b; k++) {                                                              \
                    const T *s = x + (long)(start + k * dh) * iw + (jlo - pw);                                 \
                    for (int j = 0; j < n; j++) r[j] = BE_MAX(r[j], s[j]);                                     \
                }                                                                                              \
            }                                                                                                  \
            HORIZ;                                                                                             \
        }                                                                                                      \
    }

/* one plane of a max pool, visiting each window's valid taps (any row width) */
#define BE_MAXPOOL_DIRECT(NAME, T, LOWEST)                                                                     \
    static void NAME(const T *x, T *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw, int dh, \
                     int dw, int ph, int pw) {                                                                 \
        for (int oy = 0; oy < oh; oy++) {                                                                      \
            int ya, yb, ys = oy * sh - ph;                                                                     \
            be__taps(ys, kh, dh, 0, ih, &ya, &yb);                                                             \
            for (int ox = 0; ox < ow; ox++) {                                                                  \
                int xa, xb, xs = ox * sw - pw;                                                                 \
                be__taps(xs, kw, dw, 0, iw, &xa, &xb);                                                         \
                T m = LOWEST;                                                                                  \
                for (int ky = ya; ky < yb; ky++)                                                               \
                    for (int kx = xa; kx < xb; kx++) {                                                         \
                        T v = x[(long)(ys + ky * dh) * iw + xs + kx * dw];                                     \
                        m = BE_MAX(v, m);                                                                      \
                    }                                                                                          \
                y[(long)oy * ow + ox] = m;                                                                     \
            }                                                                                                  \
        }                                                                                                      \
    }

BE_MAXPOOL_PLANE(be__maxplane_f32, float, -INFINITY, be__horiz_f32(buf, y + (long)oy * ow, ow, kw, sw, dw, 0, simd))
BE_MAXPOOL_PLANE(be__maxplane_i8, int8_t, INT8_MIN, be__hmax_i8(buf, y + (long)oy * ow, ow, kw, sw, dw))
BE_MAXPOOL_PLANE(be__maxplane_u8, uint8_t, 0, be__hmax_u8(buf, y + (long)oy * ow, ow, kw, sw, dw))
BE_MAXPOOL_DIRECT(be__maxdirect_f32, float, -INFINITY)
BE_MAXPOOL_DIRECT(be__maxdirect_i8, int8_t, INT8_MIN)
BE_MAXPOOL_DIRECT(be__maxdirect_u8, uint8_t, 0)

#define BE_MAXPOOL(NAME, T, SUFFIX, SIMD)                                                                      \
    void NAME(const T *x, T *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw,       \
              int dh, int dw, int ph, int pw, int threads) {                                                   \
        int buffered = (long)(ow - 1) * sw + (long)(kw - 1) * dw + 1 <= BE_POOL_ROW;                           \
        BE_PARALLEL_FOR(threads > 1 && nc > 1)                                                                \
        for (long p = 0; p < nc; p++) {                                                                        \
            const T *xp = x + p * ih * iw;                                                                     \
            T *yp = y + p * oh * ow;                                                                           \
            if (buffered)                                                                                      \
                be__maxplane_##SUFFIX(xp, yp, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, SIMD);           \
            else                                                                                               \
                be__maxdirect_##SUFFIX(xp, yp, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw);                \
        }                                                                                                      \
    }

BE_MAXPOOL(be_maxpool2d_f32, float, f32, 1)
BE_MAXPOOL(be_maxpool2d_f32_portable, float, f32, 0)
BE_MAXPOOL(be_maxpool2d_i8, int8_t, i8, 0)
BE_MAXPOOL(be_maxpool2d_u8, uint8_t, u8, 0)

/* one plane of an average pool; `div` holds the per-column tap counts of the counting region */
static void be__avgplane(const float *x, float *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw,
                         int dh, int dw, int ph, int pw, int clo_h, int chi_h, const int *cnt_w, int simd) {
    float buf[BE_POOL_ROW + 32];
    int len = (ow - 1) * sw + (kw - 1) * dw + 1;
    int jlo = pw < 0 ? 0 : pw < len ? pw : len, jhi = pw + iw < len ? pw + iw : len;
    if (jhi < jlo) jhi = jlo;
    for (int j = 0; j < jlo; j++) buf[j] = 0.0f;
    for (int j = jhi; j < len + 32; j++) buf[j] = 0.0f;
    for (int oy = 0; oy < oh; oy++) {
        int a, b, ca, cb, start = oy * sh - ph;
        be__taps(start, kh, dh, 0, ih, &a, &b);
        be__taps(start, kh, dh, clo_h, chi_h, &ca, &cb);
        float *r = buf + jlo;
        int n = jhi - jlo;
        for (int j = 0; j < n; j++) r[j] = 0.0f;
        for (int k = a; k < b; k++) {
            const float *s = x + (long)(start + k * dh) * iw + (jlo - pw);
            for (int j = 0; j < n; j++) r[j] += s[j];
        }
        float *yr = y + (long)oy * ow;
        be__horiz_f32(buf, yr, ow, kw, sw, dw, 1, simd);
        int rows = cb - ca;
        for (int o = 0; o < ow; o++) yr[o] = yr[o] / (float)(rows * cnt_w[o]);
    }
}

static void be__avgdirect(const float *x, float *y, int ih, int iw, int oh, int ow, int kh, int kw, int sh, int sw,
                          int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w) {
    for (int oy = 0; oy < oh; oy++) {
        int ya, yb, ca, cb, ys = oy * sh - ph;
        be__taps(ys, kh, dh, 0, ih, &ya, &yb);
        be__taps(ys, kh, dh, clo_h, chi_h, &ca, &cb);
        for (int ox = 0; ox < ow; ox++) {
            int xa, xb, wa, wb, xs = ox * sw - pw;
            be__taps(xs, kw, dw, 0, iw, &xa, &xb);
            be__taps(xs, kw, dw, clo_w, chi_w, &wa, &wb);
            float s = 0.0f;
            for (int ky = ya; ky < yb; ky++)
                for (int kx = xa; kx < xb; kx++) s += x[(long)(ys + ky * dh) * iw + xs + kx * dw];
            y[(long)oy * ow + ox] = s / (float)((cb - ca) * (wb - wa));
        }
    }
}

static void be__avgpool(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                        int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w,
                        int threads, int simd) {
    int buffered = (long)(ow - 1) * sw + (long)(kw - 1) * dw + 1 <= BE_POOL_ROW;
    BE_PARALLEL_FOR(threads > 1 && nc > 1)
    for (long p = 0; p < nc; p++) {
        const float *xp = x + p * ih * iw;
        float *yp = y + p * oh * ow;
        if (!buffered) {
            be__avgdirect(xp, yp, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w);
            continue;
        }
        int cnt[BE_POOL_ROW];
        for (int o = 0; o < ow; o++) {
            int a, b;
            be__taps(o * sw - pw, kw, dw, clo_w, chi_w, &a, &b);
            cnt[o] = b - a;
        }
        be__avgplane(xp, yp, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, cnt, simd);
    }
}

void be_avgpool2d_f32(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                      int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w,
                      int threads) {
    be__avgpool(x, y, nc, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w, threads, 1);
}

void be_avgpool2d_f32_portable(const float *x, float *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw,
                               int sh, int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w,
                               int chi_w, int threads) {
    be__avgpool(x, y, nc, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w, threads, 0);
}

/* -- global pools ---------------------------------------------------------------------------------------------- */
static float be__plane_sum(const float *x, long n, int simd) {
    long i = 0;
    float s = 0.0f;
    if (simd && n >= 8) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (; i + 32 <= n; i += 32) {
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
        }
        for (; i + 8 <= n; i += 8) a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        __m256 t = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
        __m128 h = _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
        h = _mm_add_ps(h, _mm_movehl_ps(h, h));
        h = _mm_add_ss(h, _mm_movehdup_ps(h));
        s = _mm_cvtss_f32(h);
    }
    (void)simd;
    float acc[8] = {0};
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += x[i + k];
    for (; i < n; i++) acc[0] += x[i];
    return s + ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

static float be__plane_max(const float *x, long n, int simd) {
    long i = 0;
    float m = -INFINITY;
    if (simd && n >= 8) {
        __m256 a0 = _mm256_set1_ps(-INFINITY), a1 = a0;
        for (; i + 16 <= n; i += 16) {
            a0 = _mm256_max_ps(_mm256_loadu_ps(x + i), a0);
            a1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), a1);
        }
        for (; i + 8 <= n; i += 8) a0 = _mm256_max_ps(_mm256_loadu_ps(x + i), a0);
        __m256 t = _mm256_max_ps(a0, a1);
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        h = _mm_max_ss(h, _mm_movehdup_ps(h));
        m = _mm_cvtss_f32(h);
    }
    (void)simd;
    for (; i < n; i++) m = BE_MAX(x[i], m);
    return m;
}

#define BE_GLOBAL(NAME, T, EXPR)                                                                               \
    void NAME(const T *x, T *y, long nc, long size, int threads) {                                            \
        BE_PARALLEL_FOR(threads > 1 && nc * size > 32768)                                                     \
        for (long p = 0; p < nc; p++) {                                                                        \
            const T *xp = x + p * size;                                                                        \
            y[p] = EXPR;                                                                                       \
        }                                                                                                      \
    }

static inline int8_t be__max_i8(const int8_t *x, long n) {
    int8_t m = INT8_MIN;
    for (long i = 0; i < n; i++) m = BE_MAX(x[i], m);
    return m;
}

static inline uint8_t be__max_u8(const uint8_t *x, long n) {
    uint8_t m = 0;
    for (long i = 0; i < n; i++) m = BE_MAX(x[i], m);
    return m;
}

BE_GLOBAL(be_global_avgpool_f32, float, be__plane_sum(xp, size, 1) / (float)size)
BE_GLOBAL(be_global_avgpool_f32_portable, float, be__plane_sum(xp, size, 0) / (float)size)
BE_GLOBAL(be_global_maxpool_f32, float, be__plane_max(xp, size, 1))
BE_GLOBAL(be_global_maxpool_f32_portable, float, be__plane_max(xp, size, 0))
BE_GLOBAL(be_global_maxpool_i8, int8_t, be__max_i8(xp, size))
BE_GLOBAL(be_global_maxpool_u8, uint8_t, be__max_u8(xp, size))
