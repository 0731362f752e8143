/*
 * pool.h — the library's one thread pool: a fixed set of worker threads
 * that run ordered pipelines. grep reads and matches files with it; ingest
 * reads, chunks and analyses batches of documents with it while one writer
 * builds segments (an embedder will consume the same batches); the
 * document store compresses its frames and a flush and a merge encode
 * postings on it. Each of these makes a pool for its call and frees it after (thread
 * start-up is microseconds against their milliseconds); nothing caps the
 * threads of concurrent calls in one process as a whole yet.
 *
 * An ordered pipeline has three steps over a ring of `window` slots that
 * the caller owns (its ctx holds an array of window slot structs):
 *
 *   produce(ctx, slot)          calling thread: fill the slot with the next
 *                               item (1), or say there are no more (0)
 *   work(ctx, worker, slot)     any worker thread: the parallel part
 *   emit(ctx, slot)             calling thread, in production order
 *
 * So the calling thread sees results in the order it produced them, whatever
 * order the workers finish in, and the output does not depend on the number
 * of threads. At most `window` items are in flight, which bounds memory.
 * A slot is reused only after its emit returned. `worker` is in
 * [0, fa_pool_threads()) and lets work() keep per-thread scratch.
 *
 * Return codes: produce < 0, work < 0 and emit < 0 are errors; emit > 0
 * asks to stop. On an error or a stop, nothing more is produced, items
 * already being worked on finish (so no slot is in use when the call
 * returns), and the call returns the first error (an error from work comes
 * back in production order, like its result would have, with its
 * fathom_errmsg() carried over to the calling thread), or the positive
 * value emit returned. Slots produced but never emitted are the caller's to
 * clean up: after the call, no thread touches any slot.
 *
 * One pipeline runs on a pool at a time; a second caller waits. A pool of
 * 0 threads runs work() on the calling thread, between produce and emit
 * (the sequential reference the parallel runs are checked against).
 */
#ifndef FATHOM_POOL_H
#define FATHOM_POOL_H

#include <stddef.h>

#define FA_POOL_MAX_THREADS 64

typedef struct fa_pool fa_pool;

typedef struct fa_pipeline {
	int (*produce)(void *ctx, size_t slot);
	int (*work)(void *ctx, unsigned worker, size_t slot);
	int (*emit)(void *ctx, size_t slot);
} fa_pipeline;

/* The number of CPUs online, at least 1, at most max (0: FA_POOL_MAX_THREADS). */
unsigned fa_cpu_count(unsigned max);

/* Start nthreads worker threads (at most FA_POOL_MAX_THREADS; 0 for none:
 * every pipeline then runs on the calling thread). If fewer threads could
 * be started than asked for, the pool has the ones that did start (see
 * fa_pool_threads); FATHOM_ENOMEM only when memory runs out. */
int fa_pool_new(fa_pool **out, unsigned nthreads);
/* Stop and join the threads. NULL is a no-op. */
void fa_pool_free(fa_pool *p);
unsigned fa_pool_threads(const fa_pool *p);

/* Run an ordered pipeline (see above). window >= 1; a window of about
 * four items per thread keeps every thread busy. */
int fa_pool_run(fa_pool *p, size_t window, const fa_pipeline *fns, void *ctx);

/* The plain fork-join the kernels use (a sparse product's rows, a
 * triangular solve's blocks, a graph batch's searches): fn(job i) for the
 * n jobs (job i at jobs + i * size, n <= FA_POOL_MAX_THREADS), job 0 on the
 * calling thread and the others on threads started for the call; a job
 * whose thread cannot start runs on the calling thread. Returns when all
 * have. What each job computes must not depend on which thread runs it. */
void fa_run_jobs(void *(*fn)(void *), void *jobs, size_t size, unsigned n);

#endif /* FATHOM_POOL_H */
