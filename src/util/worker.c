/*
 * worker.c — one helper thread kept from call to call (worker.h).
 *
 * The state moves IDLE -> POSTED (the caller, under the lock) -> RUNNING
 * (the helper takes the task, under the lock) -> DONE (the helper, under
 * the lock) -> IDLE (the caller's finish). A task still POSTED when the
 * caller comes to finish it is taken back (POSTED -> IDLE, under the lock)
 * and run on the calling thread: on a machine whose other cores are busy
 * the helper may not run for a long while, and the caller must not wait
 * for it then. Both sides spin on an atomic load of the state for a
 * while before they sleep on their condition variable (the helper
 * FA_WORKER_SPIN_NS, the caller a tenth of that), pausing first, then
 * yielding the CPU, so that a spinning side never keeps a thread that
 * shares its core from running; a side that changes the state signals the
 * other only when that one said (under the lock) that it sleeps.
 */
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "fathom.h"
#include "util/util.h"
#include "util/worker.h"

enum { W_IDLE, W_POSTED, W_RUNNING, W_DONE };

struct fa_worker {
	pthread_t tid;
	pthread_mutex_t mu;
	pthread_cond_t job;      /* the helper sleeps on it: a task, or quit */
	pthread_cond_t done;     /* the caller sleeps on it: the task's end */
	void (*fn)(void *);
	void *arg;
	int state;               /* W_*: atomic loads outside the lock */
	int quit;
	int helper_sleeps, caller_sleeps;
	pid_t pid;
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Spin until the state is `want` (or quit, when also_quit) or ns have
 * passed: 1 when it is. The first 64 turns pause (a few microseconds);
 * after that each turn yields the CPU to any thread that waits for it. */
static int spin_for(const fa_worker *w, int want, int also_quit, uint64_t ns)
{
	uint64_t start = 0;
	for (unsigned i = 0;; i++) {
		if (__atomic_load_n(&w->state, __ATOMIC_ACQUIRE) == want ||
		    (also_quit && __atomic_load_n(&w->quit, __ATOMIC_ACQUIRE)))
			return 1;
		if (i < 64) {
			relax();
			continue;
		}
		uint64_t t = now_ns();
		if (!start)
			start = t;
		else if (t - start >= ns)
			return 0;
		sched_yield();
	}
}

static void *helper(void *p)
{
	fa_worker *w = p;
	for (;;) {
		spin_for(w, W_POSTED, 1, FA_WORKER_SPIN_NS);
		pthread_mutex_lock(&w->mu);
		while (w->state != W_POSTED && !w->quit) {
			w->helper_sleeps = 1;
			pthread_cond_wait(&w->job, &w->mu);
			w->helper_sleeps = 0;
		}
		if (w->state != W_POSTED) {   /* quit, nothing posted */
			pthread_mutex_unlock(&w->mu);
			return NULL;
		}
		void (*fn)(void *) = w->fn;
		void *arg = w->arg;
		__atomic_store_n(&w->state, W_RUNNING, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&w->mu);
		fn(arg);
		pthread_mutex_lock(&w->mu);
		__atomic_store_n(&w->state, W_DONE, __ATOMIC_RELEASE);
		if (w->caller_sleeps)
			pthread_cond_signal(&w->done);
		pthread_mutex_unlock(&w->mu);
	}
}

int fa_worker_new(fa_worker **out)
{
	*out = NULL;
	fa_worker *w = fa_calloc(1, sizeof *w);
	if (!w)
		return fa_err(FATHOM_ENOMEM, "a helper thread");
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->job, NULL);
	pthread_cond_init(&w->done, NULL);
	w->pid = getpid();
	if (pthread_create(&w->tid, NULL, helper, w) != 0) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->job);
		pthread_cond_destroy(&w->done);
		fa_free(w);
		return fa_err(FATHOM_ENOMEM, "a helper thread could not start");
	}
	*out = w;
	return 0;
}

int fa_worker_usable(const fa_worker *w)
{
	return w && w->pid == getpid();
}

void fa_worker_post(fa_worker *w, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&w->mu);
	w->fn = fn;
	w->arg = arg;
	__atomic_store_n(&w->state, W_POSTED, __ATOMIC_RELEASE);
	if (w->helper_sleeps)
		pthread_cond_signal(&w->job);
	pthread_mutex_unlock(&w->mu);
}

void fa_worker_finish(fa_worker *w)
{
	pthread_mutex_lock(&w->mu);
	if (w->state == W_POSTED) {
		/* not started: the calling thread runs it */
		void (*fn)(void *) = w->fn;
		void *arg = w->arg;
		__atomic_store_n(&w->state, W_IDLE, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&w->mu);
		fn(arg);
		return;
	}
	pthread_mutex_unlock(&w->mu);
	spin_for(w, W_DONE, 0, FA_WORKER_SPIN_NS / 10);
	pthread_mutex_lock(&w->mu);
	while (w->state != W_DONE) {
		w->caller_sleeps = 1;
		pthread_cond_wait(&w->done, &w->mu);
		w->caller_sleeps = 0;
	}
	__atomic_store_n(&w->state, W_IDLE, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&w->mu);
}

void fa_worker_free(fa_worker *w)
{
	if (!w)
		return;
	if (w->pid != getpid()) {
		/* a forked child: the thread is the parent's; its memory only */
		fa_free(w);
		return;
	}
	pthread_mutex_lock(&w->mu);
	__atomic_store_n(&w->quit, 1, __ATOMIC_RELEASE);
	pthread_cond_signal(&w->job);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->tid, NULL);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->job);
	pthread_cond_destroy(&w->done);
	fa_free(w);
}
