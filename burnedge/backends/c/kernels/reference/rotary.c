/* RotaryEmbedding (rotary.h). For each pair (x1, x2) of a row: y1 = cos * x1 - sin * x2, y2 = sin * x1 + cos * x2,
 * in float32 like the reference. Rows are independent: threads split (batch, position). */
#include "burnedge.h"
#include "workers.h"
#include "rotary.h"

typedef struct {
    const float *x, *cos_c, *sin_c;
    const int64_t *pos;
    float *y;
    long rows, S, H, d, rot, s_b, s_s, s_h, half;
    int interleaved;
} rotary_call;

static void rotary_rows(void *ctx_, int tid, long lo_, long hi_) {
    const rotary_call *c_ = ctx_;
    const float *x = c_->x, *cos_c = c_->cos_c, *sin_c = c_->sin_c;
    const int64_t *pos = c_->pos;
    float *y = c_->y;
    const long rows = c_->rows, S = c_->S, H = c_->H, d = c_->d, rot = c_->rot, s_b = c_->s_b, s_s = c_->s_s;
    const long s_h = c_->s_h, half = c_->half;
    const int interleaved = c_->interleaved;
    (void)tid;
    for (long t = lo_; t < hi_; t++) {
        const long b = t / S, s = t % S;
        long row = pos ? (long)pos[t] : t;
        if (row < 0) row += rows;
        const int ok = row >= 0 && row < rows;
        const float *c = cos_c + (ok ? row : 0) * half, *sn = sin_c + (ok ? row : 0) * half;
        for (long h = 0; h < H; h++) {
            const float *xr = x + b * s_b + s * s_s + h * s_h;
            float *yr = y + b * s_b + s * s_s + h * s_h;
            for (long i = rot; i < d; i++) yr[i] = xr[i];
            for (long i = 0; i < half; i++) {
                const long i1 = interleaved ? 2 * i : i, i2 = interleaved ? 2 * i + 1 : i + half;
                const float x1 = ok ? xr[i1] : 0.0f, x2 = ok ? xr[i2] : 0.0f;
                yr[i1] = c[i] * x1 - sn[i] * x2;
                yr[i2] = sn[i] * x1 + c[i] * x2;
            }
        }
    }
}

void be_rotary_f32(const float *x, const float *cos_c, const float *sin_c, const int64_t *pos, long rows, float *y,
                   long B, long S, long H, long d, long rot, long s_b, long s_s, long s_h, int interleaved,
                   int threads) {
    const long half = rot / 2;
    const int par = threads > 1 && B * S > 1 && B * S * H * d > 32768;
    rotary_call c_ = {x, cos_c, sin_c, pos, y, rows, S, H, d, rot, s_b, s_s, s_h, half, interleaved};
    be_parallel(par ? threads : 1, B * S, rotary_rows, &c_);
}

