/* burnedge's worker pool (workers.h): persistent threads of the model library that share a parallel loop with
 * the thread that calls it. Plain C11 atomics and pthreads; Linux futexes to sleep; nothing on bare metal.
 *
 * One pool per loaded library (its globals), used by one caller at a time: a caller that finds it busy (another
 * run of the library at the same moment, or a parallel loop inside a task) runs its loop alone, so threads never
 * multiply. A parallel loop:
 *   1. the caller takes the pool (a flag, never waited for), starts workers up to threads - 1 the first time;
 *      threads is capped at the CPUs this process may run on (no oversubscription);
 *   2. it publishes the job (fn, ctx, n, chunks) and one 64-bit state word: generation | threads | chunks left,
 *      then bumps the wake word and wakes sleeping workers (futex);
 *   3. every thread, the caller too, takes chunks by compare-and-swap on the state word until none is left:
 *      a worker the OS has not scheduled takes none, so a loaded machine costs at most the chunk a preempted
 *      worker holds, never the whole loop (chunks are ~4 per thread, of balanced sizes);
 *   4. the caller waits for the chunks in flight (spin, then yield) and gives the pool back.
 * A worker spins on the wake word for a short while (the next step of the plan comes within microseconds), then
 * sleeps on it, so an idle library costs no CPU. be_pool_shutdown (a closed session, the library's unload, a
 * fork's child) stops and joins them.
 */
#if !defined(BE_BAREMETAL) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* sched_getaffinity, syscall: before any system header */
#endif
#include "workers.h"

#if defined(BE_BAREMETAL)

void be_parallel(int threads, long n, be_task fn, void *ctx) {
    (void)threads;
    if (n > 0) fn(ctx, 0, 0, n);
}
int be_pool_shutdown(void) { return 0; }
int be_pool_workers(void) { return 0; }

#else

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "isa.h"

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
static void futex_wait(atomic_uint *word, unsigned seen) {
    syscall(SYS_futex, (unsigned *)word, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
}
static void futex_wake(atomic_uint *word) { syscall(SYS_futex, (unsigned *)word, FUTEX_WAKE_PRIVATE, INT_MAX); }
#else /* no futex: a short nap instead of a sleep that is woken */
static void futex_wait(atomic_uint *word, unsigned seen) {
    struct timespec nap = {0, 50000};
    if (atomic_load(word) == seen) nanosleep(&nap, NULL);
}
static void futex_wake(atomic_uint *word) { (void)word; }
#endif

enum {
    CHUNKS_PER_THREAD = 4,
    SPIN_NS = 50000,  /* a worker waits this long for the next job (the plan's next step), then sleeps */
    YIELD_NS = 2000,  /* past this, a waiting thread yields its CPU between looks: pure spinning only at first */
    LOOK_SPINS = 16,  /* pauses between looks at the clock */
};

/* one look of a thread waiting since t0 (ns) for a flag: pause while the wait is young, then give the CPU to any
 * thread that wants it. On a loaded machine a waiting worker often shares a core with the caller (the scheduler
 * puts a woken thread where there is room); a spinning worker would keep the caller off it until its spin ends,
 * so it yields: with nothing else runnable sched_yield returns at once and the wait stays short. */
static void wait_a_little(int spins, double t0);

/* the state word: generation (23 bits) | threads (9 bits) | chunks left (32 bits) */
#define STATE(gen, nt, left) ((((uint64_t)(gen) & 0x7fffff) << 41) | ((uint64_t)(nt) << 32) | (uint64_t)(left))
#define STATE_THREADS(s) ((int)(((s) >> 32) & 0x1ff))
#define STATE_LEFT(s) ((uint32_t)(s))

static struct {
    atomic_int busy;          /* a caller holds the pool */
    _Atomic uint64_t state;   /* the job's generation, threads and chunks left */
    atomic_uint wake;         /* the futex word: bumped for every job and for stop */
    atomic_int sleepers;      /* workers asleep (or about to be) on `wake` */
    atomic_long completed;    /* chunks of the job done */
    atomic_int stop;          /* workers exit on the next wake */
    atomic_int running;       /* workers started and not joined */
    be_task fn;               /* the job: written by the caller before `state`, read after taking a chunk */
    void *ctx;
    long n, chunks;
    unsigned gen;             /* the caller's (under busy) */
    unsigned born[BE_POOL_MAX_THREADS]; /* the wake word when worker i + 1 was started, its own slot: a later
                                        * start of more workers must not write what a slow one still reads */
    int cpus;                 /* CPUs this process may use (0: not asked yet) */
    pthread_t threads[BE_POOL_MAX_THREADS];
} P;

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void wait_a_little(int spins, double t0) {
    if (spins % LOOK_SPINS != LOOK_SPINS - 1 || now_ns() - t0 < YIELD_NS)
        BE_CPU_RELAX();
    else
        sched_yield();
}

/* takes and runs chunks of the published job while there are some and `tid` is one of its threads */
static void run_chunks(int tid) {
    uint64_t s = atomic_load_explicit(&P.state, memory_order_acquire);
    for (;;) {
        const uint32_t left = STATE_LEFT(s);
        if (left == 0 || tid >= STATE_THREADS(s)) return;
        if (!atomic_compare_exchange_weak_explicit(&P.state, &s, s - 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        const long c = P.chunks - (long)left; /* the job stays put until its last chunk is counted done */
        P.fn(P.ctx, tid, P.n * c / P.chunks, P.n * (c + 1) / P.chunks);
        atomic_fetch_add_explicit(&P.completed, 1, memory_order_release);
        s = atomic_load_explicit(&P.state, memory_order_acquire);
    }
}

static void *worker(void *arg) {
    const int tid = (int)(intptr_t)arg;
    unsigned seen = P.born[tid - 1]; /* written before this thread's pthread_create, which orders it */
    for (;;) {
        unsigned w;
        const double t0 = now_ns();
        for (int spins = 0; (w = atomic_load_explicit(&P.wake, memory_order_acquire)) == seen; spins++) {
            if (spins % LOOK_SPINS != LOOK_SPINS - 1 || now_ns() - t0 < SPIN_NS) {
                wait_a_little(spins, t0);
                continue;
            }
            atomic_fetch_add(&P.sleepers, 1); /* seq_cst with the caller's bump of `wake`: no wake is lost */
            while (atomic_load(&P.wake) == seen) futex_wait(&P.wake, seen);
            atomic_fetch_sub(&P.sleepers, 1);
        }
        seen = w;
        if (atomic_load(&P.stop)) return NULL;
        run_chunks(tid);
    }
}

static int cpus_allowed(void) {
#if defined(BE_POOL_CPUS) /* a test's stand-in for a machine with that many CPUs (the pool grows as on one) */
    return BE_POOL_CPUS;
#endif
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
#endif
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void stop_workers(void) { /* under busy */
    const int n = atomic_load(&P.running);
    if (n == 0) return;
    atomic_store(&P.stop, 1);
    atomic_fetch_add(&P.wake, 1);
    futex_wake(&P.wake);
    for (int i = 0; i < n; i++) pthread_join(P.threads[i], NULL);
    atomic_store(&P.running, 0);
    atomic_store(&P.stop, 0);
}

static void forget_workers(void) { /* a fork's child: the workers were not copied */
    atomic_store(&P.running, 0);
    atomic_store(&P.sleepers, 0);
    atomic_store(&P.busy, 0);
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void watch_forks(void) { pthread_atfork(NULL, NULL, forget_workers); }

/* starts workers until `want` run (under busy); fewer when the system refuses threads */
static void start_workers(int want) {
    pthread_once(&fork_once, watch_forks);
    for (int i = atomic_load(&P.running); i < want; i++) {
        P.born[i] = atomic_load(&P.wake);
        if (pthread_create(&P.threads[i], NULL, worker, (void *)(intptr_t)(i + 1)) != 0) break;
        atomic_store(&P.running, i + 1);
    }
}

static int take_pool(void) {
    int free_ = 0;
    return atomic_compare_exchange_strong(&P.busy, &free_, 1);
}

void be_parallel(int threads, long n, be_task fn, void *ctx) {
    if (n <= 0) return;
    if (threads > BE_POOL_MAX_THREADS) threads = BE_POOL_MAX_THREADS;
    if (threads > n) threads = (int)n;
    if (threads <= 1 || !take_pool()) {
        fn(ctx, 0, 0, n);
        return;
    }
    if (!P.cpus) P.cpus = cpus_allowed();
    int nt = threads < P.cpus ? threads : P.cpus;
    if (atomic_load(&P.running) < nt - 1) start_workers(nt - 1);
    if (nt > atomic_load(&P.running) + 1) nt = atomic_load(&P.running) + 1;
    if (nt <= 1) {
        atomic_store(&P.busy, 0);
        fn(ctx, 0, 0, n);
        return;
    }
    const long chunks = n < (long)CHUNKS_PER_THREAD * nt ? n : (long)CHUNKS_PER_THREAD * nt;
    P.fn = fn, P.ctx = ctx, P.n = n, P.chunks = chunks;
    atomic_store_explicit(&P.completed, 0, memory_order_relaxed);
    atomic_store_explicit(&P.state, STATE(++P.gen, nt, chunks), memory_order_release);
    atomic_fetch_add(&P.wake, 1);
    if (atomic_load(&P.sleepers) > 0) futex_wake(&P.wake);
    run_chunks(0);
    const double t0 = now_ns(); /* chunks in flight: a worker holding one may have lost its CPU, let it run */
    for (int spins = 0; atomic_load_explicit(&P.completed, memory_order_acquire) < chunks; spins++)
        wait_a_little(spins, t0);
    atomic_store_explicit(&P.busy, 0, memory_order_release);
}

int be_pool_shutdown(void) {
    if (!take_pool()) return atomic_load(&P.running);
    stop_workers();
    atomic_store(&P.busy, 0);
    return 0;
}

int be_pool_workers(void) { return atomic_load(&P.running); }

__attribute__((destructor)) static void unload(void) { be_pool_shutdown(); }

#endif
