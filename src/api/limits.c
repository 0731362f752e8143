/*
 * limits.c — fathom_limit(): the bounds the library enforces, published
 * so that clients read them instead of restating them. Each entry names
 * the constant its one check uses (query.h for search, api.h for ingest,
 * glossary.h for the glossary, pool.h for threads).
 */
#include "api/api.h"
#include "query/glossary.h"
#include "query/query.h"
#include "util/pool.h"

int fathom_limit(int which, double *min, double *max)
{
	static const struct {
		int id;
		double min, max;
	} limits[] = {
		{ FATHOM_LIMIT_K, 1, Q_MAX_K },
		{ FATHOM_LIMIT_QUERY_BYTES, 0, Q_MAX_QUERY_BYTES },
		{ FATHOM_LIMIT_SNIPPET_BYTES, 0, Q_SNIPPET_MAX },
		{ FATHOM_LIMIT_FIELD_WEIGHT, 0, Q_MAX_FIELD_WEIGHT },
		{ FATHOM_LIMIT_K1, 0, Q_MAX_K1 },
		{ FATHOM_LIMIT_B, 0, 1 },
		{ FATHOM_LIMIT_BONUS, Q_MIN_BONUS, Q_MAX_BONUS },
		{ FATHOM_LIMIT_TIME_LIMIT, 0, Q_MAX_TIME_LIMIT },
		{ FATHOM_LIMIT_CHUNK_TARGET, API_CHUNK_MIN, API_CHUNK_MAX },
		{ FATHOM_LIMIT_CHUNK_MAX, API_CHUNK_MIN, API_CHUNK_MAX },
		{ FATHOM_LIMIT_CHUNK_OVERLAP, 0, API_CHUNK_MAX - 1 },
		{ FATHOM_LIMIT_IDENT_MIN_LEN, 0, API_IDENT_MIN_LEN_MAX },
		{ FATHOM_LIMIT_IDENT_MAX, 0, API_IDENT_MAX },
		{ FATHOM_LIMIT_META, 0, API_MAX_META },
		{ FATHOM_LIMIT_META_BYTES, 3, API_MAX_META_BYTES },
		{ FATHOM_LIMIT_GLOSSARY_TERMS, 2, Q_GLOSS_MAX_TERMS },
		{ FATHOM_LIMIT_THREADS, 0, FA_POOL_MAX_THREADS },
	};
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		if (limits[i].id != which)
			continue;
		if (min)
			*min = limits[i].min;
		if (max)
			*max = limits[i].max;
		return 0;
	}
	return fa_err(FATHOM_EINVAL, "no limit %d", which);
}
