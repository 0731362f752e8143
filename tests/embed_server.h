/*
 * embed_server.h — a small OpenAI-compatible embeddings server for the
 * tests (libmicrohttpd, on 127.0.0.1 at a port the system picks), whose
 * answers each test chooses: vectors from a hash of the text (dimension
 * SDIM, not unit: the client must normalise), slow replies, 500s that pass
 * or never do, 429 with Retry-After, 401, bad JSON, another dimension,
 * indexes missing or twice, entries out of order, values that are not
 * numbers, replies past the bound; and, for ingest through `fathom add`
 * (test_remote_cli.c), answers that turn bad after the first requests
 * (M_FAIL_AFTER: 500s; M_DIM_AFTER: another dimension), and replies
 * that take delay_ms each. It counts
 * requests and texts, keeps the last Authorization header, path, model
 * and input, and the most requests it serves at once. Included by one
 * test file each (static functions); offline: nothing but the loopback.
 */
#ifndef FATHOM_EMBED_SERVER_H
#define FATHOM_EMBED_SERVER_H

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util/util.h"

#define SDIM 8

enum mode {
	M_OK, M_SLOW, M_FAIL, M_429, M_401, M_MALFORMED, M_WRONGDIM, M_MISSING, M_SHUFFLED,
	M_NAN, M_STRING, M_HUGE, M_HUGE_CHUNKED, M_CONC,
	M_FAIL_AFTER,            /* fail_first requests answered, then 500 for ever */
	M_DIM_AFTER              /* fail_first requests answered, then dimension SDIM + 1 */
};

static struct srv {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct MHD_Daemon *d;
	unsigned port;
	int mode;
	int fail_first;          /* M_FAIL: requests answered 500 before success;
	                          * M_FAIL_AFTER, M_DIM_AFTER: answered well first */
	int requests, inflight, max_inflight, texts;
	unsigned gen;            /* bumped by reset: slow replies give up */
	char auth[256];          /* the last Authorization header ("" none) */
	char path[256], model[64];
	char input[256];         /* the last request's first text (its start) */
	int delay_ms;            /* every reply waits this long (any mode) */
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
		int d = (mode == M_WRONGDIM && i == n - 1) || mode == M_DIM_AFTER ? SDIM + 1 : SDIM;
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
	json_t *first = json_array_get(input, 0);
	snprintf(S.input, sizeof S.input, "%s", json_is_string(first) ? json_string_value(first) : "");
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
	int delay = __atomic_load_n(&S.delay_ms, __ATOMIC_RELAXED);
	if (delay > 0)
		sleep_ms(delay);

	enum MHD_Result ok;
	if (mode == M_FAIL_AFTER && nreq >= fail_first) {
		ok = reply_text(c, 500, "{\"error\":\"the model crashed\"}", NULL);
	} else if (mode == M_FAIL && nreq < fail_first) {
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
		if (mode == M_DIM_AFTER && nreq < fail_first)
			mode = M_OK;
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

/* A socket on 127.0.0.1 at port *port, or one the system picks (0). */
static int bind_loopback(unsigned *port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)*port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t al = sizeof a;
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) ||
	    getsockname(fd, (struct sockaddr *)&a, &al)) {
		perror("socket");
		exit(2);
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int listen_loopback(unsigned *port)
{
	*port = 0;
	return bind_loopback(port);
}

/* Serve on S.port, or a port the system picks when it is 0. */
static void server_start(void)
{
	int fd = bind_loopback(&S.port);
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
	S.auth[0] = S.path[0] = S.model[0] = S.input[0] = '\0';
	pthread_mutex_unlock(&S.mu);
}

static char url_buf[128];
static const char *base_url(const char *path)
{
	snprintf(url_buf, sizeof url_buf, "http://127.0.0.1:%u%s", S.port, path);
	return url_buf;
}

#endif /* FATHOM_EMBED_SERVER_H */
