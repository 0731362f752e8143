/*
 * walk.c — finding the files to index under a root folder.
 *
 * The walk is depth-first, and within each folder entries are visited in
 * strcmp order of their names, so two walks of an unchanged tree report the
 * same paths in the same order. Each folder is listed once into a buffer
 * that belongs to its depth (reused by every folder at that depth, so a
 * walk allocates nothing per file), sorted, and its ignore files are read
 * once before its entries are visited.
 *
 * Skipped, and reported through on_skip with a reason:
 *  - version-control folders (.git, .hg, ...): FATHOM_SKIP_VCS;
 *  - what ignore rules exclude: FATHOM_SKIP_IGNORED, once for a whole
 *    folder (its contents are not visited, so nothing inside can be
 *    re-included, as in git);
 *  - regular files over max_file_size: FATHOM_SKIP_TOO_BIG;
 *  - sockets, fifos, devices, and links when links are not followed:
 *    FATHOM_SKIP_SPECIAL;
 *  - a folder reached again through a link, whether it is an ancestor
 *    (a loop) or one already walked (a file would be indexed twice):
 *    FATHOM_SKIP_SYMLINK_LOOP;
 *  - broken links, folders that cannot be opened: FATHOM_SKIP_UNREADABLE;
 *  - paths over PATH_MAX and folders deeper than WALK_MAX_DEPTH:
 *    FATHOM_SKIP_TOO_DEEP;
 *  - when the walk is confined to a folder (a daemon serving it): a root
 *    or a followed link whose real path lies outside that folder:
 *    FATHOM_SKIP_OUTSIDE_ROOT. Entries that are no links lie where their
 *    folder does, so only the root and links need resolving; a linked
 *    folder is judged by the descriptor it was opened as, so a link
 *    swapped after the check cannot lead the walk out.
 * Hidden files are not skipped.
 *
 * Ignore rules come from .gitignore, .ignore and .fathomignore in every
 * folder (later files and deeper folders win) and .git/info/exclude at the
 * top of a repository. When the root is a folder inside a repository, the
 * ignore files from the repository's top down to the root apply as well,
 * as they would for git run in that folder.
 *
 * Folders are opened relative to their parent's descriptor (openat,
 * fstatat), which saves resolving the whole path for every entry.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ingest/ingest.h"

#define WALK_MAX_DEPTH 256
/* Ignore files larger than this are read only up to their last full line
 * before it: a pattern file this large is a mistake, not a reason to stop. */
#define WALK_MAX_IGNORE_FILE (4u << 20)
#define WALK_MAX_SETS 4

typedef struct walk_level {
	int fd;                    /* the folder, open while it is walked */
	uint64_t dev, ino;         /* for the loop check of deeper folders */
	size_t path_len;           /* length of the folder's path in w->path */
	char *names;               /* entry names, NUL-terminated, back to back */
	size_t names_len, names_cap;
	char **sorted;             /* pointers into names, in strcmp order */
	size_t n, sorted_cap;
	gi_set *sets[WALK_MAX_SETS]; /* its ignore files, lowest precedence first */
	int n_sets;
} walk_level;

typedef struct walk_dev_ino {
	uint64_t dev, ino;
	int used;
} walk_dev_ino;

typedef struct walker {
	const walk_opts *o;
	char path[PATH_MAX];       /* root + "/" + rel of the entry being visited */
	size_t rel_start;          /* where rel begins in path */
	walk_level *levels;        /* WALK_MAX_DEPTH + 1 of them */
	walk_dev_ino *seen;        /* every folder walked: an open-addressing set */
	size_t seen_cap, seen_count;
	fbuf scratch;              /* ignore file contents */
	/* When the root lies inside a repository whose top is above it, the
	 * ignore files from that top down to the root's parent apply too, and
	 * every rule is matched against the path from the top: mpath holds
	 * prefix + "/" + rel, prefix being the root's path from the top. */
	gi_set **outer;            /* those files' rules, top first */
	size_t n_outer, outer_cap;
	size_t prefix_len;         /* 0 when the root is the top (or no repo) */
	char mpath[PATH_MAX];
	char confine[PATH_MAX];    /* the real path of o->confine; "": not confined */
} walker;

/* ---- small pieces ------------------------------------------------------------ */

int walk_is_vcs_dir(const char *name)
{
	static const char *const vcs[] = {
		".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj", ".pijul",
		".fossil-settings"
	};
	if (!name)
		return 0;
	for (size_t i = 0; i < FA_ARRAY_LEN(vcs); i++)
		if (strcmp(name, vcs[i]) == 0)
			return 1;
	return 0;
}

/* Length of the valid UTF-8 sequence at p[0..n), 0 when invalid, or -1
 * when the bytes are a valid start cut short by n. */
static int utf8_seq_len(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	int len;
	unsigned char lo = 0x80, hi = 0xBF; /* allowed range of the 2nd byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF) {
		len = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		len = 3;
		if (c == 0xE0)
			lo = 0xA0;     /* no overlong forms */
		else if (c == 0xED)
			hi = 0x9F;     /* no surrogates */
	} else if (c >= 0xF0 && c <= 0xF4) {
		len = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;     /* nothing past U+10FFFF */
	} else {
		return 0;
	}
	for (int i = 1; i < len; i++) {
		if ((size_t)i >= n)
			return -1;
		unsigned char b = p[i];
		unsigned char min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
		if (b < min || b > max)
			return 0;
	}
	return len;
}

int walk_looks_binary(const unsigned char *data, size_t n)
{
	if (!data || n == 0)
		return 0;
	if (n > 8192)
		n = 8192;
	/* UTF-16 with a byte-order mark: text, but not text we can index yet. */
	if (n >= 2 && ((data[0] == 0xFF && data[1] == 0xFE) || (data[0] == 0xFE && data[1] == 0xFF)))
		return 1;
	if (memchr(data, 0, n))
		return 1;
	size_t bad = 0, i = 0;
	while (i < n) {
		unsigned char c = data[i];
		if (c < 0x80) {
			if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' &&
			     c != '\v' && c != 0x1B) || c == 0x7F)
				bad++;
			i++;
			continue;
		}
		int len = utf8_seq_len(data + i, n - i);
		if (len < 0)
			break; /* a character cut by the sniff window, not a fault */
		if (len == 0) {
			bad++;
			i++;
		} else {
			i += (size_t)len;
		}
	}
	return bad * 10 > n;
}

/* ---- the set of folders already walked -------------------------------------- */

static size_t dev_ino_slot(uint64_t dev, uint64_t ino, size_t cap)
{
	uint64_t h = (ino * 0x9E3779B97F4A7C15ull) ^ (dev * 0xC2B2AE3D27D4EB4Full);
	h ^= h >> 29;
	return (size_t)(h & (cap - 1));
}

/* Add (dev, ino); 1 if it was there already, 0 if added, <0 on error. */
static int seen_add(walker *w, uint64_t dev, uint64_t ino)
{
	if ((w->seen_count + 1) * 2 > w->seen_cap) {
		size_t ncap = w->seen_cap ? w->seen_cap * 2 : 256;
		if (ncap > SIZE_MAX / sizeof *w->seen)
			return fa_err(FATHOM_ENOMEM, "walk: too many folders");
		walk_dev_ino *ns = fa_calloc(ncap, sizeof *ns);
		if (!ns)
			return fa_err(FATHOM_ENOMEM, "walk: out of memory");
		for (size_t i = 0; i < w->seen_cap; i++) {
			if (!w->seen[i].used)
				continue;
			size_t j = dev_ino_slot(w->seen[i].dev, w->seen[i].ino, ncap);
			while (ns[j].used)
				j = (j + 1) & (ncap - 1);
			ns[j] = w->seen[i];
		}
		fa_free(w->seen);
		w->seen = ns;
		w->seen_cap = ncap;
	}
	size_t j = dev_ino_slot(dev, ino, w->seen_cap);
	while (w->seen[j].used) {
		if (w->seen[j].dev == dev && w->seen[j].ino == ino)
			return 1;
		j = (j + 1) & (w->seen_cap - 1);
	}
	w->seen[j].dev = dev;
	w->seen[j].ino = ino;
	w->seen[j].used = 1;
	w->seen_count++;
	return 0;
}

/* ---- listing a folder ---------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Read the names in lv->fd into lv->names and sort them. */
static int list_folder(walk_level *lv)
{
	lv->names_len = 0;
	lv->n = 0;
	int dfd = dup(lv->fd);
	if (dfd < 0)
		return fa_err(FATHOM_EIO, "dup: %s", strerror(errno));
	DIR *d = fdopendir(dfd);
	if (!d) {
		int e = errno;
		close(dfd);
		return fa_err(FATHOM_EIO, "fdopendir: %s", strerror(e));
	}
	int rc = 0;
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(d);
		if (!de) {
			if (errno)
				rc = fa_err(FATHOM_EIO, "readdir: %s", strerror(errno));
			break;
		}
		const char *nm = de->d_name;
		if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0')))
			continue;
		size_t len = strlen(nm), need;
		if (fa_add(lv->names_len, len + 1, &need)) {
			rc = fa_err(FATHOM_ENOMEM, "walk: folder listing too large");
			break;
		}
		rc = fa_grow((void **)&lv->names, &lv->names_cap, need, 1);
		if (rc)
			break;
		memcpy(lv->names + lv->names_len, nm, len + 1);
		lv->names_len = need;
		lv->n++;
	}
	closedir(d);
	if (rc)
		return rc;
	rc = fa_grow((void **)&lv->sorted, &lv->sorted_cap, lv->n, sizeof *lv->sorted);
	if (rc)
		return rc;
	char *p = lv->names;
	for (size_t i = 0; i < lv->n; i++) {
		lv->sorted[i] = p;
		p += strlen(p) + 1;
	}
	if (lv->n > 1)
		qsort(lv->sorted, lv->n, sizeof *lv->sorted, cmp_names);
	return 0;
}

static int has_name(const walk_level *lv, const char *name)
{
	size_t lo = 0, hi = lv->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(lv->sorted[mid], name);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* ---- ignore files ------------------------------------------------------------------ */

/* Read dirfd/name into w->scratch; 1 when read, 0 when absent or unreadable
 * (an ignore file we cannot read is as good as none), FATHOM_ENOMEM when
 * there is no memory to read it: that must not pass for "no rules". */
static int read_small_file(walker *w, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	fbuf_reset(&w->scratch);
	int ok = 1;
	for (;;) {
		size_t room = WALK_MAX_IGNORE_FILE - w->scratch.len;
		if (room == 0)
			break;
		if (fbuf_reserve(&w->scratch, FA_MIN(room, (size_t)65536)) != 0) {
			ok = FATHOM_ENOMEM;
			break;
		}
		ssize_t got = read(fd, w->scratch.data + w->scratch.len,
		                   FA_MIN(room, w->scratch.cap - w->scratch.len));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ok = 0;
			break;
		}
		if (got == 0)
			break;
		w->scratch.len += (size_t)got;
	}
	close(fd);
	if (ok == 1 && w->scratch.len == WALK_MAX_IGNORE_FILE) {
		/* Cut back to the last full line. */
		while (w->scratch.len && w->scratch.data[w->scratch.len - 1] != '\n')
			w->scratch.len--;
	}
	return ok;
}

/* The ignore files a folder may hold, lowest precedence first, after
 * .git/info/exclude (only at the top of a repository). */
static const char *const ignore_files[WALK_MAX_SETS - 1] = {
	".gitignore", ".ignore", ".fathomignore"
};

static int load_ignore_sets(walker *w, walk_level *lv, const char *base)
{
	const char *const *files = ignore_files;
	lv->n_sets = 0;
	for (size_t i = 0; i < WALK_MAX_SETS; i++) {
		/* .git/info/exclude ranks below the repository's .gitignore files. */
		const char *name = i == 0 ? ".git/info/exclude" : files[i - 1];
		if (!has_name(lv, i == 0 ? ".git" : name))
			continue;
		int got = read_small_file(w, lv->fd, name);
		if (got < 0)
			return got;
		if (got == 0)
			continue;
		int rc = gi_parse(&lv->sets[lv->n_sets], (const char *)w->scratch.data,
		                  w->scratch.len, base);
		if (rc)
			return rc;
		lv->n_sets++;
	}
	return 0;
}

static void free_ignore_sets(walk_level *lv)
{
	for (int i = 0; i < lv->n_sets; i++)
		gi_free(lv->sets[i]);
	lv->n_sets = 0;
}

/* The path the rules see: rel, or prefix + "/" + rel inside a repository
 * whose top is above the root. NULL when that would not fit. */
static const char *match_path(walker *w, const char *rel)
{
	if (w->prefix_len == 0)
		return rel;
	size_t len = strlen(rel);
	if (w->prefix_len + 1 + len >= sizeof w->mpath)
		return NULL;
	w->mpath[w->prefix_len] = '/';
	memcpy(w->mpath + w->prefix_len + 1, rel, len + 1);
	return w->mpath;
}

/* Deeper ignore files override shallower ones; within a folder, later
 * files and later lines win. */
static int is_ignored(walker *w, size_t depth, const char *rel, int is_dir)
{
	const char *path = match_path(w, rel);
	if (!path)
		return 0;
	for (size_t d = depth + 1; d-- > 0;) {
		const walk_level *lv = &w->levels[d];
		for (int i = lv->n_sets; i-- > 0;) {
			int r = gi_match(lv->sets[i], path, is_dir);
			if (r)
				return r > 0;
		}
	}
	for (size_t i = w->n_outer; i-- > 0;) {
		int r = gi_match(w->outer[i], path, is_dir);
		if (r)
			return r > 0;
	}
	return w->o->extra && gi_match(w->o->extra, rel, is_dir) > 0;
}

static int add_outer_set(walker *w, const char *base)
{
	int rc = fa_grow((void **)&w->outer, &w->outer_cap, w->n_outer + 1, sizeof *w->outer);
	if (rc)
		return rc;
	rc = gi_parse(&w->outer[w->n_outer], (const char *)w->scratch.data, w->scratch.len, base);
	if (rc)
		return rc;
	w->n_outer++;
	return 0;
}

/* Find the top of the repository holding root (the nearest folder above it
 * with a .git entry) and load the ignore files from there down to root's
 * parent. Outside a repository nothing above root counts, as in git. */
static int load_outer_rules(walker *w, const char *root)
{
	const char *const *files = ignore_files;
	char abs[PATH_MAX], probe[PATH_MAX];
	if (!realpath(root, abs))
		return 0;
	size_t len = strlen(abs), top = len;
	for (;;) {
		/* abs[0, top) is a candidate: "" stands for "/". */
		int n = snprintf(probe, sizeof probe, "%.*s/.git", (int)top, abs);
		struct stat st;
		if (n > 0 && (size_t)n < sizeof probe && lstat(probe, &st) == 0)
			break;
		if (top == 0)
			return 0;
		while (top > 0 && abs[top - 1] != '/')
			top--;
		if (top > 0)
			top--; /* drop the '/' too */
	}
	if (top == len)
		return 0; /* root is the top of its repository */
	/* The root's path from the top, e.g. "src/lib". */
	const char *prefix = abs + top + 1;
	w->prefix_len = len - top - 1;
	memcpy(w->mpath, prefix, w->prefix_len + 1);
	/* Folders from the top down: each is abs[0, end) with its path from
	 * the top being abs[top + 1, end). */
	for (size_t end = top;;) {
		const char *base = end > top ? abs + top + 1 : "";
		size_t base_len = end > top ? end - top - 1 : 0;
		char base_copy[PATH_MAX];
		memcpy(base_copy, base, base_len);
		base_copy[base_len] = '\0';
		for (size_t i = end == top ? 0 : 1; i < WALK_MAX_SETS; i++) {
			const char *name = i == 0 ? ".git/info/exclude" : files[i - 1];
			int n = snprintf(probe, sizeof probe, "%.*s/%s", (int)end, abs, name);
			if (n <= 0 || (size_t)n >= sizeof probe)
				continue;
			int got = read_small_file(w, AT_FDCWD, probe);
			if (got < 0)
				return got;
			if (got > 0 && (got = add_outer_set(w, base_copy)) != 0)
				return got;
		}
		/* Next folder down, stopping before the root itself. */
		size_t next = end + 1;
		while (next < len && abs[next] != '/')
			next++;
		if (next >= len)
			break;
		end = next;
	}
	return 0;
}

/* ---- the walk ----------------------------------------------------------------------- */

static void skip(const walker *w, int reason)
{
	if (w->o->on_skip)
		w->o->on_skip(w->o->ctx, w->path, reason);
}

/* ---- confinement: real paths against the confining folder's ------------------------------ */

/* Does path, every link in it resolved, lie inside? One that cannot be
 * resolved does not. */
static int path_inside(const walker *w, const char *path)
{
	char real[PATH_MAX];
	return realpath(path, real) != NULL && fa_real_inside(w->confine, real);
}

/* Does the folder open at fd lie inside? Asked of the descriptor, so a
 * link changed since it was opened does not matter. */
static int fd_inside(const walker *w, int fd)
{
	char real[PATH_MAX];
	if (fa_fd_real_path(fd, real, sizeof real) != 0)
		return path_inside(w, w->path);   /* no /proc: by the path */
	return fa_real_inside(w->confine, real);
}

static int64_t mtime_ns(const struct stat *st)
{
	/* Clamped: a file stamped past the year 2262 must not overflow. */
	const int64_t lim = INT64_MAX / 1000000000 - 1;
	int64_t sec = (int64_t)st->st_mtim.tv_sec;
	if (sec > lim)
		sec = lim;
	if (sec < -lim)
		sec = -lim;
	return sec * 1000000000 + (int64_t)st->st_mtim.tv_nsec;
}

static int visit_file(walker *w, const struct stat *st)
{
	if (w->o->max_file_size && (uint64_t)st->st_size > w->o->max_file_size) {
		skip(w, FATHOM_SKIP_TOO_BIG);
		return 0;
	}
	if (!w->o->on_file)
		return 0;
	walk_entry e;
	e.path = w->path;
	e.size = (uint64_t)st->st_size;
	e.mtime_ns = mtime_ns(st);
	e.dev = (uint64_t)st->st_dev;
	e.ino = (uint64_t)st->st_ino;
	return w->o->on_file(w->o->ctx, &e);
}

static int walk_folder(walker *w, size_t depth);

/* The folder entry `name` of level depth, already known to be a folder
 * (possibly through a link): open it, check for loops, walk it. */
static int enter_folder(walker *w, size_t depth, const char *name, int via_link)
{
	if (depth + 1 > WALK_MAX_DEPTH) {
		skip(w, FATHOM_SKIP_TOO_DEEP);
		return 0;
	}
	walk_level *parent = &w->levels[depth];
	int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | (via_link ? 0 : O_NOFOLLOW);
	int fd = openat(parent->fd, name, flags);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		skip(w, FATHOM_SKIP_UNREADABLE);
		return 0;
	}
	if (via_link && *w->confine && !fd_inside(w, fd)) {
		close(fd);
		skip(w, FATHOM_SKIP_OUTSIDE_ROOT);
		return 0;
	}
	uint64_t dev = (uint64_t)st.st_dev, ino = (uint64_t)st.st_ino;
	int loop = 0;
	for (size_t d = 0; d <= depth; d++)
		if (w->levels[d].dev == dev && w->levels[d].ino == ino)
			loop = 1;
	int rc = loop ? 1 : seen_add(w, dev, ino);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	if (rc == 1) {
		close(fd);
		skip(w, FATHOM_SKIP_SYMLINK_LOOP);
		return 0;
	}
	walk_level *lv = &w->levels[depth + 1];
	lv->fd = fd;
	lv->dev = dev;
	lv->ino = ino;
	lv->path_len = strlen(w->path);
	rc = walk_folder(w, depth + 1);
	close(lv->fd);
	lv->fd = -1;
	return rc;
}

static int visit_entry(walker *w, size_t depth, const char *name)
{
	const walk_opts *o = w->o;
	walk_level *lv = &w->levels[depth];
	struct stat st;
	if (fstatat(lv->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		skip(w, FATHOM_SKIP_UNREADABLE);
		return 0;
	}
	if ((S_ISDIR(st.st_mode) && walk_is_vcs_dir(name)) || strcmp(name, ".git") == 0) {
		/* A ".git" file is a worktree or submodule link: VCS data too. */
		skip(w, FATHOM_SKIP_VCS);
		return 0;
	}
	int is_link = S_ISLNK(st.st_mode), link_ok = 1;
	if (is_link && o->follow_symlinks)
		link_ok = fstatat(lv->fd, name, &st, 0) == 0;
	int is_dir = link_ok && S_ISDIR(st.st_mode) && (!is_link || o->follow_symlinks);
	if (o->use_gitignore && is_ignored(w, depth, w->path + w->rel_start, is_dir)) {
		skip(w, FATHOM_SKIP_IGNORED);
		return 0;
	}
	if (is_link && !o->follow_symlinks) {
		skip(w, FATHOM_SKIP_SPECIAL);
		return 0;
	}
	if (!link_ok) {
		skip(w, FATHOM_SKIP_UNREADABLE);
		return 0;
	}
	/* A linked folder is judged once it is open (enter_folder). */
	if (is_link && !is_dir && *w->confine && !path_inside(w, w->path)) {
		skip(w, FATHOM_SKIP_OUTSIDE_ROOT);
		return 0;
	}
	if (is_dir && o->has_skip_dir && (uint64_t)st.st_dev == o->skip_dev &&
	    (uint64_t)st.st_ino == o->skip_ino)
		return 0;   /* the index's own folder: not part of the tree, not a skip */
	if (is_dir)
		return enter_folder(w, depth, name, is_link);
	if (S_ISREG(st.st_mode))
		return visit_file(w, &st);
	skip(w, FATHOM_SKIP_SPECIAL);
	return 0;
}

/* Walk the folder open at levels[depth]; its path is w->path. */
static int walk_folder(walker *w, size_t depth)
{
	walk_level *lv = &w->levels[depth];
	int rc = list_folder(lv);
	if (rc) {
		/* Below the root an unreadable folder is a skip; the root itself
		 * failing is the caller's error. */
		if (depth == 0)
			return fa_err_wrap(rc, "%s", w->path[0] ? w->path : "/");
		skip(w, FATHOM_SKIP_UNREADABLE);
		return rc == FATHOM_ENOMEM ? rc : 0;
	}
	if (w->o->use_gitignore) {
		/* The folder relative to the root: its path past rel_start. */
		const char *rel = lv->path_len > w->rel_start ? w->path + w->rel_start : "";
		const char *base = rel;
		if (w->prefix_len && *rel) {
			base = match_path(w, rel);
		} else if (w->prefix_len) {
			w->mpath[w->prefix_len] = '\0'; /* the root: the prefix alone */
			base = w->mpath;
		}
		/* A folder whose path is too long to match against has its ignore
		 * files left out rather than misapplied. */
		rc = base ? load_ignore_sets(w, lv, base) : 0;
		if (rc) {
			free_ignore_sets(lv);
			return rc;
		}
	}
	for (size_t i = 0; i < lv->n && rc == 0; i++) {
		const char *name = lv->sorted[i];
		size_t len = strlen(name);
		if (lv->path_len + 1 + len >= sizeof w->path) {
			w->path[lv->path_len] = '\0';
			skip(w, FATHOM_SKIP_TOO_DEEP);
			continue;
		}
		w->path[lv->path_len] = '/';
		memcpy(w->path + lv->path_len + 1, name, len + 1);
		rc = visit_entry(w, depth, name);
	}
	w->path[lv->path_len] = '\0';
	free_ignore_sets(lv);
	return rc;
}

static int walk_single_file(walker *w, const char *root, const struct stat *st)
{
	size_t len = strlen(root);
	if (len >= sizeof w->path)
		return fa_err(FATHOM_EINVAL, "path too long: %.64s...", root);
	memcpy(w->path, root, len + 1);
	if (S_ISREG(st->st_mode))
		return visit_file(w, st);
	skip(w, FATHOM_SKIP_SPECIAL);
	return 0;
}

int walk_tree(const char *root, const walk_opts *opts)
{
	if (!root || !*root || !opts)
		return fa_err(FATHOM_EINVAL, "walk_tree: no root");
	walker *w = fa_calloc(1, sizeof *w);
	if (!w)
		return fa_err(FATHOM_ENOMEM, "walk: out of memory");
	w->o = opts;
	fbuf_init(&w->scratch, WALK_MAX_IGNORE_FILE + 1);
	int rc = 0, fd = -1;
	struct stat st;
	if (stat(root, &st) != 0) {
		rc = fa_err(errno == ENOENT ? FATHOM_ENOTFOUND : FATHOM_EIO, "%s: %s", root,
		            strerror(errno));
		goto cleanup;
	}
	if (opts->confine) {
		if (!realpath(opts->confine, w->confine)) {
			rc = fa_err(FATHOM_EIO, "%s: %s", opts->confine, strerror(errno));
			goto cleanup;
		}
		/* The root itself, through whatever links its path holds. */
		if (!path_inside(w, root)) {
			snprintf(w->path, sizeof w->path, "%s", root);
			skip(w, FATHOM_SKIP_OUTSIDE_ROOT);
			goto cleanup;
		}
	}
	if (!S_ISDIR(st.st_mode)) {
		rc = walk_single_file(w, root, &st);
		goto cleanup;
	}
	/* The root's path without trailing slashes; entries are root + "/" +
	 * rel ("/" itself becomes "", so entries read "/etc"). */
	size_t len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	if (len + 2 >= sizeof w->path) {
		rc = fa_err(FATHOM_EINVAL, "path too long: %.64s...", root);
		goto cleanup;
	}
	memcpy(w->path, root, len);
	w->path[len] = '\0';
	w->rel_start = len + 1;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = fa_err(FATHOM_EIO, "%s: %s", root, strerror(errno));
		goto cleanup;
	}
	w->levels = fa_calloc(WALK_MAX_DEPTH + 1, sizeof *w->levels);
	if (!w->levels) {
		rc = fa_err(FATHOM_ENOMEM, "walk: out of memory");
		goto cleanup;
	}
	for (size_t d = 0; d <= WALK_MAX_DEPTH; d++)
		w->levels[d].fd = -1;
	w->levels[0].fd = fd;
	w->levels[0].dev = (uint64_t)st.st_dev;
	w->levels[0].ino = (uint64_t)st.st_ino;
	w->levels[0].path_len = len;
	rc = seen_add(w, (uint64_t)st.st_dev, (uint64_t)st.st_ino);
	if (rc >= 0 && opts->use_gitignore)
		rc = load_outer_rules(w, root);
	if (rc >= 0)
		rc = walk_folder(w, 0);
cleanup:
	if (fd >= 0)
		close(fd);
	if (w->levels) {
		for (size_t d = 0; d <= WALK_MAX_DEPTH; d++) {
			fa_free(w->levels[d].names);
			fa_free(w->levels[d].sorted);
		}
		fa_free(w->levels);
	}
	fa_free(w->seen);
	for (size_t i = 0; i < w->n_outer; i++)
		gi_free(w->outer[i]);
	fa_free(w->outer);
	fbuf_free(&w->scratch);
	fa_free(w);
	return rc;
}
