/* Classical ML kernels (ai.onnx.ml): TreeEnsemble.
 *
 * A tree ensemble is a set of tables built at compile time from the node's attributes (lower/tree_ensemble.py):
 * per decision node BE_TREE_FIELDS int64 values and a split value; per leaf a target and a weight. */
#ifndef BURNEDGE_ML_H
#define BURNEDGE_ML_H

#include <stdint.h>

/* the int64 fields of one decision node, in this order */
enum be_tree_field {
    BE_TREE_MODE,       /* 0 <=, 1 <, 2 >=, 3 >, 4 ==, 5 !=, 6 member of its set */
    BE_TREE_FEATURE,    /* the column of x it reads */
    BE_TREE_TRUE,       /* the child taken when the test holds: a node id, or a leaf id when BE_TREE_TRUE_LEAF */
    BE_TREE_FALSE,      /* the child taken otherwise */
    BE_TREE_TRUE_LEAF,  /* 1: BE_TREE_TRUE is a leaf */
    BE_TREE_FALSE_LEAF, /* 1: BE_TREE_FALSE is a leaf */
    BE_TREE_NAN_TRUE,   /* 1: a NaN value takes the true child whatever the test */
    BE_TREE_SET_START,  /* mode 6: its set is sets[start .. start + length) */
    BE_TREE_SET_LEN,
    BE_TREE_FIELDS
};

typedef struct {
    long n_nodes, n_trees, n_targets;
    const int64_t *roots;       /* per tree: its root node, or -1 - leaf for a tree that is a single leaf */
    const int64_t *nodes;       /* [n_nodes][BE_TREE_FIELDS] */
    const double *splits;       /* [n_nodes] */
    const double *sets;         /* the sets of mode-6 nodes, one after the other */
    const int64_t *leaf_target; /* per leaf: the target its weight goes to */
    const double *leaf_weight;
    int aggregate; /* 0 average, 1 sum, 2 min, 3 max */
    int post;      /* 0 none, 1 softmax, 2 logistic, 3 softmax keeping zeros at zero */
} be_forest;

/* y [rows, n_targets] from x [rows, feats] (float32, or float64 when x64; y the same type): every tree walks each
 * row to one leaf, weights aggregate per target in double in tree order (a target no tree reached is 0), then
 * the post transform. `acc` is n_targets doubles of scratch. Returns nonzero for a walk longer than n_nodes (a
 * cycle, which the lowering refuses before). */
int be_tree_ensemble(const void *x, int x64, void *y, long rows, long feats, const be_forest *te,
                     double *acc);

#endif
