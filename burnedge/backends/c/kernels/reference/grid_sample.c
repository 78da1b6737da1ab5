/* GridSample (misc.h) as the reference computes it: per output point and spatial dim, the sampling position
 * (rounded to float32 like the reference, then double), the padding rule applied to the position and then to the
 * taps, and 1 (nearest), 2 (linear) or 4 (cubic, Keys a = -0.75) taps with their weights; the output is the sum
 * over every combination of taps of the product of their weights times the input, for each channel. */
#include "burnedge.h"
#include "misc.h"

#define BE_GS_MAXR 3

/* x reflected into [lo, hi] by the nearest border, repeatedly */
static double be__gs_reflect(double x, double lo, double hi) {
    double rng = hi - lo;
    if (rng <= 0) return lo;
    if (x >= lo && x <= hi) return x;
    double dx = x < lo ? lo - x : x - hi, k = floor(dx / rng), r = dx - k * rng;
    int even = fmod(k, 2.0) == 0.0;
    if (x < lo) return even ? lo + r : hi - r;
    return even ? hi - r : lo + r;
}

static void be__gs_cubic(double t, double *w) {
    const double a = -0.75, d[4] = {t + 1, t, 1 - t, 2 - t};
    for (int k = 0; k < 4; k++) {
        double v = d[k];
        w[k] = v <= 1 ? ((a + 2) * v - (a + 3)) * v * v + 1 : ((a * v - 5 * a) * v + 8 * a) * v - 4 * a;
    }
}

/* the taps (input offsets along one dim, times its stride) and weights of one coordinate g in [-1, 1] */
static int be__gs_taps(double g, long d, long stride, int mode, int pad, int align, long *off, double *w) {
    double lo = align ? 0.0 : -0.5, hi = align ? (double)d - 1 : (double)d - 0.5;
    double pos = align ? (g + 1) / 2 * ((double)d - 1) : ((g + 1) * (double)d - 1) / 2;
    pos = (double)(float)pos;
    if (mode == 0) pos = nearbyint(pos);
    if (pad == 1 && (pos < lo || pos > hi)) pos = pos < 0 ? 0 : (pos > (double)d - 1 ? (double)d - 1 : pos);
    if (pad == 2) pos = be__gs_reflect(pos, lo, hi);
    double idx[4];
    int n;
    if (mode == 0) {
        n = 1, idx[0] = trunc(pos), w[0] = 1.0;
    } else {
        double base = floor(pos), t = pos - base;
        if (mode == 1) {
            n = 2, idx[0] = base, idx[1] = base + 1, w[0] = 1 - t, w[1] = t;
        } else {
            n = 4;
            for (int k = 0; k < 4; k++) idx[k] = base - 1 + k;
            be__gs_cubic(t, w);
        }
    }
    for (int k = 0; k < n; k++) {
        double v = idx[k];
        if (pad == 0 && (v < 0 || v >= (double)d)) w[k] = 0.0;
        if (pad == 2) v = trunc(be__gs_reflect(v, lo, hi));
        v = v < 0 ? 0 : (v > (double)d - 1 ? (double)d - 1 : v);
        off[k] = (long)v * stride;
    }
    return n;
}

#define BE_GRID_SAMPLE(NAME, T)                                                                                \
    int NAME(const T *x, const T *grid, T *y, long n, long c, int r, const long *dims, long points, int mode,     \
             int pad, int align, int threads) {                                                                  \
        if (r < 1 || r > BE_GS_MAXR) return 1;                                                                   \
        long plane = 1, strides[BE_GS_MAXR];                                                                     \
        for (int i = r - 1; i >= 0; i--) strides[i] = plane, plane *= dims[i];                                   \
        BE_PARALLEL_FOR(threads > 1 && n * points > 1024)                                                       \
        for (long np_ = 0; np_ < n * points; np_++) {                                                            \
            long b = np_ / points, p = np_ % points;                                                             \
            const T *g = grid + np_ * r;                                                                         \
            long off[BE_GS_MAXR][4], cnt[BE_GS_MAXR] = {1, 1, 1};                                                \
            double w[BE_GS_MAXR][4];                                                                             \
            for (int i = 0; i < r; i++) /* grid's last axis lists the spatial dims innermost first */           \
                cnt[i] = be__gs_taps((double)g[r - 1 - i], dims[i], strides[i], mode, pad, align, off[i], w[i]); \
            for (int i = r; i < BE_GS_MAXR; i++) off[i][0] = 0, w[i][0] = 1.0;                                   \
            for (long ch = 0; ch < c; ch++) {                                                                    \
                const T *xc = x + (b * c + ch) * plane;                                                          \
                double acc = 0.0;                                                                                \
                for (long k0 = 0; k0 < cnt[0]; k0++)                                                             \
                    for (long k1 = 0; k1 < cnt[1]; k1++)                                                         \
                        for (long k2 = 0; k2 < cnt[2]; k2++)                                                     \
                            acc += w[0][k0] * w[1][k1] * w[2][k2] * (double)xc[off[0][k0] + off[1][k1] + off[2][k2]]; \
                y[(b * c + ch) * points + p] = (T)acc;                                                           \
            }                                                                                                    \
        }                                                                                                        \
        return 0;                                                                                                \
    }

BE_GRID_SAMPLE(be_grid_sample_f32, float)
BE_GRID_SAMPLE(be_grid_sample_f64, double)
