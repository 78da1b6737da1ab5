/* 3-D MaxPool and AveragePool over NCDHW volumes: each window visits its taps inside the input (max) and divides
 * the sum of those by the number of its taps inside the counting region (average), as the 2-D kernels do
 * (pool.h: the counting region is the input alone, or the input with its explicit pads under count_include_pad).
 * Volumes are independent: threads split them. */
#include "burnedge.h"
#include "workers.h"
#include "pool.h"

/* the kernel taps [*a, *b) of the window starting at `start` whose positions lie in [lo, hi) */
static void window_taps(int start, int k, int d, int lo, int hi, int *a, int *b) {
    int i = 0, j = k;
    while (i < k && start + i * d < lo) i++;
    while (j > i && start + (j - 1) * d >= hi) j--;
    *a = i;
    *b = j;
}

typedef struct {
    const float *x;
    float *y;
    const int *g;
    int is_max;
    long isz, osz;
} pool3d_call;

/* volumes lo_ .. hi_-1 */
static void pool3d_volumes(void *ctx_, int tid, long lo_, long hi_) {
    const pool3d_call *c_ = ctx_;
    const float *x = c_->x;
    float *y = c_->y;
    const int *g = c_->g;
    const int is_max = c_->is_max;
    const long isz = c_->isz, osz = c_->osz;
    const int *in = g, *out = g + 3, *k = g + 6, *s = g + 9, *d = g + 12, *b = g + 15, *clo = g + 18, *chi = g + 21;
    (void)tid;
    for (long p = lo_; p < hi_; p++) {
        const float *xp = x + p * isz;
        float *yp = y + p * osz;
        for (int oz = 0; oz < out[0]; oz++) {
            int za, zb, zc, zd, zs = oz * s[0] - b[0];
            window_taps(zs, k[0], d[0], 0, in[0], &za, &zb);
            window_taps(zs, k[0], d[0], clo[0], chi[0], &zc, &zd);
            for (int oy = 0; oy < out[1]; oy++) {
                int ya, yb, yc, yd, ys = oy * s[1] - b[1];
                window_taps(ys, k[1], d[1], 0, in[1], &ya, &yb);
                window_taps(ys, k[1], d[1], clo[1], chi[1], &yc, &yd);
                for (int ox = 0; ox < out[2]; ox++) {
                    int xa, xb, xc, xd, xs = ox * s[2] - b[2];
                    window_taps(xs, k[2], d[2], 0, in[2], &xa, &xb);
                    window_taps(xs, k[2], d[2], clo[2], chi[2], &xc, &xd);
                    float acc = is_max ? -INFINITY : 0.0f;
                    for (int kz = za; kz < zb; kz++)
                        for (int ky = ya; ky < yb; ky++) {
                            const float *row = xp + ((long)(zs + kz * d[0]) * in[1] + ys + ky * d[1]) * in[2] + xs;
                            for (int kx = xa; kx < xb; kx++) {
                                const float v = row[kx * d[2]];
                                acc = is_max ? (v > acc ? v : acc) : acc + v;
                            }
                        }
                    if (!is_max) acc /= (float)((zd - zc) * (yd - yc) * (xd - xc));
                    yp[((long)oz * out[1] + oy) * out[2] + ox] = acc;
                }
            }
        }
    }
}

void be_pool3d_f32(const float *x, float *y, long nc, const int *g, int is_max, int threads) {
    const int *in = g, *out = g + 3;
    const long isz = (long)in[0] * in[1] * in[2], osz = (long)out[0] * out[1] * out[2];
    const int par = threads > 1 && nc > 1;
    pool3d_call c_ = {x, y, g, is_max, isz, osz};
    be_parallel(par ? threads : 1, nc, pool3d_volumes, &c_);
}

