/* The DFT as a direct sum over a table of twiddles (signal.h): O(n * m) per line, which the short transforms of
 * the models it serves afford; lines are independent, and threads split them. */
#include "signal.h"

#include "burnedge.h"
#include "workers.h"

typedef struct {
    const float *x;
    float *y;
    long len, inner, n, m, used;
    int cin, cout, irfft;
    double scale, sign;
    const double *cs;
} dft_call;

/* lines lo_ .. hi_-1 of [outer, inner] */
static void dft_lines(void *ctx, int tid, long lo_, long hi_) {
    const dft_call *c = ctx;
    const float *x = c->x;
    float *y = c->y;
    const long len = c->len, inner = c->inner, n = c->n, m = c->m, used = c->used;
    const int cin = c->cin, cout = c->cout, irfft = c->irfft;
    const double scale = c->scale, sign = c->sign, *cs = c->cs;
    (void)tid;
    for (long line = lo_; line < hi_; line++) {
        const long o = line / inner, i = line % inner;
        const float *xl = x + (o * len * inner + i) * cin;
        float *yl = y + (o * m * inner + i) * cout;
        for (long k = 0; k < m; k++) {
            double re = 0.0, im = 0.0;
            for (long j = 0; j < used; j++) {
                const long t = (j * k) % n;
                const double c = cs[2 * t], s = sign * cs[2 * t + 1];
                const double xr = xl[j * inner * cin], xi = cin == 2 ? xl[j * inner * cin + 1] : 0.0;
                if (irfft) { /* bins past 0 and n/2 stand for themselves and their mirror image */
                    const double w = (j == 0 || 2 * j == n) ? 1.0 : 2.0;
                    re += w * (xr * c - xi * s);
                } else {
                    re += xr * c - xi * s;
                    im += xr * s + xi * c;
                }
            }
            yl[k * inner * cout] = (float)(re * scale);
            if (!irfft) yl[k * inner * cout + 1] = (float)(im * scale);
        }
    }
}

void be_dft_f32(const float *x, float *y, long outer, long len, long inner, int cin, long n, long m, int inverse,
                int irfft, const double *cs, int threads) {
    const long used = irfft ? (len < n / 2 + 1 ? len : n / 2 + 1) : (len < n ? len : n);
    const int cout = irfft ? 1 : 2;
    const double scale = inverse ? 1.0 / (double)n : 1.0, sign = inverse ? 1.0 : -1.0;
    dft_call c = {x, y, len, inner, n, m, used, cin, cout, irfft, scale, sign, cs};
    be_parallel(threads > 1 && outer * inner > 1 ? threads : 1, outer * inner, dft_lines, &c);
}

