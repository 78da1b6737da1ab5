/* CausalConvWithState (opset 27): a depthwise causal 1-D convolution over [past_state | x], with its state out. */
#ifndef BURNEDGE_CAUSAL_CONV_H
#define BURNEDGE_CAUSAL_CONV_H

/* x: [B, C, N], w: [C, K], bias: [C] or NULL, past: [B, C, K - 1] or NULL (zeros); y: [B, C, N];
 * present: [B, C, K - 1], the last K - 1 positions of [past | x]. silu: y = y / (1 + exp(-y)). */
void be_causal_conv_f32(const float *x, const float *w, const float *bias, const float *past, float *y,
                        float *present, long B, long C, long N, long K, int silu, int threads);

#endif
