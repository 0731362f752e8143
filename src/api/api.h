/*
 * api.h — what the public handle holds, and the bounds of the ingest
 * options. Only src/api sees this: it unwraps the handle and hands the
 * internal index (index/index.h) to the query and grep modules; clients
 * see an opaque fathom_index.
 */
#ifndef FATHOM_API_H
#define FATHOM_API_H

#include "fathom.h"
#include "index/index.h"
#include "text/text.h"
#include "query/glossary.h"

/* The bounds of fathom_ingest_opts: ingest.c checks them (the one check),
 * fathom_limit() (limits.c) publishes them. */
#define API_CHUNK_MIN 64u             /* the smallest chunk_target */
#define API_CHUNK_MAX (1u << 30)      /* the largest chunk_target, chunk_max */
#define API_IDENT_MIN_LEN_MAX 64u
#define API_IDENT_MAX 1000u
#define API_MAX_META 64u              /* "key=value" tags per ingest */
#define API_MAX_META_BYTES 1024u      /* bytes of one */

struct fathom_index {
	ix_index *ix;
	text_analyzer *an;   /* the index's analyser (its stemming language) */
	unsigned flags;
	fa_arena work;       /* search working memory, reused query after query */
	/* The glossary parsed once, again when the index's payload changes. */
	q_glossary gloss;
	uint64_t gloss_version;
	int gloss_ok;
};

#endif /* FATHOM_API_H */
