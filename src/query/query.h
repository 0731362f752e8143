/*
 * query.h — the query pipeline of the core engine: parse the query into
 * terms and phrases, pick the matching mode, retrieve with BM25F over the
 * fields (block-max WAND, or exhaustive scoring as the slow reference),
 * apply bonuses, and build hits with snippets and receipts.
 *
 * fathom_results and the fathom_results_* functions of the public API are
 * implemented here (query/results.c).
 */
#ifndef FATHOM_QUERY_H
#define FATHOM_QUERY_H

#include "fathom.h"
#include "index/index.h"
#include "text/text.h"

/* Run query over the committed snapshot of ix. */
int q_search(fathom_results **out, ix_index *ix, text_analyzer *an,
             const char *query, const fathom_search_opts *opts);

/* The same, with the query's working memory taken from work (reset on
 * return, so its first block is reused by the next query and a search
 * usually calls malloc only for its results; NULL: a private arena), and
 * the glossary's alias groups expanding the query (NULL: none). */
struct q_glossary;
int q_search_in(fathom_results **out, ix_index *ix, text_analyzer *an,
                const char *query, const fathom_search_opts *opts, fa_arena *work,
                const struct q_glossary *gloss);

/* Results made by another retrieval source (fathom grep's chunks): an
 * empty set, its arena for the hits' strings and arrays, and hits appended
 * in rank order (the struct is copied; what it points at must live in the
 * arena). parsed is the source's canonical form of its query. */
int q_results_new(fathom_results **out, const char *parsed);
fa_arena *q_results_arena(fathom_results *r);
int q_results_add(fathom_results *r, const fathom_hit *h);

#endif /* FATHOM_QUERY_H */
