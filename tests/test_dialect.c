/*
 * test_dialect.c — the query dialect's conformance suite (docs/QUERY.md).
 *
 * Each case is a query, what it must parse to (the canonical form of
 * fathom_results_parsed, or "!" and a piece of the error message), and for
 * most the exact set of documents it must return on a fixture corpus built
 * here. Every case runs pruned and exhaustive, which must agree.
 */
#include <stdint.h>

#include "fathom.h"
#include "test.h"

typedef struct dcase {
	const char *q;
	const char *parsed;   /* canonical form, or "!error text" */
	const char *ids;      /* sorted doc ids separated by spaces; NULL: not checked */
	int match;            /* FATHOM_MATCH_* */
} dcase;

#define AUTO FATHOM_MATCH_AUTO
#define ALL FATHOM_MATCH_ALL
#define ANY FATHOM_MATCH_ANY

static const dcase cases[] = {
	/* words, AND */
	{ "apple", "apple", "d1 d17 d2 d4 d5", AUTO },
	/* the default ranks: every chunk with either word (both first);
	 * ALL, or an explicit AND, requires both */
	{ "apple banana", "(AND apple banana)", "d1 d17 d2 d3 d4 d5", AUTO },
	{ "apple banana", "(AND apple banana)", "d1 d4", ALL },
	{ "apple & banana", "(AND apple banana)", "d1 d4", AUTO },
	{ "apple && banana", "(AND apple banana)", "d1 d4", AUTO },
	{ "apple AND banana", "(AND apple banana)", "d1 d4", AUTO },
	{ "apple - banana", "(AND apple banana)", "d1 d4", ALL },
	{ "apple banana cherry", "(AND apple banana cherry)", "d4", ALL },
	{ "apple zzzz", "(AND apple zzzz)", "", ALL },
	{ "apple zzzz", "(AND apple zzzz)", "d1 d17 d2 d4 d5", AUTO },
	{ "zzzz", "zzzz", "", AUTO },
	{ "apple zzzz", "(AND apple zzzz)", "d1 d17 d2 d4 d5", ANY },
	/* phrases */
	{ "\"quick brown\"", "\"quick brown\"", "d9", AUTO },
	{ "\"brown quick\"", "\"brown quick\"", "d10", AUTO },
	{ "quick brown", "(AND quick brown)", "d10 d9", AUTO },
	{ "\"rate limiting\"", "\"rate limiting\"", "d19", AUTO },
	{ "\"limiting rate\"", "\"limiting rate\"", "", ALL },
	/* OR */
	{ "apple OR durian", "(OR apple durian)", "d1 d17 d2 d4 d5", AUTO },
	{ "apple | durian", "(OR apple durian)", "d1 d17 d2 d4 d5", AUTO },
	{ "apple || durian", "(OR apple durian)", "d1 d17 d2 d4 d5", AUTO },
	{ "elderberry OR honeydew OR lemon", "(OR elderberry honeydew lemon)", "d13 d15 d16", AUTO },
	{ "apple banana OR cherry durian", "(AND apple (OR banana cherry) durian)", "", AUTO },
	{ "fig grape OR kiwi", "(AND fig (OR grape kiwi))", "d13 d14", AUTO },
	{ "apple OR zzzz", "(OR apple zzzz)", "d1 d17 d2 d4 d5", AUTO },
	{ "zzzz OR yyyy", "(OR zzzz yyyy)", "", AUTO },
	/* lowercase "or" is a word, a stop word: AUTO ranks the sentence */
	{ "apple or durian", "(AND apple or durian)", "d1 d17 d2 d4 d5", AUTO },
	/* negation */
	{ "banana -apple", "(AND banana (NOT apple))", "d3", AUTO },
	{ "-apple banana", "(AND (NOT apple) banana)", "d3", AUTO },
	{ "!apple banana", "(AND (NOT apple) banana)", "d3", AUTO },
	{ "apple -pie", "(AND apple (NOT pie))", "d1 d2 d4 d5", AUTO },
	{ "cherry -apple -banana", "(AND cherry (NOT apple) (NOT banana))", "", AUTO },
	{ "fox -\"quick brown\"", "(AND fox (NOT \"quick brown\"))", "d10", AUTO },
	{ "-\"quick brown\" fox", "(AND (NOT \"quick brown\") fox)", "d10", AUTO },
	{ "rate -limiting", "(AND rate (NOT limiting))", "", AUTO },
	{ "gateway -\"rate limiting\"", "(AND gateway (NOT \"rate limiting\"))", "", AUTO },
	{ "gateway -\"limiting rate\"", "(AND gateway (NOT \"limiting rate\"))", "d19", AUTO },
	{ "apple -banana", "(AND apple (NOT banana))", "d17 d2 d5", ANY },
	/* a '-' before a number alone is a minus sign; '!' still negates */
	{ "fig -2", "(AND fig -2)", NULL, AUTO },
	{ "fig -2.5, -3", "(AND fig -2.5, -3)", NULL, AUTO },
	{ "fig !2", "(AND fig (NOT 2))", NULL, AUTO },
	{ "fig -2a", "(AND fig (NOT 2a))", NULL, AUTO },
	/* De Morgan: B -A -C and A OR B -C -D */
	{ "grape -fig -kiwi", "(AND grape (NOT fig) (NOT kiwi))", "", AUTO },
	{ "fig -elderberry -kiwi", "(AND fig (NOT elderberry) (NOT kiwi))", "d14", AUTO },
	{ "apple OR banana -cherry -durian", "(AND (OR apple banana) (NOT cherry) (NOT durian))",
	  "d1 d17", AUTO },
	{ "apple OR banana -cherry", "(AND (OR apple banana) (NOT cherry))", "d1 d17 d5", AUTO },
	{ "(apple OR banana) -(cherry OR durian)", "(AND (OR apple banana) (NOT (OR cherry durian)))",
	  "d1 d17", AUTO },
	{ "apple -(banana cherry)", "(AND apple (NOT (AND banana cherry)))", "d1 d17 d2 d5", AUTO },
	{ "-(apple banana) cherry", "(AND (NOT (AND apple banana)) cherry)", "d2 d3", AUTO },
	{ "fig -(elderberry OR honeydew)", "(AND fig (NOT (OR elderberry honeydew)))", "d14", AUTO },
	/* Korean: 여자 -남자 -50대 */
	{ "여자 -남자 -50대", "(AND 여자 (NOT 남자) (NOT 50대))", "d6", AUTO },
	{ "여자", "여자", "d6 d8", AUTO },
	{ "친구 -여자", "(AND 친구 (NOT 여자))", "d7", AUTO },
	{ "친구 OR 모임", "(OR 친구 모임)", "d6 d7 d8", AUTO },
	/* parentheses */
	{ "((apple))", "apple", "d1 d17 d2 d4 d5", AUTO },
	{ "(apple banana) OR cherry", "(OR (AND apple banana) cherry)", "d1 d2 d3 d4", AUTO },
	{ "(fig OR kiwi) (grape OR honeydew)", "(AND (OR fig kiwi) (OR grape honeydew))",
	  "d13 d14 d15", AUTO },
	{ "(fig grape) OR (honeydew kiwi)", "(OR (AND fig grape) (AND honeydew kiwi))",
	  "d13 d14 d15", AUTO },
	{ "apple OR banana cherry", "(AND (OR apple banana) cherry)", "d2 d3 d4", AUTO },
	{ "apple OR banana cherry", "(AND (OR apple banana) cherry)", "d1 d17 d2 d3 d4 d5", ANY },
	/* field scopes */
	{ "title:apple", "title:apple", "d5", AUTO },
	{ "title:grape", "title:grape", "d15", AUTO },
	{ "body:grape", "body:grape", "d13 d14", AUTO },
	{ "grape -title:grape", "(AND grape (NOT title:grape))", "d13 d14", AUTO },
	{ "path:auth", "path:auth", "d11", AUTO },
	{ "path:login OR title:notes", "(OR path:login title:notes)", "d11 d12 d15", AUTO },
	{ "title:\"grape notes\"", "title:\"grape notes\"", "d15", AUTO },
	{ "body:\"grape notes\"", "body:\"grape notes\"", "", AUTO },
	{ "title:(apple OR grape)", "(OR title:apple title:grape)", "d15 d5", AUTO },
	{ "headings:install", "headings:install", "d16", AUTO },
	{ "lemon headings:install", "(AND lemon headings:install)", "d16", AUTO },
	{ "tags:release", "tags:release", "d12", AUTO },
	{ "title:path:apple", "!a field scope inside another", NULL, AUTO },
	/* prefixes */
	{ "grap*", "grap*", "d13 d14 d15", AUTO },
	{ "auth*", "auth*", "d11 d12", AUTO },
	{ "elder* fig", "(AND elder* fig)", "d13", AUTO },
	{ "fig -elder*", "(AND fig (NOT elder*))", "d14", AUTO },
	{ "zzzz*", "zzzz*", "", AUTO },
	{ "x*", "!at least 2 characters", NULL, AUTO },
	/* filters written in the query */
	{ "fig library:alpha", "fig library=alpha", "d13", AUTO },
	{ "fig library:beta version:2", "fig library=beta version=2", "d14", AUTO },
	{ "fig library:\"beta\"", "fig library=beta", "d14", AUTO },
	{ "fig system:linux", "fig system=linux", "d14", AUTO },
	{ "fig library:gamma", "fig library=gamma", "", AUTO },
	{ "handle_login lang:c", "handle_login lang=c", "d11", AUTO },
	{ "fig lang:c", "fig lang=c", "", AUTO },
	{ "(fig library:alpha)", "!a filter applies to the whole query", NULL, AUTO },
	{ "-library:alpha fig", "!a filter applies to the whole query", NULL, AUTO },
	{ "fig OR library:alpha", "!a filter", NULL, AUTO },
	{ "library:alpha", "!filters but no terms", NULL, AUTO },
	/* words that look like operators but are not */
	{ "handle_login()", "handle_login()", "d11", AUTO },
	{ "std::vector", "std::vector", "d18", AUTO },
	{ "--verbose", "--verbose", "d20", AUTO },
	{ "apple-pie", "apple-pie", "d17", AUTO },
	{ "apple pie", "(AND apple pie)", "d17", ALL },
	{ "v2.0.1", "v2.0.1", "d12", AUTO },
	/* an identifier keeps its field scope, and a prefix is no identifier */
	{ "title:v2.0.1", "title:v2.0.1", "", AUTO },
	{ "body:v2.0.1", "body:v2.0.1", "d12", AUTO },
	{ "v2.0*", "v2.0*", "d12", AUTO },
	{ "unknown:fig", "unknown:fig", "", ALL },
	{ "title:", "title:", NULL, AUTO },
	/* errors: a column and what was expected */
	{ "OR apple", "!column 1: OR needs a term before it", NULL, AUTO },
	{ "apple OR", "!column 7: OR needs a term after it", NULL, AUTO },
	{ "apple OR OR banana", "!column 7: OR needs a term after it", NULL, AUTO },
	{ "apple OR -banana", "!column 10: a negation cannot be an OR alternative", NULL, AUTO },
	{ "(apple", "!column 1: this '(' is never closed", NULL, AUTO },
	{ "apple (banana", "!column 7: this '(' is never closed", NULL, AUTO },
	{ "apple)", "!column 6: ')' without a '(' before it", NULL, AUTO },
	{ "\"apple", "!column 1: this quote is never closed", NULL, AUTO },
	{ "apple \"banana", "!column 7: this quote is never closed", NULL, AUTO },
	{ "()", "!column 1: empty parentheses", NULL, AUTO },
	{ "여자 OR", "!column 4: OR needs a term after it", NULL, AUTO },
	{ "-(-apple) banana", "!negation inside a negation", NULL, AUTO },
	{ "-apple", "!at least one term that is not negated", NULL, AUTO },
	{ "-apple -banana", "!at least one term that is not negated", NULL, AUTO },
	{ "-(apple OR banana)", "!at least one term that is not negated", NULL, AUTO },
	{ "", "!empty query", NULL, AUTO },
	{ "   ", "!empty query", NULL, AUTO },
	{ "((((((((((((((((((apple))))))))))))))))))", "!nested more than 16 deep", NULL, AUTO },
	{ "(((((((((((((((apple)))))))))))))))", "apple", "d1 d17 d2 d4 d5", AUTO },
};

typedef struct fixture_doc {
	const char *id, *title, *body, *path, *tag, *meta[3];
} fixture_doc;

static const fixture_doc docs[] = {
	{ "d1", "one", "apple banana", NULL, NULL, { NULL } },
	{ "d2", "two", "apple cherry", NULL, NULL, { NULL } },
	{ "d3", "three", "banana cherry", NULL, NULL, { NULL } },
	{ "d4", "four", "apple banana cherry", NULL, NULL, { NULL } },
	{ "d5", "Apple guide", "durian", NULL, NULL, { NULL } },
	{ "d6", "k1", "여자 친구", NULL, NULL, { NULL } },
	{ "d7", "k2", "남자 친구", NULL, NULL, { NULL } },
	{ "d8", "k3", "여자 50대 모임", NULL, NULL, { NULL } },
	{ "d9", "f1", "quick brown fox", NULL, NULL, { NULL } },
	{ "d10", "f2", "brown quick fox", NULL, NULL, { NULL } },
	{ "d11", "login", "handle_login() calls authenticate", "src/auth/login.c", NULL, { NULL } },
	{ "d12", "notes", "version notes v2.0.1 authentication", NULL, "release", { NULL } },
	{ "d13", "e", "elderberry fig grape", NULL, NULL, { "library=alpha", "version=1", NULL } },
	{ "d14", "f", "fig grape", NULL, NULL, { "library=beta", "version=2", "system=linux" } },
	{ "d15", "Grape notes", "honeydew kiwi", NULL, NULL, { NULL } },
	{ "d16", "setup", "# Install guide\n\nlemon mango steps\n", "docs/setup.md", NULL, { NULL } },
	{ "d17", "pie", "apple-pie recipe", NULL, NULL, { NULL } },
	{ "d18", "cpp", "std::vector usage and operator overloading", NULL, NULL, { NULL } },
	{ "d19", "api", "rate limiting for the API gateway", NULL, NULL, { NULL } },
	{ "d20", "cli", "--verbose flag prints more", NULL, NULL, { NULL } },
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct doc ids of r, sorted, space-separated. */
static void ids_of(const fathom_results *r, char *out, size_t cap)
{
	const char *ids[64];
	size_t n = 0;
	for (size_t i = 0; i < fathom_results_count(r) && n < 64; i++) {
		const char *id = fathom_results_hit(r, i)->doc_id;
		int dup = 0;
		for (size_t j = 0; j < n; j++)
			dup |= strcmp(ids[j], id) == 0;
		if (!dup)
			ids[n++] = id;
	}
	qsort(ids, n, sizeof *ids, cmp_str);
	out[0] = '\0';
	size_t len = 0;
	for (size_t i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? " " : "", ids[i]);
}

static fathom_index *ix;

static void build(const char *dir)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
		const fixture_doc *d = &docs[i];
		size_t nm = 0;
		while (nm < 3 && d->meta[nm])
			nm++;
		fathom_doc fd = { d->id, d->title, d->body, strlen(d->body), NULL,
		                  d->tag ? &d->tag : NULL, d->tag ? 1 : 0, d->meta, nm, d->path };
		CHECK_OK(fathom_add_doc(ix, &fd, NULL));
		if (i == 9)
			CHECK_OK(fathom_commit(ix));   /* two segments */
	}
	CHECK_OK(fathom_commit(ix));
}

static void test_conformance(void)
{
	char *dir = test_tmpdir("dialect");
	build(dir);
	size_t n = sizeof cases / sizeof cases[0], checked = 0, with_results = 0;
	for (size_t i = 0; i < n; i++) {
		const dcase *c = &cases[i];
		fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
		o.k = 50;
		o.match = c->match;
		fathom_results *r = NULL, *rx = NULL;
		/* Lenient (the default): a syntax error of the strict reading
		 * is read literally, and said so; a well-formed query reads the
		 * same, with nothing read literally. */
		int rc = fathom_search(&r, ix, c->q, &o);
		if (c->parsed[0] == '!' && !strstr(c->parsed, "empty query") &&
		    !strstr(c->parsed, "at least 2 characters")) {
			/* "()" parses (as punctuation) but holds no word to search */
			int nothing = rc == FATHOM_EINVAL && strstr(fathom_errmsg(), "no searchable terms");
			if (!nothing && (rc != 0 || !*fathom_results_literal(r))) {
				fprintf(stderr, "  case %zu [%s]: lenient: rc %d \"%s\", read literally \"%s\"\n",
				        i, c->q, rc, rc ? fathom_errmsg() : "", fathom_results_literal(r));
				test_failed_checks++;
			}
		} else if (c->parsed[0] != '!') {
			if (rc != 0 || strcmp(fathom_results_parsed(r), c->parsed) != 0 ||
			    *fathom_results_literal(r)) {
				fprintf(stderr, "  case %zu [%s]: lenient: rc %d, parsed %s, read literally \"%s\"\n",
				        i, c->q, rc, rc ? fathom_errmsg() : fathom_results_parsed(r),
				        fathom_results_literal(r));
				test_failed_checks++;
			}
		}
		fathom_results_free(r);
		r = NULL;
		/* Strict: today's errors, with their columns. */
		o.strict = 1;
		rc = fathom_search(&r, ix, c->q, &o);
		if (c->parsed[0] == '!') {
			if (rc == 0 || !strstr(fathom_errmsg(), c->parsed + 1)) {
				fprintf(stderr, "  case %zu [%s]: want error \"%s\", got %d \"%s\"\n", i, c->q,
				        c->parsed + 1, rc, rc ? fathom_errmsg() : fathom_results_parsed(r));
				test_failed_checks++;
			}
			fathom_results_free(r);
			checked++;
			continue;
		}
		if (rc) {
			fprintf(stderr, "  case %zu [%s]: %s\n", i, c->q, fathom_errmsg());
			test_failed_checks++;
			continue;
		}
		if (strcmp(fathom_results_parsed(r), c->parsed) != 0) {
			fprintf(stderr, "  case %zu [%s]: parsed as %s, want %s\n", i, c->q,
			        fathom_results_parsed(r), c->parsed);
			test_failed_checks++;
		}
		if (c->ids) {
			char got[512];
			ids_of(r, got, sizeof got);
			if (strcmp(got, c->ids) != 0) {
				fprintf(stderr, "  case %zu [%s] mode %d: got {%s}, want {%s}\n", i, c->q,
				        c->match, got, c->ids);
				test_failed_checks++;
			}
			with_results++;
		}
		/* The reference scorer agrees, hit for hit. */
		o.exhaustive = 1;
		CHECK_OK(fathom_search(&rx, ix, c->q, &o));
		CHECK_EQ(fathom_results_count(r), fathom_results_count(rx));
		for (size_t h = 0; h < fathom_results_count(r) && h < fathom_results_count(rx); h++) {
			CHECK_EQ(fathom_results_hit(r, h)->chunk_id, fathom_results_hit(rx, h)->chunk_id);
			CHECK(fathom_results_hit(r, h)->score == fathom_results_hit(rx, h)->score);
		}
		fathom_results_free(r);
		fathom_results_free(rx);
		checked++;
	}
	printf("     %zu conformance cases (%zu with their results checked)\n", checked, with_results);
	CHECK(checked >= 80);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* Lenient reading: what the strict dialect refuses is read literally, and
 * the receipt says what and where. */
static const struct {
	const char *q, *parsed, *literal;
} lenient_cases[] = {
	{ "apple (banana", "(AND apple banana)", "unclosed '(' at column 7" },
	{ "apple) banana", "(AND apple banana)", "')' without a '(' at column 6" },
	{ "apple \"banana", "(AND apple banana)", "unclosed '\"' at column 7" },
	{ "apple OR", "(AND apple OR)", "OR with no term after it at column 7" },
	{ "OR apple", "(AND OR apple)", "OR with no term before it at column 1" },
	{ "apple | ", "(AND apple |)", "OR with no term after it at column 7" },
	{ "-apple", "-apple", "'-' in a query of negations only at column 1" },
	{ "fig library:alpha OR x", "(AND fig (OR library:alpha x))",
	  "a filter as an OR alternative at column 5" },
	{ "library:alpha", "library:alpha", "a filter with no terms at column 1" },
	{ "(apple OR -banana)", "(OR apple -banana)", "a negation as an OR alternative at column 11" },
	{ "apple () banana", "(AND apple banana)", "empty '()' at column 7" },
	{ "title:path:apple", "title:path:apple", "a field inside another field at column 7" },
	{ "Mulberry leaves (Morus alba", "(AND Mulberry leaves Morus alba)",
	  "unclosed '(' at column 17" },
	{ "of (-)-epicatechin", "(AND of - -epicatechin)", "an operator before ')' at column 5" },
	{ "(a (b \"c", "(AND a b c)",
	  "unclosed '\"' at column 7; unclosed '(' at column 4; unclosed '(' at column 1" },
};

static void test_lenient(void)
{
	char *dir = test_tmpdir("dialect-lenient");
	build(dir);
	for (size_t i = 0; i < sizeof lenient_cases / sizeof lenient_cases[0]; i++) {
		fathom_results *r = NULL;
		int rc = fathom_search(&r, ix, lenient_cases[i].q, NULL);
		if (rc || strcmp(fathom_results_parsed(r), lenient_cases[i].parsed) ||
		    strcmp(fathom_results_literal(r), lenient_cases[i].literal)) {
			fprintf(stderr, "  [%s]: rc %d %s, parsed %s, read literally \"%s\"\n",
			        lenient_cases[i].q, rc, rc ? fathom_errmsg() : "",
			        r ? fathom_results_parsed(r) : "", r ? fathom_results_literal(r) : "");
			test_failed_checks++;
		}
		fathom_results_free(r);
	}
	/* blanks alone are still no query */
	fathom_results *r = NULL;
	CHECK_EQ(fathom_search(&r, ix, "  ", NULL), FATHOM_EINVAL);
	/* strict keeps the column; version 3 of the options (no strict) is lenient */
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.strict = 1;
	CHECK_EQ(fathom_search(&r, ix, "Mulberry leaves (Morus alba", &so), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "column 17: this '(' is never closed"));
	CHECK_OK(fathom_search_opts_init(&so, 3));
	CHECK_OK(fathom_search(&r, ix, "apple (banana", &so));
	CHECK(strcmp(fathom_results_literal(r), "unclosed '(' at column 7") == 0);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* A negated term is looked up but never scored, never required. */
static void test_negated_terms(void)
{
	char *dir = test_tmpdir("dialect-neg");
	build(dir);
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, "banana -apple", NULL));
	CHECK_EQ(fathom_results_nterms(r), 2);
	for (size_t i = 0; i < fathom_results_nterms(r); i++) {
		int req = 0;
		const char *t = fathom_results_term(r, i, &req);
		int neg = fathom_results_term_negated(r, i);
		CHECK(neg == (strcmp(t, "appl") == 0));
		CHECK(req == !neg);
	}
	CHECK_EQ(fathom_results_count(r), 1);
	const fathom_hit *h = fathom_results_hit(r, 0);
	CHECK(h && h->n_matched[FATHOM_FIELD_BODY] == 1);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* Exact identifiers among thousands of near-identical ones: TC-1000 ...
 * TC-1999, one per document, in sentences that differ in little else, and
 * spelled four ways. Every identifier query, in every spelling, must return
 * only documents holding that identifier (precision@k = 1), and find them. */
static void test_identifier_precision(void)
{
	char *dir = test_tmpdir("dialect-ids");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	static const char *verbs[] = { "checks", "verifies", "covers", "exercises" };
	static const char *what[] = { "the login flow", "expired cards", "the payment service",
	                              "password resets", "the audit log" };
	char id[32], body[256];
	for (int n = 1000; n < 2000; n++) {
		/* one identifier per document, in one of four spellings */
		static const char *fmt[] = { "TC-%d", "tc_%d", "TC %d", "TC%d" };
		char spelled[32];
		snprintf(spelled, sizeof spelled, fmt[n % 4], n);
		snprintf(id, sizeof id, "case-%d", n);
		snprintf(body, sizeof body, "Test %s %s %s for release 2.%d and build %d.", spelled,
		         verbs[n % 4], what[n % 5], n % 7, n * 10);
		fathom_doc d = { id, "Test plan", body, strlen(body), NULL, NULL, 0, NULL, 0, NULL };
		CHECK_OK(fathom_add_doc(ix, &d, NULL));
		if (n % 400 == 0)
			CHECK_OK(fathom_commit(ix));
	}
	CHECK_OK(fathom_commit(ix));
	static const char *qfmt[] = { "TC-%d", "tc_%d", "TC %d", "TC%d", "tc-%d",
	                              "What happened with TC-%d?", "TC-%d login", "\"TC %d\"" };
	uint64_t hits = 0, right = 0, queries = 0, found = 0;
	for (int n = 1000; n < 2000; n += 37) {
		for (size_t f = 0; f < sizeof qfmt / sizeof qfmt[0]; f++) {
			char q[64], want[32];
			snprintf(q, sizeof q, qfmt[f], n);
			snprintf(want, sizeof want, "case-%d", n);
			fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
			o.k = 10;
			fathom_results *r = NULL;
			CHECK_OK(fathom_search(&r, ix, q, &o));
			int got = 0;
			for (size_t i = 0; i < fathom_results_count(r); i++) {
				hits++;
				int ok = strcmp(fathom_results_hit(r, i)->doc_id, want) == 0;
				right += ok;
				got |= ok;
				if (!ok)
					fprintf(stderr, "  [%s] returned %s\n", q, fathom_results_hit(r, i)->doc_id);
			}
			/* "TC-1001 login" asks for a word the document may lack */
			if (f != 6) {
				found += got;
				CHECK(got);
				CHECK_EQ(fathom_results_nidents(r), 1);
				CHECK(fathom_results_nidents(r) == 1 && fathom_results_ident(r, 0)->applied);
			}
			queries++;
			fathom_results_free(r);
		}
	}
	printf("     %llu identifier queries: precision@10 %.4f (%llu of %llu hits), found %llu\n",
	       (unsigned long long)queries, hits ? (double)right / (double)hits : 0.0,
	       (unsigned long long)right, (unsigned long long)hits, (unsigned long long)found);
	CHECK(hits > 0 && right == hits);
	/* An identifier the index does not hold is dropped, and said so. */
	fathom_results *r = NULL;
	CHECK_OK(fathom_search(&r, ix, "TC-5555", NULL));
	CHECK_EQ(fathom_results_count(r), 0);
	CHECK(fathom_results_nidents(r) == 1 && !fathom_results_ident(r, 0)->applied);
	fathom_results_free(r);
	/* TC-1001 never matches TC-10010, nor 2.0.1 2.0.10. */
	fathom_doc d = { "decoy", "Test plan", "Test TC-10010 on 2.0.10", 23, NULL, NULL, 0, NULL, 0,
	                 NULL };
	CHECK_OK(fathom_add_doc(ix, &d, NULL));
	CHECK_OK(fathom_commit(ix));
	CHECK_OK(fathom_search(&r, ix, "TC-1001", NULL));
	for (size_t i = 0; i < fathom_results_count(r); i++)
		CHECK_STR(fathom_results_hit(r, i)->doc_id, "case-1001");
	fathom_results_free(r);
	CHECK_OK(fathom_search(&r, ix, "2.0.1", NULL));
	CHECK_EQ(fathom_results_count(r), 0);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* The entries fathom_vocab gave, and the last one's (its strings live only
 * during the callback). */
typedef struct vocab_seen {
	size_t n;
	char key[32];
	uint64_t chunks;
	size_t n_categories;
} vocab_seen;

static int count_vocab(void *ctx, const fathom_vocab_entry *e)
{
	vocab_seen *v = ctx;
	v->n++;
	snprintf(v->key, sizeof v->key, "%s", e->key);
	v->chunks = e->chunks;
	v->n_categories = e->n_categories;
	return 0;
}

/* One identifier in several roles is one identifier: CD169 (a model number)
 * and CD169(+) (read as a call) share a key, and a query finds both; a GNU
 * declaration "name (args)" is a call; an identifier whose chunks hold none
 * of the query's other words gets an empty answer naming both. */
static void test_identifier_roles(void)
{
	char *dir = test_tmpdir("dialect-roles");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	static const char *const bodies[][2] = {
		{ "a1", "CD169+ macrophages present lipid antigens" },
		{ "a2", "sinus CD169(+) macrophages retained the antigen" },
		{ "a3", "zebrafish fins regrow; Mulberry leaves (Morus alba) lower glucose" },
		{ "g", "extern int pthread_mutex_lock (pthread_mutex_t *__mutex) __THROW;" },
	};
	for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
		fathom_doc d = { bodies[i][0], "", bodies[i][1], strlen(bodies[i][1]), NULL, NULL, 0,
		                 NULL, 0, NULL };
		CHECK_OK(fathom_add_doc(ix, &d, NULL));
	}
	CHECK_OK(fathom_commit(ix));
	fathom_results *r = NULL;
	char got[256];
	/* both roles, one key */
	CHECK_OK(fathom_search(&r, ix, "CD169 macrophages", NULL));
	ids_of(r, got, sizeof got);
	CHECK_STR(got, "a1 a2");
	CHECK(fathom_results_nidents(r) == 1 && fathom_results_ident(r, 0)->applied);
	fathom_results_free(r);
	vocab_seen v;
	memset(&v, 0, sizeof v);
	CHECK_OK(fathom_vocab(ix, NULL, "CD169", count_vocab, &v));
	CHECK_EQ(v.n, 1);   /* one entry, two chunks, two roles */
	CHECK_EQ(v.chunks, 2);
	CHECK_EQ(v.n_categories, 2);
	CHECK_STR(v.key, "cd-169");
	/* each role lists it */
	memset(&v, 0, sizeof v);
	CHECK_OK(fathom_vocab(ix, "function", "CD169", count_vocab, &v));
	CHECK(v.n == 1 && v.chunks == 2);
	memset(&v, 0, sizeof v);
	CHECK_OK(fathom_vocab(ix, "model", "CD169", count_vocab, &v));
	CHECK(v.n == 1 && v.chunks == 2);
	/* "name (args)": a call, in the document and in the query */
	static const char *const calls[] = { "pthread_mutex_lock()", "pthread_mutex_lock (pthread_mutex_t *m)" };
	for (size_t i = 0; i < 2; i++) {
		CHECK_OK(fathom_search(&r, ix, calls[i], NULL));
		ids_of(r, got, sizeof got);
		CHECK_STR(got, "g");
		CHECK(fathom_results_nidents(r) == 1 && fathom_results_ident(r, 0)->applied);
		if (fathom_results_nidents(r) == 1) {
			CHECK_STR(fathom_results_ident(r, 0)->key, "pthreadmutexlock");
			CHECK_STR(fathom_results_ident(r, 0)->category, "function");
		}
		fathom_results_free(r);
	}
	/* prose before a parenthesis stays prose */
	CHECK_OK(fathom_search(&r, ix, "Mulberry leaves (Morus alba", NULL));
	CHECK_EQ(fathom_results_nidents(r), 0);
	ids_of(r, got, sizeof got);
	CHECK_STR(got, "a3");
	fathom_results_free(r);
	/* honest empties that name the identifier and the words */
	static const struct {
		const char *q;
		int match;
		const char *why;
	} empties[] = {
		{ "CD169 AND zebrafish", AUTO, "identifier CD169 occurs in 2 chunks, but none of them has \"zebrafish\"" },
		{ "CD169 zebrafish", ALL, "identifier CD169 occurs in 2 chunks, but none of them has \"zebrafish\"" },
		{ "CD169 xyzzy", ALL,
		  "identifier CD169 occurs in 2 chunks, but none of them has \"xyzzy\" (\"xyzzy\" occurs in no document)" },
		{ "CD169 AND fins AND lipid", AUTO,
		  "identifier CD169 occurs in 2 chunks, but none of them has all of \"fins\", \"lipid\"" },
	};
	for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
		fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
		o.match = empties[i].match;
		CHECK_OK(fathom_search(&r, ix, empties[i].q, &o));
		CHECK_EQ(fathom_results_count(r), 0);
		CHECK_STR(fathom_results_why(r), empties[i].why);
		fathom_results_free(r);
	}
	/* the default ranks instead: the identifier's chunks, each missing the word */
	CHECK_OK(fathom_search(&r, ix, "CD169 zebrafish", NULL));
	ids_of(r, got, sizeof got);
	CHECK_STR(got, "a1 a2");
	for (size_t i = 0; i < fathom_results_count(r); i++)
		CHECK(fathom_results_hit(r, i)->n_missing == 1);
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* An empty answer says why; a hit says what matched where. */
static void test_receipts_and_empties(void)
{
	char *dir = test_tmpdir("dialect-why");
	build(dir);
	static const struct {
		const char *q, *filter, *why;
	} empties[] = {
		{ "kubernetes", NULL, "\"kubernetes\" occurs in no document" },
		{ "kubernetes zzzz", NULL, "none of \"kubernetes\", \"zzzz\" occurs in any document" },
		{ "apple AND kubernetes", NULL, "\"kubernetes\" occurs in no document" },
		{ "fig", "version=2.1", "filter version=2.1 matches no document" },
		{ "fig library:gamma", NULL, "filter library=gamma matches no document" },
		{ "fig lang:c", NULL, "no chunk holds \"fig\" among the documents the filters allow" },
		{ "zzzz*", NULL, "\"zzzz*\" begins no indexed word" },
		{ "apple AND elderberry", NULL, "no chunk holds \"apple\", \"elderberry\" together" },
		{ "TC-9999", NULL, "identifier TC-9999 occurs in no document" },
	};
	for (size_t i = 0; i < sizeof empties / sizeof empties[0]; i++) {
		fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
		const char *flt[1] = { empties[i].filter };
		if (empties[i].filter) {
			o.filters = flt;
			o.n_filters = 1;
		}
		fathom_results *r = NULL;
		CHECK_OK(fathom_search(&r, ix, empties[i].q, &o));
		CHECK_EQ(fathom_results_count(r), 0);
		if (!strstr(fathom_results_why(r), empties[i].why)) {
			fprintf(stderr, "  [%s]: why \"%s\", want \"%s\"\n", empties[i].q,
			        fathom_results_why(r), empties[i].why);
			test_failed_checks++;
		}
		fathom_results_free(r);
	}
	/* A hit: matched terms per field, the lines, the filters, no why. */
	fathom_results *r = NULL;
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	CHECK_OK(fathom_search(&r, ix, "lemon headings:install", &o));
	CHECK_EQ(fathom_results_count(r), 1);
	const fathom_hit *h = fathom_results_hit(r, 0);
	CHECK_STR(fathom_results_why(r), "");
	CHECK(h && h->n_matched[FATHOM_FIELD_HEADINGS] == 1 && h->n_matched[FATHOM_FIELD_BODY] >= 1);
	CHECK(h && h->field_score[FATHOM_FIELD_HEADINGS] > 0 && h->field_score[FATHOM_FIELD_BODY] > 0);
	/* "# Install guide\n\nlemon mango steps": lemon is on line 3 */
	CHECK(h && h->n_match_lines >= 1);
	if (h && h->n_match_lines)
		CHECK_EQ(h->match_lines[h->n_match_lines - 1], 3);
	fathom_results_free(r);
	CHECK_OK(fathom_search(&r, ix, "fig library:beta", &o));
	CHECK_STR(fathom_results_filters(r), "library=beta");
	fathom_results_free(r);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* fathom_list_meta: every key and value of the live documents, counted,
 * in order; checked against counts kept while adding, across segments and
 * after deletes and a replacement. */
typedef struct meta_seen {
	char last[128];
	int n, sorted;
	uint64_t lib[3], ver[2], lang, other;
} meta_seen;

static int meta_visit(void *ctx, const char *key, const char *value, uint64_t ndocs)
{
	meta_seen *m = ctx;
	char kv[128];
	snprintf(kv, sizeof kv, "%s%c%s", key, 1, value);
	if (m->n && strcmp(m->last, kv) >= 0)
		m->sorted = 0;
	snprintf(m->last, sizeof m->last, "%s", kv);
	m->n++;
	if (strcmp(key, "library") == 0 && strncmp(value, "lib", 3) == 0 && value[3] >= '0' &&
	    value[3] <= '2' && !value[4])
		m->lib[value[3] - '0'] = ndocs;
	else if (strcmp(key, "version") == 0 && (strcmp(value, "1.0") == 0 || strcmp(value, "2.0") == 0))
		m->ver[value[0] - '1'] = ndocs;
	else if (strcmp(key, "lang") == 0)
		m->lang += ndocs;   /* the detected language: every live document has one */
	else
		m->other++;
	return 0;
}

static void test_list_meta_and_time_limit(void)
{
	char *dir = test_tmpdir("dialect-meta");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	uint64_t lib[3] = { 0 }, ver[2] = { 0 };
	for (int n = 0; n < 300; n++) {
		char id[32], l[32], v[32], body[64];
		snprintf(id, sizeof id, "d%d", n);
		snprintf(l, sizeof l, "library=lib%d", n % 3);
		snprintf(v, sizeof v, "version=%d.0", 1 + n % 2);
		snprintf(body, sizeof body, "document %d", n);
		const char *meta[2] = { l, v };
		/* every fifth has no version */
		fathom_doc d = { id, NULL, body, strlen(body), NULL, NULL, 0, meta, n % 5 ? 2 : 1, NULL };
		CHECK_OK(fathom_add_doc(ix, &d, NULL));
		if (n % 100 == 99)
			CHECK_OK(fathom_commit(ix));
	}
	/* deletes (d0..d29) and a replacement (d30 moves to lib2, no version) */
	for (int n = 0; n < 31; n++) {
		char id[32];
		snprintf(id, sizeof id, "d%d", n);
		CHECK_OK(fathom_delete_doc(ix, id));
	}
	const char *meta[1] = { "library=lib2" };
	fathom_doc d = { "d30", NULL, "replaced", 8, NULL, NULL, 0, meta, 1, NULL };
	CHECK_OK(fathom_add_doc(ix, &d, NULL));
	CHECK_OK(fathom_commit(ix));
	for (int n = 31; n < 300; n++) {
		lib[n % 3]++;
		if (n % 5)
			ver[n % 2]++;
	}
	lib[2]++;
	meta_seen m = { "", 0, 1, { 0 }, { 0 }, 0, 0 };
	CHECK_OK(fathom_list_meta(ix, meta_visit, &m));
	CHECK(m.sorted);
	CHECK_EQ(m.lang, 270);
	for (int i = 0; i < 3; i++)
		CHECK_EQ(m.lib[i], lib[i]);
	for (int i = 0; i < 2; i++)
		CHECK_EQ(m.ver[i], ver[i]);
	CHECK_EQ(m.other, 0);
	/* the time limit: none, a generous one (the same answer), one already
	 * past (an error, no partial answer); version 1 options still work */
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	fathom_results *r0 = NULL, *r1 = NULL, *r2 = NULL;
	CHECK_OK(fathom_search(&r0, ix, "document", &so));
	so.time_limit = 600;
	CHECK_OK(fathom_search(&r1, ix, "document", &so));
	CHECK(r0 && r1 && fathom_results_count(r0) == 10 && fathom_results_count(r1) == 10);
	for (size_t i = 0; r0 && r1 && i < fathom_results_count(r0); i++)
		CHECK_STR(fathom_results_hit(r0, i)->doc_id, fathom_results_hit(r1, i)->doc_id);
	so.time_limit = 1e-9;
	CHECK_EQ(fathom_search(&r2, ix, "document", &so), FATHOM_ETIMEOUT);
	CHECK(r2 == NULL && strstr(fathom_errmsg(), "time limit"));
	so.time_limit = -1;
	CHECK_EQ(fathom_search(&r2, ix, "document", &so), FATHOM_EINVAL);
	/* options of versions 1 and 2 have their own layout (the weights
	 * inline, after match): both still work, and mean what they meant */
	struct {
		unsigned version;
		uint32_t k;
		int match;
		float field_weight[5];
		float k1, b, phrase_bonus, prefix_bonus;
		const char *const *filters;
		size_t n_filters;
		const char *path_glob, *lang;
		int exhaustive;
		uint32_t snippet_bytes;
		double time_limit;
	} old = { 1, 10, FATHOM_MATCH_AUTO, { 3.0f, 2.5f, 2.0f, 2.0f, 1.0f }, 1.5f, 0.9f, 1.25f,
	          1.15f, NULL, 0, NULL, NULL, 0, 240, 0 };
	for (unsigned v = 1; v <= 2; v++) {
		old.version = v;
		CHECK_OK(fathom_search(&r2, ix, "document", (const fathom_search_opts *)(void *)&old));
		CHECK(r0 && r2 && fathom_results_count(r2) == 10);
		for (size_t i = 0; r0 && r2 && i < fathom_results_count(r2); i++)
			CHECK(fathom_results_hit(r0, i)->score == fathom_results_hit(r2, i)->score);
		fathom_results_free(r2);
		r2 = NULL;
	}
	/* a version 2 caller knows no FATHOM_ETIMEOUT: a time limit is the
	 * FATHOM_EINTERRUPTED it knows */
	old.time_limit = 1e-9;
	CHECK_EQ(fathom_search(&r2, ix, "document", (const fathom_search_opts *)(void *)&old),
	         FATHOM_EINTERRUPTED);
	CHECK(r2 == NULL && strstr(fathom_errmsg(), "time limit"));
	old.time_limit = 0;
	/* a version 2 weight, and the same weight given by pointer */
	old.field_weight[FATHOM_FIELD_BODY] = 7.0f;
	float w[FATHOM_NFIELDS] = FATHOM_FIELD_WEIGHTS_INIT;
	w[FATHOM_FIELD_BODY] = 7.0f;
	fathom_search_opts cur = FATHOM_SEARCH_OPTS_INIT;
	cur.field_weights = w;
	cur.n_field_weights = FATHOM_NFIELDS;
	fathom_results *r3 = NULL;
	CHECK_OK(fathom_search(&r2, ix, "document", (const fathom_search_opts *)(void *)&old));
	CHECK_OK(fathom_search(&r3, ix, "document", &cur));
	CHECK(r2 && r3 && fathom_results_count(r2) == fathom_results_count(r3));
	for (size_t i = 0; r2 && r3 && i < fathom_results_count(r2); i++)
		CHECK(fathom_results_hit(r2, i)->score == fathom_results_hit(r3, i)->score &&
		      fathom_results_hit(r2, i)->score != fathom_results_hit(r0, i)->score);
	fathom_results_free(r3);
	/* fewer weights than fields: the rest keep their default; more: refused */
	cur.n_field_weights = 1;
	w[0] = 3.0f;
	CHECK_OK(fathom_search(&r3, ix, "document", &cur));
	for (size_t i = 0; r0 && r3 && i < fathom_results_count(r3); i++)
		CHECK(fathom_results_hit(r0, i)->score == fathom_results_hit(r3, i)->score);
	fathom_results_free(r3);
	r3 = NULL;
	cur.n_field_weights = FATHOM_NFIELDS + 1;
	CHECK_EQ(fathom_search(&r3, ix, "document", &cur), FATHOM_EINVAL);
	CHECK(r3 == NULL);
	fathom_results_free(r0);
	fathom_results_free(r1);
	fathom_results_free(r2);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	RUN(test_conformance);
	RUN(test_lenient);
	RUN(test_negated_terms);
	RUN(test_identifier_precision);
	RUN(test_identifier_roles);
	RUN(test_receipts_and_empties);
	RUN(test_list_meta_and_time_limit);
	return TEST_DONE();
}
