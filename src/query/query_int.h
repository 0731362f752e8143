/*
 * query_int.h — what the files of src/query share. Only src/query includes
 * it; the rest of the library sees query.h.
 *
 * A search is a pipeline of stages, each in its own file (search.c runs
 * them in order):
 *   parse.c       parse: the dialect into an AST
 *   route.c       route: the matching mode (the one AUTO decision), k and
 *                 how many candidates each source retrieves; it runs on the
 *                 query as written, because expansion depends on it
 *   expand.c      expand: glossary alias groups for the binding words
 *   plan.c        identify: exact identifiers of the query (TC-1001) become
 *                 pre-filters (q_identify); then the plan: the AST into
 *                 analysed terms, phrases and the match tree
 *   keyword.c     retrieve: BM25F (wand.c: block-max WAND and conjunctions;
 *                 exhaustive.c: the slow reference) into a candidate list
 *                 whose receipts explain reads back through the source
 *   fuse.c        fuse: candidate lists into one pool (one list: as it is)
 *   rerank.c      rerank: an optional reranker reads the pool's chunk texts
 *                 and reorders its best
 *   explain.c     explain: hits (documents, per-source scores and ranks,
 *                 receipts, snippets from snippet.c) for the best k, and
 *                 the query's receipt (why an empty answer is empty)
 *   lines.c       the receipts of a source that finds lines (fathom grep)
 *   results.c     the result set handed to the caller
 * and the pieces the stages share: glossary.c (the alias groups and the
 * curation queue, read from the index's payload), filter.c (metadata,
 * path and language filters as per-segment bitmaps), match.c (the one
 * score and match check of a chunk), score.c (BM25F), topk.c (the k best
 * chunks).
 * Both retrieval paths call q_eval() (match.c), so a chunk gets the same
 * score, bit for bit, whichever path finds it.
 */
#ifndef FATHOM_QUERY_INT_H
#define FATHOM_QUERY_INT_H

#include <math.h>

#include "query/query.h"

/* Limits that keep a hostile query from costing unbounded work. */
#define Q_MAX_CLAUSES 512
#define Q_MAX_TERMS 64       /* distinct analysed terms: one bit each in a uint64_t */
#define Q_MAX_ELEMS 256      /* elements of all phrases together */
/* Bounds are inflated by this relative margin so that floating-point
 * rounding, which differs between a sum of bounds and a sum of scores,
 * can never prune a chunk that would have entered the top k. */
#define Q_BOUND_MARGIN (1.0 + 1e-9)

/* ---- parse.c: the dialect into an AST -------------------------------------- */

#define Q_MAX_NODES 512      /* words, phrases and operators */
#define Q_MAX_DEPTH 16       /* nested parentheses */
#define Q_MAX_QFILTERS 16    /* library:X and friends in one query */
#define Q_MAX_LIT_NOTES 8    /* literal readings named in the receipt */
#define Q_MAX_LENIENT_TRIES 64  /* rounds before every operator is literal */

enum q_node_kind {
	QN_WORD = 0,         /* a word (text), maybe a prefix (auth*) */
	QN_PHRASE,           /* "words in a row" */
	QN_AND,              /* every child */
	QN_OR,               /* at least one child */
	QN_NOT               /* one child, which must not match */
};

typedef struct q_node {
	uint8_t kind;
	uint8_t fields;      /* field scope: bit 1 << fathom field; 0 = every field */
	uint8_t prefix;      /* QN_WORD written as word* */
	uint32_t off;        /* byte offset in the query, for messages */
	const char *text;    /* leaves: into the query, not NUL-terminated */
	uint32_t len;
	uint32_t first, n;   /* operators: children kid[first .. first + n) */
} q_node;

typedef struct q_qfilter {
	const char *key;     /* "library", "version", "system" or "lang" */
	const char *value;   /* into the query, vlen bytes */
	uint32_t vlen;
	uint32_t off;
} q_qfilter;

/* A lenient parse's literal reading, for the receipt. */
typedef struct q_litnote {
	const char *what;    /* static: "unclosed '('" */
	uint32_t col;        /* column, in characters from 1 (0: the whole query) */
} q_litnote;

#define Q_MAX_EXPANSIONS 16

/* A glossary expansion: the words as written and the group they became. */
typedef struct q_expansion {
	const char *text;
	uint32_t len;
	uint32_t group;
	const char *const *terms;   /* the group's members (the glossary's memory) */
	uint32_t nterms;
} q_expansion;

typedef struct q_ast {
	q_expansion exp[Q_MAX_EXPANSIONS];
	uint32_t nexp;
	q_node *node;
	uint32_t nnodes;
	uint32_t *kid;
	uint32_t nkids;
	uint32_t root;       /* always a QN_AND: the query's items */
	q_qfilter *filter;   /* filters written in the query */
	uint32_t nfilters;
	int strict;          /* an operator was used: the words are required */
	q_litnote lit[Q_MAX_LIT_NOTES];   /* what a lenient parse read literally */
	uint32_t nlit;       /* how many readings (more than the array holds) */
	const char *src;     /* the query parsed, src_len bytes */
	size_t src_len;
} q_ast;

/* Parse query (allocated in a). strict: FATHOM_EINVAL with "column N: ..."
 * for a syntax error, an empty query, or one of negations only. Lenient
 * (strict 0): what would be a syntax error is read literally and noted in
 * t->lit; FATHOM_EINVAL only for a query of blanks. FATHOM_ETOOBIG past
 * the length limit; the node limit is FATHOM_EINVAL in both. */
int q_parse(q_ast *t, fa_arena *a, const char *query, size_t len, int strict);
/* The default mode's second reading of a query whose quoted phrases left
 * it with no answer: written parsed as q_parse did, the quotes of each
 * phrase that is an unscoped, unnegated item of the top level are read
 * literally, so its words join the query's; each noted in t->lit. Negations,
 * explicit AND and OR, field scopes and filters stay as written.
 * *nrelaxed: how many phrases (0: t is untouched, no second reading). */
int q_parse_relaxed(q_ast *t, fa_arena *a, const char *query, size_t len,
                    const q_ast *written, uint32_t *nrelaxed);
/* The literal readings for the receipt: "unclosed '(' at column 17; ..." */
void q_ast_format_literal(const q_ast *t, fbuf *out);

/* ---- expand.c: the glossary ---------------------------------------------------------- */

struct q_glossary;
/* Rewrite binding words that are glossary members into OR groups of their
 * aliases (top_binds: the top level's words are required). stack: scratch
 * of Q_MAX_NODES entries. */
int q_expand(q_ast *t, const struct q_glossary *g, int top_binds, uint32_t *stack);

/* The canonical form, for tests and --explain: (AND a (OR b c) (NOT d)),
 * "phrases", title:word, prefix*, then filters as key=value. */
void q_ast_format(const q_ast *t, fbuf *out);

/* ---- route.c ---------------------------------------------------------------- */

typedef struct q_route {
	int top_binds;       /* the top level's words are required */
	int ident_any;       /* they are optional, there are some, and the
	                      * query is no keyword query (coord 0): a chunk
	                      * needs one of its identifiers, not all */
	int coord;           /* they are optional, and a chunk holding more of
	                      * them earns the coordination bonus */
	uint32_t k;          /* hits presented */
	uint32_t fetch;      /* candidates each source retrieves (>= k) */
	int shape;           /* enum fathom_shape */
	int mode;            /* the mode to search (enum fathom_mode) */
	uint32_t overfetch;  /* hybrid: each list fetches this times fetch */
	int pool;            /* identifier and grep candidates join the pool */
	int pool_adds;       /* they may bring chunks full text did not rank:
	                      * the query is identifiers alone */
} q_route;

/* The query's shape from its text and parsed top level: no model, a few
 * microseconds. */
int q_route_shape(const char *query, uint32_t keywords, uint32_t stopwords, uint32_t *others);

/* Decide for the parsed (not yet expanded) query t. rerank_depth: how many
 * candidates a reranker reads (0: none). mode: the mode asked (enum
 * fathom_mode, resolved), overfetch the hybrid over-fetch asked. */
int q_route_query(q_route *r, fa_arena *a, const q_ast *t, text_analyzer *an, const char *query,
                  const fathom_search_opts *o, uint32_t rerank_depth, int mode,
                  uint32_t overfetch);

/* ---- plan.c ------------------------------------------------------------------ */

typedef struct q_term {
	const char *text;    /* analysed form, NUL-terminated */
	uint32_t len;
	int required;        /* every match must contain it */
	int scored;          /* in a leaf that is not negated (else idf is 0) */
	const char *src;     /* the query text it came from (into the query) */
	uint32_t src_len;
	uint64_t df;         /* chunks containing it, summed over segments */
	double idf;
	uint32_t max_tf;     /* largest tf in any field and segment */
} q_term;

/* Terms that must occur at given relative positions in one field. */
typedef struct q_phrase {
	uint32_t n;
	uint32_t *term;      /* term index of each element */
	int32_t *off;        /* its position relative to element 0 */
} q_phrase;

/* One term looked up in every segment, cached for the query. */
typedef struct q_lookup {
	const char *text;
	uint32_t len;
	uint64_t df;         /* summed over segments */
	ix_term_info *ti;    /* per segment */
	uint8_t *found;      /* per segment */
} q_lookup;

#define Q_MAX_LOOKUPS (2 * Q_MAX_TERMS)
#define Q_MAX_MNODES 1024

/* The match tree: what a chunk must satisfy. */
enum q_mkind { QM_TERM = 0, QM_PHRASE, QM_AND, QM_OR, QM_NOT };

typedef struct q_mnode {
	uint8_t kind;
	uint8_t fields;      /* QM_TERM, QM_PHRASE: field scope (bit per field; 0 = any) */
	uint32_t idx;        /* QM_TERM: term; QM_PHRASE: phrase */
	uint32_t first, n;   /* operators: children mkid[first .. first + n) */
} q_mnode;

#define Q_MAX_IDENTS 8

/* An exact identifier of the query: a hard pre-filter when the index has
 * it anywhere (applied), else dropped and reported. */
typedef struct q_ident {
	const char *text;    /* as typed, into the query */
	uint32_t len;
	uint8_t cat;         /* enum text_ident_cat */
	char key[TEXT_IDENT_MAX_KEY + 3];
	uint32_t key_len;
	const char **wholes; /* the whole tokens of its variants (text_ident_variants) */
	uint8_t *whole_len;
	uint32_t nwholes;
	uint64_t chunks;     /* chunks holding it (deleted ones too), summed over
	                      * the segments searched */
	int applied;
} q_ident;

typedef struct q_plan {
	q_ident idents[Q_MAX_IDENTS];
	uint32_t nidents;
	int ident_any;       /* a ranked (natural-language) query: a chunk needs
	                      * one of its identifiers, not all */
	int ident_counter;   /* the source (enum fathom_source) whose
	                      * q_ident_bitmap calls count idents[].chunks:
	                      * each source filters, one counts */
	q_lookup lookups[Q_MAX_LOOKUPS];
	uint32_t nlookups;
	q_term *terms;
	uint32_t nterms;
	uint32_t nrequired;
	q_phrase *phrases;   /* the phrases of the tree (quoted, identifier parts, CJK) */
	uint32_t nphrases;
	q_phrase seq;        /* the top level in order: for the bonuses */
	q_mnode *m;
	uint32_t nm;
	uint32_t *mkid;
	uint32_t nmkid;
	uint32_t mroot;      /* UINT32_MAX: nothing binds (every word optional) */
	int trivial;         /* the tree is an AND of required terms: nothing to check */
	int prefix_truncated; /* a prefix began more terms than were searched */
	const char *empty_prefix; /* a prefix that began no indexed term */
	uint32_t empty_prefix_len;
	int coord;           /* the coordination bonus rewards holding more of
	                      * the sequence's terms (route.c decided) */
} q_plan;

/* The identify stage: the exact identifiers of the query's top level into
 * p->idents, each looked up (applied when the index holds it). It starts
 * the plan: p is cleared first. ident_any: the query ranks (a chunk needs
 * one identifier, and capitalised words are not class names). */
int q_identify(q_plan *p, fa_arena *a, ix_index *ix, text_analyzer *an, const q_ast *t,
               int ident_any);

/* Build the rest of the plan of a parsed query (allocated in a), after
 * q_identify on the same p and t: applied identifiers free the words they
 * cover. Looks identifiers' wholes up in the index to decide between the
 * whole and the phrase of its parts, and prefixes to expand them.
 * FATHOM_EINVAL when nothing is searchable. top_binds: the top level's
 * words are required; coord: a keyword query (its identifiers bind, and
 * the coordination bonus applies). */
int q_plan_build(q_plan *p, fa_arena *a, ix_index *ix, text_analyzer *an, const q_ast *t,
                 int top_binds, int coord);

/* Count the units of the top level's words (route.c's AUTO decision) as
 * q_plan_build would split them: keywords and stop words. */
int q_plan_top_units(const q_ast *t, text_analyzer *an, fa_arena *a, uint32_t *keywords,
                     uint32_t *stopwords);

/* Look term up in every segment of ix, once per query: a second call for
 * the same term answers from the plan's cache. *out lives in a. */
int q_plan_lookup(q_plan *p, fa_arena *a, ix_index *ix, const char *term, uint32_t len,
                  const q_lookup **out);

/* ---- score.c: BM25F --------------------------------------------------------- */

typedef struct q_scorer {
	double w[FATHOM_NFIELDS];
	double avg[FATHOM_NFIELDS];  /* average field length; 0 when unused */
	double b_avg[FATHOM_NFIELDS]; /* b / avg, or 0 when unused */
	double k1, b, one_minus_b;
} q_scorer;

void q_scorer_init(q_scorer *s, const fathom_search_opts *o, ix_index *ix);
double q_idf(uint64_t n_chunks, uint64_t df);

/* The length normalisation of one field: 1 - b + b * len / avg, with
 * b / avg computed once (a field nobody uses normalises to 1). */
static inline double q_field_norm(const q_scorer *s, int f, double len)
{
	if (s->avg[f] <= 0.0)
		return 1.0;
	return s->one_minus_b + len * s->b_avg[f];
}

/* tf~ of BM25F: sum over fields of w_f * tf_f / norm_f(len_f). The bound
 * variant (max_tf with min_len) goes through the same expression, and
 * every operation in it is monotonic under rounding, so tf~ <= U holds in
 * floating point as it does on paper. */
static inline double q_tf_tilde(const q_scorer *s, const uint16_t tf[FATHOM_NFIELDS],
                                const uint16_t len[FATHOM_NFIELDS])
{
	double x = 0.0;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		if (tf[f])
			x += s->w[f] * (double)tf[f] / q_field_norm(s, f, (double)len[f]);
	return x;
}

/* The same tf~ with the chunk's field norms worked out once (q_field_norms),
 * for a chunk that several terms are scored in: the same operations on the
 * same values, so the same number bit for bit. */
static inline void q_field_norms(const q_scorer *s, const uint16_t len[FATHOM_NFIELDS],
                                 double norm[FATHOM_NFIELDS])
{
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		norm[f] = q_field_norm(s, f, (double)len[f]);
}

static inline double q_tf_tilde_norm(const q_scorer *s, const uint16_t tf[FATHOM_NFIELDS],
                                     const double norm[FATHOM_NFIELDS])
{
	double x = 0.0;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		if (tf[f])
			x += s->w[f] * (double)tf[f] / norm[f];
	return x;
}

/* idf * x * (k1 + 1) / (k1 + x), written as idf * ((k1+1) - (k1+1) k1 / (k1+x))
 * so that it is monotonic in x under rounding too. */
static inline double q_saturate(const q_scorer *s, double idf, double x)
{
	if (!(x > 0.0))
		return 0.0;
	double k1p1 = s->k1 + 1.0;
	return idf * (k1p1 - k1p1 * s->k1 / (s->k1 + x));
}

/* Upper bound of one term's score over the postings a bound covers. */
double q_term_bound(const q_scorer *s, double idf, const ix_bound *b);

/* ---- topk.c: the k best chunks ---------------------------------------------- */

typedef struct q_hitref {
	double score;
	double bonus;
	uint32_t seg;        /* index in the snapshot */
	uint32_t chunk;
	uint32_t slot;       /* 0..k-1: where the hit's term frequencies are kept */
} q_hitref;

/* A min-heap whose root is the worst kept hit. Ties in score break by
 * (segment index, chunk) ascending, so retrieval in id order makes a
 * candidate equal to the root lose. */
typedef struct q_topk {
	q_hitref *h;
	uint32_t n, k;
} q_topk;

int q_topk_init(q_topk *t, fa_arena *a, uint32_t k);
/* The score a candidate must beat; -inf until k hits are held. */
static inline double q_topk_threshold(const q_topk *t)
{
	return t->n < t->k ? -HUGE_VAL : t->h[0].score;
}
/* Offer r; returns the slot it now holds (r->slot is ignored), or
 * UINT32_MAX when it did not make the top k. A slot is reused when its hit
 * is pushed out. */
uint32_t q_topk_push(q_topk *t, const q_hitref *r);
/* Sort best first (destroys the heap order). */
void q_topk_sort(q_topk *t);

/* ---- filter.c ------------------------------------------------------------------ */

typedef struct q_filter {
	const char **keys;   /* metadata filters, NUL-terminated */
	const char **values;
	size_t *key_lens;    /* strlen(keys[i]), worked out once, not per document */
	size_t n;
	const char *glob;    /* NULL when unset */
	int glob_base;       /* pattern has no '/': also try the base name */
	const char *lang;    /* NULL when unset */
	int active;
} q_filter;

/* The filters of the options and those written in the query (t may be
 * NULL). */
int q_filter_init(q_filter *f, fa_arena *a, const fathom_search_opts *o, const q_ast *t);
int q_filter_doc(const q_filter *f, const ix_doc_info *d);
/* The chunks of s that pass the filter, one bit each (bit set = allowed). */
int q_filter_bitmap(const q_filter *f, fa_arena *a, ix_segment *s, uint8_t **out);

/* Call cb for every term of segment s that marks a chunk holding the
 * identifier: its vocabulary terms (one per spelling and category, of the
 * key, and key "()" as older indexes wrote a call's) and, with wholes,
 * the indexed whole tokens of its variants (x->wholes). */
int q_ident_terms(ix_segment *s, const q_ident *x, int wholes,
                  int (*cb)(void *ctx, const char *term, size_t len, const ix_term_info *ti),
                  void *ctx);

/* The live chunks holding identifier x, over every segment (for a receipt:
 * walks each segment's chunks). */
int q_ident_count(ix_index *ix, const q_ident *x, uint64_t *n);

/* AND the plan's applied identifiers into *bits (allocating it when NULL):
 * only chunks holding every one (one, with ident_any) stay allowed. source:
 * the caller (enum fathom_source); the chunks counted for the receipt when
 * it is p->ident_counter. */
int q_ident_bitmap(q_plan *p, fa_arena *a, ix_segment *s, uint8_t **bits, int source);

/* ---- match.c: evaluating one candidate --------------------------------------- */

typedef struct q_cursor {
	ix_postings p;
	uint32_t term;       /* index in the plan */
	int stale;           /* moved by ix_post_shallow or skipped past:
	                      * p.doc is unspecified, and postings before lo
	                      * no longer matter */
	uint32_t lo;
	double ub;           /* bound over this segment's whole list */
	uint64_t bit;        /* 1 << term */
	uint64_t title_bit, head_bit; /* bit, if the list has the term in the
	                               * title / headings field */
	uint64_t seq_pos;    /* where the term stands in plan->seq: bit i for
	                      * seq.term[i] (q_seq_pairs_in) */
	/* The bound of block bb_block, kept because WAND asks for it on every
	 * pivot while the block stays the same. */
	uint32_t bb_block;
	double bb;
	uint64_t bb_title_bit, bb_head_bit;
} q_cursor;

typedef struct q_ctx {
	ix_index *ix;
	const fathom_search_opts *opts;
	const q_plan *plan;
	q_scorer sc;
	q_topk top;
	uint64_t scored;
	uint64_t deadline_ns;     /* CLOCK_MONOTONIC; 0: no time limit */
	uint32_t ticks;           /* candidates since the last look at the clock */
	double phrase_bonus, prefix_bonus;
	uint64_t seq_mask;        /* the terms of plan->seq */
	uint32_t coord_n;         /* the coordination bonus counts the terms of
	                           * seq_mask, this many (0: no bonus) */
	double seg_bonus;         /* largest bonus product in this segment */
	double *phrase_share;     /* q_phrase_share by pairs found (seq.n entries) */
	double coord_share[65];   /* q_coord_share by words found */
	ix_term_info *ti;         /* [seg * nterms + term] */
	uint8_t *ti_found;
	/* the segment being searched */
	uint32_t seg_index;
	ix_segment *seg;
	const uint8_t *allowed;   /* filter bitmap, NULL when unfiltered */
	q_cursor *cur;            /* cursors of the terms this segment holds: */
	uint32_t ncur;            /* all of them, */
	uint32_t nscore;          /* the scored ones first */
	q_cursor **by_term;       /* term index -> cursor or NULL */
	/* scratch for one candidate */
	uint16_t (*tf)[FATHOM_NFIELDS];  /* per term */
	uint8_t *present;
	double *part;             /* per term: its score part, where known */
	uint32_t **pos;           /* per term: position buffer of max_tf entries */
	uint32_t *pos_n;
	uint64_t *pos_tag;        /* (serial, field) the buffer holds */
	uint64_t serial;
	/* The term frequencies of each kept hit, [slot * nterms + term], for the
	 * receipts; NULL when k * nterms is too large to keep (they are then
	 * read again from the postings). */
	uint16_t (*hit_tf)[FATHOM_NFIELDS];
	/* The term-at-a-time pass (wand.c), per chunk of a small segment:
	 * the summed score parts, the terms found (and their places in the
	 * query sequence); all but the terms found set when the chunk is first
	 * met; taat_cap entries, allocated from work on first use. */
	fa_arena *work;
	double *taat_acc;
	uint64_t *taat_may;
	uint64_t *taat_pos;       /* OR of the seq_pos of the terms found */
	uint32_t *taat_docs;      /* the chunks met */
	uint32_t taat_cap;
} q_ctx;

/* The largest bonus product of a chunk that can hold only the terms in
 * `may`, of which those in `title` / `head` may occur in the title /
 * headings field. The phrase bonus needs every term of the query sequence
 * in the chunk, the prefix bonus every one in the title or every one in the
 * headings; the product is formed as q_eval forms it. */
/* The phrase bonus rewards the query's word order: each adjacent pair of the
 * query sequence found adjacent and in order in the chunk earns its share,
 * 1 + (phrase_bonus - 1) * pairs found / pairs in the query, so a chunk
 * holding the whole query as a phrase gets the full bonus and one holding
 * part of it a part (a sequential-dependence signal). The shares are
 * worked out once per query (keyword.c) into c->phrase_share[pairs]. */
static inline double q_phrase_share(const q_ctx *c, uint32_t pairs)
{
	return c->phrase_share[pairs];
}

/* Bits set in x (the compiler's builtin calls a library routine unless
 * the build targets a CPU with popcnt). */
static inline uint32_t q_popcount(uint64_t x)
{
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (uint32_t)((x * 0x0101010101010101ull) >> 56);
}

/* Pairs of the sequence whose two terms are both in mask. */
static inline uint32_t q_seq_pairs_possible(const q_ctx *c, uint64_t mask)
{
	const q_phrase *s = &c->plan->seq;
	uint32_t n = 0;
	for (uint32_t i = 0; i + 1 < s->n; i++)
		n += (mask >> s->term[i] & 1) && (mask >> s->term[i + 1] & 1);
	return n;
}

/* q_seq_pairs_possible from the seq positions of the terms in mask (the
 * OR of their cursors' seq_pos): pair i is possible when bits i and i + 1
 * are both set. A sequence of more than 64 words counts the slow way. */
static inline uint32_t q_seq_pairs_in(const q_ctx *c, uint64_t mask, uint64_t pos)
{
	if (c->plan->seq.n > 64)
		return q_seq_pairs_possible(c, mask);
	return q_popcount(pos & (pos >> 1));
}

/* The coordination bonus rewards a chunk for the share of the query's words
 * it holds: 1 + (Q_COORD_BONUS - 1) * found / words, so a chunk holding
 * every word gets the full bonus and one missing some a smaller part; the
 * ranking stays a disjunction (every chunk holding a word may answer).
 * c->coord_share[found] holds it (keyword.c). */
static inline double q_coord_share(const q_ctx *c, uint64_t mask)
{
	return c->coord_share[q_popcount(mask & c->seq_mask)];
}

static inline double q_bonus_bound_pos(const q_ctx *c, uint64_t may, uint64_t title,
                                       uint64_t head, uint64_t pos)
{
	double bonus = 1.0;
	if (c->coord_n >= 2)
		bonus *= q_coord_share(c, may);
	if (c->plan->seq.n >= 2 && c->phrase_bonus != 1.0)
		bonus *= q_phrase_share(c, q_seq_pairs_in(c, may, pos));
	if ((c->seq_mask & ~(may & title)) == 0 || (c->seq_mask & ~(may & head)) == 0)
		bonus *= c->prefix_bonus;
	return bonus;
}

/* The same, for a caller without the seq positions of may. */
static inline double q_bonus_bound(const q_ctx *c, uint64_t may, uint64_t title, uint64_t head)
{
	double bonus = 1.0;
	if (c->coord_n >= 2)
		bonus *= q_coord_share(c, may);
	if (c->plan->seq.n >= 2 && c->phrase_bonus != 1.0)
		bonus *= q_phrase_share(c, q_seq_pairs_possible(c, may));
	if ((c->seq_mask & ~(may & title)) == 0 || (c->seq_mask & ~(may & head)) == 0)
		bonus *= c->prefix_bonus;
	return bonus;
}

/* Can a chunk whose score parts are bounded by ub, with bonus at most
 * bonus, not beat theta? */
static inline int q_cannot_beat(double ub, double bonus, double theta)
{
	return ub * bonus * Q_BOUND_MARGIN <= theta;
}

/* Evaluate chunk d of the current segment: skip it if tombstoned, filtered
 * out or not a match, else score it and offer it to the top k. With prune,
 * a chunk whose score cannot enter the top k skips the phrase checks. */
int q_eval(q_ctx *c, uint32_t d, int prune);

/* Note the term of cursor qc as present at the cursor's doc: its tfs into
 * c->tf, its bit into the masks q_bonus_bound takes. */
static inline void q_gather(q_ctx *c, const q_cursor *qc, uint64_t *may, uint64_t *title,
                            uint64_t *head)
{
	uint32_t t = qc->term;
	ix_post_tf(&qc->p, c->tf[t]);
	c->present[t] = 1;
	if (!c->plan->terms[t].scored)
		return; /* a negated term: matters to the tree only */
	*may |= qc->bit;
	if (c->tf[t][FATHOM_FIELD_TITLE])
		*title |= qc->bit;
	if (c->tf[t][FATHOM_FIELD_HEADINGS])
		*head |= qc->bit;
}

/* The second half of q_eval, for a retrieval loop that has settled every
 * cursor at d itself (filter and tombstone checked, c->present set for
 * every term, each present term gathered): the tree, the score, the
 * bonuses, the top k. tfb: a bound of the chunk's score parts from its tfs
 * (< 0: q_eval_gathered works it out). */
int q_eval_gathered(q_ctx *c, uint32_t d, int prune, uint64_t may, uint64_t title, uint64_t head,
                    double tfb);
/* The rest of q_eval_gathered, for a caller that has also summed the score
 * parts: base is the sum, in plan order, of q_saturate(idf, q_tf_tilde(tf,
 * the chunk's field lengths)) over the present terms; pos is the OR of
 * their cursors' seq_pos. */
int q_eval_scored(q_ctx *c, uint32_t d, int prune, uint64_t may, uint64_t title, uint64_t head,
                  uint64_t pos, double base);
/* FATHOM_ETIMEOUT once the search's time limit has passed. */
int q_over_time(q_ctx *c);

/* Is chunk d worth a look: 1 when it is live and passes the filter, 0 when
 * not, < 0 when the time limit has passed (every candidate starts here). */
static inline int q_admit(q_ctx *c, uint32_t d)
{
	int rc = q_over_time(c);
	if (rc)
		return rc;
	if (c->allowed && !(c->allowed[d >> 3] & (1u << (d & 7))))
		return 0;
	return !seg_is_deleted(c->seg, d);
}

/* The first doc the cursor may still yield. */
static inline uint32_t q_cursor_doc(const q_cursor *qc)
{
	return qc->stale ? qc->lo : qc->p.doc;
}

/* Mark postings before target as not mattering, without decoding. */
static inline void q_cursor_skip(q_cursor *qc, uint32_t target)
{
	if (!qc->stale) {
		qc->stale = 1;
		qc->lo = target;
	} else if (qc->lo < target) {
		qc->lo = target;
	}
}

/* Move a cursor to its first posting >= d (>= lo for a stale one); a no-op
 * when already there. */
static inline int q_cursor_seek(q_cursor *qc, uint32_t d)
{
	if (qc->stale) {
		qc->stale = 0;
		return ix_post_advance(&qc->p, FA_MAX(d, qc->lo));
	}
	if (qc->p.doc < d)
		return ix_post_advance(&qc->p, d);
	return 0;
}

/* ---- wand.c / exhaustive.c ----------------------------------------------------- */

int q_retrieve_pruned(q_ctx *c);
/* Segments of at most this many chunks are searched term at a time when
 * the query is a plain ranked disjunction (wand.c); a test may change it. */
extern uint32_t q_taat_max_chunks;
int q_retrieve_exhaustive(q_ctx *c);

/* ---- snippet.c ----------------------------------------------------------------- */

typedef struct q_match {
	uint32_t start, end, term;   /* a token of the text that is query term `term` */
} q_match;

/* Working memory of q_snippet, allocated once for all the hits. */
typedef struct q_snip_work {
	q_match *m;
	uint32_t *src_end;
	uint32_t *cnt;       /* per term */
} q_snip_work;

int q_snip_work_init(q_snip_work *w, fa_arena *a, uint32_t nterms);

/* Pick the window of about target bytes of text holding the most distinct
 * query terms and write it as one line into the arena a, with the byte
 * ranges of the matched tokens relative to it, and the lines (counted from
 * line0, the text's first) the matches are on. */
#define Q_MAX_MATCH_LINES 64

int q_snippet(fa_arena *a, q_snip_work *w, text_analyzer *an, const q_plan *p,
              const char *text, size_t len, uint32_t target, uint32_t line0,
              const char **snippet, fathom_span **hl, uint32_t *n_hl, uint32_t **lines,
              uint32_t *n_lines);

/* ---- keyword.c: BM25F as a retrieval source --------------------------------------- */

/* The keyword source: the retrieval context, and what its explain hooks
 * need to give a candidate its receipt (field parts, matched terms, bonus)
 * and snippet. A candidate's receipt is its q_hitref in c.top. */
typedef struct q_keyword {
	q_source src;
	q_ctx c;
	text_analyzer *an;
	q_snip_work w;
	ix_postings *p;                  /* for term frequencies not kept */
	uint16_t (*tf)[FATHOM_NFIELDS];
} q_keyword;

/* Retrieve the best fetch chunks for plan into out, segment by segment,
 * under the filter; work holds everything until the search ends. */
int q_keyword_retrieve(q_keyword *kw, fa_arena *work, ix_index *ix, text_analyzer *an,
                       q_plan *plan, const q_filter *filter,
                       const fathom_search_opts *opts, uint32_t fetch, q_cand_list *out);

/* ---- vector.c: nearest neighbours as a retrieval source --------------------------- */

/* The query's embedding: dim values, unit length, from the embedder of
 * fingerprint fp (0: any segment of dim whatever its embedder). */
typedef struct q_vquery {
	const float *v;
	uint32_t dim;
	uint64_t fp;
} q_vquery;

typedef struct q_vector {
	q_source src;
	uint64_t scored;                 /* vectors scored */
	uint64_t chunks_without;         /* chunks with no vector */
	uint64_t chunks_other;           /* chunks of segments of another embedder */
	uint64_t graph_segments;         /* segments searched by their HNSW graph */
} q_vector;

/* The best fetch chunks by cosine with qv, under the filter and the plan's
 * identifier pre-filters, into out: over a segment's HNSW graph when it has
 * one (approximate; the filters passed into the walk), else every allowed
 * vector scored. With FATHOM_VECTOR_EXACT set (not "0") in the environment,
 * always exact: for tests and evaluations comparing the two. */
int q_vector_retrieve(q_vector *vs, fa_arena *work, ix_index *ix, q_plan *plan,
                      const q_filter *filter, const q_vquery *qv, uint32_t fetch,
                      q_cand_list *out);
/* strict mode: the cosine of each candidate of kw (the keyword list) as a
 * list of the same chunks, best first (chunks without a vector last, at
 * cosine -1... they keep their keyword rank in the fusion). */
int q_vector_rescore(q_vector *vs, fa_arena *work, ix_index *ix, const q_vquery *qv,
                     const q_cand_list *kw, q_cand_list *out);

/* A snippet hook for a source that matched no words: the chunk's opening,
 * about target bytes, line breaks as spaces. */
int q_snippet_opening(const q_source *self, const q_cand *c, const char *text, size_t len,
                      uint32_t target, uint32_t line0, fathom_hit *h, fathom_results *r);

/* ---- pool.c: identifier and grep candidates for the late-fusion pool -------------- */

/* grep for a literal (caseless) as a candidate list: chunks with the most
 * matching lines first, at most k, with line receipts; everything in a. */
typedef int (*q_grep_fn)(void *ctx, const char *literal, size_t len, uint32_t k, fa_arena *a,
                         q_cand_list *out);

/* The chunks holding the plan's applied identifiers (under the filter),
 * at most fetch: those of kw (the keyword list) in its order and with its
 * scores, then the others in index order at score 0. Empty without
 * applied identifiers. */
int q_ident_cands(fa_arena *work, ix_index *ix, q_plan *plan, const q_filter *filter,
                  const q_cand_list *kw, uint32_t fetch, q_cand_list *out);
/* grep's chunks for each applied identifier as typed (at most
 * Q_POOL_MAX_GREPS), their lines summed, under the filter and the
 * identifier pre-filters, at most fetch, most lines first. */
int q_grep_cands(fa_arena *work, ix_index *ix, q_plan *plan, const q_filter *filter,
                 q_grep_fn grep, void *grep_ctx, uint32_t fetch, q_cand_list *out);

/* ---- fuse.c ------------------------------------------------------------------------ */

#define Q_MAX_LISTS 4
#define Q_RRF_K 60.0         /* reciprocal rank fusion: 1 / (Q_RRF_K + rank) */

/* Where a pooled chunk was found: in list `list`, at rank `rank` (1-based). */
typedef struct q_found {
	uint32_t list, rank;
} q_found;

/* One chunk of the pool and every list that holds it. */
typedef struct q_pooled {
	uint32_t seg, chunk;
	double score;        /* what ranks it now: its source's, fused, reranked */
	double fused;        /* with several lists: its fused score */
	double tie;          /* convex: what breaks a tie of fused, the lists'
	                      * reciprocal ranks under the same weights (a
	                      * list of weight 0 then decides nothing) */
	uint32_t fused_rank; /* 0: not fused (one list) */
	double rerank;
	uint32_t rerank_rank; /* 0: not reranked */
	uint32_t nfound;
	q_found found[Q_MAX_LISTS]; /* in list order */
} q_pooled;

typedef struct q_pool {
	const q_cand_list *lists;
	uint32_t nlists;
	q_pooled *v;         /* best first */
	size_t n;
} q_pool;

/* Merge nlists candidate lists into one pool, each chunk once. One list
 * is taken as it is (its order and scores). Several are fused by
 * reciprocal rank: a chunk scores the sum over the lists holding it of
 * 1 / (Q_RRF_K + rank); ties go to the better best rank, then the earlier
 * list, then (segment, chunk). The lists must outlive the pool. */
int q_fuse(q_pool *out, fa_arena *a, const q_cand_list *lists, uint32_t nlists);

/* How several lists are fused (fathom_fusion), each list with its weight
 * (RRF ignores them: every list weighs 1). */
typedef struct q_fusion {
	int method;                      /* enum fathom_fusion */
	double weight[Q_MAX_LISTS];
} q_fusion;

/* q_fuse by f (NULL: RRF). Convex: each list's scores min-max normalised
 * over the list ((s - min) / (max - min); 1 when max = min), a chunk's
 * fused score the weighted sum over the lists holding it (a list not
 * holding it adds 0). RRF-weighted: sum of weight / (Q_RRF_K + rank). */
int q_fuse_by(q_pool *out, fa_arena *a, const q_cand_list *lists, uint32_t nlists,
              const q_fusion *f);

/* The candidate of found entry f of a pooled chunk. */
static inline const q_cand *q_found_cand(const q_pool *pool, const q_found *f)
{
	return &pool->lists[f->list].v[f->rank - 1];
}

/* ---- rerank.c ---------------------------------------------------------------------- */

/* A reranker (none is built in yet): it scores the texts of the pool's
 * best chunks for the query; higher is better. scores[i] is for texts[i],
 * the first Q_RERANK_TEXT_MAX bytes of the chunk at most (cut on a
 * character), NUL-terminated. A non-zero return fails the search with
 * that code. It reads at most Q_MAX_RERANK chunks, which bounds the memory
 * a request holds. */
#define Q_MAX_RERANK 1000
#define Q_RERANK_TEXT_MAX (64u * 1024)
typedef struct q_reranker {
	int (*score)(void *ctx, const char *query, const char *const *texts, const size_t *lens,
	             size_t n, double *scores);
	void *ctx;
	uint32_t depth;      /* how many of the pool's best it reads (0: k; at
	                      * most Q_MAX_RERANK) */
} q_reranker;

/* Read the text of the pool's best min(depth, n) chunks, have rr score
 * them, and order them by that score (ties keep their order), ahead of the
 * rest. */
int q_rerank(q_pool *pool, ix_index *ix, const q_reranker *rr, const char *query, uint32_t k,
             fa_arena *a);

/* The text of chunk ci of segment seg (at most Q_CHUNK_READ_MAX bytes) into
 * out, replacing what it held. */
#define Q_CHUNK_READ_MAX (1u << 20)
int q_chunk_text(ix_index *ix, uint32_t seg, const ix_chunk_info *ci, fbuf *out);

/* ---- explain.c --------------------------------------------------------------------- */

/* Hits for the best k of the pool into r: documents, each source's score
 * and rank, receipts and snippets (snippet_bytes 0: none). */
int q_explain_hits(fathom_results *r, ix_index *ix, const q_pool *pool, uint32_t k,
                   uint32_t snippet_bytes);

/* The query's receipt in r: the plan's terms and identifiers, the parsed
 * form, the glossary expansions, the filters, and when the answer is empty
 * (empty) why. Called before q_explain_hits (matched terms point into the
 * terms). */
int q_explain_query(fathom_results *r, ix_index *ix, const q_plan *plan, const q_ast *t,
                    const q_filter *filter, int empty);

/* ---- search.c: the pipeline --------------------------------------------------------- */

/* What a search does with vectors (the API layer resolves the mode,
 * fusion and weights from the options, the index's settings and its
 * embedder, and embeds the query). */
struct q_hybrid {
	int mode;                        /* enum fathom_mode, resolved */
	q_fusion fusion;                 /* weight[0]: keyword, [1]: vector */
	double min_similarity;
	uint32_t overfetch;              /* hybrid: each list fetches this times k */
	q_vquery qv;                     /* v NULL: no query vector */
	const char *embedder;            /* for receipts: the embedder's kind */
	q_grep_fn grep;                  /* the late-fusion pool's grep (NULL: none) */
	void *grep_ctx;
	/* hybrid's vector side on a thread of its own, while full text runs
	 * on the calling one (NULL: both on the calling thread): the thread,
	 * and working memory of the side's own, reset by the caller */
	struct fa_worker *worker;
	fa_arena *vwork;
};
typedef struct q_hybrid q_hybrid;

#define Q_HYBRID_OVERFETCH 3u

/* q_search_run with vectors (hy NULL: keyword only). */
int q_search_hybrid(fathom_results **out, ix_index *ix, text_analyzer *an, const char *query,
                    const fathom_search_opts *opts, fa_arena *shared,
                    const struct q_glossary *gloss, const q_reranker *rr, const q_hybrid *hy);

/* q_search_in, with a reranker (NULL: none). */
int q_search_run(fathom_results **out, ix_index *ix, text_analyzer *an, const char *query,
                 const fathom_search_opts *opts, fa_arena *work,
                 const struct q_glossary *gloss, const q_reranker *rr);

/* ---- results.c ------------------------------------------------------------------- */

/* An empty result set; parsed is the query's canonical form (or NULL). */
int q_results_new(fathom_results **out, const char *parsed);
int q_results_set_parsed(fathom_results *r, const char *s, size_t n);
/* The route receipt (its embedder string copied). */
int q_results_set_route(fathom_results *r, const fathom_route_receipt *rt);
/* Why the answer is empty, in words ("\"kubernetes\" occurs in no document"). */
int q_results_set_why(fathom_results *r, const char *s, size_t n);
/* What the lenient parse read literally (q_ast_format_literal). */
int q_results_set_literal(fathom_results *r, const char *s, size_t n);
int q_results_set_filters(fathom_results *r, const char *s, size_t n);
int q_results_set_expansions(fathom_results *r, const q_ast *t);
/* The plan's terms (copied) and identifier receipts. */
int q_results_set_terms(fathom_results *r, const q_plan *p);
/* The copied terms, indexed as the plan's. */
const char *const *q_results_terms(const fathom_results *r);
void q_results_set_scored(fathom_results *r, uint64_t scored);
/* Room for n hits; q_results_next_hit hands out the next, zeroed. */
int q_results_reserve(fathom_results *r, size_t n);
fathom_hit *q_results_next_hit(fathom_results *r);

#endif /* FATHOM_QUERY_INT_H */
