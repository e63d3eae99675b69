"""The bare C loops bench/dataset_throughput.py measures fsarena against (not a test).

Each does only the per-file work, from a list already in memory when its clock
starts, and prints the seconds of its loop:
- verify: list every directory (opendir, readdir to the end, closedir: what a
  check for extra files needs, and no more), then open, read, hash, close
  every file, on as many threads as fsarena-verify uses; no comparison. The
  hash is XXH3-128 (libxxhash, 1 MiB reads), the manifests' digest, or
  SHA-256 (OpenSSL, 1 MiB reads), the digest before manifest version 2; the
  directories can be left out (the listing's own cost).
- write: mkdir every directory, then open, write the file's bytes, close;
  syncfs() of the destination at the end, as the generation bench does after
  generate(). The bytes are made as fsarena makes them: for incompressible
  datasets each 1 MiB chunk is a slice of a 16 MiB random pool XOR a 64-bit
  constant (fsarena.datasets.content), for text trees a pool slice (written
  from a 4 MiB buffer, which costs the same); the plain variant writes one
  buffer for every kind, the reference before this was checked.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

from fsarena.datasets.manifest import Manifest

VERIFY_C = r"""
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include <xxh_x86dispatch.h> /* as fsarena-verify: AVX2/AVX-512 chosen at run time */
static char **paths, **dirs; static size_t n, ndirs; static atomic_size_t next, next_dir;
static int root, sha;
static void *work(void *arg) {
    (void)arg; unsigned char *buf = malloc(1 << 20), md[32];
    EVP_MD_CTX *ctx = EVP_MD_CTX_new(); XXH3_state_t *x = XXH3_createState();
    for (size_t i; (i = atomic_fetch_add(&next_dir, 1)) < ndirs;) {
        DIR *d = fdopendir(openat(root, dirs[i], O_RDONLY | O_DIRECTORY)); if (!d) exit(4);
        while (readdir(d)) {}
        closedir(d);
    }
    for (size_t i; (i = atomic_fetch_add(&next, 1)) < n;) {
        int fd = openat(root, paths[i], O_RDONLY); if (fd < 0) exit(4);
        if (sha) {
            EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
            for (ssize_t k; (k = read(fd, buf, 1 << 20)) > 0;) EVP_DigestUpdate(ctx, buf, k);
            EVP_DigestFinal_ex(ctx, md, NULL);
        } else {
            XXH3_128bits_reset(x);
            for (ssize_t k; (k = read(fd, buf, 1 << 20)) > 0;) XXH3_128bits_update(x, buf, k);
            XXH128_canonical_t c; XXH128_canonicalFromHash(&c, XXH3_128bits_digest(x));
        }
        close(fd);
    }
    return NULL;
}
int main(int argc, char **argv) {
    (void)argc; root = open(argv[1], O_RDONLY | O_DIRECTORY); int threads = atoi(argv[2]);
    sha = !strcmp(argv[3], "sha256");
    size_t cap = 1 << 16, dcap = 1 << 16; char line[4096];
    paths = malloc(cap * sizeof *paths); dirs = malloc(dcap * sizeof *dirs);
    while (fgets(line, sizeof line, stdin)) {
        if (n == cap) paths = realloc(paths, (cap *= 2) * sizeof *paths);
        if (ndirs == dcap) dirs = realloc(dirs, (dcap *= 2) * sizeof *dirs);
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'd') dirs[ndirs++] = strdup(line + 2); else paths[n++] = strdup(line + 2);
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
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define CHUNK (1 << 20)
#define POOL (16 << 20)
int main(int argc, char **argv) {
    (void)argc; size_t n = 0, cap = 1 << 16; char **paths = malloc(cap * sizeof *paths);
    long *size = malloc(cap * sizeof *size); char line[4096]; int xor = !strcmp(argv[2], "xor");
    while (fgets(line, sizeof line, stdin)) {
        if (n == cap) { cap *= 2; paths = realloc(paths, cap * sizeof *paths);
            size = realloc(size, cap * sizeof *size); }
        line[strcspn(line, "\n")] = 0;
        if (line[0] == 'd') { size[n] = -1; paths[n++] = strdup(line + 2); continue; }
        char *e; size[n] = strtol(line + 2, &e, 10); paths[n++] = strdup(e + 1);
    }
    long blen = 4 << 20; uint64_t *buf = malloc(blen); memset(buf, 0x5a, blen);
    uint64_t *pool = malloc(POOL), x = 88172645463325252ULL;
    for (size_t i = 0; i < POOL / 8; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; pool[i] = x; }
    mkdir(argv[1], 0755); int root = open(argv[1], O_RDONLY | O_DIRECTORY);
    struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
    for (size_t i = 0; i < n; i++) {
        if (size[i] < 0) { mkdirat(root, paths[i], 0755); continue; }
        int fd = openat(root, paths[i], O_WRONLY | O_CREAT | O_EXCL, 0644);
        for (long left = size[i]; left > 0;) {
            long len = left < blen ? left : blen;
            for (long c = 0; xor && c < len; c += CHUNK) {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                const uint64_t *src = pool + (x >> 40) % ((POOL - CHUNK) / 8 + 1);
                for (long w = 0; w < (CHUNK < len - c ? CHUNK : len - c + 7) / 8; w++)
                    buf[c / 8 + w] = src[w] ^ x;
            }
            long w = write(fd, buf, len); if (w <= 0) return 4; left -= w;
        }
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
        ("bare-verify", VERIFY_C, ["-pthread", "-lcrypto", "-lxxhash"]),
        ("bare-write", WRITE_C, ["-O3"]),
    ):
        src, exe = work / f"{name}.c", work / name
        src.write_text(source)
        subprocess.run(["gcc", "-O2", "-o", str(exe), str(src), *libs], check=True)
        out.append(str(exe))
    return out[0], out[1]


def bare_verify(
    exe: str, root: Path, dirs: list[str], files: list[str], threads: int, algorithm: str
) -> float:
    """Seconds of the bare loop listing these directories (paths relative to root, "."
    for root) and hashing these files with algorithm ("xxh128" or "sha256")."""
    listing = "".join([f"d {d}\n" for d in dirs] + [f"f {p}\n" for p in files]).encode()
    argv = [exe, str(root), str(threads), algorithm]
    out = subprocess.run(argv, input=listing, capture_output=True)
    out.check_returncode()
    return float(out.stdout)


def bare_write(
    exe: str, root: Path, directories: list[str], files: list[tuple[str, int]], content: str
) -> float:
    """Seconds of the bare loop making these directories and files under root; content
    "xor": every 1 MiB chunk made as fsarena makes incompressible data (a 16 MiB pool's
    slice XOR a 64-bit constant), "plain": written from one buffer (text trees, whose
    files are slices of a pool, need no more)."""
    lines = [f"d {d}\n" for d in directories] + [f"f {s} {p}\n" for p, s in files]
    argv = [exe, str(root), content]
    out = subprocess.run(argv, input="".join(lines).encode(), capture_output=True)
    out.check_returncode()
    return float(out.stdout)


# The last commit whose fsarena-verify hashed SHA-256 (manifest version 1): the "before".
V1_COMMIT = "2163667923b59323440542811ed575f717c8db37"


def compile_v1(work: Path) -> str:
    """fsarena-verify as of V1_COMMIT (SHA-256), compiled under work from git."""
    repo = Path(__file__).resolve().parents[1]
    source = subprocess.run(
        ["git", "-C", str(repo), "show", f"{V1_COMMIT}:native/verify.c"],
        check=True,
        capture_output=True,
    ).stdout
    src, exe = work / "verify-v1.c", work / "verify-v1"
    src.write_bytes(source)
    argv = ["gcc", "-O2", "-pthread", "-o", str(exe), str(src), "-lcrypto"]
    subprocess.run(argv, check=True)
    return str(exe)


def v1_records(manifest: Manifest, root: Path) -> list[tuple[str, int, str]]:
    """(path, size, SHA-256) of the manifest's files, hashed from the copy (not timed)."""
    out = []
    for f in manifest.files:
        with open(root / f.path, "rb") as fh:
            out.append((f.path, f.size_bytes, hashlib.file_digest(fh, "sha256").hexdigest()))
    return [*((d, -1, "") for d in manifest.directories), *out]


def v1_verify(exe: str, records: list[tuple[str, int, str]], root: Path) -> None:
    """What verify(tool=...) did with manifest version 1: records in, problems parsed."""
    lines = [f"d {p}\0" if size < 0 else f"f {size} {sha} {p}\0" for p, size, sha in records]
    out = subprocess.run([exe, str(root), "2"], input="".join(lines).encode(), capture_output=True)
    out.check_returncode()
    problems = [r.split("\t", 2) for r in out.stdout.decode().split("\0")[:-1]]
    if [code for code, _, _ in problems] != ["checked"]:
        raise SystemExit(f"fsarena-verify v1 found problems: {problems[:5]}")
