/*
 * test_query.c — the query pipeline on small hand-made indexes: BM25F
 * scores checked against the formula computed here, field weights, the
 * ALL/ANY/AUTO modes, phrases, identifiers, filters, tombstones, snippets,
 * the empty cases, and single CJK characters.
 */
#include <math.h>

#include "test.h"
#include "query/query_int.h"

typedef struct tdoc {
	const char *key;
	const char *path;      /* NULL: "" */
	const char *title;     /* NULL: "" */
	const char *lang;      /* NULL: "text" */
	const char *body;
	const char *headings;  /* NULL: none */
	const char *meta;      /* one "key=value" or NULL */
	const char *tag;       /* one tag or NULL */
} tdoc;

static text_analyzer *an;

static void add_doc(ix_index *ix, const tdoc *d)
{
	ix_chunk_in ch;
	memset(&ch, 0, sizeof ch);
	size_t len = strlen(d->body);
	ch.byte_start = 0;
	ch.byte_end = (uint32_t)len;
	ch.line_start = 1;
	ch.line_end = 1;
	for (size_t i = 0; i < len; i++)
		ch.line_end += d->body[i] == '\n';
	ch.headings = d->headings;
	ch.headings_len = d->headings ? (uint32_t)strlen(d->headings) : 0;
	ix_doc_in in;
	memset(&in, 0, sizeof in);
	in.key = d->key;
	in.path = d->path ? d->path : "";
	in.title = d->title ? d->title : "";
	in.url = "";
	in.lang = d->lang ? d->lang : "text";
	in.kind = DOC_TEXT;
	in.tags = d->tag ? &d->tag : NULL;
	in.n_tags = d->tag ? 1 : 0;
	in.meta = d->meta ? &d->meta : NULL;
	in.n_meta = d->meta ? 1 : 0;
	in.size = len;
	in.content_hash = fa_hash64(d->body, len, 0);
	in.text = d->body;
	in.text_len = len;
	in.chunks = &ch;
	in.n_chunks = 1;
	CHECK_OK(ix_add_doc(ix, an, &in));
}

static ix_index *make_index(char **dir, const tdoc *docs, size_t n)
{
	*dir = test_tmpdir("query");
	ix_index *ix = NULL;
	CHECK_OK(ix_open(&ix, *dir, IX_CREATE | IX_WRITE, "english"));
	if (!ix)
		return NULL;
	for (size_t i = 0; i < n; i++)
		add_doc(ix, &docs[i]);
	CHECK_OK(ix_commit(ix));
	return ix;
}

static void drop_index(ix_index *ix, char *dir)
{
	ix_close(ix);
	test_rmrf(dir);
	free(dir);
}

static fathom_results *run(ix_index *ix, const char *q, const fathom_search_opts *o)
{
	fathom_results *r = NULL;
	CHECK_OK(q_search(&r, ix, an, q, o));
	if (!r)
		return NULL;
	/* Every query is also checked against the exhaustive reference. */
	fathom_search_opts ex = *o;
	ex.exhaustive = 1;
	fathom_results *r2 = NULL;
	CHECK_OK(q_search(&r2, ix, an, q, &ex));
	if (r2) {
		CHECK_EQ(fathom_results_count(r), fathom_results_count(r2));
		for (size_t i = 0; i < fathom_results_count(r) && i < fathom_results_count(r2); i++) {
			CHECK(fathom_results_hit(r, i)->chunk_id == fathom_results_hit(r2, i)->chunk_id);
			CHECK(fathom_results_hit(r, i)->score == fathom_results_hit(r2, i)->score);
		}
		fathom_results_free(r2);
	}
	return r;
}

static const char *hit_key(const fathom_results *r, size_t i)
{
	const fathom_hit *h = fathom_results_hit(r, i);
	return h ? h->doc_id : "(none)";
}

/* The hit of the document key, or NULL. */
static const fathom_hit *hit_of(const fathom_results *r, const char *key)
{
	for (size_t i = 0; i < fathom_results_count(r); i++)
		if (strcmp(fathom_results_hit(r, i)->doc_id, key) == 0)
			return fathom_results_hit(r, i);
	return NULL;
}

static int has_key(const fathom_results *r, const char *key)
{
	return hit_of(r, key) != NULL;
}

static int close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}

/* The textbook BM25 of one term in the body field only. */
static double bm25_body(double N, double df, double tf, double len, double avg,
                        double w, double k1, double b)
{
	double idf = log(1.0 + (N - df + 0.5) / (df + 0.5));
	double x = w * tf / (1.0 - b + b * len / avg);
	return idf * x * (k1 + 1.0) / (k1 + x);
}

static void test_bm25f_hand_computed(void)
{
	tdoc docs[] = {
		{ "d1", NULL, NULL, NULL, "apple banana apple", NULL, NULL, NULL },
		{ "d2", NULL, NULL, NULL, "apple cherry cherry cherry", NULL, NULL, NULL },
		{ "d3", NULL, NULL, NULL, "banana cherry", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 3);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	double avg = (3.0 + 4.0 + 2.0) / 3.0;
	fathom_results *r = run(ix, "apple", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK_STR(hit_key(r, 0), "d1");
	CHECK_STR(hit_key(r, 1), "d2");
	/* k1 and b are floats in the options: 1.2f is not 1.2. */
	double k1 = Q_DEFAULT_K1, b = Q_DEFAULT_B;   /* o leaves them unset */
	double s1 = bm25_body(3, 2, 2, 3, avg, 1.0, k1, b);
	double s2 = bm25_body(3, 2, 1, 4, avg, 1.0, k1, b);
	if (fathom_results_count(r) == 2) {
		const fathom_hit *h = fathom_results_hit(r, 0);
		CHECK(close_to(h->score, s1));
		CHECK(close_to(h->field_score[FATHOM_FIELD_BODY], s1));
		CHECK(h->field_score[FATHOM_FIELD_TITLE] == 0.0);
		CHECK(h->bonus == 1.0);
		CHECK_EQ(h->n_matched[FATHOM_FIELD_BODY], 1);
		CHECK_EQ(h->n_matched[FATHOM_FIELD_TITLE], 0);
		CHECK(close_to(fathom_results_hit(r, 1)->score, s2));
	}
	CHECK_EQ(fathom_results_nterms(r), 1);
	int req = -1;
	CHECK_STR(fathom_results_term(r, 0, &req), "appl"); /* stemmed */
	CHECK_EQ(req, 0); /* AUTO requires no word: it ranks */
	CHECK(fathom_results_term(r, 1, NULL) == NULL);
	fathom_results_free(r);

	/* Two terms, disjunctive: the sum of both terms' scores. */
	o.match = FATHOM_MATCH_ANY;
	o.k1 = 2.0f;
	o.b = 0.5f;
	r = run(ix, "banana cherry", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	double d3 = bm25_body(3, 2, 1, 2, avg, 1.0, 2.0, 0.5) * 2; /* one each */
	double d2 = bm25_body(3, 2, 3, 4, avg, 1.0, 2.0, 0.5);
	double d1 = bm25_body(3, 2, 1, 3, avg, 1.0, 2.0, 0.5);
	/* d3 holds "banana cherry" adjacent: the phrase bonus applies. */
	CHECK_STR(hit_key(r, 0), "d3");
	if (fathom_results_count(r) == 3) {
		CHECK(close_to(fathom_results_hit(r, 0)->score, d3 * o.phrase_bonus));
		CHECK(close_to(fathom_results_hit(r, 0)->bonus, o.phrase_bonus));
		CHECK_STR(hit_key(r, 1), d2 > d1 ? "d2" : "d1");
		CHECK(close_to(fathom_results_hit(r, 1)->score, fmax(d1, d2)));
		CHECK(close_to(fathom_results_hit(r, 2)->score, fmin(d1, d2)));
	}
	fathom_results_free(r);
	drop_index(ix, dir);
}

static void test_field_weights(void)
{
	tdoc docs[] = {
		{ "a", NULL, "a guide to the zebra", NULL, "lorem ipsum dolor sit amet", NULL, NULL, NULL },
		{ "b", NULL, "notes", NULL, "zebra lorem ipsum dolor zebra", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 2);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	float w[FATHOM_NFIELDS] = FATHOM_FIELD_WEIGHTS_INIT;
	o.field_weights = w;
	o.n_field_weights = FATHOM_NFIELDS;
	w[FATHOM_FIELD_TITLE] = 10.0f;
	fathom_results *r = run(ix, "zebra", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK_STR(hit_key(r, 0), "a");
	if (fathom_results_count(r) == 2) {
		const fathom_hit *h = fathom_results_hit(r, 0);
		CHECK_EQ(h->n_fields, FATHOM_NFIELDS);
		CHECK(h->field_score[FATHOM_FIELD_TITLE] > 0.0);
		CHECK(h->field_score[FATHOM_FIELD_BODY] == 0.0);
		CHECK_EQ(h->n_matched[FATHOM_FIELD_TITLE], 1);
		CHECK_STR(h->matched[FATHOM_FIELD_TITLE][0], "zebra");
	}
	fathom_results_free(r);

	/* A large k with many terms reads the receipts back from the postings
	 * instead of keeping them: the same numbers either way. */
	const char *many = "zebra lorem ipsum dolor sit amet guide notes the";
	o.match = FATHOM_MATCH_ANY;
	r = run(ix, many, &o);
	o.k = 100000;
	fathom_results *big = run(ix, many, &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK_EQ(fathom_results_count(big), 2);
	for (size_t i = 0; i < 2 && fathom_results_count(r) == 2 && fathom_results_count(big) == 2; i++) {
		const fathom_hit *a = fathom_results_hit(r, i), *b = fathom_results_hit(big, i);
		CHECK(a->chunk_id == b->chunk_id && a->score == b->score);
		for (int f = 0; f < FATHOM_NFIELDS; f++) {
			CHECK(a->field_score[f] == b->field_score[f]);
			CHECK_EQ(a->n_matched[f], b->n_matched[f]);
		}
		double sum = 0.0;
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			sum += a->field_score[f];
		CHECK(close_to(sum * a->bonus, a->score));
	}
	fathom_results_free(r);
	fathom_results_free(big);
	o.k = 10;
	o.match = FATHOM_MATCH_AUTO;
	w[FATHOM_FIELD_TITLE] = 0.1f;
	w[FATHOM_FIELD_BODY] = 5.0f;
	r = run(ix, "zebra", &o);
	CHECK_STR(hit_key(r, 0), "b");
	fathom_results_free(r);
	drop_index(ix, dir);
}

static void test_match_modes(void)
{
	tdoc docs[] = {
		{ "rg", NULL, NULL, NULL, "red green", NULL, NULL, NULL },
		{ "rb", NULL, NULL, NULL, "red blue", NULL, NULL, NULL },
		{ "gb", NULL, NULL, NULL, "green blue", NULL, NULL, NULL },
		{ "th", NULL, NULL, NULL, "the of orange", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 4);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	/* AUTO, 2 keywords: every chunk with either word answers, the one with
	 * both first; the others' receipts name the word they lack. */
	fathom_results *r = run(ix, "red green", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	CHECK_STR(hit_key(r, 0), "rg");
	for (size_t i = 0; i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		if (strcmp(h->doc_id, "rg") == 0) {
			CHECK_EQ(h->n_missing, 0);
		} else {
			CHECK_EQ(h->n_missing, 1);
			if (h->n_missing == 1)
				CHECK_STR(h->missing[0], strcmp(h->doc_id, "rb") == 0 ? "green" : "red");
		}
	}
	fathom_results_free(r);

	o.match = FATHOM_MATCH_ANY;
	r = run(ix, "red green", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	CHECK_STR(hit_key(r, 0), "rg"); /* both terms */
	int req = 1;
	fathom_results_term(r, 0, &req);
	CHECK_EQ(req, 0);
	fathom_results_free(r);

	o.match = FATHOM_MATCH_ALL;
	r = run(ix, "red blue", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "rb");
	fathom_results_free(r);

	/* AUTO: a stop word marks natural language, ranked disjunctively;
	 * every chunk with either word is a hit. */
	o.match = FATHOM_MATCH_AUTO;
	r = run(ix, "the red", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	CHECK(has_key(r, "rg") && has_key(r, "rb") && has_key(r, "th"));
	fathom_results_free(r);
	/* So does sentence punctuation at the end. */
	r = run(ix, "red green.", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	fathom_results_free(r);
	/* ...but ALL requires it. */
	o.match = FATHOM_MATCH_ALL;
	r = run(ix, "the red", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);

	/* AUTO, a long query: ranked disjunction. */
	o.match = FATHOM_MATCH_AUTO;
	r = run(ix, "red green blue yellow purple", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	fathom_results_free(r);
	/* AUTO, stop words only: the chunk holding them. */
	r = run(ix, "the of", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "th");
	fathom_results_free(r);
	r = run(ix, "of red", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	fathom_results_free(r);
	drop_index(ix, dir);
}

/* The default never starves: a short keyword query whose words occur, but
 * in different chunks and none holding all, is answered (it was "no
 * results" when AUTO required every word of a keyword query); a chunk
 * holding all the words outranks those missing some, even where BM25 alone
 * ranks it lower; each receipt names the words its chunk lacks; and ALL
 * keeps the strict meaning. */
static void test_never_starves(void)
{
	tdoc docs[] = {
		{ "ab", NULL, NULL, NULL, "alpha beta", NULL, NULL, NULL },
		{ "bg", NULL, NULL, NULL, "beta gamma", NULL, NULL, NULL },
		{ "ag", NULL, NULL, NULL, "alpha gamma", NULL, NULL, NULL },
		{ "z1", NULL, NULL, NULL, "zeta", NULL, NULL, NULL },
		{ "z2", NULL, NULL, NULL, "zeta", NULL, NULL, NULL },
		{ "z3", NULL, NULL, NULL, "zeta", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, sizeof docs / sizeof docs[0]);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *r = run(ix, "alpha beta gamma", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	for (size_t i = 0; i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		CHECK_EQ(h->n_missing, 1);
		const char *want = strcmp(h->doc_id, "ab") == 0 ? "gamma"
		                   : strcmp(h->doc_id, "bg") == 0 ? "alpha" : "beta";
		if (h->n_missing == 1)
			CHECK_STR(h->missing[0], want);
	}
	fathom_results_free(r);
	o.match = FATHOM_MATCH_ALL;
	r = run(ix, "alpha beta gamma", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);

	/* A word no chunk holds is missing from every hit; the query is
	 * still answered by the word that occurs. */
	o.match = FATHOM_MATCH_AUTO;
	r = run(ix, "zeta nowhereword", &o);
	CHECK_EQ(fathom_results_count(r), 3);
	for (size_t i = 0; i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		CHECK_EQ(h->n_missing, 1);
		if (h->n_missing == 1)
			CHECK_STR(h->missing[0], "nowhereword");
	}
	fathom_results_free(r);
	o.match = FATHOM_MATCH_ALL;
	r = run(ix, "zeta nowhereword", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	drop_index(ix, dir);

	/* "dd" scores higher on delta than "de" does on both (tf 3 in a short
	 * chunk against tf 1 each in a long one), yet "de" holds every word:
	 * the coordination bonus puts it first. */
	tdoc two[] = {
		{ "ab", NULL, NULL, NULL, "alpha beta", NULL, NULL, NULL },
		{ "dd", NULL, NULL, NULL, "delta delta delta", NULL, NULL, NULL },
		{ "de", NULL, NULL, NULL,
		  "epsilon words words words words words words words words delta",
		  NULL, NULL, NULL },
		{ "z1", NULL, NULL, NULL, "zeta", NULL, NULL, NULL },
	};
	ix = make_index(&dir, two, sizeof two / sizeof two[0]);
	if (!ix)
		return;
	o.match = FATHOM_MATCH_ANY;
	r = run(ix, "delta epsilon", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK_STR(hit_key(r, 0), "dd");
	fathom_results_free(r);
	o.match = FATHOM_MATCH_AUTO;
	r = run(ix, "delta epsilon", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK_STR(hit_key(r, 0), "de");
	if (fathom_results_count(r) == 2) {
		CHECK_EQ(fathom_results_hit(r, 0)->n_missing, 0);
		CHECK_EQ(fathom_results_hit(r, 1)->n_missing, 1);
		if (fathom_results_hit(r, 1)->n_missing == 1)
			CHECK_STR(fathom_results_hit(r, 1)->missing[0], "epsilon");
	}
	fathom_results_free(r);
	drop_index(ix, dir);
}

static void test_phrases(void)
{
	tdoc docs[] = {
		{ "qbf", NULL, NULL, NULL, "the quick brown fox", NULL, NULL, NULL },
		{ "bqf", NULL, NULL, NULL, "brown quick fox", NULL, NULL, NULL },
		{ "qfb", NULL, NULL, NULL, "quick fox brown", NULL, NULL, NULL },
		{ "ttl", NULL, "quick brown guide", NULL, "nothing here", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 4);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *r = run(ix, "\"quick brown\"", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK(has_key(r, "qbf") && has_key(r, "ttl"));
	fathom_results_free(r);
	r = run(ix, "\"brown fox\"", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "qbf");
	fathom_results_free(r);
	/* A quoted phrase stays required in ANY mode. */
	o.match = FATHOM_MATCH_ANY;
	r = run(ix, "quick \"fox brown\"", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "qfb");
	fathom_results_free(r);

	/* Unquoted: all three body docs match; the adjacent one gets the
	 * phrase bonus, the title that starts with the query the prefix one. */
	o.match = FATHOM_MATCH_AUTO;
	r = run(ix, "quick brown", &o);
	CHECK_EQ(fathom_results_count(r), 4);
	for (size_t i = 0; i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		/* each holds both words: the full coordination bonus */
		if (strcmp(h->doc_id, "qbf") == 0)
			CHECK(close_to(h->bonus, Q_COORD_BONUS * o.phrase_bonus));
		else if (strcmp(h->doc_id, "ttl") == 0)
			CHECK(close_to(h->bonus, Q_COORD_BONUS * o.phrase_bonus * o.prefix_bonus));
		else
			CHECK(close_to(h->bonus, Q_COORD_BONUS));
	}
	fathom_results_free(r);
	drop_index(ix, dir);
}

static void test_identifiers(void)
{
	tdoc prose[] = {
		{ "prose", NULL, NULL, NULL, "first we get user name from the db", NULL, NULL, NULL },
		{ "apart", NULL, NULL, NULL, "get the name of the user", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, prose, 2);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	/* No segment holds "getusername": the phrase of its parts, required
	 * by default too (a keyword query's identifier is one token). */
	fathom_results *r = run(ix, "getUserName", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "prose");
	CHECK_EQ(fathom_results_nterms(r), 3);
	fathom_results_free(r);
	/* Now an identifier: the whole is the term. */
	tdoc code = { "code", "src/user.c", NULL, "c", "name = getUserName(id);", NULL, NULL, NULL };
	add_doc(ix, &code);
	CHECK_OK(ix_commit(ix));
	r = run(ix, "getUserName", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "code");
	CHECK_EQ(fathom_results_nterms(r), 1);
	CHECK_STR(fathom_results_term(r, 0, NULL), "getusername");
	/* The highlight covers the identifier. */
	if (fathom_results_count(r) == 1) {
		const fathom_hit *h = fathom_results_hit(r, 0);
		CHECK_EQ(h->n_highlights, 1);
		if (h->n_highlights == 1)
			CHECK(strncmp(h->snippet + h->highlights[0].start, "getUserName",
			              h->highlights[0].len) == 0 && h->highlights[0].len == 11);
	}
	fathom_results_free(r);
	/* A quoted identifier is the phrase of its parts: all three forms. */
	r = run(ix, "\"getUserName\"", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK(has_key(r, "code") && has_key(r, "prose"));
	fathom_results_free(r);
	drop_index(ix, dir);
}

static void test_filters(void)
{
	tdoc docs[] = {
		{ "src/net/sock.c", "src/net/sock.c", NULL, "c", "socket buffer code", NULL, "team=net", NULL },
		{ "src/fs/inode.c", "src/fs/inode.c", NULL, "c", "inode buffer code", NULL, "team=fs", NULL },
		{ "docs/buffer.md", "docs/buffer.md", NULL, "markdown", "about the buffer", NULL, "team=net", NULL },
		{ "j1", NULL, NULL, NULL, "a buffer in json", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 4);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *r = run(ix, "buffer", &o);
	CHECK_EQ(fathom_results_count(r), 4);
	fathom_results_free(r);

	const char *f1[] = { "team=net" };
	o.filters = f1;
	o.n_filters = 1;
	r = run(ix, "buffer", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	CHECK(has_key(r, "src/net/sock.c") && has_key(r, "docs/buffer.md"));
	fathom_results_free(r);

	o.lang = "c";
	r = run(ix, "buffer", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "src/net/sock.c");
	fathom_results_free(r);

	o.filters = NULL;
	o.n_filters = 0;
	o.lang = NULL;
	o.path_glob = "*.c"; /* no '/': the base name */
	r = run(ix, "buffer", &o);
	CHECK_EQ(fathom_results_count(r), 2);
	fathom_results_free(r);
	o.path_glob = "src/fs/*";
	r = run(ix, "buffer", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "src/fs/inode.c");
	fathom_results_free(r);
	o.path_glob = "inode.c";
	r = run(ix, "buffer", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	fathom_results_free(r);
	o.path_glob = "fs/*.c"; /* with '/': the whole path must match */
	r = run(ix, "buffer", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);

	o.path_glob = NULL;
	const char *bad[] = { "novalue" };
	o.filters = bad;
	o.n_filters = 1;
	r = NULL;
	CHECK_EQ(q_search(&r, ix, an, "buffer", &o), FATHOM_EINVAL);
	CHECK(r == NULL);
	drop_index(ix, dir);
}

static void test_tombstones(void)
{
	tdoc docs[] = {
		{ "keep", NULL, NULL, NULL, "walrus one", NULL, NULL, NULL },
		{ "gone", NULL, NULL, NULL, "walrus walrus walrus", NULL, NULL, NULL },
		{ "repl", NULL, NULL, NULL, "walrus walrus", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 3);
	if (!ix)
		return;
	CHECK_OK(ix_delete_doc(ix, "gone"));
	tdoc repl = { "repl", NULL, NULL, NULL, "no more of the animal", NULL, NULL, NULL };
	add_doc(ix, &repl);
	CHECK_OK(ix_commit(ix));
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *r = run(ix, "walrus", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "keep");
	fathom_results_free(r);
	r = run(ix, "animal", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "repl");
	fathom_results_free(r);
	drop_index(ix, dir);
}

static void test_snippets(void)
{
	char body[4096];
	snprintf(body, sizeof body,
	         "Introduction paragraph that talks about nothing much at all.\n\n"
	         "Filler words keep coming here and there, over and over again.\n"
	         "More filler to push the match away from the start of the text.\n"
	         "Then   the   kernel\n\tscheduler is running tasks on every CPU.\n"
	         "Trailing words that are not interesting either, and some more.\n");
	tdoc docs[] = {
		{ "s", NULL, NULL, NULL, body, NULL, NULL, NULL },
		{ "o", NULL, NULL, NULL, "an unrelated scheduler note", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 2);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	o.snippet_bytes = 80;
	fathom_results *r = run(ix, "kernel scheduler runs", &o);
	CHECK_EQ(fathom_results_count(r), 2); /* "o" holds scheduler */
	CHECK_STR(hit_key(r, 0), "s");
	if (fathom_results_count(r) == 2) {
		const fathom_hit *h = fathom_results_hit(r, 0);
		CHECK(strchr(h->snippet, '\n') == NULL);
		CHECK(strstr(h->snippet, "  ") == NULL);
		CHECK(strstr(h->snippet, "kernel scheduler is running") != NULL);
		CHECK(strlen(h->snippet) <= 80 + 24);
		CHECK_EQ(h->n_highlights, 3);
		const char *want[] = { "kernel", "scheduler", "running" };
		for (uint32_t i = 0; i < h->n_highlights && i < 3; i++) {
			const fathom_span *s = &h->highlights[i];
			CHECK(s->start + s->len <= strlen(h->snippet));
			CHECK_EQ(s->len, strlen(want[i]));
			CHECK(strncmp(h->snippet + s->start, want[i], s->len) == 0);
		}
		CHECK_EQ(h->line_start, 1);
		CHECK_EQ(h->line_end, 8); /* as add_doc counted */
		CHECK_EQ(h->byte_start, 0);
		CHECK_EQ(h->byte_end, strlen(body));
	}
	fathom_results_free(r);

	/* Control characters (a NUL even) never reach a snippet. */
	static const char ctl[] = "alpha\0beta\x01gamma\x7f delta";
	ix_doc_in in;
	ix_chunk_in ch = { 0, sizeof ctl - 1, 1, 1, NULL, 0 };
	memset(&in, 0, sizeof in);
	in.key = "ctl";
	in.path = in.title = in.url = "";
	in.lang = "text";
	in.text = ctl;
	in.text_len = sizeof ctl - 1;
	in.chunks = &ch;
	in.n_chunks = 1;
	CHECK_OK(ix_add_doc(ix, an, &in));
	CHECK_OK(ix_commit(ix));
	r = run(ix, "gamma", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	if (fathom_results_count(r) == 1)
		CHECK_STR(fathom_results_hit(r, 0)->snippet, "alpha beta gamma delta");
	fathom_results_free(r);
	drop_index(ix, dir);
}

static void test_empty_and_none(void)
{
	tdoc docs[] = { { "x", NULL, NULL, NULL, "something", NULL, NULL, NULL } };
	char *dir;
	ix_index *ix = make_index(&dir, docs, 1);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *r = run(ix, "nothingmatchesthis", &o);
	CHECK(r != NULL);
	CHECK_EQ(fathom_results_count(r), 0);
	CHECK(fathom_results_hit(r, 0) == NULL);
	fathom_results_free(r);
	r = NULL;
	CHECK_EQ(q_search(&r, ix, an, "", &o), FATHOM_EINVAL);
	CHECK(strlen(fathom_errmsg()) > 0);
	CHECK_EQ(q_search(&r, ix, an, "   \t ", &o), FATHOM_EINVAL);
	CHECK_EQ(q_search(&r, ix, an, "\"\"", &o), FATHOM_EINVAL);
	CHECK_EQ(q_search(&r, ix, an, "-- !!", &o), FATHOM_EINVAL);
	CHECK(r == NULL);
	o.k = Q_MAX_K + 1;
	CHECK_EQ(q_search(&r, ix, an, "something", &o), FATHOM_EINVAL);
	o.k = 0;   /* unset: the default */
	CHECK_OK(q_search(&r, ix, an, "something", &o));
	fathom_results_free(r);
	r = NULL;
	drop_index(ix, dir);
	fathom_results_free(NULL);
	CHECK_EQ(fathom_results_count(NULL), 0);
}

/* The route stage: the one decision whether the top level's words bind
 * (the matching mode: ALL or an operator; AUTO never), whether they earn
 * the coordination bonus (AUTO's keyword queries, not natural language),
 * k and the over-fetch. */
static void test_route(void)
{
	static const struct {
		const char *q;
		int match, binds, coord;
	} cases[] = {
		{ "rate limiting", FATHOM_MATCH_AUTO, 0, 1 },             /* keywords: coordination */
		{ "how does rate limiting work", FATHOM_MATCH_AUTO, 0, 0 }, /* stop words */
		{ "rate limiting works.", FATHOM_MATCH_AUTO, 0, 0 },        /* a sentence */
		{ "alpha beta gamma delta", FATHOM_MATCH_AUTO, 0, 1 },      /* 4 keywords */
		{ "alpha beta gamma delta epsilon", FATHOM_MATCH_AUTO, 0, 0 }, /* 5 */
		{ "the", FATHOM_MATCH_AUTO, 0, 1 },                         /* stop words alone */
		{ "alpha -beta gamma delta epsilon zeta", FATHOM_MATCH_AUTO, 1, 0 }, /* an operator */
		/* a prefix is an operator: the words bind */
		{ "auth* alpha beta gamma delta", FATHOM_MATCH_AUTO, 1, 0 },
		/* an identifier with its parts is one unit */
		{ "getUserName alpha beta gamma", FATHOM_MATCH_AUTO, 0, 1 },
		{ "how does it work", FATHOM_MATCH_ALL, 1, 0 },
		{ "rate limiting", FATHOM_MATCH_ANY, 0, 0 },
	};
	fa_arena a;
	fa_arena_init(&a, 64 * 1024, 0);
	/* ANY over a phrase alone: nothing optional at the top, no ident_any */
	{
		fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
		o.match = FATHOM_MATCH_ANY;
		q_ast t;
		q_route r;
		CHECK_OK(q_parse(&t, &a, "\"rate limiting\"", 15, 1));
		CHECK_OK(q_route_query(&r, &a, &t, an, "\"rate limiting\"", &o, 0, FATHOM_MODE_KEYWORD, 1));
		CHECK(r.top_binds == 0 && r.ident_any == 0);
	}
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
		o.match = cases[i].match;
		o.k = 7;
		q_ast t;
		q_route r;
		CHECK_OK(q_parse(&t, &a, cases[i].q, strlen(cases[i].q), 1));
		CHECK_OK(q_route_query(&r, &a, &t, an, cases[i].q, &o, 0, FATHOM_MODE_KEYWORD, 1));
		if (r.top_binds != cases[i].binds)
			fprintf(stderr, "  route of \"%s\": binds %d\n", cases[i].q, r.top_binds);
		CHECK_EQ(r.top_binds, cases[i].binds);
		CHECK_EQ(r.coord, cases[i].coord);
		/* a ranked query with words, not a keyword query: a chunk needs
		 * one of its identifiers (a keyword query all, as ALL does) */
		CHECK_EQ(r.ident_any, !cases[i].binds && !cases[i].coord);
		CHECK(r.k == 7 && r.fetch == 7);
		/* a reranker reading deeper makes every source fetch deeper */
		CHECK_OK(q_route_query(&r, &a, &t, an, cases[i].q, &o, 50, FATHOM_MODE_KEYWORD, 1));
		CHECK(r.k == 7 && r.fetch == 50);
		fa_arena_reset(&a);
	}
	fa_arena_free(&a);
}

/* A group of plain words joins the sequence around it (parse.c): its
 * children are counted once and no orphan AND node is left, so the tree
 * never has more child links than nodes (fuzz_parse's invariant; the
 * group was once counted twice: "(a b c)" gave 5 nodes and 6 links). */
/* The router: each shape from its words, and the mix it sets. */
static void test_router_shapes(void)
{
	static const struct {
		const char *q;
		int shape;
	} cases[] = {
		{ "TC-1001", FATHOM_SHAPE_IDENTIFIER },
		{ "AuthService", FATHOM_SHAPE_IDENTIFIER },
		{ "handle_login() timeout", FATHOM_SHAPE_IDENTIFIER },
		{ "JIRA-123 TC-1001", FATHOM_SHAPE_IDENTIFIER },
		{ "v2.0.1 release notes", FATHOM_SHAPE_KEYWORDS },
		{ "where is AuthService defined", FATHOM_SHAPE_QUESTION },
		{ "rate limiting", FATHOM_SHAPE_KEYWORDS },
		{ "python list to string", FATHOM_SHAPE_QUESTION },
		{ "how do I add a dependency?", FATHOM_SHAPE_QUESTION },
		{ "Vitamin D deficiency causes rickets.", FATHOM_SHAPE_QUESTION },
		{ "tabs vs spaces", FATHOM_SHAPE_COMPARISON },
		{ "postgres versus mysql", FATHOM_SHAPE_COMPARISON },
		{ "difference between lists and tuples", FATHOM_SHAPE_COMPARISON },
		{ "compare TC-1001 and TC-1002", FATHOM_SHAPE_COMPARISON },
		{ "vs", FATHOM_SHAPE_KEYWORDS },
	};
	fa_arena a;
	fa_arena_init(&a, 64 * 1024, 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
		o.match = FATHOM_MATCH_AUTO;
		o.k = 10;
		q_ast t;
		q_route r;
		CHECK_OK(q_parse(&t, &a, cases[i].q, strlen(cases[i].q), 0));
		CHECK_OK(q_route_query(&r, &a, &t, an, cases[i].q, &o, 0, FATHOM_MODE_HYBRID, 3));
		if (r.shape != cases[i].shape)
			fprintf(stderr, "  shape of \"%s\": %s\n", cases[i].q, fathom_shape_name(r.shape));
		CHECK_EQ(r.shape, cases[i].shape);
		/* the mix: a lookup is strict, no over-fetch, with the pool;
		 * a comparison over-fetches twice as deep; the rest as asked */
		int want_mode = cases[i].shape == FATHOM_SHAPE_IDENTIFIER ? FATHOM_MODE_STRICT
		                                                          : FATHOM_MODE_HYBRID;
		uint32_t want_of = cases[i].shape == FATHOM_SHAPE_IDENTIFIER   ? 1
		                   : cases[i].shape == FATHOM_SHAPE_COMPARISON ? 6
		                                                               : 3;
		CHECK_EQ(r.mode, want_mode);
		CHECK_EQ(r.overfetch, want_of);
		CHECK_EQ(r.pool, cases[i].shape == FATHOM_SHAPE_IDENTIFIER);
		CHECK(r.k == 10 && r.fetch == 10);
		/* semantic stays semantic, and asks no pool; keyword stays keyword */
		CHECK_OK(q_route_query(&r, &a, &t, an, cases[i].q, &o, 0, FATHOM_MODE_SEMANTIC, 3));
		CHECK(r.mode == FATHOM_MODE_SEMANTIC && r.pool == 0);
		CHECK_OK(q_route_query(&r, &a, &t, an, cases[i].q, &o, 0, FATHOM_MODE_KEYWORD, 1));
		CHECK_EQ(r.mode, FATHOM_MODE_KEYWORD);
		fa_arena_reset(&a);
	}
	/* identifiers alone may add chunks; with a word beside them, confirm */
	{
		fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
		q_ast t;
		q_route r;
		CHECK_OK(q_parse(&t, &a, "TC-1001", 7, 0));
		CHECK_OK(q_route_query(&r, &a, &t, an, "TC-1001", &o, 0, FATHOM_MODE_KEYWORD, 1));
		CHECK(r.pool == 1 && r.pool_adds == 1);
		CHECK_OK(q_parse(&t, &a, "TC-1001 zebrafish", 17, 0));
		CHECK_OK(q_route_query(&r, &a, &t, an, "TC-1001 zebrafish", &o, 0, FATHOM_MODE_KEYWORD,
		                       1));
		CHECK(r.pool == 1 && r.pool_adds == 0);
	}
	CHECK_STR(fathom_shape_name(FATHOM_SHAPE_COMPARISON), "comparison");
	CHECK(fathom_shape_name(4) == NULL);
	fa_arena_free(&a);
}

static void test_parse_group_counts(void)
{
	static const struct {
		const char *q, *form;
		uint32_t nodes, kids;
	} cases[] = {
		{ "(a b c)", "(AND a b c)", 4, 3 },
		{ "x (a b c) y", "(AND x a b c y)", 6, 5 },
		{ "((a b) (c d))", "(AND a b c d)", 5, 4 },
		{ "(a b) OR c", "(OR (AND a b) c)", 6, 5 },
		{ "-(a b) c", "(AND (NOT (AND a b)) c)", 6, 5 },
		/* the input that made fuzz_parse abort */
		{ "(A OR - O(BC )R D)", "(AND (OR A -) O BC R D)", 8, 7 },
	};
	fa_arena a;
	fa_arena_init(&a, 64 * 1024, 0);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		q_ast t;
		fbuf f;
		fbuf_init(&f, 1u << 16);
		CHECK_OK(q_parse(&t, &a, cases[i].q, strlen(cases[i].q), 1));
		q_ast_format(&t, &f);
		fbuf_putc(&f, '\0');
		CHECK_STR((const char *)f.data, cases[i].form);
		if (t.nnodes != cases[i].nodes || t.nkids != cases[i].kids)
			fprintf(stderr, "  \"%s\": %u nodes, %u links\n", cases[i].q, t.nnodes, t.nkids);
		CHECK_EQ(t.nnodes, cases[i].nodes);
		CHECK_EQ(t.nkids, cases[i].kids);
		CHECK(t.nkids <= t.nnodes);
		fbuf_free(&f);
		fa_arena_reset(&a);
	}
	fa_arena_free(&a);
}

/* A reranker that prefers short chunks and notes what it was given. */
typedef struct fake_rr {
	size_t calls, n;
	char query[64];
	int fail, texts_ok;
} fake_rr;

static int rerank_by_length(void *ctx, const char *query, const char *const *texts,
                            const size_t *lens, size_t n, double *scores)
{
	fake_rr *f = ctx;
	f->calls++;
	f->n = n;
	snprintf(f->query, sizeof f->query, "%s", query);
	if (f->fail)
		return fa_err(FATHOM_EIO, "the reranker is down");
	f->texts_ok = 1;
	for (size_t i = 0; i < n; i++) {
		scores[i] = -(double)lens[i];
		f->texts_ok &= strlen(texts[i]) == lens[i] && strstr(texts[i], "zebra") != NULL;
	}
	return 0;
}

/* The rerank stage: it reads the fused pool's chunk texts before explain,
 * reorders them, and every hit still has its keyword receipt, with the
 * keyword and rerank scores and ranks side by side. */
static void test_rerank(void)
{
	tdoc docs[] = {
		{ "d1", NULL, NULL, NULL, "zebra zebra zebra zebra lorem ipsum dolor sit amet", NULL, NULL, NULL },
		{ "d2", NULL, NULL, NULL, "zebra zebra zebra lorem ipsum dolor", NULL, NULL, NULL },
		{ "d3", NULL, NULL, NULL, "zebra zebra lorem", NULL, NULL, NULL },
		{ "d4", NULL, NULL, NULL, "zebra", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 4);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *plain = run(ix, "zebra", &o);
	CHECK_EQ(fathom_results_count(plain), 4);
	for (size_t i = 0; i < fathom_results_count(plain); i++) {
		const fathom_hit *h = fathom_results_hit(plain, i);
		const fathom_source_score *kw = fathom_hit_source(h, FATHOM_SOURCE_KEYWORD);
		CHECK_EQ(h->n_sources, 1);
		CHECK(kw && kw->rank == i + 1 && kw->score == h->score);
	}
	fake_rr f;
	memset(&f, 0, sizeof f);
	q_reranker rr = { rerank_by_length, &f, 0 };
	fathom_results *r = NULL;
	CHECK_OK(q_search_run(&r, ix, an, "zebra", &o, NULL, NULL, &rr));
	CHECK(f.calls == 1 && f.n == 4 && f.texts_ok);
	CHECK_STR(f.query, "zebra");
	CHECK_EQ(fathom_results_count(r), 4);
	static const char *const shortest_first[] = { "d4", "d3", "d2", "d1" };
	for (size_t i = 0; i < fathom_results_count(r) && i < 4; i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		CHECK_STR(h->doc_id, shortest_first[i]);
		CHECK_EQ(h->n_sources, 2);
		const fathom_source_score *kw = fathom_hit_source(h, FATHOM_SOURCE_KEYWORD);
		const fathom_source_score *rs = fathom_hit_source(h, FATHOM_SOURCE_RERANK);
		CHECK(rs && rs->rank == i + 1 && rs->score == -(double)(h->byte_end - h->byte_start));
		CHECK(rs && h->score == rs->score && h->sources[1].source == FATHOM_SOURCE_RERANK);
		/* the keyword rank and score are those of the plain search */
		for (size_t j = 0; kw && j < fathom_results_count(plain); j++) {
			const fathom_hit *p = fathom_results_hit(plain, j);
			if (p->chunk_id == h->chunk_id)
				CHECK(kw->rank == j + 1 && kw->score == p->score && h->bonus == p->bonus);
		}
		CHECK(h->n_fields == FATHOM_NFIELDS && h->field_score[FATHOM_FIELD_BODY] > 0);
		CHECK(strstr(h->snippet, "zebra") != NULL);
	}
	fathom_results_free(r);

	/* k 1 with a reranker reading 4: every source fetched 4, the
	 * reranker chose among them */
	o.k = 1;
	rr.depth = 4;
	CHECK_OK(q_search_run(&r, ix, an, "zebra", &o, NULL, NULL, &rr));
	CHECK_EQ(f.n, 4);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK_STR(hit_key(r, 0), "d4");
	fathom_results_free(r);
	/* depth 0 reads the k presented */
	o.k = 2;
	rr.depth = 0;
	CHECK_OK(q_search_run(&r, ix, an, "zebra", &o, NULL, NULL, &rr));
	CHECK_EQ(f.n, 2);
	CHECK_EQ(fathom_results_count(r), 2);
	fathom_results_free(r);
	/* a reranker's failure fails the search */
	f.fail = 1;
	r = (fathom_results *)&f;
	CHECK_EQ(q_search_run(&r, ix, an, "zebra", &o, NULL, NULL, &rr), FATHOM_EIO);
	CHECK(r == NULL);
	fathom_results_free(plain);
	drop_index(ix, dir);
}

/* Every allocation of a search through every stage (retrieve, fuse,
 * rerank, explain) failed in turn: FATHOM_ENOMEM and no results, or the
 * full answer; never a partial one, and nothing leaks (the sanitizer
 * build checks). */
static void test_alloc_failures(void)
{
	tdoc docs[] = {
		{ "d1", NULL, "zebra notes", NULL, "zebra zebra lorem ipsum dolor sit amet", NULL, NULL, NULL },
		{ "d2", NULL, NULL, NULL, "zebra lorem ipsum", NULL, NULL, NULL },
		{ "d3", NULL, NULL, NULL, "lorem zebra", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, 3);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	fake_rr f;
	memset(&f, 0, sizeof f);
	q_reranker rr = { rerank_by_length, &f, 0 };
	fathom_results *want = NULL;
	CHECK_OK(q_search_run(&want, ix, an, "zebra lorem", &o, NULL, NULL, &rr));
	CHECK_EQ(fathom_results_count(want), 3);
	fa_arena work;
	fa_arena_init(&work, 4096, 0);
	int failed = 0, done = 0;
	for (long n = 0; n < 100000 && want && !done; n++) {
		fathom_results *r = (fathom_results *)&f;
		fa_alloc_fail_after(n);
		int rc = q_search_run(&r, ix, an, "zebra lorem", &o, n % 2 ? &work : NULL, NULL, &rr);
		void *probe = fa_malloc(1);   /* NULL: the countdown ran out */
		fa_alloc_fail_after(-1);
		done = probe != NULL;
		fa_free(probe);
		if (rc) {
			failed++;
			CHECK_EQ(rc, FATHOM_ENOMEM);
			CHECK(r == NULL);
			continue;
		}
		CHECK_EQ(fathom_results_count(r), fathom_results_count(want));
		for (size_t i = 0; r && i < fathom_results_count(r) && i < fathom_results_count(want); i++) {
			const fathom_hit *a = fathom_results_hit(r, i), *b = fathom_results_hit(want, i);
			CHECK(a->chunk_id == b->chunk_id && a->score == b->score && a->n_sources == 2);
			CHECK(a->n_fields == b->n_fields && a->field_score[FATHOM_FIELD_BODY] ==
			                                      b->field_score[FATHOM_FIELD_BODY]);
			CHECK_STR(a->snippet, b->snippet);
		}
		fathom_results_free(r);
	}
	CHECK(done && failed > 10);
	fa_arena_free(&work);
	fathom_results_free(want);
	drop_index(ix, dir);
}

/* ---- CJK: one character finds the chunks that hold it, wherever it stands
 * in its run (first, inside, last, alone), over hand-made documents and
 * over a generated corpus checked against a scan of its texts. ---------- */

static void add_cjk(ix_index *ix, const char *key, const char *body)
{
	tdoc d = { key, NULL, NULL, NULL, body, NULL, NULL, NULL };
	add_doc(ix, &d);
}

/* Does the hit's body receipt list term, and does every highlight cover
 * exactly the bytes of term in the snippet? */
static int receipt_names(const fathom_hit *h, const char *term)
{
	if (!h || h->n_fields <= FATHOM_FIELD_BODY)
		return 0;
	int named = 0;
	for (uint32_t j = 0; j < h->n_matched[FATHOM_FIELD_BODY]; j++)
		named |= strcmp(h->matched[FATHOM_FIELD_BODY][j], term) == 0;
	size_t tl = strlen(term), sl = strlen(h->snippet);
	if (h->n_highlights == 0)
		return 0;
	for (uint32_t j = 0; j < h->n_highlights; j++) {
		const fathom_span *s = &h->highlights[j];
		if (s->len != tl || s->start + tl > sl || memcmp(h->snippet + s->start, term, tl) != 0)
			return 0;
	}
	return named;
}

#define RAIN "\xe9\x9b\xa8"       /* 雨 */
#define SNOW "\xe9\x9b\xaa"       /* 雪 */

static void test_cjk_positions(void)
{
	char *dir = test_tmpdir("cjk");
	ix_index *ix = NULL;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE | IX_WRITE, "english"));
	if (!ix)
		return;
	/* 雨 first in a run, inside one, last in an odd-length run, last in an
	 * even-length one before a Latin word, alone; and a run without it. */
	add_cjk(ix, "first", RAIN "\xe5\xa4\xa9\xe5\xbe\x88\xe5\x86\xb7");          /* 雨天很冷 */
	add_cjk(ix, "middle", "\xe4\xbb\x8a\xe5\xa4\xa9\xe4\xb8\x8b" RAIN "\xe4\xba\x86"); /* 今天下雨了 */
	add_cjk(ix, "last", "\xe4\xb8\x8b\xe5\xb0\x8f" RAIN);                      /* 下小雨 */
	add_cjk(ix, "pair", "\xe6\x98\xa5" RAIN " umbrella");                      /* 春雨 umbrella */
	add_cjk(ix, "alone", "a " RAIN " b");
	add_cjk(ix, "none", "\xe6\x99\xb4\xe5\xa4\xa9 umbrella");                 /* 晴天 */
	CHECK_OK(ix_commit(ix));

	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	o.k = 100;
	fathom_results *r = run(ix, RAIN, &o);
	CHECK_EQ(fathom_results_count(r), 5);
	const char *with[] = { "first", "middle", "last", "pair", "alone" };
	for (size_t i = 0; i < 5; i++) {
		CHECK(hit_of(r, with[i]) != NULL);
		/* The receipt says how: the character itself, highlighted. */
		CHECK(receipt_names(hit_of(r, with[i]), RAIN));
	}
	CHECK(hit_of(r, "none") == NULL);
	CHECK_STR(fathom_results_why(r), "");
	fathom_results_free(r);

	/* Absent: an honest empty answer naming the character. */
	r = run(ix, SNOW, &o);
	CHECK_EQ(fathom_results_count(r), 0);
	CHECK(strstr(fathom_results_why(r), SNOW) != NULL);
	CHECK(strstr(fathom_results_why(r), "no document") != NULL);
	fathom_results_free(r);

	/* Two characters stay one bigram: 天 then 很 only in "first". */
	r = run(ix, "\xe5\xa4\xa9\xe5\xbe\x88", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK(hit_of(r, "first") != NULL);
	fathom_results_free(r);
	/* 雨天 is a bigram of "first" alone, never its two characters apart. */
	r = run(ix, RAIN "\xe5\xa4\xa9", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK(hit_of(r, "first") != NULL);
	fathom_results_free(r);

	/* With a Latin word: every word required, then in any mode. */
	o.match = FATHOM_MATCH_ALL;
	r = run(ix, RAIN " umbrella", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK(hit_of(r, "pair") != NULL);
	fathom_results_free(r);
	r = run(ix, SNOW " umbrella", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	o.match = FATHOM_MATCH_ANY;
	r = run(ix, "umbrella " RAIN, &o);
	CHECK_EQ(fathom_results_count(r), 6);
	CHECK_STR(hit_of(r, "pair") ? fathom_results_hit(r, 0)->doc_id : "", "pair");
	fathom_results_free(r);
	/* A character at the end of its run is next to the word after it. */
	o.match = FATHOM_MATCH_AUTO;
	r = run(ix, "\"" RAIN " umbrella\"", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	CHECK(hit_of(r, "pair") != NULL);
	fathom_results_free(r);

	ix_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- a generated corpus, checked against a scan of its texts ------------- */

#define GEN_DOCS 240
#define GEN_POOL 160

static uint32_t rng = 12345;
static uint32_t next_rand(void)
{
	rng = rng * 1103515245u + 12345u;
	return rng >> 8;
}

/* The pool: Han, Hiragana, Katakana and Hangul characters, all NFKC-stable. */
static int32_t pool_cp(size_t i)
{
	if (i < 100)
		return 0x4E00 + (int32_t)(i * 97);
	if (i < 120)
		return 0x3042 + (int32_t)(i - 100) * 2;
	if (i < 140)
		return 0x30A2 + (int32_t)(i - 120) * 2;
	return 0xAC00 + (int32_t)(i - 140) * 131;
}

static size_t put_utf8(char *o, int32_t cp)
{
	o[0] = (char)(0xE0 | (cp >> 12));
	o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[2] = (char)(0x80 | (cp & 0x3F));
	return 3;
}

static void test_cjk_generated(void)
{
	static char body[GEN_DOCS][1200];
	char *dir = test_tmpdir("cjk");
	ix_index *ix = NULL;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE | IX_WRITE, "english"));
	if (!ix)
		return;
	static const char *latin[] = { "rain", "file", "open", "x86", "getName" };
	char key[GEN_DOCS][16];
	for (size_t d = 0; d < GEN_DOCS; d++) {
		size_t n = 0;
		/* Runs of 1 to 7 characters, from a Zipf-like choice (the low
		 * numbers often), apart by spaces, punctuation or Latin words. */
		while (n + 40 < sizeof body[d] - 100) {
			size_t run = 1 + next_rand() % 7;
			for (size_t k = 0; k < run; k++) {
				uint32_t a = next_rand() % GEN_POOL, b = next_rand() % GEN_POOL;
				n += put_utf8(body[d] + n, pool_cp(a < b ? a : b));
			}
			uint32_t sep = next_rand() % 4;
			const char *s = sep == 0 ? " " : sep == 1 ? "\xe3\x80\x82" /* 。 */
			                : sep == 2 ? ", " : latin[next_rand() % 5];
			size_t sl = strlen(s);
			memcpy(body[d] + n, s, sl);
			n += sl;
			if (sep == 3)
				body[d][n++] = ' ';
		}
		body[d][n] = '\0';
		snprintf(key[d], sizeof key[d], "g%zu", d);
		add_cjk(ix, key[d], body[d]);
	}
	CHECK_OK(ix_commit(ix));

	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	o.k = GEN_DOCS + 10;
	o.snippet_bytes = 0;
	size_t wrong = 0, nonempty = 0;
	/* Every pool character, and a few never used (pool_cp(i) for i past
	 * the pool may or may not be present: checked the same way). */
	for (size_t i = 0; i < GEN_POOL + 10; i++) {
		char q[8];
		size_t ql = put_utf8(q, i < GEN_POOL ? pool_cp(i) : 0x9F00 + (int32_t)i);
		q[ql] = '\0';
		fathom_results *r = run(ix, q, &o);
		if (!r)
			continue;
		size_t want = 0;
		for (size_t d = 0; d < GEN_DOCS; d++) {
			int has = strstr(body[d], q) != NULL;
			want += (size_t)has;
			if (has != (hit_of(r, key[d]) != NULL))
				wrong++;
		}
		if (want != fathom_results_count(r))
			wrong++;
		if (want == 0 && fathom_results_why(r)[0] == '\0')
			wrong++; /* an empty answer says why */
		nonempty += want > 0;
		fathom_results_free(r);
	}
	CHECK_EQ(wrong, 0);
	CHECK(nonempty >= GEN_POOL / 2);
	ix_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* The default never starves a query for its operators either: when a
 * phrase, a negation or an explicit AND/OR leaves it empty, its words
 * alone are ranked and the receipt says so; --strict, --match all and a
 * query scoped by a field keep the empty answer of the query as written,
 * and so does one whose words occur nowhere (with that reason). */
/* Under auto, a query its quoted phrases leave with no answer is read once
 * more with those phrases as words, and the receipt says so; explicit AND,
 * negations, field scopes, --strict and --match all keep the empty answer. */
static void test_phrase_relaxed(void)
{
	tdoc docs[] = {
		{ "ab", NULL, NULL, NULL, "alpha beta", NULL, NULL, NULL },
		{ "bg", NULL, NULL, NULL, "beta gamma", NULL, NULL, NULL },
		{ "ag", NULL, NULL, NULL, "alpha gamma", NULL, NULL, NULL },
	};
	char *dir;
	ix_index *ix = make_index(&dir, docs, sizeof docs / sizeof docs[0]);
	if (!ix)
		return;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	const char *q = "\"gamma alpha\" beta";
	fathom_results *r = run(ix, q, &o);
	CHECK_EQ(fathom_results_count(r), 3);
	const char *lit = r ? fathom_results_literal(r) : NULL;
	CHECK(lit && strstr(lit, "the quotes of a phrase that no chunk holds at column 1"));
	CHECK(r && strcmp(fathom_results_parsed(r), "(AND gamma alpha beta)") == 0);
	fathom_results_free(r);
	/* a phrase that matches is kept as a phrase, with no note */
	r = run(ix, "\"alpha gamma\" beta", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	lit = r ? fathom_results_literal(r) : NULL;
	CHECK(lit && !*lit);
	fathom_results_free(r);
	/* explicit AND and negations are never relaxed */
	r = run(ix, "alpha AND beta AND gamma", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	r = run(ix, "alpha -beta -gamma", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	r = run(ix, "beta -\"alpha beta\"", &o);
	CHECK_EQ(fathom_results_count(r), 1);
	fathom_results_free(r);
	o.strict = 1;
	r = run(ix, q, &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	o.strict = 0;
	o.match = FATHOM_MATCH_ALL;
	r = run(ix, q, &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	o.match = FATHOM_MATCH_AUTO;
	r = run(ix, "body:\"gamma alpha\"", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	/* words that occur nowhere: still "no results", with the reason of
	 * the query as written */
	r = run(ix, "\"qqqq rrrr\"", &o);
	CHECK_EQ(fathom_results_count(r), 0);
	const char *why = r ? fathom_results_why(r) : NULL;
	CHECK(why && strstr(why, "qqqq"));
	fathom_results_free(r);
	drop_index(ix, dir);
}

int main(void)
{
	if (text_analyzer_new(&an, "english") != 0) {
		printf("cannot make an analyser: %s\n", fathom_errmsg());
		return 1;
	}
	RUN(test_bm25f_hand_computed);
	RUN(test_field_weights);
	RUN(test_match_modes);
	RUN(test_never_starves);
	RUN(test_phrase_relaxed);
	RUN(test_phrases);
	RUN(test_identifiers);
	RUN(test_filters);
	RUN(test_tombstones);
	RUN(test_snippets);
	RUN(test_empty_and_none);
	RUN(test_route);
	RUN(test_router_shapes);
	RUN(test_parse_group_counts);
	RUN(test_rerank);
	RUN(test_alloc_failures);
	RUN(test_cjk_positions);
	RUN(test_cjk_generated);
	text_analyzer_free(an);
	return TEST_DONE();
}
