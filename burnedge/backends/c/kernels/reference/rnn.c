/* Recurrent layers: LSTM, GRU and RNN in float32, one direction per call (the lowering calls it once per
 * direction, with this direction's weights and output strides).
 *
 * Steps:
 *   1. input projection of every step at once: XW[t, b, :] = bias + X[t, b, :] @ W^T, one GEMM over T*B rows
 *      (W was transposed to [I, G*H] and the biases that add outside any gate product were summed, at lowering
 *      time);
 *   2. recurrence over the steps (T-1 down to 0 for the reverse direction): gates = XW[t] + h @ R^T (R
 *      transposed to [H, G*H]), then the cell's elementwise update over contiguous gate vectors:
 *        LSTM (gate order i, o, f, c): i = f(gi + Pi*c), f = f(gf + Pf*c) (or 1 - i), c = f*c + i*g(gc),
 *                                      h = f(go + Po*c) * h(c)
 *        GRU  (gate order z, r, h):    z, r = f(.), hh = g(xw_h + (r*h) @ Rh^T), or with linear_before_reset
 *                                      g(xw_h + r * (h @ Rh^T + Rbh)); h = (1 - z) * hh + z * h
 *        RNN:                          h = f(gates)
 *      each pre-activation clipped to [-clip, clip] first when clip > 0; h goes to Y[t] as it is made;
 *   3. the last h (and c) go to Y_h (and Y_c).
 * The GEMM has an AVX2/FMA register-blocked path (4 rows x 16 columns, or 1 row x 64 for the B = 1 recurrence)
 * and a portable loop; only the projection is split over threads (by row blocks), so results do not depend on
 * the thread count.
 */
#include "burnedge.h"
#include "rnn.h"
#include "rnn_scalar.h"

#define gemm_acc be_rnn_gemm_acc_portable

static void sigmoid_n(float *restrict x, int64_t n) {
    int64_t j = 0;
    for (; j < n; j++) x[j] = sigmoid1(x[j]);
}

static void tanh_n(float *restrict x, int64_t n) {
    int64_t j = 0;
    for (; j < n; j++) x[j] = tanh1(x[j]);
}

#include "rnn_loops.h"
