/*
 * test_jsonl.c — documents from JSON lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fathom.h"
#include "ingest/ingest.h"
#include "test.h"

/* What the callbacks saw, flattened to text for easy comparison. */
typedef struct seen {
	char docs[8192];
	size_t docs_len;
	char errors[4096];
	size_t errors_len;
	size_t n_docs, n_errors;
	uint64_t last_line;
	int stop_after;      /* on_doc returns 5 after this many docs (0: never) */
	size_t body_bytes;
} seen;

static void append(char *buf, size_t cap, size_t *len, const char *s)
{
	size_t n = strlen(s);
	if (*len + n < cap) {
		memcpy(buf + *len, s, n + 1);
		*len += n;
	}
}

static int on_doc(void *ctx, const jsonl_doc *d)
{
	seen *s = ctx;
	char line[1024];
	snprintf(line, sizeof line, "%" PRIu64 " id=%s title=%s body=%.*s url=%s path=%s",
	         d->line_no, d->id, d->title, (int)FA_MIN(d->body_len, 40), d->body, d->url,
	         d->path ? d->path : "(null)");
	append(s->docs, sizeof s->docs, &s->docs_len, line);
	for (size_t i = 0; i < d->n_tags; i++) {
		snprintf(line, sizeof line, " tag:%s", d->tags[i]);
		append(s->docs, sizeof s->docs, &s->docs_len, line);
	}
	for (size_t i = 0; i < d->n_meta; i++) {
		snprintf(line, sizeof line, " meta:%s", d->meta[i]);
		append(s->docs, sizeof s->docs, &s->docs_len, line);
	}
	append(s->docs, sizeof s->docs, &s->docs_len, "\n");
	s->n_docs++;
	s->body_bytes += d->body_len;
	s->last_line = d->line_no;
	if (s->stop_after && s->n_docs == (size_t)s->stop_after)
		return 5;
	return 0;
}

static void on_error(void *ctx, uint64_t line_no, const char *msg)
{
	seen *s = ctx;
	char line[512];
	snprintf(line, sizeof line, "%" PRIu64 ": %s\n", line_no, msg);
	append(s->errors, sizeof s->errors, &s->errors_len, line);
	s->n_errors++;
}

static jsonl_opts opts_for(seen *s, size_t max_line)
{
	jsonl_opts o;
	memset(&o, 0, sizeof o);
	o.max_line = max_line;
	o.on_doc = on_doc;
	o.on_error = on_error;
	o.ctx = s;
	return o;
}

static int parse(seen *s, const char *line)
{
	jsonl_opts o = opts_for(s, 0);
	return jsonl_parse_line(line, strlen(line), 1, &o);
}

static void test_beir_line(void)
{
	seen s;
	memset(&s, 0, sizeof s);
	CHECK_OK(parse(&s, "{\"_id\": \"4983\", \"title\": \"Microstructural development\", "
	                   "\"text\": \"Alterations of the architecture\", \"metadata\": {}}"));
	CHECK_STR(s.docs, "1 id=4983 title=Microstructural development body=Alterations of the architecture "
	                  "url= path=(null)\n");
}

static void test_members(void)
{
	seen s;
	memset(&s, 0, sizeof s);
	CHECK_OK(parse(&s, "{\"id\": \"d1\", \"title\": \"T\", \"body\": \"B\", \"text\": \"not used\", "
	                   "\"url\": \"http://x/1\", \"path\": \"src/a.c\", \"tags\": [\"x\", \"\", 3, \"y\"], "
	                   "\"lang\": \"c\", \"stars\": 42, \"score\": 0.1, \"big\": 1e300, \"ok\": true, "
	                   "\"bad\": false, \"none\": null, \"nested\": {\"a\": 1}, \"list\": [1, 2], "
	                   "\"a=b\": \"skipped\", \"\": \"skipped\"}"));
	CHECK_STR(s.docs, "1 id=d1 title=T body=B url=http://x/1 path=src/a.c tag:x tag:y meta:lang=c "
	                  "meta:stars=42 meta:score=0.1 meta:big=1e+300 meta:ok=true meta:bad=false\n");

	/* One tag as a plain string; body from "content"; "id" over "_id". */
	memset(&s, 0, sizeof s);
	CHECK_OK(parse(&s, "{\"id\": \"a\", \"_id\": \"b\", \"content\": \"C\", \"tags\": \"solo\"}"));
	CHECK_STR(s.docs, "1 id=a title= body=C url= path=(null) tag:solo\n");

	/* "text" when "body" is not a string. */
	memset(&s, 0, sizeof s);
	CHECK_OK(parse(&s, "{\"id\": \"a\", \"body\": null, \"text\": \"T\", \"title\": 7}"));
	CHECK_STR(s.docs, "1 id=a title= body=T url= path=(null)\n");

	/* A null "id" falls back to "_id". */
	memset(&s, 0, sizeof s);
	CHECK_OK(parse(&s, "{\"id\": null, \"_id\": \"z\"}"));
	CHECK_STR(s.docs, "1 id=z title= body= url= path=(null)\n");

	/* Unicode escapes decode to UTF-8. */
	memset(&s, 0, sizeof s);
	CHECK_OK(parse(&s, "{\"id\": \"u\", \"body\": \"caf\\u00e9 \\ud83d\\ude00\"}"));
	CHECK_STR(s.docs, "1 id=u title= body=caf\xc3\xa9 \xf0\x9f\x98\x80 url= path=(null)\n");
}

static void test_numeric_ids(void)
{
	seen s;
	memset(&s, 0, sizeof s);
	CHECK_OK(parse(&s, "{\"id\": 42, \"body\": \"x\"}"));
	CHECK_OK(parse(&s, "{\"_id\": -7}"));
	CHECK_OK(parse(&s, "{\"_id\": 9223372036854775807}"));
	CHECK_STR(s.docs, "1 id=42 title= body=x url= path=(null)\n"
	                  "1 id=-7 title= body= url= path=(null)\n"
	                  "1 id=9223372036854775807 title= body= url= path=(null)\n");
}

static void test_bad_lines(void)
{
	static const char *bad[] = {
		"{\"id\": \"\"}",                 /* empty id */
		"{\"title\": \"no id\"}",
		"{\"id\": 1.5}",                  /* a real is not an id */
		"{\"id\": true}",
		"{\"id\": [\"a\"]}",
		"[1, 2]",                          /* not an object */
		"\"just a string\"",
		"{\"id\": \"a\"",                  /* truncated */
		"{\"id\": \"a\"} trailing",
		"{\"id\": \"a\", \"body\": \"\xff\xfe\"}", /* invalid UTF-8 */
		"{\"id\": \"a\", \"body\": \"x\\u0000y\"}", /* NUL in a string */
		"{\"id\": \"a\\ud800\"}",          /* lone surrogate */
		"",
		"{\"id\": 99999999999999999999}",  /* integer overflow */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		seen s;
		memset(&s, 0, sizeof s);
		int rc = parse(&s, bad[i]);
		if (rc != FATHOM_ESYNTAX)
			fprintf(stderr, "  bad line %zu accepted: %s\n", i, bad[i]);
		CHECK_EQ(rc, FATHOM_ESYNTAX);
		CHECK_EQ(s.n_docs, 0);
		CHECK(strncmp(fathom_errmsg(), "line 1: ", 8) == 0);
	}
	seen s;
	memset(&s, 0, sizeof s);
	parse(&s, "{\"id\": \"\"}");
	CHECK(strstr(fathom_errmsg(), "empty id") != NULL);
	parse(&s, "{\"id\": \"a\", \"body\": \"\xff\"}");
	CHECK(strstr(fathom_errmsg(), "UTF-8") != NULL || strstr(fathom_errmsg(), "decode") != NULL);
}

static FILE *stream_of(const char *text, size_t n)
{
	FILE *f = tmpfile();
	if (!f) {
		perror("tmpfile");
		exit(2);
	}
	fwrite(text, 1, n, f);
	rewind(f);
	return f;
}

static void test_stream(void)
{
	const char *text =
		"\xEF\xBB\xBF{\"id\": \"1\", \"body\": \"one\"}\r\n"
		"\n"
		"   \r\n"
		"not json\n"
		"{\"id\": \"2\", \"body\": \"two\"}\n"
		"[\"array\"]\r\n"
		"{\"id\": \"3\", \"body\": \"bad \xc3\x28\"}\n"
		"{\"id\": 4, \"body\": \"four\"}"; /* no final newline */
	FILE *f = stream_of(text, strlen(text));
	seen s;
	memset(&s, 0, sizeof s);
	jsonl_opts o = opts_for(&s, 0);
	jsonl_stats st;
	CHECK_OK(jsonl_read_stream(f, &o, &st));
	fclose(f);
	CHECK_EQ(st.lines, 8);
	CHECK_EQ(st.blank, 2);
	CHECK_EQ(st.docs, 3);
	CHECK_EQ(st.errors, 3);
	CHECK_STR(s.docs, "1 id=1 title= body=one url= path=(null)\n"
	                  "5 id=2 title= body=two url= path=(null)\n"
	                  "8 id=4 title= body=four url= path=(null)\n");
	CHECK(strncmp(s.errors, "4: ", 3) == 0);
	CHECK(strstr(s.errors, "\n6: not a JSON object\n") != NULL);
	CHECK(strstr(s.errors, "\n7: ") != NULL);
	CHECK_EQ(s.n_errors, 3);

	/* An empty stream and a stream of blank lines. */
	f = stream_of("", 0);
	memset(&s, 0, sizeof s);
	CHECK_OK(jsonl_read_stream(f, &o, &st));
	fclose(f);
	CHECK_EQ(st.lines, 0);
	f = stream_of("\n\n\n", 3);
	CHECK_OK(jsonl_read_stream(f, &o, &st));
	fclose(f);
	CHECK_EQ(st.lines, 3);
	CHECK_EQ(st.blank, 3);
	CHECK_EQ(st.docs, 0);

	/* A callback's non-zero return stops the read and is returned. */
	f = stream_of("{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"c\"}\n", 33);
	memset(&s, 0, sizeof s);
	s.stop_after = 2;
	CHECK_EQ(jsonl_read_stream(f, &o, &st), 5);
	fclose(f);
	CHECK_EQ(s.n_docs, 2);
	CHECK_EQ(st.lines, 2);

	CHECK_EQ(jsonl_read_stream(NULL, &o, &st), FATHOM_EINVAL);
}

/* Build "{"id":"<id>","body":"xxxx..."}" with a body of n bytes. */
static char *doc_line(const char *id, size_t n)
{
	char *s = malloc(n + 64);
	int k = snprintf(s, 64, "{\"id\":\"%s\",\"body\":\"", id);
	memset(s + k, 'x', n);
	strcpy(s + k + n, "\"}\n");
	return s;
}

static void test_long_lines(void)
{
	/* max_line 100: a 1000-byte line is an error, its neighbours are fine. */
	char *l1 = doc_line("a", 10), *l2 = doc_line("b", 1000), *l3 = doc_line("c", 10);
	size_t n1 = strlen(l1), n2 = strlen(l2), n3 = strlen(l3);
	char *all = malloc(n1 + n2 + n3 + 1);
	memcpy(all, l1, n1);
	memcpy(all + n1, l2, n2);
	memcpy(all + n1 + n2, l3, n3 + 1);
	FILE *f = stream_of(all, n1 + n2 + n3);
	seen s;
	memset(&s, 0, sizeof s);
	jsonl_opts o = opts_for(&s, 100);
	jsonl_stats st;
	CHECK_OK(jsonl_read_stream(f, &o, &st));
	fclose(f);
	CHECK_EQ(st.docs, 2);
	CHECK_EQ(st.errors, 1);
	CHECK_STR(s.errors, "2: line longer than 100 bytes\n");
	CHECK_EQ(s.last_line, 3);
	free(l1);
	free(l2);
	free(l3);
	free(all);

	/* Lines that straddle the 64 KiB read chunks: a 300 KB line over a
	 * 200 KB limit fails, a 150 KB one parses whole, and so does a last
	 * line of 100 KB without a newline. */
	char *big = doc_line("big", 300000), *mid = doc_line("mid", 150000),
	     *last = doc_line("last", 100000);
	size_t nb = strlen(big), nm = strlen(mid), nl = strlen(last) - 1;
	char *text = malloc(nb + nm + nl + 2);
	memcpy(text, mid, nm);
	memcpy(text + nm, big, nb);
	memcpy(text + nm + nb, last, nl);
	f = stream_of(text, nm + nb + nl);
	memset(&s, 0, sizeof s);
	o = opts_for(&s, 200000);
	CHECK_OK(jsonl_read_stream(f, &o, &st));
	fclose(f);
	CHECK_EQ(st.lines, 3);
	CHECK_EQ(st.docs, 2);
	CHECK_EQ(st.errors, 1);
	CHECK_EQ(s.body_bytes, 250000);
	CHECK_STR(s.errors, "2: line longer than 200000 bytes\n");
	/* An over-long last line without a newline is reported too. */
	f = stream_of(big, nb - 1);
	memset(&s, 0, sizeof s);
	CHECK_OK(jsonl_read_stream(f, &o, &st));
	fclose(f);
	CHECK_EQ(st.errors, 1);
	CHECK_EQ(st.lines, 1);
	free(big);
	free(mid);
	free(last);
	free(text);
}

/* Every allocation failing in turn: an error or success, never a crash
 * or a leak (the sanitizer build checks the leaks). */
static void test_alloc_failures(void)
{
	const char *text = "{\"id\": \"1\", \"tags\": [\"a\", \"b\"], \"k\": 1, \"body\": \"one\"}\n"
	                   "{\"id\": \"2\", \"v\": \"x\"}\n";
	int saw_enomem = 0, saw_ok = 0;
	for (long n = 0; n < 40; n++) {
		FILE *f = stream_of(text, strlen(text));
		seen s;
		memset(&s, 0, sizeof s);
		jsonl_opts o = opts_for(&s, 0);
		jsonl_stats st;
		fa_alloc_fail_after(n);
		int rc = jsonl_read_stream(f, &o, &st);
		fa_alloc_fail_after(-1);
		fclose(f);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		saw_enomem |= rc == FATHOM_ENOMEM;
		saw_ok |= rc == 0;
		if (rc == 0)
			CHECK_EQ(s.n_docs, 2);
	}
	CHECK(saw_enomem);
	CHECK(saw_ok);
}

static void test_scifact(void)
{
	const char *candidates[] = { getenv("FATHOM_SCIFACT"), "shared/data/scifact/corpus.jsonl",
		"/work/shared/data/scifact/corpus.jsonl" };
	FILE *f = NULL;
	for (size_t i = 0; i < sizeof candidates / sizeof candidates[0] && !f; i++)
		if (candidates[i])
			f = fopen(candidates[i], "rb");
	if (!f) {
		printf("  scifact corpus.jsonl not found: test skipped\n");
		return;
	}
	seen s;
	memset(&s, 0, sizeof s);
	jsonl_opts o = opts_for(&s, 0);
	jsonl_stats st;
	CHECK_OK(jsonl_read_stream(f, &o, &st));
	fclose(f);
	CHECK_EQ(st.docs, 5183);
	CHECK_EQ(st.errors, 0);
	CHECK_EQ(s.n_docs, 5183);
	CHECK(s.body_bytes > 1000000);
	/* The first line of the file, as the test above parses it. */
	CHECK(strncmp(s.docs, "1 id=4983 title=Microstructural development", 43) == 0);
}

/* ---- the fast path against jansson ------------------------------------------- */

/* A document as text, every field, so two parses compare with strcmp. */
static void doc_text(const jsonl_doc *d, char *out, size_t cap)
{
	size_t n = (size_t)snprintf(out, cap, "id=%s|title=%s|url=%s|path=%s|body=%zu:", d->id,
	                            d->title, d->url, d->path ? d->path : "(none)", d->body_len);
	if (n < cap) {
		size_t k = d->body_len < cap - n - 1 ? d->body_len : cap - n - 1;
		memcpy(out + n, d->body, k);
		n += k;
		out[n] = '\0';
	}
	for (size_t i = 0; i < d->n_tags && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "|tag=%s", d->tags[i]);
	for (size_t i = 0; i < d->n_meta && n < cap; i++)
		n += (size_t)snprintf(out + n, cap - n, "|meta=%s", d->meta[i]);
}

/* One line through both paths: the same document, or both refuse it with
 * the same message. Returns 1 when the fast path would take it. */
static int same_both_ways(const char *line, size_t n)
{
	static char a[1 << 16], b[1 << 16];
	char msg_a[JSONL_MSG_MAX] = "", msg_b[JSONL_MSG_MAX] = "", id_a[32], id_b[32];
	fa_arena ar_a, ar_b;
	fa_arena_init(&ar_a, 4096, 0);
	fa_arena_init(&ar_b, 4096, 0);
	jsonl_doc da, db;
	void *ra = NULL, *rb = NULL;
	jsonl_set_fast_path(1);
	int rc_a = jsonl_parse_doc(&da, &ra, line, n, 1, &ar_a, id_a, sizeof id_a, msg_a);
	int fast = rc_a == 0 && ra == NULL;
	jsonl_set_fast_path(0);
	int rc_b = jsonl_parse_doc(&db, &rb, line, n, 1, &ar_b, id_b, sizeof id_b, msg_b);
	jsonl_set_fast_path(1);
	CHECK_EQ(rc_a, rc_b);
	if (rc_a == 0 && rc_b == 0) {
		doc_text(&da, a, sizeof a);
		doc_text(&db, b, sizeof b);
		if (strcmp(a, b) != 0)
			fprintf(stderr, "  fast:    %.300s\n  jansson: %.300s\n", a, b);
		CHECK(strcmp(a, b) == 0);
	} else {
		CHECK_STR(msg_a, msg_b);
	}
	jsonl_doc_release(ra);
	jsonl_doc_release(rb);
	fa_arena_free(&ar_a);
	fa_arena_free(&ar_b);
	return fast;
}

static void test_fast_path_matches_jansson(void)
{
	static const char *const lines[] = {
		"{\"_id\": \"4983\", \"title\": \"T\", \"text\": \"Body\", \"metadata\": {}}",
		"{\"id\":\"a\",\"body\":\"x\\ny\\t\\\"q\\\" \\\\ \\/ \\b\\f\\r \\u00e9\\u4e2d\\u0041\"}",
		"{\"id\":\"a\",\"body\":\"pair \\ud83d\\ude00\"}",
		"{\"id\":\"a\",\"body\":\"nul \\u0000\"}",
		"{\"id\":\"a\",\"body\":\"lone \\ud83d\"}",
		"{\"id\":\"a\",\"body\":\"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80\"}",
		"{\"id\":\"a\",\"body\":\"bad \xc3\"}",
		"{\"id\":\"a\",\"body\":\"overlong \xc0\xaf\"}",
		"{\"id\":\"a\",\"body\":\"surrogate \xed\xa0\x80\"}",
		"{\"id\":\"a\",\"body\":\"ctl \x01\"}",
		"{\"id\":12,\"n\":-0,\"m\":123456789012345678,\"big\":1234567890123456789,\"r\":1.5,\"e\":1e3}",
		"{\"id\":012}",
		"{\"id\":-7,\"t\":true,\"f\":false,\"z\":null,\"o\":{},\"a\":[],\"s\":\"v\"}",
		"{\"id\":null,\"_id\":\"x\"}",
		"{\"id\":\"\"}",
		"{\"id\":1.5}",
		"{\"title\":\"no id\"}",
		"{\"id\":\"a\",\"id\":\"b\"}",
		"{\"id\":\"a\",\"tags\":[\"x\",\"\",\"y\"],\"k=v\":\"s\",\"\":\"e\",\"url\":\"u\",\"path\":\"p\"}",
		"{\"id\":\"a\",\"tags\":\"one\"}",
		"{\"id\":\"a\",\"tags\":\"\"}",
		"{\"id\":\"a\",\"tags\":[1,\"x\"]}",
		"{\"id\":\"a\",\"tags\":{}}",
		"{\"id\":\"a\",\"lines\":[51, 86],\"a\":[1,-2,true,false,null,\"x\"]}",
		"{\"id\":\"a\",\"tags\":[true,\"x\",null,7,\"\",\"y\"]}",
		"{\"id\":\"a\",\"a\":[1.5]}",
		"{\"id\":\"a\",\"a\":[[1]]}",
		"{\"id\":\"a\",\"a\":[{}]}",
		"{\"id\":\"a\",\"a\":[1,]}",
		"{\"id\":\"a\",\"a\":[01]}",
		"{\"id\":\"a\",\"a\":[nul]}",
		"{\"id\":\"a\",\"a\":[1 2]}",
		"{\"id\":\"a\",\"text\":5,\"content\":\"c\"}",
		"{\"id\":\"a\",\"nested\":{\"x\":1}}",
		"  {\"id\" : \"a\" , \"body\" : \"b\" }  \t",
		"{\"id\":\"a\"} x",
		"{\"id\":\"a\",}",
		"{\"id\":\"a\"",
		"[1,2]",
		"\"str\"",
		"{}",
		"{\"id\":\"a\",\"k\\u0065y\":\"v\"}",
		"{\"id\":\"a\",\"b\":tru}",
		"{\"id\":\"a\",\"b\":\"\\x\"}",
		"{\"id\":\"a\",\"b\":\"\\u12G4\"}",
		"{\"id\":\"a\",\"b\":\"end\\",
	};
	int fast = 0;
	for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
		fast += same_both_ways(lines[i], strlen(lines[i]));
	CHECK(fast >= 8);   /* the common shapes take the fast path */
	/* the shape of `fathom chunk` output (bench/prepare_kernel.sh): an
	 * array of line numbers must not send every line to jansson */
	static const char chunk[] = "{\"id\":\"d/f.c#0\",\"title\":\"d/f.c\",\"text\":\"int x;\\n\","
	                            "\"path\":\"d/f.c\",\"lines\":[1, 2],\"lang\":\"c\",\"headings\":\"\"}";
	CHECK(same_both_ways(chunk, strlen(chunk)) == 1);
}

/* Strings are scanned and copied eight bytes at a time while they are
 * plain: a quote, an escape, a control byte or a non-ASCII byte at every
 * offset around those eight bytes, both ways. */
static void test_fast_path_string_offsets(void)
{
	static const char *const special[] = { "\\n", "\\\"", "\\\\", "\\u00e9", "\\/",
	                                       "\xc3\xa9", "\xe4\xb8\xad", "\x01", "\x1f", "\xff",
	                                       "\xc3", "\\", "\\x", "\"", "~", " " };
	int fast = 0, lines = 0;
	for (size_t k = 0; k < sizeof special / sizeof *special; k++) {
		for (int before = 0; before <= 20; before++) {
			for (int after = 0; after <= 17; after += 1 + after / 3) {
				char line[256];
				int n = snprintf(line, sizeof line, "{\"id\":\"a\",\"body\":\"%.*s%s%.*s\"}",
				                 before, "abcdefghijklmnopqrstuvwxyz", special[k], after,
				                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
				fast += same_both_ways(line, (size_t)n);
				/* the same text cut short: the string never ends */
				same_both_ways(line, (size_t)n - 2);
				lines++;
			}
		}
	}
	CHECK(fast * 2 >= lines);
}

/* Every line of the BEIR corpora at hand, both ways. */
static void test_fast_path_corpora(void)
{
	static const char *const files[] = { "../shared/data/scifact/corpus.jsonl",
	                                     "../shared/data/cosqa/corpus.jsonl",
	                                     "../shared/data/scifact/queries.jsonl" };
	int found = 0;
	for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
		FILE *in = fopen(files[f], "rb");
		if (!in)
			continue;
		found++;
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		size_t lines = 0, fast = 0;
		while ((n = getline(&line, &cap, in)) > 0) {
			if (line[n - 1] == '\n')
				n--;
			fast += (size_t)same_both_ways(line, (size_t)n);
			lines++;
		}
		free(line);
		fclose(in);
		CHECK(fast * 10 >= lines * 9);
	}
	if (!found)
		printf("     (no corpus under ../shared/data: the built-in lines only)\n");
}

int main(void)
{
	RUN(test_beir_line);
	RUN(test_members);
	RUN(test_numeric_ids);
	RUN(test_bad_lines);
	RUN(test_stream);
	RUN(test_long_lines);
	RUN(test_alloc_failures);
	RUN(test_scifact);
	RUN(test_fast_path_matches_jansson);
	RUN(test_fast_path_string_offsets);
	RUN(test_fast_path_corpora);
	return TEST_DONE();
}
