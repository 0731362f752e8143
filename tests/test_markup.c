/*
 * test_markup.c — the documents people have: HTML read as text (tags,
 * script and style, references, title, headings, lines kept), gzip files
 * decompressed (bounded, corrupt ones refused), kinds detected through
 * ".gz", and reStructuredText and AsciiDoc titles as chunk boundaries and
 * heading trails.
 */
#include "test.h"

#include <sys/stat.h>

#include "text/text.h"
#include "util/util.h"

/* ---- HTML ------------------------------------------------------------------ */

static size_t count_nl(const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

typedef struct got {
	int n;
	struct { uint32_t line_start, line_end; char trail[96]; } c[64];
} got;

static int collect(void *ctx, const text_chunk *c)
{
	got *g = ctx;
	if (g->n < 64) {
		g->c[g->n].line_start = c->line_start;
		g->c[g->n].line_end = c->line_end;
		snprintf(g->c[g->n].trail, sizeof g->c[g->n].trail, "%.*s", (int)c->headings_len,
		         c->headings);
		g->n++;
	}
	return 0;
}

static int html(text_html *h, const char *src)
{
	return text_html_to_text(h, src, strlen(src));
}

static const char *text_of(const text_html *h)
{
	return h->text.len ? (const char *)h->text.data : "";
}

static void test_html_tags_script_style(void)
{
	text_html h;
	text_html_init(&h);
	const char *src = "<html><head><style>\n.hljs { color: red }\n</style>\n"
	                  "<script type=\"text/javascript\">var hljs = '</p>';\n</script></head>\n"
	                  "<body><p class=\"a>b\">Hello <b>wor</b>ld</p><td>a</td><td>b</td>\n"
	                  "<!-- hljs\ncomment --><!DOCTYPE x>< not a tag 1 < 2\n"
	                  "<SCRIPT>x</SCRIPT >after</body></html>";
	CHECK_OK(html(&h, src));
	const char *t = text_of(&h);
	h.text.data[h.text.len] = 0;
	CHECK(strstr(t, "hljs") == NULL);
	CHECK(strstr(t, "color") == NULL);
	CHECK(strstr(t, "Hello world") != NULL);   /* inline tags leave nothing */
	CHECK(strstr(t, "a b") != NULL);           /* cells stay apart */
	CHECK(strstr(t, "< not a tag 1 < 2") != NULL);
	CHECK(strstr(t, "after") != NULL);
	CHECK(strstr(t, "x") == NULL || strstr(t, "x") > strstr(t, "tag"));
	CHECK(strchr(t, '<') == strstr(t, "< not"));
	/* every newline in place: line N of the text is line N of the file */
	CHECK_EQ(count_nl(t, h.text.len), count_nl(src, strlen(src)));
	text_html_free(&h);
}

static void test_html_entities(void)
{
	text_html h;
	text_html_init(&h);
	CHECK_OK(html(&h, "a &amp; b &lt;c&gt; &copy;&nbsp;&eacute; &#65;&#x42;&#X43; &#8212;"
	                  " &hellip; &bogus; &amp &#; &#x110000; &#0; &#10;x &#150; &NotEqualTilde;"));
	h.text.data[h.text.len] = 0;
	CHECK_STR(text_of(&h), "a & b <c> \xc2\xa9\xc2\xa0\xc3\xa9 ABC \xe2\x80\x94"
	                       " \xe2\x80\xa6 &bogus; &amp &#; \xef\xbf\xbd \xef\xbf\xbd  x \xe2\x80\x93"
	                       " \xe2\x89\x82\xcc\xb8");
	/* a numeric reference of each UTF-8 length: 2 bytes and 4 */
	CHECK_OK(html(&h, "&#xe9;&#x1F600;&#1114111;"));
	h.text.data[h.text.len] = 0;
	CHECK_STR(text_of(&h), "\xc3\xa9\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf");
	text_html_free(&h);
}

static void test_html_title_headings_lines(void)
{
	text_html h;
	text_html_init(&h);
	const char *src = "<!DOCTYPE html>\n"                      /* 1 */
	                  "<title>The  &quot;Guide&quot;\n</title>\n" /* 2-3 */
	                  "<h1>Intro</h1>\n"                      /* 4 */
	                  "<p>one</p>\n"                          /* 5 */
	                  "<h2 id=x>Part <code>two</code><a href=#x>#</a></h2>\n"  /* 6 */
	                  "<p>zebra</p>\n"                        /* 7 */
	                  "<h3>Deep</h3><h2>Part three <a>\xc2\xb6</a></h2>\n"    /* 8 */
	                  "<p>okapi</p>\n";                       /* 9 */
	CHECK_OK(html(&h, src));
	CHECK(h.title != NULL);
	if (h.title)
		CHECK(h.title_len == 11 && memcmp(h.title, "The \"Guide\"", 11) == 0);
	CHECK_EQ(h.n_headings, 4);
	if (h.n_headings == 4) {
		CHECK_EQ(h.headings[0].level, 1);
		CHECK(h.headings[0].len == 5 && memcmp(h.headings[0].text, "Intro", 5) == 0);
		CHECK_EQ(h.headings[1].level, 2);
		CHECK(h.headings[1].len == 8 && memcmp(h.headings[1].text, "Part two", 8) == 0);
		CHECK_EQ(h.headings[3].level, 2);
		/* where the heading's text is: on line 6 of the file */
		size_t line = 1 + count_nl(text_of(&h), h.headings[1].off);
		CHECK_EQ(line, 6);
	}
	CHECK_EQ(count_nl(text_of(&h), h.text.len), count_nl(src, strlen(src)));

	/* chunked with its headings: the trail, and the file's lines */
	text_chunk_opts co = { 20, 0, 200, h.headings, h.n_headings };
	got g = { 0 };
	CHECK_OK(text_chunk_doc(text_of(&h), h.text.len, DOC_HTML, &co, collect, &g));
	CHECK(g.n >= 3);
	int seen_two = 0, seen_three = 0;
	for (int i = 0; i < g.n; i++) {
		if (g.c[i].line_start == 6 && strcmp(g.c[i].trail, "Intro > Part two") == 0)
			seen_two = 1;
		if (g.c[i].line_start == 8 && strcmp(g.c[i].trail, "Intro > Part three") == 0)
			seen_three = 1;
	}
	CHECK(seen_two);
	CHECK(seen_three);
	text_html_free(&h);
}

/* Every byte of the output comes from a bounded pass: a long run of
 * unclosed constructs is linear, and stays valid UTF-8. */
static void test_html_unclosed(void)
{
	static const char *const srcs[] = {
		"<script>never closed\n", "<!-- never closed", "<a href=\"x>never\nclosed",
		"<h1>never closed", "<title>t", "&", "&#", "&#x", "<", "</", "<!", "&amp",
		"<h1><h2>x</h3>y", "</h1>", "<textarea>&lt;</textarea>",
	};
	for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
		text_html h;
		text_html_init(&h);
		CHECK_OK(html(&h, srcs[i]));
		CHECK_EQ(text_utf8_invalid_count(text_of(&h), h.text.len), 0);
		CHECK_EQ(count_nl(text_of(&h), h.text.len), count_nl(srcs[i], strlen(srcs[i])));
		text_html_free(&h);
	}
}

/* ---- kinds ------------------------------------------------------------------- */

static void test_detect_kinds(void)
{
	const char *lang;
	CHECK_EQ(text_detect_kind("a/index.html", &lang), DOC_HTML);
	CHECK_STR(lang, "html");
	CHECK_EQ(text_detect_kind("a/index.html.gz", &lang), DOC_HTML);
	CHECK_EQ(text_detect_kind("NEWS.md.gz", &lang), DOC_MARKDOWN);
	CHECK_EQ(text_detect_kind("changelog.Debian.gz", &lang), DOC_TEXT);
	CHECK_STR(lang, "text");
	CHECK_EQ(text_detect_kind("x/Makefile.gz", &lang), DOC_CODE);
	CHECK_EQ(text_detect_kind("Documentation/index.rst", &lang), DOC_RST);
	CHECK_STR(lang, "rst");
	CHECK_EQ(text_detect_kind("book.adoc", &lang), DOC_ASCIIDOC);
	CHECK_EQ(text_detect_kind("ls.1.gz", &lang), DOC_TEXT);
	CHECK_STR(lang, "man");
	CHECK(fa_gz_name("a/b.txt.gz"));
	CHECK(!fa_gz_name("a/.gz"));
	CHECK(!fa_gz_name("a/b.gzip"));
}

/* ---- reStructuredText and AsciiDoc --------------------------------------------- */

/* doc chunked as kind (target bytes a chunk): chunks start at each of
 * lines[], in order, with the trail want[]; no trail holds not_title; the
 * document's own title is title. */
static void check_markup(const char *doc, int kind, uint32_t target, const uint32_t *lines,
                         const char *const *want, size_t n, const char *not_title,
                         const char *title)
{
	got g = { 0 };
	text_chunk_opts co = { target, 0, 400, NULL, 0 };
	CHECK_OK(text_chunk_doc(doc, strlen(doc), kind, &co, collect, &g));
	size_t w = 0;
	for (int i = 0; i < g.n && w < n; i++) {
		if (g.c[i].line_start == lines[w]) {
			CHECK_STR(g.c[i].trail, want[w]);
			w++;
		}
	}
	CHECK_EQ(w, n);
	for (int i = 0; i < g.n; i++)
		CHECK(strstr(g.c[i].trail, not_title) == NULL);
	size_t tl;
	const char *t = text_markup_title(doc, strlen(doc), kind, &tl);
	CHECK(t && tl == strlen(title) && memcmp(t, title, tl) == 0);
}

static void test_rst_headings(void)
{
	const char *doc =
		"=========\n"            /* 1: overlined: the first style, level 1 */
		" The Book\n"
		"=========\n"
		"\n"
		"Intro text about the book.\n"
		"\n"
		"Chapter one\n"           /* 7: underlined '=': a second style */
		"===========\n"
		"\n"
		"okapi text.\n"
		"\n"
		"Section\n"               /* 12: '-': level 3 */
		"-------\n"
		"\n"
		"zebra text.\n"
		"\n"
		"Chapter two\n"           /* 17: '=' again: level 2 */
		"===========\n"
		"\n"
		"Not a title\n"           /* too short an underline */
		"===\n"
		"\n"
		"::\n"
		"\n"
		"    Indented\n"          /* a literal block, not a title */
		"    --------\n";
	const char *want[] = { "The Book", "The Book > Chapter one", "The Book > Chapter one > Section",
	                       "The Book > Chapter two" };
	const uint32_t lines[] = { 1, 7, 12, 17 };
	check_markup(doc, DOC_RST, 40, lines, want, 4, "Not a title", "The Book");
	check_markup(doc, DOC_RST, 40, lines, want, 4, "Indented", "The Book");
}

static void test_asciidoc_headings(void)
{
	const char *doc =
		"= User Guide\n"          /* 1 */
		"\n"
		"Preamble.\n"
		"\n"
		"== Install ==\n"         /* 5 */
		"\n"
		"Run the installer with care.\n"
		"\n"
		"----\n"                  /* a listing: no titles inside */
		"== not a title\n"
		"----\n"
		"\n"
		"=== Options\n"           /* 13 */
		"\n"
		"The options are few.\n"
		"\n"
		"Usage\n"                 /* 17: a two-line title, '-' is level 2 */
		"-----\n"
		"\n"
		"Use it daily.\n";
	const char *want[] = { "User Guide", "User Guide > Install", "User Guide > Install > Options",
	                       "User Guide > Usage" };
	const uint32_t lines[] = { 1, 5, 13, 17 };
	check_markup(doc, DOC_ASCIIDOC, 30, lines, want, 4, "not a title", "User Guide");
}

/* ---- gzip ---------------------------------------------------------------------- */

static char *slurp(const char *path, size_t *n)
{
	char *d = NULL;
	return fa_read_file(&d, n, path, (size_t)1 << 26) == 0 ? d : NULL;
}

static void test_gunzip(void)
{
	char *dir = test_tmpdir("gz");
	char cmd[1200];
	/* two members back to back, and a bomb: 8 MiB of zeros */
	snprintf(cmd, sizeof cmd,
	         "cd '%s' && printf 'first line\\n' | gzip > a.gz && printf 'second\\n' | gzip >> a.gz"
	         " && head -c 8388608 /dev/zero | gzip > bomb.gz && head -c 20 a.gz > cut.gz", dir);
	if (system(cmd) != 0) {
		printf("  (no gzip: skipped)\n");
		test_rmrf(dir);
		free(dir);
		return;
	}
	char path[700], *in, *out;
	size_t n, on;
	snprintf(path, sizeof path, "%s/a.gz", dir);
	CHECK((in = slurp(path, &n)) != NULL);
	if (in) {
		CHECK_OK(fa_gunzip(&out, &on, in, n, 100));
		CHECK(on == 18 && memcmp(out, "first line\nsecond\n", 18) == 0);
		fa_free(out);
		CHECK_EQ(fa_gunzip(&out, &on, in, n, 17), FATHOM_ETOOBIG);   /* the cap is exact */
		CHECK_OK(fa_gunzip(&out, &on, in, n, 18));
		fa_free(out);
		CHECK_EQ(fa_gunzip(&out, &on, in, n - 1, 100), FATHOM_ECORRUPT);   /* truncated */
		CHECK_EQ(fa_gunzip(&out, &on, "plain", 5, 100), FATHOM_ECORRUPT);
		char *junk = fa_malloc(n + 3);
		memcpy(junk, in, n);
		memcpy(junk + n, "xyz", 3);
		CHECK_EQ(fa_gunzip(&out, &on, junk, n + 3, 100), FATHOM_ECORRUPT);   /* trailing garbage */
		in[n / 2] ^= 0x55;
		CHECK(fa_gunzip(&out, &on, in, n, 100) != 0);
		fa_free(junk);
		fa_free(in);
	}
	snprintf(path, sizeof path, "%s/bomb.gz", dir);
	CHECK((in = slurp(path, &n)) != NULL);
	if (in) {
		CHECK(n < 65536);
		CHECK_EQ(fa_gunzip(&out, &on, in, n, (size_t)1 << 20), FATHOM_ETOOBIG);
		CHECK(strstr(fathom_errmsg(), "more than") != NULL);
		fa_free(in);
	}
	test_rmrf(dir);
	free(dir);
}

/* A new index in dir/ix, opened to write. */
static fathom_index *new_index(const char *dir)
{
	char ixdir[700];
	snprintf(ixdir, sizeof ixdir, "%s/ix", dir);
	fathom_index *ix = NULL;
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE | FATHOM_OPEN_WRITE;
	CHECK_OK(fathom_open(&ix, ixdir, &oo));
	return ix;
}

/* Indexed decompressed; a corrupt one skipped with its reason; a bomb over
 * --max-size (the decompressed size) is for grep alone or skipped. */
static void test_gz_ingest(void)
{
	char *dir = test_tmpdir("gzix");
	char cmd[1200];
	snprintf(cmd, sizeof cmd,
	         "cd '%s' && mkdir docs && printf 'platypus notes\\n' | gzip > docs/notes.txt.gz"
	         " && printf 'not gzip' > docs/bad.txt.gz"
	         " && head -c 3000000 /dev/zero | tr '\\0' 'a' | gzip > docs/big.txt.gz", dir);
	if (system(cmd) != 0) {
		printf("  (no gzip: skipped)\n");
		test_rmrf(dir);
		free(dir);
		return;
	}
	char docs[700];
	snprintf(docs, sizeof docs, "%s/docs", dir);
	fathom_index *ix = new_index(dir);
	if (!ix)
		return;
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	io.max_file_size = 1 << 20;      /* big.txt.gz: 3 MB decompressed */
	io.grep_max_file_size = 0;       /* no grep alone: skipped as too big */
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	const char *paths[] = { docs };
	CHECK_OK(fathom_index_paths(ix, paths, 1, &io, &st));
	CHECK_OK(fathom_commit(ix));
	CHECK_EQ(st.files_indexed, 1);
	CHECK_EQ(st.skipped_by_reason[FATHOM_SKIP_BAD_GZIP], 1);
	CHECK_EQ(st.skipped_by_reason[FATHOM_SKIP_TOO_BIG], 1);
	CHECK_STR(fathom_skip_reason_name(FATHOM_SKIP_BAD_GZIP), "corrupt gzip");
	fathom_results *res = NULL;
	CHECK_OK(fathom_search(&res, ix, "platypus", NULL));
	CHECK_EQ(res ? fathom_results_count(res) : 0, 1);
	if (res && fathom_results_count(res) == 1) {
		const fathom_hit *h = fathom_results_hit(res, 0);
		CHECK(strstr(h->path, "notes.txt.gz") != NULL);
		CHECK_EQ(h->line_start, 1);
	}
	fathom_results_free(res);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* Each allocation failed in turn: FATHOM_ENOMEM, never a crash or a leak
 * (make sanitize checks the leaks). */
static void test_alloc_failures(void)
{
	const char *src = "<title>T</title><h1>One</h1><p>a &amp; b</p><h2>Two &#x41;</h2>x\n";
	int done = 0;
	for (long n = 0; n < 200 && !done; n++) {
		text_html h;
		text_html_init(&h);
		fa_alloc_fail_after(n);
		int rc = html(&h, src);
		done = fa_alloc_failed() == 0;
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		CHECK(rc != 0 || h.n_headings == 2);
		text_html_free(&h);
	}
	CHECK(done);
	/* zlib allocates through the seam too */
	static const unsigned char gz[] = {   /* printf 'hi\n' | gzip -n */
		0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0xc8,
		0xe4, 0x02, 0x00, 0x7a, 0x7a, 0x6f, 0xed, 0x03, 0x00, 0x00, 0x00,
	};
	done = 0;
	for (long n = 0; n < 50 && !done; n++) {
		char *out = NULL;
		size_t len;
		fa_alloc_fail_after(n);
		int rc = fa_gunzip(&out, &len, gz, sizeof gz, 100);
		done = fa_alloc_failed() == 0;
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		CHECK(rc != 0 || (len == 3 && memcmp(out, "hi\n", 3) == 0));
		fa_free(out);
	}
	CHECK(done);
}

/* A document given as JSON is text already: its .html path does not make
 * its body HTML (a "<b>" in it stays). */
static void test_json_body_not_html(void)
{
	char *dir = test_tmpdir("jsonhtml");
	fathom_index *ix = new_index(dir);
	if (!ix)
		return;
	const char *body = "if a <b and c > d then &amp; stays\n";
	fathom_doc d = { .id = "page", .body = body, .body_len = strlen(body), .path = "x/page.html" };
	CHECK_OK(fathom_add_doc(ix, &d, NULL));
	CHECK_OK(fathom_commit(ix));
	char *out = NULL;
	size_t len = 0;
	CHECK_OK(fathom_get(&out, &len, ix, "page", 0, 0));
	CHECK(out && len == strlen(body) && memcmp(out, body, len) == 0);
	fathom_free(out);
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	RUN(test_html_tags_script_style);
	RUN(test_html_entities);
	RUN(test_html_title_headings_lines);
	RUN(test_html_unclosed);
	RUN(test_detect_kinds);
	RUN(test_rst_headings);
	RUN(test_asciidoc_headings);
	RUN(test_gunzip);
	RUN(test_gz_ingest);
	RUN(test_json_body_not_html);
	RUN(test_alloc_failures);
	return TEST_DONE();
}
