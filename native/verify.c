/*
 * fsarena-verify: check a copy against its dataset's manifest at the speed of
 * the disk and the hash, not of an interpreter's per-file cost.
 *
 * Usage: fsarena-verify ROOT THREADS < MANIFEST
 *   MANIFEST  NUL-terminated records: "d PATH" (an expected directory) and
 *             "f SIZE SHA256HEX PATH" (an expected file), PATH relative to ROOT
 *   THREADS   how many threads hash files (>= 1); 0: names, kinds and sizes only
 * Output: NUL-terminated records "CODE\tDETAIL\tPATH", one per problem, then
 * "checked\tFILES\tBYTES\t". fsarena.datasets.verify turns them into its
 * messages; its Python fallback applies the same rules, which are:
 *   - the walk descends only into expected directories and never follows a
 *     symbolic link; an entry that is not expected is reported (unexpected,
 *     unexpected_dir), an expected directory that cannot be listed is
 *     unreadable_dir, the root unreadable_root;
 *   - an expected directory absent is missing_dir, present as something else
 *     not_dir; an expected file absent is missing, not a regular file
 *     not_file, of another size size (DETAIL: its size);
 *   - every expected file present, regular and of the right size is hashed
 *     (SHA-256, OpenSSL): checksum when it differs, unreadable (DETAIL: the
 *     error) when it cannot be read; all of them count in FILES and BYTES
 *     (with THREADS 0 nothing is read: they count in FILES, BYTES is 0).
 * Exit status 0 when the walk ran (whatever it found), 2 on bad usage or input.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum kind { ABSENT, DIR_, FILE_, OTHER, UNREADABLE };

struct entry {
	const char *path;
	int is_dir;
	long long size;	    /* expected (files) */
	const char *sha256; /* expected (files), 64 hex digits */
	enum kind found;
	long long found_size;
	int hash_problem; /* 0 ok, 1 checksum, 2 unreadable */
	int hash_errno;
};

static struct entry *entries;
static size_t n_entries;
static size_t *table; /* open addressing: index + 1, 0 = empty */
static size_t table_mask;
static int rootfd;

static void usage_error(const char *what)
{
	fprintf(stderr, "fsarena-verify: %s\n", what);
	exit(2);
}

static uint64_t hash_str(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h;
}

static struct entry *lookup(const char *path, size_t len)
{
	for (size_t i = hash_str(path, len) & table_mask;; i = (i + 1) & table_mask) {
		if (!table[i])
			return NULL;
		struct entry *e = &entries[table[i] - 1];
		if (strlen(e->path) == len && memcmp(e->path, path, len) == 0)
			return e;
	}
}

static char *slurp_stdin(size_t *len)
{
	size_t cap = 1 << 20, got = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (!buf)
			usage_error("out of memory reading the manifest");
		ssize_t n = read(0, buf + got, cap - got);
		if (n < 0)
			usage_error("cannot read the manifest");
		if (n == 0)
			break;
		got += (size_t)n;
		if (got == cap)
			buf = realloc(buf, cap *= 2);
	}
	*len = got;
	return buf;
}

static void parse(char *buf, size_t len)
{
	size_t cap = 1024;
	entries = malloc(cap * sizeof *entries);
	for (char *p = buf; p < buf + len;) {
		char *end = memchr(p, '\0', (size_t)(buf + len - p));
		if (!end)
			usage_error("manifest record not NUL-terminated");
		if (n_entries == cap)
			entries = realloc(entries, (cap *= 2) * sizeof *entries);
		if (!entries)
			usage_error("out of memory");
		struct entry *e = &entries[n_entries++];
		memset(e, 0, sizeof *e);
		if (p[0] == 'd' && p[1] == ' ') {
			e->is_dir = 1;
			e->path = p + 2;
		} else if (p[0] == 'f' && p[1] == ' ') {
			char *q;
			e->size = strtoll(p + 2, &q, 10);
			/* q: " HEX64 PATH" */
			if (*q != ' ' || strlen(q) < 67 || q[65] != ' ')
				usage_error("bad file record in the manifest");
			e->sha256 = q + 1;
			q[65] = '\0';
			e->path = q + 66;
		} else {
			usage_error("unknown manifest record");
		}
		p = end + 1;
	}
	size_t size = 16;
	while (size < 2 * n_entries)
		size *= 2;
	table = calloc(size, sizeof *table);
	table_mask = size - 1;
	for (size_t i = 0; i < n_entries; i++) {
		size_t len = strlen(entries[i].path);
		size_t j = hash_str(entries[i].path, len) & table_mask;
		while (table[j])
			j = (j + 1) & table_mask;
		table[j] = i + 1;
	}
}

static void emit(const char *code, const char *detail, const char *path)
{
	printf("%s\t%s\t%s%c", code, detail, path, '\0');
}

/* List one directory (rel: "" for the root); push the expected subdirectories. */
static void scan_dir(const char *rel, char ***stack, size_t *depth, size_t *cap)
{
	int fd = openat(rootfd, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		if (fd >= 0)
			close(fd);
		struct entry *e = *rel ? lookup(rel, strlen(rel)) : NULL;
		if (e)
			e->found = UNREADABLE;
		else
			emit("unreadable_root", "", "");
		return;
	}
	size_t rlen = strlen(rel);
	char path[PATH_MAX];
	struct dirent *d;
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		int n = rlen ? snprintf(path, sizeof path, "%s/%s", rel, d->d_name)
			     : snprintf(path, sizeof path, "%s", d->d_name);
		if (n < 0 || (size_t)n >= sizeof path)
			continue;
		struct stat st;
		enum kind kind = OTHER;
		if (fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			kind = S_ISDIR(st.st_mode) ? DIR_ : S_ISREG(st.st_mode) ? FILE_ : OTHER;
		struct entry *e = lookup(path, (size_t)n);
		if (!e) {
			emit(kind == DIR_ ? "unexpected_dir" : "unexpected", "", path);
			continue;
		}
		e->found = kind;
		e->found_size = kind == FILE_ ? (long long)st.st_size : 0;
		if (kind == DIR_ && e->is_dir) {
			if (*depth == *cap)
				*stack = realloc(*stack, (*cap *= 2) * sizeof **stack);
			(*stack)[(*depth)++] = (char *)e->path;
		}
	}
	closedir(dir);
}

static struct entry **to_hash;
static size_t n_to_hash;
static atomic_size_t next_file;

static void hash_one(struct entry *e, unsigned char *buf, size_t bufsize, EVP_MD_CTX *ctx)
{
	int fd = openat(rootfd, e->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		e->hash_problem = 2;
		e->hash_errno = errno;
		return;
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
	for (;;) {
		ssize_t n = read(fd, buf, bufsize);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			e->hash_problem = 2;
			e->hash_errno = errno;
			close(fd);
			return;
		}
		if (n == 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)n);
	}
	close(fd);
	unsigned char md[32];
	EVP_DigestFinal_ex(ctx, md, NULL);
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		if (hex[md[i] >> 4] != e->sha256[2 * i] || hex[md[i] & 15] != e->sha256[2 * i + 1]) {
			e->hash_problem = 1;
			return;
		}
	}
}

static void *hasher(void *arg)
{
	(void)arg;
	size_t bufsize = 1 << 20;
	unsigned char *buf = malloc(bufsize);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	if (!buf || !ctx)
		usage_error("out of memory");
	for (size_t i; (i = atomic_fetch_add(&next_file, 1)) < n_to_hash;)
		hash_one(to_hash[i], buf, bufsize, ctx);
	EVP_MD_CTX_free(ctx);
	free(buf);
	return NULL;
}

static void report(long long *bytes)
{
	char detail[64];
	to_hash = malloc((n_entries + 1) * sizeof *to_hash);
	for (size_t i = 0; i < n_entries; i++) {
		struct entry *e = &entries[i];
		if (e->is_dir) {
			if (e->found == ABSENT)
				emit("missing_dir", "", e->path);
			else if (e->found == UNREADABLE)
				emit("unreadable_dir", "", e->path);
			else if (e->found != DIR_)
				emit("not_dir", "", e->path);
		} else if (e->found == ABSENT) {
			emit("missing", "", e->path);
		} else if (e->found != FILE_) {
			emit("not_file", "", e->path);
		} else if (e->found_size != e->size) {
			snprintf(detail, sizeof detail, "%lld", e->found_size);
			emit("size", detail, e->path);
		} else {
			to_hash[n_to_hash++] = e;
			*bytes += e->size;
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[2]) < 0)
		usage_error("usage: fsarena-verify ROOT THREADS < MANIFEST");
	int threads = atoi(argv[2]);
	size_t len;
	char *buf = slurp_stdin(&len);
	parse(buf, len);
	rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		emit("unreadable_root", "", "");
		printf("checked\t0\t0\t%c", '\0');
		return 0;
	}
	size_t cap = 1024, depth = 0;
	char **stack = malloc(cap * sizeof *stack);
	scan_dir("", &stack, &depth, &cap);
	while (depth)
		scan_dir(stack[--depth], &stack, &depth, &cap);
	long long bytes = 0;
	report(&bytes);
	if (threads == 0) {
		printf("checked\t%zu\t0\t%c", n_to_hash, '\0');
		return fflush(stdout) == 0 ? 0 : 2;
	}
	pthread_t tid[64];
	if (threads > 64)
		threads = 64;
	for (int i = 1; i < threads; i++)
		pthread_create(&tid[i], NULL, hasher, NULL);
	hasher(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	for (size_t i = 0; i < n_to_hash; i++) {
		struct entry *e = to_hash[i];
		if (e->hash_problem == 1)
			emit("checksum", "", e->path);
		else if (e->hash_problem == 2)
			emit("unreadable", strerror(e->hash_errno), e->path);
	}
	printf("checked\t%zu\t%lld\t%c", n_to_hash, bytes, '\0');
	return fflush(stdout) == 0 ? 0 : 2;
}
