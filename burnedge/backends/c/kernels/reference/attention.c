/* Attention (attention.h), one pass per query row with an online softmax:
 *   for each key j (past rows, then current ones): s = (q . k_j) * scale; s = softcap * tanh(s / softcap);
 *   s += mask (bool false, a column past the mask's length, a causal j > i + P or j >= nonpad[b]: -inf);
 *   when s exceeds the running max m, the running sum l and the accumulator acc (Dv doubles) are rescaled by
 *   exp(m_old - s); then l += exp(s - m), acc += exp(s - m) * v_j.  y = acc / l, or 0 when every key is masked
 *   (the reference's zero row instead of NaN); a NaN score makes the row NaN.
 * qk_mode 3 (probabilities) stores the masked scores first and turns them into exp(s - m) / l once the row is
 * done. Rows (batch, head, query) are independent: threads split them; the KV cache copy runs before them. */
#include "workers.h"
#include "attention.h"
#include "burnedge.h"

/* row j of head (b, hk) of the past-then-current sequence */
static const float *be__kv_row(const float *past, const float *cur, long b, long hk, long j, long P, long Hkv,
                               long d, long sb, long sh, long ss) {
    return j < P ? past + ((b * Hkv + hk) * P + j) * d : cur + b * sb + hk * sh + (j - P) * ss;
}

static void be__present(const float *past, const float *cur, float *out, long B, long Hkv, long P, long L, long d,
                        long sb, long sh, long ss) {
    for (long b = 0; b < B; b++)
        for (long h = 0; h < Hkv; h++)
            for (long j = 0; j < P + L; j++)
                memcpy(out + ((b * Hkv + h) * (P + L) + j) * d, be__kv_row(past, cur, b, h, j, P, Hkv, d, sb, sh, ss),
                       (size_t)d * sizeof(float));
}

/* the additive bias of key j for query row i of (b, h) */
static double be__bias(const be_attention_cfg *c, const float *mask_f, const uint8_t *mask_b, const int64_t *nonpad,
                       long b, long h, long i, long j) {
    if ((c->causal && j > i + c->P) || (nonpad && j >= nonpad[b])) return -INFINITY;
    if (!mask_f && !mask_b) return 0.0;
    if (j >= c->m_len) return -INFINITY;
    long at = b * c->m_b + h * c->m_h + i * c->m_s + j;
    return mask_b ? (mask_b[at] ? 0.0 : -INFINITY) : (double)mask_f[at];
}

typedef struct {
    const be_attention_cfg *c;
    const float *q, *k, *v, *past_k, *past_v, *mask_f;
    const uint8_t *mask_b;
    const int64_t *nonpad;
    float *y, *qk;
} be__attention_call;

/* query rows [lo, hi), each with its online softmax */
static void be__attention_rows(void *ctx, int tid, long lo, long hi) {
    const be__attention_call *a = ctx;
    const be_attention_cfg *c = a->c;
    const float *q = a->q, *k = a->k, *v = a->v, *past_k = a->past_k, *past_v = a->past_v, *mask_f = a->mask_f;
    const uint8_t *mask_b = a->mask_b;
    const int64_t *nonpad = a->nonpad;
    float *y = a->y, *qk = a->qk;
    const long T = c->P + c->Lkv, group = c->Hq / c->Hkv;
    (void)tid;
    for (long r = lo; r < hi; r++) {
        const long b = r / (c->Hq * c->Lq), h = (r / c->Lq) % c->Hq, i = r % c->Lq, hk = h / group;
        const float *qr = q + b * c->q_b + h * c->q_h + i * c->q_s;
        float *yr = y + b * c->y_b + h * c->y_h + i * c->y_s;
        float *qkr = qk ? qk + r * T : NULL;
        double acc[BE_ATTENTION_MAX_DV], m = -INFINITY, l = 0.0;
        int nan = 0;
        for (long d = 0; d < c->Dv; d++) acc[d] = 0.0;
        for (long j = 0; j < T; j++) {
            const float *kj = be__kv_row(past_k, k, b, hk, j, c->P, c->Hkv, c->Dk, c->k_b, c->k_h, c->k_s);
            double s = 0.0;
            for (long d = 0; d < c->Dk; d++) s += (double)qr[d] * (double)kj[d];
            s *= (double)c->scale;
            const double raw = s;
            if (c->softcap > 0.0f) s = (double)c->softcap * tanh(s / (double)c->softcap);
            const double capped = s;
            s += be__bias(c, mask_f, mask_b, nonpad, b, h, i, j);
            if (qkr) qkr[j] = (float)(c->qk_mode == 0 ? raw : c->qk_mode == 1 ? capped : s);
            if (s != s) nan = 1;             /* a NaN score makes the whole row NaN, as in the reference */
            if (!(s > -INFINITY)) continue; /* masked: contributes nothing */
            if (s > m) {
                const double f = exp(m - s);
                l *= f;
                for (long d = 0; d < c->Dv; d++) acc[d] *= f;
                m = s;
            }
            const double e = exp(s - m);
            const float *vj = be__kv_row(past_v, v, b, hk, j, c->P, c->Hkv, c->Dv, c->v_b, c->v_h, c->v_s);
            l += e;
            for (long d = 0; d < c->Dv; d++) acc[d] += e * (double)vj[d];
        }
        for (long d = 0; d < c->Dv; d++) yr[d] = nan ? NAN : l > 0.0 ? (float)(acc[d] / l) : 0.0f;
        if (qkr && c->qk_mode == 3)
            for (long j = 0; j < T; j++)
                qkr[j] = nan ? NAN : l > 0.0 && qkr[j] > -INFINITY ? (float)(exp((double)qkr[j] - m) / l) : 0.0f;
    }
}

void be_attention_f32(const be_attention_cfg *c, const float *q, const float *k, const float *v, const float *past_k,
                      const float *past_v, const float *mask_f, const uint8_t *mask_b, const int64_t *nonpad,
                      float *y, float *present_k, float *present_v, float *qk, int threads) {
    const long T = c->P + c->Lkv, rows = c->B * c->Hq * c->Lq;
    if (present_k) be__present(past_k, k, present_k, c->B, c->Hkv, c->P, c->Lkv, c->Dk, c->k_b, c->k_h, c->k_s);
    if (present_v) be__present(past_v, v, present_v, c->B, c->Hkv, c->P, c->Lkv, c->Dv, c->v_b, c->v_h, c->v_s);
    be__attention_call a = {c, q, k, v, past_k, past_v, mask_f, mask_b, nonpad, y, qk};
    be_parallel(rows * T * (c->Dk + c->Dv) > 32768 ? threads : 1, rows, be__attention_rows, &a);
}
