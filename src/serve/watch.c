/*
 * watch.c — keeping an index current as files change (inotify).
 *
 * Every folder under the watched paths gets a watch (inotify watches one
 * folder, not a tree); a folder created later gets one as its creation is
 * seen. Version-control folders (those the walker skips: fathom_skips_folder)
 * and the index's own folder are never watched: the index's own commits
 * would otherwise wake the watcher forever.
 *
 * Changes are debounced: the first event opens a batch, and the batch is
 * applied when the tree has been quiet for `debounce` seconds, or `max_wait`
 * after its first event when changes keep coming. Applying is the caller's
 * (fathom index --watch, fathom serve --watch): an incremental index run
 * over the same paths, which reads only files whose size or mtime changed
 * and removes the ones that are gone, so the result is what a `fathom
 * index` run at that moment would give, .gitignore rules included.
 *
 * The delay of a batch, from its first event to the end of its commit, is
 * what a search may lag behind the disk; it is counted in /metrics.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/serve.h"

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | \
                    IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
#define WATCH_MAX_DEPTH 64

struct sv_watch {
	int fd;
	char **path;            /* by watch descriptor; NULL: free */
	size_t npath;
	size_t nwatched;
	uint64_t skip_dev, skip_ino;   /* the index's folder */
	int has_skip;
	int full;               /* the watch limit was hit (reported once) */
	char *err;
	size_t errlen;
};

static int add_one(sv_watch *w, const char *dir)
{
	int wd = inotify_add_watch(w->fd, dir, WATCH_MASK);
	if (wd < 0) {
		if (errno == ENOSPC && !w->full) {
			w->full = 1;
			fprintf(stderr, "fathom watch: the inotify watch limit is reached at %zu folders; "
			                "changes below %s are not seen (raise "
			                "/proc/sys/fs/inotify/max_user_watches)\n", w->nwatched, dir);
		}
		return errno == ENOSPC || errno == ENOENT || errno == EACCES || errno == ENOTDIR ? 0 : -1;
	}
	if ((size_t)wd >= w->npath) {
		size_t n = (size_t)wd * 2 + 16;
		char **p = fathom_realloc(w->path, n * sizeof *p);
		if (!p)
			return -1;
		memset(p + w->npath, 0, (n - w->npath) * sizeof *p);
		w->path = p;
		w->npath = n;
	}
	if (!w->path[wd]) {
		if (!(w->path[wd] = sv_strdup(dir)))
			return -1;
		w->nwatched++;
	}
	return 0;
}

/* Watch dir and every folder under it (links are not followed: a linked
 * folder's changes show up at the next batch another change opens, and
 * fathom serve --watch confines that batch's walk to the index's root). */
static int add_tree(sv_watch *w, const char *dir, int depth)
{
	struct stat st;
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (w->has_skip && (uint64_t)st.st_dev == w->skip_dev && (uint64_t)st.st_ino == w->skip_ino)
		return 0;
	if (add_one(w, dir))
		return -1;
	if (depth >= WATCH_MAX_DEPTH)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || fathom_skips_folder(e->d_name))
			continue;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		char sub[PATH_MAX];
		if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name) >= sizeof sub)
			continue;
		rc = add_tree(w, sub, depth + 1);
	}
	closedir(d);
	return rc;
}

int sv_watch_open(sv_watch **out, const char *const *paths, size_t n, const char *index_dir,
                  char *err, size_t errlen)
{
	*out = NULL;
	sv_watch *w = fathom_calloc(1, sizeof *w);
	if (!w) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		snprintf(err, errlen, "inotify: %s", strerror(errno));
		fathom_free(w);
		return -1;
	}
	struct stat st;
	if (index_dir && stat(index_dir, &st) == 0) {
		w->has_skip = 1;
		w->skip_dev = (uint64_t)st.st_dev;
		w->skip_ino = (uint64_t)st.st_ino;
	}
	for (size_t i = 0; i < n; i++) {
		struct stat ps;
		if (stat(paths[i], &ps) != 0) {
			snprintf(err, errlen, "%s: %s", paths[i], strerror(errno));
			sv_watch_close(w);
			return -1;
		}
		/* a file: its folder is watched (editors replace files by rename) */
		int rc;
		if (S_ISDIR(ps.st_mode)) {
			rc = add_tree(w, paths[i], 0);
		} else {
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%s", paths[i]);
			char *sl = strrchr(dir, '/');
			if (sl)
				*(sl == dir ? sl + 1 : sl) = '\0';
			rc = add_one(w, sl ? dir : ".");
		}
		if (rc) {
			snprintf(err, errlen, "watching %s: %s", paths[i], strerror(errno));
			sv_watch_close(w);
			return -1;
		}
	}
	*out = w;
	return 0;
}

size_t sv_watch_folders(const sv_watch *w)
{
	return w ? w->nwatched : 0;
}

void sv_watch_close(sv_watch *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	for (size_t i = 0; i < w->npath; i++)
		fathom_free(w->path[i]);
	fathom_free(w->path);
	fathom_free(w);
}

/* Read what is queued; returns the number of events that matter (a
 * change to a file or folder), new folders watched on the way. */
static size_t drain(sv_watch *w)
{
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
	size_t n = 0;
	for (;;) {
		ssize_t k = read(w->fd, buf, sizeof buf);
		if (k <= 0)
			break;
		for (char *p = buf; p < buf + k;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			p += sizeof *ev + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				n++;   /* events were lost: the batch's full run catches up */
				continue;
			}
			const char *dir = ev->wd >= 0 && (size_t)ev->wd < w->npath ? w->path[ev->wd] : NULL;
			if (ev->mask & IN_IGNORED) {
				if (dir) {
					fathom_free(w->path[ev->wd]);
					w->path[ev->wd] = NULL;
					w->nwatched--;
				}
				continue;
			}
			if (ev->len && fathom_skips_folder(ev->name))
				continue;
			if (dir && ev->len && (ev->mask & IN_ISDIR) && (ev->mask & (IN_CREATE | IN_MOVED_TO))) {
				char sub[PATH_MAX];
				if ((size_t)snprintf(sub, sizeof sub, "%s/%s", dir, ev->name) < sizeof sub)
					(void)add_tree(w, sub, 1);
			}
			/* a folder's own attribute change (its mtime) says nothing new */
			if ((ev->mask & IN_ISDIR) && (ev->mask & (IN_ATTRIB | IN_MODIFY)) && !ev->len)
				continue;
			n++;
		}
	}
	return n;
}

int sv_watch_run(sv_watch *w, const sv_watch_opts *o, _Atomic int *stop)
{
	double debounce = o->debounce > 0 ? o->debounce : 0.2;
	double max_wait = o->max_wait > debounce ? o->max_wait : 2.0;
	double first = 0, last = 0, retry_at = 0, backoff = 1;
	size_t pending = 0;
	while (!atomic_load(stop)) {
		int timeout = 250;   /* ms; a look at *stop at least this often */
		double now = sv_now();
		if (pending) {
			double due = last + debounce < first + max_wait ? last + debounce : first + max_wait;
			if (due < retry_at)
				due = retry_at;
			due -= now;
			timeout = due <= 0 ? 0 : due > 0.25 ? 250 : (int)(due * 1000) + 1;
		}
		struct pollfd pf = { w->fd, POLLIN, 0 };
		int r = poll(&pf, 1, timeout);
		if (r < 0 && errno != EINTR)
			return -1;
		if (r > 0) {
			size_t k = drain(w);
			if (k) {
				now = sv_now();
				if (!pending)
					first = now;
				last = now;
				pending += k;
			}
		}
		now = sv_now();
		if (!pending || now < retry_at || (now - last < debounce && now - first < max_wait))
			continue;
		int rc = o->apply(o->ctx, pending);
		double delay = sv_now() - first;
		sv_metrics_watch(delay, rc ? 0 : pending, rc == 0);
		if (o->done)
			o->done(o->ctx, pending, delay, rc);
		if (rc) {
			/* the lock held elsewhere, a full disk: the batch waits and is
			 * tried again, less often each time */
			retry_at = sv_now() + backoff;
			backoff = backoff * 2 > 30 ? 30 : backoff * 2;
			continue;
		}
		pending = 0;
		retry_at = 0;
		backoff = 1;
	}
	return 0;
}

int sv_watch_reindex(fathom_index *w, const char *const *paths, size_t n,
                     const fathom_ingest_opts *io, fathom_ingest_stats *st, int *committed)
{
	*committed = 0;
	int rc = fathom_index_paths(w, paths, n, io, st);
	if (!rc && (st->docs_added || st->files_deleted)) {
		if ((rc = fathom_commit(w)) == 0)
			*committed = 1;
	}
	if (!*committed)
		fathom_rollback(w);
	return rc;
}

/* ---- fathom serve --watch ------------------------------------------------------- */

#include <pthread.h>
#include <signal.h>

static struct {
	sv_state *s;
	sv_watch *w;
	char **paths;
	size_t n;
	int quiet;
	double debounce;
	_Atomic int stop;
	pthread_t th;
	int running;
} sw;

static int serve_apply(void *ctx, size_t events)
{
	(void)ctx;
	(void)events;
	fathom_index *w = sv_writer_lock(sw.s);
	if (!w) {
		if (!sw.quiet)
			fprintf(stderr, "fathom serve: watch: the index is read-only here; changes wait\n");
		return FATHOM_EREADONLY;
	}
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	/* as POST /index: nothing outside the root, whatever a link says */
	const char *root = fathom_root(w);
	if (!sv_options(sw.s)->any_path && root && *root)
		io.confine_root = root;
	int changed;
	int rc = sv_watch_reindex(w, (const char *const *)sw.paths, sw.n, &io, &st, &changed);
	if (rc && !sw.quiet)
		fprintf(stderr, "fathom serve: watch: %s\n", fathom_errmsg());
	sv_writer_unlock(sw.s, changed);
	if (changed && !sw.quiet)
		fprintf(stderr, "fathom serve: watch: %llu re-indexed, %llu removed\n",
		        (unsigned long long)st.files_indexed, (unsigned long long)st.files_deleted);
	return rc;
}

static void *serve_watch_main(void *arg)
{
	(void)arg;
	sv_watch_opts o = { sw.debounce, 0, serve_apply, NULL, NULL };
	o.max_wait = sw.debounce * 10 > 2.0 ? sw.debounce * 10 : 2.0;
	/* what changed while no one watched: one run at the start */
	double t0 = sv_now();
	int rc = serve_apply(NULL, 0);
	sv_metrics_watch(sv_now() - t0, 0, rc == 0);
	if (sv_watch_run(sw.w, &o, &sw.stop) && !sw.quiet)
		fprintf(stderr, "fathom serve: watch stopped: %s\n", strerror(errno));
	return NULL;
}

int sv_serve_watch_start(sv_state *s, const char *const *paths, size_t n, double debounce,
                         int quiet, char *err, size_t errlen)
{
	if (sw.running) {
		snprintf(err, errlen, "a watcher runs already");
		return -1;
	}
	if (!sv_writable(s)) {
		snprintf(err, errlen, "--watch needs the writer lock (the daemon is read-only)");
		return -1;
	}
	if (sv_watch_open(&sw.w, paths, n, sv_index_dir(s), err, errlen))
		return -1;
	sw.paths = fathom_calloc(n, sizeof *sw.paths);
	sw.n = sw.paths ? n : 0;
	for (size_t i = 0; sw.paths && i < n; i++)
		if (!(sw.paths[i] = sv_strdup(paths[i])))
			break;
	if (!sw.paths || (n && !sw.paths[n - 1])) {
		snprintf(err, errlen, "out of memory");
		sv_serve_watch_stop();
		return -1;
	}
	sw.s = s;
	sw.quiet = quiet;
	sw.debounce = debounce > 0 ? debounce : 0.2;
	atomic_store(&sw.stop, 0);
	sv_metrics_watch_folders(sv_watch_folders(sw.w));
	/* the daemon takes its signals with sigwait: this thread must not */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int rc = pthread_create(&sw.th, NULL, serve_watch_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		snprintf(err, errlen, "cannot start the watcher: %s", strerror(rc));
		sv_serve_watch_stop();
		return -1;
	}
	sw.running = 1;
	return 0;
}

/* Stop the watcher; a batch being applied is finished and committed. */
void sv_serve_watch_stop(void)
{
	if (sw.running) {
		atomic_store(&sw.stop, 1);
		pthread_join(sw.th, NULL);
		sw.running = 0;
	}
	sv_watch_close(sw.w);
	sw.w = NULL;
	for (size_t i = 0; sw.paths && i < sw.n; i++)
		fathom_free(sw.paths[i]);
	fathom_free(sw.paths);
	sw.paths = NULL;
	sw.n = 0;
}
