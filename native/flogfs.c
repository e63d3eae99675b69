/*
 * flogfs: a FUSE filesystem exposing one file, disk.img, that logs every write and flush.
 *
 * fsarena's power-loss test puts a loop device on MNT/disk.img. Each write the loop
 * device makes is applied to the backing file and appended to an append-only
 * log; each flush (loop turns REQ_PREFLUSH and FUA into vfs_fsync) becomes an
 * FSYNC record; discard and write-zeroes arrive as fallocate and are logged as
 * PUNCH or ZERO. Writes to MNT/mark append MARK records: the workload's
 * "this promise was returned" markers. One mutex covers applying a write and
 * logging it, so log order is the order in which writes reached the backing
 * file, and loop completes a request only after it was logged: every write the
 * filesystem saw complete before it issued a flush lies before that FSYNC.
 *
 * Record: a 48-byte little-endian header {"FLOG", type, seq, off, len, ts_ns,
 * flags, payload_len} followed by payload_len bytes (the data of WRITE, the
 * text of MARK). Writeback caching stays off (it defers and merges writes).
 *
 * Usage: fsarena-flogfs BACKING LOG MOUNTPOINT [-f] [-o direct,realsync,...]
 *   direct    FOPEN_DIRECT_IO on disk.img
 *   realsync  really fdatasync the backing file on FSYNC (not needed on tmpfs)
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

enum { REC_WRITE = 1, REC_FSYNC = 2, REC_PUNCH = 3, REC_ZERO = 4, REC_MARK = 5, REC_TRUNCATE = 6 };

struct rec_header {
    char magic[4];
    uint32_t type;
    uint64_t seq;
    uint64_t off;
    uint64_t len;
    uint64_t ts_ns;
    uint32_t flags;
    uint32_t payload_len;
};
_Static_assert(sizeof(struct rec_header) == 48, "the log header is 48 bytes");

static const char DISK[] = "/disk.img";
static const char MARK[] = "/mark";

static struct {
    char *backing_path;
    char *log_path;
    int backing_fd;
    int log_fd;
    int direct;
    int realsync;
    int broken; /* a log write failed: refuse everything, the log is no longer the truth */
    uint64_t seq;
    pthread_mutex_t lock;
} g = {.backing_fd = -1, .log_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Append one record; the caller holds g.lock. */
static int log_record(uint32_t type, uint64_t off, uint64_t len, uint32_t flags,
                      const void *payload, uint32_t payload_len) {
    struct rec_header h;
    memcpy(h.magic, "FLOG", 4);
    h.type = htole32(type);
    h.seq = htole64(g.seq++);
    h.off = htole64(off);
    h.len = htole64(len);
    h.ts_ns = htole64(now_ns());
    h.flags = htole32(flags);
    h.payload_len = htole32(payload_len);
    if (write_all(g.log_fd, &h, sizeof h) || (payload_len && write_all(g.log_fd, payload, payload_len))) {
        g.broken = 1;
        return -EIO;
    }
    return 0;
}

static int fl_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    memset(st, 0, sizeof *st);
    st->st_uid = getuid();
    st->st_gid = getgid();
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
    } else if (strcmp(path, DISK) == 0) {
        struct stat b;
        if (fstat(g.backing_fd, &b) < 0) return -errno;
        st->st_mode = S_IFREG | 0644;
        st->st_nlink = 1;
        st->st_size = b.st_size;
        st->st_blocks = b.st_blocks;
    } else if (strcmp(path, MARK) == 0) {
        st->st_mode = S_IFREG | 0644;
        st->st_nlink = 1;
    } else {
        return -ENOENT;
    }
    return 0;
}

static int fl_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)off;
    (void)fi;
    (void)flags;
    if (strcmp(path, "/") != 0) return -ENOENT;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    fill(buf, DISK + 1, NULL, 0, 0);
    fill(buf, MARK + 1, NULL, 0, 0);
    return 0;
}

static int fl_open(const char *path, struct fuse_file_info *fi) {
    if (strcmp(path, DISK) == 0) {
        fi->direct_io = g.direct;
        return 0;
    }
    if (strcmp(path, MARK) == 0) {
        fi->direct_io = 1; /* each write() is one MARK, never cached or merged */
        return 0;
    }
    return -ENOENT;
}

static int fl_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, MARK) == 0) return 0;
    if (strcmp(path, DISK) != 0) return -ENOENT;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pread(g.backing_fd, buf + done, size - done, off + (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -errno;
        if (n == 0) break;
        done += (size_t)n;
    }
    return (int)done;
}

static int fl_write(const char *path, const char *buf, size_t size, off_t off,
                    struct fuse_file_info *fi) {
    (void)fi;
    int ret = (int)size;
    pthread_mutex_lock(&g.lock);
    if (g.broken) {
        ret = -EIO;
    } else if (strcmp(path, MARK) == 0) {
        int r = log_record(REC_MARK, 0, size, 0, buf, (uint32_t)size);
        if (r) ret = r;
    } else if (strcmp(path, DISK) == 0) {
        size_t done = 0;
        while (done < size) {
            ssize_t n = pwrite(g.backing_fd, buf + done, size - done, off + (off_t)done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            done += (size_t)n;
        }
        if (done < size) {
            ret = -EIO;
        } else {
            int r = log_record(REC_WRITE, (uint64_t)off, size, 0, buf, (uint32_t)size);
            if (r) ret = r;
        }
    } else {
        ret = -ENOENT;
    }
    pthread_mutex_unlock(&g.lock);
    return ret;
}

static int fl_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, DISK) != 0) return 0;
    int ret = 0;
    pthread_mutex_lock(&g.lock);
    if (g.broken) ret = -EIO;
    if (!ret && g.realsync && fdatasync(g.backing_fd) < 0) ret = -errno;
    if (!ret) ret = log_record(REC_FSYNC, 0, 0, datasync ? 1u : 0u, NULL, 0);
    pthread_mutex_unlock(&g.lock);
    return ret;
}

static int fl_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, DISK) != 0) return -EOPNOTSUPP;
    int ret = 0;
    pthread_mutex_lock(&g.lock);
    if (g.broken) ret = -EIO;
    if (!ret && fallocate(g.backing_fd, mode, off, len) < 0) ret = -errno;
    if (!ret && (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))) {
        uint32_t type = (mode & FALLOC_FL_PUNCH_HOLE) ? REC_PUNCH : REC_ZERO;
        ret = log_record(type, (uint64_t)off, (uint64_t)len, (uint32_t)mode, NULL, 0);
    }
    pthread_mutex_unlock(&g.lock);
    return ret;
}

static int fl_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, MARK) == 0) return 0;
    if (strcmp(path, DISK) != 0) return -ENOENT;
    int ret = 0;
    pthread_mutex_lock(&g.lock);
    if (g.broken) ret = -EIO;
    if (!ret && ftruncate(g.backing_fd, size) < 0) ret = -errno;
    if (!ret) ret = log_record(REC_TRUNCATE, 0, (uint64_t)size, 0, NULL, 0);
    pthread_mutex_unlock(&g.lock);
    return ret;
}

static int fl_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi) {
    (void)path;
    (void)tv;
    (void)fi;
    return 0; /* times of disk.img do not matter; without this, writeback mode fails fsync */
}

static int fl_statfs(const char *path, struct statvfs *st) {
    (void)path;
    return fstatvfs(g.backing_fd, st) < 0 ? -errno : 0;
}

static void *fl_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE; /* it defers and merges writes */
    cfg->kernel_cache = 0;
    return NULL;
}

static void fl_destroy(void *data) {
    (void)data;
    pthread_mutex_lock(&g.lock);
    if (g.log_fd >= 0) fsync(g.log_fd);
    pthread_mutex_unlock(&g.lock);
}

static const struct fuse_operations ops = {
    .getattr = fl_getattr,
    .readdir = fl_readdir,
    .open = fl_open,
    .read = fl_read,
    .write = fl_write,
    .fsync = fl_fsync,
    .fallocate = fl_fallocate,
    .truncate = fl_truncate,
    .utimens = fl_utimens,
    .statfs = fl_statfs,
    .init = fl_init,
    .destroy = fl_destroy,
};

enum { KEY_DIRECT, KEY_REALSYNC };

static const struct fuse_opt opts[] = {
    FUSE_OPT_KEY("direct", KEY_DIRECT),
    FUSE_OPT_KEY("realsync", KEY_REALSYNC),
    FUSE_OPT_END,
};

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs) {
    (void)data;
    (void)outargs;
    switch (key) {
    case KEY_DIRECT:
        g.direct = 1;
        return 0;
    case KEY_REALSYNC:
        g.realsync = 1;
        return 0;
    case FUSE_OPT_KEY_NONOPT:
        if (!g.backing_path) {
            g.backing_path = strdup(arg);
            return 0;
        }
        if (!g.log_path) {
            g.log_path = strdup(arg);
            return 0;
        }
        return 1; /* the mount point: fuse_main's */
    default:
        return 1;
    }
}

int main(int argc, char *argv[]) {
    struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
    if (fuse_opt_parse(&args, NULL, opts, opt_proc) < 0) return 2;
    if (!g.backing_path || !g.log_path) {
        fprintf(stderr, "usage: %s BACKING LOG MOUNTPOINT [-f] [-o direct,realsync]\n", argv[0]);
        return 2;
    }
    g.backing_fd = open(g.backing_path, O_RDWR);
    if (g.backing_fd < 0) {
        perror(g.backing_path);
        return 2;
    }
    g.log_fd = open(g.log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (g.log_fd < 0) {
        perror(g.log_path);
        return 2;
    }
    int ret = fuse_main(args.argc, args.argv, &ops, NULL);
    fuse_opt_free_args(&args);
    close(g.log_fd);
    close(g.backing_fd);
    return ret;
}
