/* LinearAttention (opset 27): the linear / gated / delta / gated_delta recurrences over time, one
 * (B, Hkv, dk, dv) float32 state, query heads sharing their key/value head in groups. */
#ifndef BURNEDGE_LINEAR_ATTENTION_H
#define BURNEDGE_LINEAR_ATTENTION_H

/* the widest value head the kernel handles (its delta row lives on the stack) */
#define BE_LINATT_MAX_DV 1024

/* q: [B, T, Hq * dk], k: [B, T, Hkv * dk], v: [B, T, Hkv * dv], out: [B, T, Hq * dv]; state: [B, Hkv, dk, dv],
 * holding past_state (or zeros) on entry and present_state on return. decay (NULL: not gated): [B, T, Hkv * dk],
 * or [B, T, Hkv] when decay_per_head; beta (NULL: no delta rule): [B, T, beta_heads] with beta_heads Hkv or 1. */
void be_linear_attention_f32(const float *q, const float *k, const float *v, const float *decay, int decay_per_head,
                             const float *beta, long beta_heads, float *state, float *out, long B, long T, long Hq,
                             long Hkv, long dk, long dv, float scale, int threads);

#endif
