/* Recurrent layers: LSTM, GRU and RNN in float32, one direction per call (the lowering calls it once per
 * direction, with this direction's weights and output strides).
 *
 * Steps:
 *   1. input projection of every step at once: XW[t, b, :] = bias + X[t, b, :] @ W^T, one GEMM over T*B rows
 *      (W was transposed to [I, G*H] and the biases that add outside any gate product were summed, at lowering
 *      time);
 *   2. recurrence over the steps (T-1 down to 0 for the reverse direction): gates = XW[t] + h @ R^T (R
 *      transposed to [H, G*H]), then the cell's elementwise update over contiguous gate vectors:
 *        LSTM (gate order i, o, f, c): i = f(gi + Pi*c), f = f(gf + Pf*c) (or 1 - i), c = f*c + i*g(gc),
 *                                      h = f(go + Po*c) * h(c)
 *        GRU  (gate order z, r, h):    z, r = f(.), hh = g(xw_h + (r*h) @ Rh^T), or with linear_before_reset
 *                                      g(xw_h + r * (h @ Rh^T + Rbh)); h = (1 - z) * hh + z * h
 *        RNN:                          h = f(gates)
 *      each pre-activation clipped to [-clip, clip] first when clip > 0; h goes to Y[t] as it is made;
 *   3. the last h (and c) go to Y_h (and Y_c).
 * The GEMM has an AVX2/FMA register-blocked path (4 rows x 16 columns, or 1 row x 64 for the B = 1 recurrence)
 * and a portable loop; only the projection is split over threads (by row blocks), so results do not depend on
 * the thread count.
 */
#include "burnedge.h"
#include "rnn.h"
#include "x86_simd.h"


void be_rnn_gemm_acc_portable(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                              int64_t ldb, float *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++) {
        float *restrict c = C + i * ldc;
        for (int64_t k = 0; k < K; k++) {
            const float a = A[i * lda + k];
            const float *restrict b = B + k * ldb;
            for (int64_t n = 0; n < N; n++) c[n] += a * b[n];
        }
    }
}

static void gemm_acc(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                     float *C, int64_t ldc) {
    int64_t i = 0;
    for (; i + 4 <= M; i += 4) {
        const float *a0 = A + i * lda, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;
        float *c0 = C + i * ldc, *c1 = c0 + ldc, *c2 = c1 + ldc, *c3 = c2 + ldc;
        int64_t n = 0;
        for (; n + 16 <= N; n += 16) {
            __m256 x00 = _mm256_loadu_ps(c0 + n), x01 = _mm256_loadu_ps(c0 + n + 8);
            __m256 x10 = _mm256_loadu_ps(c1 + n), x11 = _mm256_loadu_ps(c1 + n + 8);
            __m256 x20 = _mm256_loadu_ps(c2 + n), x21 = _mm256_loadu_ps(c2 + n + 8);
            __m256 x30 = _mm256_loadu_ps(c3 + n), x31 = _mm256_loadu_ps(c3 + n + 8);
            for (int64_t k = 0; k < K; k++) {
                const __m256 b0 = _mm256_loadu_ps(B + k * ldb + n), b1 = _mm256_loadu_ps(B + k * ldb + n + 8);
                __m256 a = _mm256_broadcast_ss(a0 + k);
                x00 = _mm256_fmadd_ps(a, b0, x00), x01 = _mm256_fmadd_ps(a, b1, x01);
                a = _mm256_broadcast_ss(a1 + k);
                x10 = _mm256_fmadd_ps(a, b0, x10), x11 = _mm256_fmadd_ps(a, b1, x11);
                a = _mm256_broadcast_ss(a2 + k);
                x20 = _mm256_fmadd_ps(a, b0, x20), x21 = _mm256_fmadd_ps(a, b1, x21);
                a = _mm256_broadcast_ss(a3 + k);
                x30 = _mm256_fmadd_ps(a, b0, x30), x31 = _mm256_fmadd_ps(a, b1, x31);
            }
            _mm256_storeu_ps(c0 + n, x00), _mm256_storeu_ps(c0 + n + 8, x01);
            _mm256_storeu_ps(c1 + n, x10), _mm256_storeu_ps(c1 + n + 8, x11);
            _mm256_storeu_ps(c2 + n, x20), _mm256_storeu_ps(c2 + n + 8, x21);
            _mm256_storeu_ps(c3 + n, x30), _mm256_storeu_ps(c3 + n + 8, x31);
        }
        if (n < N) be_rnn_gemm_acc_portable(4, N - n, K, a0, lda, B + n, ldb, c0 + n, ldc);
    }
    for (; i < M; i++) {
        const float *a = A + i * lda;
        float *c = C + i * ldc;
        int64_t n = 0;
        for (; n + 64 <= N; n += 64) {
            __m256 x[8];
            for (int v = 0; v < 8; v++) x[v] = _mm256_loadu_ps(c + n + 8 * v);
            for (int64_t k = 0; k < K; k++) {
                const __m256 av = _mm256_broadcast_ss(a + k);
                const float *b = B + k * ldb + n;
                for (int v = 0; v < 8; v++) x[v] = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + 8 * v), x[v]);
            }
            for (int v = 0; v < 8; v++) _mm256_storeu_ps(c + n + 8 * v, x[v]);
        }
        for (; n + 8 <= N; n += 8) {
            __m256 x = _mm256_loadu_ps(c + n);
            for (int64_t k = 0; k < K; k++) x = _mm256_fmadd_ps(_mm256_broadcast_ss(a + k), _mm256_loadu_ps(B + k * ldb + n), x);
            _mm256_storeu_ps(c + n, x);
        }
        if (n < N) be_rnn_gemm_acc_portable(1, N - n, K, a, lda, B + n, ldb, c + n, ldc);
    }
}

/* exp(-a) for a >= 0 without libm, so that gate loops vectorise: a = n ln2 + r with |r| <= ln2 / 2, e^r by
 * its Taylor series to r^7 (error < 1e-8), 2^-n by building the float's exponent. Results below ~1e-38 become
 * that bound, which no caller can tell from 0. */
static inline float exp_neg(float a) {
    a = a < 87.0f ? a : 87.0f;
    const float n = floorf(a * 1.44269504f + 0.5f);
    const float r = (n * 0.693359375f - a) + n * -2.12194440e-4f; /* -(a - n ln2), ln2 split in two */
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    const int32_t bits = (127 - (int32_t)n) << 23;
    float scale;
    memcpy(&scale, &bits, 4);
    return p * scale;
}

/* sigmoid as the reference writes it: e = exp(-|x|), 1 / (1 + e) or e / (1 + e) */
static inline float sigmoid1(float x) {
    const float e = exp_neg(fabsf(x));
    return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}

/* tanh: an odd Taylor polynomial for |x| < 0.3, else (1 - e) / (1 + e) with e = exp(-2|x|) */
static inline float tanh1(float x) {
    const float a = fabsf(x), z = x * x;
    float p = -1382.0f / 155925.0f;
    p = p * z + 62.0f / 2835.0f;
    p = p * z + -17.0f / 315.0f;
    p = p * z + 2.0f / 15.0f;
    p = p * z + -1.0f / 3.0f;
    const float small = x + x * (z * p);
    const float e = exp_neg(2.0f * a);
    const float big = (1.0f - e) / (1.0f + e);
    return a < 0.3f ? small : (x < 0.0f ? -big : big);
}

static inline __m256 exp_neg8(__m256 a) {
    a = _mm256_min_ps(a, _mm256_set1_ps(87.0f));
    const __m256 n = _mm256_floor_ps(_mm256_add_ps(_mm256_mul_ps(a, _mm256_set1_ps(1.44269504f)), _mm256_set1_ps(0.5f)));
    const __m256 r = _mm256_add_ps(_mm256_sub_ps(_mm256_mul_ps(n, _mm256_set1_ps(0.693359375f)), a),
                                   _mm256_mul_ps(n, _mm256_set1_ps(-2.12194440e-4f)));
    static const float c[8] = {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f, 0.0f};
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    for (int k = 0; k < 7; k++) p = _mm256_add_ps(_mm256_mul_ps(p, r), _mm256_set1_ps(c[k]));
    const __m256i bits = _mm256_slli_epi32(_mm256_sub_epi32(_mm256_set1_epi32(127), _mm256_cvtps_epi32(n)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

static void sigmoid_n(float *restrict x, int64_t n) {
    int64_t j = 0;
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_loadu_ps(x + j);
        const __m256 e = exp_neg8(_mm256_andnot_ps(sign, v));
        const __m256 num = _mm256_blendv_ps(one, e, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
        _mm256_storeu_ps(x + j, _mm256_div_ps(num, _mm256_add_ps(one, e)));
    }
    for (; j < n; j++) x[j] = sigmoid1(x[j]);
}

static void tanh_n(float *restrict x, int64_t n) {
    int64_t j = 0;
    static const float c[4] = {62.0f / 2835.0f, -17.0f / 315.0f, 2.0f / 15.0f, -1.0f / 3.0f};
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    for (; j + 8 <= n; j += 8) {
        const __m256 v = _mm256_loadu_ps(x + j);
        const __m256 a = _mm256_andnot_ps(sign, v), z = _mm256_mul_ps(v, v);
        __m256 p = _mm256_set1_ps(-1382.0f / 155925.0f);
        for (int k = 0; k < 4; k++) p = _mm256_add_ps(_mm256_mul_ps(p, z), _mm256_set1_ps(c[k]));
        const __m256 small = _mm256_add_ps(v, _mm256_mul_ps(v, _mm256_mul_ps(z, p)));
        const __m256 e = exp_neg8(_mm256_add_ps(a, a));
        const __m256 big = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
        const __m256 signed_big = _mm256_or_ps(big, _mm256_and_ps(sign, v));
        const __m256 is_small = _mm256_cmp_ps(a, _mm256_set1_ps(0.3f), _CMP_LT_OQ);
        _mm256_storeu_ps(x + j, _mm256_blendv_ps(signed_big, small, is_small));
    }
    for (; j < n; j++) x[j] = tanh1(x[j]);
}

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
#pragma omp parallel for num_threads(threads)
    for (int64_t c = 0; c < chunks; c++) {
        const int64_t n0 = blocks * c / chunks * 64, n1 = c == chunks - 1 ? N : blocks * (c + 1) / chunks * 64;
        gemm_acc(M, n1 - n0, K, A, lda, B + n0, ldb, C + n0, ldc);
    }
}

/* XW for all steps: rows in X's memory order; xw[r, :] = bias + x[r, :] @ wt */
static void project(const be_rnn_cfg *cfg, const float *x, const float *wt, const float *bias, float *xw,
                    int64_t GH, int threads) {
    const int64_t M = (int64_t)cfg->T * cfg->B;
    for (int64_t r = 0; r < M; r++)
        for (int64_t n = 0; n < GH; n++) xw[r * GH + n] = bias[n];
    const int64_t blocks = (M + 3) / 4;
    const int par = threads > 1 && M * GH * cfg->I >= (1 << 18);
    (void)par;
#pragma omp parallel for num_threads(threads) if (par)
    for (int64_t blk = 0; blk < blocks; blk++) {
        const int64_t r0 = blk * 4, m = M - r0 < 4 ? M - r0 : 4;
        gemm_acc(m, GH, cfg->I, x + r0 * cfg->I, cfg->I, wt, GH, xw + r0 * GH, GH);
    }
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
        const int64_t t = cfg->reverse ? T - 1 - s : s;
        const int64_t ncopy = cfg->kind == BE_RNN_GRU ? 2 * H : GH; /* GRU's h gate is added later */
        for (int64_t b = 0; b < B; b++) memcpy(g + b * GH, xw + t * xw_t + b * xw_b, (size_t)ncopy * 4);
        gemm_acc_cols(B, ncopy, H, h, H, rt, GH, g, GH, threads);
        for (int64_t b = 0; b < B; b++) {
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
