/* burnedge runner: runs a compiled model (model.so) on raw test vectors, without Python, and checks the outputs.
 *
 * For boards without Python and for QEMU emulation (`burnedge emulate`, which writes the folder this reads; keep
 * it with --keep DIR and copy it to a board). Build: cc -O2 -std=c11 runner.c -o runner -ldl
 *
 * The job file (text, one directive a line, a line starting with '#' is a comment; paths are relative to the job
 * file's folder and stay inside it: no absolute path, no ".." part; numbers are plain decimal digits):
 *
 *     burnedge-runner 1                      the format and its version
 *     library model.so                       the model library (exports be_model_run, be_model_arena_bytes,
 *                                            be_model_weight_bytes)
 *     weights weights.bin 123456             the weight blob, exactly as the library addresses it, and its bytes
 *     arena 45678                            the arena bytes the library was planned with
 *     input 0 OFFSET NBYTES NAME             input k lives at OFFSET in the arena
 *     output 0 OFFSET NBYTES DTYPE TOL NAME  output k: DTYPE is f32 f64 f16 bf16 (compared as floats: largest
 *                                            |got - ref| relative to the largest |ref| must be <= TOL; NaN and
 *                                            inf must match) or i8 u8 i16 u16 i32 u32 i64 u64 bool (exact)
 *     vector vectors/0                       a folder with in_<k>.bin for every input and, optionally,
 *                                            ref_<k>.bin for output k; the runner writes out_<k>.bin there
 *
 * Raw files hold the tensor's bytes, row-major, in the board's byte order (little-endian on every target).
 *
 * Steps: 1. read the job; 2. dlopen the library and check its arena and weight sizes against the job;
 * 3. read the weights into a 64-byte aligned buffer; 4. for each vector: copy the inputs into the arena at their
 * offsets, run (timed, the fastest of --repeat runs), write each output and compare it with its reference;
 * 5. print one line per output, the time per vector, the largest error, then PASS or FAIL.
 * Exit status: 0 PASS, 1 FAIL, 2 an error (a message on stderr).
 *
 * Hostile jobs: every number is checked (no sign, no overflow), bounds are checked without wrapping sums, files are
 * opened without following symbolic links and must be regular (a FIFO or device is refused, not waited on), and
 * outputs are created afresh (O_EXCL), so a link planted at out_<k>.bin is refused rather than written through.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_TENSORS 256
#define MAX_VECTORS 1024
#define MAX_PATH 4096

typedef int (*run_fn)(uint8_t *arena, const uint8_t *weights, int threads);
typedef size_t (*size_fn)(void);

typedef struct {
    size_t offset, nbytes;
    char dtype[8];
    double tolerance;
    char name[256];
} tensor;

typedef struct {
    char library[MAX_PATH], weights[MAX_PATH];
    size_t weight_bytes, arena_bytes;
    int n_in, n_out, n_vec;
    tensor in[MAX_TENSORS], out[MAX_TENSORS];
    char *vectors[MAX_VECTORS];
} job;

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("runner: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(2);
}

/* `name` inside `dir` into `out`. Hardened: `name` must be relative and free of ".." parts, so every file the job
 * names lies in the job's folder; an empty `dir` becomes "." so that dlopen takes a path, never a search. */
static void join(char *out, const char *dir, const char *name) {
    if (name[0] == '/') die("%s: an absolute path; the job names files inside its own folder only", name);
    for (const char *p = name; *p; p++)
        if (p[0] == '.' && p[1] == '.' && (p == name || p[-1] == '/') && (p[2] == '/' || p[2] == 0))
            die("%s: a \"..\" part; the job names files inside its own folder only", name);
    if (!dir[0]) dir = ".";
    size_t nd = strlen(dir), nn = strlen(name);
    if (nd + nn + 2 > MAX_PATH) die("path too long: %s/%s", dir, name);
    memcpy(out, dir, nd);
    out[nd++] = '/';
    memcpy(out + nd, name, nn + 1);
    /* no part of `name` may be a symbolic link: a linked folder would lead reads and writes out of the job */
    for (char *p = out + nd;; p++) {
        if (*p != '/' && *p != 0) continue;
        char keep = *p;
        *p = 0;
        struct stat st;
        int linked = lstat(out, &st) == 0 && S_ISLNK(st.st_mode);
        *p = keep;
        if (linked) die("%s: a symbolic link inside the job folder; the job names plain files and folders only", out);
        if (!keep) break;
    }
}

static void *aligned(size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 1) != 0) die("out of memory (%zu bytes)", n);
    return p;
}

/* Opens an existing regular file for reading: never follows a symbolic link (O_NOFOLLOW), never blocks on a FIFO
 * or a device (O_NONBLOCK, then fstat: only S_ISREG passes). Returns the descriptor; `size` gets the file's bytes. */
static int open_regular(const char *path, size_t *size) {
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) die("cannot open %s (%s)", path, errno == ELOOP ? "a symbolic link" : strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) die("%s is not a regular file", path);
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) die("cannot read %s", path);
    *size = (size_t)st.st_size;
    return fd;
}

/* Reads exactly `n` bytes of the regular file `path` into `dst` (its size must be `n`). */
static void read_file(const char *path, void *dst, size_t n) {
    size_t size;
    int fd = open_regular(path, &size);
    if (size != n) die("%s: %zu bytes, expected %zu", path, size, n);
    for (size_t done = 0; done < n;) {
        ssize_t got = read(fd, (uint8_t *)dst + done, n - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) die("%s: expected %zu bytes", path, n);
        done += (size_t)got;
    }
    close(fd);
}

/* Writes `n` bytes to `path` as a new regular file: an old regular file there is removed first; anything else (a
 * symbolic link, a FIFO, a folder) is refused, and O_EXCL | O_NOFOLLOW refuse one made meanwhile. */
static void write_file(const char *path, const void *src, size_t n) {
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (!S_ISREG(st.st_mode)) die("%s exists and is not a regular file; refusing to write it", path);
        if (unlink(path) != 0) die("cannot replace %s (%s)", path, strerror(errno));
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) die("cannot write %s (%s)", path, strerror(errno));
    for (size_t done = 0; done < n;) {
        ssize_t put = write(fd, (const uint8_t *)src + done, n - done);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) die("cannot write %s", path);
        done += (size_t)put;
    }
    if (close(fd) != 0) die("cannot write %s", path);
}

/* A whole number: decimal digits only (no sign, no space, no suffix), at most `max`. Returns 1 on success. */
static int parse_count(const char *s, size_t max, size_t *out) {
    if (!s || *s < '0' || *s > '9') return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max) return 0;
    *out = (size_t)v;
    return 1;
}

/* The `i`th whitespace-separated field of `line` (0 is the directive) into `out`; 0 when there is none. */
static const char *field(const char *line, int i, char *out, size_t cap) {
    const char *p = line;
    for (int k = 0;; k++) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) return NULL;
        size_t n = strcspn(p, " \t");
        if (k == i) {
            if (n >= cap) return NULL;
            memcpy(out, p, n);
            out[n] = 0;
            return out;
        }
        p += n;
    }
}

static int count_field(const char *line, int i, size_t max, size_t *out) {
    char word[64];
    return parse_count(field(line, i, word, sizeof word), max, out);
}

/* the rest of the line after the first `skip` fields, trimmed: a tensor's name (may hold spaces) */
static void tail(const char *line, int skip, char *out, size_t cap) {
    const char *p = line;
    for (int i = 0; i < skip; i++) {
        while (*p == ' ' || *p == '\t') p++;
        while (*p && *p != ' ' && *p != '\t') p++;
    }
    while (*p == ' ' || *p == '\t') p++;
    snprintf(out, cap, "%s", p);
    size_t n = strlen(out);
    while (n && (out[n - 1] == '\n' || out[n - 1] == '\r' || out[n - 1] == ' ')) out[--n] = 0;
}

/* a tensor line: "input K OFFSET NBYTES NAME" or "output K OFFSET NBYTES DTYPE TOL NAME"; 1 when it parses */
static int tensor_line(const char *line, int k, tensor *t, int is_output) {
    size_t index;
    if (!count_field(line, 1, MAX_TENSORS, &index) || index != (size_t)k) return 0;
    if (!count_field(line, 2, SIZE_MAX, &t->offset) || !count_field(line, 3, SIZE_MAX, &t->nbytes)) return 0;
    if (!is_output) {
        tail(line, 4, t->name, sizeof t->name);
        return 1;
    }
    char tol[64], *end;
    if (!field(line, 4, t->dtype, sizeof t->dtype) || !field(line, 5, tol, sizeof tol)) return 0;
    errno = 0;
    t->tolerance = strtod(tol, &end);
    if (errno || *end || !(t->tolerance >= 0) || isinf(t->tolerance)) return 0;
    tail(line, 6, t->name, sizeof t->name);
    return 1;
}

/* `t` lies inside the arena: offset + nbytes <= arena, written so that no sum can wrap around */
static int inside(const tensor *t, size_t arena) { return t->nbytes <= arena && t->offset <= arena - t->nbytes; }

static void parse(const char *path, const char *dir, job *j) {
    size_t size;
    int fd = open_regular(path, &size);
    FILE *f = fdopen(fd, "r");
    if (!f) die("cannot open the job file %s", path);
    char line[8192], word[64], arg[MAX_PATH];
    int lineno = 0, version = 0;
    memset(j, 0, sizeof *j);
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0;
        if (!field(line, 0, word, sizeof word) || word[0] == '#') continue;
        int ok = 1;
        size_t n = 0;
        if (!strcmp(word, "burnedge-runner")) {
            ok = count_field(line, 1, 1000000, &n) && !field(line, 2, arg, sizeof arg);
            version = (int)n;
            if (ok && version != 1) die("%s: job format version %d; this runner reads version 1", path, version);
        } else if (!strcmp(word, "library")) {
            ok = field(line, 1, arg, sizeof arg) && !field(line, 2, word, sizeof word);
            if (ok) join(j->library, dir, arg);
        } else if (!strcmp(word, "weights")) {
            ok = field(line, 1, arg, sizeof arg) && count_field(line, 2, SIZE_MAX, &j->weight_bytes);
            if (ok) join(j->weights, dir, arg);
        } else if (!strcmp(word, "arena")) {
            ok = count_field(line, 1, SIZE_MAX, &j->arena_bytes);
        } else if (!strcmp(word, "input")) {
            ok = j->n_in < MAX_TENSORS && tensor_line(line, j->n_in, &j->in[j->n_in], 0);
            if (ok) j->n_in++;
        } else if (!strcmp(word, "output")) {
            ok = j->n_out < MAX_TENSORS && tensor_line(line, j->n_out, &j->out[j->n_out], 1);
            if (ok) j->n_out++;
        } else if (!strcmp(word, "vector")) {
            ok = j->n_vec < MAX_VECTORS && field(line, 1, arg, sizeof arg);
            if (ok) {
                if (!(j->vectors[j->n_vec] = malloc(MAX_PATH))) die("out of memory");
                join(j->vectors[j->n_vec++], dir, arg);
            }
        } else ok = 0;
        if (!ok) die("%s:%d: cannot read this line: %s", path, lineno, line);
    }
    fclose(f);
    if (version != 1) die("%s: not a burnedge runner job (the first line must be: burnedge-runner 1)", path);
    if (!j->library[0] || !j->weights[0]) die("%s: the job names no library or no weights", path);
    for (int k = 0; k < j->n_in; k++)
        if (!inside(&j->in[k], j->arena_bytes)) die("%s: input %d lies outside the arena", path, k);
    for (int k = 0; k < j->n_out; k++)
        if (!inside(&j->out[k], j->arena_bytes)) die("%s: output %d lies outside the arena", path, k);
}

/* IEEE half and bfloat16 to float */
static double half(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double element(const uint8_t *p, size_t i, const char *dt) {
    if (!strcmp(dt, "f32")) { float v; memcpy(&v, p + 4 * i, 4); return v; }
    if (!strcmp(dt, "f64")) { double v; memcpy(&v, p + 8 * i, 8); return v; }
    if (!strcmp(dt, "f16")) { uint16_t v; memcpy(&v, p + 2 * i, 2); return half(v); }
    if (!strcmp(dt, "bf16")) {
        uint16_t v;
        memcpy(&v, p + 2 * i, 2);
        uint32_t u = (uint32_t)v << 16;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    if (!strcmp(dt, "i8")) return (int8_t)p[i];
    if (!strcmp(dt, "u8") || !strcmp(dt, "bool")) return p[i];
    if (!strcmp(dt, "i16")) { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    if (!strcmp(dt, "u16")) { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    if (!strcmp(dt, "i32")) { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    if (!strcmp(dt, "u32")) { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    if (!strcmp(dt, "i64")) { int64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    if (!strcmp(dt, "u64")) { uint64_t v; memcpy(&v, p + 8 * i, 8); return (double)v; }
    die("unknown dtype %s", dt);
    return 0;
}

static size_t itemsize(const char *dt) {
    if (!strcmp(dt, "f64") || !strcmp(dt, "i64") || !strcmp(dt, "u64")) return 8;
    if (!strcmp(dt, "f32") || !strcmp(dt, "i32") || !strcmp(dt, "u32")) return 4;
    if (!strcmp(dt, "f16") || !strcmp(dt, "bf16") || !strcmp(dt, "i16") || !strcmp(dt, "u16")) return 2;
    return 1;
}

/* largest |got - ref| and that relative to the largest finite |ref|; floats: NaN and inf must match position for
 * position; integers (and bool) must be equal. Returns 1 when within `tol` (integers: when equal). */
static int compare(const uint8_t *got, const uint8_t *ref, size_t nbytes, const char *dt, double tol,
                   double *max_abs, double *relative) {
    int is_float = dt[0] == 'f' || !strcmp(dt, "bf16");
    size_t n = nbytes / itemsize(dt);
    double diff = 0, scale = 0;
    int mismatch = 0;
    for (size_t i = 0; i < n; i++) {
        double g = element(got, i, dt), r = element(ref, i, dt);
        if (isnan(r) || isnan(g)) { mismatch |= isnan(r) != isnan(g); continue; }
        if (isinf(r)) { mismatch |= g != r; continue; }
        double d = fabs(g - r);  /* inf when g is inf and r is finite */
        if (d > diff) diff = d;
        if (fabs(r) > scale) scale = fabs(r);
    }
    if (mismatch) diff = INFINITY;
    *max_abs = diff;
    if (!is_float) { *relative = diff; return diff == 0; }
    *relative = diff == 0 ? 0 : diff / (scale > 1e-30 ? scale : 1e-30);
    return *relative <= tol;
}

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv) {
    int threads = 1, repeat = 1;
    const char *job_path = NULL;
    for (int i = 1; i < argc; i++) {
        size_t n = 0;
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = parse_count(argv[++i], 4096, &n) ? (int)n : 0;
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = parse_count(argv[++i], 1 << 30, &n) ? (int)n : 0;
        else if (argv[i][0] != '-' && !job_path) job_path = argv[i];
        else job_path = NULL, i = argc;
    }
    if (!job_path || threads < 1 || repeat < 1) {
        fprintf(stderr, "usage: runner [--threads N] [--repeat N] JOB.txt\n");
        return 2;
    }
    char dir[MAX_PATH];
    snprintf(dir, sizeof dir, "%s", job_path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0; else dir[0] = 0;
    static job j;
    parse(job_path, dir, &j);

    size_t lib_size;
    close(open_regular(j.library, &lib_size)); /* a regular file in the job's folder, not a link, FIFO or device */
    void *lib = dlopen(j.library, RTLD_NOW | RTLD_LOCAL);
    if (!lib) die("cannot load %s: %s", j.library, dlerror());
    run_fn run = (run_fn)dlsym(lib, "be_model_run");
    size_fn arena_fn = (size_fn)dlsym(lib, "be_model_arena_bytes");
    size_fn weights_fn = (size_fn)dlsym(lib, "be_model_weight_bytes");
    if (!run || !arena_fn || !weights_fn) die("%s is not a burnedge model library", j.library);
    if (arena_fn() != j.arena_bytes || weights_fn() != j.weight_bytes)
        die("%s was planned with %zu arena and %zu weight bytes; the job says %zu and %zu", j.library, arena_fn(),
            weights_fn(), j.arena_bytes, j.weight_bytes);

    uint8_t *weights = aligned(j.weight_bytes), *arena = aligned(j.arena_bytes);
    read_file(j.weights, weights, j.weight_bytes);
    printf("burnedge-runner 1: %s, arena %zu bytes, weights %zu bytes, threads %d\n", j.library, j.arena_bytes,
           j.weight_bytes, threads);
    int pass = 1;
    double worst_abs = 0, worst_rel = 0;
    char path[MAX_PATH + 32];
    for (int v = 0; v < j.n_vec; v++) {
        for (int k = 0; k < j.n_in; k++) {
            snprintf(path, sizeof path, "%s/in_%d.bin", j.vectors[v], k);
            read_file(path, arena + j.in[k].offset, j.in[k].nbytes);
        }
        double best = INFINITY;
        for (int r = 0; r < repeat; r++) {
            double t0 = now_us();
            int rc = run(arena, weights, threads);
            double t = now_us() - t0;
            if (rc != 0) die("the model returned error %d on vector %d", rc, v);
            if (t < best) best = t;
        }
        for (int k = 0; k < j.n_out; k++) {
            tensor *t = &j.out[k];
            snprintf(path, sizeof path, "%s/out_%d.bin", j.vectors[v], k);
            write_file(path, arena + t->offset, t->nbytes);
            snprintf(path, sizeof path, "%s/ref_%d.bin", j.vectors[v], k);
            struct stat st;
            if (lstat(path, &st) != 0 && errno == ENOENT) continue; /* no reference: nothing to compare */
            uint8_t *ref = aligned(t->nbytes);
            read_file(path, ref, t->nbytes);
            double max_abs, rel;
            int ok = compare(arena + t->offset, ref, t->nbytes, t->dtype, t->tolerance, &max_abs, &rel);
            free(ref);
            printf("vector %d output %d max_abs %.9g relative %.9g %s %s\n", v, k, max_abs, rel, ok ? "ok" : "MISMATCH",
                   t->name);
            pass &= ok;
            if (rel > worst_rel) worst_rel = rel;
            if (max_abs > worst_abs) worst_abs = max_abs;
        }
        printf("vector %d time_us %.1f\n", v, best);
    }
    printf("max error %.9g (relative %.9g)\n", worst_abs, worst_rel);
    printf("%s\n", pass ? "PASS" : "FAIL");
    fflush(stdout);
    return pass ? 0 : 1;
}
