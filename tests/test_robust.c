/* test_robust.c — what a careless filesystem does to an index and its
 * files (issue 13): a FIFO in a file's place, a segment truncated under its
 * map, a stale document, path arguments read from another folder. Each of
 * these hung, crashed or answered wrongly before its fix; the tests that
 * could hang run under alarm(), so a hang fails instead of stopping the
 * suite. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util/util.h"

static char start_cwd[4096];

static void go(const char *dir)
{
	if (chdir(dir) != 0) {
		perror(dir);
		exit(2);
	}
}

static fathom_index *open_ix(const char *dir, unsigned flags)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = flags;
	fathom_index *ix = NULL;
	int rc = fathom_open(&ix, dir, &oo);
	if (rc) {
		fprintf(stderr, "  open %s: %s\n", dir, fathom_errmsg());
		exit(2);
	}
	return ix;
}

/* Set a file's mtime (seconds since the epoch), so a rewrite of the same
 * size is seen as a change without sleeping. */
static void set_mtime(const char *path, time_t t)
{
	struct timespec ts[2] = { { t, 0 }, { t, 0 } };
	if (utimensat(AT_FDCWD, path, ts, 0) != 0)
		perror(path);
}

/* ---- item 2: a FIFO is refused, never waited on ------------------------------ */

static void test_fifo_read_file(void)
{
	char *dir = test_tmpdir("fifo");
	char p[600];
	snprintf(p, sizeof p, "%s/pipe", dir);
	CHECK(mkfifo(p, 0644) == 0);
	alarm(20);   /* the old fa_read_file waited here for a writer forever */
	char *data = NULL;
	size_t len = 0;
	CHECK_EQ(fa_read_file(&data, &len, p, 1 << 20), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "not a regular file") != NULL);
	CHECK(data == NULL);
	fa_map m;
	CHECK(fa_map_file(&m, p) != 0);
	alarm(0);
	test_rmrf(dir);
	free(dir);
}

typedef struct race {
	const char *victim;   /* replaced by a FIFO when the walk reports zz.big */
	int special;          /* skips reported as FATHOM_SKIP_SPECIAL for it */
} race;

static void race_skip(void *ctx, const char *path, int reason)
{
	race *r = ctx;
	size_t n = strlen(path);
	if (reason == FATHOM_SKIP_TOO_BIG && n >= 6 && strcmp(path + n - 6, "zz.big") == 0) {
		/* between the walk (which listed the victim as a regular file)
		 * and the read */
		unlink(r->victim);
		if (mkfifo(r->victim, 0644) != 0)
			perror(r->victim);
	}
	if (reason == FATHOM_SKIP_SPECIAL && strcmp(path, r->victim) == 0)
		r->special++;
}

static void test_fifo_ingest_race(void)
{
	char *dir = test_tmpdir("fiforace");
	char ixdir[600], a[600], b[600], big[600];
	snprintf(ixdir, sizeof ixdir, "%s/ix", dir);
	snprintf(a, sizeof a, "%s/tree/a.txt", dir);
	snprintf(b, sizeof b, "%s/tree/b.txt", dir);
	snprintf(big, sizeof big, "%s/tree/zz.big", dir);
	char tree[600];
	snprintf(tree, sizeof tree, "%s/tree", dir);
	CHECK(mkdir(tree, 0755) == 0);
	test_write(a, "alpha words\n");
	test_write(b, "bravo words\n");
	test_write(big, "a file over the size cap, so that the walk reports it as it goes by\n");
	fathom_index *ix = open_ix(ixdir, FATHOM_OPEN_CREATE);
	race r = { b, 0 };
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	io.max_file_size = 32;
	io.grep_max_file_size = 0;
	io.threads = 1;
	io.on_skip = race_skip;
	io.cb_ctx = &r;
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	const char *paths[] = { tree };
	alarm(20);   /* the old read of b.txt waited for a writer forever */
	CHECK_OK(fathom_index_paths(ix, paths, 1, &io, &st));
	alarm(0);
	CHECK_EQ(r.special, 1);
	CHECK_EQ(st.skipped_by_reason[FATHOM_SKIP_SPECIAL], 1);
	CHECK_EQ(st.files_indexed, 1);
	CHECK_OK(fathom_commit(ix));
	fathom_close(ix);
	test_rmrf(dir);
	free(dir);
}

/* ---- item 3: a segment truncated under its map -------------------------------- */

/* The first seg-*.fseg of an index folder. */
static int find_segment(const char *ixdir, char *out, size_t n)
{
	DIR *d = opendir(ixdir);
	if (!d)
		return -1;
	struct dirent *e;
	int found = -1;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (strncmp(e->d_name, "seg-", 4) == 0 && l > 5 && strcmp(e->d_name + l - 5, ".fseg") == 0) {
			snprintf(out, n, "%s/%s", ixdir, e->d_name);
			found = 0;
			break;
		}
	}
	closedir(d);
	return found;
}

static int count_docs(void *ctx, const char *id, const char *path, uint64_t size, uint32_t nc)
{
	(void)id, (void)path, (void)size, (void)nc;
	(*(int *)ctx)++;
	return 0;
}

static int grep_count(void *ctx, const fathom_grep_file *f)
{
	(void)f;
	(*(int *)ctx)++;
	return 0;
}

static void test_truncated_segment(void)
{
	char *dir = test_tmpdir("trunc");
	char ixdir[600], tree[600], p[700];
	snprintf(ixdir, sizeof ixdir, "%s/ix", dir);
	snprintf(tree, sizeof tree, "%s/tree", dir);
	CHECK(mkdir(tree, 0755) == 0);
	/* enough text for a segment of many pages */
	static char body[64 * 1024];
	for (int f = 0; f < 8; f++) {
		size_t bl = 0;
		for (int i = 0; i < 600; i++)
			bl += (size_t)snprintf(body + bl, sizeof body - bl, "walrus%d line %d of file %d\n",
			                       (f * 600 + i) % 997, i, f);
		snprintf(p, sizeof p, "%s/f%d.txt", tree, f);
		test_write(p, body);
	}
	fathom_index *w = open_ix(ixdir, FATHOM_OPEN_CREATE);
	const char *paths[] = { tree };
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	CHECK_OK(fathom_index_paths(w, paths, 1, &io, NULL));
	CHECK_OK(fathom_commit(w));
	fathom_close(w);

	fathom_index *ix = open_ix(ixdir, FATHOM_OPEN_READONLY);
	fathom_results *res = NULL;
	CHECK_OK(fathom_search(&res, ix, "walrus17", NULL));
	CHECK(res && fathom_results_count(res) > 0);
	uint64_t chunk = res && fathom_results_count(res) ? fathom_results_hit(res, 0)->chunk_id : 0;
	fathom_results_free(res);

	char seg[700];
	CHECK(find_segment(ixdir, seg, sizeof seg) == 0);
	const char *segname = strrchr(seg, '/') + 1;
	char *saved = NULL;
	size_t saved_len = 0;
	CHECK_OK(fa_read_file(&saved, &saved_len, seg, (size_t)1 << 30));
	CHECK(saved_len > 16 * 1024);
	/* shrink it under the map: the old code died here of SIGBUS */
	CHECK(truncate(seg, 0) == 0);

	res = NULL;
	CHECK_EQ(fathom_search(&res, ix, "walrus17 line", NULL), FATHOM_ECORRUPT);
	CHECK(strstr(fathom_errmsg(), segname) != NULL);
	CHECK(strstr(fathom_errmsg(), "shrank") != NULL);
	CHECK(res == NULL);
	char *text = NULL;
	size_t len = 0;
	char key[700];
	snprintf(key, sizeof key, "%s/f3.txt", tree);
	CHECK_EQ(fathom_get(&text, &len, ix, key, 0, 0), FATHOM_ECORRUPT);
	CHECK(strstr(fathom_errmsg(), segname) != NULL);
	CHECK(text == NULL);
	CHECK_EQ(fathom_get_chunk(&text, &len, ix, chunk), FATHOM_ECORRUPT);
	int n = 0;
	CHECK_EQ(fathom_list_docs(ix, count_docs, &n), FATHOM_ECORRUPT);
	fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
	CHECK_EQ(fathom_grep(ix, "walrus1", &go, grep_count, &n, NULL), FATHOM_ECORRUPT);
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_EQ(fathom_stats_get(&st, ix), FATHOM_ECORRUPT);
	CHECK_EQ(fathom_verify(ix), FATHOM_ECORRUPT);
	CHECK(strstr(fathom_errmsg(), segname) != NULL);
	/* still damaged: a refresh maps it again, and it is still too short */
	CHECK(fathom_refresh(ix, NULL) != 0);
	CHECK_EQ(fathom_search(&res, ix, "walrus17", NULL), FATHOM_ECORRUPT);

	/* repaired in place: a refresh maps it again, and all reads work */
	FILE *f = fopen(seg, "r+b");
	CHECK(f != NULL);
	if (f) {
		CHECK(fwrite(saved, 1, saved_len, f) == saved_len);
		fclose(f);
	}
	CHECK_OK(fathom_refresh(ix, NULL));
	res = NULL;
	CHECK_OK(fathom_search(&res, ix, "walrus17", NULL));
	CHECK(res && fathom_results_count(res) > 0);
	fathom_results_free(res);
	CHECK_OK(fathom_get(&text, &len, ix, key, 0, 0));
	CHECK(text && strstr(text, "walrus") != NULL);
	fathom_free(text);
	CHECK_OK(fathom_verify(ix));
	fathom_close(ix);
	fa_free(saved);

	/* a SIGBUS outside any mapping of the library still ends the process:
	 * the handler hands it on to the default action (SIGBUS), or to the
	 * handler it replaced (AddressSanitizer's reports it and aborts) */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);   /* a sanitizer's report of it is expected */
		raise(SIGBUS);
		_exit(0);
	}
	int status = 0;
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) != 0));
	if (!getenv("FATHOM_SANITIZE"))
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
	test_rmrf(dir);
	free(dir);
}

/* ---- item 15: a stale get says so, and counts what it delivers -------------- */

static void test_get_stale_and_count(void)
{
	char *dir = test_tmpdir("stale");
	char ixdir[600], sub[600], p[700];
	snprintf(ixdir, sizeof ixdir, "%s/ix", dir);
	snprintf(sub, sizeof sub, "%s/sub", dir);
	CHECK(mkdir(sub, 0755) == 0);
	snprintf(p, sizeof p, "%s/notes.txt", sub);
	test_write(p, "one gazelle\ntwo\nthree\n");
	set_mtime(p, 1000000000);
	char other[700];
	snprintf(other, sizeof other, "%s/other.txt", sub);
	test_write(other, "steady gazelle\n");
	go(dir);   /* relative paths: the index's root is dir */
	fathom_index *ix = open_ix(ixdir, FATHOM_OPEN_CREATE);
	const char *paths[] = { "sub" };
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	CHECK_OK(fathom_index_paths(ix, paths, 1, &io, NULL));
	CHECK_OK(fathom_commit(ix));
	fathom_close(ix);
	ix = open_ix(ixdir, FATHOM_OPEN_READONLY);

	char *text = NULL;
	size_t len = 0;
	fathom_get_info info = FATHOM_GET_INFO_INIT;
	CHECK_OK(fathom_get_ex(&text, &len, ix, "sub/notes.txt", 2, 10, &info));
	CHECK_STR(text, "two\nthree\n");
	CHECK_EQ(info.from, 2);
	CHECK_EQ(info.count, 2);   /* delivered, not the 10 asked for */
	CHECK_EQ(info.stale, 0);
	fathom_free(text);

	/* changed on disk since indexing (same size, another mtime) */
	test_write(p, "one GAZELLE\ntwo\nthree\n");
	set_mtime(p, 1000000100);
	CHECK_OK(fathom_get_ex(&text, &len, ix, "sub/notes.txt", 1, 1, &info));
	CHECK_STR(text, "one gazelle\n");
	CHECK_EQ(info.count, 1);
	CHECK_EQ(info.stale, 1);
	fathom_free(text);
	/* a relative PATH is read from the current folder, as grep's are */
	go(sub);
	CHECK_OK(fathom_get_ex(&text, &len, ix, "notes.txt", 0, 0, &info));
	CHECK_STR(text, "one gazelle\ntwo\nthree\n");
	CHECK_EQ(info.count, 3);
	CHECK_EQ(info.stale, 1);
	fathom_free(text);
	CHECK_OK(fathom_get_ex(&text, &len, ix, "./other.txt", 0, 0, &info));
	CHECK_EQ(info.stale, 0);
	fathom_free(text);
	/* the last line without its newline counts */
	go(dir);

	/* search hits are marked the same way */
	fathom_results *res = NULL;
	CHECK_OK(fathom_search(&res, ix, "gazelle", NULL));
	CHECK_EQ(res ? fathom_results_count(res) : 0, 2);
	for (size_t i = 0; res && i < fathom_results_count(res); i++) {
		const fathom_hit *h = fathom_results_hit(res, i);
		CHECK_EQ(h->stale, strcmp(h->path, "sub/notes.txt") == 0);
	}
	char *json = NULL;
	CHECK_OK(fathom_results_json(&json, NULL, res, NULL));
	CHECK(json && strstr(json, "\"changed_since_indexing\":true") != NULL);
	fathom_free(json);
	fathom_results_free(res);
	fathom_close(ix);
	go(start_cwd);
	test_rmrf(dir);
	free(dir);
}

/* ---- item 9: grep's PATH arguments do not depend on the current folder -------- */

typedef struct paths_seen {
	int n;
	int outside;          /* files not under the folder expected */
	const char *under;
} paths_seen;

static int grep_paths(void *ctx, const fathom_grep_file *f)
{
	paths_seen *s = ctx;
	s->n++;
	if (s->under && strncmp(f->doc_id, s->under, strlen(s->under)) != 0)
		s->outside++;
	return 0;
}

static int grep_in(fathom_index *ix, const char *path, const char *under, int *outside)
{
	fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
	const char *pre[] = { path };
	go.prefixes = pre;
	go.n_prefixes = 1;
	paths_seen s = { 0, 0, under };
	int rc = fathom_grep(ix, "okapi", &go, grep_paths, &s, NULL);
	if (rc && rc != FATHOM_EINTERRUPTED)
		fprintf(stderr, "  grep %s: %s\n", path, fathom_errmsg());
	if (outside)
		*outside = s.outside;
	return s.n;
}

static void test_grep_paths_absolute_index(void)
{
	char *dir = test_tmpdir("gpath");
	char ixdir[600], a[600], b[600], p[700];
	snprintf(ixdir, sizeof ixdir, "%s/ix", dir);
	snprintf(a, sizeof a, "%s/tree/a", dir);
	snprintf(b, sizeof b, "%s/tree/b", dir);
	snprintf(p, sizeof p, "%s/tree", dir);
	CHECK(mkdir(p, 0755) == 0);
	CHECK(mkdir(a, 0755) == 0);
	CHECK(mkdir(b, 0755) == 0);
	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s/x%d.c", a, i);
		test_write(p, "the okapi runs\n");
		snprintf(p, sizeof p, "%s/y%d.c", b, i);
		test_write(p, "an okapi sleeps\n");
	}
	/* the first indexing of an absolute path: no root, absolute keys */
	fathom_index *ix = open_ix(ixdir, FATHOM_OPEN_CREATE);
	snprintf(p, sizeof p, "%s/tree", dir);
	const char *paths[] = { p };
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	CHECK_OK(fathom_index_paths(ix, paths, 1, &io, NULL));
	CHECK_OK(fathom_commit(ix));
	fathom_close(ix);
	ix = open_ix(ixdir, FATHOM_OPEN_READONLY);
	CHECK_STR(fathom_root(ix), "");

	int outside = 0;
	go("/");   /* the old code made "usr/include" of "/usr/include" here */
	CHECK_EQ(grep_in(ix, a, a, &outside), 3);
	CHECK_EQ(outside, 0);
	go(dir);
	CHECK_EQ(grep_in(ix, a, a, &outside), 3);
	CHECK_EQ(grep_in(ix, "tree/b", b, &outside), 3);
	CHECK_EQ(outside, 0);
	/* "." is the current folder, not every file of the index */
	go(b);
	CHECK_EQ(grep_in(ix, ".", b, &outside), 3);
	CHECK_EQ(outside, 0);
	CHECK_EQ(grep_in(ix, "../a/x1.c", a, &outside), 1);
	go("/tmp");
	CHECK_EQ(grep_in(ix, b, b, &outside), 3);
	fathom_close(ix);
	go(start_cwd);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	if (!getcwd(start_cwd, sizeof start_cwd))
		return 2;
	RUN(test_fifo_read_file);
	RUN(test_fifo_ingest_race);
	RUN(test_truncated_segment);
	RUN(test_get_stale_and_count);
	RUN(test_grep_paths_absolute_index);
	return TEST_DONE();
}
