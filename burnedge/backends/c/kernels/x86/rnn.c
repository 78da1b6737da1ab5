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
#include "rnn_scalar.h"

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

#include "rnn_loops.h"
