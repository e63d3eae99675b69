"""The bare C loops bench/dataset_throughput.py measures fsarena against (not a test).

Each does only the per-file work, from a list already in memory when its clock
starts, and prints the seconds of its loop:
- verify: open, read (1 MiB), SHA-256 (OpenSSL), close for every file, on as
  many threads as fsarena-verify uses; no walk, no comparison.
- write: mkdir every directory, then open, write the file's bytes from a 4 MiB
  in-memory buffer, close; syncfs() of the destination at the end, as the
  generation bench does after generate().
"""

from __future__ import annotations

import subprocess
from pathlib import Path

VERIFY_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static char **paths; static size_t n; static atomic_size_t next; static int root;
static void *work(void *arg) {
    (void)arg; unsigned char *buf = malloc(1 << 20), md[32];
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    for (size_t i; (i = atomic_fetch_add(&next, 1)) < n;) {
        int fd = openat(root, paths[i], O_RDONLY); if (fd < 0) exit(4);
        EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
        for (ssize_t k; (k = read(fd, buf, 1 << 20)) > 0;) EVP_DigestUpdate(ctx, buf, k);
        EVP_DigestFinal_ex(ctx, md, NULL); close(fd);
    }
    return NULL;
}
int main(int argc, char **argv) {
    (void)argc; root = open(argv[1], O_RDONLY | O_DIRECTORY); int threads = atoi(argv[2]);
    size_t cap = 1 << 16; paths = malloc(cap * sizeof *paths); char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        if (n == cap) paths = realloc(paths, (cap *= 2) * sizeof *paths);
        line[strcspn(line, "\n")] = 0; paths[n++] = strdup(line);
    }
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    pthread_t t[16];
    for (int i = 1; i < threads; i++) pthread_create(&t[i], NULL, work, NULL);
    work(NULL);
    for (int i = 1; i < threads; i++) pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.9f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
"""

WRITE_C = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    (void)argc; size_t n = 0, cap = 1 << 16; char **paths = malloc(cap * sizeof *paths);
    long *size = malloc(cap * sizeof *size); char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        if (n == cap) { cap *= 2; paths = realloc(paths, cap * sizeof *paths);
            size = realloc(size, cap * sizeof *size); }
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'd') { size[n] = -1; paths[n++] = strdup(line + 2); continue; }
        char *e; size[n] = strtol(line + 2, &e, 10); paths[n++] = strdup(e + 1);
    }
    long blen = 4 << 20; char *buf = malloc(blen); memset(buf, 0x5a, blen);
    mkdir(argv[1], 0755); int root = open(argv[1], O_RDONLY | O_DIRECTORY);
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t i = 0; i < n; i++) {
        if (size[i] < 0) { mkdirat(root, paths[i], 0755); continue; }
        int fd = openat(root, paths[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
        for (long left = size[i]; left > 0;) { long w = write(fd, buf, left < blen ? left : blen);
            if (w <= 0) return 4; left -= w; }
        close(fd);
    }
    syncfs(root);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.9f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
    return 0;
}
"""


def compile_loops(work: Path) -> tuple[str, str]:
    """(verify, write) executables compiled under work."""
    out = []
    for name, source, libs in (
        ("bare-verify", VERIFY_C, ["-pthread", "-lcrypto"]),
        ("bare-write", WRITE_C, []),
    ):
        src, exe = work / f"{name}.c", work / name
        src.write_text(source)
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(src), *libs], check=True)
        out.append(str(exe))
    return out[0], out[1]


def bare_verify(exe: str, root: Path, files: list[str], threads: int) -> float:
    """Seconds of the bare loop hashing these files (paths relative to root)."""
    listing = "".join(f"{p}\n" for p in files).encode()
    out = subprocess.run([exe, str(root), str(threads)], input=listing, capture_output=True)
    out.check_returncode()
    return float(out.stdout)


def bare_write(exe: str, root: Path, directories: list[str], files: list[tuple[str, int]]) -> float:
    """Seconds of the bare loop making these directories and files under root."""
    lines = [f"d {d}\n" for d in directories] + [f"f {s} {p}\n" for p, s in files]
    out = subprocess.run([exe, str(root)], input="".join(lines).encode(), capture_output=True)
    out.check_returncode()
    return float(out.stdout)
