/*
 * term_pool.c — the pool a flush (writer.c) and a merge (merge.c) encode
 * their postings on: ix_ds_thread_count threads, a window of batches each
 * with room for its encoded terms and their bytes, and one term encoder per
 * worker. The caller's pipeline hands out batches of terms in dictionary
 * order, encodes a batch on a worker (ix_term_enc, then ix_term_enc_save
 * into the slot's batch) and appends the batch's terms in order on the
 * calling thread (ix_segw_term_put_saved); so the bytes are those one
 * thread writes.
 */
#include "index/index_int.h"
#include "util/pool.h"

int ix_term_pool_open(ix_term_pool *tp, size_t batch_terms)
{
	memset(tp, 0, sizeof *tp);
	unsigned want = ix_ds_thread_count();
	int rc = fa_pool_new(&tp->pool, want > 1 ? FA_MIN(want, FA_POOL_MAX_THREADS) : 0);
	if (rc)
		return rc;
	unsigned nt = fa_pool_threads(tp->pool);
	tp->nworkers = nt ? nt : 1;
	tp->window = nt ? (size_t)nt * 4 : 1;   /* about four batches a thread */
	tp->saved = fa_calloc(tp->window, sizeof *tp->saved);
	tp->out = fa_calloc(tp->window, sizeof *tp->out);
	tp->enc = fa_calloc(tp->nworkers, sizeof *tp->enc);
	if (!tp->saved || !tp->out || !tp->enc) {
		ix_term_pool_close(tp);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < tp->window; i++)
		fbuf_init(&tp->out[i], 0);
	for (size_t i = 0; i < tp->nworkers; i++)
		ix_term_enc_init(&tp->enc[i]);
	for (size_t i = 0; i < tp->window; i++) {
		if (!(tp->saved[i] = fa_malloc(batch_terms * sizeof *tp->saved[i]))) {
			ix_term_pool_close(tp);
			return fa_err(FATHOM_ENOMEM, "out of memory");
		}
	}
	return 0;
}

void ix_term_pool_close(ix_term_pool *tp)
{
	fa_pool_free(tp->pool);
	for (size_t i = 0; tp->saved && i < tp->window; i++)
		fa_free(tp->saved[i]);
	for (size_t i = 0; tp->out && i < tp->window; i++)
		fbuf_free(&tp->out[i]);
	for (size_t i = 0; tp->enc && i < tp->nworkers; i++)
		ix_term_enc_free(&tp->enc[i]);
	fa_free(tp->saved);
	fa_free(tp->out);
	fa_free(tp->enc);
	memset(tp, 0, sizeof *tp);
}

int ix_term_pool_run(ix_term_pool *tp, const fa_pipeline *fns, void *ctx)
{
	return fa_pool_run(tp->pool, tp->window, fns, ctx);
}
