/* int8 average pools: burnedge.QAvgPool (threads over planes; integer results do not depend on them).
 *
 * Per output position, the taps inside the input are summed as (x - zp) in int32 and divided by the product of
 * the per-axis counts of taps inside the counting region, rounding half away from zero.
 */
#include "qpool.h"
#include "workers.h"

static inline int8_t clamp8(int64_t v) { return (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v)); }

/* taps k in [a, b) of a window starting at p0 (step d, K taps) that fall inside [lo, hi) */
static inline void taps(int p0, int K, int d, int lo, int hi, int *a, int *b) {
    int k0 = 0, k1 = K;
    while (k0 < K && p0 + k0 * d < lo) k0++;
    while (k1 > k0 && p0 + (k1 - 1) * d >= hi) k1--;
    *a = k0;
    *b = k1;
}

typedef struct {
    const int8_t *x;
    int8_t *y;
    int ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w;
    int32_t zp;
} qavgpool_call;

/* planes lo .. hi-1 */
static void qavgpool_planes(void *ctx, int tid, long lo, long hi) {
    const qavgpool_call *c = ctx;
    const int8_t *x = c->x;
    int8_t *y = c->y;
    const int ih = c->ih, iw = c->iw, oh = c->oh, ow = c->ow, kh = c->kh, kw = c->kw, sh = c->sh, sw = c->sw;
    const int dh = c->dh, dw = c->dw, ph = c->ph, pw = c->pw;
    const int clo_h = c->clo_h, chi_h = c->chi_h, clo_w = c->clo_w, chi_w = c->chi_w;
    const int32_t zp = c->zp;
    (void)tid;
    for (long p = lo; p < hi; p++) {
        const int8_t *xp = x + p * ih * iw;
        int8_t *yp = y + p * oh * ow;
        for (int oy = 0; oy < oh; oy++) {
            const int y0 = oy * sh - ph;
            int ya, yb, ca, cb;
            taps(y0, kh, dh, 0, ih, &ya, &yb);
            taps(y0, kh, dh, clo_h, chi_h, &ca, &cb);
            for (int ox = 0; ox < ow; ox++) {
                const int x0 = ox * sw - pw;
                int xa, xb, da, db;
                taps(x0, kw, dw, 0, iw, &xa, &xb);
                taps(x0, kw, dw, clo_w, chi_w, &da, &db);
                int32_t s = 0;
                for (int ky = ya; ky < yb; ky++) {
                    const int8_t *r = xp + (long)(y0 + ky * dh) * iw + x0;
                    for (int kx = xa; kx < xb; kx++) s += r[kx * dw] - zp;
                }
                const int64_t cnt = (int64_t)(cb - ca) * (db - da);
                yp[(long)oy * ow + ox] = cnt > 0 ? clamp8(zp + be_round_div(s, cnt)) : (int8_t)zp;
            }
        }
    }
}

void be_qavgpool2d_i8(const int8_t *x, int8_t *y, long nc, int ih, int iw, int oh, int ow, int kh, int kw, int sh,
                      int sw, int dh, int dw, int ph, int pw, int clo_h, int chi_h, int clo_w, int chi_w, int32_t zp,
                      int threads) {
    const int par = threads > 1 && nc > 1 && nc * (long)oh * ow * kh * kw > 65536;
    qavgpool_call c = {x, y, ih, iw, oh, ow, kh, kw, sh, sw, dh, dw, ph, pw, clo_h, chi_h, clo_w, chi_w, zp};
    be_parallel(par ? threads : 1, nc, qavgpool_planes, &c);
}
