/* LpPool (misc.h): each output sums |x|^p over its window in double (taps in the padding add 0, as the reference
 * pads with zeros) and takes the p-th root; p = 1 and 2 skip pow. Planes are independent, so threads split them. */
#include "burnedge.h"
#include "workers.h"
#include "misc.h"

static double be__lp_power(double v, double p) {
    v = fabs(v);
    return p == 2.0 ? v * v : p == 1.0 ? v : pow(v, p);
}

typedef struct {
    const float *x;
    float *y;
    const long *geo;
    double p;
    long in_plane, out_plane;
} lppool_call;

/* planes lo_ .. hi_-1 */
static void lppool_planes(void *ctx_, int tid, long lo_, long hi_) {
    const lppool_call *c_ = ctx_;
    const float *x = c_->x;
    float *y = c_->y;
    const long *geo = c_->geo;
    const double p = c_->p;
    const long in_plane = c_->in_plane, out_plane = c_->out_plane;
    const long *g0 = geo, *g1 = geo + 6, *g2 = geo + 12;
    (void)tid;
    for (long c = lo_; c < hi_; c++) {
        const float *xc = x + c * in_plane;
        float *yc = y + c * out_plane;
        for (long o0 = 0; o0 < g0[1]; o0++)
            for (long o1 = 0; o1 < g1[1]; o1++)
                for (long o2 = 0; o2 < g2[1]; o2++) {
                    double acc = 0.0;
                    for (long k0 = 0; k0 < g0[2]; k0++) {
                        long i0 = o0 * g0[3] + k0 * g0[4] - g0[5];
                        if (i0 < 0 || i0 >= g0[0]) continue;
                        for (long k1 = 0; k1 < g1[2]; k1++) {
                            long i1 = o1 * g1[3] + k1 * g1[4] - g1[5];
                            if (i1 < 0 || i1 >= g1[0]) continue;
                            for (long k2 = 0; k2 < g2[2]; k2++) {
                                long i2 = o2 * g2[3] + k2 * g2[4] - g2[5];
                                if (i2 < 0 || i2 >= g2[0]) continue;
                                acc += be__lp_power(xc[(i0 * g1[0] + i1) * g2[0] + i2], p);
                            }
                        }
                    }
                    double r = p == 2.0 ? sqrt(acc) : p == 1.0 ? acc : pow(acc, 1.0 / p);
                    yc[(o0 * g1[1] + o1) * g2[1] + o2] = (float)r;
                }
    }
}

void be_lppool_f32(const float *x, float *y, long nc, const long *geo, double p, int threads) {
    const long *g0 = geo, *g1 = geo + 6, *g2 = geo + 12; /* {in, out, kernel, stride, dilation, begin} */
    long in_plane = g0[0] * g1[0] * g2[0], out_plane = g0[1] * g1[1] * g2[1];
    const int par = threads > 1 && nc > 1 && nc * out_plane > 4096;
    lppool_call c_ = {x, y, geo, p, in_plane, out_plane};
    be_parallel(par ? threads : 1, nc, lppool_planes, &c_);
}

