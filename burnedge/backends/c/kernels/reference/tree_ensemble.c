/* TreeEnsemble (ml.h), as burnedge/ops/ml.py computes it: comparisons in double, sums in tree order. */
#include "burnedge.h"
#include "ml.h"

/* the leaf row `xr` reaches in the tree whose root is `at`; -1 after more than n_nodes steps */
static long be__tree_leaf(const be_forest *te, const void *xr, int x64, long at) {
    if (at < 0) return -1 - at;
    for (long steps = 0; steps <= te->n_nodes; steps++) {
        const int64_t *nd = te->nodes + at * BE_TREE_FIELDS;
        const long f = (long)nd[BE_TREE_FEATURE];
        const double v = x64 ? ((const double *)xr)[f] : (double)((const float *)xr)[f];
        const double s = te->splits[at];
        int go;
        switch (nd[BE_TREE_MODE]) {
        case 0: go = v <= s; break;
        case 1: go = v < s; break;
        case 2: go = v >= s; break;
        case 3: go = v > s; break;
        case 4: go = v == s; break;
        case 5: go = v != s; break;
        default: {
            const double *set = te->sets + nd[BE_TREE_SET_START];
            go = 0;
            for (long k = 0; k < nd[BE_TREE_SET_LEN] && !go; k++) go = v == set[k];
        }
        }
        if (v != v && nd[BE_TREE_NAN_TRUE]) go = 1;
        at = (long)nd[go ? BE_TREE_TRUE : BE_TREE_FALSE];
        if (nd[go ? BE_TREE_TRUE_LEAF : BE_TREE_FALSE_LEAF]) return at;
    }
    return -1;
}

static void be__tree_post(double *acc, long n, int post) {
    if (post == 2) {
        for (long t = 0; t < n; t++) acc[t] = 1.0 / (1.0 + exp(-acc[t]));
    } else if (post == 1 || post == 3) {
        double hi = -INFINITY, sum = 0.0;
        for (long t = 0; t < n; t++)
            if ((post == 1 || acc[t] != 0.0) && acc[t] > hi) hi = acc[t];
        for (long t = 0; t < n; t++) {
            acc[t] = (post == 1 || acc[t] != 0.0) ? exp(acc[t] - hi) : 0.0;
            sum += acc[t];
        }
        for (long t = 0; t < n; t++) acc[t] /= sum == 0.0 ? 1.0 : sum;
    }
}

int be_tree_ensemble(const void *x, int x64, void *y, long rows, long feats, const be_forest *te,
                     double *acc) {
    const long nt = te->n_targets;
    const double init = te->aggregate == 2 ? INFINITY : te->aggregate == 3 ? -INFINITY : 0.0;
    for (long r = 0; r < rows; r++) {
        const void *xr = (const uint8_t *)x + r * feats * (x64 ? 8 : 4);
        for (long t = 0; t < nt; t++) acc[t] = init;
        for (long k = 0; k < te->n_trees; k++) {
            const long leaf = be__tree_leaf(te, xr, x64, (long)te->roots[k]);
            if (leaf < 0) return 2;
            const long t = (long)te->leaf_target[leaf];
            const double w = te->leaf_weight[leaf];
            if (te->aggregate == 2) /* a NaN weight wins, as in numpy's minimum / maximum */
                acc[t] = (w < acc[t] || w != w) ? w : acc[t];
            else if (te->aggregate == 3)
                acc[t] = (w > acc[t] || w != w) ? w : acc[t];
            else
                acc[t] += w;
        }
        for (long t = 0; t < nt; t++) {
            if (te->aggregate == 0) acc[t] /= (double)te->n_trees;
            if (isinf(acc[t])) acc[t] = 0.0;
        }
        be__tree_post(acc, nt, te->post);
        for (long t = 0; t < nt; t++) {
            if (x64)
                ((double *)y)[r * nt + t] = acc[t];
            else
                ((float *)y)[r * nt + t] = (float)acc[t];
        }
    }
    return 0;
}
