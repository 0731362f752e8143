/*
 * test_rawtext.c — raw text never fails to parse (issue 14): every SciFact
 * title (whole, and its first four words), every SciFact claim and every
 * CoSQA query, as written, through the lenient parser and through a real
 * search on a small index of both corpora. A query the strict reading
 * takes must read the same leniently, with nothing read literally; one it
 * refuses must be read, with the receipt saying what was read literally.
 *
 * Needs ../shared/data (the data sets); skips (exit 77) without it.
 */
#include <jansson.h>

#include "test.h"
#include "query/query_int.h"

#define SCIFACT "../shared/data/scifact/"
#define COSQA "../shared/data/cosqa/"
#define INDEX_DOCS 300   /* documents of each corpus in the small index */

static fathom_index *ix;
static size_t n_texts, n_literal, n_nothing;

/* One raw text: parse it both ways, then search it. */
static void check_text(const char *what, const char *s)
{
	fa_arena a;
	fa_arena_init(&a, 64 * 1024, 0);
	q_ast lenient, strict;
	size_t len = strlen(s);
	n_texts++;
	if (len > Q_MAX_QUERY_BYTES) {   /* the length limit holds in both */
		fa_arena_free(&a);
		return;
	}
	int rl = q_parse(&lenient, &a, s, len, 0);
	int rs = q_parse(&strict, &a, s, len, 1);
	if (rl != 0) {
		fprintf(stderr, "  %s [%s]: lenient parse failed: %s\n", what, s, fathom_errmsg());
		test_failed_checks++;
	} else if (rs == 0) {
		/* well formed: the same reading, nothing literal */
		fbuf fl, fs;
		fbuf_init(&fl, 0);
		fbuf_init(&fs, 0);
		q_ast_format(&lenient, &fl);
		q_ast_format(&strict, &fs);
		if (lenient.nlit || fl.len != fs.len || memcmp(fl.data, fs.data, fl.len) != 0) {
			fprintf(stderr, "  %s [%s]: lenient reading differs from the strict one\n", what, s);
			test_failed_checks++;
		}
		fbuf_free(&fl);
		fbuf_free(&fs);
	} else if (!lenient.nlit) {
		fprintf(stderr, "  %s [%s]: strict fails, lenient notes nothing\n", what, s);
		test_failed_checks++;
	} else {
		n_literal++;
	}
	fa_arena_free(&a);

	fathom_results *r = NULL;
	int rc = fathom_search(&r, ix, s, NULL);
	if (rc == FATHOM_EINVAL && strstr(fathom_errmsg(), "no searchable terms")) {
		n_nothing++;   /* parsed, but nothing in it is a word */
	} else if (rc != 0) {
		fprintf(stderr, "  %s [%s]: search failed: %s\n", what, s, fathom_errmsg());
		test_failed_checks++;
	} else if (rs != 0 && !*fathom_results_literal(r)) {
		fprintf(stderr, "  %s [%s]: the receipt says nothing read literally\n", what, s);
		test_failed_checks++;
	}
	fathom_results_free(r);
}

/* The first n words of s, into buf. */
static const char *first_words(const char *s, int n, char *buf, size_t cap)
{
	size_t i = 0;
	int words = 0, in = 0;
	for (; s[i] && i + 1 < cap; i++) {
		int sp = s[i] == ' ';
		if (!sp && !in && ++words > n)
			break;
		in = !sp;
		buf[i] = s[i];
	}
	buf[i] = '\0';
	return buf;
}

/* Call fn on field of each line of a JSONL file; 0, or -1 if unreadable. */
static int each_line(const char *path, const char *field, void (*fn)(const char *, json_t *),
                     const char *what)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		if (!o) {
			fprintf(stderr, "  %s: a line that is no JSON\n", path);
			test_failed_checks++;
			continue;
		}
		json_t *v = json_object_get(o, field);
		if (json_is_string(v))
			fn(what, o);
		json_decref(o);
	}
	free(line);
	fclose(f);
	return 0;
}

static void title_of(const char *what, json_t *o)
{
	const char *t = json_string_value(json_object_get(o, "title"));
	char buf[512];
	check_text(what, t);
	check_text(what, first_words(t, 4, buf, sizeof buf));
}

static void text_of(const char *what, json_t *o)
{
	check_text(what, json_string_value(json_object_get(o, "text")));
}

static void index_corpus(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	int n = 0;
	while (n < INDEX_DOCS && getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		if (!o)
			continue;
		const char *id = json_string_value(json_object_get(o, "_id"));
		const char *title = json_string_value(json_object_get(o, "title"));
		const char *text = json_string_value(json_object_get(o, "text"));
		if (id && text) {
			fathom_doc d = { id, title, text, strlen(text), NULL, NULL, 0, NULL, 0, NULL };
			CHECK_OK(fathom_add_doc(ix, &d, NULL));
			n++;
		}
		json_decref(o);
	}
	free(line);
	fclose(f);
}

static void test_raw_text_parses(void)
{
	char *dir = test_tmpdir("rawtext");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	index_corpus(SCIFACT "corpus.jsonl");
	index_corpus(COSQA "corpus.jsonl");
	CHECK_OK(fathom_commit(ix));
	CHECK_OK(each_line(SCIFACT "corpus.jsonl", "title", title_of, "SciFact title"));
	CHECK_OK(each_line(SCIFACT "queries.jsonl", "text", text_of, "SciFact claim"));
	CHECK_OK(each_line(COSQA "queries.jsonl", "text", text_of, "CoSQA query"));
	printf("     %zu raw texts: %zu read partly literally, %zu with no word to search\n", n_texts,
	       n_literal, n_nothing);
	CHECK(n_texts > 10000);
	CHECK(n_literal > 0);   /* "Mulberry leaves (Morus alba" is among them */
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	FILE *f = fopen(SCIFACT "corpus.jsonl", "r");
	FILE *g = fopen(COSQA "queries.jsonl", "r");
	if (!f || !g) {
		if (f)
			fclose(f);
		if (g)
			fclose(g);
		printf("skip: ../shared/data (SciFact, CoSQA) is absent: the raw-text parse test needs it\n");
		return 77;
	}
	fclose(f);
	fclose(g);
	RUN(test_raw_text_parses);
	return TEST_DONE();
}
