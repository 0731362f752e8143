/*
 * state.c — what the daemon's requests share: a pool of read-only handles
 * (a fathom_index serves one thread at a time), each moved to the newest
 * commit when it is taken, and the one writer behind a mutex.
 *
 * Searches never wait for the writer: they take a reader, which sees the
 * last commit; a commit becomes visible to the requests that start after
 * it, all at once (a handle moves from one manifest to the next).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

#define SV_POOL_MAX 256

struct sv_state {
	sv_opts o;
	char *dir;
	pthread_mutex_t pool_mu;
	fathom_index *pool[SV_POOL_MAX];
	size_t npool;
	_Atomic uint64_t checked_ms;      /* read-only: the last look at the manifest */
	_Atomic uint64_t generation;      /* the newest commit the writer made */
	pthread_mutex_t w_mu;
	fathom_index *w;                  /* NULL: read-only */
	double started;
	_Atomic uint64_t last_commit_ms;  /* unix time */
};

double sv_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* How the daemon opens the index: confined to its root unless told not. */
static unsigned open_flags(const sv_state *s, unsigned flags)
{
	return flags | (s->o.confine ? FATHOM_OPEN_CONFINE : 0);
}

int sv_open(sv_state **out, const sv_opts *o, char *why, size_t why_len)
{
	*out = NULL;
	if (why_len)
		why[0] = '\0';
	/* jansson allocates through the library's seam, as the daemon does:
	 * allocation-failure tests reach every JSON value. The setting is
	 * global to the process, which the daemon owns; fathom_free releases
	 * with fathom_free(), so values made before this call are freed alike. */
	json_set_alloc_funcs(fathom_malloc, fathom_free);
	sv_state *s = fathom_calloc(1, sizeof *s);
	if (!s || !(s->dir = sv_strdup(o->index))) {
		fathom_free(s);
		return FATHOM_ENOMEM;
	}
	s->o = *o;
	s->o.index = s->dir;
	pthread_mutex_init(&s->pool_mu, NULL);
	pthread_mutex_init(&s->w_mu, NULL);
	s->started = sv_now();
	int rc = 0;
	if (!o->read_only && !o->lazy_writer) {
		fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
		oo.flags = open_flags(s, FATHOM_OPEN_WRITE);
		rc = fathom_open(&s->w, s->dir, &oo);
		if (rc == FATHOM_ELOCKED) {
			snprintf(why, why_len, "%s", fathom_errmsg());
			s->w = NULL;
			rc = 0;   /* serve searches; writes get 503 */
		}
	}
	if (!rc) {
		/* one reader now: a missing or corrupt index fails here, at start */
		fathom_index *r = sv_reader_get(s);
		if (!r)
			rc = FATHOM_ENOTFOUND;
		else
			sv_reader_put(s, r);
	}
	if (rc) {
		sv_close(s);
		return rc;
	}
	if (s->w)
		atomic_store(&s->generation, fathom_generation(s->w));
	*out = s;
	return 0;
}

void sv_close(sv_state *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->npool; i++)
		fathom_close(s->pool[i]);
	if (s->w)
		fathom_close(s->w);   /* every write was committed before it was answered */
	pthread_mutex_destroy(&s->pool_mu);
	pthread_mutex_destroy(&s->w_mu);
	fathom_free(s->dir);
	fathom_free(s);
}

const sv_opts *sv_options(const sv_state *s)
{
	return &s->o;
}

int sv_writable(const sv_state *s)
{
	return s->w != NULL || (s->o.lazy_writer && !s->o.read_only);
}

const char *sv_index_dir(const sv_state *s)
{
	return s->dir;
}

double sv_started(const sv_state *s)
{
	return s->started;
}

double sv_last_commit(const sv_state *s)
{
	return (double)atomic_load(&s->last_commit_ms) / 1000.0;
}

fathom_index *sv_reader_get(sv_state *s)
{
	fathom_index *ix = NULL;
	pthread_mutex_lock(&s->pool_mu);
	if (s->npool)
		ix = s->pool[--s->npool];
	pthread_mutex_unlock(&s->pool_mu);
	if (!ix) {
		fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
		oo.flags = open_flags(s, FATHOM_OPEN_READONLY);
		if (fathom_open(&ix, s->dir, &oo) != 0)
			return NULL;
	}
	/* The writer says when there is a newer commit. Without one (another
	 * process writes) a request looks at the manifest once a second and
	 * tells the others what it found. */
	if (!s->w || s->o.lazy_writer) {
		uint64_t now_ms = (uint64_t)(sv_now() * 1000), last = atomic_load(&s->checked_ms);
		if (now_ms - last > 1000 && atomic_compare_exchange_strong(&s->checked_ms, &last, now_ms)) {
			(void)fathom_refresh(ix, NULL);
			uint64_t g = fathom_generation(ix), cur = atomic_load(&s->generation);
			while (g > cur && !atomic_compare_exchange_weak(&s->generation, &cur, g))
				;
		}
	}
	if (fathom_generation(ix) < atomic_load(&s->generation))
		(void)fathom_refresh(ix, NULL);   /* on an error: the snapshot it had */
	return ix;
}

void sv_reader_put(sv_state *s, fathom_index *ix)
{
	if (!ix)
		return;
	pthread_mutex_lock(&s->pool_mu);
	if (s->npool < SV_POOL_MAX) {
		s->pool[s->npool++] = ix;
		ix = NULL;
	}
	pthread_mutex_unlock(&s->pool_mu);
	if (ix)
		fathom_close(ix);
}

fathom_index *sv_writer_lock(sv_state *s)
{
	if (s->o.read_only || (!s->w && !s->o.lazy_writer))
		return NULL;
	pthread_mutex_lock(&s->w_mu);
	if (!s->w) {
		/* lazy: the lock is taken for this write alone */
		fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
		oo.flags = open_flags(s, FATHOM_OPEN_WRITE);
		if (fathom_open(&s->w, s->dir, &oo) != 0) {
			s->w = NULL;
			pthread_mutex_unlock(&s->w_mu);
			return NULL;
		}
	}
	return s->w;
}

void sv_writer_unlock(sv_state *s, int committed)
{
	if (committed) {
		atomic_store(&s->generation, fathom_generation(s->w));
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		atomic_store(&s->last_commit_ms, (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
	}
	if (s->o.lazy_writer) {
		fathom_close(s->w);   /* nothing uncommitted: writes commit or roll back */
		s->w = NULL;
	}
	pthread_mutex_unlock(&s->w_mu);
}
