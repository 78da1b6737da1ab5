/* Trilu (misc.h): each row keeps one contiguous run of columns and zeroes the rest, so a row is two block moves. */
#include "burnedge.h"
#include "misc.h"

void be_trilu(const uint8_t *x, uint8_t *y, long batch, long rows, long cols, int64_t k, int upper, long esize) {
    /* clamp k so that row + k cannot overflow; any |k| beyond rows + cols acts the same */
    int64_t lim = (int64_t)rows + (int64_t)cols;
    if (k > lim) k = lim;
    if (k < -lim) k = -lim;
    for (long b = 0; b < batch; b++) {
        for (long r = 0; r < rows; r++) {
            long off = (b * rows + r) * cols;
            /* kept columns [lo, hi) */
            int64_t lo = upper ? r + k : 0, hi = upper ? cols : r + k + 1;
            if (lo < 0) lo = 0;
            if (lo > cols) lo = cols;
            if (hi > cols) hi = cols;
            if (hi < lo) hi = lo;
            uint8_t *yr = y + off * esize;
            const uint8_t *xr = x + off * esize;
            memset(yr, 0, (size_t)(lo * esize));
            if (hi > lo) memmove(yr + lo * esize, xr + lo * esize, (size_t)((hi - lo) * esize));
            memset(yr + hi * esize, 0, (size_t)((cols - hi) * esize));
        }
    }
}
