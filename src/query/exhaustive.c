/*
 * exhaustive.c — the slow reference: visit every chunk that holds any query
 * term, in id order, and evaluate it with no bound and no skipping. The
 * pruned path (wand.c) must return exactly what this returns.
 */
#include "query/query_int.h"

int q_retrieve_exhaustive(q_ctx *c)
{
	int rc;
	for (;;) {
		uint32_t d = IX_END;
		for (uint32_t i = 0; i < c->nscore; i++)
			d = FA_MIN(d, c->cur[i].p.doc);
		if (d == IX_END)
			return 0;
		if ((rc = q_eval(c, d, 0)))
			return rc;
		for (uint32_t i = 0; i < c->nscore; i++)
			if (c->cur[i].p.doc == d && (rc = ix_post_next(&c->cur[i].p)))
				return rc;
	}
}
