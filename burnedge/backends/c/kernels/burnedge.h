/* burnedge kernel library: declarations shared by the kernels and the generated model source.
 *
 * Conventions: tensors are dense, row-major (NCHW for images) float32 unless a name says otherwise; shapes are
 * passed as plain integers; the caller owns every buffer (the arena and the weights); kernels never allocate.
 * `threads` is how many threads a kernel may use; every output element is computed by exactly one thread in a
 * fixed order, so results do not depend on it.
 */
#ifndef BURNEDGE_H
#define BURNEDGE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* kernels: an OpenMP parallel loop over independent outputs when `cond` holds; nothing without OpenMP (bare metal) */
#ifndef BE_PARALLEL_FOR
#ifdef _OPENMP
#define BE_PRAGMA(x) _Pragma(#x)
#define BE_PARALLEL_FOR(cond) BE_PRAGMA(omp parallel for num_threads(threads) if (cond))
#else
#define BE_PARALLEL_FOR(cond)
#endif
#endif

/* integer modulo with the sign of the divisor (ONNX Mod, fmod=0); 0 for a zero divisor */
static inline int64_t be_floor_mod(int64_t a, int64_t b) {
    if (b == 0) return 0;
    int64_t r = a % b;
    return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

/* integer power wrapping like numpy's (mod 2^bits); a negative exponent gives 0 but for the bases 1 and -1 */
static inline int64_t be_powi(int64_t b, int64_t e) {
    if (e < 0) return b == 1 ? 1 : (b == -1 ? ((e & 1) ? -1 : 1) : 0);
    uint64_t r = 1, x = (uint64_t)b;
    for (; e; e >>= 1, x *= x)
        if (e & 1) r *= x;
    return (int64_t)r;
}

/* epilogue activations of FusedConv / FusedGemm / FusedMatMul (see burnedge/ops/fused.py) */
enum be_act {
    BE_ACT_NONE = 0, BE_ACT_RELU, BE_ACT_CLIP, BE_ACT_LEAKY_RELU, BE_ACT_HARD_SIGMOID, BE_ACT_HARD_SWISH,
    BE_ACT_SIGMOID, BE_ACT_TANH, BE_ACT_GELU
};

/* max / min / clamp to [0, 1] that keep a NaN (either operand), as numpy's maximum, minimum and clip do */
static inline float be_maxf(float a, float b) { return (a > b || a != a) ? a : b; }
static inline float be_minf(float a, float b) { return (a < b || a != a) ? a : b; }
static inline float be_clamp01(float t) { return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t); }
static inline double be_maxd(double a, double b) { return (a > b || a != a) ? a : b; }
static inline double be_mind(double a, double b) { return (a < b || a != a) ? a : b; }
static inline double be_clamp01d(double t) { return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t); }

/* a NaN passes every activation, as in the reference (numpy's maximum/minimum): the comparisons are written so */
static inline float be_activate(float y, int act, float p0, float p1) {
    switch (act) {
    case BE_ACT_RELU: return y < 0.0f ? 0.0f : y;
    case BE_ACT_CLIP: return y < p0 ? p0 : (y > p1 ? p1 : y);
    case BE_ACT_LEAKY_RELU: return y >= 0.0f ? y : p0 * y;
    case BE_ACT_HARD_SIGMOID: return be_clamp01(p0 * y + p1);
    case BE_ACT_HARD_SWISH: return y * be_clamp01(y * (1.0f / 6.0f) + 0.5f);
    case BE_ACT_SIGMOID: return 1.0f / (1.0f + expf(-y));
    case BE_ACT_TANH: return tanhf(y);
    case BE_ACT_GELU: return 0.5f * y * (1.0f + erff(y * 0.70710678118654752f));
    default: return y;
    }
}

/* Kernels are declared in one header per family (kernels/<family>.h, defined in <family>.c); the generated
 * model source includes every header. */

#endif
