/*
 * test_index.c — the index folder end to end: write, commit, reopen;
 * replace and delete through tombstones; merges that must keep every live
 * posting; rollback; the writer lock; a writer killed at random instants;
 * the document store; and damaged files (a byte flipped in every page,
 * files cut short), which must give FATHOM_ECORRUPT naming the file.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <unistd.h>

#include "index/index_int.h"
#include "test.h"

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint32_t rnd_below(uint32_t n)
{
	return n ? (uint32_t)(rnd() % n) : 0;
}

static const char *words[] = {
	"alpha", "beta", "gamma", "delta", "kernel", "memory", "scheduler", "lock", "mutex",
	"getUserName", "snake_case_name", "page", "table", "index", "search", "engine",
	"postings", "block", "segment", "merge", "the", "of", "and", "running", "runs",
	"XMLHttpRequest", "v2.0.1", "0x1f", "interrupt", "driver", "network", "packet",
};

/* Random text of about n bytes, lines of a few words. */
static char *random_text(size_t n, size_t *len)
{
	char *s = malloc(n + 64);
	size_t o = 0;
	while (o < n) {
		const char *w = words[rnd_below(sizeof words / sizeof words[0])];
		size_t l = strlen(w);
		memcpy(s + o, w, l);
		o += l;
		s[o++] = rnd_below(8) == 0 ? '\n' : ' ';
		if (rnd_below(50) == 0)
			o += (size_t)sprintf(s + o, "id%u ", (unsigned)rnd_below(100000));
	}
	s[o] = '\0';
	*len = o;
	return s;
}

/* Add a doc with chunks of ~chunk bytes (cut at spaces). */
static int add_doc(ix_index *ix, text_analyzer *an, const char *key, const char *text, size_t len,
                   size_t chunk)
{
	ix_chunk_in ch[4096];
	size_t nch = 0, at = 0;
	uint32_t line = 1;
	while (at < len && nch < 4096) {
		size_t end = at + chunk < len ? at + chunk : len;
		while (end < len && text[end] != ' ' && text[end] != '\n')
			end++;
		uint32_t l0 = line;
		for (size_t i = at; i < end; i++)
			line += text[i] == '\n';
		ch[nch] = (ix_chunk_in){ (uint32_t)at, (uint32_t)end, l0, line, nch % 3 ? "Intro > Setup" : "",
		                         nch % 3 ? 13 : 0 };
		nch++;
		at = end;
	}
	const char *tags[] = { "linux", "kernel docs" };
	const char *meta[] = { "source=test", "lang=en" };
	ix_doc_in d = { key, key, "A title of the kernel", "http://x/y", "text", DOC_TEXT, tags, 2,
	                meta, 2, len, 12345, fa_hash64(text, len, 0), text, len, ch, nch, 0, 0, 0, 0, NULL, 0, NULL, 0, 0 };
	return ix_add_doc(ix, an, &d);
}

static char *tmp_index(const char *tag)
{
	return test_tmpdir(tag);
}

/* Every posting of the live chunks of the committed snapshot, as sorted
 * lines "term key#order tfs positions": a reference independent of chunk
 * ids, to compare before and after a merge. */
typedef struct post_dump {
	char **lines;
	size_t n, cap;
	ix_segment *s;
	ix_postings *p;
	uint32_t *pos;
	int err;
} post_dump;

static int dump_term(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	post_dump *d = ctx;
	int rc = ix_post_open(d->p, d->s, ti);
	while (!rc && d->p->doc != IX_END) {
		uint32_t c = d->p->doc;
		if (!seg_is_deleted(d->s, c)) {
			ix_chunk_info ci;
			ix_doc_info di;
			if (seg_chunk(d->s, c, &ci) || seg_doc(d->s, ci.doc, &di))
				return d->err = 1;
			fbuf b;
			fbuf_init(&b, 0);
			fbuf_printf(&b, "%.*s %s#%u", (int)len, term, di.key, ci.order);
			uint16_t tf[FATHOM_NFIELDS];
			ix_post_tf(d->p, tf);
			for (int f = 0; f < FATHOM_NFIELDS; f++) {
				uint32_t n = 0;
				fbuf_printf(&b, " f%d:%u:", f, tf[f]);
				if (tf[f] && ix_post_positions(d->p, f, d->pos, IX_MAX_TF, &n))
					return d->err = 1;
				for (uint32_t k = 0; k < n; k++)
					fbuf_printf(&b, "%u,", d->pos[k]);
			}
			if (d->n == d->cap) {
				d->cap = d->cap ? d->cap * 2 : 1024;
				d->lines = realloc(d->lines, d->cap * sizeof *d->lines);
			}
			d->lines[d->n++] = fbuf_detach(&b, NULL);
		}
		rc = ix_post_next(d->p);
	}
	if (rc)
		d->err = 1;
	return 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static post_dump dump_index(ix_index *ix)
{
	post_dump d;
	memset(&d, 0, sizeof d);
	d.p = malloc(sizeof *d.p);
	d.pos = malloc(IX_MAX_TF * sizeof(uint32_t));
	for (size_t i = 0; i < ix_nsegments(ix); i++) {
		d.s = ix_segment_at(ix, i);
		if (seg_terms(d.s, NULL, 0, dump_term, &d))
			d.err = 1;
	}
	qsort(d.lines, d.n, sizeof *d.lines, str_cmp);
	free(d.p);
	free(d.pos);
	return d;
}

static void dump_free(post_dump *d)
{
	for (size_t i = 0; i < d->n; i++)
		fa_free(d->lines[i]);
	free(d->lines);
}

static int dumps_equal(const post_dump *a, const post_dump *b)
{
	if (a->n != b->n) {
		fprintf(stderr, "  %zu postings before, %zu after\n", a->n, b->n);
		return 0;
	}
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->lines[i], b->lines[i]) != 0) {
			fprintf(stderr, "  differ: %s | %s\n", a->lines[i], b->lines[i]);
			return 0;
		}
	return 1;
}

static uint64_t live_docs(ix_index *ix)
{
	ix_sizes sz;
	ix_sizes_get(ix, &sz);
	return sz.docs_live;
}

/* Find a live doc by key in the committed snapshot. */
static int find_live(ix_index *ix, const char *key, ix_segment **seg, uint32_t *doc)
{
	for (size_t i = 0; i < ix_nsegments(ix); i++) {
		ix_segment *s = ix_segment_at(ix, i);
		if (seg_find_doc(s, key, doc) == 0 && !seg_doc_is_deleted(s, *doc)) {
			*seg = s;
			return 0;
		}
	}
	return FATHOM_ENOTFOUND;
}

/* ---- tests ----------------------------------------------------------------- */

static text_analyzer *an;

static void test_write_reopen(void)
{
	char *dir = tmp_index("ixw");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, "english"));
	char *texts[20];
	size_t lens[20];
	for (int i = 0; i < 20; i++) {
		char key[32];
		snprintf(key, sizeof key, "docs/file%02d.txt", i);
		texts[i] = random_text(200 + rnd_below(5000), &lens[i]);
		CHECK_OK(add_doc(ix, an, key, texts[i], lens[i], 700));
	}
	/* Pending documents are visible to lookups, not to readers. */
	ix_doc_state st;
	CHECK_OK(ix_doc_lookup(ix, "docs/file03.txt", &st));
	CHECK_EQ(st.mtime_ns, 12345);
	CHECK_EQ(ix_nsegments(ix), 0);
	CHECK_OK(ix_commit(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	CHECK_EQ(ix_generation(ix), 1);
	uint64_t chunks = ix_total_chunks(ix);
	CHECK(chunks >= 20);
	CHECK(ix_avg_field_len(ix, FATHOM_FIELD_BODY) > 10);
	CHECK(ix_avg_field_len(ix, FATHOM_FIELD_TITLE) > 2);
	ix_close(ix);

	CHECK_OK(ix_open(&ix, dir, IX_READONLY, NULL));
	CHECK_STR(ix_stem_language(ix), "english");
	CHECK_EQ(ix_total_chunks(ix), chunks);
	CHECK_OK(ix_verify(ix));
	ix_segment *s = ix_segment_at(ix, 0);
	for (int i = 0; i < 20; i++) {
		char key[32];
		snprintf(key, sizeof key, "docs/file%02d.txt", i);
		uint32_t doc;
		CHECK_OK(seg_find_doc(s, key, &doc));
		ix_doc_info di;
		CHECK_OK(seg_doc(s, doc, &di));
		CHECK_STR(di.key, key);
		CHECK_STR(di.path, key);
		CHECK_STR(di.title, "A title of the kernel");
		CHECK_STR(di.url, "http://x/y");
		CHECK_EQ(di.n_tags, 2);
		CHECK_STR(di.tags, "linux");
		CHECK_STR(di.tags + strlen(di.tags) + 1, "kernel docs");
		CHECK_STR(ix_doc_meta(&di, "source"), "test");
		CHECK_STR(ix_doc_meta(&di, "lang"), "en");
		CHECK(ix_doc_meta(&di, "sourc") == NULL);
		CHECK_EQ(di.text_len, lens[i]);
		fbuf b;
		fbuf_init(&b, 0);
		CHECK_OK(seg_doc_text(s, doc, 0, UINT64_MAX, &b));
		CHECK(b.len == lens[i] && memcmp(b.data, texts[i], lens[i]) == 0);
		/* Chunks point back at their text. */
		for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks; c++) {
			ix_chunk_info ci;
			CHECK_OK(seg_chunk(s, c, &ci));
			CHECK_EQ(ci.doc, doc);
			CHECK_EQ(ci.order, c - di.first_chunk);
			CHECK(ci.field_len[FATHOM_FIELD_TITLE] >= 3);
			CHECK(ci.field_len[FATHOM_FIELD_TAGS] >= 3);
			if (ci.order % 3)
				CHECK(ci.headings_len == 13 && memcmp(ci.headings, "Intro > Setup", 13) == 0);
		}
		fbuf_free(&b);
		free(texts[i]);
	}
	uint32_t doc;
	CHECK_EQ(seg_find_doc(s, "nope", &doc), FATHOM_ENOTFOUND);
	/* Field terms are there: "kernel" in the title and tags, the path. */
	ix_term_info ti;
	CHECK_OK(seg_term(s, "kernel", 6, &ti));
	CHECK(ti.bound.max_tf[FATHOM_FIELD_TITLE] == 1 && ti.bound.max_tf[FATHOM_FIELD_TAGS] == 1);
	CHECK_OK(seg_term(s, "file03.txt", 10, &ti));
	CHECK_EQ(ti.bound.max_tf[FATHOM_FIELD_PATH], 1);
	CHECK_OK(seg_term(s, "getusername", 11, &ti));
	/* Prefix iteration. */
	ix_sizes sz;
	CHECK_OK(ix_sizes_get(ix, &sz));
	CHECK_EQ(sz.docs_live, 20);
	CHECK(sz.total > sz.docstore && sz.postings > 0 && sz.positions > 0 && sz.terms > 10);
	/* A second writer is refused while the first holds the lock; a reader is not. */
	ix_index *w1, *w2;
	CHECK_OK(ix_open(&w1, dir, IX_WRITE, NULL));
	int rc = ix_open(&w2, dir, IX_WRITE, NULL);
	CHECK_EQ(rc, FATHOM_ELOCKED);
	CHECK(strstr(fathom_errmsg(), "LOCK") != NULL);
	ix_index *r2;
	CHECK_OK(ix_open(&r2, dir, IX_READONLY, NULL));
	ix_close(r2);
	ix_close(w1);
	CHECK_OK(ix_open(&w2, dir, IX_WRITE, NULL));
	ix_close(w2);
	CHECK_EQ(add_doc(ix, an, "x", "y", 1, 10), FATHOM_EREADONLY);
	ix_close(ix);
	test_rmrf(dir);
	free(dir);
}

static int count_prefix(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	(void)ti;
	int *n = ctx;
	if (len < 2 || memcmp(term, "id", 2) != 0)
		return 1;
	(*n)++;
	return 0;
}

static int count_prefix_any(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	(void)ti;
	int *n = ctx;
	if (len < 22 || memcmp(term, "configuration_option_1", 22) != 0)
		return 1;
	(*n)++;
	return 0;
}

static int collect_key(void *ctx, const char *key)
{
	int *n = ctx;
	(void)key;
	(*n)++;
	return 0;
}

static void test_replace_delete(void)
{
	char *dir = tmp_index("ixd");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);   /* no merges here */
	for (int i = 0; i < 10; i++) {
		char key[16];
		snprintf(key, sizeof key, "k%d", i);
		CHECK_OK(add_doc(ix, an, key, "alpha beta gamma", 16, 100));
	}
	{
		const char *tags[] = { "t1" };
		const char *meta[] = { "a=b" };
		ix_chunk_in ch = { 0, 5, 1, 1, NULL, 0 };
		ix_doc_in d = { "json-7", "", "Json doc", "", "text", DOC_TEXT, tags, 1, meta, 1, 5, 0, 1,
		                "hello", 5, &ch, 1, 0, 0, 0, 0, NULL, 0, NULL, 0, 0 };
		CHECK_OK(ix_add_doc(ix, an, &d));
	}
	CHECK_OK(ix_commit(ix));
	/* Replace k1 (committed), delete k2, replace k3 twice before commit. */
	CHECK_OK(add_doc(ix, an, "k1", "delta delta", 11, 100));
	CHECK_OK(ix_delete_doc(ix, "k2"));
	CHECK_EQ(ix_delete_doc(ix, "k2"), FATHOM_ENOTFOUND);
	CHECK_EQ(ix_delete_doc(ix, "none"), FATHOM_ENOTFOUND);
	CHECK_OK(add_doc(ix, an, "k3", "one", 3, 100));
	CHECK_OK(add_doc(ix, an, "k3", "two words", 9, 100));
	ix_doc_state st;
	CHECK_EQ(ix_doc_lookup(ix, "k2", &st), FATHOM_ENOTFOUND);
	CHECK_OK(ix_doc_lookup(ix, "k3", &st));
	CHECK_EQ(st.size, 9);
	int n = 0;
	CHECK_OK(ix_foreach_live_key(ix, collect_key, &n));
	CHECK_EQ(n, 10);
	/* Readers still see the old snapshot until commit. */
	ix_segment *s;
	uint32_t doc;
	CHECK_OK(find_live(ix, "k2", &s, &doc));
	CHECK_OK(ix_commit(ix));
	CHECK_EQ(find_live(ix, "k2", &s, &doc), FATHOM_ENOTFOUND);
	CHECK_OK(find_live(ix, "k1", &s, &doc));
	ix_doc_info di;
	CHECK_OK(seg_doc(s, doc, &di));
	CHECK_EQ(di.text_len, 11);
	CHECK_OK(find_live(ix, "k3", &s, &doc));
	CHECK_OK(seg_doc(s, doc, &di));
	CHECK_EQ(di.text_len, 9);
	CHECK_EQ(live_docs(ix), 10);
	CHECK_OK(find_live(ix, "json-7", &s, &doc));
	CHECK_OK(seg_doc(s, doc, &di));
	CHECK_STR(di.path, "");
	CHECK_STR(di.tags, "t1");
	CHECK_STR(ix_doc_meta(&di, "a"), "b");
	CHECK_OK(ix_delete_doc(ix, "json-7"));
	CHECK_OK(ix_commit(ix));
	CHECK_EQ(live_docs(ix), 9);
	ix_close(ix);

	/* Reopened: tombstones were durable. */
	CHECK_OK(ix_open(&ix, dir, IX_READONLY, NULL));
	CHECK_EQ(live_docs(ix), 9);
	CHECK_EQ(find_live(ix, "k2", &s, &doc), FATHOM_ENOTFOUND);
	CHECK_OK(ix_verify(ix));
	ix_sizes sz;
	CHECK_OK(ix_sizes_get(ix, &sz));
	CHECK(sz.chunks_deleted >= 3);
	n = 0;
	CHECK_OK(ix_foreach_live_key(ix, collect_key, &n));
	CHECK_EQ(n, 9);
	/* The deleted doc's chunk is marked in the first segment. */
	s = ix_segment_at(ix, 0);
	CHECK_OK(seg_find_doc(s, "k2", &doc));
	CHECK(seg_doc_is_deleted(s, doc));
	CHECK_OK(seg_doc(s, doc, &di));
	CHECK(seg_is_deleted(s, di.first_chunk));
	ix_close(ix);

	/* Rollback drops adds and deletes, including flushed segments. */
	CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
	ix_set_flush_budget(ix, 1);   /* flush after every document */
	CHECK_OK(add_doc(ix, an, "new1", "fresh text", 10, 100));
	CHECK_OK(add_doc(ix, an, "new2", "more fresh text", 15, 100));
	CHECK_OK(ix_delete_doc(ix, "k4"));
	CHECK_OK(ix_doc_lookup(ix, "new1", &st));
	CHECK_OK(ix_rollback(ix));
	CHECK_EQ(ix_doc_lookup(ix, "new1", &st), FATHOM_ENOTFOUND);
	CHECK_OK(ix_doc_lookup(ix, "k4", &st));
	CHECK_OK(ix_commit(ix));
	CHECK_EQ(live_docs(ix), 9);
	ix_close(ix);
	/* Only files the manifest names remain. */
	DIR *d = opendir(dir);
	struct dirent *e;
	int stray = 0;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, ".tmp"))
			stray++;
	closedir(d);
	CHECK_EQ(stray, 0);
	test_rmrf(dir);
	free(dir);
}

/* Document strings: a path shared by consecutive documents (a JSONL
 * export's chunks) and a title that repeats the path are stored once, and
 * read back exactly, before and after an optimize (which merges). */
typedef struct str_case {
	const char *key, *path, *title;
} str_case;

static void check_strings(ix_index *ix, const str_case *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		ix_segment *s;
		uint32_t doc;
		ix_doc_info di;
		CHECK_OK(find_live(ix, c[i].key, &s, &doc));
		CHECK_OK(seg_doc(s, doc, &di));
		CHECK_STR(di.key, c[i].key);
		CHECK_STR(di.path, c[i].path);
		CHECK_STR(di.title, c[i].title);
		CHECK_STR(di.url, "u");
		CHECK_STR(di.lang, "c");
		CHECK_STR(di.tags, "t");
		CHECK_STR(ix_doc_meta(&di, "m"), "v");
	}
}

static void test_doc_strings(void)
{
	static const str_case c[] = {
		{ "a/b.c#0", "a/b.c", "a/b.c" },
		{ "a/b.c#1", "a/b.c", "a/b.c" },
		{ "a/b.c#2", "a/b.c", "Other title" },
		{ "a/b.c#3", "a/b.c", "" },
		{ "x/y.c", "x/y.c", "x/y.c" },        /* path is the key, title the path */
		{ "x/y.c#1", "x/y.c", "x/y" },
		{ "z#0", "", "" },                     /* no path */
		{ "z#1", "", "a/b.c" },
		{ "q#0", "a/b.c", "a/b.c" },           /* a path seen before, not just before */
	};
	size_t n = sizeof c / sizeof c[0];
	char *dir = tmp_index("ixs");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);
	for (size_t i = 0; i < n; i++) {
		const char *tags[] = { "t" };
		const char *meta[] = { "m=v" };
		ix_chunk_in ch = { 0, 5, 1, 1, NULL, 0 };
		ix_doc_in d = { c[i].key, c[i].path, c[i].title, "u", "c", DOC_CODE, tags, 1, meta, 1,
		                5, 0, 1, "hello", 5, &ch, 1, 0, 0, 0, 0, NULL, 0, NULL, 0, 0 };
		CHECK_OK(ix_add_doc(ix, an, &d));
		if (i == 4)
			CHECK_OK(ix_commit(ix));   /* two segments */
	}
	CHECK_OK(ix_commit(ix));
	check_strings(ix, c, n);
	CHECK_OK(ix_verify(ix));
	CHECK_OK(ix_delete_doc(ix, "a/b.c#1"));
	CHECK_OK(ix_optimize(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	CHECK_EQ(live_docs(ix), n - 1);
	ix_segment *s;
	uint32_t doc;
	CHECK_EQ(find_live(ix, "a/b.c#1", &s, &doc), FATHOM_ENOTFOUND);
	check_strings(ix, c, 1);
	check_strings(ix, c + 2, n - 2);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	test_rmrf(dir);
	free(dir);
}

static void test_merge(void)
{
	char *dir = tmp_index("ixm");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 1000, 1.0);
	ix_set_flush_budget(ix, 64 << 10);
	int ndocs = 0;
	for (int round = 0; round < 12; round++) {
		for (int i = 0; i < 15; i++) {
			char key[32];
			size_t len;
			snprintf(key, sizeof key, "m%d", (int)rnd_below(150));
			char *t = random_text(100 + rnd_below(round == 5 ? 150000 : 3000), &len);
			CHECK_OK(add_doc(ix, an, key, t, len, 500));
			free(t);
			ndocs++;
		}
		for (int i = 0; i < 3; i++) {
			char key[32];
			snprintf(key, sizeof key, "m%d", (int)rnd_below(150));
			int rc = ix_delete_doc(ix, key);
			CHECK(rc == 0 || rc == FATHOM_ENOTFOUND);
		}
		CHECK_OK(ix_commit(ix));
	}
	size_t nseg = ix_nsegments(ix);
	CHECK(nseg > 8);
	uint64_t live = live_docs(ix);
	post_dump before = dump_index(ix);
	CHECK(!before.err);
	CHECK(before.n > 1000);
	/* Texts before. */
	fbuf tb;
	fbuf_init(&tb, 0);
	for (size_t i = 0; i < ix_nsegments(ix); i++) {
		ix_segment *s = ix_segment_at(ix, i);
		for (uint32_t d = 0; d < seg_ndocs(s); d++) {
			if (seg_doc_is_deleted(s, d))
				continue;
			ix_doc_info di;
			seg_doc(s, d, &di);
			fbuf_printf(&tb, "%s:%llx;", di.key, (unsigned long long)di.content_hash);
		}
	}
	/* Merge down to 8 with the default policy. */
	ix_set_merge_policy(ix, 8, 0.3);
	CHECK_OK(ix_commit(ix));
	CHECK(ix_nsegments(ix) <= 8);
	CHECK(ix_nsegments(ix) < nseg);
	CHECK_EQ(live_docs(ix), live);
	post_dump after = dump_index(ix);
	CHECK(!after.err);
	CHECK(dumps_equal(&before, &after));
	dump_free(&after);
	/* Everything into one. */
	ix_set_merge_policy(ix, 1, 0.3);
	CHECK_OK(ix_commit(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	CHECK_EQ(live_docs(ix), live);
	after = dump_index(ix);
	CHECK(dumps_equal(&before, &after));
	ix_sizes sz;
	CHECK_OK(ix_sizes_get(ix, &sz));
	CHECK_EQ(sz.chunks_deleted, 0);
	/* Every live doc's text survived, byte for byte (checked by hash). */
	ix_segment *s = ix_segment_at(ix, 0);
	size_t seen = 0;
	for (uint32_t d = 0; d < seg_ndocs(s); d++) {
		ix_doc_info di;
		CHECK_OK(seg_doc(s, d, &di));
		fbuf t;
		fbuf_init(&t, 0);
		CHECK_OK(seg_doc_text(s, d, 0, di.text_len, &t));
		CHECK_EQ(fa_hash64(t.data, t.len, 0), di.content_hash);
		CHECK_STR(di.path, di.key);
		CHECK_STR(di.lang, "text");
		char needle[64];
		snprintf(needle, sizeof needle, "%s:%llx;", di.key, (unsigned long long)di.content_hash);
		fbuf_putc(&tb, 0);
		CHECK(strstr((const char *)tb.data, needle) != NULL);
		tb.len--;
		fbuf_free(&t);
		seen++;
	}
	CHECK_EQ(seen, live);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	/* And after reopening. */
	CHECK_OK(ix_open(&ix, dir, IX_READONLY, NULL));
	post_dump again = dump_index(ix);
	CHECK(dumps_equal(&before, &again));
	int n = 0;
	CHECK_OK(seg_terms(ix_segment_at(ix, 0), "id", 2, count_prefix, &n));
	CHECK(n > 10);
	ix_close(ix);
	/* A segment with most of its docs deleted is rewritten alone. */
	CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
	for (int i = 0; i < 150; i += 2) {
		char key[32];
		snprintf(key, sizeof key, "m%d", i);
		ix_delete_doc(ix, key);
	}
	CHECK_OK(ix_commit(ix));
	CHECK_OK(ix_sizes_get(ix, &sz));
	CHECK_EQ(sz.chunks_deleted, 0);
	CHECK_EQ(ix_nsegments(ix), 1);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	fbuf_free(&tb);
	dump_free(&before);
	dump_free(&after);
	dump_free(&again);
	test_rmrf(dir);
	free(dir);
}

static void test_docstore(void)
{
	char *dir = tmp_index("ixds");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	/* A mix of tiny docs sharing frames and big ones spanning several. */
	enum { N = 30 };
	char *t[N];
	size_t len[N];
	for (int i = 0; i < N; i++) {
		char key[16];
		snprintf(key, sizeof key, "d%d", i);
		size_t want = i % 7 == 0 ? 200000 + rnd_below(100000) : rnd_below(300);
		t[i] = random_text(want, &len[i]);
		if (i == 3)
			len[i] = 0;   /* an empty document */
		CHECK_OK(add_doc(ix, an, key, t[i], len[i], 2000));
	}
	CHECK_OK(ix_commit(ix));
	ix_segment *s = ix_segment_at(ix, 0);
	fbuf b;
	fbuf_init(&b, 0);
	for (int i = 0; i < N; i++) {
		char key[16];
		snprintf(key, sizeof key, "d%d", i);
		uint32_t doc;
		CHECK_OK(seg_find_doc(s, key, &doc));
		for (int k = 0; k < 20; k++) {
			uint64_t off = rnd_below((uint32_t)len[i] + 1), n = rnd_below(k < 10 ? 100 : 150000);
			fbuf_reset(&b);
			CHECK_OK(seg_doc_text(s, doc, off, n, &b));
			uint64_t want = FA_MIN(n, len[i] - off);
			CHECK_EQ(b.len, want);
			CHECK(memcmp(b.data, t[i] + off, want) == 0);
		}
		fbuf_reset(&b);
		CHECK_EQ(seg_doc_text(s, doc, len[i] + 1, 1, &b), FATHOM_EINVAL);
		free(t[i]);
	}
	/* A bounded buffer is respected. */
	fbuf small;
	fbuf_init(&small, 10);
	uint32_t doc;
	CHECK_OK(seg_find_doc(s, "d0", &doc));
	CHECK_EQ(seg_doc_text(s, doc, 0, 1000, &small), FATHOM_ETOOBIG);
	fbuf_free(&small);
	fbuf_free(&b);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- crash safety ------------------------------------------------------------ */

/* The child commits batches of 10 docs (keys b<batch>-<i>) until killed. */
static void crash_child(const char *dir)
{
	ix_index *ix;
	if (ix_open(&ix, dir, IX_WRITE, NULL))
		_exit(3);
	ix_set_flush_budget(ix, 32 << 10);
	ix_set_merge_policy(ix, 3, 0.3);
	for (int batch = 1000;; batch++) {
		for (int i = 0; i < 10; i++) {
			char key[32];
			size_t len;
			snprintf(key, sizeof key, "b%d-%d", batch, i);
			char *t = random_text(2000, &len);
			if (add_doc(ix, an, key, t, len, 400))
				_exit(4);
			free(t);
		}
		/* Replace one doc of the previous batch, too. */
		if (batch > 1000) {
			char key[32];
			snprintf(key, sizeof key, "b%d-0", batch - 1);
			if (add_doc(ix, an, key, "replaced", 8, 100))
				_exit(5);
		}
		if (ix_commit(ix))
			_exit(6);
	}
}

static int count_keys_cb(void *ctx, const char *key)
{
	int *n = ctx;
	(void)key;
	(*n)++;
	return 0;
}

static void test_crash(void)
{
	char *dir = tmp_index("ixc");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_close(ix);
	int last = 0;
	for (int round = 0; round < 12; round++) {
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0)
			crash_child(dir);
		usleep(50000 + rnd_below(400000));
		kill(pid, SIGKILL);
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status));
		/* The index is at a commit: whole batches only, and it verifies. */
		CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
		CHECK_OK(ix_verify(ix));
		int n = 0;
		CHECK_OK(ix_foreach_live_key(ix, count_keys_cb, &n));
		CHECK_EQ(n % 10, 0);
		CHECK(n >= last);
		last = n;
		ix_close(ix);
		/* The writer removed what the dead one left: every segment file is named. */
		ix_manifest m;
		CHECK_OK(ix_manifest_read(&m, dir));
		DIR *d = opendir(dir);
		struct dirent *e;
		int files = 0;
		while ((e = readdir(d)) != NULL)
			if (strncmp(e->d_name, "seg-", 4) == 0)
				files++;
		closedir(d);
		int named = 0;
		for (uint32_t i = 0; i < m.nsegs; i++)
			named += 1 + (m.segs[i].del_gen != 0);
		CHECK_EQ(files, named);
		ix_manifest_free(&m);
		/* Keep the batch numbering going in the next child. */
		if (n > 0)
			(void)0;
	}
	printf("     crash rounds left %d live docs\n", last);
	test_rmrf(dir);
	free(dir);
}

/* ---- damaged files ------------------------------------------------------------- */

static void join_path(char *out, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la + lb + 2 > cap) {
		fprintf(stderr, "path too long\n");
		exit(2);
	}
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
}

static int copy_dir(const char *from, const char *to)
{
	char cmd[2048];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", to, from, to);
	return system(cmd);
}

/* Read everything through the read paths; the result code. */
static int read_all(ix_index *ix)
{
	ix_postings *p = malloc(sizeof *p);
	uint32_t *pos = malloc(IX_MAX_TF * sizeof(uint32_t));
	int rc = 0;
	for (size_t i = 0; i < ix_nsegments(ix) && !rc; i++) {
		ix_segment *s = ix_segment_at(ix, i);
		ix_term_iter it;
		rc = ix_term_iter_seek(&it, s, 0);
		int r;
		while (!rc && (r = ix_term_iter_next(&it)) == 1) {
			ix_term_info ti;
			rc = seg_term(s, (const char *)it.term, it.len, &ti);
			if (!rc)
				rc = ix_post_open(p, s, &it.ti);
			while (!rc && p->doc != IX_END) {
				uint32_t n;
				for (int f = 0; f < FATHOM_NFIELDS && !rc; f++)
					rc = ix_post_positions(p, f, pos, IX_MAX_TF, &n);
				if (!rc) {
					ix_post_shallow(p, p->doc + 200);
					rc = ix_post_advance(p, p->doc + 1);
				}
			}
		}
		if (!rc && r < 0)
			rc = r;
		for (uint32_t d = 0; d < seg_ndocs(s) && !rc; d++) {
			ix_doc_info di;
			fbuf b;
			fbuf_init(&b, 0);
			rc = seg_doc(s, d, &di);
			if (!rc)
				rc = seg_doc_text(s, d, 0, di.text_len, &b);
			uint32_t doc;
			if (!rc)
				rc = seg_find_doc(s, di.key, &doc);
			fbuf_free(&b);
		}
		for (uint32_t c = 0; c < seg_nchunks(s) && !rc; c++) {
			ix_chunk_info ci;
			rc = seg_chunk(s, c, &ci);
		}
	}
	free(p);
	free(pos);
	return rc;
}

static int damaged_ok(int rc, const char *name)
{
	if (rc != FATHOM_ECORRUPT && rc != FATHOM_EVERSION) {
		fprintf(stderr, "  %s: got %d (%s)\n", name, rc, fathom_errmsg());
		return 0;
	}
	if (!strstr(fathom_errmsg(), name)) {
		fprintf(stderr, "  %s: message does not name it: %s\n", name, fathom_errmsg());
		return 0;
	}
	return 1;
}

/* Open, read and verify a damaged copy: each step must fail cleanly, and
 * at the latest verify must notice. */
static int check_damaged(const char *dir, const char *name)
{
	ix_index *ix;
	int rc = ix_open(&ix, dir, IX_READONLY, NULL);
	if (rc)
		return damaged_ok(rc, name);
	rc = read_all(ix);
	if (rc && !damaged_ok(rc, name)) {
		ix_close(ix);
		return 0;
	}
	rc = ix_verify(ix);
	ix_close(ix);
	return damaged_ok(rc, name);
}

static void test_corruption(void)
{
	char *dir = tmp_index("ixx");
	char work[600];
	snprintf(work, sizeof work, "%s-work", dir);
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);
	for (int i = 0; i < 40; i++) {
		char key[16];
		size_t len;
		snprintf(key, sizeof key, "c%d", i);
		char *t = random_text(i == 5 ? 140000 : 1500, &len);
		CHECK_OK(add_doc(ix, an, key, t, len, 600));
		free(t);
		if (i == 25)
			CHECK_OK(ix_commit(ix));
	}
	CHECK_OK(ix_delete_doc(ix, "c3"));
	CHECK_OK(ix_commit(ix));
	CHECK_OK(read_all(ix));
	ix_close(ix);

	DIR *d = opendir(dir);
	struct dirent *e;
	char names[32][256];
	int nn = 0;
	while ((e = readdir(d)) != NULL && nn < 32)
		if (e->d_name[0] != '.' && strcmp(e->d_name, "LOCK") != 0)
			snprintf(names[nn++], 256, "%s", e->d_name);
	closedir(d);
	CHECK(nn >= 4);   /* MANIFEST, two segments, a tombstone file */
	int flips = 0, bad = 0;
	for (int f = 0; f < nn; f++) {
		char path[4096];
		join_path(path, sizeof path, work, names[f]);
		char src[4096];
		join_path(src, sizeof src, dir, names[f]);
		struct stat st;
		stat(src, &st);
		size_t len = (size_t)st.st_size;
		/* Three bytes flipped (one at a time) in every page, and each of
		 * the last 8 bytes; each flip is undone after the check. */
		copy_dir(dir, work);
		for (size_t k = 0; k < 3 * ((len + 4095) / 4096) + 8; k++) {
			size_t page = k / 3, at;
			if (page * 4096 < len)
				at = page * 4096 + rnd_below((uint32_t)FA_MIN(4096, len - page * 4096));
			else
				at = len - 1 - (k - 3 * ((len + 4095) / 4096));
			if (at >= len)
				continue;
			int bit = 1 << rnd_below(8);
			FILE *fp = fopen(path, "r+b");
			fseek(fp, (long)at, SEEK_SET);
			int c = fgetc(fp);
			fseek(fp, (long)at, SEEK_SET);
			fputc(c ^ bit, fp);
			fclose(fp);
			flips++;
			if (!check_damaged(work, names[f])) {
				fprintf(stderr, "  flip at %zu of %s\n", at, names[f]);
				bad++;
			}
			fp = fopen(path, "r+b");
			fseek(fp, (long)at, SEEK_SET);
			fputc(c, fp);
			fclose(fp);
		}
		/* Cut short at several lengths. */
		size_t cuts[] = { 0, 1, 15, 16, len / 3, len / 2, len - 300, len - 4, len - 1 };
		for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
			if (cuts[k] >= len)
				continue;
			copy_dir(dir, work);
			CHECK(truncate(path, (off_t)cuts[k]) == 0);
			if (!check_damaged(work, names[f])) {
				fprintf(stderr, "  cut at %zu of %s\n", cuts[k], names[f]);
				bad++;
			}
		}
	}
	printf("     %d byte flips over %d files\n", flips, nn);
	CHECK_EQ(bad, 0);
	/* A missing segment file. */
	for (int f = 0; f < nn; f++) {
		if (!strstr(names[f], ".fseg"))
			continue;
		copy_dir(dir, work);
		char path[4096];
		join_path(path, sizeof path, work, names[f]);
		unlink(path);
		ix_index *x;
		CHECK_EQ(ix_open(&x, work, IX_READONLY, NULL), FATHOM_ECORRUPT);
		CHECK(strstr(fathom_errmsg(), names[f]) != NULL);
	}
	/* An unknown manifest version. */
	copy_dir(dir, work);
	{
		char path[4096];
		snprintf(path, sizeof path, "%s/MANIFEST", work);
		FILE *fp = fopen(path, "r+b");
		fseek(fp, 8, SEEK_SET);
		fputc(9, fp);
		fclose(fp);
		ix_index *x;
		CHECK_EQ(ix_open(&x, work, IX_READONLY, NULL), FATHOM_EVERSION);
	}
	test_rmrf(work);
	test_rmrf(dir);
	free(dir);
}

/* ---- the document store's dictionary ------------------------------------------ */

/* A set of documents and their text as given: the reference. */
typedef struct text_set {
	char key[64][16];
	char *t[64];
	size_t len[64];
	int n;
} text_set;

static void text_set_make(text_set *ts, const char *prefix, int n)
{
	ts->n = n;
	for (int i = 0; i < n; i++) {
		snprintf(ts->key[i], sizeof ts->key[i], "%s%d", prefix, i);
		/* Mostly a few KB, some spanning many frames, some empty. */
		size_t want = i % 9 == 0 ? 60000 + rnd_below(60000) : rnd_below(20000);
		ts->t[i] = random_text(want, &ts->len[i]);
		if (i % 13 == 4)
			ts->len[i] = 0;
	}
}

static void text_set_free(text_set *ts)
{
	for (int i = 0; i < ts->n; i++)
		free(ts->t[i]);
}

/* Every document of the sets whole, then random ranges of the segment's raw
 * stream that straddle frame boundaries, byte-exact against the reference
 * stream rebuilt from each document's text offset. */
static void check_texts(ix_index *ix, const text_set *sets, int nsets)
{
	ix_segment *s = ix_segment_at(ix, ix_nsegments(ix) - 1);
	unsigned char *ref = calloc(1, s->raw_text + 1);
	unsigned char *cov = calloc(1, s->raw_text + 1);   /* 1: the sets' text */
	fbuf b;
	fbuf_init(&b, 0);
	for (int k = 0; k < nsets; k++) {
		const text_set *ts = &sets[k];
		for (int i = 0; i < ts->n; i++) {
			ix_segment *hs;
			uint32_t doc;
			const unsigned char *r;
			CHECK_OK(find_live(ix, ts->key[i], &hs, &doc));
			CHECK(hs == s);
			CHECK_OK(seg_doc_rec(s, doc, &r));
			uint64_t off = fa_load64(r);
			CHECK(off + ts->len[i] <= s->raw_text);
			if (off + ts->len[i] <= s->raw_text) {
				memcpy(ref + off, ts->t[i], ts->len[i]);
				memset(cov + off, 1, ts->len[i]);
			}
			fbuf_reset(&b);
			CHECK_OK(seg_doc_text(s, doc, 0, ts->len[i], &b));
			CHECK_EQ(b.len, ts->len[i]);
			CHECK(b.len == ts->len[i] && memcmp(b.data, ts->t[i], b.len) == 0);
		}
	}
	uint64_t nframes = s->sec_len[IX_SEC_FRAMES] / IX_FRAME_REC, F = s->frame_raw;
	CHECK(nframes > 4);
	for (int k = 0; k < 300 && nframes > 1; k++) {
		/* a range across the start of a frame (frames copied by a merge
		 * need not be full, so the table says where they start) */
		uint64_t j = 1 + rnd_below((uint32_t)nframes - 1);
		uint64_t edge = fa_load64(s->data + s->sec_off[IX_SEC_FRAMES] + j * IX_FRAME_REC);
		uint64_t from = edge - 1 - FA_MIN(edge - 1, (uint64_t)rnd_below((uint32_t)F));
		uint64_t n = 1 + rnd_below(k % 3 ? (uint32_t)F : 3 * (uint32_t)F);
		n = FA_MIN(n, s->raw_text - from);
		/* only text of the sets (other documents may lie between) */
		if (memchr(cov + from, 0, n))
			continue;
		fbuf_reset(&b);
		CHECK_OK(ix_ds_read(s, from, n, &b));
		CHECK_EQ(b.len, n);
		CHECK(b.len == n && memcmp(b.data, ref + from, n) == 0);
	}
	fbuf_free(&b);
	free(ref);
	free(cov);
}

static int seg_has_dict(const ix_segment *s)
{
	return s->sec_len[IX_SEC_DOCSTORE_DICT] > 0 && s->frame_raw == IX_FRAME_RAW_DICT;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *d = malloc(*len + 1);
	if (d && fread(d, 1, *len, f) != *len) {
		free(d);
		d = NULL;
	}
	fclose(f);
	return d;
}

static void spit(const char *path, const unsigned char *d, size_t len)
{
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(d, 1, len, f);
		fclose(f);
	}
}

/* Open a damaged segment file on its own (resealing changes its footer CRC,
 * which the manifest would refuse), read every document's text and verify
 * it: 0 if all passed, else the first error. */
static int read_texts_and_verify(const char *path)
{
	ix_segment *s;
	int rc = seg_open_file(&s, path);
	if (rc)
		return rc;
	fbuf b;
	fbuf_init(&b, 0);
	for (uint32_t d = 0; d < seg_ndocs(s) && !rc; d++) {
		ix_doc_info di;
		fbuf_reset(&b);
		rc = seg_doc(s, d, &di);
		if (!rc)
			rc = seg_doc_text(s, d, 0, di.text_len, &b);
	}
	if (!rc)
		rc = seg_verify(s);
	fbuf_free(&b);
	seg_close(s);
	return rc;
}

static void test_docstore_dict(void)
{
	char *dir = tmp_index("ixdict");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);
	/* About 800 KB: trained at finish, from the whole held text. */
	text_set sets[2];
	text_set_make(&sets[0], "a", 64);
	for (int i = 0; i < sets[0].n; i++)
		CHECK_OK(add_doc(ix, an, sets[0].key[i], sets[0].t[i], sets[0].len[i], 2000));
	CHECK_OK(ix_commit(ix));
	CHECK(seg_has_dict(ix_segment_at(ix, 0)));
	check_texts(ix, &sets[0], 1);
	/* A training window smaller than the text: trained when it fills, the
	 * rest streamed. */
	ix_ds_set_train_window(300 << 10);
	text_set_make(&sets[1], "b", 64);
	for (int i = 0; i < sets[1].n; i++)
		CHECK_OK(add_doc(ix, an, sets[1].key[i], sets[1].t[i], sets[1].len[i], 2000));
	CHECK_OK(ix_commit(ix));
	ix_ds_set_train_window(0);
	CHECK(seg_has_dict(ix_segment_at(ix, 1)));
	check_texts(ix, &sets[1], 1);
	/* Small segments keep 64 KiB frames and no dictionary. */
	CHECK_OK(add_doc(ix, an, "small", "a small document", 16, 100));
	CHECK_OK(ix_commit(ix));
	ix_segment *sm = ix_segment_at(ix, 2);
	CHECK_EQ(sm->sec_len[IX_SEC_DOCSTORE_DICT], 0);
	CHECK_EQ(sm->frame_raw, IX_FRAME_RAW);
	CHECK_OK(ix_verify(ix));
	/* A merge trains anew, from samples of all its inputs. */
	CHECK_OK(ix_optimize(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	ix_segment *s = ix_segment_at(ix, 0);
	CHECK(seg_has_dict(s));
	check_texts(ix, sets, 2);
	CHECK_OK(ix_verify(ix));
	char name[256];
	snprintf(name, sizeof name, "%s", strrchr(seg_path(s), '/') + 1);
	uint64_t doff = s->sec_off[IX_SEC_DOCSTORE_DICT], dlen = s->sec_len[IX_SEC_DOCSTORE_DICT];
	ix_close(ix);

	/* A flipped byte in the dictionary: its page fails its checksum. */
	char work[600], path[4096];
	snprintf(work, sizeof work, "%s-work", dir);
	join_path(path, sizeof path, work, name);
	size_t flen;
	copy_dir(dir, work);
	unsigned char *img = slurp(path, &flen);
	CHECK(img && doff + dlen < flen);
	if (!img || doff + dlen >= flen)
		goto done;
	for (int k = 0; k < 4; k++) {
		uint64_t at = doff + rnd_below((uint32_t)dlen);
		unsigned char bit = (unsigned char)(1u << rnd_below(8));
		img[at] ^= bit;
		spit(path, img, flen);
		CHECK(check_damaged(work, name));
		img[at] ^= bit;
	}
	free(img);
	/* Behind valid checksums (resealed): a dictionary that is not one is
	 * FATHOM_ECORRUPT when text is read and in verify, never a crash. */
	copy_dir(dir, work);
	img = slurp(path, &flen);
	img[doff] ^= 0x40;   /* the dictionary's magic number */
	ix_seg_reseal(img, flen);
	spit(path, img, flen);
	CHECK_EQ(read_texts_and_verify(path), FATHOM_ECORRUPT);
	CHECK(strstr(fathom_errmsg(), "dictionary") != NULL);
	CHECK(strstr(fathom_errmsg(), name) != NULL);
	free(img);
	/* Random damage to the dictionary's header, tables and content: each
	 * read either succeeds (content bytes change text, not structure) or
	 * fails as corrupt. */
	int caught = 0;
	for (int k = 0; k < 40; k++) {
		copy_dir(dir, work);
		img = slurp(path, &flen);
		for (int j = 0; j < 1 + k % 4; j++) {
			uint64_t at = doff + (k % 2 ? rnd_below(FA_MIN((uint32_t)dlen, 600)) : rnd_below((uint32_t)dlen));
			img[at] ^= (unsigned char)(1 + rnd_below(255));
		}
		ix_seg_reseal(img, flen);
		spit(path, img, flen);
		int rc = read_texts_and_verify(path);
		CHECK(rc == 0 || rc == FATHOM_ECORRUPT);
		caught += rc == FATHOM_ECORRUPT;
		free(img);
	}
	printf("     %d of 40 resealed damaged dictionaries reported corrupt\n", caught);
	/* A frame size the format does not allow. */
	copy_dir(dir, work);
	img = slurp(path, &flen);
	ix_footer ft;
	ix_secent legacy[IX_LEGACY_NSEC];
	CHECK_OK(ix_footer_decode(img, flen, &ft, legacy));
	ft.frame_raw = 12345;
	ix_footer_encode(img + flen - IX_FOOTER_SIZE, &ft);
	ix_seg_reseal(img, flen);
	spit(path, img, flen);
	CHECK_EQ(read_texts_and_verify(path), FATHOM_ECORRUPT);
	free(img);
done:
	text_set_free(&sets[0]);
	text_set_free(&sets[1]);
	test_rmrf(work);
	test_rmrf(dir);
	free(dir);
}

/* Set k's letters shifted, so that each set trains its own dictionary. */
static void text_set_shift(text_set *ts, int k)
{
	for (int i = 0; i < ts->n; i++)
		for (size_t j = 0; j < ts->len[i]; j++) {
			char c = ts->t[i][j];
			if (c >= 'a' && c <= 'z')
				ts->t[i][j] = (char)('a' + (c - 'a' + 7 * k) % 26);
		}
}

static size_t seg_ndicts(const ix_segment *s)
{
	ix_ds_dictref d[IX_DS_MAX_DICTS];
	size_t n = 0;
	CHECK_OK(ix_ds_dicts(s, d, IX_DS_MAX_DICTS, &n));
	return n;
}

/* A merge of segments that keep all their documents copies their frames
 * and dictionaries (TDCS when there are several); one with a deletion, or
 * with more dictionaries than a segment may hold, recompresses. */
static void test_docstore_copy(void)
{
	char *dir = tmp_index("ixcopy");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);
	enum { NSETS = 4 };
	text_set sets[NSETS];
	const char *prefix[NSETS] = { "p", "q", "r", "s" };
	for (int k = 0; k < NSETS; k++) {
		text_set_make(&sets[k], prefix[k], 40);
		text_set_shift(&sets[k], k);
	}
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < sets[k].n; i++)
			CHECK_OK(add_doc(ix, an, sets[k].key[i], sets[k].t[i], sets[k].len[i], 2000));
		CHECK_OK(ix_commit(ix));
		CHECK(seg_has_dict(ix_segment_at(ix, (uint32_t)k)));
	}
	uint64_t comp_in = 0;
	for (uint32_t k = 0; k < 3; k++)
		comp_in += ix_segment_at(ix, k)->sec_len[IX_SEC_DOCSTORE];
	CHECK_OK(ix_optimize(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	ix_segment *s = ix_segment_at(ix, 0);
	CHECK_EQ(s->sec_len[IX_SEC_DOCSTORE_DICT], 0);
	CHECK(s->sec_len[IX_SEC_DOCSTORE_DICTS] > 0);
	CHECK_EQ(seg_ndicts(s), 3);
	CHECK_EQ(s->sec_len[IX_SEC_DOCSTORE], comp_in);   /* the frames, as they were */
	check_texts(ix, sets, 3);
	CHECK_OK(ix_verify(ix));
	/* Merged again with a fourth: four dictionaries, read after reopening. */
	for (int i = 0; i < sets[3].n; i++)
		CHECK_OK(add_doc(ix, an, sets[3].key[i], sets[3].t[i], sets[3].len[i], 2000));
	CHECK_OK(ix_commit(ix));
	CHECK_OK(ix_optimize(ix));
	ix_close(ix);
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);
	s = ix_segment_at(ix, 0);
	CHECK_EQ(seg_ndicts(s), 4);
	check_texts(ix, sets, NSETS);
	CHECK_OK(ix_verify(ix));
	char name[256];
	snprintf(name, sizeof name, "%s", strrchr(seg_path(s), '/') + 1);
	uint64_t doff = s->sec_off[IX_SEC_DOCSTORE_DICTS], dlen = s->sec_len[IX_SEC_DOCSTORE_DICTS];
	ix_close(ix);

	/* Behind valid checksums (resealed): a bad dictionary table is
	 * FATHOM_ECORRUPT naming the file, never a crash. */
	char work[600], path[4096];
	snprintf(work, sizeof work, "%s-work", dir);
	join_path(path, sizeof path, work, name);
	size_t flen;
	for (int v = 0; v < 4; v++) {
		copy_dir(dir, work);
		unsigned char *img = slurp(path, &flen);
		CHECK(img && doff + dlen < flen);
		if (!img || doff + dlen >= flen) {
			free(img);
			continue;
		}
		unsigned char *t = img + doff;
		switch (v) {
		case 0: fa_store32(t, 1); break;                               /* one: not TDCS */
		case 1: fa_store32(t, IX_DS_MAX_DICTS + 1); break;             /* too many */
		case 2: fa_store32(t + 12, fa_load32(t + 4)); break;           /* one dictionary twice */
		case 3: fa_store32(t + 4, (uint32_t)dlen); break;              /* outside the section */
		}
		ix_seg_reseal(img, flen);
		spit(path, img, flen);
		CHECK_EQ(read_texts_and_verify(path), FATHOM_ECORRUPT);
		CHECK(strstr(fathom_errmsg(), "dictionar") != NULL);
		CHECK(strstr(fathom_errmsg(), name) != NULL);
		free(img);
	}
	int caught = 0;
	for (int k = 0; k < 30; k++) {
		copy_dir(dir, work);
		unsigned char *img = slurp(path, &flen);
		if (!img)
			break;
		for (int j = 0; j < 1 + k % 3; j++)
			img[doff + (k % 2 ? rnd_below(64) : rnd_below((uint32_t)dlen))] ^=
				(unsigned char)(1 + rnd_below(255));
		ix_seg_reseal(img, flen);
		spit(path, img, flen);
		int rc = read_texts_and_verify(path);
		CHECK(rc == 0 || rc == FATHOM_ECORRUPT);
		caught += rc == FATHOM_ECORRUPT;
		free(img);
	}
	printf("     %d of 30 resealed damaged dictionary tables reported corrupt\n", caught);

	/* A deletion: the text is recompressed, with one dictionary trained anew. */
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);
	CHECK_OK(ix_delete_doc(ix, sets[0].key[2]));
	CHECK_OK(ix_commit(ix));
	CHECK_OK(ix_optimize(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	s = ix_segment_at(ix, 0);
	CHECK_EQ(s->sec_len[IX_SEC_DOCSTORE_DICTS], 0);
	CHECK_EQ(seg_ndicts(s), 1);
	check_texts(ix, sets + 1, NSETS - 1);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);

	/* More dictionaries than one segment holds: recompressed. */
	char *dir2 = tmp_index("ixcopy2");
	CHECK_OK(ix_open(&ix, dir2, IX_CREATE, NULL));
	ix_set_merge_policy(ix, 100, 1.0);
	int nseg = 0;
	for (int k = 0; k <= (int)IX_DS_MAX_DICTS; k++) {
		/* a dictionary needs 256 KiB of text; each segment its own */
		text_set one;
		one.n = 1;
		snprintf(one.key[0], sizeof one.key[0], "m%d", k);
		one.t[0] = random_text(300u << 10, &one.len[0]);
		text_set_shift(&one, k);
		CHECK_OK(add_doc(ix, an, one.key[0], one.t[0], one.len[0], 2000));
		CHECK_OK(ix_commit(ix));
		CHECK(seg_has_dict(ix_segment_at(ix, (uint32_t)k)));
		free(one.t[0]);
		nseg++;
	}
	CHECK(nseg > (int)IX_DS_MAX_DICTS);
	CHECK_OK(ix_optimize(ix));
	s = ix_segment_at(ix, 0);
	CHECK_EQ(seg_ndicts(s), 1);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	test_rmrf(dir2);
	free(dir2);

	for (int k = 0; k < NSETS; k++)
		text_set_free(&sets[k]);
	test_rmrf(work);
	test_rmrf(dir);
	free(dir);
}

/* Each key is live and its text starts with want[i]. */
static void check_starts(ix_index *ix, const char *const *keys, const char *const *want, int n)
{
	fbuf b;
	fbuf_init(&b, 0);
	for (int i = 0; i < n; i++) {
		ix_segment *s;
		uint32_t doc;
		CHECK_OK(find_live(ix, keys[i], &s, &doc));
		fbuf_reset(&b);
		CHECK_OK(seg_doc_text(s, doc, 0, 1000, &b));
		CHECK(b.len >= strlen(want[i]) && memcmp(b.data, want[i], strlen(want[i])) == 0);
	}
	fbuf_free(&b);
}

/* An index of format version 5 (no dictionary section, a 328-byte footer),
 * written by the previous release into tests/data, opens, reads and
 * verifies; a writer adds version 7 segments beside its own (and upgrades
 * the manifest to 7) and merges both into one. */
static void test_format_v5(void)
{
	const char *v5 = "tests/data/index-v5";
	ix_index *ix;
	CHECK_OK(ix_open(&ix, v5, IX_READONLY, NULL));
	if (!ix)
		return;
	CHECK_EQ(ix_segment_at(ix, 0)->version, 5);
	const char *keys[] = { "v5-a", "v5-b", "v5-c", "v5-d" };
	const char *want[] = { "An index written by format version 5", "The kernel scheduler",
	                       "The replacement text", "Four documents" };
	check_starts(ix, keys, want, 4);
	fbuf b;
	fbuf_init(&b, 0);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);

	char *dir = tmp_index("ixv5");
	copy_dir(v5, dir);
	CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
	text_set ts;
	text_set_make(&ts, "n", 48);
	for (int i = 0; i < ts.n; i++)
		CHECK_OK(add_doc(ix, an, ts.key[i], ts.t[i], ts.len[i], 2000));
	CHECK_OK(ix_commit(ix));
	CHECK_EQ(ix->man.version, IX_FORMAT_VERSION);
	ix_segment *last = ix_segment_at(ix, ix_nsegments(ix) - 1);
	CHECK_EQ(last->version, IX_FORMAT_VERSION);
	CHECK_EQ(ix_segment_at(ix, 0)->version, 5);
	CHECK(seg_has_dict(last));
	CHECK_OK(ix_verify(ix));
	CHECK_OK(ix_optimize(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	CHECK(seg_has_dict(ix_segment_at(ix, 0)));
	check_texts(ix, &ts, 1);
	ix_segment *s;
	uint32_t doc;
	CHECK_OK(find_live(ix, "v5-c", &s, &doc));
	fbuf_reset(&b);
	CHECK_OK(seg_doc_text(s, doc, 0, 1000, &b));
	CHECK(b.len >= 20 && memcmp(b.data, want[2], 20) == 0);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	fbuf_free(&b);
	text_set_free(&ts);
	test_rmrf(dir);
	free(dir);
}

/* ---- format 7: the section directory --------------------------------------- */

/* Rewrite the directory entry of tag in a segment image with fn, then seal
 * the directory and footer again (the section bytes are unchanged). 0 when
 * the tag was found. */
static int edit_dir_entry(unsigned char *img, size_t len, uint32_t tag, void (*fn)(ix_secent *e))
{
	ix_footer ft;
	ix_secent legacy[IX_LEGACY_NSEC];
	if (ix_footer_decode(img, len, &ft, legacy) || ft.version != IX_FORMAT_VERSION)
		return -1;
	uint64_t at = ix_secdir_offset(&ft, len);
	for (uint32_t i = 0; at && i < ft.ndir; i++) {
		ix_secent e;
		ix_secdir_decode(img + at + (size_t)i * IX_SECDIR_REC, 1, &e);
		if (e.tag != tag)
			continue;
		fn(&e);
		ix_secdir_encode(img + at + (size_t)i * IX_SECDIR_REC, &e, 1);
		ft.dir_crc = fa_crc32c(0, img + at, (size_t)ft.ndir * IX_SECDIR_REC);
		ix_footer_encode(img + len - IX_FOOTER_SIZE, &ft);
		return 0;
	}
	return -1;
}

static void make_required(ix_secent *e)
{
	e->flags |= IX_SECF_REQUIRED;
}

static void rename_to_unknown(ix_secent *e)
{
	e->tag = IX_TAG('D', 'O', 'C', 'X');
	e->flags = 0;
}

static void spoil_crc(ix_secent *e)
{
	e->crc ^= 1;
}

/* A segment with a section this build does not know: optional, it opens,
 * searches and verifies; required, it is refused with FATHOM_EVERSION naming
 * the file and the tag. A known required section missing, a bad section
 * checksum and damaged directory entries are errors, never crashes. */
static void test_section_directory(void)
{
	char *dir = tmp_index("ixsd");
	char *work = tmp_index("ixsdw");
	const uint32_t tag = IX_TAG('Z', 'Z', 'Z', 'Z');
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	if (!ix)
		goto done;
	text_set ts;
	text_set_make(&ts, "sd", 24);
	ix_segw_set_test_section(tag, 0);
	for (int i = 0; i < ts.n; i++)
		CHECK_OK(add_doc(ix, an, ts.key[i], ts.t[i], ts.len[i], 300));
	CHECK_OK(ix_commit(ix));
	ix_segw_set_test_section(0, 0);
	ix_close(ix);

	/* Optional: skipped by the reader, found by tag, checked by verify. */
	CHECK_OK(ix_open(&ix, dir, IX_READONLY, NULL));
	if (!ix)
		goto done;
	ix_segment *s = ix_segment_at(ix, 0);
	uint64_t off, len;
	CHECK_OK(seg_section(s, tag, &off, &len));
	CHECK(len > 0 && off + len <= s->data_end);
	CHECK_EQ(seg_section(s, IX_TAG('N', 'O', 'N', 'E'), &off, &len), FATHOM_ENOTFOUND);
	CHECK_EQ(s->version, IX_FORMAT_VERSION);
	check_texts(ix, &ts, 1);
	ix_term_info ti;
	CHECK_OK(seg_term(s, "kernel", 6, &ti));
	CHECK_OK(ix_verify(ix));
	ix_close(ix);

	char name[64];
	ix_seg_name(name, sizeof name, 1);
	char *path = fa_path_join(work, name);
	size_t flen;
	unsigned char *img;

	/* Required: refused, naming the file and the tag. */
	copy_dir(dir, work);
	img = slurp(path, &flen);
	CHECK_OK(edit_dir_entry(img, flen, tag, make_required));
	spit(path, img, flen);
	free(img);
	ix = NULL;
	CHECK_EQ(ix_open(&ix, work, IX_READONLY, NULL), FATHOM_EVERSION);
	CHECK(strstr(fathom_errmsg(), name) && strstr(fathom_errmsg(), "'ZZZZ'"));
	ix_segment *seg = NULL;
	CHECK_EQ(seg_open_file(&seg, path), FATHOM_EVERSION);
	CHECK(strstr(fathom_errmsg(), name) && strstr(fathom_errmsg(), "required"));

	/* A known required section missing: corrupt, naming it. */
	copy_dir(dir, work);
	img = slurp(path, &flen);
	CHECK_OK(edit_dir_entry(img, flen, IX_TAG('D', 'O', 'C', 'S'), rename_to_unknown));
	spit(path, img, flen);
	free(img);
	CHECK_EQ(seg_open_file(&seg, path), FATHOM_ECORRUPT);
	CHECK(strstr(fathom_errmsg(), name) && strstr(fathom_errmsg(), "'DOCS'"));

	/* A section whose bytes do not match its checksum: open does not read
	 * them, verify does. */
	copy_dir(dir, work);
	img = slurp(path, &flen);
	CHECK_OK(edit_dir_entry(img, flen, IX_TAG('D', 'I', 'C', 'T'), spoil_crc));
	CHECK_OK(seg_open_mem(&seg, img, flen, name));
	if (seg) {
		CHECK_EQ(seg_verify(seg), FATHOM_ECORRUPT);
		CHECK(strstr(fathom_errmsg(), "'DICT'") != NULL);
		seg_close(seg);
		seg = NULL;
	}
	free(img);

	/* Damaged directory bytes: the directory checksum catches them; resealed,
	 * the reader's own checks must, or the segment must read correctly. */
	img = slurp(path, &flen);
	ix_footer ft;
	ix_secent legacy[IX_LEGACY_NSEC];
	CHECK_OK(ix_footer_decode(img, flen, &ft, legacy));
	uint64_t at = ix_secdir_offset(&ft, flen);
	CHECK(at > 0);
	unsigned char *bad = malloc(flen);
	int refused = 0, opened = 0;
	for (int k = 0; k < 400 && at; k++) {
		memcpy(bad, img, flen);
		uint64_t i = at + rnd_below((uint32_t)(ft.ndir * IX_SECDIR_REC));
		bad[i] ^= (unsigned char)(1 + rnd_below(255));
		CHECK_EQ(seg_open_mem(&seg, bad, flen, name), FATHOM_ECORRUPT);
		ix_seg_reseal(bad, flen);
		int rc = seg_open_mem(&seg, bad, flen, name);
		CHECK(rc == 0 || rc == FATHOM_ECORRUPT || rc == FATHOM_EVERSION);
		if (rc == 0) {
			rc = seg_verify(seg);
			CHECK(rc == 0 || rc == FATHOM_ECORRUPT);
			seg_close(seg);
			seg = NULL;
			opened++;
		} else {
			refused++;
		}
	}
	printf("     400 damaged directory entries: %d refused, %d opened\n", refused, opened);
	CHECK(refused > 0);
	/* The footer's entry count off by one either way. */
	for (int d = -1; d <= 1; d += 2) {
		memcpy(bad, img, flen);
		ix_footer f2 = ft;
		f2.ndir = (uint32_t)((int)ft.ndir + d);
		ix_footer_encode(bad + flen - IX_FOOTER_SIZE, &f2);
		CHECK_EQ(seg_open_mem(&seg, bad, flen, name), FATHOM_ECORRUPT);
	}
	free(bad);
	free(img);
	fa_free(path);

	/* A merge writes only the sections it knows. */
	CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
	if (ix) {
		CHECK_OK(add_doc(ix, an, "sd-extra", "one more kernel page", 20, 300));
		CHECK_OK(ix_optimize(ix));
		CHECK_EQ(ix_nsegments(ix), 1);
		CHECK_EQ(seg_section(ix_segment_at(ix, 0), tag, &off, &len), FATHOM_ENOTFOUND);
		fbuf b;
		fbuf_init(&b, 0);
		for (int i = 0; i < ts.n; i++) {
			uint32_t doc;
			CHECK_OK(find_live(ix, ts.key[i], &s, &doc));
			fbuf_reset(&b);
			CHECK_OK(seg_doc_text(s, doc, 0, ts.len[i], &b));
			CHECK(b.len == ts.len[i] && memcmp(b.data, ts.t[i], b.len) == 0);
		}
		fbuf_free(&b);
		CHECK_OK(ix_verify(ix));
		ix_close(ix);
	}
	text_set_free(&ts);
done:
	test_rmrf(work);
	test_rmrf(dir);
	free(work);
	free(dir);
}

/* ---- named payloads and the manifest's key/value block -------------------- */

static int count_files(const char *dir, const char *suffix)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		size_t a = strlen(e->d_name), b = strlen(suffix);
		n += a >= b && strcmp(e->d_name + a - b, suffix) == 0;
	}
	if (d)
		closedir(d);
	return n;
}

static int value_is(const ix_index *ix, const char *name, const char *want)
{
	const unsigned char *d;
	size_t n;
	if (ix_get_value(ix, name, &d, &n) != 0)
		return want == NULL;
	return want && n == strlen(want) && memcmp(d, want, n) == 0;
}

/* Values and files commit with the segments, a reader sees those of its
 * commit, rollback drops what was staged, and entries of a newer writer
 * (unknown keys and kinds) survive a commit by this one. */
static void test_payloads(void)
{
	char *dir = tmp_index("ixpay");
	ix_index *w, *r;
	CHECK_OK(ix_open(&w, dir, IX_CREATE, NULL));
	if (!w)
		goto done;
	CHECK_EQ(ix_stage_value(w, "Bad Name", "x", 1), FATHOM_EINVAL);
	CHECK_EQ(ix_stage_value(w, "", "x", 1), FATHOM_EINVAL);
	CHECK_EQ(ix_stage_value(w, ".hidden", "x", 1), FATHOM_EINVAL);
	CHECK_OK(ix_stage_value(w, "model.id", "bge-small/1", 11));
	CHECK_OK(ix_stage_file(w, "cursor", "position 42", 11));
	CHECK(value_is(w, "model.id", "bge-small/1"));
	CHECK_OK(ix_open(&r, dir, IX_READONLY, NULL));
	CHECK(r && value_is(r, "model.id", NULL) && value_is(r, "cursor", NULL));
	CHECK_EQ(ix_stage_value(r, "x", "y", 1), FATHOM_EREADONLY);
	CHECK_OK(ix_commit(w));
	CHECK_EQ(count_files(dir, ".fpay"), 1);
	int changed = 0;
	uint64_t v0 = ix_payload_version(r);
	CHECK_OK(ix_refresh(r, &changed));
	CHECK(changed && ix_payload_version(r) != v0);
	CHECK(value_is(r, "model.id", "bge-small/1") && value_is(r, "cursor", "position 42"));
	/* Replaced: the old file goes once the new manifest is durable. */
	CHECK_OK(ix_stage_file(w, "cursor", "position 43", 11));
	CHECK_OK(ix_commit(w));
	CHECK_EQ(count_files(dir, ".fpay"), 1);
	CHECK(value_is(r, "cursor", "position 42"));   /* its snapshot */
	/* Values past what a manifest holds: the commit fails cleanly. */
	unsigned char *big = calloc(1, IX_KV_VALUE_MAX + 1);
	CHECK_EQ(ix_stage_value(w, "too.big", big, IX_KV_VALUE_MAX + 1), FATHOM_ETOOBIG);
	for (int i = 0; i < 65; i++) {
		char key[32];
		snprintf(key, sizeof key, "bulk%d", i);
		CHECK_OK(ix_stage_value(w, key, big, IX_KV_VALUE_MAX));
	}
	free(big);
	uint64_t g0 = ix_generation(w);
	CHECK_EQ(ix_commit(w), FATHOM_ETOOBIG);
	CHECK_EQ(ix_generation(w), g0);
	CHECK_OK(ix_rollback(w));
	CHECK(value_is(w, "bulk0", NULL));
	CHECK_OK(ix_verify(w));
	/* Rolled back. */
	CHECK_OK(ix_stage_value(w, "model.id", "other", 5));
	CHECK(value_is(w, "model.id", "other"));
	CHECK_OK(ix_rollback(w));
	CHECK(value_is(w, "model.id", "bge-small/1"));
	ix_close(w);
	ix_close(r);

	/* A newer writer's entries: a key this build never reads, and a kind it
	 * does not know. */
	ix_manifest m;
	CHECK_OK(ix_manifest_read(&m, dir));
	CHECK_EQ(m.version, IX_FORMAT_VERSION);
	ix_man_kv *kv = fa_realloc(m.kv, (m.nkv + 2) * sizeof *kv);
	if (!kv) {
		ix_manifest_free(&m);
		goto done;
	}
	m.kv = kv;
	memset(&kv[m.nkv], 0, 2 * sizeof *kv);
	strcpy(kv[m.nkv].key, "future.value");
	kv[m.nkv].kind = IX_KV_VALUE;
	kv[m.nkv].body = (unsigned char *)fa_strdup("kept");
	kv[m.nkv].body_len = 4;
	strcpy(kv[m.nkv + 1].key, "future.kind");
	kv[m.nkv + 1].kind = 77;
	kv[m.nkv + 1].body = (unsigned char *)fa_strdup("opaque body");
	kv[m.nkv + 1].body_len = 11;
	m.nkv += 2;
	CHECK_OK(ix_manifest_write(&m, dir, NULL));
	ix_manifest_free(&m);
	CHECK_OK(ix_open(&w, dir, IX_WRITE, NULL));
	if (!w)
		goto done;
	CHECK(value_is(w, "future.value", "kept"));
	CHECK(value_is(w, "future.kind", NULL));   /* not read, but kept */
	CHECK_OK(ix_stage_value(w, "model.id", "bge-base/2", 10));
	CHECK_OK(add_doc(w, an, "pay-doc", "payload kernel text", 19, 300));
	CHECK_OK(ix_commit(w));
	CHECK_OK(ix_verify(w));
	ix_close(w);
	CHECK_OK(ix_manifest_read(&m, dir));
	int kept_value = 0, kept_kind = 0;
	for (uint32_t i = 0; i < m.nkv; i++) {
		kept_value |= strcmp(m.kv[i].key, "future.value") == 0 && m.kv[i].body_len == 4;
		kept_kind |= strcmp(m.kv[i].key, "future.kind") == 0 && m.kv[i].kind == 77 &&
		             m.kv[i].body_len == 11 && memcmp(m.kv[i].body, "opaque body", 11) == 0;
	}
	CHECK(kept_value && kept_kind);
	ix_manifest_free(&m);
	CHECK_OK(ix_open(&r, dir, IX_READONLY, NULL));
	CHECK(r && value_is(r, "model.id", "bge-base/2") && value_is(r, "cursor", "position 43"));
	ix_close(r);
	/* A payload file changed on disk: verify names it. */
	char name[IX_PAYLOAD_NAME_MAX];
	CHECK_OK(ix_manifest_read(&m, dir));
	for (uint32_t i = 0; i < m.nkv; i++)
		if (strcmp(m.kv[i].key, "cursor") == 0)
			ix_payload_file_name(name, sizeof name, "cursor", fa_load64(m.kv[i].body));
	ix_manifest_free(&m);
	char *fp = fa_path_join(dir, name);
	size_t flen;
	unsigned char *img = slurp(fp, &flen);
	if (img) {
		img[24] ^= 1;   /* the payload's first byte */
		spit(fp, img, flen);
		free(img);
	}
	r = NULL;
	CHECK_EQ(ix_open(&r, dir, IX_READONLY, NULL), FATHOM_ECORRUPT);
	CHECK(strstr(fathom_errmsg(), name) != NULL);
	fa_free(fp);
done:
	test_rmrf(dir);
	free(dir);
}

/* A full manifest: a key staged anew replaces its entry, so it commits;
 * one key more does not. */
static void test_payloads_full(void)
{
	char *dir = tmp_index("ixfull");
	ix_index *w;
	CHECK_OK(ix_open(&w, dir, IX_CREATE, NULL));
	if (!w)
		goto done;
	for (unsigned i = 0; i < IX_KV_MAX; i++) {
		char key[32];
		snprintf(key, sizeof key, "full%u", i);
		CHECK_OK(ix_stage_value(w, key, "v", 1));
	}
	CHECK_OK(ix_commit(w));
	CHECK_OK(ix_stage_value(w, "full7", "again", 5));
	CHECK_OK(ix_commit(w));
	CHECK(value_is(w, "full7", "again"));
	CHECK_OK(ix_stage_value(w, "one.more", "v", 1));
	CHECK_EQ(ix_commit(w), FATHOM_ETOOBIG);
	CHECK_OK(ix_rollback(w));
	CHECK_OK(ix_verify(w));
	ix_close(w);
done:
	test_rmrf(dir);
	free(dir);
}

/* An index of format version 6 written by the release before format 7
 * (tests/data/index-v6: files from a tree, JSON documents, a glossary group,
 * two deleted documents) opens, reads and verifies as it is; the next commit
 * upgrades its manifest and moves its glossary to a payload file; optimize
 * rewrites its segments as format 7. */
static void test_format_v6(void)
{
	const char *v6 = "tests/data/index-v6";
	ix_index *ix;
	CHECK_OK(ix_open(&ix, v6, IX_READONLY, NULL));
	if (!ix)
		return;
	CHECK_EQ(ix_segment_at(ix, 0)->version, 6);
	CHECK_EQ(ix->man.version, 6);
	const char *keys[] = { "docs/guide.md", "docs/notes.txt", "src/sched.c", "v6-a" };
	const char *want[] = { "# Fathom v6 guide", "The kernel scheduler", "/* sched.c", "The throttle" };
	check_starts(ix, keys, want, 4);
	ix_segment *s;
	uint32_t doc;
	CHECK_EQ(find_live(ix, "docs/old.md", &s, &doc), FATHOM_ENOTFOUND);
	CHECK_EQ(find_live(ix, "v6-b", &s, &doc), FATHOM_ENOTFOUND);
	const unsigned char *g0;
	size_t gl0;
	uint64_t gv;
	ix_glossary(ix, &g0, &gl0, &gv);
	CHECK(g0 != NULL && gl0 > 0);
	unsigned char *gloss = malloc(gl0 ? gl0 : 1);
	memcpy(gloss, g0, gl0);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);

	/* A commit with nothing else to do upgrades the manifest. */
	char *dir = tmp_index("ixv6");
	copy_dir(v6, dir);
	CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
	if (!ix)
		goto done;
	uint64_t gen = ix_generation(ix);
	CHECK_OK(ix_commit(ix));
	CHECK_EQ(ix_generation(ix), gen + 1);
	CHECK_EQ(ix->man.version, IX_FORMAT_VERSION);
	CHECK_EQ(ix_segment_at(ix, 0)->version, 6);   /* segments stay until merged */
	CHECK_EQ(count_files(dir, ".fglo"), 0);
	CHECK_EQ(count_files(dir, ".fpay"), 1);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	CHECK_OK(ix_open(&ix, dir, IX_READONLY, NULL));
	if (!ix)
		goto done;
	const unsigned char *g1;
	size_t gl1;
	ix_glossary(ix, &g1, &gl1, &gv);
	CHECK(gl1 == gl0 && memcmp(g1, gloss, gl0) == 0);
	ix_close(ix);
	/* optimize: one segment of format 7. */
	CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
	if (!ix)
		goto done;
	CHECK_OK(ix_optimize(ix));
	CHECK_EQ(ix_nsegments(ix), 1);
	CHECK_EQ(ix_segment_at(ix, 0)->version, IX_FORMAT_VERSION);
	check_starts(ix, keys, want, 4);
	CHECK_OK(ix_verify(ix));
	ix_close(ix);
	/* optimize alone also upgrades a single old segment. */
	copy_dir(v6, dir);
	CHECK_OK(ix_open(&ix, dir, IX_WRITE, NULL));
	if (ix) {
		CHECK_OK(ix_optimize(ix));
		CHECK_EQ(ix->man.version, IX_FORMAT_VERSION);
		for (size_t i = 0; i < ix_nsegments(ix); i++)
			CHECK_EQ(ix_segment_at(ix, i)->version, IX_FORMAT_VERSION);
		ix_glossary(ix, &g1, &gl1, &gv);
		CHECK(gl1 == gl0 && memcmp(g1, gloss, gl0) == 0);
		CHECK_OK(ix_verify(ix));
		ix_close(ix);
	}
done:
	free(gloss);
	test_rmrf(dir);
	free(dir);
}

/* The term hash table (format v2) and the binary search it replaces must
 * agree on every term, and both must miss terms that are not there. */
static void test_term_hash(void)
{
	char *dir = tmp_index("ixth");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	/* Thousands of distinct terms, many sharing long prefixes. */
	for (int d = 0; d < 40; d++) {
		char key[32];
		fbuf t;
		fbuf_init(&t, 0);
		snprintf(key, sizeof key, "th%02d", d);
		for (int i = 0; i < 150; i++) {
			char w[64];
			int n = snprintf(w, sizeof w, "%s%05d ", i % 2 ? "configuration_option_" : "x",
			                 (int)rnd_below(20000));
			fbuf_append(&t, w, (size_t)n);
		}
		CHECK_OK(add_doc(ix, an, key, (const char *)t.data, t.len, 400));
		fbuf_free(&t);
	}
	CHECK_OK(ix_commit(ix));
	ix_segment *s = ix_segment_at(ix, 0);
	CHECK(s->thash_buckets > 0);
	CHECK_EQ(s->thash_buckets, ix_thash_buckets(s->nterms));
	uint32_t buckets = s->thash_buckets;
	ix_term_iter it;
	CHECK_OK(ix_term_iter_seek(&it, s, 0));
	uint64_t n = 0, bad = 0;
	while (ix_term_iter_next(&it) == 1) {
		ix_term_info a, b;
		int ra = seg_term(s, (const char *)it.term, it.len, &a);
		s->thash_buckets = 0;
		int rb = seg_term(s, (const char *)it.term, it.len, &b);
		s->thash_buckets = buckets;
		if (ra || rb || a.post_off != it.ti.post_off || b.post_off != it.ti.post_off ||
		    a.df != it.ti.df || a.pos_len != it.ti.pos_len)
			bad++;
		/* A longer term that is absent: both paths miss it. */
		char miss[IX_MAX_TERM + 2];
		memcpy(miss, it.term, it.len);
		miss[it.len] = '~';
		if (it.len < IX_MAX_TERM) {
			ra = seg_term(s, miss, it.len + 1, &a);
			s->thash_buckets = 0;
			rb = seg_term(s, miss, it.len + 1, &b);
			s->thash_buckets = buckets;
			if (ra != FATHOM_ENOTFOUND || rb != FATHOM_ENOTFOUND)
				bad++;
		}
		n++;
	}
	CHECK_EQ(n, s->nterms);
	CHECK(n > 3000);
	CHECK_EQ(bad, 0);
	CHECK_OK(seg_verify(s));
	/* Prefix iteration still walks the dictionary in order. */
	int np = 0;
	CHECK_OK(seg_terms(s, "configuration_option_1", 22, count_prefix_any, &np));
	CHECK(np > 100);
	/* Field lengths alone agree with the full chunk record. */
	for (uint32_t c = 0; c < seg_nchunks(s); c++) {
		ix_chunk_info ci;
		uint16_t fl[FATHOM_NFIELDS];
		CHECK_OK(seg_chunk(s, c, &ci));
		CHECK_OK(seg_chunk_field_len(s, c, fl));
		CHECK(memcmp(fl, ci.field_len, sizeof fl) == 0);
	}
	uint16_t fl0[FATHOM_NFIELDS];
	CHECK_EQ(seg_chunk_field_len(s, seg_nchunks(s), fl0), FATHOM_ENOTFOUND);
	ix_close(ix);

	/* A version 1 segment is refused as a version, not as damage. */
	char path[4096];
	snprintf(path, sizeof path, "%s/seg-00000001.fseg", dir);
	FILE *fp = fopen(path, "r+b");
	CHECK(fp != NULL);
	if (fp) {
		fseek(fp, 8, SEEK_SET);
		fputc(1, fp);
		fclose(fp);
		CHECK_EQ(ix_open(&ix, dir, IX_READONLY, NULL), FATHOM_EVERSION);
	}
	test_rmrf(dir);
	free(dir);
}


/* The writer's term maps (a hash and an equality that read whole words):
 * numbers of 1 to 40 digits, each with one digit changed at every
 * position, twice each, are each one term of their own; the equality
 * agrees with memcmp. */
static void test_term_map(void)
{
	char *dir = tmp_index("ixtm");
	ix_index *ix;
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	fbuf t;
	fbuf_init(&t, 0);
	char base[41];
	for (int i = 0; i < 40; i++)
		base[i] = (char)('1' + rnd_below(9));
	/* Pass 0 and 1 write each number; pass 2 looks each one up. */
	ix_segment *s = NULL;
	int found = 0;
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 2) {
			CHECK_OK(add_doc(ix, an, "nums", (const char *)t.data, t.len, 1 << 20));
			CHECK_OK(ix_commit(ix));
			s = ix_segment_at(ix, 0);
		}
		for (int len = 1; len <= 40; len++) {
			for (int k = -1; k < len; k++) {
				char w[41];
				memcpy(w, base, (size_t)len);
				if (k >= 0)
					w[k] = '0';
				ix_term_info ti;
				if (pass < 2) {
					fbuf_append(&t, w, (size_t)len);
					fbuf_putc(&t, ' ');
				} else if (seg_term(s, w, (size_t)len, &ti) == 0 && ti.df == 1) {
					found++;
				}
			}
		}
	}
	CHECK_EQ(found, 40 + 40 * 41 / 2);
	CHECK_OK(seg_verify(s));
	fbuf_free(&t);
	ix_close(ix);

	/* The equality against memcmp, a byte changed at every position of
	 * every length; equal bytes hash alike (from two addresses). */
	unsigned char x[IX_MAX_TERM + 1], y[IX_MAX_TERM + 1];
	int bad = 0;
	for (size_t n = 0; n <= IX_MAX_TERM; n++) {
		for (size_t i = 0; i < n; i++)
			x[i] = (unsigned char)rnd();
		memcpy(y + 1, x, n);
		if (!ix_mem_term_eq((char *)x, (char *)y + 1, n) ||
		    ix_mem_term_hash((char *)x, n) != ix_mem_term_hash((char *)y + 1, n))
			bad++;
		for (size_t k = 0; k < n; k++) {
			memcpy(y + 1, x, n);
			y[1 + k] ^= (unsigned char)(1u << rnd_below(8));
			if (ix_mem_term_eq((char *)x, (char *)y + 1, n) != (memcmp(x, y + 1, n) == 0))
				bad++;
		}
	}
	CHECK_EQ(bad, 0);
	test_rmrf(dir);
	free(dir);
}

/* ---- paths and titles copied within a batch --------------------------------- */

/* Names that repeat, differ by a byte, are empty, are cut at the term
 * limit, or hold identifiers and non-ASCII. */
static const char *reuse_names[] = {
	"src/a.c", "src/a.c ", "src/a.cc", "src/a", "src/b.c", "", "Other Title", "x/getUserName-v2.0.1.md",
	"docs/Ünïcode_Straße.md", "HTTPServer_IPv6 URLs 1,000",
	"a/very_long_component_that_goes_past_the_sixty_four_byte_limit_of_a_term.txt",
};

/* Add the documents analysed in two batches of one analysis (reuse on or
 * off) and commit. */
static char *reuse_index(const ix_doc_in *docs, size_t n, int reuse)
{
	char *dir = tmp_index(reuse ? "ixru1" : "ixru0");
	ix_index *ix;
	ix_analysis *a;
	uint32_t *handle = calloc(n, sizeof *handle);
	CHECK_OK(ix_open(&ix, dir, IX_CREATE, NULL));
	CHECK_OK(ix_analysis_new(&a));
	ix_analysis_set_reuse(a, reuse);
	size_t cut[3] = { 0, n / 2, n };
	for (int b = 0; b < 2; b++) {
		ix_analysis_reset(a);
		for (size_t i = cut[b]; i < cut[b + 1]; i++)
			CHECK_OK(ix_analyse_doc(a, an, &docs[i], &handle[i]));
		for (size_t i = cut[b]; i < cut[b + 1]; i++)
			CHECK_OK(ix_add_analysed(ix, &docs[i], a, handle[i]));
	}
	CHECK_OK(ix_commit(ix));
	ix_analysis_free(a);
	ix_close(ix);
	free(handle);
	return dir;
}

/* The two index folders hold the same files, byte for byte. */
static int same_files(const char *d1, const char *d2)
{
	DIR *dd = opendir(d1);
	int same = dd != NULL, nfiles = 0;
	struct dirent *e;
	while (dd && (e = readdir(dd)) != NULL) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, "LOCK") == 0)
			continue;
		char p1[4096], p2[4096];
		snprintf(p1, sizeof p1, "%s/%s", d1, e->d_name);
		snprintf(p2, sizeof p2, "%s/%s", d2, e->d_name);
		size_t l1 = 0, l2 = 0;
		unsigned char *b1 = slurp(p1, &l1), *b2 = slurp(p2, &l2);
		if (!b1 || !b2 || l1 != l2 || memcmp(b1, b2, l1) != 0) {
			fprintf(stderr, "  %s differs\n", e->d_name);
			same = 0;
		}
		free(b1);
		free(b2);
		nfiles++;
	}
	if (dd)
		closedir(dd);
	return same && nfiles > 1;
}

static void test_analysis_reuse(void)
{
	enum { NDOCS = 300 };
	const size_t nnames = sizeof reuse_names / sizeof reuse_names[0];
	static const char *tags1[] = { "src/a.c", "kernel docs" };
	static const char *tags2[] = { "" };
	ix_doc_in *docs = calloc(NDOCS, sizeof *docs);
	char (*keys)[32] = calloc(NDOCS, sizeof *keys);
	ix_chunk_in (*ch)[2] = calloc(NDOCS, sizeof *ch);
	const char *text = "getUserName runs the kernel scheduler; see src/a.c and TC-1001";
	uint32_t tlen = (uint32_t)strlen(text);
	const char *path = "";
	for (size_t i = 0; i < NDOCS; i++) {
		ix_doc_in *d = &docs[i];
		snprintf(keys[i], sizeof keys[i], "doc%zu", i);
		/* Runs of one path (as a file's chunks come), a title equal to
		 * the path, to another name, or empty. */
		if (i < nnames)
			path = reuse_names[i];
		else if (rnd_below(3) == 0)
			path = reuse_names[rnd_below((uint32_t)nnames)];
		uint32_t pick = rnd_below(4);
		const char *title = pick < 2 ? path : pick == 2 ? reuse_names[rnd_below((uint32_t)nnames)] : "";
		ch[i][0] = (ix_chunk_in){ 0, tlen / 2, 1, 1, "Intro > src/a.c", 15 };
		ch[i][1] = (ix_chunk_in){ tlen / 2, tlen, 1, 1, NULL, 0 };
		*d = (ix_doc_in){ .key = keys[i], .path = path, .title = title, .url = "", .lang = "text",
		                  .kind = DOC_TEXT, .size = tlen, .text = text, .text_len = tlen,
		                  .chunks = ch[i], .n_chunks = 1 + rnd_below(2) };
		if (i % 7 == 3) {
			d->tags = tags1;
			d->n_tags = 2;
		} else if (i % 7 == 5) {
			d->tags = tags2;
			d->n_tags = 1;
		}
		if (i % 41 == 17) {
			/* grep-only: no analysis in between */
			d->grep_only = 1;
			d->n_chunks = 0;
			d->chunks = NULL;
		}
		if (i % 53 == 8)
			d->path = NULL;   /* NULL reads as "" */
	}
	/* The first names straight after each other, title == path or not. */
	docs[1].title = docs[1].path;
	docs[2].path = docs[1].title;
	/* The second batch starts with the name the first ended with. */
	for (size_t i = NDOCS / 2 - 1; i <= NDOCS / 2; i++)
		docs[i].path = docs[i].title = reuse_names[nnames - 1];
	char *off = reuse_index(docs, NDOCS, 0);
	char *on = reuse_index(docs, NDOCS, 1);
	CHECK(same_files(off, on));
	ix_index *x1, *x2;
	CHECK_OK(ix_open(&x1, off, IX_READONLY, NULL));
	CHECK_OK(ix_open(&x2, on, IX_READONLY, NULL));
	post_dump p1 = dump_index(x1), p2 = dump_index(x2);
	CHECK(!p1.err && !p2.err && p1.n > 1000);
	CHECK(dumps_equal(&p1, &p2));
	dump_free(&p1);
	dump_free(&p2);
	ix_close(x1);
	ix_close(x2);
	test_rmrf(off);
	test_rmrf(on);
	free(off);
	free(on);
	free(docs);
	free(keys);
	free(ch);
}

int main(void)
{
	if (text_analyzer_new(&an, "english")) {
		printf("no analyser: %s\n", fathom_errmsg());
		return 1;
	}
	RUN(test_write_reopen);
	RUN(test_replace_delete);
	RUN(test_doc_strings);
	RUN(test_docstore);
	RUN(test_merge);
	RUN(test_crash);
	RUN(test_corruption);
	RUN(test_docstore_dict);
	RUN(test_docstore_copy);
	RUN(test_format_v5);
	RUN(test_format_v6);
	RUN(test_section_directory);
	RUN(test_payloads);
	RUN(test_payloads_full);
	RUN(test_term_hash);
	RUN(test_term_map);
	RUN(test_analysis_reuse);
	text_analyzer_free(an);
	return TEST_DONE();
}
