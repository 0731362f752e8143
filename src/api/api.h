/*
 * api.h — what the public handle holds. Only src/api and the query module
 * see this; clients see an opaque fathom_index.
 */
#ifndef FATHOM_API_H
#define FATHOM_API_H

#include "fathom.h"
#include "index/index.h"
#include "text/text.h"
#include "query/glossary.h"

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
