/*
 * fsarena-replay: replay a captured service's file-system calls on a test filesystem.
 *
 *   fsarena-replay setup PROGRAM ROOT RATIO
 *       make the initial tree under ROOT (directories, files of their sizes filled with
 *       data of that compressibility, symbolic links), and save the parsed program as
 *       PROGRAM.bin; untimed by the caller.
 *   fsarena-replay run PROGRAM ROOT RATIO fast|paced RESULT
 *       replay the calls (read back from PROGRAM.bin when it was saved from this very
 *       PROGRAM, else parsed), one thread per traced thread, and write what each call
 *       type cost to RESULT (JSON).
 *
 * PROGRAM is made by fsarena (capture/program.py) from a trace: a table of paths
 * (relative to ROOT, percent-encoded), the initial tree, the descriptors open at the
 * start, and the calls in traced start order, each with its thread, its open file
 * (slot), its arguments, its traced result, start and duration, and the calls of other
 * threads it must wait for: those on the same path or file that had returned before it
 * started in the trace (ROOT's resource ordering). A thread keeps its own order.
 *
 * Timing: "fast" issues each call as soon as its thread and its dependencies allow
 * (capacity: the total time); "paced" keeps each thread's traced think time, the gap
 * between a call's return and its next call (and a thread's first call at its traced
 * start), less the tracer's own time in it (overhead_ns), then the program's tail after
 * the last call, so the replay runs at the traced pace and falls behind where the filesystem
 * is slower; the lag is reported. Each call's latency is measured around the system
 * call alone (CLOCK_MONOTONIC); sleeps longer than 200 us use clock_nanosleep to
 * within 100 us of the target, then spin, so a think time of a few microseconds is
 * kept at that.
 *
 * Safety: every path is relative to ROOT; opens resolve with RESOLVE_IN_ROOT (openat2),
 * symbolic links' targets are made relative by fsarena and never climb above ROOT, and
 * sync(2) is replayed as syncfs(2) of the test filesystem only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

enum kind {
    K_OPEN = 1, K_CLOSE, K_READ, K_WRITE, K_PREAD, K_PWRITE, K_READV, K_WRITEV, K_PREADV,
    K_PWRITEV, K_LSEEK, K_FSYNC, K_FDATASYNC, K_SYNC_FILE_RANGE, K_SYNCFS, K_SYNC, K_RENAME,
    K_UNLINK, K_RMDIR, K_MKDIR, K_LINK, K_SYMLINK, K_FALLOCATE, K_FTRUNCATE, K_TRUNCATE,
    K_STAT, K_FSTAT, K_GETDENTS, K_COUNT
};
static const char *KIND_NAMES[K_COUNT] = {
    "", "open", "close", "read", "write", "pread", "pwrite", "readv", "writev", "preadv",
    "pwritev", "lseek", "fsync", "fdatasync", "sync_file_range", "syncfs", "sync", "rename",
    "unlink", "rmdir", "mkdir", "link", "symlink", "fallocate", "ftruncate", "truncate",
    "stat", "fstat", "getdents"};

struct op {
    int thread, kind, slot, p1, b1, p2, b2; /* b1, b2: the directories p1, p2 are looked up
                                                from (a path's index; -1: ROOT) */
    long long a, b, c, expect;
    long long start_ns, dur_ns, overhead_ns; /* overhead: the tracer's own time in the gap
                                                before the call, not the service's think time */
    int ndeps;
    long long *deps;
};

struct program {
    int threads, slots, npaths, ntargets, ntree, npre;
    long long nops, tail_ns;
    char **paths;
    char **targets; /* symbolic links' contents, relative, never climbing above ROOT */
    char *tree_kind;
    int *tree_path;
    long long *tree_size;
    int *pre_slot, *pre_path;
    long long *pre_flags, *pre_pos;
    struct op *ops;
};

static struct program prog;
static int root_fd = -1;
static const char *root_path;
static int *slot_fd;
static atomic_uchar *done;
static atomic_int generation;
static atomic_int waiters;
static long long *latency_ns; /* per op; -1: not run */
static long long *lag_ns;
static int *diverged; /* per op: 1 a success where the trace failed or the reverse */
static int *short_io;
static unsigned char *pattern;
static size_t pattern_bytes;
static long long t0_ns;
static int paced;

static void die(const char *what) {
    fprintf(stderr, "fsarena-replay: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void bad(const char *what) {
    fprintf(stderr, "fsarena-replay: bad program: %s\n", what);
    exit(2);
}

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ------------------------------------------------------------------ reading the program */

static char *decode(const char *s) {
    size_t n = strlen(s);
    char *out = malloc(n + 1), *o = out;
    if (!out) die("malloc");
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n) {
            char hex[3] = {s[i + 1], s[i + 2], 0};
            *o++ = (char)strtol(hex, NULL, 16);
            i += 2;
        } else {
            *o++ = s[i];
        }
    }
    *o = 0;
    return out;
}

static void check_relative(const char *path) {
    if (path[0] == '/' || strcmp(path, "..") == 0 || strncmp(path, "../", 3) == 0 ||
        strstr(path, "/../") || (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
        bad("a path that leaves the root");
}

static char *next_line(FILE *f) {
    static char *line = NULL;
    static size_t cap = 0;
    ssize_t n = getline(&line, &cap, f);
    if (n < 0) bad("it ends early");
    if (n && line[n - 1] == '\n') line[n - 1] = 0;
    return line;
}

static long long header(FILE *f, const char *name) {
    char *line = next_line(f);
    size_t len = strlen(name);
    if (strncmp(line, name, len) != 0 || line[len] != ' ') bad(name);
    return strtoll(line + len + 1, NULL, 10);
}

static long long field(char **cursor) {
    char *end;
    long long v = strtoll(*cursor, &end, 10);
    if (end == *cursor) bad("a number is missing");
    *cursor = end;
    return v;
}

static void read_tree(FILE *f) {
    prog.ntree = (int)header(f, "tree");
    prog.tree_kind = calloc(prog.ntree + 1, 1);
    prog.tree_path = calloc(prog.ntree + 1, sizeof(int));
    prog.tree_size = calloc(prog.ntree + 1, sizeof(long long));
    for (int i = 0; i < prog.ntree; i++) {
        char *line = next_line(f), *cur = line + 1;
        prog.tree_kind[i] = line[0];
        prog.tree_path[i] = (int)field(&cur);
        prog.tree_size[i] = (line[0] == 'f' || line[0] == 'l') ? field(&cur) : 0;
        if (prog.tree_path[i] < 0 || prog.tree_path[i] >= prog.npaths ||
            (line[0] == 'l' && (prog.tree_size[i] < 0 || prog.tree_size[i] >= prog.ntargets)))
            bad("a tree entry out of range");
    }
}

static void read_pre(FILE *f) {
    prog.npre = (int)header(f, "pre");
    prog.pre_slot = calloc(prog.npre + 1, sizeof(int));
    prog.pre_path = calloc(prog.npre + 1, sizeof(int));
    prog.pre_flags = calloc(prog.npre + 1, sizeof(long long));
    prog.pre_pos = calloc(prog.npre + 1, sizeof(long long));
    for (int i = 0; i < prog.npre; i++) {
        char *cur = next_line(f);
        prog.pre_slot[i] = (int)field(&cur);
        prog.pre_path[i] = (int)field(&cur);
        prog.pre_flags[i] = field(&cur);
        prog.pre_pos[i] = field(&cur);
    }
}

static void read_ops(FILE *f) {
    prog.nops = header(f, "ops");
    prog.ops = calloc(prog.nops + 1, sizeof(struct op));
    if (!prog.ops) die("calloc");
    for (long long i = 0; i < prog.nops; i++) {
        char *cur = next_line(f);
        struct op *o = &prog.ops[i];
        o->thread = (int)field(&cur);
        o->kind = (int)field(&cur);
        o->slot = (int)field(&cur);
        o->p1 = (int)field(&cur);
        o->b1 = (int)field(&cur);
        o->p2 = (int)field(&cur);
        o->b2 = (int)field(&cur);
        o->a = field(&cur);
        o->b = field(&cur);
        o->c = field(&cur);
        o->expect = field(&cur);
        o->start_ns = field(&cur);
        o->dur_ns = field(&cur);
        o->overhead_ns = field(&cur);
        o->ndeps = (int)field(&cur);
        if (o->kind <= 0 || o->kind >= K_COUNT || o->thread < 0 || o->thread >= prog.threads ||
            o->slot >= prog.slots || o->p2 >= prog.npaths || o->b1 >= prog.npaths ||
            o->b2 >= prog.npaths ||
            o->p1 >= (o->kind == K_SYMLINK ? prog.ntargets : prog.npaths) ||
            ((o->kind == K_OPEN || o->kind == K_STAT || o->kind == K_TRUNCATE ||
              o->kind == K_UNLINK || o->kind == K_RMDIR || o->kind == K_MKDIR ||
              o->kind == K_RENAME || o->kind == K_LINK || o->kind == K_SYMLINK) && o->p1 < 0))
            bad("an operation out of range");
        o->deps = o->ndeps ? calloc(o->ndeps, sizeof(long long)) : NULL;
        for (int d = 0; d < o->ndeps; d++) {
            o->deps[d] = field(&cur);
            if (o->deps[d] < 0 || o->deps[d] >= i) bad("a dependency on a later operation");
        }
    }
}

static void read_program(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die(path);
    if (strcmp(next_line(f), "fsarena-replay-program 1") != 0) bad("not a version 1 program");
    prog.threads = (int)header(f, "threads");
    prog.slots = (int)header(f, "slots");
    prog.npaths = (int)header(f, "paths");
    prog.paths = calloc(prog.npaths + 1, sizeof(char *));
    for (int i = 0; i < prog.npaths; i++) {
        prog.paths[i] = decode(next_line(f));
        check_relative(prog.paths[i]);
    }
    prog.ntargets = (int)header(f, "targets");
    prog.targets = calloc(prog.ntargets + 1, sizeof(char *));
    for (int i = 0; i < prog.ntargets; i++) prog.targets[i] = decode(next_line(f));
    read_tree(f);
    read_pre(f);
    read_ops(f);
    prog.tail_ns = header(f, "tail_ns");
    fclose(f);
}

/* ------------------------------------------------------------------ the loaded program
 *
 * `setup` (untimed) saves the program as it parsed it to PROGRAM.bin: the arrays as
 * they lie in memory, the strings after them. `run` (timed, whole process) reads that
 * back in one read() instead of parsing the text again, so the replay's time holds the
 * calls, not fsarena's parsing of a trace that grows with its length. The file is
 * trusted only by the text it was made from (its size and mtime) and this build's
 * layout (sizeof(struct op)); anything else, and the text is parsed as before. */

#define BIN_MAGIC "FSRPB001"

struct bin_header {
    char magic[8];
    long long text_size, text_mtime_ns, nops, tail_ns, ndeps, strings;
    int op_size, threads, slots, npaths, ntargets, ntree, npre, pad;
};

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

static char *bin_path(const char *path) {
    size_t n = strlen(path);
    char *out = malloc(n + 5);
    if (!out) die("malloc");
    memcpy(out, path, n);
    memcpy(out + n, ".bin", 5);
    return out;
}

static int text_stat(const char *path, struct bin_header *h) {
    struct stat st;
    if (stat(path, &st)) return -1;
    h->text_size = st.st_size;
    h->text_mtime_ns = (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
    return 0;
}

static void put(FILE *f, const void *data, size_t n) {
    static const char zeros[8] = {0};
    if (n && fwrite(data, 1, n, f) != n) die("the loaded program");
    if (pad8(n) != n && fwrite(zeros, 1, pad8(n) - n, f) != pad8(n) - n) die("the loaded program");
}

static void save_binary(const char *path) {
    struct bin_header h = {.nops = prog.nops, .tail_ns = prog.tail_ns,
                           .op_size = (int)sizeof(struct op), .threads = prog.threads,
                           .slots = prog.slots, .npaths = prog.npaths, .ntargets = prog.ntargets,
                           .ntree = prog.ntree, .npre = prog.npre};
    memcpy(h.magic, BIN_MAGIC, 8);
    if (text_stat(path, &h)) die(path);
    for (long long i = 0; i < prog.nops; i++) h.ndeps += prog.ops[i].ndeps;
    for (int i = 0; i < prog.npaths; i++) h.strings += (long long)strlen(prog.paths[i]) + 1;
    for (int i = 0; i < prog.ntargets; i++) h.strings += (long long)strlen(prog.targets[i]) + 1;
    char *out = bin_path(path), *tmp = malloc(strlen(out) + 5);
    if (!tmp) die("malloc");
    sprintf(tmp, "%s.new", out);
    FILE *f = fopen(tmp, "w");
    if (!f) die(tmp);
    put(f, &h, sizeof(h));
    put(f, prog.ops, sizeof(struct op) * (size_t)prog.nops);
    for (long long i = 0; i < prog.nops; i++)
        if (prog.ops[i].ndeps && fwrite(prog.ops[i].deps, sizeof(long long), prog.ops[i].ndeps, f) !=
                                     (size_t)prog.ops[i].ndeps)
            die(tmp);
    put(f, prog.tree_kind, (size_t)prog.ntree);
    put(f, prog.tree_path, sizeof(int) * (size_t)prog.ntree);
    put(f, prog.tree_size, sizeof(long long) * (size_t)prog.ntree);
    put(f, prog.pre_slot, sizeof(int) * (size_t)prog.npre);
    put(f, prog.pre_path, sizeof(int) * (size_t)prog.npre);
    put(f, prog.pre_flags, sizeof(long long) * (size_t)prog.npre);
    put(f, prog.pre_pos, sizeof(long long) * (size_t)prog.npre);
    for (int i = 0; i < prog.npaths; i++) fputs(prog.paths[i], f), fputc(0, f);
    for (int i = 0; i < prog.ntargets; i++) fputs(prog.targets[i], f), fputc(0, f);
    if (fclose(f) || rename(tmp, out)) die(out);
    free(tmp);
    free(out);
}

/* The next `n` bytes of the loaded file (8-aligned), or NULL past its end. */
static char *take(char **cursor, char *end, size_t n) {
    char *at = *cursor;
    if ((size_t)(end - at) < pad8(n)) return NULL;
    *cursor = at + pad8(n);
    return at;
}

static int load_binary(const char *path) {
    struct bin_header now;
    if (text_stat(path, &now)) return -1;
    char *file = bin_path(path);
    int fd = open(file, O_RDONLY);
    free(file);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(struct bin_header)) {
        if (fd >= 0) close(fd);
        return -1;
    }
    char *buf = malloc((size_t)st.st_size), *cur = buf, *end = buf + st.st_size;
    if (!buf) die("malloc");
    for (off_t got = 0; got < st.st_size;) { /* one read() returns at most 2 GiB */
        ssize_t n = read(fd, buf + got, (size_t)(st.st_size - got));
        if (n <= 0) die("the loaded program");
        got += n;
    }
    close(fd);
    struct bin_header h;
    memcpy(&h, buf, sizeof(h));
    if (memcmp(h.magic, BIN_MAGIC, 8) || h.op_size != (int)sizeof(struct op) ||
        h.text_size != now.text_size || h.text_mtime_ns != now.text_mtime_ns) {
        free(buf);
        return -1;
    }
    take(&cur, end, sizeof(h));
    struct op *ops = (struct op *)take(&cur, end, sizeof(struct op) * (size_t)h.nops);
    long long *deps = (long long *)take(&cur, end, sizeof(long long) * (size_t)h.ndeps);
    char *kinds = take(&cur, end, (size_t)h.ntree);
    int *tree_path = (int *)take(&cur, end, sizeof(int) * (size_t)h.ntree);
    long long *tree_size = (long long *)take(&cur, end, sizeof(long long) * (size_t)h.ntree);
    int *pre_slot = (int *)take(&cur, end, sizeof(int) * (size_t)h.npre);
    int *pre_path = (int *)take(&cur, end, sizeof(int) * (size_t)h.npre);
    long long *pre_flags = (long long *)take(&cur, end, sizeof(long long) * (size_t)h.npre);
    long long *pre_pos = (long long *)take(&cur, end, sizeof(long long) * (size_t)h.npre);
    if (!ops || !deps || !kinds || !tree_path || !tree_size || !pre_slot || !pre_path ||
        !pre_flags || !pre_pos || end - cur != h.strings)
        bad("its loaded form is damaged: run setup again");
    prog.threads = h.threads, prog.slots = h.slots, prog.npaths = h.npaths;
    prog.ntargets = h.ntargets, prog.ntree = h.ntree, prog.npre = h.npre;
    prog.nops = h.nops, prog.tail_ns = h.tail_ns;
    prog.ops = ops, prog.tree_kind = kinds, prog.tree_path = tree_path;
    prog.tree_size = tree_size, prog.pre_slot = pre_slot, prog.pre_path = pre_path;
    prog.pre_flags = pre_flags, prog.pre_pos = pre_pos;
    for (long long i = 0, at = 0; i < prog.nops; i++) {
        prog.ops[i].deps = prog.ops[i].ndeps ? deps + at : NULL;
        at += prog.ops[i].ndeps;
    }
    prog.paths = calloc(prog.npaths + 1, sizeof(char *));
    prog.targets = calloc(prog.ntargets + 1, sizeof(char *));
    if (!prog.paths || !prog.targets) die("calloc");
    for (int i = 0; i < prog.npaths + prog.ntargets; i++) {
        char *z = memchr(cur, 0, (size_t)(end - cur));
        if (!z) bad("its loaded form is damaged: run setup again");
        if (i < prog.npaths) prog.paths[i] = cur;
        else prog.targets[i - prog.npaths] = cur;
        cur = z + 1;
    }
    return 0;
}

/* ------------------------------------------------------------------ data */

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Each 4 KiB block: its first RATIO share random, the rest zeros, so zlib compresses it to
 * about RATIO of its size, as the captured data did. */
static void make_pattern(size_t bytes, double ratio) {
    pattern_bytes = bytes < 4096 ? 4096 : (bytes + 4095) / 4096 * 4096;
    if (posix_memalign((void **)&pattern, 4096, pattern_bytes)) die("posix_memalign");
    memset(pattern, 0, pattern_bytes);
    size_t random_bytes = (size_t)(ratio < 0 ? 1.0 : ratio > 1 ? 1.0 : ratio) * 4096;
    for (size_t block = 0; block < pattern_bytes; block += 4096)
        for (size_t i = 0; i + 8 <= random_bytes; i += 8) {
            uint64_t r = next_random();
            memcpy(pattern + block + i, &r, 8);
        }
}

/* ------------------------------------------------------------------ setup */

static void write_file(const char *path, long long size) {
    int fd = openat(root_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
    if (fd < 0) die(path);
    for (long long at = 0; at < size;) {
        size_t n = (size_t)(size - at) < pattern_bytes ? (size_t)(size - at) : pattern_bytes;
        ssize_t w = pwrite(fd, pattern, n, at);
        if (w <= 0) die(path);
        at += w;
    }
    close(fd);
}

static int setup(void) {
    for (int i = 0; i < prog.ntree; i++) {
        const char *path = prog.paths[prog.tree_path[i]];
        if (prog.tree_kind[i] == 'd') {
            if (mkdirat(root_fd, path, 0755) && errno != EEXIST) die(path);
        } else if (prog.tree_kind[i] == 'f') {
            write_file(path, prog.tree_size[i]);
        } else if (prog.tree_kind[i] == 'l') {
            if (symlinkat(prog.targets[prog.tree_size[i]], root_fd, path) && errno != EEXIST)
                die(path);
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ the calls */

/* A directory a call looks its path up from, opened once (as a process's cwd or a
 * directory descriptor holds its directory); -1: ROOT itself. */
static int *base_fd;
static pthread_mutex_t base_lock = PTHREAD_MUTEX_INITIALIZER;

static int base(int index) {
    if (index < 0) return root_fd;
    pthread_mutex_lock(&base_lock);
    if (base_fd[index] < 0) {
        struct open_how how = {.flags = O_PATH | O_DIRECTORY, .resolve = RESOLVE_IN_ROOT};
        base_fd[index] = (int)syscall(SYS_openat2, root_fd, prog.paths[index], &how, sizeof(how));
        if (base_fd[index] < 0) base_fd[index] = root_fd; /* it is not there: from ROOT */
    }
    pthread_mutex_unlock(&base_lock);
    return base_fd[index];
}

static int open_in_root(int dir, const char *path, long long flags, long long mode) {
    /* From ROOT: resolved in it (an absolute link stays inside). From a directory under
     * ROOT with a path without "..": the links fsarena made never climb above ROOT. */
    struct open_how how = {.flags = (uint64_t)flags & ~(uint64_t)O_CLOEXEC,
                           .mode = (flags & (O_CREAT | O_TMPFILE)) ? (uint64_t)mode : 0,
                           .resolve = dir == root_fd ? RESOLVE_IN_ROOT : 0};
    int fd = (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
    if (fd < 0 && errno == ENOSYS) fd = openat(dir, path, (int)flags, (mode_t)mode);
    return fd;
}

struct scratch {
    unsigned char *buf;
    size_t bytes;
};

static void *room(struct scratch *s, size_t n) {
    if (n > s->bytes) {
        free(s->buf);
        s->bytes = (n + 4095) / 4096 * 4096;
        if (posix_memalign((void **)&s->buf, 4096, s->bytes)) die("posix_memalign");
    }
    return s->buf;
}

static const void *data(size_t n) {
    return n <= pattern_bytes ? pattern : NULL;
}

static long long io_call(struct op *o, int fd, struct scratch *s) {
    size_t n = (size_t)(o->a < 0 ? 0 : o->a);
    long long off = o->b;
    struct iovec iov;
    switch (o->kind) {
    case K_READ: return read(fd, room(s, n), n);
    case K_PREAD: return pread(fd, room(s, n), n, off);
    case K_WRITE: return data(n) ? write(fd, pattern, n) : -1;
    case K_PWRITE: return data(n) ? pwrite(fd, pattern, n, off) : -1;
    case K_READV: iov.iov_base = room(s, n); iov.iov_len = n; return readv(fd, &iov, 1);
    case K_PREADV: iov.iov_base = room(s, n); iov.iov_len = n; return preadv(fd, &iov, 1, off);
    case K_WRITEV: iov.iov_base = pattern; iov.iov_len = n; return data(n) ? writev(fd, &iov, 1) : -1;
    case K_PWRITEV:
        iov.iov_base = pattern; iov.iov_len = n;
        return data(n) ? pwritev(fd, &iov, 1, off) : -1;
    }
    return -1;
}

static long long fd_call(struct op *o, int fd, struct scratch *s) {
    struct stat st;
    switch (o->kind) {
    case K_CLOSE: return close(fd);
    case K_LSEEK: return lseek(fd, o->a, (int)o->b);
    case K_FSYNC: return fsync(fd);
    case K_FDATASYNC: return fdatasync(fd);
    case K_SYNC_FILE_RANGE: return sync_file_range(fd, o->a, o->b, (unsigned)o->c);
    case K_SYNCFS: return syncfs(fd);
    case K_FALLOCATE: return fallocate(fd, (int)o->a, o->b, o->c);
    case K_FTRUNCATE: return ftruncate(fd, o->a);
    case K_FSTAT: return fstat(fd, &st);
    case K_GETDENTS: {
        size_t n = (size_t)(o->a <= 0 ? 32768 : o->a);
        return syscall(SYS_getdents64, fd, room(s, n), n);
    }
    }
    return io_call(o, fd, s);
}

/* d1, d2: the call's directories, from base(): looked up before the call's clock starts. */
static long long path_call(struct op *o, int d1, int d2) {
    const char *p1 = o->p1 < 0 ? "" : o->kind == K_SYMLINK ? prog.targets[o->p1] : prog.paths[o->p1];
    const char *p2 = o->p2 >= 0 ? prog.paths[o->p2] : "";
    struct stat st;
    char full[PATH_MAX];
    switch (o->kind) {
    case K_SYNC: return syncfs(root_fd);
    case K_RENAME: return renameat2(d1, p1, d2, p2, (unsigned)o->a);
    case K_UNLINK: return unlinkat(d1, p1, 0);
    case K_RMDIR: return unlinkat(d1, p1, AT_REMOVEDIR);
    case K_MKDIR: return mkdirat(d1, p1, (mode_t)o->a);
    case K_LINK: return linkat(d1, p1, d2, p2, 0);
    case K_SYMLINK: return symlinkat(p1, d2, p2);
    case K_STAT: return fstatat(d1, p1, &st, (int)(o->a & AT_SYMLINK_NOFOLLOW));
    case K_TRUNCATE: /* no truncateat(2): through /proc's name of the base directory */
        if (d1 == root_fd) snprintf(full, sizeof(full), "%s/%s", root_path, p1);
        else snprintf(full, sizeof(full), "/proc/self/fd/%d/%s", d1, p1);
        return truncate(full, o->a);
    }
    return -1;
}

/* One call, timed around the system call alone; its result. */
static long long perform(long long i, struct scratch *s) {
    struct op *o = &prog.ops[i];
    long long begin, result;
    if (o->kind == K_OPEN) {
        int dir = base(o->b1);
        begin = now_ns();
        result = open_in_root(dir, prog.paths[o->p1], o->a, o->b);
        latency_ns[i] = now_ns() - begin;
        if (result >= 0) {
            if (o->slot >= 0) slot_fd[o->slot] = (int)result;
            else close((int)result);
        }
        return result;
    }
    if (o->slot >= 0) {
        int fd = slot_fd[o->slot];
        if (fd < 0) return -EBADF; /* its open failed in this replay: nothing to call */
        begin = now_ns();
        result = fd_call(o, fd, s);
        latency_ns[i] = now_ns() - begin;
        if (o->kind == K_CLOSE) {
            slot_fd[o->slot] = -1;
            if (o->c) latency_ns[i] = -1; /* the kernel's close at exit: not the service's */
        }
        return result;
    }
    int d1 = o->kind == K_SYMLINK ? root_fd : base(o->b1), d2 = base(o->b2);
    begin = now_ns();
    result = path_call(o, d1, d2);
    latency_ns[i] = now_ns() - begin;
    return result;
}

/* ------------------------------------------------------------------ threads */

static void wait_for(long long dep) {
    for (int spins = 0; !atomic_load(&done[dep]); spins++) {
        if (spins < 200) continue;
        int seen = atomic_load(&generation);
        atomic_fetch_add(&waiters, 1);
        if (!atomic_load(&done[dep]))
            syscall(SYS_futex, &generation, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
        atomic_fetch_sub(&waiters, 1);
    }
}

static void finished(long long i) {
    atomic_store(&done[i], 1);
    if (atomic_load(&waiters)) {
        atomic_fetch_add(&generation, 1);
        syscall(SYS_futex, &generation, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
}

static void sleep_until(long long target) {
    long long left = target - now_ns();
    if (left > 200000) {
        long long wake = target - 100000;
        struct timespec ts = {.tv_sec = wake / 1000000000LL, .tv_nsec = wake % 1000000000LL};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
    }
    while (now_ns() < target) {
    }
}

struct thread_work {
    int index;
    long long *ops; /* this thread's op indices, in order */
    long long count;
    pthread_barrier_t *barrier;
};

static void *replay_thread(void *arg) {
    struct thread_work *w = arg;
    struct scratch s = {NULL, 0};
    long long prev_end_actual = 0;
    struct op *prev = NULL;
    pthread_barrier_wait(w->barrier);
    for (long long k = 0; k < w->count; k++) {
        long long i = w->ops[k];
        struct op *o = &prog.ops[i];
        for (int d = 0; d < o->ndeps; d++) wait_for(o->deps[d]);
        if (paced) {
            long long think = prev ? o->start_ns - (prev->start_ns + prev->dur_ns) : o->start_ns;
            think -= o->overhead_ns; /* the tracer's, not the service's */
            long long target = (prev ? prev_end_actual : t0_ns) + (think > 0 ? think : 0);
            sleep_until(target);
        }
        long long began = now_ns();
        lag_ns[i] = began - (t0_ns + o->start_ns);
        long long result = perform(i, &s);
        prev_end_actual = now_ns();
        prev = o;
        if ((result >= 0) != (o->expect >= 0)) diverged[i] = 1;
        else if (result >= 0 && o->kind >= K_READ && o->kind <= K_PWRITEV && result != o->expect)
            short_io[i] = 1;
        finished(i);
    }
    free(s.buf);
    return NULL;
}

/* ------------------------------------------------------------------ the result */

/* Sort non-negative values in place: least significant byte first, only as many bytes
 * as the largest value has (a latency in ns: 4 passes up to 4.3 s), so the result costs
 * a few passes over the calls, not a comparison sort's n log n, and a call type with a
 * handful of calls a handful of steps. */
static void sort_values(long long *v, long long n) {
    if (n < 2) return;
    unsigned long long biggest = 0;
    for (long long i = 0; i < n; i++)
        if ((unsigned long long)v[i] > biggest) biggest = (unsigned long long)v[i];
    long long *tmp = malloc(sizeof(long long) * (size_t)n), *from = v, *to = tmp;
    if (!tmp) die("malloc");
    for (int shift = 0; shift < 64 && (biggest >> shift); shift += 8) {
        long long count[256] = {0};
        for (long long i = 0; i < n; i++) count[((unsigned long long)from[i] >> shift) & 0xFF]++;
        for (long long d = 0, at = 0; d < 256; d++) {
            long long c = count[d];
            count[d] = at;
            at += c;
        }
        for (long long i = 0; i < n; i++) to[count[((unsigned long long)from[i] >> shift) & 0xFF]++] = from[i];
        long long *swap = from;
        from = to;
        to = swap;
    }
    if (from != v) memcpy(v, from, sizeof(long long) * (size_t)n);
    free(tmp);
}

static long long nearest_rank(long long *sorted, long long n, double pct) {
    if (n == 0) return 0;
    long long rank = (long long)((pct / 100.0) * (double)n + 0.999999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

/* Every call type's figures, from one pass over the calls: their latencies grouped by
 * type in one array, each group sorted. */
static void write_kinds(FILE *out) {
    long long n[K_COUNT] = {0}, total[K_COUNT] = {0}, div[K_COUNT] = {0}, shorts[K_COUNT] = {0};
    long long at[K_COUNT + 1] = {0};
    for (long long i = 0; i < prog.nops; i++) {
        int k = prog.ops[i].kind;
        div[k] += diverged[i];
        shorts[k] += short_io[i];
        if (latency_ns[i] < 0) continue;
        n[k]++;
        total[k] += latency_ns[i];
    }
    for (int k = 1; k <= K_COUNT - 1; k++) at[k + 1] = at[k] + n[k];
    long long fill[K_COUNT];
    long long *values = malloc(sizeof(long long) * (size_t)(at[K_COUNT] + 1));
    if (!values) die("malloc");
    memcpy(fill, at, sizeof(fill));
    for (long long i = 0; i < prog.nops; i++)
        if (latency_ns[i] >= 0) values[fill[prog.ops[i].kind]++] = latency_ns[i];
    int first = 1;
    for (int k = 1; k < K_COUNT; k++) {
        if (!n[k] && !div[k]) continue;
        long long *mine = values + at[k];
        sort_values(mine, n[k]);
        fprintf(out, "%s\"%s\": {\"count\": %lld, \"total_ns\": %lld, \"p50_ns\": %lld, "
                "\"p99_ns\": %lld, \"p999_ns\": %lld, \"max_ns\": %lld, \"diverged\": %lld, "
                "\"short\": %lld}", first ? "" : ", ", KIND_NAMES[k], n[k], total[k],
                nearest_rank(mine, n[k], 50), nearest_rank(mine, n[k], 99),
                nearest_rank(mine, n[k], 99.9), n[k] ? mine[n[k] - 1] : 0, div[k], shorts[k]);
        first = 0;
    }
    free(values);
}

static void write_result(const char *path, long long wall_ns, long long end_ns) {
    FILE *out = fopen(path, "w");
    if (!out) die(path);
    long long fs = 0, div = 0, lag_max = 0;
    long long last_traced_end = 0;
    for (long long i = 0; i < prog.nops; i++) {
        if (latency_ns[i] > 0) fs += latency_ns[i];
        div += diverged[i];
        if (lag_ns[i] > lag_max) lag_max = lag_ns[i];
        long long e = prog.ops[i].start_ns + prog.ops[i].dur_ns;
        if (e > last_traced_end) last_traced_end = e;
    }
    long long n = 0, *all = malloc(sizeof(long long) * (prog.nops + 1));
    for (long long i = 0; i < prog.nops; i++)
        if (latency_ns[i] >= 0) all[n++] = latency_ns[i];
    sort_values(all, n);
    fprintf(out, "{\"mode\": \"%s\", \"ops\": %lld, \"threads\": %d, \"wall_ns\": %lld, "
            "\"fs_ns\": %lld, \"diverged\": %lld, \"lag_max_ns\": %lld, \"lag_end_ns\": %lld, "
            "\"p50_ns\": %lld, \"p99_ns\": %lld, \"p999_ns\": %lld, \"calls\": {",
            paced ? "paced" : "fast", prog.nops, prog.threads, wall_ns, fs, div, lag_max,
            (end_ns - t0_ns) - (last_traced_end + prog.tail_ns), nearest_rank(all, n, 50),
            nearest_rank(all, n, 99), nearest_rank(all, n, 99.9));
    free(all);
    write_kinds(out);
    fprintf(out, "}}\n");
    if (fclose(out)) die(path);
}

static void preopen(void) {
    for (int i = 0; i < prog.npre; i++) {
        long long flags = prog.pre_flags[i] & ~(long long)(O_CREAT | O_TRUNC | O_EXCL);
        int fd = open_in_root(root_fd, prog.paths[prog.pre_path[i]], flags, 0);
        if (fd < 0) continue; /* its calls count as diverged */
        lseek(fd, prog.pre_pos[i], SEEK_SET);
        slot_fd[prog.pre_slot[i]] = fd;
    }
}

static int run(const char *result) {
    base_fd = malloc(sizeof(int) * (prog.npaths + 1));
    for (int i = 0; i <= prog.npaths; i++) base_fd[i] = -1;
    slot_fd = malloc(sizeof(int) * (prog.slots + 1));
    for (int i = 0; i <= prog.slots; i++) slot_fd[i] = -1;
    done = calloc(prog.nops + 1, 1);
    latency_ns = malloc(sizeof(long long) * (prog.nops + 1));
    lag_ns = calloc(prog.nops + 1, sizeof(long long));
    diverged = calloc(prog.nops + 1, sizeof(int));
    short_io = calloc(prog.nops + 1, sizeof(int));
    if (!slot_fd || !done || !latency_ns || !lag_ns || !diverged || !short_io) die("malloc");
    for (long long i = 0; i < prog.nops; i++) latency_ns[i] = -1;
    struct thread_work *work = calloc(prog.threads, sizeof(struct thread_work));
    for (long long i = 0; i < prog.nops; i++) work[prog.ops[i].thread].count++;
    for (int t = 0; t < prog.threads; t++) {
        work[t].index = t;
        work[t].ops = malloc(sizeof(long long) * (work[t].count + 1));
        work[t].count = 0;
    }
    for (long long i = 0; i < prog.nops; i++) {
        struct thread_work *w = &work[prog.ops[i].thread];
        w->ops[w->count++] = i;
    }
    preopen();
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, prog.threads + 1);
    pthread_t *ids = calloc(prog.threads, sizeof(pthread_t));
    for (int t = 0; t < prog.threads; t++) {
        work[t].barrier = &barrier;
        if (pthread_create(&ids[t], NULL, replay_thread, &work[t])) die("pthread_create");
    }
    /* Paced: the schedule starts 1 ms on, when every thread is past the barrier. */
    t0_ns = now_ns() + (paced ? 1000000 : 0);
    pthread_barrier_wait(&barrier);
    for (int t = 0; t < prog.threads; t++) pthread_join(ids[t], NULL);
    long long end = now_ns();
    if (paced && prog.tail_ns > 0) {
        sleep_until(end + prog.tail_ns);
        end = now_ns();
    }
    write_result(result, end - t0_ns, end);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 5 || (strcmp(argv[1], "setup") && strcmp(argv[1], "run")) ||
        (!strcmp(argv[1], "run") && argc != 7)) {
        fprintf(stderr, "usage: fsarena-replay setup PROGRAM ROOT RATIO\n"
                        "       fsarena-replay run PROGRAM ROOT RATIO fast|paced RESULT\n");
        return 2;
    }
    int run_it = !strcmp(argv[1], "run");
    if (!run_it || load_binary(argv[2])) read_program(argv[2]);
    if (!run_it) save_binary(argv[2]);
    root_path = argv[3];
    root_fd = open(root_path, O_RDONLY | O_DIRECTORY);
    if (root_fd < 0) die(root_path);
    long long biggest = 1 << 20;
    for (long long i = 0; i < prog.nops; i++)
        if (prog.ops[i].kind >= K_WRITE && prog.ops[i].kind <= K_PWRITEV && prog.ops[i].a > biggest)
            biggest = prog.ops[i].a;
    make_pattern((size_t)biggest, strtod(argv[4], NULL));
    if (!strcmp(argv[1], "setup")) return setup();
    paced = !strcmp(argv[5], "paced");
    if (!paced && strcmp(argv[5], "fast")) bad("the timing model is fast or paced");
    return run(argv[6]);
}
