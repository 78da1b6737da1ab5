/* Attention (ONNX opsets 23 / 24): softmax(softcap(Q K^T * scale) + mask) V per query head, float32 in and out,
 * scores and sums in double. MHA, GQA and MQA (query head h reads key/value head h / (Hq / Hkv)), a KV cache
 * (past rows first, then the current ones), float or bool masks, causal masking and per-batch key counts. */
#ifndef BURNEDGE_ATTENTION_H
#define BURNEDGE_ATTENTION_H

#include <stdint.h>

/* the largest value head size the kernel accumulates (its per-row accumulator lives on the stack) */
#define BE_ATTENTION_MAX_DV 1024

typedef struct {
    long B, Hq, Hkv, Lq, Lkv, P, Dk, Dv; /* batch, heads, query / current key / past key rows, head sizes */
    long q_b, q_h, q_s;                  /* element strides of Q's batch, head and row (rows are contiguous) */
    long k_b, k_h, k_s, v_b, v_h, v_s;   /* the same for the current K and V */
    long y_b, y_h, y_s;                  /* and for Y */
    long m_b, m_h, m_s, m_len;           /* the mask's strides (0: broadcast) and row length (later keys masked) */
    float scale, softcap;                /* softcap <= 0: none */
    int causal, qk_mode;                 /* qk_mode: what qk receives (0 raw, 1 softcapped, 2 masked, 3 softmax) */
} be_attention_cfg;

/* past_k / past_v: [B, Hkv, P, D] (NULL when P = 0); mask_f (float) or mask_b (bool) or neither; nonpad: [B] key
 * counts or NULL; present_k / present_v ([B, Hkv, P + Lkv, D]) and qk ([B, Hq, Lq, P + Lkv]) may be NULL. */
void be_attention_f32(const be_attention_cfg *c, const float *q, const float *k, const float *v, const float *past_k,
                      const float *past_v, const float *mask_f, const uint8_t *mask_b, const int64_t *nonpad,
                      float *y, float *present_k, float *present_v, float *qk, int threads);

#endif
