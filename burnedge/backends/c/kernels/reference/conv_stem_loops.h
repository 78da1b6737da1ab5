/* Internal to the kernel sets: the row loop and driver of conv_stem.c (reference/conv_stem.c has the algorithm).
 * A set's conv_stem.c defines, after conv_stem_common.h, its tiles and the statement hook STEM_TILE_VEC (over
 * stem_row's locals; empty: the portable tile), then includes this. */
#ifndef BURNEDGE_CONV_STEM_LOOPS_H
#define BURNEDGE_CONV_STEM_LOOPS_H

#include "workers.h"
#include "conv_stem_common.h"

/* output row oy of one image: every channel group, every tile; act: the fast epilogue's activation, -1 generic,
 * -2 portable */
static void stem_row(const float *ph, const int *toff, const float *wpack, float *y, int nhwc, const be_conv_geo *g,
                     const be_epi *e, long wq, long oy, int act) {
    const long K = (long)g->C * g->KH * g->KW, groups = ((long)g->M + 3) / 4;
    const float *rowsrc = ph + oy * g->sh * g->sw * wq;
    float tb[4 * BE_STEM_PX];
    for (long q = 0; q < groups; q++) {
        const float *w = wpack + q * K * 4;
        for (long x0 = 0; x0 < g->OW; x0 += BE_STEM_PX) {
            const float *src = rowsrc + x0;
            STEM_TILE_VEC()
            tile_portable(src, toff, K, w, tb);
            store_generic(tb, y, nhwc, g, e, oy, x0, q * 4);
        }
    }
}

typedef struct {
    const float *ph, *wpack;
    const int *toff;
    float *y;
    const be_conv_geo *g;
    const be_epi *e;
    long wq;
    int nhwc, act;
} stem_call;

static void stem_rows(void *ctx, int tid, long lo, long hi) {
    const stem_call *s = ctx;
    (void)tid;
    for (long oy = lo; oy < hi; oy++) stem_row(s->ph, s->toff, s->wpack, s->y, s->nhwc, s->g, s->e, s->wq, oy, s->act);
}

static void conv_stem(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads, int portable) {
    const long hp = be_conv_stem_hp(g), wq = be_conv_stem_wq(g), ohw = (long)g->OH * g->OW;
    const long img = (long)g->C * hp * g->sw * wq, chw = (long)g->C * g->H * g->W;
    float *ph = scratch;
    int *toff = (int *)(scratch + img);
    for (int c = 0, k = 0; c < g->C; c++) /* step 1's tap table */
        for (int ky = 0; ky < g->KH; ky++)
            for (int kx = 0; kx < g->KW; kx++, k++) {
                const long p = ((long)kx * g->dw) % g->sw, off = ((long)kx * g->dw) / g->sw;
                toff[k] = (int)((((long)c * hp + (long)ky * g->dh) * g->sw + p) * wq + off);
            }
    const int fast = e->alpha == 1.0f && (!e->add0 || (e->beta0 == 1.0f && e->rs0 == 0 && e->cs0 == 1)) && !e->add1 &&
                     e->act <= BE_ACT_CLIP;
    const int act = portable ? -2 : fast ? e->act : -1, nhwc = (flags & BE_OUT_NHWC) != 0;
    for (int n = 0; n < g->N; n++) {
        build_phases(x + n * chw, g, hp, wq, ph);
        float *yn = y + n * (long)g->M * ohw;
        be_epi en = *e;
        if (en.add1) en.add1 += n * (long)g->M * ohw;
        stem_call s = {ph, wpack, toff, yn, g, &en, wq, nhwc, act};
        be_parallel(threads, g->OH, stem_rows, &s);
    }
}

void be_conv_stem_f32(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g, int flags,
                      float *scratch, int threads) {
    conv_stem(x, wpack, y, e, g, flags, scratch, threads, 0);
}

void be_conv_stem_f32_portable(const float *x, const float *wpack, float *y, const be_epi *e, const be_conv_geo *g,
                               int flags, float *scratch, int threads) {
    conv_stem(x, wpack, y, e, g, flags, scratch, threads, 1);
}

#endif
