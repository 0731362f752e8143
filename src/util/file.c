/*
 * file.c — memory maps, whole-file reads and durable atomic writes.
 *
 * The commit protocol of the index rests on fa_write_atomic: the new bytes
 * go to name.tmp, are fsynced, renamed over name, and the folder is fsynced
 * so the rename itself survives a crash. A reader sees the old file or the
 * new one, never a mix.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

int fa_map_file(fa_map *m, const char *path)
{
	m->data = NULL;
	m->len = 0;
	m->fd = -1;
	m->guard = -1;
	struct stat st;
	int fd = fa_open_regular(path, &st);
	if (fd < 0)
		return fd;
	if (st.st_size == 0) {
		close(fd);
		return 0;
	}
	if ((uint64_t)st.st_size > SIZE_MAX) {
		close(fd);
		return fa_err(FATHOM_ETOOBIG, "%s: too large to map", path);
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		int e = errno;
		close(fd);
		return fa_err(FATHOM_EIO, "%s: mmap: %s", path, strerror(e));
	}
	/* The mapping keeps the file alive; the descriptor is not needed. */
	close(fd);
	m->data = p;
	m->len = (size_t)st.st_size;
	m->guard = fa_guard_add(p, m->len);
	return 0;
}

void fa_unmap(fa_map *m)
{
	/* out of the guard's table first: the range may be reused at once */
	fa_guard_remove(m->guard);
	if (m->data && m->len)
		munmap((void *)m->data, m->len);
	m->data = NULL;
	m->len = 0;
	m->fd = -1;
	m->guard = -1;
}

int fa_map_damaged(const fa_map *m)
{
	return fa_guard_damaged(m->guard);
}

/* Open path for reading if it is a regular file. O_NONBLOCK: opening a
 * FIFO for reading would wait for a writer (forever, holding whatever the
 * caller holds); a FIFO, device or folder is FATHOM_EINVAL. Blocking mode
 * is restored for the read. The descriptor, or a negative code. */
int fa_open_regular(const char *path, struct stat *st)
{
	return fa_open_regular_at(AT_FDCWD, path, st);
}

int fa_open_regular_at(int dfd, const char *path, struct stat *st)
{
	int fd = openat(dfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return fa_err(errno == ENOENT || errno == ENOTDIR ? FATHOM_ENOTFOUND : FATHOM_EIO,
		              "%s: %s", path, strerror(errno));
	int flags;
	if (fstat(fd, st) != 0) {
		int e = errno;
		close(fd);
		return fa_err(FATHOM_EIO, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return fa_err(FATHOM_EINVAL, "%s: not a regular file", path);
	}
	if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
		int e = errno;
		close(fd);
		return fa_err(FATHOM_EIO, "%s: %s", path, strerror(e));
	}
	return fd;
}

static int read_fd(int fd, char **out, size_t *len, const char *path, size_t max);

int fa_read_file(char **out, size_t *len, const char *path, size_t max)
{
	return fa_read_file_within(out, len, path, max, NULL, NULL);
}

int fa_read_file_within(char **out, size_t *len, const char *path, size_t max, const char *root,
                        int *outside)
{
	char rr[PATH_MAX];
	/* a root that cannot be resolved has nothing inside it: "" */
	const char *root_real = !root ? NULL : realpath(root, rr) ? rr : "";
	return fa_read_file_within_real(out, len, path, max, root_real, outside);
}

int fa_read_file_within_real(char **out, size_t *len, const char *path, size_t max,
                             const char *root_real, int *outside)
{
	*out = NULL;
	if (len)
		*len = 0;
	if (outside)
		*outside = 0;
	struct stat st;
	int fd = fa_open_regular(path, &st);
	if (fd < 0)
		return fd;
	if (root_real) {
		/* Judged by the open descriptor, so a link swapped in after any
		 * earlier check cannot lead the read out. No /proc, or a name
		 * too long to be sure of, counts as outside. */
		char real[PATH_MAX];
		if (!*root_real || fa_fd_real_path(fd, real, sizeof real) != 0 ||
		    !fa_real_inside(root_real, real)) {
			close(fd);
			if (outside)
				*outside = 1;
			return fa_err(FATHOM_ENOTFOUND, "%s: not read (its real path lies outside %s)", path,
			              root_real);
		}
	}
	return read_fd(fd, out, len, path, max);
}

/* Read fd (a regular file, opened by the caller) whole, then close it. */
static int read_fd(int fd, char **out, size_t *len, const char *path, size_t max)
{
	fbuf b;
	/* One byte over max lets a too-large file be told from an exact fit. */
	fbuf_init(&b, max < SIZE_MAX - 1 ? max + 1 : max);
	int rc = 0;
	for (;;) {
		size_t room = b.max - b.len;
		size_t want = room < 65536 ? room : 65536;
		if (want == 0) {
			rc = fa_err(FATHOM_ETOOBIG, "%s: larger than %zu bytes", path, max);
			break;
		}
		if ((rc = fbuf_reserve(&b, want)) != 0)
			break;
		ssize_t n = read(fd, b.data + b.len, want);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = fa_err(FATHOM_EIO, "%s: %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
		if (b.len > max) {
			rc = fa_err(FATHOM_ETOOBIG, "%s: larger than %zu bytes", path, max);
			break;
		}
	}
	close(fd);
	if (rc) {
		fbuf_free(&b);
		return rc;
	}
	*out = fbuf_detach(&b, len);
	if (!*out)
		return fa_err(FATHOM_ENOMEM, "out of memory reading %s", path);
	return 0;
}

static int write_all(int fd, const void *data, size_t len, const char *path)
{
	const unsigned char *p = data;
	while (len) {
		ssize_t n = write(fd, p, len > (1u << 30) ? (1u << 30) : len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fa_err(errno == ENOSPC ? FATHOM_EIO : FATHOM_EIO, "%s: write: %s",
			              path, strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fa_write_file_sync(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return fa_err(errno == EEXIST ? FATHOM_EEXISTS : FATHOM_EIO, "%s: %s", path,
		              strerror(errno));
	int rc = write_all(fd, data, len, path);
	if (!rc && fsync(fd) != 0)
		rc = fa_err(FATHOM_EIO, "%s: fsync: %s", path, strerror(errno));
	if (close(fd) != 0 && !rc)
		rc = fa_err(FATHOM_EIO, "%s: close: %s", path, strerror(errno));
	if (rc)
		unlink(path);
	return rc;
}

int fa_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fa_err(FATHOM_EIO, "%s: %s", dir, strerror(errno));
	int rc = 0;
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = fa_err(FATHOM_EIO, "%s: fsync: %s", dir, strerror(errno));
	close(fd);
	return rc;
}

char *fa_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name), n;
	if (fa_add(a, b, &n) || fa_add(n, 2, &n))
		return NULL;
	char *p = fa_malloc(n);
	if (!p)
		return NULL;
	memcpy(p, dir, a);
	size_t o = a;
	if (a && dir[a - 1] != '/')
		p[o++] = '/';
	memcpy(p + o, name, b);
	p[o + b] = '\0';
	return p;
}

int fa_write_atomic(const char *dir, const char *name, const void *data, size_t len)
{
	int renamed;
	return fa_write_atomic_r(dir, name, data, len, &renamed);
}

int fa_write_atomic_r(const char *dir, const char *name, const void *data, size_t len,
                      int *renamed)
{
	*renamed = 0;
	char *path = fa_path_join(dir, name);
	size_t n = strlen(name);
	char *tmpname = fa_malloc(n + 5);
	if (!path || !tmpname) {
		fa_free(path);
		fa_free(tmpname);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	memcpy(tmpname, name, n);
	memcpy(tmpname + n, ".tmp", 5);
	char *tmp = fa_path_join(dir, tmpname);
	fa_free(tmpname);
	if (!tmp) {
		fa_free(path);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	unlink(tmp); /* a leftover of an interrupted write */
	int rc = fa_write_file_sync(tmp, data, len);
	if (!rc && rename(tmp, path) != 0) {
		rc = fa_err(FATHOM_EIO, "rename %s -> %s: %s", tmp, path, strerror(errno));
		unlink(tmp);
	} else if (!rc) {
		*renamed = 1;
		rc = fa_fsync_dir(dir);
	}
	fa_free(tmp);
	fa_free(path);
	return rc;
}

int fa_mkdir_p(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof buf)
		return fa_err(FATHOM_EINVAL, "bad folder path");
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] == '/' || buf[i] == '\0') {
			char c = buf[i];
			buf[i] = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return fa_err(FATHOM_EIO, "mkdir %s: %s", buf, strerror(errno));
			buf[i] = c;
		}
	}
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return fa_err(FATHOM_EIO, "%s: not a folder", path);
	return 0;
}

double fa_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *fa_path_resolve(const char *base, const char *rel)
{
	size_t bl = strlen(base), rl = strlen(rel), n;
	if (fa_add(bl, rl, &n) || fa_add(n, 3, &n))
		return NULL;
	char *out = fa_malloc(n);
	if (!out)
		return NULL;
	/* Components of base then rel, each appended or, for "..", popping the
	 * last one when there is one to pop ("a/.." is "", "/.." is "/"). */
	int abs = rel[0] == '/' || (rel[0] != '/' && base[0] == '/');
	size_t o = 0, kept = 0;   /* kept: components that ".." may pop */
	if (abs)
		out[o++] = '/';
	for (int part = rel[0] == '/' ? 1 : 0; part < 2; part++) {
		const char *p = part == 0 ? base : rel;
		while (*p) {
			while (*p == '/')
				p++;
			const char *e = p;
			while (*e && *e != '/')
				e++;
			size_t cl = (size_t)(e - p);
			if (cl == 0 || (cl == 1 && p[0] == '.')) {
				/* nothing */
			} else if (cl == 2 && p[0] == '.' && p[1] == '.' && (kept > 0 || abs)) {
				if (kept > 0) {
					while (o > (size_t)abs && out[o - 1] != '/')
						o--;
					if (o > (size_t)abs)
						o--;   /* the separator before it */
					kept--;
				}
			} else {
				if (o > (size_t)abs)
					out[o++] = '/';
				memcpy(out + o, p, cl);
				o += cl;
				if (!(cl == 2 && p[0] == '.' && p[1] == '.'))
					kept++;
			}
			p = e;
		}
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	return out;
}
