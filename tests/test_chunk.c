/*
 * test_chunk.c — the chunkers: invariants on random documents (coverage,
 * order, line numbers, UTF-8 boundaries, max size), Markdown heading
 * trails and fenced blocks, code blocks, paragraphs, overlap, titles.
 */
#include "test.h"

#include "text/text.h"

#define MAX_CHUNKS 20000

typedef struct got_chunk {
	text_chunk c;
	int headings_ok;     /* strlen(headings) == headings_len in the callback */
	char headings[96];
} got_chunk;

typedef struct chunks {
	const char *doc;
	size_t n;
	got_chunk *v;
	size_t count;
	int stop_after;
} chunks;

static int chunk_cb(void *ctx, const text_chunk *c)
{
	chunks *cs = ctx;
	if (cs->count < MAX_CHUNKS) {
		got_chunk *g = &cs->v[cs->count];
		g->c = *c;
		g->headings_ok = c->headings && strlen(c->headings) == c->headings_len;
		snprintf(g->headings, sizeof g->headings, "%s", c->headings ? c->headings : "(null)");
		g->c.headings = g->headings;
	}
	cs->count++;
	if (cs->stop_after > 0 && (int)cs->count >= cs->stop_after)
		return 7;
	return 0;
}

static int run_chunker_opts(chunks *cs, const char *doc, size_t n, int kind,
                            const text_chunk_opts *o)
{
	static got_chunk store[MAX_CHUNKS];
	memset(cs, 0, sizeof *cs);
	cs->doc = doc;
	cs->n = n;
	cs->v = store;
	return text_chunk_doc(doc, n, kind, o, chunk_cb, cs);
}

static int run_chunker(chunks *cs, const char *doc, size_t n, int kind, uint32_t target,
                       uint32_t overlap, uint32_t max)
{
	text_chunk_opts o = { .target = target, .overlap = overlap, .max = max };
	return run_chunker_opts(cs, doc, n, kind, &o);
}

/* Newlines in s[0, to), counted forward from the previous answer when
 * possible (chunk starts only move forward). */
static size_t count_newlines(const char *s, size_t to)
{
	static const char *last_s;
	static size_t last_to, last_count;
	if (s != last_s || to < last_to) {
		last_s = s;
		last_to = last_count = 0;
	}
	for (; last_to < to; last_to++)
		last_count += s[last_to] == '\n';
	return last_count;
}

/* The invariants of every chunking; returns the number of violations. */
static int check_invariants(const chunks *cs, uint32_t overlap, uint32_t max)
{
	int bad = 0, reported = 0;
	const char *doc = cs->doc;
	size_t n = cs->n, covered = 0;
	if (n == 0)
		return cs->count != 0;
	if (cs->count == 0 || cs->count > MAX_CHUNKS)
		return 1;
	count_newlines(doc, 0);  /* forget any earlier document in this buffer */
	for (size_t i = 0; i < cs->count; i++) {
		const text_chunk *c = &cs->v[i].c;
		size_t s = c->byte_start, e = c->byte_end;
		if (c->order != i)
			bad++;
		if (s >= e || e > n)
			bad++;
		/* No gap: starts at or before the end of what is covered. */
		if (s > covered || e <= covered)
			bad++;
		if (i > 0 && s < cs->v[i - 1].c.byte_start)
			bad++;
		if (i > 0 && covered - s > overlap)
			bad++;
		if (e - s > max)
			bad++;
		if (text_utf8_floor(doc, n, s) != s || text_utf8_floor(doc, n, e) != e)
			bad++;
		if (c->line_start != 1 + count_newlines(doc, s) ||
		    c->line_end != 1 + count_newlines(doc, e - 1))
			bad++;
		if (!cs->v[i].headings_ok)
			bad++;
		if (bad && !reported) {
			reported = 1;
			fprintf(stderr, "  chunk %zu: [%zu,%zu) lines %u-%u, covered %zu, n %zu\n",
			        i, s, e, c->line_start, c->line_end, covered, n);
		}
		covered = e;
	}
	if (covered != n)
		bad++;
	return bad;
}

/* The text of chunk i, NUL-terminated, in a static buffer. */
static const char *chunk_text(const chunks *cs, size_t i)
{
	static char buf[8192];
	const text_chunk *c = &cs->v[i].c;
	snprintf(buf, sizeof buf, "%.*s", (int)(c->byte_end - c->byte_start), cs->doc + c->byte_start);
	return buf;
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* ---- random documents ------------------------------------------------------------ */

static uint32_t rng_state = 2463534242u;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return n ? rng_state % n : 0;
}

static size_t random_doc(char *out, size_t cap)
{
	static const char *const bits[] = {
		"word ", "another ", "x", "\n", "\n\n", "# Heading\n", "## Sub\n", "### Deep\n",
		"```c\nint x;\n\n# not\n```\n", "~~~\ncode\n", "}\n", "int f(void)\n{\n",
		"\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87", "\xf0\x9f\x98\x80", "    indented\n",
		"Title\n=====\n", "text\n---\n", "\xff", "\xe2\x82", "\r\n", "\t", "-", "=",
	};
	size_t n = 0, parts = rnd(300);
	for (size_t i = 0; i < parts; i++) {
		const char *b = bits[rnd(FA_ARRAY_LEN(bits))];
		size_t len = strlen(b);
		if (rnd(40) == 0) {
			/* A long line, sometimes multi-byte. */
			size_t run = rnd(600);
			const char *unit = rnd(2) ? "\xe4\xb8\xad" : "ab ";
			for (size_t k = 0; k < run && n + 3 < cap; k++) {
				memcpy(out + n, unit, 3);
				n += 3;
			}
			continue;
		}
		if (n + len >= cap)
			break;
		memcpy(out + n, b, len);
		n += len;
	}
	return n;
}

static void test_random_invariants(void)
{
	static char doc[16384];
	int failures = 0;
	for (int round = 0; round < 600; round++) {
		size_t n = random_doc(doc, sizeof doc);
		int kind = (int)rnd(3);
		uint32_t max = 4 + rnd(2000);
		uint32_t target = 1 + rnd(max);
		uint32_t overlap = rnd(3) == 0 ? 0 : rnd(target);
		chunks cs;
		int rc = run_chunker(&cs, doc, n, kind, target, overlap, max);
		int bad = rc != 0 ? 1 : check_invariants(&cs, overlap, max);
		if (bad && failures++ < 3)
			fprintf(stderr, "  round %d: kind %d n %zu target %u overlap %u max %u: "
			        "rc %d, %d violations\n", round, kind, n, target, overlap, max, rc, bad);
	}
	CHECK_EQ(failures, 0);
}

/* Random multi-byte text with tiny targets: never split a character. */
static void test_random_utf8_boundaries(void)
{
	static const char *const chars[] = { "a", " ", "\n", "\xc3\xa9", "\xe4\xb8\xad",
	                                     "\xf0\x9f\x98\x80" };
	static char doc[8192];
	int failures = 0;
	for (int round = 0; round < 300; round++) {
		size_t n = 0;
		while (n + 4 < sizeof doc && rnd(3000) != 0) {
			const char *c = chars[rnd(FA_ARRAY_LEN(chars))];
			if (rnd(8) == 0)
				c = "\xe4\xb8\xad";
			memcpy(doc + n, c, strlen(c));
			n += strlen(c);
		}
		for (int kind = 0; kind < 3; kind++) {
			uint32_t max = 4 + rnd(40), target = 1 + rnd(max);
			chunks cs;
			int rc = run_chunker(&cs, doc, n, kind, target, rnd(target), max);
			if (rc != 0 || check_invariants(&cs, target, max) != 0)
				failures++;
		}
	}
	CHECK_EQ(failures, 0);
}

/* ---- specific behaviour ---------------------------------------------------------------- */

static void test_empty_and_blank(void)
{
	chunks cs;
	CHECK_OK(run_chunker(&cs, "", 0, DOC_TEXT, 100, 0, 200));
	CHECK_EQ(cs.count, 0);
	CHECK_OK(run_chunker(&cs, NULL, 0, DOC_MARKDOWN, 100, 0, 200));
	CHECK_EQ(cs.count, 0);
	CHECK_OK(run_chunker(&cs, "\n\n  \n", 5, DOC_CODE, 100, 0, 200));
	CHECK_EQ(cs.count, 1);
	CHECK_EQ(check_invariants(&cs, 0, 200), 0);
	/* No trailing newline. */
	CHECK_OK(run_chunker(&cs, "one line", 8, DOC_TEXT, 100, 0, 200));
	CHECK_EQ(cs.count, 1);
	CHECK_EQ(cs.v[0].c.line_start, 1);
	CHECK_EQ(cs.v[0].c.line_end, 1);
	CHECK_EQ(run_chunker(&cs, "x", 1, 9, 100, 0, 200), FATHOM_EINVAL);
	CHECK_EQ(text_chunk_doc("x", 1, DOC_TEXT, NULL, NULL, NULL), FATHOM_EINVAL);
	/* NULL options mean the defaults (target 1500, max 6000). */
	static char doc[7000];
	for (size_t i = 0; i < sizeof doc; i++)
		doc[i] = i % 50 == 49 ? '\n' : 'a';
	CHECK_OK(run_chunker_opts(&cs, doc, sizeof doc, DOC_TEXT, NULL));
	CHECK_EQ(check_invariants(&cs, 0, 1500), 0);
	CHECK_EQ(cs.count, 5);
}

static void test_markdown_trails(void)
{
	const char *doc =
		"# Guide\n"
		"\n"
		"Intro text for the guide, long enough to stand alone here.\n"
		"\n"
		"## Install\n"
		"\n"
		"Run the installer and wait for it to finish properly.\n"
		"\n"
		"### Debian\n"
		"\n"
		"Use apt to install the package on Debian systems today.\n"
		"\n"
		"## Usage\n"
		"\n"
		"Call the program with a folder to index right away.\n";
	chunks cs;
	/* A small target: every section on its own. */
	CHECK_OK(run_chunker(&cs, doc, strlen(doc), DOC_MARKDOWN, 80, 0, 1000));
	CHECK_EQ(check_invariants(&cs, 0, 1000), 0);
	CHECK_EQ(cs.count, 4);
	if (cs.count == 4) {
		CHECK_STR(cs.v[0].headings, "Guide");
		CHECK_STR(cs.v[1].headings, "Guide > Install");
		CHECK_STR(cs.v[2].headings, "Guide > Install > Debian");
		CHECK_STR(cs.v[3].headings, "Guide > Usage");
		CHECK(starts_with(chunk_text(&cs, 1), "## Install\n"));
		CHECK(starts_with(chunk_text(&cs, 2), "### Debian\n"));
		CHECK(starts_with(chunk_text(&cs, 3), "## Usage\n"));
		CHECK_EQ(cs.v[1].c.line_start, 5);
		CHECK_EQ(cs.v[2].c.line_start, 9);
	}

	/* A bigger target: the subsection joins its section, a sibling does
	 * not join. */
	CHECK_OK(run_chunker(&cs, doc, strlen(doc), DOC_MARKDOWN, 400, 0, 1000));
	CHECK_EQ(check_invariants(&cs, 0, 1000), 0);
	CHECK_EQ(cs.count, 3);
	if (cs.count == 3) {
		CHECK_STR(cs.v[0].headings, "Guide");
		CHECK_STR(cs.v[1].headings, "Guide > Install");
		CHECK(strstr(chunk_text(&cs, 1), "### Debian") != NULL);
		CHECK_STR(cs.v[2].headings, "Guide > Usage");
	}

	/* Setext headings and closing hashes; a chunk of only a heading takes
	 * what follows. */
	const char *doc2 =
		"Title\n"
		"=====\n"
		"## Part ##\n"
		"Body of the part.\n"
		"\n"
		"Second\n"
		"------\n"
		"More.\n";
	CHECK_OK(run_chunker(&cs, doc2, strlen(doc2), DOC_MARKDOWN, 20, 0, 1000));
	CHECK_EQ(check_invariants(&cs, 0, 1000), 0);
	CHECK_EQ(cs.count, 2);
	if (cs.count == 2) {
		CHECK_STR(cs.v[0].headings, "Title > Part");
		CHECK(strstr(chunk_text(&cs, 0), "Body of the part.") != NULL);
		CHECK_STR(cs.v[1].headings, "Title > Second");
		CHECK(starts_with(chunk_text(&cs, 1), "Second\n------\n"));
	}

	/* Code and text documents have no trail. */
	CHECK_OK(run_chunker(&cs, doc, strlen(doc), DOC_TEXT, 80, 0, 1000));
	for (size_t i = 0; i < cs.count; i++)
		CHECK_STR(cs.v[i].headings, "");
}

static void test_markdown_fences(void)
{
	char doc[4096];
	size_t n = 0;
	n += (size_t)snprintf(doc + n, sizeof doc - n, "# Code\n\nBefore the block.\n\n```sh\n");
	size_t fence_start = n - 6;
	for (int i = 0; i < 12; i++)
		n += (size_t)snprintf(doc + n, sizeof doc - n, "echo line %d\n%s", i,
		                      i == 5 ? "\n# not a heading\n\n" : "");
	n += (size_t)snprintf(doc + n, sizeof doc - n, "```\n");
	size_t fence_end = n;
	n += (size_t)snprintf(doc + n, sizeof doc - n, "\nAfter the block.\n");

	/* Target far below the block, max above it: the block is one chunk. */
	chunks cs;
	CHECK_OK(run_chunker(&cs, doc, n, DOC_MARKDOWN, 40, 0, 1000));
	CHECK_EQ(check_invariants(&cs, 0, 1000), 0);
	int found = 0;
	for (size_t i = 0; i < cs.count; i++) {
		const text_chunk *c = &cs.v[i].c;
		if (c->byte_start <= fence_start && c->byte_end >= fence_end)
			found = 1;
		/* "# not a heading" inside the fence changes no trail. */
		CHECK_STR(cs.v[i].headings, "Code");
	}
	CHECK(found);

	/* Max below the block: it is cut, within max. */
	CHECK_OK(run_chunker(&cs, doc, n, DOC_MARKDOWN, 40, 0, 60));
	CHECK_EQ(check_invariants(&cs, 0, 60), 0);
	CHECK(cs.count > 4);

	/* An unclosed fence runs to the end. */
	const char *open = "Text\n\n```\n# inside\n\nmore\n";
	CHECK_OK(run_chunker(&cs, open, strlen(open), DOC_MARKDOWN, 6, 0, 100));
	CHECK_EQ(check_invariants(&cs, 0, 100), 0);
	CHECK_EQ(cs.count, 2);
	if (cs.count == 2)
		CHECK(starts_with(chunk_text(&cs, 1), "```\n# inside\n\nmore\n"));
}

static const char c_snippet[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"\n"
	"/* Add two numbers. */\n"
	"static int add(int a, int b)\n"
	"{\n"
	"\tint sum = a + b;\n"
	"\n"
	"\treturn sum;\n"
	"}\n"
	"\n"
	"static int twice(int a)\n"
	"{\n"
	"\treturn add(a, a);\n"
	"}\n"
	"struct point {\n"
	"\tint x, y;\n"
	"};\n"
	"int main(void)\n"
	"{\n"
	"\tprintf(\"%d\\n\", twice(21));\n"
	"\n"
	"\treturn 0;\n"
	"}\n";

static void test_code_blocks(void)
{
	chunks cs;
	size_t n = strlen(c_snippet);
	/* Chunks start at top-level blocks; the small struct is packed with
	 * the function before it. */
	CHECK_OK(run_chunker(&cs, c_snippet, n, DOC_CODE, 90, 0, 500));
	CHECK_EQ(check_invariants(&cs, 0, 500), 0);
	const char *want[] = { "#include <stdio.h>", "/* Add two numbers. */", "static int twice",
	                       "int main(void)" };
	CHECK_EQ(cs.count, FA_ARRAY_LEN(want));
	for (size_t i = 0; i < cs.count && i < FA_ARRAY_LEN(want); i++) {
		if (!starts_with(chunk_text(&cs, i), want[i])) {
			fprintf(stderr, "  chunk %zu: %s\n", i, chunk_text(&cs, i));
			CHECK(0);
		}
	}
	/* The function add() with its comment is one chunk: lines 4-11. */
	if (cs.count >= 3) {
		CHECK_EQ(cs.v[1].c.line_start, 4);
		CHECK_EQ(cs.v[1].c.line_end, 11);
		CHECK(strstr(chunk_text(&cs, 2), "struct point {\n\tint x, y;\n};\n") != NULL);
	}

	/* A large target packs small blocks together. */
	CHECK_OK(run_chunker(&cs, c_snippet, n, DOC_CODE, 200, 0, 500));
	CHECK_EQ(check_invariants(&cs, 0, 500), 0);
	CHECK(cs.count >= 2 && cs.count <= 3);

	/* An oversized function is split at blank lines, then lines; its
	 * first piece starts a fresh chunk. */
	char big[4096];
	size_t m = (size_t)snprintf(big, sizeof big, "int small;\n\nvoid big(void)\n{\n");
	for (int i = 0; i < 30; i++)
		m += (size_t)snprintf(big + m, sizeof big - m, "\tcall_number_%02d();\n%s", i,
		                      i % 10 == 9 ? "\n" : "");
	m += (size_t)snprintf(big + m, sizeof big - m, "}\n");
	CHECK_OK(run_chunker(&cs, big, m, DOC_CODE, 250, 0, 300));
	CHECK_EQ(check_invariants(&cs, 0, 300), 0);
	CHECK_EQ(cs.count, 4);
	if (cs.count >= 2) {
		CHECK_STR(chunk_text(&cs, 0), "int small;\n\n");
		CHECK(starts_with(chunk_text(&cs, 1), "void big(void)\n{\n"));
	}
	/* Pieces split at the blank lines inside the function. */
	int at_blank = 0;
	for (size_t i = 1; i < cs.count; i++) {
		size_t s = cs.v[i].c.byte_start;
		if (s >= 2 && big[s - 1] == '\n' && big[s - 2] == '\n')
			at_blank++;
	}
	CHECK_EQ(at_blank, 3);

	/* Below the paragraph size, lines are packed up to the target. */
	CHECK_OK(run_chunker(&cs, big, m, DOC_CODE, 100, 0, 300));
	CHECK_EQ(check_invariants(&cs, 0, 300), 0);
	for (size_t i = 0; i < cs.count; i++)
		CHECK(cs.v[i].c.byte_end - cs.v[i].c.byte_start <= 100);
}

static void test_text_paragraphs(void)
{
	const char *doc =
		"First paragraph, line one.\n"
		"First paragraph, line two.\n"
		"\n"
		"Second paragraph.\n"
		"\n"
		"\n"
		"Third paragraph is here.\n";
	chunks cs;
	CHECK_OK(run_chunker(&cs, doc, strlen(doc), DOC_TEXT, 60, 0, 200));
	CHECK_EQ(check_invariants(&cs, 0, 200), 0);
	CHECK_EQ(cs.count, 2);
	if (cs.count == 2) {
		CHECK_STR(chunk_text(&cs, 0), "First paragraph, line one.\nFirst paragraph, line two.\n\n");
		CHECK(starts_with(chunk_text(&cs, 1), "Second paragraph.\n"));
		CHECK_EQ(cs.v[1].c.line_start, 4);
		CHECK_EQ(cs.v[1].c.line_end, 7);
	}
	/* Everything fits: one chunk. */
	CHECK_OK(run_chunker(&cs, doc, strlen(doc), DOC_TEXT, 1000, 0, 2000));
	CHECK_EQ(cs.count, 1);
}

static void test_long_lines(void)
{
	/* One 1000-byte line of words, max 300: cut at spaces into pieces of
	 * at most the target. */
	char doc[1100];
	size_t n = 0;
	while (n + 6 < 1000) {
		memcpy(doc + n, "word ", 5);
		n += 5;
	}
	doc[n++] = '\n';
	chunks cs;
	CHECK_OK(run_chunker(&cs, doc, n, DOC_TEXT, 100, 0, 300));
	CHECK_EQ(check_invariants(&cs, 0, 300), 0);
	CHECK(cs.count >= 10);
	for (size_t i = 0; i + 1 < cs.count; i++) {
		CHECK(cs.v[i].c.byte_end - cs.v[i].c.byte_start <= 100);
		CHECK(doc[cs.v[i].c.byte_end - 1] == ' ');
		CHECK_EQ(cs.v[i].c.line_start, 1);
	}
	/* A line between target and max stays whole. */
	CHECK_OK(run_chunker(&cs, doc, 251, DOC_TEXT, 100, 0, 300));
	CHECK_EQ(cs.count, 1);

	/* Multi-byte characters only, no spaces: UTF-8 boundaries. */
	n = 0;
	for (int i = 0; i < 300; i++) {
		memcpy(doc + n, "\xe4\xb8\xad", 3);
		n += 3;
	}
	CHECK_OK(run_chunker(&cs, doc, n, DOC_CODE, 50, 0, 64));
	CHECK_EQ(check_invariants(&cs, 0, 64), 0);
	CHECK(cs.count >= 18);
	/* A target smaller than one character still makes progress. */
	CHECK_OK(run_chunker(&cs, doc, 30, DOC_TEXT, 1, 0, 4));
	CHECK_EQ(check_invariants(&cs, 0, 4), 0);
	CHECK_EQ(cs.count, 10);
}

static void test_overlap(void)
{
	char doc[4096];
	size_t n = 0;
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(doc + n, sizeof doc - n, "line number %02d of the text\n", i);
	chunks cs;
	CHECK_OK(run_chunker(&cs, doc, n, DOC_TEXT, 150, 60, 400));
	CHECK_EQ(check_invariants(&cs, 60, 400), 0);
	CHECK(cs.count > 3);
	int overlapped = 0;
	for (size_t i = 1; i < cs.count; i++) {
		size_t s = cs.v[i].c.byte_start, prev_end = cs.v[i - 1].c.byte_end;
		if (s < prev_end) {
			overlapped++;
			CHECK(doc[s - 1] == '\n');          /* a line start */
			CHECK(prev_end - s <= 60);
		}
	}
	CHECK_EQ(overlapped, (int)cs.count - 1);

	/* No overlap into a new Markdown section. */
	const char *md = "# A\n\none two three four five\n\n# B\n\nsix seven eight nine\n";
	CHECK_OK(run_chunker(&cs, md, strlen(md), DOC_MARKDOWN, 30, 20, 100));
	CHECK_EQ(check_invariants(&cs, 20, 100), 0);
	CHECK_EQ(cs.count, 2);
	if (cs.count == 2)
		CHECK(starts_with(chunk_text(&cs, 1), "# B\n"));
}

static void test_callback_stop(void)
{
	chunks cs;
	memset(&cs, 0, sizeof cs);
	static got_chunk store[8];
	cs.v = store;
	cs.stop_after = 2;
	const char *doc = "a\n\nb\n\nc\n\nd\n";
	text_chunk_opts o = { .target = 2, .overlap = 0, .max = 10 };
	CHECK_EQ(text_chunk_doc(doc, strlen(doc), DOC_TEXT, &o, chunk_cb, &cs), 7);
	CHECK_EQ(cs.count, 2);
}

static void test_title(void)
{
	size_t len = 0;
	const char *t;
	const char *a = "Some preface\n\n## Not this\n\n#  The Title  #\nbody\n";
	t = text_markdown_title(a, strlen(a), &len);
	CHECK(t != NULL && len == 9 && memcmp(t, "The Title", 9) == 0);

	const char *b = "Setext Title\n============\n\ntext\n";
	t = text_markdown_title(b, strlen(b), &len);
	CHECK(t != NULL && len == 12 && memcmp(t, "Setext Title", 12) == 0);

	const char *c = "---\ntitle: x\n---\n```\n# comment in code\n```\n# Real\n";
	t = text_markdown_title(c, strlen(c), &len);
	CHECK(t != NULL && len == 4 && memcmp(t, "Real", 4) == 0);

	const char *d = "no title here\n## only h2\ntext\n---\n";
	t = text_markdown_title(d, strlen(d), &len);
	CHECK(t == NULL);
	CHECK_EQ(len, 0);
	CHECK(text_markdown_title("", 0, &len) == NULL);
	CHECK(text_markdown_title("#\n", 2, &len) == NULL);
	t = text_markdown_title("# x", 3, NULL);
	CHECK(t != NULL && *t == 'x');
	/* "#hashtag" is not a heading. */
	CHECK(text_markdown_title("#hashtag\n", 9, &len) == NULL);
}

static void test_alloc_failure(void)
{
	size_t n = strlen(c_snippet);
	for (long k = 0; k < 12; k++) {
		chunks cs;
		fa_alloc_fail_after(k);
		int rc = run_chunker(&cs, c_snippet, n, DOC_MARKDOWN, 50, 10, 200);
		fa_alloc_fail_after(-1);
		CHECK(rc == FATHOM_OK || rc == FATHOM_ENOMEM);
		if (rc == FATHOM_OK)
			CHECK_EQ(check_invariants(&cs, 10, 200), 0);
	}
}

int main(void)
{
	RUN(test_random_invariants);
	RUN(test_random_utf8_boundaries);
	RUN(test_empty_and_blank);
	RUN(test_markdown_trails);
	RUN(test_markdown_fences);
	RUN(test_code_blocks);
	RUN(test_text_paragraphs);
	RUN(test_long_lines);
	RUN(test_overlap);
	RUN(test_callback_stop);
	RUN(test_title);
	RUN(test_alloc_failure);
	return TEST_DONE();
}
