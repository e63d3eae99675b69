/*
 * fsarena-verify: check a copy against its dataset's manifest at the speed of
 * the disk and the hash, not of an interpreter's per-file cost.
 *
 * Usage: fsarena-verify ROOT THREADS < MANIFEST
 *   MANIFEST  NUL-terminated records: "d PATH" (an expected directory) and
 *             "f SIZE XXH128HEX PATH" (an expected file), PATH relative to ROOT
 *   THREADS   how many threads walk and hash (>= 1); 0: names, kinds and sizes
 *             only, on one thread
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
 *     (XXH3-128, libxxhash; the digest in its canonical big-endian hex, as
 *     Python's xxhash.xxh3_128().hexdigest()): checksum when it differs,
 *     unreadable (DETAIL: the error) when it cannot be read; all of them count
 *     in FILES and BYTES (with THREADS 0 nothing is read: they count in FILES,
 *     BYTES is 0).
 * Per-file cost is what limits a tree of small files, so the walk does the
 * least per entry: the kind comes from readdir's d_type (lstat only where the
 * filesystem leaves it unknown), and an expected regular file is opened, its
 * size taken with fstat on that descriptor and, when it matches, read and
 * hashed right there, by the thread that listed its directory. Directories are
 * the unit of work the threads share, so listing and hashing overlap. xxHash
 * picks AVX2 or AVX-512 code at run time (see the Makefile) and hashes faster
 * than a file is read, so a large file is read and hashed in turn (a reader
 * thread feeding a ring of buffers was slower under load on 2 cores).
 * Exit status 0 when the walk ran (whatever it found), 2 on bad usage or input.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
/* After xxhash.h: XXH3_128bits_update becomes its run-time dispatching version. */
#include <xxh_x86dispatch.h>

enum kind { ABSENT, DIR_, FILE_, OTHER, UNREADABLE };

struct entry {
	const char *path;
	int is_dir;
	long long size;	    /* expected (files) */
	const char *digest; /* expected (files), 32 hex digits */
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
static int hashing; /* THREADS > 0 */

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
			/* q: " HEX32 PATH" */
			if (*q != ' ' || strlen(q) < 35 || q[33] != ' ')
				usage_error("bad file record in the manifest");
			e->digest = q + 1;
			q[33] = '\0';
			e->path = q + 34;
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

/* Read the open file (its size already checked) and compare its digest. */
static void hash_fd(struct entry *e, int fd, unsigned char *buf, size_t bufsize, XXH3_state_t *st)
{
	XXH3_128bits_reset(st);
	long long left = e->size;
	while (left > 0) {
		ssize_t n = read(fd, buf, bufsize);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) { /* an error, or the file shrank under us */
			e->hash_problem = n < 0 ? 2 : 1;
			e->hash_errno = errno;
			return;
		}
		XXH3_128bits_update(st, buf, (size_t)n);
		left -= n;
	}
	XXH128_canonical_t md;
	XXH128_canonicalFromHash(&md, XXH3_128bits_digest(st));
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		if (hex[md.digest[i] >> 4] != e->digest[2 * i] ||
		    hex[md.digest[i] & 15] != e->digest[2 * i + 1]) {
			e->hash_problem = 1;
			return;
		}
	}
}

struct worker {
	unsigned char *buf;
	size_t bufsize;
	XXH3_state_t *state;
};

/* An expected file listed as a regular file (or of unknown kind): check it, hash it. */
static void check_file(struct entry *e, int dfd, const char *name, struct worker *w)
{
	struct stat st;
	if (!hashing) {
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			e->found = OTHER;
			return;
		}
		e->found = S_ISREG(st.st_mode) ? FILE_ : S_ISDIR(st.st_mode) ? DIR_ : OTHER;
		e->found_size = (long long)st.st_size;
		return;
	}
	/* O_NONBLOCK: a FIFO of unknown kind must not block the open. */
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int error = errno;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			e->found = OTHER; /* gone since it was listed */
		} else if (!S_ISREG(st.st_mode)) {
			e->found = S_ISDIR(st.st_mode) ? DIR_ : OTHER;
		} else {
			e->found = FILE_;
			e->found_size = (long long)st.st_size;
			e->hash_problem = 2;
			e->hash_errno = error;
		}
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		e->found = S_ISDIR(st.st_mode) ? DIR_ : OTHER;
	} else {
		e->found = FILE_;
		e->found_size = (long long)st.st_size;
		if (e->found_size == e->size)
			hash_fd(e, fd, w->buf, w->bufsize, w->state);
	}
	close(fd);
}

/* The directories still to list, shared by the threads. */
static struct entry **stack;
static size_t depth, stack_cap, busy;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;

static void push(struct entry *dir)
{
	pthread_mutex_lock(&lock);
	if (depth == stack_cap && !(stack = realloc(stack, (stack_cap *= 2) * sizeof *stack)))
		usage_error("out of memory");
	stack[depth++] = dir;
	pthread_cond_signal(&more);
	pthread_mutex_unlock(&lock);
}

/* List one directory (dir NULL: the root): check what it holds, queue expected subdirectories. */
static void scan_dir(struct entry *dir, struct worker *w)
{
	const char *rel = dir ? dir->path : "";
	int fd = openat(rootfd, *rel ? rel : ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		if (dir)
			dir->found = UNREADABLE;
		else
			emit("unreadable_root", "", "");
		return;
	}
	size_t rlen = strlen(rel);
	char path[PATH_MAX];
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		int n = rlen ? snprintf(path, sizeof path, "%s/%s", rel, de->d_name)
			     : snprintf(path, sizeof path, "%s", de->d_name);
		if (n < 0 || (size_t)n >= sizeof path)
			continue;
		enum kind kind = de->d_type == DT_DIR ? DIR_ : de->d_type == DT_REG ? FILE_ : OTHER;
		if (de->d_type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				kind = S_ISDIR(st.st_mode) ? DIR_ : S_ISREG(st.st_mode) ? FILE_ : OTHER;
		}
		struct entry *e = lookup(path, (size_t)n);
		if (!e) {
			emit(kind == DIR_ ? "unexpected_dir" : "unexpected", "", path);
		} else if (e->is_dir) {
			e->found = kind;
			if (kind == DIR_)
				push(e);
		} else if (kind == FILE_) {
			check_file(e, dirfd(d), de->d_name, w);
		} else {
			e->found = kind;
		}
	}
	closedir(d);
}

static void *walker(void *arg)
{
	(void)arg;
	struct worker w = {malloc(1 << 20), 1 << 20, XXH3_createState()};
	if (!w.buf || !w.state)
		usage_error("out of memory");
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!depth && busy)
			pthread_cond_wait(&more, &lock);
		if (!depth)
			break; /* nothing queued and nobody listing: the walk is done */
		struct entry *dir = stack[--depth];
		busy++;
		pthread_mutex_unlock(&lock);
		scan_dir(dir, &w);
		pthread_mutex_lock(&lock);
		if (!--busy)
			pthread_cond_broadcast(&more);
	}
	pthread_cond_broadcast(&more);
	pthread_mutex_unlock(&lock);
	XXH3_freeState(w.state);
	free(w.buf);
	return NULL;
}

static void report(size_t *files, long long *bytes)
{
	char detail[64];
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
			++*files;
			*bytes += hashing ? e->size : 0;
			if (e->hash_problem == 1)
				emit("checksum", "", e->path);
			else if (e->hash_problem == 2)
				emit("unreadable", strerror(e->hash_errno), e->path);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 || atoi(argv[2]) < 0)
		usage_error("usage: fsarena-verify ROOT THREADS < MANIFEST");
	int threads = atoi(argv[2]);
	hashing = threads > 0;
	if (threads < 1)
		threads = 1;
	if (threads > 64)
		threads = 64;
	size_t len;
	char *buf = slurp_stdin(&len);
	parse(buf, len);
	rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		emit("unreadable_root", "", "");
		printf("checked\t0\t0\t%c", '\0');
		return 0;
	}
	stack_cap = 1024;
	stack = malloc(stack_cap * sizeof *stack);
	if (!stack)
		usage_error("out of memory");
	stack[depth++] = NULL; /* the root */
	pthread_t tid[64];
	for (int i = 1; i < threads; i++)
		if (pthread_create(&tid[i], NULL, walker, NULL) != 0)
			usage_error("cannot start a thread");
	walker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	size_t files = 0;
	long long bytes = 0;
	report(&files, &bytes);
	printf("checked\t%zu\t%lld\t%c", files, bytes, '\0');
	return fflush(stdout) == 0 ? 0 : 2;
}
