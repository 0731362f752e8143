/*
 * fuzz_query.c — arbitrary bytes as a query against a small fixed index.
 * The first byte picks the matching mode, k, the snippet size and a
 * filter; the rest is the query. Each query runs pruned and exhaustive and
 * the two must agree exactly; every string and highlight of every hit is
 * read in full, so a bad pointer or span shows under ASan.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "query/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ix_index *ix;
static text_analyzer *an;
static char dir[256];
static size_t sink;

static const char *texts[] = {
	"The kernel scheduler picks the next task.\nIt runs getUserName() and get_user_name.",
	"Quick brown fox jumps over the lazy dog. 2.0.1 release notes: HTTPServer fixed.",
	"東京大学の研究 and Ωmega ﬁle naïve café — unicode text with CJK 日本語.",
	"sha256sum a1b2c3d4e5f6 parseHTTPRequest IPv6 URLs user name get the user",
	"",
};

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p);
}

static void cleanup(void)
{
	if (ix)
		ix_close(ix);
	if (an)
		text_analyzer_free(an);
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static int setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/fathom-fuzz-query-%ld", (long)getpid());
	if (text_analyzer_new(&an, "english") || ix_open(&ix, dir, IX_CREATE | IX_WRITE, "english"))
		return -1;
	atexit(cleanup);
	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		char key[32], path[64];
		snprintf(key, sizeof key, "doc%zu", i);
		snprintf(path, sizeof path, i % 2 ? "src/d%zu.c" : "docs/d%zu.md", i);
		const char *meta = i % 2 ? "team=a" : "team=b";
		size_t len = strlen(texts[i]);
		ix_chunk_in ch = { 0, (uint32_t)len, 1, 2, "Intro > Kernel tasks", 20 };
		ix_doc_in d;
		memset(&d, 0, sizeof d);
		d.key = key;
		d.path = path;
		d.title = i == 1 ? "Quick brown guide" : "kernel notes";
		d.url = "";
		d.lang = i % 2 ? "c" : "markdown";
		d.meta = &meta;
		d.n_meta = 1;
		d.text = texts[i];
		d.text_len = len;
		d.size = len;
		d.chunks = &ch;
		d.n_chunks = 1;
		if (ix_add_doc(ix, an, &d))
			return -1;
		if (i == 2 && ix_commit(ix))
			return -1;
	}
	return ix_commit(ix) ? -1 : 0;
}

static void read_hits(const fathom_results *r)
{
	for (size_t i = 0; i < fathom_results_count(r); i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		size_t n = strlen(h->snippet);
		sink += strlen(h->doc_id) + strlen(h->path) + strlen(h->title) + strlen(h->url) + n;
		for (uint32_t k = 0; k < h->n_highlights; k++)
			if ((size_t)h->highlights[k].start + h->highlights[k].len > n)
				__builtin_trap();
		for (uint32_t f = 0; f < h->n_fields; f++)
			for (uint32_t k = 0; k < h->n_matched[f]; k++)
				sink += strlen(h->matched[f][k]);
	}
	for (size_t i = 0; i < fathom_results_nterms(r); i++)
		sink += strlen(fathom_results_term(r, i, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	if (!ready) {
		if (setup() != 0)
			return 0;
		ready = 1;
	}
	if (size == 0)
		return 0;
	char *q = malloc(size);
	if (!q)
		return 0;
	memcpy(q, data + 1, size - 1);
	q[size - 1] = '\0';
	fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
	static const char *filt[] = { "team=a" };
	o.match = data[0] % 3;
	o.k = 1 + (data[0] >> 2) % 8;
	o.snippet_bytes = (data[0] & 0x40) ? 16 : 240;
	if (data[0] & 0x80) {
		o.filters = filt;
		o.n_filters = 1;
		o.path_glob = "*.c";
	}
	fathom_results *a = NULL, *b = NULL;
	int ra = q_search(&a, ix, an, q, &o);
	o.exhaustive = 1;
	int rb = q_search(&b, ix, an, q, &o);
	if (ra != rb)
		__builtin_trap();
	if (ra == 0) {
		if (fathom_results_count(a) != fathom_results_count(b))
			__builtin_trap();
		for (size_t i = 0; i < fathom_results_count(a); i++)
			if (fathom_results_hit(a, i)->chunk_id != fathom_results_hit(b, i)->chunk_id ||
			    fathom_results_hit(a, i)->score != fathom_results_hit(b, i)->score)
				__builtin_trap();
		read_hits(a);
	}
	fathom_results_free(a);
	fathom_results_free(b);
	free(q);
	return 0;
}
