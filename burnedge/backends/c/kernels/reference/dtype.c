/* Codecs of the storage types computed in float (see dtype.h): exact widening, round-to-nearest-even narrowing. */
#include <math.h>
#include <string.h>

#include "dtype.h"

const struct be_float_format be_fmt_f16 = {5, 10, 15, BE_IEEE, 1};
const struct be_float_format be_fmt_bf16 = {8, 7, 127, BE_IEEE, 0};
const struct be_float_format be_fmt_e4m3fn = {4, 3, 7, BE_FN, 0};
const struct be_float_format be_fmt_e4m3fnuz = {4, 3, 8, BE_FNUZ, 0};
const struct be_float_format be_fmt_e5m2 = {5, 2, 15, BE_IEEE, 0};
const struct be_float_format be_fmt_e5m2fnuz = {5, 2, 16, BE_FNUZ, 0};
const struct be_float_format be_fmt_e2m1 = {2, 1, 1, BE_NOSPECIAL, 0};

/* the largest finite value of a format */
static double max_finite(const struct be_float_format *f) {
    int top = (1 << f->ebits) - 1; /* the biased exponent of the largest finite value */
    double mant = 2.0 - ldexp(1.0, -f->mbits);
    if (f->kind == BE_IEEE) top -= 1;
    if (f->kind == BE_FN) mant -= ldexp(1.0, -f->mbits); /* S.1111.111 is NaN */
    return ldexp(mant, top - f->bias);
}

float be_float_decode(uint32_t bits, const struct be_float_format *f) {
    uint32_t width = (uint32_t)(1 + f->ebits + f->mbits);
    uint32_t sign = (bits >> (width - 1)) & 1u;
    uint32_t e = (bits >> f->mbits) & ((1u << f->ebits) - 1u);
    uint32_t m = bits & ((1u << f->mbits) - 1u);
    uint32_t emax = (1u << f->ebits) - 1u;
    if (f->kind == BE_IEEE && e == emax) return m ? NAN : (sign ? -INFINITY : INFINITY);
    if (f->kind == BE_FN && e == emax && m == (1u << f->mbits) - 1u) return NAN;
    if (f->kind == BE_FNUZ && sign && e == 0 && m == 0) return NAN;
    double v = e ? ldexp((double)(m | (1u << f->mbits)), (int)e - f->bias - f->mbits)
                 : ldexp((double)m, 1 - f->bias - f->mbits);
    return (float)(sign ? -v : v);
}

/* the bits of NaN in format f with sign `sign` (ml_dtypes' choices: quiet NaN, S.1111.111, 0x80; float4e2m1
 * has none and ml_dtypes gives the zero of the opposite sign) */
static uint32_t nan_bits(double x, const struct be_float_format *f, uint32_t sign) {
    uint32_t width = (uint32_t)(1 + f->ebits + f->mbits);
    uint64_t d;
    memcpy(&d, &x, sizeof d);
    uint32_t payload = (uint32_t)((d & 0xFFFFFFFFFFFFFull) >> (52 - f->mbits));
    switch (f->kind) {
    case BE_IEEE:
        if (f->nan_payload)
            return (sign << (width - 1)) | (((1u << f->ebits) - 1u) << f->mbits) | (payload ? payload : 1u);
        return (sign << (width - 1)) | (((1u << f->ebits) - 1u) << f->mbits) | (1u << (f->mbits - 1));
    case BE_FN: return (sign << (width - 1)) | ((1u << (width - 1)) - 1u);
    case BE_FNUZ: return 1u << (width - 1);
    default: return (sign ^ 1u) << (width - 1);
    }
}

uint32_t be_float_encode(double x, const struct be_float_format *f, int saturate) {
    uint32_t width = (uint32_t)(1 + f->ebits + f->mbits);
    uint32_t sign = signbit(x) ? 1u : 0u;
    double a = fabs(x), top = max_finite(f);
    if (isnan(x)) return nan_bits(x, f, sign);
    int emin = 1 - f->bias; /* the exponent of the smallest normal value */
    double r = a;
    if (a != 0.0 && !isinf(a)) {
        int k;
        frexp(a, &k); /* a = [0.5, 1) * 2^k: its exponent is k - 1 */
        int e = k - 1 < emin ? emin : k - 1;
        double q = ldexp(1.0, e - f->mbits); /* the spacing of values around a */
        r = nearbyint(a / q) * q;            /* ties to even in the default rounding mode */
    }
    if (r > top) {
        if (saturate || f->kind == BE_NOSPECIAL) r = top;
        else if (f->kind == BE_IEEE) return (sign << (width - 1)) | (((1u << f->ebits) - 1u) << f->mbits);
        else return nan_bits(x, f, sign);
    }
    if (r == 0.0) return f->kind == BE_FNUZ ? 0u : sign << (width - 1);
    int k;
    frexp(r, &k);
    uint32_t e, m;
    if (k - 1 < emin) {
        e = 0;
        m = (uint32_t)ldexp(r, f->mbits - emin);
    } else {
        e = (uint32_t)(k - 1 + f->bias);
        m = (uint32_t)(ldexp(r, f->mbits - (k - 1)) - ldexp(1.0, f->mbits));
    }
    return (sign << (width - 1)) | (e << f->mbits) | m;
}

uint8_t be_st_e8m0(double x, int saturate, int round_mode) {
    float xf = (float)x;
    uint32_t bits;
    memcpy(&bits, &xf, sizeof bits);
    int32_t exp = (int32_t)((bits >> 23) & 0xFF);
    uint32_t mant = bits & 0x7FFFFF;
    if (exp == 0xFF) return (mant == 0 && saturate) ? 0xFE : 0xFF; /* inf saturates; NaN stays NaN */
    int bump = round_mode == 0   ? mant != 0
               : round_mode == 1 ? 0
                                 : (mant > 0x400000 || (mant == 0x400000 && exp > 0));
    exp += bump;
    if (exp > 0xFE) exp = saturate ? 0xFE : 0xFF;
    if (!saturate && (bits & 0x7FFFFFFF) == 0) exp = 0xFF; /* zero is below the smallest value */
    return (uint8_t)exp;
}

float be_ld_e8m0(uint8_t bits) { return bits == 0xFF ? NAN : ldexpf(1.0f, (int)bits - 127); }

int64_t be_float_to_wrapped(double x, int bits) {
    if (!isfinite(x)) return 0;
    return (int64_t)fmod(trunc(x), ldexp(1.0, bits));
}
