/* RotaryEmbedding (opset 23): rotates the first `rot` features of every head row by per-position angles. */
#ifndef BURNEDGE_ROTARY_H
#define BURNEDGE_ROTARY_H

#include <stdint.h>

/* x, y: B * S * H rows of d floats, row (b, s, h) at b * s_b + s * s_s + h * s_h. cos / sin: rows of rot / 2
 * values, row pos[b * S + s] of `rows` when pos is not NULL (negative: from the end, as numpy indexes; out of
 * range: the rotated features are zeros, as Gather's slice), else row b * S + s. interleaved: pairs (2i, 2i + 1),
 * else halves (i, i + rot / 2). Features past rot are copied. */
void be_rotary_f32(const float *x, const float *cos_c, const float *sin_c, const int64_t *pos, long rows, float *y,
                   long B, long S, long H, long d, long rot, long s_b, long s_s, long s_h, int interleaved,
                   int threads);

#endif
