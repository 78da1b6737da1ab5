/* LinearAttention (linear_attention.h), token by token for each (batch, key/value head) as the reference does:
 *   gated:  S *= exp(decay_t) row-wise (one factor per key feature, or per head);
 *   delta:  u = beta_t * (v_t - S^T k_t), else u = v_t;
 *   S += k_t u^T;  out_t(query head) = scale * q_t^T S.
 * The state stays float32 (as the reference's); its dot products sum in double. (batch, head) pairs are
 * independent: threads split them. */
#include "burnedge.h"
#include "workers.h"
#include "linear_attention.h"

typedef struct {
    const float *q, *k, *v, *decay, *beta;
    float *state, *out;
    int decay_per_head;
    long beta_heads, T, Hq, Hkv, dk, dv, group;
    float scale;
} linear_attention_call;

static void linear_attention_heads(void *ctx_, int tid, long lo_, long hi_) {
    const linear_attention_call *c_ = ctx_;
    const float *q = c_->q, *k = c_->k, *v = c_->v, *decay = c_->decay, *beta = c_->beta;
    float *state = c_->state, *out = c_->out;
    const int decay_per_head = c_->decay_per_head;
    const long beta_heads = c_->beta_heads, T = c_->T, Hq = c_->Hq, Hkv = c_->Hkv, dk = c_->dk, dv = c_->dv;
    const long group = c_->group;
    const float scale = c_->scale;
    (void)tid;
    for (long bh = lo_; bh < hi_; bh++) {
        const long b = bh / Hkv, h = bh % Hkv;
        float *S = state + bh * dk * dv, u[BE_LINATT_MAX_DV];
        for (long t = 0; t < T; t++) {
            const long bt = b * T + t;
            const float *kt = k + (bt * Hkv + h) * dk, *vt = v + (bt * Hkv + h) * dv;
            if (decay)
                for (long i = 0; i < dk; i++) {
                    const float g = expf(decay_per_head ? decay[bt * Hkv + h] : decay[(bt * Hkv + h) * dk + i]);
                    for (long j = 0; j < dv; j++) S[i * dv + j] *= g;
                }
            for (long j = 0; j < dv; j++) u[j] = vt[j];
            if (beta) {
                const float bb = beta[bt * beta_heads + (beta_heads > 1 ? h : 0)];
                for (long j = 0; j < dv; j++) {
                    double s = 0.0;
                    for (long i = 0; i < dk; i++) s += (double)S[i * dv + j] * (double)kt[i];
                    u[j] = bb * (vt[j] - (float)s);
                }
            }
            for (long i = 0; i < dk; i++)
                for (long j = 0; j < dv; j++) S[i * dv + j] += kt[i] * u[j];
            for (long g = 0; g < group; g++) {
                const long qh = h * group + g;
                const float *qt = q + (bt * Hq + qh) * dk;
                float *ot = out + (bt * Hq + qh) * dv;
                for (long j = 0; j < dv; j++) {
                    double s = 0.0;
                    for (long i = 0; i < dk; i++) s += (double)qt[i] * (double)S[i * dv + j];
                    ot[j] = scale * (float)s;
                }
            }
        }
    }
}

void be_linear_attention_f32(const float *q, const float *k, const float *v, const float *decay, int decay_per_head,
                             const float *beta, long beta_heads, float *state, float *out, long B, long T, long Hq,
                             long Hkv, long dk, long dv, float scale, int threads) {
    const long group = Hq / Hkv;
    const int par = threads > 1 && B * Hkv > 1 && B * Hkv * T * dk * dv > 32768;
    linear_attention_call c_ = {q, k, v, decay, beta, state, out, decay_per_head, beta_heads, T, Hq, Hkv, dk, dv,
                                group, scale};
    be_parallel(par ? threads : 1, B * Hkv, linear_attention_heads, &c_);
}

