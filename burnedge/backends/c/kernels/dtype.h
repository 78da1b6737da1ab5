/* Storage types computed in float: float16, bfloat16, the float8 family, float4e2m1 and float8e8m0; and the
 * 4-bit / 2-bit integers.
 *
 * These tensors are stored one element per C storage unit, exactly as numpy and ml_dtypes lay them out (so a
 * bundle's inputs and outputs are the arrays users pass): float16 and bfloat16 as their 16 bits, every 8-, 4- and
 * 2-bit type as one byte holding the bits in its low end (int4 -1 is 0x0F). Kernels compute on float (or int for
 * the small integers): `be_ld_<t>` widens a stored value exactly, `be_st_<t>` rounds a double to the nearest
 * value of the type, ties to even, as numpy and ml_dtypes do; out-of-range values become infinity where the type
 * has one, NaN where it has none (float8 fn/fnuz), or the largest finite value when `saturate` is set (ONNX Cast
 * and QuantizeLinear) and always for float4e2m1, which has neither. Rounding from double directly (never through
 * float) makes a float64 -> float16 cast exact.
 */
#ifndef BURNEDGE_DTYPE_H
#define BURNEDGE_DTYPE_H

#include <stdint.h>

/* the layout of a small float type: exponent and mantissa bits, bias, and how it spells NaN and infinity */
struct be_float_format {
    int ebits, mbits, bias;
    int kind; /* BE_IEEE: top exponent is inf/NaN; BE_FN: only S.1111.111 is NaN; BE_FNUZ: 0x80 is NaN, no -0;
                 BE_NOSPECIAL: no inf or NaN (float4e2m1) */
    int nan_payload; /* a NaN keeps the top bits of its payload (numpy's float16), else it is the quiet NaN */
};
enum { BE_IEEE = 0, BE_FN, BE_FNUZ, BE_NOSPECIAL };

extern const struct be_float_format be_fmt_f16, be_fmt_bf16, be_fmt_e4m3fn, be_fmt_e4m3fnuz, be_fmt_e5m2,
    be_fmt_e5m2fnuz, be_fmt_e2m1;

/* generic codecs over a format (the per-type wrappers below are what generated code calls) */
float be_float_decode(uint32_t bits, const struct be_float_format *f);
uint32_t be_float_encode(double x, const struct be_float_format *f, int saturate);

/* float8e8m0 (a bare power of two, 0xFF is NaN): from the float32 bits of x, as ONNX Cast specifies; round_mode
 * 0 = up, 1 = down, 2 = nearest */
uint8_t be_st_e8m0(double x, int saturate, int round_mode);
float be_ld_e8m0(uint8_t bits);

static inline float be_ld_f16(uint16_t b) { return be_float_decode(b, &be_fmt_f16); }
static inline float be_ld_bf16(uint16_t b) { return be_float_decode(b, &be_fmt_bf16); }
static inline float be_ld_e4m3fn(uint8_t b) { return be_float_decode(b, &be_fmt_e4m3fn); }
static inline float be_ld_e4m3fnuz(uint8_t b) { return be_float_decode(b, &be_fmt_e4m3fnuz); }
static inline float be_ld_e5m2(uint8_t b) { return be_float_decode(b, &be_fmt_e5m2); }
static inline float be_ld_e5m2fnuz(uint8_t b) { return be_float_decode(b, &be_fmt_e5m2fnuz); }
static inline float be_ld_e2m1(uint8_t b) { return be_float_decode(b & 0xF, &be_fmt_e2m1); }
static inline uint16_t be_st_f16(double x, int sat) { return (uint16_t)be_float_encode(x, &be_fmt_f16, sat); }
static inline uint16_t be_st_bf16(double x, int sat) { return (uint16_t)be_float_encode(x, &be_fmt_bf16, sat); }
static inline uint8_t be_st_e4m3fn(double x, int sat) { return (uint8_t)be_float_encode(x, &be_fmt_e4m3fn, sat); }
static inline uint8_t be_st_e4m3fnuz(double x, int sat) {
    return (uint8_t)be_float_encode(x, &be_fmt_e4m3fnuz, sat);
}
static inline uint8_t be_st_e5m2(double x, int sat) { return (uint8_t)be_float_encode(x, &be_fmt_e5m2, sat); }
static inline uint8_t be_st_e5m2fnuz(double x, int sat) {
    return (uint8_t)be_float_encode(x, &be_fmt_e5m2fnuz, sat);
}
static inline uint8_t be_st_e2m1(double x, int sat) { return (uint8_t)be_float_encode(x, &be_fmt_e2m1, sat); }

/* 4-bit and 2-bit integers: the value of the low bits (sign-extended for int4/int2), and the low bits of a value
 * (wrapping modulo 2^bits, as the reference's casts do) */
static inline int32_t be_ld_i4(uint8_t b) { return (int32_t)((b & 0xF) ^ 0x8) - 0x8; }
static inline int32_t be_ld_u4(uint8_t b) { return b & 0xF; }
static inline int32_t be_ld_i2(uint8_t b) { return (int32_t)((b & 0x3) ^ 0x2) - 0x2; }
static inline int32_t be_ld_u2(uint8_t b) { return b & 0x3; }
static inline uint8_t be_st_i4(int64_t v) { return (uint8_t)(v & 0xF); }
static inline uint8_t be_st_u4(int64_t v) { return (uint8_t)(v & 0xF); }
static inline uint8_t be_st_i2(int64_t v) { return (uint8_t)(v & 0x3); }
static inline uint8_t be_st_u2(int64_t v) { return (uint8_t)(v & 0x3); }

/* a float cast to a 4-/2-bit integer: truncated toward zero, wrapped modulo 2^bits; NaN and infinities give 0 */
int64_t be_float_to_wrapped(double x, int bits);

#endif
