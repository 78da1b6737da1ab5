/* int8 global average pools: burnedge.QGlobalAvgPool, NCHW and channels-last (threads over planes).
 *
 * A plane's sum of x, minus zp * size, then one rounded division.
 */
#include "qpool.h"

static int64_t plane_sum(const int8_t *x, long n) {
    long i = 0;
    int64_t s = 0;
    for (; i < n; i++) s += x[i];
    return s;
}

#include "qglobal_pool_loops.h"
