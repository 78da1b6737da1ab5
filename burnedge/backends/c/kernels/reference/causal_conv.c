/* CausalConvWithState (causal_conv.h). Position n of the padded row [past | x] (K - 1 + N values) is read in place:
 * index p < K - 1 from past (0 without it), else x[p - K + 1]. y[n] = sum_k padded[n + k] w[k] + bias in double
 * (the reference's float64), rounded to float, then SiLU in float. (batch, channel) rows are independent: threads
 * split them. */
#include "burnedge.h"
#include "workers.h"
#include "causal_conv.h"

static float be__padded(const float *xr, const float *pr, long K, long p) {
    return p < K - 1 ? (pr ? pr[p] : 0.0f) : xr[p - (K - 1)];
}

typedef struct {
    const float *x, *w, *bias, *past;
    float *y, *present;
    long C, N, K;
    int silu;
} causal_conv_call;

static void causal_conv_rows(void *ctx_, int tid, long lo_, long hi_) {
    const causal_conv_call *c_ = ctx_;
    const float *x = c_->x, *w = c_->w, *bias = c_->bias, *past = c_->past;
    float *y = c_->y, *present = c_->present;
    const long C = c_->C, N = c_->N, K = c_->K;
    const int silu = c_->silu;
    (void)tid;
    for (long r = lo_; r < hi_; r++) {
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

void be_causal_conv_f32(const float *x, const float *w, const float *bias, const float *past, float *y,
                        float *present, long B, long C, long N, long K, int silu, int threads) {
    const int par = threads > 1 && B * C > 1 && B * C * N * K > 32768;
    causal_conv_call c_ = {x, w, bias, past, y, present, C, N, K, silu};
    be_parallel(par ? threads : 1, B * C, causal_conv_rows, &c_);
}

