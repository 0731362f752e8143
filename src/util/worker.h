/*
 * worker.h — one helper thread that runs one task beside the calling
 * thread, kept from call to call: hybrid search walks the vector graph on
 * it while the calling thread runs full text (docs/ARCHITECTURE.md,
 * "Threads").
 *
 * A search is a tenth of a millisecond, so starting a thread per search
 * (tens of microseconds) or waking one that sleeps (as long again on an
 * idle machine) would cost what the overlap gains. The helper therefore
 * spins for a short while (FA_WORKER_SPIN_NS) after each task, looking for
 * the next, and only then sleeps on a condition variable. Between searches
 * that come back to back it never sleeps; an idle handle costs nothing
 * after the spin. When the machine's other cores are busy the helper may
 * not get to run: a task it has not started when the caller comes for it
 * is taken back and run by the caller, so a busy machine costs what one
 * thread would, not more. Spinning yields the CPU after its first
 * microseconds, so it never holds up a thread that shares its core.
 *
 *   fa_worker_new    starts the thread; FATHOM_ENOMEM or a failed start is
 *                    an error, and the caller then runs its tasks itself.
 *   fa_worker_post   hands it fn(arg). One task at a time: post, then
 *                    finish, before the next post.
 *   fa_worker_finish returns when fn(arg) has returned: run by the helper,
 *                    or by the calling thread when the helper had not
 *                    started it.
 *   fa_worker_free   joins the thread (after the task posted, if any).
 *
 * A worker belongs to the process that made it: after fork() the child has
 * no such thread, and fa_worker_usable says so (its owner makes another).
 * The task's errors are the task's to carry: fathom_errmsg() is per thread.
 */
#ifndef FATHOM_WORKER_H
#define FATHOM_WORKER_H

#define FA_WORKER_SPIN_NS 200000   /* 0.2 ms of spinning before sleeping */

typedef struct fa_worker fa_worker;

int fa_worker_new(fa_worker **out);
/* 1 when w exists and this process made it. */
int fa_worker_usable(const fa_worker *w);
void fa_worker_post(fa_worker *w, void (*fn)(void *arg), void *arg);
void fa_worker_finish(fa_worker *w);
void fa_worker_free(fa_worker *w);

#endif
