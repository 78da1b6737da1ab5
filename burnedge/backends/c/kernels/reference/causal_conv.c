/* CausalConvWithState (causal_conv.h). Position n of the padded row [past | x] (K - 1 + N values) is read in place:
 * index p < K - 1 from past (0 without it), else x[p - K + 1]. y[n] = sum_k padded[n + k] w[k] + bias in double
 * (the reference's float64), rounded to float, then SiLU in float. (batch, channel) rows are independent: threads
 * split them. */
#include "burnedge.h"
#include "causal_conv.h"

static float be__padded(const float *xr, const float *pr, long K, long p) {
    return p < K - 1 ? (pr ? pr[p] : 0.0f) : xr[p - (K - 1)];
}

void be_causal_conv_f32(const float *x, const float *w, const float *bias, const float *past, float *y,
                        float *present, long B, long C, long N, long K, int silu, int threads) {
    BE_PARALLEL_FOR(threads > 1 && B * C > 1 && B * C * N * K > 32768)
    for (long r = 0; r < B * C; r++) {
        const long c = r % C;
        const float *xr = x + r * N, *pr = past ? past + r * (K - 1) : NULL, *wc = w + c * K;
        float *yr = y + r * N;
        for (long n = 0; n < N; n++) {
            double s = bias ? (double)bias[c] : 0.0;
            for (long k = 0; k < K; k++) s += (double)be__padded(xr, pr, K, n + k) * (double)wc[k];
            const float v = (float)s;
            yr[n] = silu ? v / (1.0f + expf(-v)) : v;
        }
        if (present)
            for (long i = 0; i < K - 1; i++) present[r * (K - 1) + i] = be__padded(xr, pr, K, N + i);
    }
}
