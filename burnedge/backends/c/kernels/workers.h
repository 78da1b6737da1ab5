/* burnedge's worker pool: a parallel loop over independent work items, run by the calling thread and the
 * library's persistent workers (reference/workers.c has the algorithm).
 *
 *     be_parallel(threads, n, fn, ctx)   calls fn(ctx, tid, lo, hi) over [0, n) split into chunks; returns when
 *                                        every chunk is done; tid < threads names the thread running the chunk
 *                                        (a kernel's per-thread scratch slice), 0 is the caller
 *
 * Which thread runs which chunk changes from run to run, so a kernel must make every item's result independent of
 * tid and of the chunking (per-thread scratch is fine, per-thread partial sums are not). Without an OS
 * (BE_BAREMETAL) or with threads <= 1, fn runs once on the caller: fn(ctx, 0, 0, n).
 */
#ifndef BURNEDGE_WORKERS_H
#define BURNEDGE_WORKERS_H

#include <stdint.h>

typedef void (*be_task)(void *ctx, int tid, long lo, long hi);

#define BE_POOL_MAX_THREADS 256 /* a hard ceiling; burnedge.limits' max_threads bounds what a session asks */

/* what a generated model's parallel loop (a task of its own, lower/__init__.py's Ctx.task) reads */
typedef struct {
    uint8_t *arena;
    const uint8_t *weights;
} be_step_args;

void be_parallel(int threads, long n, be_task fn, void *ctx);

/* stops and joins the workers when no run is using them (a closed session); they start again on the next
 * parallel loop. Returns the workers still running (0 once stopped). */
int be_pool_shutdown(void);

/* how many workers are running now (tests) */
int be_pool_workers(void);

#endif
