/* Internal to the kernel sets: the cell loops of rnn.c (reference/rnn.c has the algorithm). A set's rnn.c defines,
 * after rnn_scalar.h, gemm_acc (C += A B), sigmoid_n and tanh_n (in place over n floats), then includes this. */
#ifndef BURNEDGE_RNN_LOOPS_H
#define BURNEDGE_RNN_LOOPS_H

#include "workers.h"
#include "burnedge.h"
#include "rnn.h"

/* x[0..n) = act(clip(x)) in place */
static void activate(int act, float alpha, float beta, float clip, float *restrict x, int64_t n) {
    if (clip > 0.0f)
        for (int64_t j = 0; j < n; j++) x[j] = x[j] < -clip ? -clip : (x[j] > clip ? clip : x[j]);
    switch (act) {
    case BE_RACT_SIGMOID: sigmoid_n(x, n); break;
    case BE_RACT_TANH: tanh_n(x, n); break;
    case BE_RACT_RELU: for (int64_t j = 0; j < n; j++) x[j] = x[j] > 0.0f ? x[j] : 0.0f; break;
    case BE_RACT_AFFINE: for (int64_t j = 0; j < n; j++) x[j] = alpha * x[j] + beta; break;
    case BE_RACT_LEAKY_RELU: for (int64_t j = 0; j < n; j++) x[j] = x[j] >= 0.0f ? x[j] : alpha * x[j]; break;
    case BE_RACT_THRESHOLDED_RELU: for (int64_t j = 0; j < n; j++) x[j] = x[j] > alpha ? x[j] : 0.0f; break;
    case BE_RACT_SCALED_TANH: for (int64_t j = 0; j < n; j++) x[j] = alpha * tanhf(beta * x[j]); break;
    case BE_RACT_HARD_SIGMOID:
        for (int64_t j = 0; j < n; j++) x[j] = fminf(fmaxf(alpha * x[j] + beta, 0.0f), 1.0f);
        break;
    case BE_RACT_ELU: for (int64_t j = 0; j < n; j++) x[j] = x[j] >= 0.0f ? x[j] : alpha * expm1f(x[j]); break;
    case BE_RACT_SOFTSIGN: for (int64_t j = 0; j < n; j++) x[j] = x[j] / (1.0f + fabsf(x[j])); break;
    default: /* softplus = log(1 + e^x), stable for large |x| */
        for (int64_t j = 0; j < n; j++) x[j] = fmaxf(x[j], 0.0f) + log1pf(expf(-fabsf(x[j])));
        break;
    }
}

int64_t be_rnn_scratch_floats(int kind, int T, int B, int H) {
    const int64_t G = kind == BE_RNN_LSTM ? 4 : kind == BE_RNN_GRU ? 3 : 1;
    return (int64_t)T * B * G * H + (int64_t)B * G * H + 3 * (int64_t)B * H;
}

typedef struct {
    int64_t M, N, K, lda, ldb, ldc, blocks;
    const float *A, *B;
    float *C;
} be__acc_call;

/* column blocks [lo, hi) of 64 (the last one takes the rest of N) */
static void gemm_acc_blocks(void *ctx, int tid, long lo, long hi) {
    const be__acc_call *a = ctx;
    const int64_t n0 = lo * 64, n1 = hi == a->blocks ? a->N : hi * 64;
    (void)tid;
    gemm_acc(a->M, n1 - n0, a->K, a->A, a->lda, a->B + n0, a->ldb, a->C + n0, a->ldc);
}

/* blocks [lo, hi) of 4 rows of the input projection */
static void gemm_acc_rows(void *ctx, int tid, long lo, long hi) {
    const be__acc_call *a = ctx;
    (void)tid;
    for (int64_t blk = lo; blk < hi; blk++) {
        const int64_t r0 = blk * 4, m = a->M - r0 < 4 ? a->M - r0 : 4;
        gemm_acc(m, a->N, a->K, a->A + r0 * a->lda, a->lda, a->B, a->ldb, a->C + r0 * a->ldc, a->ldc);
    }
}

/* gemm_acc split over threads by blocks of 64 columns (a column is computed the same way in any split) */
static void gemm_acc_cols(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                          float *C, int64_t ldc, int threads) {
    const int64_t blocks = N / 64;
    int64_t chunks = threads > 1 && M * N * K >= (1 << 18) ? threads : 1;
    if (chunks > blocks) chunks = blocks > 0 ? blocks : 1;
    if (chunks <= 1) {
        gemm_acc(M, N, K, A, lda, B, ldb, C, ldc);
        return;
    }
    be__acc_call a = {M, N, K, lda, ldb, ldc, blocks, A, B, C};
    be_parallel(threads, (long)blocks, gemm_acc_blocks, &a);
}

/* XW for all steps: rows in X's memory order; xw[r, :] = bias + x[r, :] @ wt */
static void project(const be_rnn_cfg *cfg, const float *x, const float *wt, const float *bias, float *xw,
                    int64_t GH, int threads) {
    const int64_t M = (int64_t)cfg->T * cfg->B;
    for (int64_t r = 0; r < M; r++)
        for (int64_t n = 0; n < GH; n++) xw[r * GH + n] = bias[n];
    be__acc_call a = {M, GH, cfg->I, cfg->I, GH, GH, (M + 3) / 4, x, wt, xw};
    be_parallel(M * GH * cfg->I >= (1 << 18) ? threads : 1, (long)a.blocks, gemm_acc_rows, &a);
}

/* the length of sequence b, clipped to [0, T] */
static int64_t be__rnn_len(const be_rnn_cfg *cfg, int64_t b) {
    if (!cfg->lens) return cfg->T;
    const int64_t n = cfg->lens[b];
    return n < 0 ? 0 : (n > cfg->T ? cfg->T : n);
}

/* the time index sequence b reads and writes at processing step s (a step past its end: s itself) */
static int64_t be__rnn_time(const be_rnn_cfg *cfg, int64_t s, int64_t b) {
    const int64_t n = be__rnn_len(cfg, b);
    return cfg->reverse && s < n ? n - 1 - s : s;
}

void be_rnn_f32(const be_rnn_cfg *cfg, const float *x, const float *wt, const float *rt, const float *bias,
                const float *rbh, const float *p, const float *h0, const float *c0, float *y, float *yh, float *yc,
                float *scratch, int threads) {
    const int64_t T = cfg->T, B = cfg->B, H = cfg->H;
    const int64_t G = cfg->kind == BE_RNN_LSTM ? 4 : cfg->kind == BE_RNN_GRU ? 3 : 1, GH = G * H;
    float *xw = scratch, *g = xw + T * B * GH, *h = g + B * GH, *c = h + B * H, *rh = c + B * H;
    project(cfg, x, wt, bias, xw, GH, threads);
    /* rows of xw follow X's memory order: the (t, b) row sits at (t * x_t + b * x_b) / I */
    const int64_t xw_t = cfg->x_t / cfg->I * GH, xw_b = cfg->x_b / cfg->I * GH;
    for (int64_t b = 0; b < B; b++)
        for (int64_t j = 0; j < H; j++) {
            h[b * H + j] = h0 ? h0[b * cfg->s_b + j] : 0.0f;
            c[b * H + j] = c0 ? c0[b * cfg->s_b + j] : 0.0f;
        }
    const int fa = cfg->act[0], ga = cfg->act[1], ha = cfg->act[2];
    const float clip = cfg->clip;
    for (int64_t s = 0; s < T; s++) {
        const int64_t ncopy = cfg->kind == BE_RNN_GRU ? 2 * H : GH; /* GRU's h gate is added later */
        for (int64_t b = 0; b < B; b++)
            memcpy(g + b * GH, xw + be__rnn_time(cfg, s, b) * xw_t + b * xw_b, (size_t)ncopy * 4);
        gemm_acc_cols(B, ncopy, H, h, H, rt, GH, g, GH, threads);
        for (int64_t b = 0; b < B; b++) {
            const int64_t t = be__rnn_time(cfg, s, b);
            if (cfg->lens && s >= be__rnn_len(cfg, b)) { /* past the sequence's end: state kept, zeros in Y */
                if (y) memset(y + t * cfg->y_t + b * cfg->y_b, 0, (size_t)H * 4);
                continue;
            }
            float *gb = g + b * GH, *hb = h + b * H, *cb = c + b * H;
            const float *xwb = xw + t * xw_t + b * xw_b;
            if (cfg->kind == BE_RNN_LSTM) {
                float *gi = gb, *go = gb + H, *gf = gb + 2 * H, *gc = gb + 3 * H;
                if (p)
                    for (int64_t j = 0; j < H; j++) gi[j] += p[j] * cb[j], gf[j] += p[2 * H + j] * cb[j];
                activate(fa, cfg->alpha[0], cfg->beta[0], clip, gi, H);
                if (cfg->input_forget)
                    for (int64_t j = 0; j < H; j++) gf[j] = 1.0f - gi[j];
                else
                    activate(fa, cfg->alpha[0], cfg->beta[0], clip, gf, H);
                activate(ga, cfg->alpha[1], cfg->beta[1], clip, gc, H);
                for (int64_t j = 0; j < H; j++) cb[j] = gf[j] * cb[j] + gi[j] * gc[j];
                if (p)
                    for (int64_t j = 0; j < H; j++) go[j] += p[H + j] * cb[j];
                activate(fa, cfg->alpha[0], cfg->beta[0], clip, go, H);
                memcpy(gc, cb, (size_t)H * 4);
                activate(ha, cfg->alpha[2], cfg->beta[2], 0.0f, gc, H);
                for (int64_t j = 0; j < H; j++) hb[j] = go[j] * gc[j];
            } else if (cfg->kind == BE_RNN_GRU) {
                float *gz = gb, *gr = gb + H, *gh = gb + 2 * H;
                activate(fa, cfg->alpha[0], cfg->beta[0], clip, gz, 2 * H); /* z and r */
                if (cfg->lbr) {
                    memcpy(gh, rbh, (size_t)H * 4);
                    gemm_acc(1, H, H, hb, H, rt + 2 * H, GH, gh, GH);
                    for (int64_t j = 0; j < H; j++) gh[j] = xwb[2 * H + j] + gr[j] * gh[j];
                } else {
                    for (int64_t j = 0; j < H; j++) rh[j] = gr[j] * hb[j];
                    memcpy(gh, xwb + 2 * H, (size_t)H * 4);
                    gemm_acc(1, H, H, rh, H, rt + 2 * H, GH, gh, GH);
                }
                activate(ga, cfg->alpha[1], cfg->beta[1], clip, gh, H);
                for (int64_t j = 0; j < H; j++) hb[j] = (1.0f - gz[j]) * gh[j] + gz[j] * hb[j];
            } else {
                activate(fa, cfg->alpha[0], cfg->beta[0], clip, gb, H);
                memcpy(hb, gb, (size_t)H * 4);
            }
            if (y) memcpy(y + t * cfg->y_t + b * cfg->y_b, hb, (size_t)H * 4);
        }
    }
    for (int64_t b = 0; b < B; b++) {
        if (yh) memcpy(yh + b * cfg->s_b, h + b * H, (size_t)H * 4);
        if (yc) memcpy(yc + b * cfg->s_b, c + b * H, (size_t)H * 4);
    }
}

#endif
