/*
 * test_parallel.c — parallel ingest gives what sequential ingest gives.
 *
 * The same fixture tree and the same JSON lines are indexed with 1, 2 and 3
 * threads; the index folders must be byte for byte the same, and so must
 * the stats, the skip reports (in order), the chunks fathom_chunk_paths
 * hands out and the incremental runs that follow (changed, unchanged,
 * deleted, turned-binary files). A progress callback that stops the run
 * leaves nothing committed, whatever the thread count.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fathom.h"
#include "api/api.h"
#include "index/index_int.h"
#include "test.h"

static char root[256];

/* Every file gets the same mtime, so document records compare. */
static void put_at(const char *rel, const char *text, size_t len, long sec)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", root, rel);
	for (char *s = path + strlen(root) + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(path, 0755);
			*s = '/';
		}
	}
	FILE *f = fopen(path, "wb");
	CHECK(f != NULL);
	if (!f)
		return;
	fwrite(text, 1, len, f);
	fclose(f);
	struct timespec ts[2] = { { sec, 0 }, { sec, 0 } };
	CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

static void put(const char *rel, const char *text)
{
	put_at(rel, text, strlen(text), 1700000000);
}

static void build_tree(void)
{
	char buf[12288];
	mkdir(root, 0755);
	for (int i = 0; i < 40; i++) {
		char rel[64];
		int n = snprintf(buf, sizeof buf,
		                 "# Note %d\n\nThe getUserName() call returns TC-%d and JIRA-%d; "
		                 "version v2.%d.1 of AuthService.\n\n## Details\n\n", i, 1000 + i,
		                 400 + i, i);
		for (int k = 0; k < i * 3 && n < (int)sizeof buf - 200; k++)
			n += snprintf(buf + n, sizeof buf - (size_t)n,
			              "Paragraph %d of note %d: running runners ran quickly, "
			              "données naïves 東京都 %x.\n", k, i, (unsigned)(k * 2654435761u));
		snprintf(rel, sizeof rel, i % 3 ? "notes/n%02d.md" : "src/m%02d.c", i);
		put(rel, buf);
	}
	put("empty.txt", "");
	put("latin1.txt", "caf\xe9 cr\xe8me br\xfbl\xe9\n");
	put_at("blob.bin", "\x7f" "ELF\x00\x01\x02\x00\x00", 9, 1700000000);
	/* over the full-text cap of the runs below: for grep alone */
	memset(buf, 'x', sizeof buf);
	memcpy(buf, "big file ", 9);
	for (int k = 0; k < 2; k++)
		put_at(k ? "big/huge.txt" : "big/huge2.txt", buf, 8192 + (size_t)k * 4000, 1700000000);
}

typedef struct run_log {
	char text[16384];
	size_t len;
	int progress_calls;
	int stop_at_end;    /* the final progress call stops the run */
} run_log;

static void on_skip(void *ctx, const char *path, int reason)
{
	run_log *l = ctx;
	const char *base = strstr(path, "/fx/");
	l->len += (size_t)snprintf(l->text + l->len, sizeof l->text - l->len, "%s %d\n",
	                           base ? base : path, reason);
}

static int on_progress(void *ctx, const fathom_ingest_stats *st, uint64_t total, double eta)
{
	run_log *l = ctx;
	(void)total;
	(void)eta;
	l->progress_calls++;
	return l->stop_at_end && st->files_seen >= 40;
}

static fathom_ingest_opts opts_for(unsigned threads, run_log *l)
{
	fathom_ingest_opts o = FATHOM_INGEST_OPTS_INIT;
	o.threads = threads;
	o.max_file_size = 10000;
	o.chunk_target = 300;
	o.chunk_max = 600;
	o.on_skip = on_skip;
	o.progress = on_progress;
	o.cb_ctx = l;
	return o;
}

static fathom_index *open_ix(const char *dir)
{
	fathom_index *ix = NULL;
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	CHECK_OK(fathom_open(&ix, dir, &oo));
	return ix;
}

/* Index the tree (two roots, one inside the other) into dir. */
static int index_tree(const char *dir, unsigned threads, run_log *l, fathom_ingest_stats *st)
{
	fathom_index *ix = open_ix(dir);
	if (!ix)
		return -1;
	char notes[300];
	snprintf(notes, sizeof notes, "%s/notes", root);
	const char *paths[] = { root, notes };
	fathom_ingest_opts o = opts_for(threads, l);
	int rc = fathom_index_paths(ix, paths, 2, &o, st);
	if (!rc)
		CHECK_OK(fathom_commit(ix));
	fathom_close(ix);
	return rc;
}

static int read_all(const char *path, char **data, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0;
	char *d = malloc(cap);
	size_t got;
	while (d && (got = fread(d + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nd = realloc(d, cap *= 2);
			if (!nd) {
				free(d);
				d = NULL;
			} else {
				d = nd;
			}
		}
	}
	fclose(f);
	*data = d;
	*len = n;
	return d ? 0 : -1;
}

/* Two index folders hold the same files with the same bytes (LOCK aside). */
static void check_same_dirs(const char *a, const char *b)
{
	DIR *d = opendir(a);
	CHECK(d != NULL);
	if (!d)
		return;
	int files = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, "LOCK") == 0)
			continue;
		char pa[512], pb[512];
		snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
		snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
		char *da = NULL, *db = NULL;
		size_t la = 0, lb = 0;
		CHECK(read_all(pa, &da, &la) == 0);
		int have_b = read_all(pb, &db, &lb) == 0;
		if (!have_b)
			fprintf(stderr, "  %s: missing in %s\n", e->d_name, b);
		CHECK(have_b);
		if (have_b && (la != lb || memcmp(da, db, la) != 0)) {
			fprintf(stderr, "  %s differs between %s and %s\n", e->d_name, a, b);
			CHECK(0);
		}
		free(da);
		free(db);
		files++;
	}
	closedir(d);
	CHECK(files >= 2);   /* a manifest and a segment at least */
}

static void check_same_stats(const fathom_ingest_stats *a, const fathom_ingest_stats *b)
{
	fathom_ingest_stats x = *a, y = *b;
	x.elapsed_sec = y.elapsed_sec = 0;
	CHECK(memcmp(&x, &y, sizeof x) == 0);
}

static void test_index_paths_same_whatever_threads(void)
{
	static const unsigned threads[] = { 1, 2, 3 };
	fathom_ingest_stats st[3], st2[3];
	run_log logs[3];
	memset(logs, 0, sizeof logs);
	for (int t = 0; t < 3; t++) {
		fathom_ingest_stats_init(&st[t], FATHOM_INGEST_STATS_VERSION);
		fathom_ingest_stats_init(&st2[t], FATHOM_INGEST_STATS_VERSION);
		/* The same tree, made afresh, for each thread count. */
		char cmd[600];
		snprintf(cmd, sizeof cmd, "rm -rf %s/fx %s/ix%u", root, root, threads[t]);
		CHECK(system(cmd) == 0);
		char base[256];
		snprintf(base, sizeof base, "%s", root);
		snprintf(root + strlen(root), sizeof root - strlen(root), "/fx");
		build_tree();
		char dir[300];
		snprintf(dir, sizeof dir, "%s/ix%u", base, threads[t]);
		CHECK_OK(index_tree(dir, threads[t], &logs[t], &st[t]));
		/* Then an incremental run: one file changed, one changed back to
		 * the same bytes with another mtime, one gone, one now binary. */
		put_at("notes/n01.md", "# Changed\n\nNew words entirely.\n", 31, 1700000100);
		put_at("notes/n02.md", "", 0, 1700000000);
		snprintf(cmd, sizeof cmd, "rm %s/notes/n04.md", root);
		CHECK(system(cmd) == 0);
		put_at("notes/n05.md", "bin\0ary", 7, 1700000000);
		CHECK_OK(index_tree(dir, threads[t], &logs[t], &st2[t]));
		snprintf(root, sizeof root, "%s", base);
	}
	for (int t = 1; t < 3; t++) {
		char a[300], b[300];
		snprintf(a, sizeof a, "%s/ix1", root);
		snprintf(b, sizeof b, "%s/ix%u", root, threads[t]);
		check_same_dirs(a, b);
		check_same_stats(&st[0], &st[t]);
		check_same_stats(&st2[0], &st2[t]);
		CHECK_STR(logs[0].text, logs[t].text);
	}
	CHECK_EQ(st[0].files_seen, 71);     /* 45 files, and the 26 of notes/ again */
	CHECK(st[0].files_indexed > 40);
	CHECK(st[0].files_grep_only >= 1);   /* big/huge.txt at least */
	CHECK(st[0].skipped_by_reason[FATHOM_SKIP_BINARY] == 2);   /* blob.bin, latin1.txt */
	CHECK(strstr(logs[0].text, "/fx/notes/n05.md 3\n") != NULL);   /* turned binary */
	CHECK(st2[0].files_deleted == 1);
	CHECK(st2[0].files_indexed == 2);    /* n01 and n02 (its size changed) */
}

static const char jsonl[] =
	"{\"id\":\"a\",\"title\":\"Alpha\",\"body\":\"running getUserName() in TC-1001\"}\n"
	"not json\n"
	"\n"
	"{\"_id\":7,\"text\":\"numbers as ids: 7\",\"tags\":[\"x\",\"y\"],\"lang\":\"en\"}\n"
	"{\"title\":\"no id\"}\n"
	"{\"id\":\"b\",\"body\":\"caf\xc3\xa9 \xff not UTF-8: a bad line\",\"path\":\"docs/b.md\"}\n"
	"{\"id\":\"a\",\"body\":\"alpha again: replaces the first\"}\n";

static void test_jsonl_same_whatever_threads(void)
{
	fathom_ingest_stats st[3];
	run_log logs[3];
	memset(logs, 0, sizeof logs);
	for (unsigned t = 1; t <= 3; t++) {
		fathom_ingest_stats_init(&st[t - 1], FATHOM_INGEST_STATS_VERSION);
		char dir[300];
		snprintf(dir, sizeof dir, "%s/jx%u", root, t);
		fathom_index *ix = open_ix(dir);
		if (!ix)
			return;
		fathom_ingest_opts o = opts_for(t, &logs[t - 1]);
		/* many lines, so that several batches are in flight */
		for (int rep = 0; rep < 40; rep++)
			CHECK_OK(fathom_add_jsonl_mem(ix, jsonl, sizeof jsonl - 1, "mem", &o, &st[t - 1]));
		CHECK_OK(fathom_commit(ix));
		fathom_close(ix);
	}
	for (unsigned t = 2; t <= 3; t++) {
		char a[300], b[300];
		snprintf(a, sizeof a, "%s/jx1", root);
		snprintf(b, sizeof b, "%s/jx%u", root, t);
		check_same_dirs(a, b);
		check_same_stats(&st[0], &st[t - 1]);
		CHECK_STR(logs[0].text, logs[t - 1].text);
	}
	CHECK_EQ(st[0].docs_added, 3);
	CHECK_EQ(st[0].files_skipped, 3);   /* not JSON, no id, invalid UTF-8 */
	CHECK(strstr(logs[0].text, "mem:2: ") != NULL);
	CHECK(strstr(logs[0].text, "mem:5: ") != NULL);
	CHECK(strstr(logs[0].text, "mem:6: ") != NULL);
}

typedef struct chunk_log {
	char *text;
	size_t len, cap;
} chunk_log;

static int on_chunk(void *ctx, const fathom_chunk_info *c)
{
	chunk_log *l = ctx;
	char head[600];
	int n = snprintf(head, sizeof head, "%s|%s|%s|%u|%u-%u|%llu-%llu|%s|", c->path, c->title,
	                 c->lang, c->order, c->line_start, c->line_end,
	                 (unsigned long long)c->byte_start, (unsigned long long)c->byte_end,
	                 c->headings);
	size_t need = l->len + (size_t)n + c->len + 2;
	if (need > l->cap) {
		l->cap = need * 2;
		l->text = realloc(l->text, l->cap);
		if (!l->text)
			return 1;
	}
	memcpy(l->text + l->len, head, (size_t)n);
	memcpy(l->text + l->len + n, c->text, c->len);
	l->len += (size_t)n + c->len;
	l->text[l->len++] = '\n';
	return 0;
}

static void test_chunk_paths_same_whatever_threads(void)
{
	char base[256];
	snprintf(base, sizeof base, "%s", root);
	snprintf(root + strlen(root), sizeof root - strlen(root), "/cx");
	build_tree();
	const char *paths[] = { root };
	chunk_log logs[3];
	memset(logs, 0, sizeof logs);
	for (unsigned t = 1; t <= 3; t++) {
		fathom_ingest_opts o = FATHOM_INGEST_OPTS_INIT;
		o.threads = t;
		o.chunk_target = 200;
		o.chunk_max = 400;
		CHECK_OK(fathom_chunk_paths(paths, 1, &o, on_chunk, &logs[t - 1]));
	}
	CHECK(logs[0].len > 10000);
	for (int t = 1; t < 3; t++)
		CHECK(logs[t].len == logs[0].len && memcmp(logs[t].text, logs[0].text, logs[0].len) == 0);
	for (int t = 0; t < 3; t++)
		free(logs[t].text);
	snprintf(root, sizeof root, "%s", base);
}

static void test_stop_commits_nothing(void)
{
	char base[256];
	snprintf(base, sizeof base, "%s", root);
	snprintf(root + strlen(root), sizeof root - strlen(root), "/sx");
	build_tree();
	char tree[300];
	snprintf(tree, sizeof tree, "%s", root);
	snprintf(root, sizeof root, "%s", base);
	for (unsigned t = 1; t <= 2; t++) {
		char dir[300];
		snprintf(dir, sizeof dir, "%s/stop%u", root, t);
		run_log l;
		memset(&l, 0, sizeof l);
		l.stop_at_end = 1;
		fathom_index *ix = open_ix(dir);
		if (!ix)
			return;
		const char *paths[] = { tree };
		fathom_ingest_opts o = opts_for(t, &l);
		fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
		CHECK_EQ(fathom_index_paths(ix, paths, 1, &o, &st), FATHOM_EINTERRUPTED);
		CHECK(l.progress_calls >= 1);
		fathom_close(ix);   /* no commit: nothing added */
		ix = open_ix(dir);
		fathom_stats s = FATHOM_STATS_INIT;
		CHECK_OK(fathom_stats_get(&s, ix));
		CHECK_EQ(s.docs, 0);
		fathom_close(ix);
	}
}

/* n documents of 60 random words (of vocab) each, then `last` (or nothing),
 * ids prefix0..; the JSON lines' length, or 0 past cap. */
static size_t random_docs(char *lines, size_t cap, const char *prefix, int ndocs, unsigned vocab,
                          const char *last, unsigned *x)
{
	size_t n = 0;
	for (int d = 0; d < ndocs && n < cap - 4096; d++) {
		n += (size_t)snprintf(lines + n, cap - n, "{\"id\":\"%s%d\",\"body\":\"", prefix, d);
		for (int w = 0; w < 60; w++) {
			*x = *x * 1103515245u + 12345u;
			n += (size_t)snprintf(lines + n, cap - n, "w%u ", (*x >> 16) % vocab);
		}
		n += (size_t)snprintf(lines + n, cap - n, "%s\"}\n", last);
	}
	return n;
}

/* JSON lines built once, for the builds below. */
typedef struct lines_buf {
	char *lines;
	size_t n, cap;
} lines_buf;

/* An index built by build(ix, ctx) in root/<name>1 with the pools at 1
 * thread and in root/<name>3 at 3: the two folders the same, byte for
 * byte. */
static void same_on_1_and_3_threads(const char *name,
                                    void (*build)(fathom_index *ix, void *ctx), void *ctx)
{
	char dir[2][300];
	for (int i = 0; i < 2; i++) {
		unsigned t = i ? 3 : 1;
		snprintf(dir[i], sizeof dir[i], "%s/%s%u", root, name, t);
		ix_ds_set_threads(t);
		fathom_index *ix = open_ix(dir[i]);
		if (!ix) {
			ix_ds_set_threads(0);
			return;
		}
		build(ix, ctx);
		fathom_close(ix);
	}
	ix_ds_set_threads(0);
	check_same_dirs(dir[0], dir[1]);
}

static void add_lines_2_threads(fathom_index *ix, void *ctx)
{
	const lines_buf *lb = ctx;
	fathom_ingest_opts o = FATHOM_INGEST_OPTS_INIT;
	o.threads = 2;
	CHECK_OK(fathom_add_jsonl_mem(ix, lb->lines, lb->n, "mem", &o, NULL));
	CHECK_OK(fathom_commit(ix));
}

/* The document store's frames compressed on 1 or 3 threads: the same bytes,
 * past the training window (frames in batches) and within it. */
static void test_docstore_threads(void)
{
	lines_buf lb = { malloc(4u << 20), 0, 4u << 20 };
	if (!lb.lines)
		return;
	unsigned x = 12345;
	lb.n = random_docs(lb.lines, lb.cap, "d", 3000, 5000, "", &x);
	ix_ds_set_train_window(256u << 10);
	same_on_1_and_3_threads("dx", add_lines_2_threads, &lb);
	ix_ds_set_train_window(0);
	free(lb.lines);
}

/* A flush budget small enough for a flush during the ingest besides the
 * one at commit, the flushed segments kept. */
static void flush_often(fathom_index *ix, void *ctx)
{
	ix_set_flush_budget(ix->ix, 16u << 20);
	ix_set_merge_policy(ix->ix, 1000, 1.0);   /* keep the flushed segments */
	add_lines_2_threads(ix, ctx);
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, ix));
	CHECK(st.segments > 1);
}

/* Flushes, their postings encoded on 1 or 3 threads: the same bytes. A
 * flush budget small enough for a flush during the ingest besides the one
 * at commit, many terms (batches cut by term count), and one term frequent
 * enough that its occurrences pass a batch's byte limit (many blocks). */
static void test_flush_threads(void)
{
	lines_buf lb = { malloc(16u << 20), 0, 16u << 20 };
	char *big = malloc(600 * 4 + 1);
	if (!lb.lines || !big) {
		free(lb.lines);
		free(big);
		return;
	}
	for (int i = 0; i < 600; i++)
		memcpy(big + i * 4, "big ", 5);
	unsigned x = 4242;
	lb.n = random_docs(lb.lines, lb.cap, "f", 4000, 20000, big, &x);
	same_on_1_and_3_threads("flx", flush_often, &lb);
	free(big);
	free(lb.lines);
}

/* Three commits of 1,000 documents, deletions, optimize. */
static void three_parts_optimized(fathom_index *ix, void *ctx)
{
	lines_buf *lb = ctx;
	unsigned x = 777;
	for (int part = 0; part < 3; part++) {
		char prefix[16];
		snprintf(prefix, sizeof prefix, "p%dd", part);
		lb->n = random_docs(lb->lines, lb->cap, prefix, 1000, 7000, "common", &x);
		fathom_ingest_opts o = FATHOM_INGEST_OPTS_INIT;
		CHECK_OK(fathom_add_jsonl_mem(ix, lb->lines, lb->n, "mem", &o, NULL));
		CHECK_OK(fathom_commit(ix));
	}
	for (int d = 0; d < 1000; d += 7) {
		char id[32];
		snprintf(id, sizeof id, "p1d%d", d);
		CHECK_OK(fathom_delete_doc(ix, id));
	}
	CHECK_OK(fathom_commit(ix));
	CHECK_OK(fathom_optimize(ix));
}

/* A merge (optimize) of three segments with deleted documents, its
 * postings encoded on 1 or 3 threads: the same bytes. Enough terms and
 * postings for many batches, and terms long enough for many blocks. */
static void test_merge_threads(void)
{
	lines_buf lb = { malloc(2u << 20), 0, 2u << 20 };
	if (!lb.lines)
		return;
	same_on_1_and_3_threads("mx", three_parts_optimized, &lb);
	free(lb.lines);
}

/* The corpus embedder's first commit of the lines. */
static void corpus_commit(fathom_index *ix, void *ctx)
{
	const lines_buf *lb = ctx;
	CHECK_OK(fathom_config_set(ix, "embedder", "corpus"));
	fathom_ingest_opts o = FATHOM_INGEST_OPTS_INIT;
	CHECK_OK(fathom_add_jsonl_mem(ix, lb->lines, lb->n, "mem", &o, NULL));
	CHECK_OK(fathom_commit(ix));
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, ix));
	CHECK_EQ(st.vector_chunks, 3000);
}

/* The corpus embedder's first commit (training, then a merge that embeds
 * every chunk in batches on a pool and builds the graph): 1 or 3 threads,
 * the same bytes. 3,000 chunks: two batches, and a graph. */
static void test_embed_threads(void)
{
	lines_buf lb = { malloc(4u << 20), 0, 4u << 20 };
	if (!lb.lines)
		return;
	unsigned x = 4242;
	lb.n = random_docs(lb.lines, lb.cap, "e", 3000, 2000, "", &x);
	same_on_1_and_3_threads("ex", corpus_commit, &lb);
	free(lb.lines);
}

/* Older callers' option structs (versions 1 to 4) still work. */
static void test_old_opts_versions(void)
{
	char dir[300];
	snprintf(dir, sizeof dir, "%s/vx", root);
	fathom_index *ix = open_ix(dir);
	if (!ix)
		return;
	for (unsigned v = 1; v <= 4; v++) {
		fathom_ingest_opts o = FATHOM_INGEST_OPTS_INIT;
		o.version = v;
		if (v <= 3)
			o.threads = 1000;   /* past the end of an old struct: never read */
		o.confine_root = "/nonexistent/folder";   /* the same */
		fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
		CHECK_OK(fathom_add_jsonl_mem(ix, jsonl, sizeof jsonl - 1, "mem", &o, &st));
		CHECK_EQ(st.docs_added, 3);
	}
	fathom_ingest_opts o = FATHOM_INGEST_OPTS_INIT;
	o.version = FATHOM_INGEST_OPTS_VERSION + 1;
	CHECK_EQ(fathom_add_jsonl_mem(ix, jsonl, sizeof jsonl - 1, "mem", &o, NULL), FATHOM_EINVAL);
	fathom_close(ix);
}

int main(void)
{
	snprintf(root, sizeof root, "%s/fathom-parallel-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_index_paths_same_whatever_threads);
	RUN(test_jsonl_same_whatever_threads);
	RUN(test_chunk_paths_same_whatever_threads);
	RUN(test_stop_commits_nothing);
	RUN(test_docstore_threads);
	RUN(test_flush_threads);
	RUN(test_merge_threads);
	RUN(test_embed_threads);
	RUN(test_old_opts_versions);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return TEST_DONE();
}
