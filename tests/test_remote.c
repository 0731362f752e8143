/*
 * test_remote.c — the `remote` embedder against the small OpenAI-compatible
 * embeddings server of embed_server.h, whose answers each test chooses:
 * vectors from a hash of the text (dimension 8, not unit: the embedder
 * must normalise), slow replies, 500s that pass or never do, 429 with
 * Retry-After, 401, bad JSON, another dimension, indexes missing or twice,
 * entries out of order, values that are not numbers, replies past the
 * bound. The server counts requests and the most it serves at once.
 * Offline: nothing but the loopback. (test_remote_cli.c: the same server
 * behind `fathom add` and `fathom search`.)
 */
#include "embed/embed.h"
#include "embed_server.h"
#include "fathom.h"
#include "test.h"

/* Options for the test server: short timeouts and backoff. */
static em_remote_opts opts(const char *path)
{
	em_remote_opts o = { 0 };
	o.url = base_url(path);
	o.model = "test-model";
	o.timeout = 5;
	o.backoff = 0.01;
	return o;
}

static const char *const TEXTS[] = {
	"alpha", "beta gamma", "delta", "epsilon zeta eta", "theta", "iota", "kappa lambda",
	"mu", "nu xi", "omicron", "pi rho", "sigma"
};

/* Embed the first n TEXTS and check each row against the server's. */
static int embed_check(em_embedder *e, size_t n)
{
	size_t lens[FA_ARRAY_LEN(TEXTS)];
	float out[FA_ARRAY_LEN(TEXTS) * SDIM], want[SDIM];
	for (size_t i = 0; i < n; i++)
		lens[i] = strlen(TEXTS[i]);
	int rc = em_embed(e, (const char *const *)TEXTS, lens, n, out);
	if (rc)
		return rc;
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		expected(TEXTS[i], want);
		for (int k = 0; k < SDIM; k++)
			bad += fabsf(out[i * SDIM + k] - want[k]) > 1e-6f;
	}
	return bad ? -1000 : 0;
}

static int has(const char *msg, const char *part)
{
	if (strstr(msg, part))
		return 1;
	fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", msg, part);
	return 0;
}

/* ---- the reply parser alone ------------------------------------------------ */

static int parse(const char *body, size_t n, uint32_t *dim, float *out)
{
	return em_remote_parse(out, dim, body, strlen(body), n, "http://x/v1/embeddings");
}

static void test_parse(void)
{
	float out[2 * 4096];
	uint32_t dim = 0;
	CHECK_OK(parse("{\"data\":[{\"index\":1,\"embedding\":[0,0,2]},"
	               "{\"index\":0,\"embedding\":[3,4,0]}]}", 2, &dim, out));
	CHECK_EQ(dim, 3);
	CHECK(fabsf(out[0] - 0.6f) < 1e-6f && fabsf(out[1] - 0.8f) < 1e-6f && out[2] == 0);
	CHECK(out[3] == 0 && out[4] == 0 && out[5] == 1);
	dim = 3;   /* a zero vector stays zero */
	CHECK_OK(parse("{\"data\":[{\"index\":0,\"embedding\":[0,0.0,-0]}]}", 1, &dim, out));
	CHECK(out[0] == 0 && out[1] == 0 && out[2] == 0);
	static const char *const bad[] = {
		"", "[", "[]", "{}", "{\"data\":{}}", "{\"data\":[]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]}]}",                /* 1 of 2 */
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":0,\"embedding\":[1,2,3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":2,\"embedding\":[1,2,3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":-1,\"embedding\":[1,2,3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":1.0,\"embedding\":[1,2,3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":1}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":1,\"embedding\":[1,2]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":1,\"embedding\":[1,\"2\",3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":1,\"embedding\":[1,1e300,3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":1,\"embedding\":[1,NaN,3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[1,2,3]},{\"index\":1,\"embedding\":[1,null,3]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":[]},{\"index\":1,\"embedding\":[]}]}",
		"{\"data\":[{\"index\":0,\"embedding\":\"AAAA\"},{\"index\":1,\"embedding\":[1]}]}",
		"{\"data\":[1,2]}",
		"{\"data\":[{\"index\":0,\"index\":1,\"embedding\":[1]},{\"index\":1,\"embedding\":[1]}]}",
	};
	for (size_t i = 0; i < FA_ARRAY_LEN(bad); i++) {
		dim = 0;
		int rc = parse(bad[i], 2, &dim, out);
		if (rc != FATHOM_ECORRUPT)
			fprintf(stderr, "  bad reply %zu taken (%d): %s\n", i, rc, bad[i]);
		CHECK_EQ(rc, FATHOM_ECORRUPT);
		CHECK(has(fathom_errmsg(), "http://x/v1/embeddings"));
	}
	/* the dimension given must be met */
	dim = 4;
	CHECK_EQ(parse("{\"data\":[{\"index\":0,\"embedding\":[1,2,3]}]}", 1, &dim, out),
	         FATHOM_ECORRUPT);
	CHECK(has(fathom_errmsg(), "not the dimension 4"));
	/* a service's own error, quoted */
	dim = 0;
	CHECK_EQ(parse("{\"error\":{\"message\":\"model not found\"}}", 1, &dim, out),
	         FATHOM_ECORRUPT);
	CHECK(has(fathom_errmsg(), "model not found"));
	/* more values than a vector may have */
	fbuf b;
	fbuf_init(&b, 0);
	fbuf_puts(&b, "{\"data\":[{\"index\":0,\"embedding\":[1");
	for (unsigned k = 1; k <= EM_MAX_DIM; k++)
		fbuf_puts(&b, ",1");
	fbuf_puts(&b, "]}]}");
	dim = 0;
	CHECK_EQ(em_remote_parse(out, &dim, (const char *)b.data, b.len, 1, "u"), FATHOM_ECORRUPT);
	fbuf_free(&b);
}

/* ---- against the server ------------------------------------------------------ */

static void test_open_and_embed(void)
{
	server_mode(M_OK, 0);
	em_remote_opts o = opts("/v1");
	em_embedder *e = NULL;
	CHECK_OK(em_remote_open(&e, &o));
	if (!e)
		return;
	CHECK_EQ(e->dim, SDIM);
	CHECK_EQ(S.requests, 1);    /* the probe */
	CHECK_EQ(S.texts, 1);
	CHECK_STR(S.path, "/v1/embeddings");
	CHECK_STR(S.model, "test-model");
	char want[256];
	snprintf(want, sizeof want, "remote v1 url=http://127.0.0.1:%u/v1/embeddings "
	         "model=test-model dim=8", S.port);
	CHECK_STR(e->ident, want);
	CHECK_STR(e->ops->kind, "remote");
	CHECK_OK(embed_check(e, 12));   /* 12 texts: one batch of the default 64 */
	CHECK_EQ(S.requests, 2);
	CHECK_EQ(S.texts, 13);
	/* a zero vector from the service is taken, and stays zero */
	const char *z[] = { "zero", "alpha" };
	size_t zl[] = { 4, 5 };
	float out[2 * SDIM];
	CHECK_OK(em_embed(e, z, zl, 2, out));
	for (int k = 0; k < SDIM; k++)
		CHECK(out[k] == 0.0f);
	em_embedder_free(e);
}

static void test_urls(void)
{
	static const char *const paths[][2] = {
		{ "/v1/", "/v1/embeddings" }, { "/v1/embeddings", "/v1/embeddings" },
		{ "/embed", "/embed" }, { "/api/v1x", "/api/v1x" },
	};
	for (size_t i = 0; i < FA_ARRAY_LEN(paths); i++) {
		server_mode(M_OK, 0);
		em_remote_opts o = opts(paths[i][0]);
		o.model = NULL;   /* left out */
		o.dim = SDIM;     /* no probe */
		em_embedder *e = NULL;
		CHECK_OK(em_remote_open(&e, &o));
		CHECK_EQ(S.requests, 0);
		CHECK_OK(embed_check(e, 2));
		CHECK_STR(S.path, paths[i][1]);
		CHECK_STR(S.model, "(none)");
		em_embedder_free(e);
	}
	/* user:password@ stays out of the ident (and is sent: curl's basic auth) */
	server_mode(M_OK, 0);
	char url[160];
	snprintf(url, sizeof url, "http://me:secret@127.0.0.1:%u/v1", S.port);
	em_remote_opts o = opts("/v1");
	o.url = url;
	em_embedder *e = NULL;
	CHECK_OK(em_remote_open(&e, &o));
	if (e) {
		CHECK(strstr(e->ident, "secret") == NULL && strstr(e->ident, "me:") == NULL);
		CHECK(strstr(e->ident, "url=http://127.0.0.1:") != NULL);
		CHECK(strncmp(S.auth, "Basic ", 6) == 0);
		em_embedder_free(e);
	}
}

static void test_bad_options(void)
{
	em_embedder *e = (em_embedder *)1;
	em_remote_opts o = opts("/v1");
	CHECK_EQ(em_remote_open(&e, NULL), FATHOM_EINVAL);
	CHECK(e == NULL);
	static const char *const urls[] = { "", "ftp://127.0.0.1/v1", "file:///etc/passwd",
	                                    "127.0.0.1:80/v1", "http://a b/v1", "http://a\n/v1" };
	for (size_t i = 0; i < FA_ARRAY_LEN(urls); i++) {
		o.url = urls[i];
		CHECK_EQ(em_remote_open(&e, &o), FATHOM_EINVAL);
	}
	o = opts("/v1");
	o.dim = EM_MAX_DIM + 1;
	CHECK_EQ(em_remote_open(&e, &o), FATHOM_EINVAL);
	o = opts("/v1");
	o.model = "two words";
	CHECK_EQ(em_remote_open(&e, &o), FATHOM_EINVAL);
	o = opts("/v1");
	o.timeout = -1;
	CHECK_EQ(em_remote_open(&e, &o), FATHOM_EINVAL);
	o = opts("/v1");
	o.batch = EM_MAX_BATCH + 1;
	CHECK_EQ(em_remote_open(&e, &o), FATHOM_EINVAL);
}

static void test_auth(void)
{
	server_mode(M_OK, 0);
	em_remote_opts o = opts("/v1");
	o.api_key_env = "FATHOM_TEST_REMOTE_KEY";
	setenv("FATHOM_TEST_REMOTE_KEY", "sk-test-123", 1);
	em_embedder *e = NULL;
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_STR(S.auth, "Bearer sk-test-123");
	if (e) {
		CHECK(strstr(e->ident, "sk-test") == NULL);
		server_mode(M_OK, 0);
		CHECK_OK(embed_check(e, 3));
		CHECK_STR(S.auth, "Bearer sk-test-123");
		em_embedder_free(e);
	}
	/* empty: no header */
	setenv("FATHOM_TEST_REMOTE_KEY", "", 1);
	server_mode(M_OK, 0);
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_STR(S.auth, "");
	em_embedder_free(e);
	unsetenv("FATHOM_TEST_REMOTE_KEY");
	/* the default variable */
	setenv("FATHOM_EMBED_API_KEY", "default-key", 1);
	o.api_key_env = NULL;
	server_mode(M_OK, 0);
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_STR(S.auth, "Bearer default-key");
	em_embedder_free(e);
	unsetenv("FATHOM_EMBED_API_KEY");
	server_mode(M_OK, 0);
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_STR(S.auth, "");
	em_embedder_free(e);
}

static void test_slow(void)
{
	server_mode(M_SLOW, 0);
	em_remote_opts o = opts("/v1");
	o.timeout = 0.2;
	o.retries = 1;
	em_embedder *e = NULL;
	CHECK_EQ(em_remote_open(&e, &o), FATHOM_EIO);
	CHECK(e == NULL);
	CHECK(has(fathom_errmsg(), base_url("/v1/embeddings")));
	CHECK(has(fathom_errmsg(), "(after 2 tries)"));
	CHECK(has(fathom_errmsg(), "timed out"));   /* curl: "Operation timed out ..." */
	CHECK_EQ(S.requests, 2);
}

static void test_retries(void)
{
	/* 500 twice, then an answer: three tries, each row right */
	server_mode(M_FAIL, 2);
	em_remote_opts o = opts("/v1");
	o.dim = SDIM;
	em_embedder *e = NULL;
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_OK(embed_check(e, 5));
	CHECK_EQ(S.requests, 3);
	em_embedder_free(e);

	/* always 500: 1 + retries tries, then FATHOM_EIO with the status */
	server_mode(M_FAIL, 1000);
	o.retries = 2;
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_EQ(embed_check(e, 5), FATHOM_EIO);
	CHECK(has(fathom_errmsg(), "HTTP 500 (after 3 tries): {\"error\":\"overloaded\"}"));
	CHECK_EQ(S.requests, 3);
	em_embedder_free(e);

	/* no retries at all */
	server_mode(M_FAIL, 1000);
	o.retries = UINT32_MAX;
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_EQ(embed_check(e, 5), FATHOM_EIO);
	CHECK(has(fathom_errmsg(), "(after 1 try)"));
	CHECK_EQ(S.requests, 1);
	em_embedder_free(e);

	/* 429 with Retry-After: 1: the second try waits that second */
	server_mode(M_429, 0);
	o.retries = 0;
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_OK(embed_check(e, 4));
	CHECK_EQ(S.requests, 2);
	CHECK(S.t[1] - S.t[0] >= 0.9);
	em_embedder_free(e);

	/* 401: no retry, the service's words in the message */
	server_mode(M_401, 0);
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_EQ(embed_check(e, 4), FATHOM_EIO);
	CHECK(has(fathom_errmsg(), "HTTP 401: {\"error\":{\"message\":\"bad key\"}}"));
	CHECK_EQ(S.requests, 1);
	em_embedder_free(e);
}

/* Nothing listens: refused at open, after the tries. */
static void test_down(void)
{
	unsigned port;
	int fd = listen_loopback(&port);   /* bound, never listening: refused */
	char url[128];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/v1", port);
	em_remote_opts o = opts("/v1");
	o.url = url;
	o.retries = 2;
	em_embedder *e = NULL;
	CHECK_EQ(em_remote_open(&e, &o), FATHOM_EIO);
	CHECK(e == NULL);
	CHECK(has(fathom_errmsg(), "remote embedder http://127.0.0.1:"));
	CHECK(has(fathom_errmsg(), "(after 3 tries)"));
	close(fd);
}

static void test_bad_replies(void)
{
	static const struct { int mode; const char *says; } cases[] = {
		{ M_MALFORMED, "not JSON" }, { M_WRONGDIM, "not the dimension 8" },
		{ M_MISSING, "index 0 twice" }, { M_NAN, "not JSON" },
		{ M_STRING, "value 3 is not a finite number" },
	};
	for (size_t i = 0; i < FA_ARRAY_LEN(cases); i++) {
		server_mode(cases[i].mode, 0);
		em_remote_opts o = opts("/v1");
		o.dim = SDIM;
		em_embedder *e = NULL;
		CHECK_OK(em_remote_open(&e, &o));
		CHECK_EQ(embed_check(e, 3), FATHOM_ECORRUPT);
		CHECK(has(fathom_errmsg(), base_url("/v1/embeddings")));
		CHECK(has(fathom_errmsg(), cases[i].says));
		CHECK_EQ(S.requests, 1);   /* never retried */
		em_embedder_free(e);
	}
	/* the same at open, learning the dimension */
	server_mode(M_MALFORMED, 0);
	em_remote_opts o = opts("/v1");
	em_embedder *e = NULL;
	CHECK_EQ(em_remote_open(&e, &o), FATHOM_ECORRUPT);
	CHECK(e == NULL);
	/* out of order: taken, each row in its place */
	server_mode(M_SHUFFLED, 0);
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_OK(embed_check(e, 7));
	em_embedder_free(e);
}

static void test_huge(void)
{
	int modes[] = { M_HUGE, M_HUGE_CHUNKED };
	for (size_t i = 0; i < FA_ARRAY_LEN(modes); i++) {
		server_mode(modes[i], 0);
		em_remote_opts o = opts("/v1");
		o.dim = SDIM;
		em_embedder *e = NULL;
		CHECK_OK(em_remote_open(&e, &o));
		CHECK_EQ(embed_check(e, 2), FATHOM_ETOOBIG);
		CHECK(has(fathom_errmsg(), "a reply past"));
		CHECK_EQ(S.requests, 1);
		em_embedder_free(e);
	}
}

/* Batch 2, 10 texts, at most 3 at once: the server never sees a fourth,
 * and every row comes back in its place. */
static void test_concurrency(void)
{
	server_mode(M_CONC, 0);
	em_remote_opts o = opts("/v1");
	o.dim = SDIM;
	o.batch = 2;
	o.concurrency = 3;
	em_embedder *e = NULL;
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_OK(embed_check(e, 10));
	CHECK_EQ(S.requests, 5);
	CHECK_EQ(S.texts, 10);
	CHECK(S.max_inflight <= 3);
	CHECK_EQ(S.max_inflight, 3);   /* the server holds each until three are in */
	/* batch 5 of 11: a last batch of one */
	server_mode(M_OK, 0);
	em_embedder_free(e);
	o.batch = 5;
	CHECK_OK(em_remote_open(&e, &o));
	CHECK_OK(embed_check(e, 11));
	CHECK_EQ(S.requests, 3);
	em_embedder_free(e);
}

typedef struct job {
	em_embedder *e;
	int rc;
} job;

static void *embed_thread(void *arg)
{
	job *j = arg;
	j->rc = 0;
	for (int k = 0; k < 5 && j->rc == 0; k++)
		j->rc = embed_check(j->e, 12);
	return NULL;
}

/* Two threads, one embedder, at once (the ingest workers). */
static void test_threads(void)
{
	server_mode(M_OK, 0);
	em_remote_opts o = opts("/v1");
	o.batch = 3;
	o.concurrency = 2;
	em_embedder *e = NULL;
	CHECK_OK(em_remote_open(&e, &o));
	if (!e)
		return;
	job j[2] = { { e, -1 }, { e, -1 } };
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, embed_thread, &j[i]) == 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		CHECK_EQ(j[i].rc, 0);
	}
	CHECK_EQ(S.texts, 1 + 2 * 5 * 12);
	em_embedder_free(e);
}

/* Every allocation of ours refused in turn: an error, never a crash or a
 * leak (the sanitizer build checks the leaks). */
static void test_alloc_failures(void)
{
	server_mode(M_OK, 0);
	em_remote_opts o = opts("/v1");
	o.batch = 2;
	em_embedder *e = NULL;
	CHECK_OK(em_remote_open(&e, &o));
	if (!e)
		return;
	int finished = 0;
	for (long k = 0; k < 200 && !finished; k++) {
		fa_alloc_fail_after(k);
		int rc = embed_check(e, 5);
		finished = fa_alloc_failed() == 0;
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM || rc == FATHOM_ETOOBIG);
		if (finished)
			CHECK_OK(rc);
	}
	CHECK(finished);
	em_embedder_free(e);
	for (long k = 0; k < 200; k++) {
		fa_alloc_fail_after(k);
		em_embedder *e2 = NULL;
		int rc = em_remote_open(&e2, &o);
		int done = fa_alloc_failed() == 0;
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || e2 == NULL);
		em_embedder_free(e2);
		if (done)
			break;
	}
}

int main(void)
{
	/* the test server is on the loopback: no proxy in between */
	static const char *const proxies[] = { "http_proxy", "HTTP_PROXY", "https_proxy",
	                                        "HTTPS_PROXY", "all_proxy", "ALL_PROXY" };
	for (size_t i = 0; i < FA_ARRAY_LEN(proxies); i++)
		unsetenv(proxies[i]);
	unsetenv("FATHOM_EMBED_API_KEY");
	server_start();
	RUN(test_parse);
	RUN(test_open_and_embed);
	RUN(test_urls);
	RUN(test_bad_options);
	RUN(test_auth);
	RUN(test_slow);
	RUN(test_retries);
	RUN(test_down);
	RUN(test_bad_replies);
	RUN(test_huge);
	RUN(test_concurrency);
	RUN(test_threads);
	RUN(test_alloc_failures);
	server_mode(M_OK, 0);
	MHD_stop_daemon(S.d);
	return TEST_DONE();
}
