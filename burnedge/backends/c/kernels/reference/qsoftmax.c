/* int8 softmax: burnedge.QSoftmax along an axis seen as [outer, n, inner] (threads over rows).
 *
 * Per row: 1. the row's max; 2. e = table[max - x] and their int64 sum; 3. y = round_div(e * 256, sum) - 128
 * clamped, the division done in double and corrected to the exact integer quotient.
 */
#include "qpool.h"
#include "workers.h"

static inline int8_t clamp8(int64_t v) { return (int8_t)(v < -128 ? -128 : (v > 127 ? 127 : v)); }

/* round_div(a, n) for 0 <= a < 2^53, 0 < n < 2^53: a double quotient corrected to the exact floor */
static inline int64_t div_pos(int64_t a, int64_t n) {
    const int64_t num = a + n / 2;
    int64_t q = (int64_t)((double)num / (double)n);
    while (q > 0 && q * n > num) q--;
    while ((q + 1) * n <= num) q++;
    return q;
}

typedef struct {
    const int8_t *x;
    int8_t *y;
    long n, inner;
    const int32_t *table;
} qsoftmax_call;

/* rows lo .. hi-1 of [outer, inner] */
static void qsoftmax_rows(void *ctx, int tid, long lo, long hi) {
    const qsoftmax_call *c = ctx;
    const int8_t *x = c->x;
    int8_t *y = c->y;
    const long n = c->n, inner = c->inner;
    const int32_t *table = c->table;
    (void)tid;
    for (long r = lo; r < hi; r++) {
        const long o = r / inner, i = r % inner;
        const int8_t *xr = x + o * n * inner + i;
        int8_t *yr = y + o * n * inner + i;
        int mx = -128;
        for (long k = 0; k < n; k++) mx = xr[k * inner] > mx ? xr[k * inner] : mx;
        int64_t total = 0;
        int neg = 0;
        for (long k = 0; k < n; k++) {
            const int32_t e = table[mx - xr[k * inner]];
            total += e;
            neg |= e < 0;
        }
        if (total <= 0 || neg || total >= ((int64_t)1 << 52)) { /* outside the spec's tables: the plain rule */
            for (long k = 0; k < n; k++) {
                const int64_t e = (int64_t)table[mx - xr[k * inner]] * 256;
                yr[k * inner] = total > 0 ? clamp8(be_round_div(e, total) - 128) : (int8_t)-128;
            }
            continue;
        }
        for (long k = 0; k < n; k++) {
            const int64_t e = (int64_t)table[mx - xr[k * inner]] * 256;
            yr[k * inner] = clamp8(div_pos(e, total) - 128);
        }
    }
}

void be_qsoftmax_i8(const int8_t *x, int8_t *y, long outer, long n, long inner, const int32_t *table, int threads) {
    const long rows = outer * inner;
    const int par = threads > 1 && rows > 1 && rows * n > 16384;
    qsoftmax_call c = {x, y, n, inner, table};
    be_parallel(par ? threads : 1, rows, qsoftmax_rows, &c);
}
