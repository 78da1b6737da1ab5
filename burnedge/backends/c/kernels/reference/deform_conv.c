/* DeformConv (sampling.h) as the reference (ops/conv.py) computes it, in double: the deformed columns first
 * (each (offset group, kernel position, output position) finds its 2^nsp interpolation corners once and applies
 * them to every channel of its group), then one matrix product per group and image. */
#include "burnedge.h"
#include "sampling.h"

#define BE_DC_MAXSP 3

/* the flat indices and weights of the interpolation corners of `pos` (nsp coordinates); returns their count */
static int be__dc_corners(const double *pos, int nsp, const long *sp, long *idx, double *wt) {
    long lo[BE_DC_MAXSP];
    double fr[BE_DC_MAXSP];
    for (int a = 0; a < nsp; a++) {
        const double f = floor(pos[a]);
        lo[a] = (long)f, fr[a] = pos[a] - f;
    }
    int count = 0;
    for (int corner = 0; corner < (1 << nsp); corner++) {
        long flat = 0;
        double weight = 1.0;
        int valid = 1;
        for (int a = 0; a < nsp; a++) {
            const int up = (corner >> (nsp - 1 - a)) & 1;
            const long p = lo[a] + up;
            valid &= p >= 0 && p < sp[a];
            weight *= up ? fr[a] : 1.0 - fr[a];
            flat = flat * sp[a] + p;
        }
        if (valid) idx[count] = flat, wt[count] = weight, count++;
    }
    return count;
}

#define BE_DEFORM_CONV(NAME, T)                                                                                    \
    void NAME(const T *x, const T *w, const T *offset, const T *bias, const T *mask, T *y, long n, long c, long m, \
              int nsp, const long *sp, const long *kernel, const long *out, const long *strides,                   \
              const long *dilations, const long *begin, long group, long offset_groups, double *cols,              \
              int threads) {                                                                                       \
        long k = 1, len = 1, img = 1;                                                                              \
        for (int a = 0; a < nsp; a++) k *= kernel[a], len *= out[a], img *= sp[a];                                 \
        const long cpo = c / offset_groups, cpg = c / group, mpg = m / group;                                      \
        for (long b = 0; b < n; b++) {                                                                             \
            const T *xb = x + b * c * img;                                                                         \
            BE_PARALLEL_FOR(threads > 1 && offset_groups * k > 1)                                                  \
            for (long gk = 0; gk < offset_groups * k; gk++) {                                                      \
                const long g = gk / k, kk = gk % k;                                                                \
                long kpos[BE_DC_MAXSP], rest = kk;                                                                 \
                for (int a = nsp - 1; a >= 0; a--) kpos[a] = rest % kernel[a], rest /= kernel[a];                  \
                const T *ob = offset + ((b * offset_groups + g) * k + kk) * nsp * len;                             \
                for (long l = 0; l < len; l++) {                                                                   \
                    double pos[BE_DC_MAXSP], wt[1 << BE_DC_MAXSP];                                                 \
                    long idx[1 << BE_DC_MAXSP], r = l;                                                             \
                    for (int a = nsp - 1; a >= 0; a--) {                                                           \
                        const long o = r % out[a];                                                                 \
                        r /= out[a];                                                                               \
                        pos[a] = (double)(o * strides[a] - begin[a] + kpos[a] * dilations[a]) +                   \
                                 (double)ob[a * len + l];                                                          \
                    }                                                                                              \
                    const int nc = be__dc_corners(pos, nsp, sp, idx, wt);                                          \
                    const double scale = mask ? (double)mask[((b * offset_groups + g) * k + kk) * len + l] : 1.0;  \
                    for (long ch = g * cpo; ch < (g + 1) * cpo; ch++) {                                            \
                        double v = 0.0;                                                                            \
                        for (int q = 0; q < nc; q++) v += wt[q] * (double)xb[ch * img + idx[q]];                  \
                        cols[(ch * k + kk) * len + l] = v * scale;                                                 \
                    }                                                                                              \
                }                                                                                                  \
            }                                                                                                      \
            BE_PARALLEL_FOR(threads > 1 && m > 1)                                                                  \
            for (long oc = 0; oc < m; oc++) {                                                                      \
                const long g = oc / mpg;                                                                           \
                const T *wr = w + oc * cpg * k;                                                                    \
                const double *cg = cols + g * cpg * k * len;                                                       \
                for (long l = 0; l < len; l++) {                                                                   \
                    double acc = bias ? (double)bias[oc] : 0.0;                                                    \
                    for (long e = 0; e < cpg * k; e++) acc += (double)wr[e] * cg[e * len + l];                     \
                    y[(b * m + oc) * len + l] = (T)acc;                                                            \
                }                                                                                                  \
            }                                                                                                      \
        }                                                                                                          \
    }

BE_DEFORM_CONV(be_deform_conv_f32, float)
BE_DEFORM_CONV(be_deform_conv_f64, double)
