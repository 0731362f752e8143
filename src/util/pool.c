/*
 * pool.c — worker threads running ordered pipelines (pool.h says how).
 *
 * Items are numbered in production order. Workers take them in that order
 * (taken < produced), which keeps the oldest item, the one the caller waits
 * to emit, always the first to be worked on. The ring index of item s is
 * s % window; the caller produces into a slot only when the item that held
 * it has been emitted (produced - emitted < window).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "util/pool.h"
#include "util/util.h"

typedef struct pool_worker {
	fa_pool *pool;
	unsigned index;
	pthread_t th;
} pool_worker;

struct fa_pool {
	pthread_mutex_t run_mu;   /* one pipeline at a time */
	pthread_mutex_t mu;       /* everything below */
	pthread_cond_t cv_work;   /* workers: an item to take, or shutdown */
	pthread_cond_t cv_done;   /* caller: an item finished */
	pool_worker *w;
	unsigned n;               /* threads started */
	int shutdown;
	/* the pipeline running now (job NULL when none) */
	const fa_pipeline *job;
	void *ctx;
	size_t window;
	unsigned char *done;      /* per slot: work finished */
	int *rc;                  /* per slot: what work returned */
	size_t produced, taken;
	unsigned running;         /* items being worked on */
	int stop;
	/* the message of the earliest item (in production order) whose work
	 * failed: fathom_errmsg() is per thread, and the caller reports it */
	size_t err_seq;
	char errmsg[1024];
};

unsigned fa_cpu_count(unsigned max)
{
	long c = 0;
#ifdef CPU_COUNT
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0)
		c = CPU_COUNT(&set);
#endif
	if (c <= 0)
		c = sysconf(_SC_NPROCESSORS_ONLN);
	if (c <= 0)
		c = 1;
	if (max == 0 || max > FA_POOL_MAX_THREADS)
		max = FA_POOL_MAX_THREADS;
	return c > (long)max ? max : (unsigned)c;
}

static void *worker_main(void *arg)
{
	pool_worker *me = arg;
	fa_pool *p = me->pool;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->shutdown && !(p->job && !p->stop && p->taken < p->produced))
			pthread_cond_wait(&p->cv_work, &p->mu);
		if (p->shutdown)
			break;
		size_t seq = p->taken++, slot = seq % p->window;
		const fa_pipeline *job = p->job;
		void *ctx = p->ctx;
		p->running++;
		pthread_mutex_unlock(&p->mu);
		int rc = job->work(ctx, me->index, slot);
		pthread_mutex_lock(&p->mu);
		if (rc < 0 && seq < p->err_seq) {
			p->err_seq = seq;
			snprintf(p->errmsg, sizeof p->errmsg, "%s", fathom_errmsg());
		}
		p->rc[slot] = rc;
		p->done[slot] = 1;
		p->running--;
		pthread_cond_broadcast(&p->cv_done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int fa_pool_new(fa_pool **out, unsigned nthreads)
{
	*out = NULL;
	if (nthreads > FA_POOL_MAX_THREADS)
		nthreads = FA_POOL_MAX_THREADS;
	fa_pool *p = fa_calloc(1, sizeof *p);
	if (!p)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (nthreads && !(p->w = fa_calloc(nthreads, sizeof *p->w))) {
		fa_free(p);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	pthread_mutex_init(&p->run_mu, NULL);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv_work, NULL);
	pthread_cond_init(&p->cv_done, NULL);
	for (unsigned i = 0; i < nthreads; i++) {
		p->w[p->n].pool = p;
		p->w[p->n].index = p->n;
		if (pthread_create(&p->w[p->n].th, NULL, worker_main, &p->w[p->n]) != 0)
			break;   /* run with the threads we have */
		p->n++;
	}
	*out = p;
	return 0;
}

void fa_pool_free(fa_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->shutdown = 1;
	pthread_cond_broadcast(&p->cv_work);
	pthread_mutex_unlock(&p->mu);
	for (unsigned i = 0; i < p->n; i++)
		pthread_join(p->w[i].th, NULL);
	pthread_cond_destroy(&p->cv_done);
	pthread_cond_destroy(&p->cv_work);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->run_mu);
	fa_free(p->w);
	fa_free(p);
}

unsigned fa_pool_threads(const fa_pool *p)
{
	return p ? p->n : 0;
}

/* No threads: each item is produced, worked and emitted in turn. */
static int run_inline(size_t window, const fa_pipeline *fns, void *ctx)
{
	for (size_t seq = 0;; seq++) {
		size_t slot = seq % window;
		int rc = fns->produce(ctx, slot);
		if (rc <= 0)
			return rc;
		if ((rc = fns->work(ctx, 0, slot)) < 0)
			return rc;
		if ((rc = fns->emit(ctx, slot)) != 0)
			return rc;
	}
}

static int run_threads(fa_pool *p, size_t window, const fa_pipeline *fns, void *ctx)
{
	int ret = 0, ended = 0;
	size_t produced = 0, emitted = 0;
	pthread_mutex_lock(&p->mu);
	p->job = fns;
	p->ctx = ctx;
	p->window = window;
	p->produced = p->taken = 0;
	p->running = 0;
	p->stop = 0;
	p->err_seq = SIZE_MAX;
	p->errmsg[0] = '\0';
	pthread_mutex_unlock(&p->mu);
	for (;;) {
		while (!ended && produced - emitted < window) {
			size_t slot = produced % window;
			int rc = fns->produce(ctx, slot);
			if (rc < 0) {
				ret = rc;
				goto out;
			}
			if (rc == 0) {
				ended = 1;
				break;
			}
			pthread_mutex_lock(&p->mu);
			p->done[slot] = 0;
			p->produced = ++produced;
			pthread_cond_signal(&p->cv_work);
			pthread_mutex_unlock(&p->mu);
		}
		if (emitted == produced)
			break;
		size_t slot = emitted % window;
		pthread_mutex_lock(&p->mu);
		while (!p->done[slot])
			pthread_cond_wait(&p->cv_done, &p->mu);
		int rc = p->rc[slot];
		pthread_mutex_unlock(&p->mu);
		if (rc < 0) {
			/* no item before this one failed: the message is its own */
			ret = fa_err(rc, "%s", p->errmsg);
			goto out;
		}
		rc = fns->emit(ctx, slot);
		emitted++;
		if (rc != 0) {
			ret = rc;
			goto out;
		}
	}
out:
	/* Nothing more is taken; wait for the items being worked on, so no
	 * slot is in use once we return. */
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	while (p->running)
		pthread_cond_wait(&p->cv_done, &p->mu);
	p->job = NULL;
	p->ctx = NULL;
	pthread_mutex_unlock(&p->mu);
	return ret;
}

int fa_pool_run(fa_pool *p, size_t window, const fa_pipeline *fns, void *ctx)
{
	if (!fns || !fns->produce || !fns->work || !fns->emit || window == 0)
		return fa_err(FATHOM_EINVAL, "pool: no pipeline or an empty window");
	if (!p || p->n == 0)
		return run_inline(window, fns, ctx);
	pthread_mutex_lock(&p->run_mu);
	int rc;
	p->done = fa_calloc(window, 1);
	p->rc = fa_calloc(window, sizeof *p->rc);
	if (!p->done || !p->rc)
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
	else
		rc = run_threads(p, window, fns, ctx);
	fa_free(p->done);
	fa_free(p->rc);
	p->done = NULL;
	p->rc = NULL;
	pthread_mutex_unlock(&p->run_mu);
	return rc;
}

void fa_run_jobs(void *(*fn)(void *), void *jobs, size_t size, unsigned n)
{
	pthread_t tid[FA_POOL_MAX_THREADS];
	int started[FA_POOL_MAX_THREADS] = { 0 };
	unsigned char *j = jobs;
	n = n > FA_POOL_MAX_THREADS ? FA_POOL_MAX_THREADS : n;
	for (unsigned t = 1; t < n; t++)
		started[t] = pthread_create(&tid[t], NULL, fn, j + t * size) == 0;
	if (n)
		fn(j);
	for (unsigned t = 1; t < n; t++) {
		if (started[t])
			pthread_join(tid[t], NULL);
		else
			fn(j + t * size);
	}
}
