/* test_util.c — the toolbox: CRC32C, varints, bit packing, buffers, arena,
 * hash map, files. Fast paths are checked against slow references. */
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util/pool.h"
#include "util/worker.h"
#include "util/util.h"

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_crc32c(void)
{
	/* The standard check value of CRC-32C. */
	CHECK_EQ(fa_crc32c(0, "123456789", 9), 0xE3069283u);
	CHECK_EQ(fa_crc32c_sw(0, "123456789", 9), 0xE3069283u);
	unsigned char buf[1000];
	for (int t = 0; t < 200; t++) {
		size_t n = rnd() % sizeof buf, off = rnd() % 8;
		if (off > n)
			off = n;
		for (size_t i = 0; i < n; i++)
			buf[i] = (unsigned char)rnd();
		CHECK_EQ(fa_crc32c(0, buf + off, n - off), fa_crc32c_sw(0, buf + off, n - off));
		/* Extending in two pieces equals one pass. */
		size_t cut = n ? rnd() % n : 0;
		CHECK_EQ(fa_crc32c(fa_crc32c(0, buf, cut), buf + cut, n - cut), fa_crc32c(0, buf, n));
	}
}

static void test_varint(void)
{
	unsigned char b[10];
	uint64_t vals[] = { 0, 1, 127, 128, 300, 16383, 16384, UINT32_MAX, (uint64_t)UINT32_MAX + 1, UINT64_MAX };
	for (size_t i = 0; i < FA_ARRAY_LEN(vals); i++) {
		size_t n = fa_varint_put(b, vals[i]);
		const unsigned char *p = b;
		uint64_t v = 1234;
		CHECK_EQ(fa_varint_get(&p, b + n, &v), 0);
		CHECK(v == vals[i]);
		CHECK(p == b + n);
		/* Truncated input fails and does not move the pointer. */
		p = b;
		CHECK_EQ(fa_varint_get(&p, b + n - 1, &v), -1);
		CHECK(p == b);
	}
	/* Over-long: eleven continuation bytes. */
	unsigned char bad[11];
	memset(bad, 0xff, sizeof bad);
	const unsigned char *p = bad;
	uint64_t v;
	CHECK_EQ(fa_varint_get(&p, bad + sizeof bad, &v), -1);
	uint32_t v32;
	size_t n = fa_varint_put(b, (uint64_t)UINT32_MAX + 5);
	p = b;
	CHECK_EQ(fa_varint_get32(&p, b + n, &v32), -1);
}

static void test_bitpack(void)
{
	uint32_t in[300], out[300];
	unsigned char packed[300 * 4 + 8];
	for (unsigned bits = 0; bits <= 32; bits++) {
		for (int t = 0; t < 20; t++) {
			size_t n = rnd() % 300;
			for (size_t i = 0; i < n; i++)
				in[i] = bits == 32 ? (uint32_t)rnd() : bits ? (uint32_t)(rnd() & ((1u << bits) - 1)) : 0;
			fa_bitpack(packed, in, n, bits);
			fa_bitunpack(out, packed, n, bits);
			int same = 1;
			for (size_t i = 0; i < n; i++)
				same &= in[i] == out[i];
			CHECK(same);
		}
	}
	CHECK_EQ(fa_bits_needed(0), 0);
	CHECK_EQ(fa_bits_needed(1), 1);
	CHECK_EQ(fa_bits_needed(255), 8);
	CHECK_EQ(fa_bits_needed(256), 9);
	CHECK_EQ(fa_bits_needed(UINT32_MAX), 32);
}

static void test_fbuf(void)
{
	fbuf b;
	fbuf_init(&b, 10);
	CHECK_OK(fbuf_puts(&b, "hello"));
	CHECK_EQ(fbuf_puts(&b, "world!"), FATHOM_ETOOBIG);
	/* Sticky: later appends fail too, and nothing was half-written. */
	CHECK_EQ(fbuf_putc(&b, 'x'), FATHOM_ETOOBIG);
	CHECK_EQ(b.len, 5);
	fbuf_reset(&b);
	CHECK_OK(fbuf_printf(&b, "%d-%s", 42, "x"));
	size_t len;
	char *s = fbuf_detach(&b, &len);
	CHECK_STR(s, "42-x");
	CHECK_EQ(len, 4);
	fa_free(s);
	fbuf_free(&b);

	fbuf_init(&b, 0);
	char big[1000];
	memset(big, 'a', sizeof big);
	for (int i = 0; i < 100; i++)
		CHECK_OK(fbuf_append(&b, big, sizeof big));
	CHECK_EQ(b.len, 100000);
	fbuf_free(&b);
}

static void test_arena_and_map(void)
{
	fa_arena a;
	fa_arena_init(&a, 128, 0);
	char *p[100];
	for (int i = 0; i < 100; i++) {
		p[i] = fa_arena_alloc(&a, (size_t)i + 1);
		CHECK(p[i] != NULL);
		CHECK(((uintptr_t)p[i] & 7) == 0);
		memset(p[i], i, (size_t)i + 1);
	}
	for (int i = 0; i < 100; i++)
		CHECK(p[i][i] == (char)i);
	fa_arena_reset(&a);
	CHECK(fa_arena_alloc(&a, 10) != NULL);
	fa_arena_free(&a);

	fa_arena_init(&a, 64, 256);
	CHECK(fa_arena_alloc(&a, 1000) == NULL); /* over the arena's maximum */
	fa_arena_free(&a);

	fa_strmap m;
	fa_strmap_init(&m);
	char key[32];
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "key%d", i), is_new = -1;
		fa_strmap_slot *s = fa_strmap_upsert(&m, key, (size_t)n, &is_new);
		CHECK(s && is_new == 1);
		if (s)
			s->value = (uint64_t)i * 3;
	}
	CHECK_EQ(m.count, 5000);
	int bad = 0;
	for (int i = 0; i < 5000; i++) {
		int n = snprintf(key, sizeof key, "key%d", i);
		fa_strmap_slot *s = fa_strmap_find(&m, key, (size_t)n);
		bad += !s || s->value != (uint64_t)i * 3;
	}
	CHECK_EQ(bad, 0);
	CHECK(fa_strmap_find(&m, "nope", 4) == NULL);
	int is_new = -1;
	fa_strmap_upsert(&m, "key7", 4, &is_new);
	CHECK_EQ(is_new, 0);
	fa_strmap_free(&m);
	CHECK(fa_hash64("abc", 3, 0) != fa_hash64("abd", 3, 0));
	CHECK(fa_hash64("abc", 3, 0) == fa_hash64("abc", 3, 0));
}

static void test_files(void)
{
	char *dir = test_tmpdir("util");
	CHECK_OK(fa_write_atomic(dir, "f", "one", 3));
	CHECK_OK(fa_write_atomic(dir, "f", "second", 6));
	char *path = fa_path_join(dir, "f"), *data = NULL;
	size_t len = 0;
	CHECK_OK(fa_read_file(&data, &len, path, 100));
	CHECK_STR(data, "second");
	fa_free(data);
	CHECK_EQ(fa_read_file(&data, &len, path, 3), FATHOM_ETOOBIG);
	CHECK(strstr(fathom_errmsg(), "/f") != NULL); /* the message names the file */
	fa_map m;
	CHECK_OK(fa_map_file(&m, path));
	CHECK_EQ(m.len, 6);
	CHECK(m.data && memcmp(m.data, "second", 6) == 0);
	fa_unmap(&m);
	char *tmp = fa_path_join(dir, "f.tmp");
	struct stat st;
	CHECK(stat(tmp, &st) != 0); /* no leftover */
	CHECK_EQ(fa_map_file(&m, tmp), FATHOM_ENOTFOUND);
	CHECK_EQ(fa_write_file_sync(path, "x", 1), FATHOM_EEXISTS);
	char *deep = fa_path_join(dir, "a/b/c");
	CHECK_OK(fa_mkdir_p(deep));
	CHECK(stat(deep, &st) == 0 && S_ISDIR(st.st_mode));
	fa_free(deep);
	fa_free(tmp);
	fa_free(path);
	test_rmrf(dir);
	free(dir);
}

static void test_errors(void)
{
	CHECK_EQ(fa_err(FATHOM_EINVAL, "bad %d", 7), FATHOM_EINVAL);
	CHECK_STR(fathom_errmsg(), "bad 7");
	fa_err_wrap(FATHOM_EINVAL, "ctx");
	CHECK_STR(fathom_errmsg(), "ctx: bad 7");
	CHECK_STR(fathom_strerror(FATHOM_ECORRUPT), "index file is corrupt");
	CHECK_STR(fathom_strerror(-999), "unknown error");
	CHECK_STR(fathom_field_name(FATHOM_FIELD_BODY), "body");
	CHECK(fathom_field_name(FATHOM_NFIELDS) == NULL);
	/* The allocation seam fails on request. */
	fa_alloc_fail_after(0);
	CHECK(fa_malloc(10) == NULL);
	fa_alloc_fail_after(-1);
	void *p = fa_malloc(10);
	CHECK(p != NULL);
	fa_free(p);
}

static void test_path_resolve(void)
{
	static const char *cases[][3] = {
		{ "a/b", "c", "a/b/c" },
		{ "a/b", "../c", "a/c" },
		{ "a/b", "../../c", "c" },
		{ "a/b", "../../../c", "../c" },
		{ "a", "..", "." },
		{ "", "x/./y//z/", "x/y/z" },
		{ "", "../x", "../x" },
		{ "/x", "y/./z", "/x/y/z" },
		{ "/x", "../..", "/" },
		{ "/x/y", "/abs/./p", "/abs/p" },
		{ "/", "", "/" },
		{ "..", "a", "../a" },
		{ "../..", "..", "../../.." },
		{ "/work/tree", "sub/../file.c", "/work/tree/file.c" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *got = fa_path_resolve(cases[i][0], cases[i][1]);
		if (!got || strcmp(got, cases[i][2]) != 0) {
			fprintf(stderr, "  resolve(%s, %s) = %s, want %s\n", cases[i][0], cases[i][1],
			        got ? got : "(null)", cases[i][2]);
			test_failed_checks++;
		}
		fa_free(got);
	}
}

/* The pool's ordered pipeline: items come back in production order with
 * the values work() made, whatever the number of threads; an error from
 * work() or produce(), or a stop from emit(), ends the run after the
 * items before it were emitted, and no slot is in use afterwards. */
#define PIPE_WINDOW 5
typedef struct pipe_ctx {
	size_t n, next, emitted;
	size_t fail_work, fail_produce, stop_at;   /* item numbers; SIZE_MAX: never */
	size_t item[PIPE_WINDOW];
	uint64_t value[PIPE_WINDOW];
	int in_use[PIPE_WINDOW];
	int misuse;
	uint64_t sum;
} pipe_ctx;

static uint64_t pipe_f(size_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull;
	for (int k = 0; k < 200 + (int)(i % 7) * 300; k++)   /* uneven work */
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

static int pipe_produce(void *vctx, size_t slot)
{
	pipe_ctx *c = vctx;
	if (c->next == c->n)
		return 0;
	if (c->next == c->fail_produce)
		return FATHOM_EIO;
	if (c->in_use[slot])
		c->misuse++;
	c->in_use[slot] = 1;
	c->item[slot] = c->next++;
	return 1;
}

static int pipe_work(void *vctx, unsigned worker, size_t slot)
{
	pipe_ctx *c = vctx;
	(void)worker;
	if (c->item[slot] >= c->fail_work)   /* later items fail too, maybe first */
		return fa_err(FATHOM_ECORRUPT, "work failed at item %zu", c->item[slot]);
	c->value[slot] = pipe_f(c->item[slot]);
	return 0;
}

static int pipe_emit(void *vctx, size_t slot)
{
	pipe_ctx *c = vctx;
	if (c->item[slot] != c->emitted || c->value[slot] != pipe_f(c->emitted))
		c->misuse++;
	c->in_use[slot] = 0;
	c->sum += c->value[slot];
	if (c->emitted++ == c->stop_at)
		return 7;
	return 0;
}

static int pipe_run(fa_pool *p, pipe_ctx *c, size_t n, size_t fail_work, size_t fail_produce,
                    size_t stop_at)
{
	static const fa_pipeline fns = { pipe_produce, pipe_work, pipe_emit };
	memset(c, 0, sizeof *c);
	c->n = n;
	c->fail_work = fail_work;
	c->fail_produce = fail_produce;
	c->stop_at = stop_at;
	return fa_pool_run(p, PIPE_WINDOW, &fns, c);
}

static void test_pool(void)
{
	uint64_t want = 0;
	for (size_t i = 0; i < 500; i++)
		want += pipe_f(i);
	CHECK(fa_cpu_count(0) >= 1);
	CHECK_EQ(fa_cpu_count(1), 1);
	unsigned sizes[] = { 0, 1, 2, 4 };
	for (size_t s = 0; s < FA_ARRAY_LEN(sizes); s++) {
		fa_pool *p = NULL;
		CHECK_OK(fa_pool_new(&p, sizes[s]));
		CHECK_EQ(fa_pool_threads(p), sizes[s]);
		pipe_ctx c;
		for (int rep = 0; rep < 3; rep++) {   /* a pool runs pipeline after pipeline */
			CHECK_EQ(pipe_run(p, &c, 500, SIZE_MAX, SIZE_MAX, SIZE_MAX), 0);
			CHECK_EQ(c.emitted, 500);
			CHECK(c.sum == want);
			CHECK_EQ(c.misuse, 0);
		}
		CHECK_EQ(pipe_run(p, &c, 0, SIZE_MAX, SIZE_MAX, SIZE_MAX), 0);
		CHECK_EQ(c.emitted, 0);
		/* an error in work: every item before it emitted, none after */
		fa_err_clear();
		CHECK_EQ(pipe_run(p, &c, 500, 123, SIZE_MAX, SIZE_MAX), FATHOM_ECORRUPT);
		CHECK_EQ(c.emitted, 123);
		/* with the worker's message, on the calling thread */
		CHECK_STR(fathom_errmsg(), "work failed at item 123");
		CHECK_EQ(c.misuse, 0);
		/* an error in produce */
		CHECK_EQ(pipe_run(p, &c, 500, SIZE_MAX, 77, SIZE_MAX), FATHOM_EIO);
		CHECK(c.emitted <= 77);
		CHECK_EQ(c.next, 77);
		/* emit asks to stop */
		CHECK_EQ(pipe_run(p, &c, 500, SIZE_MAX, SIZE_MAX, 41), 7);
		CHECK_EQ(c.emitted, 42);
		CHECK(c.next <= 42 + PIPE_WINDOW);
		fa_pool_free(p);
	}
	fa_pool_free(NULL);
	static const fa_pipeline none = { NULL, NULL, NULL };
	CHECK_EQ(fa_pool_run(NULL, 4, &none, NULL), FATHOM_EINVAL);
}

/* fa_read_file_within judges the file by the descriptor it reads: a link
 * in the root leading out is refused (outside set), a file or a link
 * staying inside is read, and a sibling folder sharing the root's name as a
 * prefix is outside. */
static void test_read_within(void)
{
	char *dir = test_tmpdir("within");
	char *root = fa_path_join(dir, "root"), *root2 = fa_path_join(dir, "root2");
	CHECK_OK(fa_mkdir_p(root));
	CHECK_OK(fa_mkdir_p(root2));
	CHECK_OK(fa_write_atomic(root, "in.txt", "inside", 6));
	CHECK_OK(fa_write_atomic(root2, "secret.txt", "secret", 6));
	char *in = fa_path_join(root, "in.txt"), *secret = fa_path_join(root2, "secret.txt");
	char *out_link = fa_path_join(root, "out"), *in_link = fa_path_join(root, "again");
	CHECK(symlink(secret, out_link) == 0);
	CHECK(symlink(in, in_link) == 0);
	char *data = NULL;
	size_t len = 0;
	int outside = -1;
	CHECK_OK(fa_read_file_within(&data, &len, in, 100, root, &outside));
	CHECK(outside == 0 && len == 6 && data && memcmp(data, "inside", 6) == 0);
	fa_free(data);
	CHECK_OK(fa_read_file_within(&data, &len, in_link, 100, root, &outside));
	CHECK(outside == 0 && len == 6);
	fa_free(data);
	CHECK_EQ(fa_read_file_within(&data, &len, out_link, 100, root, &outside), FATHOM_ENOTFOUND);
	CHECK(outside == 1 && data == NULL);
	CHECK_EQ(fa_read_file_within(&data, &len, secret, 100, root, &outside), FATHOM_ENOTFOUND);
	CHECK(outside == 1);
	/* no root: plain fa_read_file, links followed */
	CHECK_OK(fa_read_file_within(&data, &len, out_link, 100, NULL, &outside));
	CHECK(outside == 0 && len == 6 && memcmp(data, "secret", 6) == 0);
	fa_free(data);
	fa_free(in);
	fa_free(secret);
	fa_free(out_link);
	fa_free(in_link);
	fa_free(root);
	fa_free(root2);
	test_rmrf(dir);
	free(dir);
}

/* ---- the helper thread ---------------------------------------------------- */

typedef struct wtask {
	unsigned long runs;      /* how many times a task ran */
	unsigned spin;           /* work per task */
	volatile unsigned sink;
} wtask;

static void wtask_run(void *arg)
{
	wtask *t = arg;
	for (unsigned i = 0; i < t->spin; i++)
		t->sink += i;
	t->runs++;
}

/* Every task posted runs exactly once, on the helper or (taken back) on
 * the caller, and has returned when fa_worker_finish does; with a second
 * thread keeping a core busy some are taken back. After fork() the child
 * has no helper (fa_worker_usable says so). */
static void test_worker(void)
{
	fa_worker *w = NULL;
	CHECK_OK(fa_worker_new(&w));
	if (!w)
		return;
	CHECK(fa_worker_usable(w));
	wtask t = { 0, 0, 0 };
	for (unsigned i = 0; i < 20000; i++) {
		t.spin = i % 7 == 0 ? 2000 : 0;
		unsigned long before = t.runs;
		fa_worker_post(w, wtask_run, &t);
		fa_worker_finish(w);
		if (t.runs != before + 1) {
			CHECK_EQ(t.runs, before + 1);
			break;
		}
	}
	CHECK_EQ(t.runs, 20000);
	/* the caller takes back what the helper has not started: post and
	 * finish at once, many times; every one still runs exactly once */
	t.runs = 0;
	for (unsigned i = 0; i < 2000; i++) {
		fa_worker_post(w, wtask_run, &t);
		fa_worker_finish(w);
	}
	CHECK_EQ(t.runs, 2000);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fa_worker_usable(w) ? 3 : 0);
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* a task posted and never finished runs before the helper is joined */
	t.runs = 0;
	fa_worker_post(w, wtask_run, &t);
	fa_worker_free(w);
	CHECK_EQ(t.runs, 1);
	fa_worker_free(NULL);
	CHECK(!fa_worker_usable(NULL));
}

int main(void)
{
	RUN(test_path_resolve);
	RUN(test_crc32c);
	RUN(test_varint);
	RUN(test_bitpack);
	RUN(test_fbuf);
	RUN(test_arena_and_map);
	RUN(test_files);
	RUN(test_read_within);
	RUN(test_errors);
	RUN(test_pool);
	RUN(test_worker);
	return TEST_DONE();
}
