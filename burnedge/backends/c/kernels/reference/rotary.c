/* RotaryEmbedding (rotary.h). For each pair (x1, x2) of a row: y1 = cos * x1 - sin * x2, y2 = sin * x1 + cos * x2,
 * in float32 like the reference. Rows are independent: threads split (batch, position). */
#include "burnedge.h"
#include "rotary.h"

void be_rotary_f32(const float *x, const float *cos_c, const float *sin_c, const int64_t *pos, long rows, float *y,
                   long B, long S, long H, long d, long rot, long s_b, long s_s, long s_h, int interleaved,
                   int threads) {
    const long half = rot / 2;
    BE_PARALLEL_FOR(threads > 1 && B * S > 1 && B * S * H * d > 32768)
    for (long t = 0; t < B * S; t++) {
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
