/*
 * fsarena-mkfiles: create article D's small files with nothing but the
 * system calls a file takes (mkdir, open, write, close), so that timing it
 * measures the filesystem, not the harness.
 *
 * Usage: fsarena-mkfiles LAYOUT POOL ROOT
 *   LAYOUT  lines "d PATH" (a directory) and "f OFFSET SIZE PATH" (a file whose
 *           content is POOL read cyclically from OFFSET), parents before children
 *   POOL    the content pool (bytes)
 *   ROOT    created (an existing directory is used as is: files are created with
 *           O_EXCL, so none is overwritten); every PATH is relative to it
 * Everything is read and parsed before the first file is created; the files
 * are created in LAYOUT order with openat() relative to ROOT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct entry {
	char kind;
	size_t offset, size;
	const char *path;
};

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fsarena-mkfiles: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		die("cannot open", path);
	char *buf = malloc((size_t)st.st_size * 2 + 1);
	if (!buf)
		die("out of memory for", path);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			die("cannot read", path);
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

static struct entry *parse(char *text, size_t *count)
{
	size_t lines = 0, cap = 1024;
	struct entry *e = malloc(cap * sizeof *e);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (lines == cap && !(e = realloc(e, (cap *= 2) * sizeof *e)))
			die("out of memory", "layout");
		struct entry *x = &e[lines++];
		x->kind = line[0];
		if (x->kind == 'd') {
			x->path = line + 2;
			continue;
		}
		char *end;
		x->offset = strtoull(line + 2, &end, 10);
		x->size = strtoull(end + 1, &end, 10);
		x->path = end + 1;
	}
	*count = lines;
	return e;
}

static void write_file(int root, const struct entry *x, const char *pool, size_t pool_len)
{
	int fd = openat(root, x->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot create", x->path);
	size_t left = x->size, off = x->offset % pool_len;
	while (left > 0) {
		/* The pool is stored twice in a row: any piece up to pool_len is contiguous. */
		size_t n = left < pool_len ? left : pool_len;
		ssize_t w = write(fd, pool + off, n);
		if (w <= 0)
			die("cannot write", x->path);
		left -= (size_t)w;
		off = (off + (size_t)w) % pool_len;
	}
	if (close(fd) < 0)
		die("cannot close", x->path);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: fsarena-mkfiles LAYOUT POOL ROOT\n");
		return 2;
	}
	size_t layout_len, pool_len, count;
	char *layout = slurp(argv[1], &layout_len);
	char *pool = slurp(argv[2], &pool_len);
	if (pool_len == 0) {
		fprintf(stderr, "fsarena-mkfiles: empty pool %s\n", argv[2]);
		return 2;
	}
	memcpy(pool + pool_len, pool, pool_len);
	struct entry *entries = parse(layout, &count);
	if (mkdir(argv[3], 0755) < 0 && errno != EEXIST)
		die("cannot create", argv[3]);
	int root = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		die("cannot open", argv[3]);
	for (size_t i = 0; i < count; i++) {
		if (entries[i].kind == 'd') {
			if (mkdirat(root, entries[i].path, 0755) < 0)
				die("cannot create", entries[i].path);
		} else {
			write_file(root, &entries[i], pool, pool_len);
		}
	}
	close(root);
	return 0;
}
