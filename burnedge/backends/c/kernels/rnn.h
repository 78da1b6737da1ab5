/* Recurrent layers (LSTM, GRU, RNN) in float32, one direction per call. See rnn.c. */
#ifndef BURNEDGE_RNN_H
#define BURNEDGE_RNN_H

#include <stdint.h>

enum be_rnn_kind { BE_RNN_LSTM = 0, BE_RNN_GRU = 1, BE_RNN_RNN = 2 };

/* activation functions of the ONNX recurrent ops, with their alpha / beta */
enum be_rnn_act {
    BE_RACT_SIGMOID = 0, BE_RACT_TANH, BE_RACT_RELU, BE_RACT_AFFINE, BE_RACT_LEAKY_RELU, BE_RACT_THRESHOLDED_RELU,
    BE_RACT_SCALED_TANH, BE_RACT_HARD_SIGMOID, BE_RACT_ELU, BE_RACT_SOFTSIGN, BE_RACT_SOFTPLUS
};

typedef struct {
    int kind;          /* enum be_rnn_kind; G = 4, 3, 1 gates */
    int T, B, I, H;    /* steps, batch, input size, hidden size */
    int reverse;       /* walk the steps from T-1 down to 0 */
    int lbr;           /* GRU linear_before_reset */
    int input_forget;  /* LSTM: f = 1 - i */
    float clip;        /* > 0: gate pre-activations are clipped to [-clip, clip] */
    int act[3];        /* f, g, h (enum be_rnn_act) */
    float alpha[3], beta[3];
    int64_t x_t, x_b;  /* element strides of X over steps and batch (rows of I contiguous) */
    int64_t y_t, y_b;  /* element strides of Y (this direction) over steps and batch */
    int64_t s_b;       /* batch stride of initial_h / initial_c / Y_h / Y_c (this direction) */
    const int32_t *lens; /* sequence_lens [B] or NULL (all T): past its length a sequence keeps its state and
                          * gives zeros in Y; a reverse direction starts at its last step, lens[b] - 1 */
} be_rnn_cfg;

/* scratch floats be_rnn_f32 needs */
int64_t be_rnn_scratch_floats(int kind, int T, int B, int H);

/* One direction. wt: W transposed [I, G*H]; rt: R transposed [H, G*H]; bias [G*H]: Wb + the part of Rb that
 * adds outside the reset gate; rbh [H]: GRU's Rb of the hidden gate when lbr (else unused); p: LSTM peepholes
 * [3H] or NULL; h0, c0: initial states or NULL; y, yh, yc: outputs or NULL. */
void be_rnn_f32(const be_rnn_cfg *cfg, const float *x, const float *wt, const float *rt, const float *bias,
                const float *rbh, const float *p, const float *h0, const float *c0, float *y, float *yh, float *yc,
                float *scratch, int threads);

/* C[M, N] += A[M, K] @ B[K, N] (row strides lda, ldb, ldc); the portable form of the kernel rnn.c uses */
void be_rnn_gemm_acc_portable(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                              int64_t ldb, float *C, int64_t ldc);

#endif
