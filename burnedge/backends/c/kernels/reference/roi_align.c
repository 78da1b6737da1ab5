/* RoiAlign (sampling.h) as the reference (ops/image.py) computes it: per region and axis, the sample positions
 * start + bin * size + (g + 0.5) * size / grid; a sample outside [-1, dim] weighs nothing, one past the last
 * row/column clamps to it; the four corner weights are the bilinear ones. Sums run in double. */
#include "burnedge.h"
#include "sampling.h"

/* the low/high taps and their weights of sample g of bin p along one axis */
static void be__roi_tap(double start, double bin, long grid, long p, long g, long limit, long *lo, long *hi,
                        double *wlo, double *whi) {
    double pos = start + (double)p * bin + ((double)g + 0.5) * bin / (double)(grid > 1 ? grid : 1);
    const int valid = pos >= -1.0 && pos <= (double)limit;
    if (pos < 0) pos = 0;
    long l = (long)floor(pos);
    if (l >= limit - 1) {
        *lo = *hi = limit - 1;
        pos = (double)(limit - 1);
    } else {
        *lo = l, *hi = l + 1;
    }
    const double frac = pos - (double)*lo;
    *wlo = valid ? 1.0 - frac : 0.0;
    *whi = valid ? frac : 0.0;
}

#define BE_ROI_ALIGN(NAME, T)                                                                                      \
    int NAME(const T *x, const T *rois, const int64_t *batch, T *y, long n, long c, long h, long w, long nr,       \
             long oh, long ow, long sampling_ratio, double spatial_scale, int half_pixel, int mode, int threads) {  \
        for (long r = 0; r < nr; r++)                                                                              \
            if (batch[r] < 0 || batch[r] >= n) return 1;                                                           \
        const double off = half_pixel ? 0.5 : 0.0;                                                                 \
        BE_PARALLEL_FOR(threads > 1 && nr * c > 1)                                                                 \
        for (long rc = 0; rc < nr * c; rc++) {                                                                     \
            const long r = rc / c, ch = rc % c;                                                                    \
            const T *roi = rois + r * 4;                                                                           \
            const double x1 = (double)roi[0] * spatial_scale - off, y1 = (double)roi[1] * spatial_scale - off;     \
            double rw = (double)roi[2] * spatial_scale - off - x1, rh = (double)roi[3] * spatial_scale - off - y1; \
            if (!half_pixel) rw = rw > 1.0 ? rw : 1.0, rh = rh > 1.0 ? rh : 1.0;                                  \
            const long gh = sampling_ratio > 0 ? sampling_ratio : (long)ceil(rh / (double)oh);                     \
            const long gw = sampling_ratio > 0 ? sampling_ratio : (long)ceil(rw / (double)ow);                     \
            const double bh = rh / (double)oh, bw = rw / (double)ow, count = gh * gw > 1 ? (double)(gh * gw) : 1.0; \
            const T *img = x + (batch[r] * c + ch) * h * w;                                                        \
            T *out = y + rc * oh * ow;                                                                             \
            for (long py = 0; py < oh; py++)                                                                       \
                for (long px = 0; px < ow; px++) {                                                                 \
                    double acc = 0.0, best = -INFINITY;                                                            \
                    for (long iy = 0; iy < gh; iy++) {                                                             \
                        long ylo, yhi;                                                                             \
                        double wylo, wyhi;                                                                         \
                        be__roi_tap(y1, bh, gh, py, iy, h, &ylo, &yhi, &wylo, &wyhi);                              \
                        for (long ix = 0; ix < gw; ix++) {                                                         \
                            long xlo, xhi;                                                                         \
                            double wxlo, wxhi;                                                                     \
                            be__roi_tap(x1, bw, gw, px, ix, w, &xlo, &xhi, &wxlo, &wxhi);                          \
                            const double v[4] = {wylo * wxlo * (double)img[ylo * w + xlo],                         \
                                                 wylo * wxhi * (double)img[ylo * w + xhi],                         \
                                                 wyhi * wxlo * (double)img[yhi * w + xlo],                         \
                                                 wyhi * wxhi * (double)img[yhi * w + xhi]};                        \
                            for (int k = 0; k < 4; k++) {                                                          \
                                acc += v[k];                                                                       \
                                if (v[k] > best) best = v[k];                                                      \
                            }                                                                                      \
                        }                                                                                          \
                    }                                                                                              \
                    out[py * ow + px] = (T)(mode ? (best == -INFINITY ? 0.0 : best) : acc / count);                \
                }                                                                                                  \
        }                                                                                                          \
        return 0;                                                                                                  \
    }

BE_ROI_ALIGN(be_roi_align_f32, float)
BE_ROI_ALIGN(be_roi_align_f64, double)
