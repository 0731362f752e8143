/*
 * files.c — where grep's files are and how they are read.
 *
 * Files are read from disk, as they are now: grep never prints a line the
 * file no longer holds. The index only says which files need not be read.
 * A file the index rules out is still read when its size or mtime differ
 * from the index's (it changed since indexing); that check is one stat per
 * file (search.c skips it with opts->no_fresh_check). A file gone from disk
 * is skipped.
 *
 * Document paths are relative to the index's root folder (ix_root) or
 * absolute. A search runs in the user's current folder: PATH arguments are
 * relative to it, and paths are printed as its shell names them.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grep/grep.h"

#define G_MAX_FILE ((size_t)1 << 30)

/* ---- paths -------------------------------------------------------------------- */

char *g_index_path(const char *root, const char *cwd, const char *arg)
{
	char *abs = fa_path_resolve(cwd, arg);
	if (!abs || !*root)
		return abs;   /* no root: files have absolute keys */
	size_t rl = strlen(root);
	char *out = abs;
	if (strcmp(abs, root) == 0)
		out = fa_strdup("");
	else if (strcmp(root, "/") == 0)
		out = fa_strdup(abs + 1);
	else if (strncmp(abs, root, rl) == 0 && abs[rl] == '/')
		out = fa_strdup(abs + rl + 1);
	if (out != abs)
		fa_free(abs);
	return out;
}

int g_scope_init(g_scope *s, const char *root, const fathom_grep_opts *o)
{
	memset(s, 0, sizeof *s);
	s->root = root;
	s->root_fd = AT_FDCWD;
	s->glob = o->glob;
	s->lang = o->lang;
	char cwd[4096];
	if (!getcwd(cwd, sizeof cwd))
		return fa_err(FATHOM_EIO, "cannot tell the current folder: %s", strerror(errno));
	/* PATH arguments are mapped onto keys relative to the root; with no
	 * root, files have absolute keys, and the arguments become absolute
	 * too, so they mean the same files from any current folder */
	const char *keys_root = s->root;
	if (*s->root) {
		s->root_fd = open(s->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
		if (s->root_fd < 0) {
			/* the indexed folder moved: read paths, and take the
			 * arguments, from here */
			s->root = "";
			s->root_fd = AT_FDCWD;
			keys_root = cwd;
		}
	}
	size_t rl = strlen(s->root);
	const char *sub = NULL;   /* outside the root, or no root: none */
	if (*s->root && strcmp(cwd, s->root) == 0)
		sub = "";
	else if (*s->root && strcmp(s->root, "/") == 0)
		sub = cwd + 1;
	else if (*s->root && strncmp(cwd, s->root, rl) == 0 && cwd[rl] == '/')
		sub = cwd + rl + 1;
	if (sub && !(s->sub = fa_strdup(sub)))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	s->prefixes = fa_calloc(o->n_prefixes ? o->n_prefixes : 1, sizeof *s->prefixes);
	if (!s->prefixes)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t i = 0; i < o->n_prefixes; i++) {
		if (!o->prefixes[i] || !*o->prefixes[i])
			return fa_err(FATHOM_EINVAL, "an empty path");
		if (!(s->prefixes[i] = g_index_path(keys_root, cwd, o->prefixes[i])))
			return fa_err(FATHOM_ENOMEM, "out of memory");
		s->nprefixes++;
	}
	return 0;
}

void g_scope_free(g_scope *s)
{
	for (size_t i = 0; i < s->nprefixes; i++)
		fa_free(s->prefixes[i]);
	fa_free(s->prefixes);
	fa_free(s->sub);
	if (s->root_fd >= 0)
		close(s->root_fd);
	memset(s, 0, sizeof *s);
	s->root_fd = -1;
}

int g_scope_has_path(const g_scope *s, const char *path)
{
	if (s->glob && *s->glob) {
		const char *base = strrchr(path, '/');
		if (fnmatch(s->glob, path, 0) != 0 &&
		    (strchr(s->glob, '/') || fnmatch(s->glob, base ? base + 1 : path, 0) != 0))
			return 0;
	}
	if (s->nprefixes) {
		for (size_t i = 0; i < s->nprefixes; i++) {
			const char *pre = s->prefixes[i];
			size_t n = strlen(pre);
			if (n == 0)
				return 1;
			if (strncmp(path, pre, n) == 0 && (path[n] == '\0' || path[n] == '/' || pre[n - 1] == '/'))
				return 1;
		}
		return 0;
	}
	return 1;
}

int g_scope_has_doc(const g_scope *s, const ix_doc_info *di)
{
	if (s->lang && *s->lang && strcasecmp(di->lang, s->lang) != 0)
		return 0;
	return g_scope_has_path(s, di->path && *di->path ? di->path : di->key);
}

/* Relative to the current folder when the file is under it, else absolute
 * (when the index has a root). */
char *g_display_path(const g_scope *s, const char *path)
{
	if (path[0] == '/' || !*s->root || (s->sub && !*s->sub))
		return fa_strdup(path);
	size_t sl = s->sub ? strlen(s->sub) : 0;
	if (s->sub && strncmp(path, s->sub, sl) == 0 && path[sl] == '/')
		return fa_strdup(path + sl + 1);
	return fa_path_resolve(s->root, path);
}

/* ---- reading files ------------------------------------------------------------- */

void g_reader_init(g_reader *r, const g_scope *s)
{
	memset(r, 0, sizeof *r);
	r->scope = s;
	r->dfd = -1;
}

void g_reader_free(g_reader *r)
{
	if (r->dfd >= 0 && r->dfd != r->scope->root_fd)
		close(r->dfd);
	r->dfd = -1;
	fa_free(r->buf);
	r->buf = NULL;
	r->buf_cap = 0;
}

/* The handle is kept while the next file is in the same folder, as files
 * of one folder follow each other in a segment. */
int g_reader_dir(g_reader *r, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	*name = slash ? slash + 1 : path;
	if (slash && dl == 0)
		dl = 1;   /* "/x": the root folder */
	if (dl >= sizeof r->dir)
		return -1;
	if (r->have_dir && dl == r->dlen && memcmp(r->dir, path, dl) == 0)
		return r->dfd;
	if (r->dfd >= 0 && r->dfd != r->scope->root_fd)
		close(r->dfd);
	r->have_dir = 1;
	memcpy(r->dir, path, dl);
	r->dir[dl] = '\0';
	r->dlen = dl;
	if (dl == 0)
		r->dfd = r->scope->root_fd;
	else
		r->dfd = openat(r->scope->root_fd, r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_PATH);
	return r->dfd;
}

/* Open an indexed file to read: the descriptor, its size, and whether it
 * changed since indexing; -1 gone; -2 there but not to be read (not a
 * regular file, unreadable, over G_MAX_FILE: r->why says why). Opened by
 * fa_open_regular_at: a FIFO put in a file's place never stops the search. */
static int open_file(g_reader *r, int dfd, const char *name, const ix_doc_info *di,
                     uint64_t *size, int *changed)
{
	struct stat st;
	int fd = fa_open_regular_at(dfd, name, &st);
	if (fd < 0) {
		const char *m = fathom_errmsg();
		size_t nl = strlen(name);
		if (strncmp(m, name, nl) == 0 && m[nl] == ':' && m[nl + 1] == ' ')
			m += nl + 2;   /* the reason alone: the caller names the file */
		if (fd == FATHOM_ENOTFOUND)
			fd = -1;
		else if (fd == FATHOM_EINVAL)
			snprintf(r->why, sizeof r->why, "not a regular file: not searched");
		else
			snprintf(r->why, sizeof r->why, "%s", m);
		fa_err_clear();
		return fd == -1 ? -1 : -2;
	}
	if ((uint64_t)st.st_size > G_MAX_FILE) {
		close(fd);
		snprintf(r->why, sizeof r->why, "larger than %zu MiB: not searched", G_MAX_FILE >> 20);
		return -2;
	}
	if (r->scope->confine) {
		/* asked of the open file: a link swapped in since is what counts */
		char real[PATH_MAX];
		if (fa_fd_real_path(fd, real, sizeof real) != 0 || !fa_real_inside(r->scope->confine, real)) {
			close(fd);
			snprintf(r->why, sizeof r->why, "outside the index's root folder: not read");
			return -2;
		}
	}
	*size = (uint64_t)st.st_size;
	*changed = ix_stat_changed(&st, di->size, di->mtime_ns);
	return fd;
}

/* A .gz file is searched as the text it holds, as it was indexed: r->buf
 * replaced by its decompression (at most G_MAX_FILE bytes). 1, or 2 with
 * r->why when it does not decompress. */
static int gunzip_buf(g_reader *r, size_t *len)
{
	char *out;
	size_t out_len;
	int rc = fa_gunzip(&out, &out_len, r->buf, *len, G_MAX_FILE);
	if (rc == FATHOM_ENOMEM)
		return rc;
	if (rc) {
		snprintf(r->why, sizeof r->why, "%s: not searched",
		         rc == FATHOM_ETOOBIG ? "decompresses to more than 1 GiB" : fathom_errmsg());
		fa_err_clear();
		return 2;
	}
	fa_free(r->buf);
	r->buf = out;
	r->buf_cap = out_len + 1;
	*len = out_len;
	return 1;
}

int g_read_file(g_reader *r, int dfd, const char *name, const ix_doc_info *di, size_t *len,
                int *changed)
{
	uint64_t size;
	int fd = open_file(r, dfd, name, di, &size, changed);
	if (fd < 0)
		return fd == -1 ? 0 : 2;
	size_t want = (size_t)size + 1, n = 0;
	for (;;) {
		if (want > r->buf_cap) {
			char *nb = fa_realloc(r->buf, want);
			if (!nb) {
				close(fd);
				return fa_err(FATHOM_ENOMEM, "out of memory reading %s", di->key);
			}
			r->buf = nb;
			r->buf_cap = want;
		}
		ssize_t got = read(fd, r->buf + n, r->buf_cap - n);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			snprintf(r->why, sizeof r->why, "read error: %s", strerror(errno));
			close(fd);
			return 2;
		}
		if (got == 0)
			break;
		n += (size_t)got;
		if (n == r->buf_cap) {   /* it grew while we read */
			if (n >= G_MAX_FILE)
				break;
			want = n * 2;
		}
	}
	close(fd);
	*len = n;
	return fa_gz_name(name) ? gunzip_buf(r, len) : 1;
}

#define G_PIECE (64u << 10)
#define G_FIRST_PIECE (8u << 10)

int g_read_first_match(g_reader *r, int dfd, const char *name, const ix_doc_info *di,
                       g_matcher *m, const g_regex *re, g_lines *line, size_t *len,
                       int *changed, int *found)
{
	*found = 0;
	if (fa_gz_name(name)) {
		/* compressed: decompressed whole, then scanned */
		int rc = g_read_file(r, dfd, name, di, len, changed);
		if (rc != 1)
			return rc;
		line->n = 0;
		rc = g_scan(m, re, r->buf, *len, 0, 1, line);
		*found = line->n > 0;
		return rc ? rc : 1;
	}
	uint64_t size;
	int fd = open_file(r, dfd, name, di, &size, changed);
	if (fd < 0)
		return fd == -1 ? 0 : 2;
	size_t n = 0, scanned = 0;
	int eof = 0, rc = 0;
	line->n = 0;
	while (!eof) {
		if (n + G_PIECE + 1 > r->buf_cap) {
			size_t want = r->buf_cap ? r->buf_cap * 2 : 2 * G_PIECE;
			while (want < n + G_PIECE + 1)
				want *= 2;
			char *nb = fa_realloc(r->buf, want);
			if (!nb) {
				rc = fa_err(FATHOM_ENOMEM, "out of memory reading %s", di->key);
				break;
			}
			r->buf = nb;
			r->buf_cap = want;
		}
		/* a small first piece: most files that match, match early */
		ssize_t got = read(fd, r->buf + n, n ? G_PIECE : G_FIRST_PIECE);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(r->why, sizeof r->why, "read error: %s", strerror(errno));
			close(fd);
			return 2;
		}
		if (got == 0 || n + (size_t)got >= G_MAX_FILE)
			eof = 1;
		if (got > 0)
			n += (size_t)got;
		/* the whole lines read so far (all of it at the end) */
		size_t complete = n;
		if (!eof) {
			const char *nl = memrchr(r->buf + scanned, '\n', n - scanned);
			complete = nl ? (size_t)(nl - r->buf) + 1 : scanned;
		}
		if (complete > scanned) {
			rc = g_scan(m, re, r->buf, complete, scanned, 1, line);
			if (rc || line->n) {
				*found = line->n > 0;
				break;
			}
			scanned = complete;
		}
	}
	close(fd);
	*len = n;
	return rc ? rc : 1;
}
