/*
 * test_prune.c — block-max pruning against the exhaustive reference.
 *
 * A generated corpus (Zipf-distributed vocabulary, a few thousand chunks
 * over several segments, deletions and replacements, varied fields) and
 * several hundred random queries in every mode, some with phrases,
 * identifiers, filters and unusual scoring parameters: the pruned top k
 * must equal the exhaustive top k exactly — the same chunks, in the same
 * order, with bit-identical scores. Prints how much less the pruned path
 * scored.
 */
#include <math.h>

#include "test.h"
#include "query/query.h"
#include "query/query_int.h"

#define NVOCAB 3000
#define NDOCS 1600
#define NQUERIES 400
#define MAXWORDS 160

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static uint32_t rnd_below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static char vocab[NVOCAB][16];
static double zipf_cdf[NVOCAB];

static const char *stopwords[] = { "the", "of", "and", "to", "in", "is", "it", "for" };

static void make_vocab(void)
{
	const char *cons = "bdfgklmnprstvz", *vows = "aeiou";
	size_t nst = sizeof stopwords / sizeof stopwords[0];
	for (size_t i = 0; i < NVOCAB; i++) {
		if (i < nst) {
			snprintf(vocab[i], sizeof vocab[i], "%s", stopwords[i]);
			continue;
		}
		/* Distinct by construction: the index in base 70 as syllables. */
		size_t v = i, n = 0;
		char w[16];
		do {
			w[n++] = cons[v % 14];
			w[n++] = vows[(v / 14) % 5];
			v /= 70;
		} while (v > 0 && n < 12);
		w[n++] = 'x'; /* keeps stemmers from folding words together */
		w[n] = '\0';
		snprintf(vocab[i], sizeof vocab[i], "%s", w);
	}
	double sum = 0.0;
	for (size_t i = 0; i < NVOCAB; i++) {
		sum += 1.0 / pow((double)(i + 1), 1.05);
		zipf_cdf[i] = sum;
	}
	for (size_t i = 0; i < NVOCAB; i++)
		zipf_cdf[i] /= sum;
}

static uint32_t zipf_word(void)
{
	double u = (double)(rnd() >> 11) / (double)(1ull << 53);
	uint32_t lo = 0, hi = NVOCAB - 1;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Append n Zipf words to buf; occasionally a camelCase identifier. */
static void append_words(char *buf, size_t cap, size_t n, uint32_t *words, size_t *nw)
{
	size_t len = strlen(buf);
	for (size_t i = 0; i < n && len + 40 < cap; i++) {
		uint32_t w = zipf_word();
		if (words && *nw < MAXWORDS)
			words[(*nw)++] = w;
		const char *sep = (i % 17 == 16) ? "\n" : " ";
		if (rnd_below(40) == 0) {
			uint32_t w2 = zipf_word();
			char cap2[16];
			snprintf(cap2, sizeof cap2, "%s", vocab[w2]);
			cap2[0] = (char)(cap2[0] - 'a' + 'A');
			len += (size_t)snprintf(buf + len, cap - len, "%s%s%s", vocab[w], cap2, sep);
		} else {
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", vocab[w], sep);
		}
	}
}

typedef struct doc_words {
	uint32_t w[MAXWORDS];
	size_t n;
} doc_words;

static doc_words saved[NDOCS];
static text_analyzer *an;

static const char *exts[] = { "c", "py", "md" };
static const char *langs[] = { "c", "python", "markdown" };
static const char *groups[] = { "grp=a", "grp=b", "grp=c" };

/* Add doc id; copy > 0 adds the copy numbered so of it under another key
 * (the caller replays the random state), whose chunks tie with the
 * original's on every score. */
static void add_generated_doc(ix_index *ix, uint32_t id, uint32_t copy)
{
	static char text[64 * 1024], title[256], path[128], key[32], tag[64];
	static char heads[3][128];
	ix_chunk_in ch[3];
	uint32_t ext = rnd_below(3), nch = 1 + rnd_below(3);
	if (copy)
		snprintf(key, sizeof key, "doc%u-copy%u", id, copy);
	else
		snprintf(key, sizeof key, "doc%u", id);
	snprintf(path, sizeof path, "dir%u/sub%u/%s.%s", id % 7, id % 3, vocab[zipf_word()], exts[ext]);
	title[0] = '\0';
	append_words(title, sizeof title, rnd_below(6), NULL, NULL);
	tag[0] = '\0';
	append_words(tag, sizeof tag, rnd_below(3), NULL, NULL);
	text[0] = '\0';
	saved[id].n = 0;
	for (uint32_t c = 0; c < nch; c++) {
		size_t start = strlen(text);
		append_words(text, sizeof text, 5 + rnd_below(120), c == 0 ? saved[id].w : NULL,
		             &saved[id].n);
		size_t end = strlen(text);
		heads[c][0] = '\0';
		append_words(heads[c], sizeof heads[c], rnd_below(5), NULL, NULL);
		memset(&ch[c], 0, sizeof ch[c]);
		ch[c].byte_start = (uint32_t)start;
		ch[c].byte_end = (uint32_t)end;
		ch[c].line_start = c + 1;
		ch[c].line_end = c + 1;
		ch[c].headings = heads[c];
		ch[c].headings_len = (uint32_t)strlen(heads[c]);
	}
	const char *tagp = tag;
	const char *meta = groups[id % 3];
	ix_doc_in in;
	memset(&in, 0, sizeof in);
	in.key = key;
	in.path = path;
	in.title = title;
	in.url = "";
	in.lang = langs[ext];
	in.kind = DOC_TEXT;
	in.tags = tag[0] ? &tagp : NULL;
	in.n_tags = tag[0] ? 1 : 0;
	in.meta = &meta;
	in.n_meta = 1;
	in.text = text;
	in.text_len = strlen(text);
	in.size = in.text_len;
	in.content_hash = fa_hash64(text, in.text_len, id);
	in.chunks = ch;
	in.n_chunks = nch;
	CHECK_OK(ix_add_doc(ix, an, &in));
}

static void build_corpus(ix_index *ix)
{
	static uint64_t doc_state[NDOCS];
	for (uint32_t id = 0; id < NDOCS; id++) {
		uint64_t state = rng_state;
		doc_state[id] = state;
		add_generated_doc(ix, id, 0);
		if (id % 40 == 7) {
			/* Ties: copies of this doc, in this segment and a later one. */
			uint64_t after = rng_state;
			rng_state = state;
			add_generated_doc(ix, id, 1);
			rng_state = after;
		}
		if (id % 320 == 319) {
			/* Delete a few committed docs, replace a few others. */
			for (int k = 0; k < 12; k++) {
				char key[32];
				uint32_t victim = rnd_below(id);
				snprintf(key, sizeof key, "doc%u", victim);
				int rc = ix_delete_doc(ix, key);
				CHECK(rc == 0 || rc == FATHOM_ENOTFOUND);
			}
			for (int k = 0; k < 8; k++)
				add_generated_doc(ix, rnd_below(id), 0);
			CHECK_OK(ix_commit(ix));
			/* Ties across segments: copies of earlier docs in the next one. */
			for (uint32_t k = 0; k < 4; k++) {
				uint32_t v = rnd_below(id);
				uint64_t after = rng_state;
				rng_state = doc_state[v];
				add_generated_doc(ix, v, 2 + k);
				rng_state = after;
			}
		}
	}
	CHECK_OK(ix_commit(ix));
}

/* One time in `one_in` each: a metadata filter, a path glob, a language. */
static void random_filter(fathom_search_opts *o, uint32_t one_in)
{
	static const char *filters[1];
	static const char *globs[] = { "*.py", "dir3/*", "dir1/sub1/*.c" };
	switch (rnd_below(one_in)) {
	case 0:
		filters[0] = groups[rnd_below(3)];
		o->filters = filters;
		o->n_filters = 1;
		break;
	case 1:
		o->path_glob = globs[rnd_below(3)];
		break;
	case 2:
		o->lang = langs[rnd_below(3)];
		break;
	default:
		break;
	}
}

static void make_query(char *q, size_t cap, fathom_search_opts *o)
{
	fathom_search_opts def = FATHOM_SEARCH_OPTS_INIT;
	static const uint32_t ks[] = { 1, 5, 10, 50 };
	*o = def;
	o->k = ks[rnd_below(4)];
	o->match = (int)rnd_below(3);
	size_t n = 1 + rnd_below(8), len = 0;
	q[0] = '\0';
	static const char *scopes[] = { "title:", "body:", "path:", "headings:" };
	int dialect = rnd_below(3) == 0;   /* a third of the queries use operators */
	for (size_t i = 0; i < n && len + 80 < cap; i++) {
		uint32_t w = rnd_below(3) ? zipf_word() : rnd_below(NVOCAB / 2);
		if (dialect) {
			switch (rnd_below(8)) {
			case 0:
				len += (size_t)snprintf(q + len, cap - len, "-%s ", vocab[w]);
				continue;
			case 1:
				if (i > 0)
					len += (size_t)snprintf(q + len, cap - len, "OR ");
				break;
			case 2:
				len += (size_t)snprintf(q + len, cap - len, "%s",
				                        scopes[rnd_below(4)]);
				break;
			case 3:
				len += (size_t)snprintf(q + len, cap - len, "%.3s* ", vocab[w]);
				continue;
			case 4:
				len += (size_t)snprintf(q + len, cap - len, "%s(%s OR %s) ",
				                        rnd_below(4) ? "" : "-", vocab[w],
				                        vocab[zipf_word()]);
				continue;
			default:
				break;
			}
		}
		if (rnd_below(12) == 0) {
			char w2[16];
			snprintf(w2, sizeof w2, "%s", vocab[zipf_word()]);
			w2[0] = (char)(w2[0] - 'a' + 'A');
			len += (size_t)snprintf(q + len, cap - len, "%s%s ", vocab[w], w2);
		} else {
			len += (size_t)snprintf(q + len, cap - len, "%s ", vocab[w]);
		}
	}
	if (rnd_below(5) == 0) {
		/* A phrase that some document holds. */
		doc_words *d = &saved[rnd_below(NDOCS)];
		if (d->n >= 3) {
			size_t at = rnd_below((uint32_t)d->n - 2), m = 2 + rnd_below(2);
			len += (size_t)snprintf(q + len, cap - len, "\"");
			for (size_t i = 0; i < m; i++)
				len += (size_t)snprintf(q + len, cap - len, "%s%s", vocab[d->w[at + i]],
				                        i + 1 < m ? " " : "");
			snprintf(q + len, cap - len, "\"");
		}
	}
	random_filter(o, 10);
	if (rnd_below(5) == 0) {
		static float w[FATHOM_NFIELDS];
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			w[f] = (float)rnd_below(50) / 10.0f;
		o->field_weights = w;
		o->n_field_weights = FATHOM_NFIELDS;
		o->k1 = (float)rnd_below(30) / 10.0f;
		o->b = (float)rnd_below(11) / 10.0f;
		o->phrase_bonus = 1.0f + (float)rnd_below(20) / 10.0f;
		o->prefix_bonus = 1.0f + (float)rnd_below(20) / 10.0f;
	}
}

/* A long query, as an agent sends one: 2 to 40 words (mostly 10 to 30), some
 * stop words, some repeated, sometimes ending like a sentence; often the
 * words of one document in order, so the phrase and prefix bonuses are
 * earned; AUTO (a short keyword query earns the coordination bonus) or ANY,
 * k from 1 to 100, sometimes a filter, sometimes other scoring parameters. */
static void make_long_query(char *q, size_t cap, fathom_search_opts *o)
{
	fathom_search_opts def = FATHOM_SEARCH_OPTS_INIT;
	static const uint32_t ks[] = { 1, 2, 3, 10, 10, 20, 100 };
	*o = def;
	o->k = ks[rnd_below(7)];
	o->match = rnd_below(2) ? FATHOM_MATCH_AUTO : FATHOM_MATCH_ANY;
	size_t n, len = 0;
	switch (rnd_below(4)) {
	case 0:
		n = 2 + rnd_below(3); /* a keyword query: coordination under AUTO */
		break;
	case 1:
		n = 5 + rnd_below(36);
		break;
	default:
		n = 10 + rnd_below(21);
		break;
	}
	size_t nst = sizeof stopwords / sizeof stopwords[0];
	int stop_ok = n > 4 || rnd_below(2);
	doc_words *d = &saved[rnd_below(NDOCS)];
	size_t from = rnd_below(3) == 0 && d->n > 0 ? rnd_below((uint32_t)d->n) : SIZE_MAX;
	q[0] = '\0';
	for (size_t i = 0; i < n && len + 40 < cap; i++) {
		uint32_t w;
		if (from != SIZE_MAX && from + i < d->n)
			w = d->w[from + i];            /* the document's words in order */
		else if (stop_ok && rnd_below(6) == 0)
			w = rnd_below((uint32_t)nst);  /* a stop word */
		else
			w = rnd_below(4) ? zipf_word() : rnd_below(NVOCAB);
		len += (size_t)snprintf(q + len, cap - len, "%s ", vocab[w]);
	}
	if (rnd_below(3) == 0 && len > 0)
		q[len - 1] = '.';
	random_filter(o, 8);
	if (rnd_below(6) == 0) {
		o->k1 = (float)rnd_below(30) / 10.0f;
		o->b = (float)rnd_below(11) / 10.0f;
		o->phrase_bonus = 1.0f + (float)rnd_below(30) / 10.0f;
		o->prefix_bonus = 1.0f + (float)rnd_below(30) / 10.0f;
	}
}

/* Run nq queries from gen pruned and exhaustively; every answer must be
 * the same, bit for bit. */
static void compare(ix_index *ix, void (*gen)(char *, size_t, fathom_search_opts *), int nq,
                    const char *what)
{
	uint64_t scored_pruned = 0, scored_full = 0, hits = 0, ties = 0;
	int mismatches = 0, with_hits = 0, errors = 0;
	for (int qi = 0; qi < nq; qi++) {
		char q[1024];
		fathom_search_opts o;
		gen(q, sizeof q, &o);
		fathom_results *rp = NULL, *re = NULL;
		int rc1 = q_search(&rp, ix, an, q, &o);
		o.exhaustive = 1;
		int rc2 = q_search(&re, ix, an, q, &o);
		CHECK_EQ(rc1, rc2);
		if (rc1 || rc2) {
			errors++;
			if (rc1 != rc2 || rc1 != FATHOM_EINVAL)
				fprintf(stderr, "  query [%s]: %s\n", q, fathom_errmsg());
			fathom_results_free(rp);
			fathom_results_free(re);
			continue;
		}
		size_t n = fathom_results_count(rp);
		int bad = n != fathom_results_count(re);
		for (size_t i = 0; !bad && i < n; i++) {
			const fathom_hit *a = fathom_results_hit(rp, i), *b = fathom_results_hit(re, i);
			bad = a->chunk_id != b->chunk_id || a->score != b->score || a->bonus != b->bonus;
		}
		if (bad) {
			mismatches++;
			if (mismatches <= 5) {
				fprintf(stderr, "  mismatch on [%s] k=%u mode=%d: %zu vs %zu hits\n", q,
				        o.k, o.match, n, fathom_results_count(re));
				for (size_t i = 0; i < n || i < fathom_results_count(re); i++) {
					const fathom_hit *a = fathom_results_hit(rp, i);
					const fathom_hit *b = fathom_results_hit(re, i);
					fprintf(stderr, "    %2zu %16llx %.17g | %16llx %.17g\n", i,
					        a ? (unsigned long long)a->chunk_id : 0ull, a ? a->score : 0.0,
					        b ? (unsigned long long)b->chunk_id : 0ull, b ? b->score : 0.0);
				}
			}
		}
		for (size_t i = 1; i < n; i++)
			ties += fathom_results_hit(rp, i)->score == fathom_results_hit(rp, i - 1)->score;
		with_hits += n > 0;
		hits += n;
		scored_pruned += fathom_results_scored(rp);
		scored_full += fathom_results_scored(re);
		fathom_results_free(rp);
		fathom_results_free(re);
	}
	CHECK_EQ(mismatches, 0);
	CHECK(errors < nq / 10);   /* mostly valid queries */
	CHECK(with_hits > nq / 2); /* the queries exercise real rankings */
	CHECK(scored_pruned < scored_full);
	CHECK(ties > 0);           /* hits of equal score, ordered by id */
	printf("%s: %d queries (%d with hits, %llu hits, %llu ties): pruned scored %.1f chunks per query, "
	       "exhaustive %.1f (%.1f%% fewer)\n", what, nq, with_hits, (unsigned long long)hits,
	       (unsigned long long)ties,
	       (double)scored_pruned / nq, (double)scored_full / nq,
	       scored_full ? 100.0 * (1.0 - (double)scored_pruned / (double)scored_full) : 0.0);
}

static void test_pruned_equals_exhaustive(void)
{
	char *dir = test_tmpdir("prune");
	ix_index *ix = NULL;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE | IX_WRITE, "english"));
	if (!ix)
		return;
	make_vocab();
	build_corpus(ix);
	printf("corpus: %zu segments, %llu chunks\n", ix_nsegments(ix),
	       (unsigned long long)ix_total_chunks(ix));
	/* every segment term at a time, then none (block-max MaxScore) */
	uint32_t taat_max = q_taat_max_chunks;
	q_taat_max_chunks = UINT32_MAX;
	compare(ix, make_query, NQUERIES, "dialect queries, term at a time");
	compare(ix, make_long_query, NQUERIES, "long queries, term at a time");
	q_taat_max_chunks = 0;
	compare(ix, make_query, NQUERIES, "dialect queries, MaxScore");
	compare(ix, make_long_query, NQUERIES, "long queries, MaxScore");
	q_taat_max_chunks = taat_max;
	ix_close(ix);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	if (text_analyzer_new(&an, "english") != 0) {
		printf("cannot make an analyser: %s\n", fathom_errmsg());
		return 1;
	}
	RUN(test_pruned_equals_exhaustive);
	text_analyzer_free(an);
	return TEST_DONE();
}
