/*
 * test_remote.c — the `remote` embedder against a small OpenAI-compatible
 * embeddings server in this file (libmicrohttpd, on 127.0.0.1 at a port
 * the system picks), whose answers each test chooses: vectors from a hash
 * of the text (dimension 8, not unit: the embedder must normalise), slow
 * replies, 500s that pass or never do, 429 with Retry-After, 401, bad JSON,
 * another dimension, indexes missing or twice, entries out of order,
 * values that are not numbers, replies past the bound. The server counts
 * requests and the most it serves at once. Offline: nothing but the
 * loopback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "embed/embed.h"
#include "fathom.h"
#include "test.h"
#include "util/util.h"

#define SDIM 8

enum mode {
	M_OK, M_SLOW, M_FAIL, M_429, M_401, M_MALFORMED, M_WRONGDIM, M_MISSING, M_SHUFFLED,
	M_NAN, M_STRING, M_HUGE, M_HUGE_CHUNKED, M_CONC
};

static struct srv {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct MHD_Daemon *d;
	unsigned port;
	int mode;
	int fail_first;          /* M_FAIL: requests answered 500 before success */
	int requests, inflight, max_inflight, texts;
	unsigned gen;            /* bumped by reset: slow replies give up */
	char auth[256];          /* the last Authorization header ("" none) */
	char path[256], model[64];
	double t[16];            /* when the first requests came */
} S = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* The server's vector for a text: a hash spread over SDIM values, not unit;
 * "zero" gets the zero vector. */
static void text_vector(const char *s, size_t len, double *v)
{
	if (len == 4 && memcmp(s, "zero", 4) == 0) {
		for (int k = 0; k < SDIM; k++)
			v[k] = 0;
		return;
	}
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	for (int k = 0; k < SDIM; k++) {
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 32;
		v[k] = ((double)(h % 2001) - 1000.0) / 250.0;
	}
}

/* What the client should get: the server's vector, unit length. */
static void expected(const char *s, float *out)
{
	double v[SDIM], ss = 0;
	text_vector(s, strlen(s), v);
	for (int k = 0; k < SDIM; k++)
		ss += v[k] * v[k];
	for (int k = 0; k < SDIM; k++)
		out[k] = ss > 0 ? (float)(v[k] / sqrt(ss)) : 0.0f;
}

typedef struct creq {
	char *body;
	size_t len;
	int counted;
} creq;

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *text,
                                  const char *retry_after)
{
	struct MHD_Response *res = MHD_create_response_from_buffer(strlen(text), (void *)text,
	                                                           MHD_RESPMEM_MUST_COPY);
	if (!res)
		return MHD_NO;
	MHD_add_response_header(res, "Content-Type", "application/json");
	if (retry_after)
		MHD_add_response_header(res, "Retry-After", retry_after);
	enum MHD_Result ok = MHD_queue_response(c, status, res);
	MHD_destroy_response(res);
	return ok;
}

/* A huge reply: an opening, then "0.5," forever (up to its size). */
static ssize_t huge_cb(void *cls, uint64_t pos, char *buf, size_t max)
{
	(void)cls;
	static const char head[] = "{\"data\":[{\"index\":0,\"embedding\":[";
	size_t n = 0;
	if (pos >= ((uint64_t)64 << 20))
		return MHD_CONTENT_READER_END_OF_STREAM;
	while (n < max) {
		uint64_t p = pos + n;
		buf[n++] = p < sizeof head - 1 ? head[p] : "0.5,"[(p - (sizeof head - 1)) % 4];
	}
	return (ssize_t)n;
}

static char *reply_json(json_t *input, int mode)
{
	json_t *root = json_object(), *data = json_array();
	size_t n = json_array_size(input);
	json_object_set_new(root, "object", json_string("list"));
	for (size_t k = 0; k < n; k++) {
		size_t i = mode == M_SHUFFLED ? n - 1 - k : k;
		json_t *s = json_array_get(input, i);
		double v[SDIM];
		text_vector(json_string_value(s), json_string_length(s), v);
		json_t *emb = json_array();
		int d = mode == M_WRONGDIM && i == n - 1 ? SDIM + 1 : SDIM;
		for (int j = 0; j < d; j++)
			json_array_append_new(emb, mode == M_STRING && j == 3 ? json_string("0.5")
			                                                   : json_real(j < SDIM ? v[j] : 1));
		json_t *ent = json_object();
		json_object_set_new(ent, "object", json_string("embedding"));
		json_object_set_new(ent, "index", json_integer(mode == M_MISSING && i == n - 1 ? 0
		                                                                            : (json_int_t)i));
		json_object_set_new(ent, "embedding", emb);
		json_array_append_new(data, ent);
	}
	json_object_set_new(root, "data", data);
	json_object_set_new(root, "model", json_string("test"));
	char *out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return out;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	creq *r = *con_cls;
	if (!r) {
		if (!(r = calloc(1, sizeof *r)))
			return MHD_NO;
		*con_cls = r;
		return MHD_YES;
	}
	if (*upload_size) {
		char *nb = realloc(r->body, r->len + *upload_size + 1);
		if (!nb)
			return MHD_NO;
		r->body = nb;
		memcpy(r->body + r->len, upload, *upload_size);
		r->len += *upload_size;
		r->body[r->len] = '\0';
		*upload_size = 0;
		return MHD_YES;
	}
	if (strcmp(method, "POST") != 0)
		return reply_text(c, 405, "{\"error\":\"POST only\"}", NULL);
	json_t *req = json_loadb(r->body ? r->body : "", r->len, 0, NULL);
	json_t *input = req ? json_object_get(req, "input") : NULL;
	if (!json_is_array(input)) {
		json_decref(req);
		return reply_text(c, 400, "{\"error\":\"no input\"}", NULL);
	}
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	pthread_mutex_lock(&S.mu);
	int nreq = S.requests++;
	if (nreq < (int)FA_ARRAY_LEN(S.t))
		S.t[nreq] = now_s();
	S.inflight++;
	S.max_inflight = FA_MAX(S.max_inflight, S.inflight);
	S.texts += (int)json_array_size(input);
	snprintf(S.auth, sizeof S.auth, "%s", auth ? auth : "");
	snprintf(S.path, sizeof S.path, "%s", url);
	json_t *model = json_object_get(req, "model");
	snprintf(S.model, sizeof S.model, "%s", json_is_string(model) ? json_string_value(model)
	                                                                 : "(none)");
	int mode = S.mode, fail_first = S.fail_first;
	unsigned gen = S.gen;
	if (mode == M_CONC && nreq < 3) {
		/* the first three wait until three are in (or 5 s): how many the
		 * client sends at once shows, however slow the machine */
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 5;
		pthread_cond_broadcast(&S.cv);
		while (S.inflight < 3 &&
		       pthread_cond_timedwait(&S.cv, &S.mu, &until) != ETIMEDOUT) {
		}
	}
	pthread_mutex_unlock(&S.mu);
	if (mode == M_CONC)
		sleep_ms(30);   /* a fourth at once would meet these three */
	if (mode == M_SLOW)
		for (int i = 0; i < 300 && __atomic_load_n(&S.gen, __ATOMIC_RELAXED) == gen; i++)
			sleep_ms(10);

	enum MHD_Result ok;
	if (mode == M_FAIL && nreq < fail_first) {
		ok = reply_text(c, 500, "{\"error\":\"overloaded\"}", NULL);
	} else if (mode == M_429 && nreq == 0) {
		ok = reply_text(c, 429, "{\"error\":\"slow down\"}", "1");
	} else if (mode == M_401) {
		ok = reply_text(c, 401, "{\"error\":{\"message\":\"bad key\"}}", NULL);
	} else if (mode == M_MALFORMED) {
		ok = reply_text(c, 200, "{\"data\":[{\"index\":0,\"embedding\":[0.1,", NULL);
	} else if (mode == M_NAN) {
		ok = reply_text(c, 200, "{\"data\":[{\"index\":0,\"embedding\":[NaN,1,1,1,1,1,1,1]}]}",
		                NULL);
	} else if (mode == M_HUGE || mode == M_HUGE_CHUNKED) {
		struct MHD_Response *res = MHD_create_response_from_callback(
			mode == M_HUGE ? (uint64_t)64 << 20 : MHD_SIZE_UNKNOWN, 65536, huge_cb, NULL, NULL);
		ok = res ? MHD_queue_response(c, 200, res) : MHD_NO;
		if (res)
			MHD_destroy_response(res);
	} else {
		char *body = reply_json(input, mode);
		ok = body ? reply_text(c, 200, body, NULL) : MHD_NO;
		free(body);
	}
	json_decref(req);
	pthread_mutex_lock(&S.mu);
	S.inflight--;
	pthread_cond_broadcast(&S.cv);
	pthread_mutex_unlock(&S.mu);
	return ok;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)c;
	(void)toe;
	creq *r = *con_cls;
	if (r) {
		free(r->body);
		free(r);
		*con_cls = NULL;
	}
}

/* A socket on 127.0.0.1 at a port the system picks. */
static int listen_loopback(unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		perror("socket");
		exit(2);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static void server_start(void)
{
	int fd = listen_loopback(&S.port);
	if (listen(fd, 64)) {
		perror("listen");
		exit(2);
	}
	S.d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
	                       0, NULL, NULL, handler, NULL,
	                       MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
	                       MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
	                       MHD_OPTION_CONNECTION_TIMEOUT, 10u,
	                       MHD_OPTION_END);
	if (!S.d) {
		fprintf(stderr, "cannot start the test server\n");
		exit(2);
	}
}

/* A fresh mode: earlier slow replies give up, counts start again. */
static void server_mode(int mode, int fail_first)
{
	pthread_mutex_lock(&S.mu);
	__atomic_add_fetch(&S.gen, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < 300 && S.inflight > 0; i++) {
		pthread_mutex_unlock(&S.mu);
		sleep_ms(10);
		pthread_mutex_lock(&S.mu);
	}
	S.mode = mode;
	S.fail_first = fail_first;
	S.requests = S.inflight = S.max_inflight = S.texts = 0;
	S.auth[0] = S.path[0] = S.model[0] = '\0';
	pthread_mutex_unlock(&S.mu);
}

static char url_buf[128];
static const char *base_url(const char *path)
{
	snprintf(url_buf, sizeof url_buf, "http://127.0.0.1:%u%s", S.port, path);
	return url_buf;
}

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
