/*
 * remote.c — the `remote` embedder: an OpenAI-compatible embeddings
 * service (OpenAI, Ollama, llama.cpp's server, vLLM,
 * text-embeddings-inference) over HTTP with libcurl.
 *
 * One em_embed call of n texts becomes ceil(n / batch) requests
 *
 *   POST <url>   {"model": M, "input": ["text", ...]}
 *   reply        {"data": [{"index": i, "embedding": [v, ...]}, ...]}
 *
 * run on one curl multi handle, at most `concurrency` of them in flight;
 * the rows land in the caller's output by their index, so the service may
 * answer its entries in any order. A connection failure, a timeout, 429 or
 * a 5xx is retried after 0.2 s, 0.4 s, 0.8 s, ... (Retry-After when the
 * service says more, up to RM_RETRY_AFTER_MAX); any other status fails at
 * once, with the service's own words (the first RM_ERR_BODY bytes of its
 * body). The first failure stops the call: its other requests are dropped
 * and nothing of it is kept, so a caller commits all of a batch or none.
 *
 * The embedder keeps nothing per call: each call takes a multi handle from
 * a small pool (under a mutex) and gives it back, so that a thread's next
 * call reuses the connections the last one opened; a multi handle is only
 * ever used by one thread at a time, as libcurl asks.
 *
 * What the service says is untrusted: a body is read up to a bound that
 * the request fixes (its texts times the dimension), past which the call
 * fails with FATHOM_ETOOBIG, and em_remote_parse checks every entry
 * (fuzz/fuzz_remote.c).
 */
#include <curl/curl.h>
#include <jansson.h>
#include <math.h>
#include <float.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

#define RM_URL_MAX 2048u          /* bytes of a URL */
#define RM_MODEL_MAX 256u         /* bytes of a model name */
#define RM_BODY_MAX ((size_t)256 << 20)  /* bytes of a reply, whatever it holds */
#define RM_VALUE_BYTES 64u        /* room a reply may take per value (pretty-printed) */
#define RM_TEXT_BYTES 4096u       /* ... and per entry, besides its values */
#define RM_SLACK ((size_t)1 << 20) /* ... and in all (usage, model, headers) */
#define RM_REQUEST_MAX ((size_t)1 << 30) /* bytes of a request */
#define RM_ERR_BODY 200u          /* bytes of an error reply quoted in messages */
#define RM_RETRY_AFTER_MAX 5.0    /* seconds of Retry-After honoured */
#define RM_BACKOFF_MAX 30.0       /* seconds between two tries at most */
#define RM_CONNECT_TIMEOUT 10.0   /* seconds to connect (less when timeout is) */
#define RM_POOL 16u               /* idle multi handles kept */

typedef struct remote {
	char *endpoint;          /* where requests go (credentials as given) */
	char *shown;             /* the endpoint without credentials: messages, ident */
	char *model;             /* NULL: the field is left out */
	char *auth;              /* "Authorization: Bearer <key>", or NULL */
	uint32_t batch, concurrency, retries;
	long timeout_ms, connect_ms;
	double backoff;
	pthread_mutex_t mu;      /* guards pool */
	CURLM *pool[RM_POOL];
	uint32_t npool;
} remote;

/* ---- libcurl, once -------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

/* curl_global_init is not safe to run twice at once (before 7.84 at
 * least); it is never undone: the library may be used until the process
 * ends. */
static void curl_init_once(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the reply ------------------------------------------------------------ */

/* An error reply's first bytes, fit for a one-line message: what is not
 * printable ASCII becomes '?'. */
static void quote_body(char *dst, size_t cap, const unsigned char *b, size_t len)
{
	size_t k = 0;
	for (size_t i = 0; i < len && k + 1 < cap && i < RM_ERR_BODY; i++)
		dst[k++] = (b[i] >= 0x20 && b[i] < 0x7f) ? (char)b[i] : (b[i] == '\n' ? ' ' : '?');
	dst[k] = '\0';
}

int em_remote_parse(float *out, uint32_t *dim, const char *body, size_t len, size_t n,
                    const char *url)
{
	if (!out || !dim || (!body && len) || n == 0 || n > EM_MAX_BATCH || *dim > EM_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "remote embedder %s: bad arguments to parse a reply",
		              url);
	json_error_t je;
	json_t *root = json_loadb(body ? body : "", len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return fa_err(FATHOM_ECORRUPT, "remote embedder %s: the reply is not JSON: %s "
		              "(line %d, column %d)", url, je.text, je.line, je.column);
	int rc = 0;
	unsigned char *seen = NULL;
	json_t *data = json_is_object(root) ? json_object_get(root, "data") : NULL;
	if (!json_is_array(data)) {
		json_t *err = json_is_object(root) ? json_object_get(root, "error") : NULL;
		json_t *msg = json_is_object(err) ? json_object_get(err, "message") : err;
		char said[RM_ERR_BODY + 1] = "";
		if (json_is_string(msg))
			quote_body(said, sizeof said, (const unsigned char *)json_string_value(msg),
			           json_string_length(msg));
		rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: the reply has no \"data\" array%s%s",
		            url, *said ? ": " : "", said);
		goto out;
	}
	if (json_array_size(data) != n) {
		rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: the reply has %zu entries for %zu "
		            "texts", url, json_array_size(data), n);
		goto out;
	}
	seen = fa_calloc(n, 1);
	if (!seen) {
		rc = fa_err(FATHOM_ENOMEM, "remote embedder %s: out of memory", url);
		goto out;
	}
	for (size_t k = 0; k < n; k++) {
		json_t *ent = json_array_get(data, k);
		json_t *ix = json_is_object(ent) ? json_object_get(ent, "index") : NULL;
		json_t *emb = json_is_object(ent) ? json_object_get(ent, "embedding") : NULL;
		if (!json_is_integer(ix) || !json_is_array(emb)) {
			rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: entry %zu of the reply has no "
			            "%s", url, k, !json_is_integer(ix) ? "integer \"index\""
			                                               : "\"embedding\" array");
			goto out;
		}
		json_int_t i = json_integer_value(ix);
		if (i < 0 || (uint64_t)i >= n) {
			rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: entry %zu has index %lld, "
			            "out of 0..%zu", url, k, (long long)i, n - 1);
			goto out;
		}
		if (seen[i]) {
			rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: index %lld twice in the reply",
			            url, (long long)i);
			goto out;
		}
		seen[i] = 1;
		size_t d = json_array_size(emb);
		if (*dim == 0) {
			if (d == 0 || d > EM_MAX_DIM) {
				rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: a vector of %zu values "
				            "(1..%u taken)", url, d, EM_MAX_DIM);
				goto out;
			}
			*dim = (uint32_t)d;
		} else if (d != *dim) {
			rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: index %lld has %zu values, "
			            "not the dimension %u", url, (long long)i, d, *dim);
			goto out;
		}
		float *row = out + (size_t)i * *dim;
		for (size_t j = 0; j < d; j++) {
			json_t *x = json_array_get(emb, j);
			double v = json_is_number(x) ? json_number_value(x) : NAN;
			if (!isfinite(v) || fabs(v) > FLT_MAX) {
				rc = fa_err(FATHOM_ECORRUPT, "remote embedder %s: index %lld, value %zu is "
				            "not a finite number", url, (long long)i, j);
				goto out;
			}
			row[j] = (float)v;
		}
		/* a zero vector stays zero: the service says the text has nothing */
		em_normalize(row, *dim);
	}
	/* n entries, each index in 0..n-1 at most once: every index came */
out:
	fa_free(seen);
	json_decref(root);
	return rc;
}

/* ---- the request ------------------------------------------------------------ */

static int dump_cb(const char *p, size_t n, void *ctx)
{
	return fbuf_append(ctx, p, n) ? -1 : 0;
}

static int request_body(fbuf *b, const remote *r, const char *const *texts,
                        const size_t *lens, size_t n)
{
	json_t *root = json_object(), *in = json_array();
	int rc = 0;
	if (!root || !in || json_object_set(root, "input", in))
		goto nomem;
	if (r->model && json_object_set_new(root, "model", json_string(r->model)))
		goto nomem;
	for (size_t i = 0; i < n; i++) {
		json_t *s = json_stringn(texts[i] ? texts[i] : "", lens[i]);
		if (!s) {
			rc = fa_err(FATHOM_EINVAL, "remote embedder %s: text %zu is not valid UTF-8 "
			            "(or memory ran out)", r->shown, i);
			goto out;
		}
		if (json_array_append_new(in, s))
			goto nomem;
	}
	fbuf_init(b, RM_REQUEST_MAX);
	if (json_dump_callback(root, dump_cb, b, JSON_COMPACT | JSON_PRESERVE_ORDER) ||
	    fbuf_putc(b, '\0')) {
		rc = b->err ? b->err : fa_err(FATHOM_ENOMEM, "remote embedder %s: out of memory",
		                              r->shown);
		fbuf_free(b);
		if (rc == FATHOM_ETOOBIG)
			fa_err(rc, "remote embedder %s: a request past %zu bytes", r->shown,
			       RM_REQUEST_MAX);
		goto out;
	}
	b->len--;   /* the NUL is not sent */
	goto out;
nomem:
	rc = fa_err(FATHOM_ENOMEM, "remote embedder %s: out of memory", r->shown);
out:
	json_decref(in);
	json_decref(root);
	return rc;
}

/* ---- one call: its requests on a multi handle -------------------------------- */

enum { JOB_WAITING, JOB_RUNNING, JOB_DONE };

typedef struct rm_job {
	CURL *h;
	fbuf req, reply;
	size_t first, count;     /* its texts */
	uint32_t tries;          /* made so far */
	int state;
	int too_big;             /* the reply passed its bound */
	double ready_at;         /* when it may start (after a backoff) */
	char errbuf[CURL_ERROR_SIZE];
} rm_job;

static size_t write_cb(char *p, size_t size, size_t nmemb, void *ctx)
{
	rm_job *j = ctx;
	size_t n = size * nmemb;   /* curl's size is 1 */
	if (fbuf_append(&j->reply, p, n)) {
		j->too_big = 1;
		return 0;   /* CURLE_WRITE_ERROR stops the transfer */
	}
	return n;
}

/* A curl failure another try may get past: not one of ours (the body's
 * bound), of the URL, of memory or of certificates. */
static int curl_retryable(CURLcode c)
{
	switch (c) {
	case CURLE_URL_MALFORMAT: case CURLE_UNSUPPORTED_PROTOCOL: case CURLE_OUT_OF_MEMORY:
	case CURLE_WRITE_ERROR: case CURLE_FILESIZE_EXCEEDED: case CURLE_BAD_FUNCTION_ARGUMENT:
	case CURLE_PEER_FAILED_VERIFICATION: case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM: case CURLE_NOT_BUILT_IN: case CURLE_FAILED_INIT:
		return 0;
	default:
		return 1;
	}
}

static int job_setup(const remote *r, rm_job *j, struct curl_slist *hdr, size_t max_reply)
{
	j->h = curl_easy_init();
	if (!j->h)
		return fa_err(FATHOM_ENOMEM, "remote embedder %s: curl_easy_init failed", r->shown);
	fbuf_init(&j->reply, max_reply);
	CURL *h = j->h;
	CURLcode c = CURLE_OK;
#define SET(opt, val) do { if (c == CURLE_OK) c = curl_easy_setopt(h, opt, val); } while (0)
	SET(CURLOPT_URL, r->endpoint);
#if LIBCURL_VERSION_NUM >= 0x075500
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
#else
	SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	SET(CURLOPT_POST, 1L);
	SET(CURLOPT_POSTFIELDS, (const char *)j->req.data);
	SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)j->req.len);
	SET(CURLOPT_HTTPHEADER, hdr);
	SET(CURLOPT_WRITEFUNCTION, write_cb);
	SET(CURLOPT_WRITEDATA, j);
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max_reply);
	SET(CURLOPT_ACCEPT_ENCODING, "");   /* what curl decodes; the bound is on the decoded */
	SET(CURLOPT_TIMEOUT_MS, r->timeout_ms);
	SET(CURLOPT_CONNECTTIMEOUT_MS, r->connect_ms);
	SET(CURLOPT_NOSIGNAL, 1L);          /* threads: no SIGALRM for DNS timeouts */
	SET(CURLOPT_ERRORBUFFER, j->errbuf);
	SET(CURLOPT_PRIVATE, (void *)j);
	SET(CURLOPT_USERAGENT, "fathom/" FATHOM_VERSION_STRING);
#undef SET
	if (c != CURLE_OK)
		return fa_err(c == CURLE_OUT_OF_MEMORY ? FATHOM_ENOMEM : FATHOM_EINVAL,
		              "remote embedder %s: %s", r->shown, curl_easy_strerror(c));
	return 0;
}

/* The delay before try number `tries + 1`: backoff doubling from the
 * first retry, or what Retry-After asks when that is longer (up to a
 * bound: a service asking for minutes fails the call, after the tries). */
static double retry_delay(const remote *r, uint32_t tries, long retry_after)
{
	double d = r->backoff;
	for (uint32_t k = 1; k < tries && d < RM_BACKOFF_MAX; k++)
		d *= 2;
	d = FA_MIN(d, RM_BACKOFF_MAX);
	if (retry_after > 0)
		d = FA_MAX(d, FA_MIN((double)retry_after, RM_RETRY_AFTER_MAX));
	return d;
}

/* A finished transfer: 0 with its rows in out, 1 to try again (ready_at
 * set), or an error. */
static int job_finish(const remote *r, rm_job *j, CURLcode res, uint32_t *dim, float *out)
{
	long status = 0, retry_after = 0;
	if (res == CURLE_OK) {
		curl_easy_getinfo(j->h, CURLINFO_RESPONSE_CODE, &status);
		if (status >= 200 && status < 300)
			return em_remote_parse(out + j->first * *dim, dim, (const char *)j->reply.data,
			                       j->reply.len, j->count, r->shown);
	}
	if (j->too_big || res == CURLE_FILESIZE_EXCEEDED)
		return fa_err(FATHOM_ETOOBIG, "remote embedder %s: a reply past %zu bytes (for %zu "
		              "texts)", r->shown, j->reply.max, j->count);
	if (res == CURLE_OUT_OF_MEMORY)
		return fa_err(FATHOM_ENOMEM, "remote embedder %s: out of memory", r->shown);
	int retry = res != CURLE_OK ? curl_retryable(res) : (status == 429 || status >= 500);
	if (retry && j->tries <= r->retries) {
#if LIBCURL_VERSION_NUM >= 0x074200
		curl_off_t ra = 0;
		if (res == CURLE_OK && curl_easy_getinfo(j->h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK &&
		    ra > 0)
			retry_after = ra > 3600 ? 3600 : (long)ra;
#endif
		j->ready_at = now_mono() + retry_delay(r, j->tries, retry_after);
		return 1;
	}
	char tries[48] = "";
	if (retry)
		snprintf(tries, sizeof tries, " (after %u tr%s)", j->tries, j->tries == 1 ? "y" : "ies");
	if (res != CURLE_OK)
		return fa_err(FATHOM_EIO, "remote embedder %s: %s%s", r->shown,
		              j->errbuf[0] ? j->errbuf : curl_easy_strerror(res), tries);
	char said[RM_ERR_BODY + 1];
	quote_body(said, sizeof said, j->reply.data, j->reply.len);
	return fa_err(FATHOM_EIO, "remote embedder %s: HTTP %ld%s%s%s", r->shown, status, tries,
	              *said ? ": " : "", said);
}

static CURLM *multi_take(remote *r)
{
	CURLM *m = NULL;
	pthread_mutex_lock(&r->mu);
	if (r->npool)
		m = r->pool[--r->npool];
	pthread_mutex_unlock(&r->mu);
	if (!m && (m = curl_multi_init()) != NULL)
		curl_multi_setopt(m, CURLMOPT_MAXCONNECTS, (long)r->concurrency);
	return m;
}

static void multi_give(remote *r, CURLM *m)
{
	pthread_mutex_lock(&r->mu);
	if (r->npool < RM_POOL) {
		r->pool[r->npool++] = m;
		m = NULL;
	}
	pthread_mutex_unlock(&r->mu);
	if (m)
		curl_multi_cleanup(m);
}

/* Run the jobs to their end or to the first failure. *dim 0 (the probe,
 * one job): the reply's dimension is learnt into it. */
static int run_jobs(remote *r, CURLM *m, rm_job *jobs, size_t nj, uint32_t *dim, float *out)
{
	size_t done = 0, running = 0;
	int rc = 0;
	while (done < nj && rc == 0) {
		double now = now_mono(), wake = now + 1.0;
		for (size_t i = 0; i < nj && running < r->concurrency; i++) {
			rm_job *j = &jobs[i];
			if (j->state != JOB_WAITING)
				continue;
			if (j->ready_at > now) {
				wake = FA_MIN(wake, j->ready_at);
				continue;
			}
			fbuf_reset(&j->reply);
			j->too_big = 0;
			j->errbuf[0] = '\0';
			CURLMcode mc = curl_multi_add_handle(m, j->h);
			if (mc != CURLM_OK) {
				rc = fa_err(mc == CURLM_OUT_OF_MEMORY ? FATHOM_ENOMEM : FATHOM_EIO,
				            "remote embedder %s: %s", r->shown, curl_multi_strerror(mc));
				break;
			}
			j->state = JOB_RUNNING;
			j->tries++;
			running++;
		}
		if (rc)
			break;
		int still = 0;
		CURLMcode mc = curl_multi_perform(m, &still);
		if (mc != CURLM_OK) {
			rc = fa_err(FATHOM_EIO, "remote embedder %s: %s", r->shown, curl_multi_strerror(mc));
			break;
		}
		CURLMsg *msg;
		int left, freed = 0;
		while (rc == 0 && (msg = curl_multi_info_read(m, &left)) != NULL) {
			if (msg->msg != CURLMSG_DONE)
				continue;
			char *priv = NULL;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
			rm_job *j = (rm_job *)(void *)priv;
			CURLcode res = msg->data.result;   /* msg is invalid once removed */
			curl_multi_remove_handle(m, j->h);
			running--;
			freed = 1;
			int f = job_finish(r, j, res, dim, out);
			if (f == 1) {
				j->state = JOB_WAITING;
				wake = FA_MIN(wake, j->ready_at);
			} else {
				j->state = JOB_DONE;
				done++;
				rc = f;
			}
		}
		if (rc || done == nj)
			break;
		if (freed)
			continue;   /* a slot came free: start the next job first */
		/* sleep until a socket is ready or a retry is due; curl_multi_poll
		 * waits the whole time even with no transfer running */
		double wait = wake - now_mono();
		int ms = wait <= 0 ? 0 : (int)(wait * 1000) + 1;
		if (running && ms > 1000)
			ms = 1000;
		mc = curl_multi_poll(m, NULL, 0, ms, NULL);
		if (mc != CURLM_OK)
			rc = fa_err(FATHOM_EIO, "remote embedder %s: %s", r->shown, curl_multi_strerror(mc));
	}
	for (size_t i = 0; i < nj; i++)
		if (jobs[i].state == JOB_RUNNING)
			curl_multi_remove_handle(m, jobs[i].h);
	return rc;
}

/* The bound on a reply for `count` texts of dimension dim (0: unknown). */
static size_t reply_max(size_t count, uint32_t dim)
{
	size_t per = (size_t)(dim ? dim : EM_MAX_DIM) * RM_VALUE_BYTES + RM_TEXT_BYTES, all;
	if (fa_mul(per, count, &all) || fa_add(all, RM_SLACK, &all) || all > RM_BODY_MAX)
		return RM_BODY_MAX;
	return all;
}

/* n texts into out (n rows of dim; dim 0 for the probe: out has room for
 * EM_MAX_DIM values a row, and *learnt gets the reply's dimension). */
static int remote_call(remote *r, const char *const *texts, const size_t *lens, size_t n,
                       uint32_t dim, float *out, uint32_t *learnt)
{
	size_t nj = (n + r->batch - 1) / r->batch;
	rm_job *jobs = fa_calloc(nj, sizeof *jobs);
	struct curl_slist *hdr = NULL, *t;
	CURLM *m = NULL;
	int rc = 0;
	if (!jobs) {
		rc = fa_err(FATHOM_ENOMEM, "remote embedder %s: out of memory", r->shown);
		goto out;
	}
	/* "Expect:": no 100-continue round trip before a large body */
	const char *hs[] = { "Content-Type: application/json", "Accept: application/json",
	                     "Expect:", r->auth };
	for (size_t k = 0; k < FA_ARRAY_LEN(hs) && hs[k]; k++) {
		if (!(t = curl_slist_append(hdr, hs[k]))) {
			rc = fa_err(FATHOM_ENOMEM, "remote embedder %s: out of memory", r->shown);
			goto out;
		}
		hdr = t;
	}
	for (size_t i = 0; i < nj; i++) {
		rm_job *j = &jobs[i];
		j->first = i * r->batch;
		j->count = FA_MIN(r->batch, n - j->first);
		if ((rc = request_body(&j->req, r, texts + j->first, lens + j->first, j->count)) ||
		    (rc = job_setup(r, j, hdr, reply_max(j->count, dim))))
			goto out;
	}
	if (!(m = multi_take(r))) {
		rc = fa_err(FATHOM_ENOMEM, "remote embedder %s: curl_multi_init failed", r->shown);
		goto out;
	}
	if (dim == 0 && nj != 1) {
		/* only the probe, one job, learns the dimension */
		rc = fa_err(FATHOM_EINVAL, "remote embedder %s: no dimension", r->shown);
	} else {
		rc = run_jobs(r, m, jobs, nj, &dim, out);
		if (learnt)
			*learnt = dim;
	}
	multi_give(r, m);
out:
	for (size_t i = 0; jobs && i < nj; i++) {
		if (jobs[i].h)
			curl_easy_cleanup(jobs[i].h);
		fbuf_free(&jobs[i].req);
		fbuf_free(&jobs[i].reply);
	}
	fa_free(jobs);
	curl_slist_free_all(hdr);
	return rc;
}

static int remote_embed(em_embedder *e, const char *const *texts, const size_t *lens, size_t n,
                        float *out)
{
	return remote_call(e->impl, texts, lens, n, e->dim, out, NULL);
}

static void remote_free_impl(remote *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->npool; i++)
		curl_multi_cleanup(r->pool[i]);
	pthread_mutex_destroy(&r->mu);
	if (r->auth) {
		volatile char *p = r->auth;   /* the key: not left in freed memory */
		while (*p)
			*p++ = 0;
	}
	fa_free(r->auth);
	fa_free(r->endpoint);
	fa_free(r->shown);
	fa_free(r->model);
	fa_free(r);
}

static void remote_free(em_embedder *e)
{
	if (!e)
		return;
	remote_free_impl(e->impl);
	fa_free(e);
}

static const em_embedder_ops remote_ops = { "remote", remote_embed, remote_free };

/* Text fit for an ident and a header: printable ASCII and UTF-8, no
 * spaces in a URL, no control bytes anywhere. */
static int clean_text(const char *s, int spaces)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f || (!spaces && *s == ' '))
			return 0;
	return 1;
}

/* The endpoint (a base ending in /v1 gets /embeddings), and the same
 * without user and password, for messages and the ident. */
static int endpoint_of(remote *r, const char *url)
{
	size_t len = strlen(url);
	const char *add = "";
	if (len >= 3 && strcmp(url + len - 3, "/v1") == 0)
		add = "/embeddings";
	else if (len >= 4 && strcmp(url + len - 4, "/v1/") == 0)
		add = "embeddings";
	fbuf b;
	fbuf_init(&b, RM_URL_MAX + 16);
	fbuf_puts(&b, url);
	fbuf_puts(&b, add);
	if (b.err)
		return b.err;
	r->endpoint = fbuf_detach(&b, NULL);
	if (!r->endpoint)
		return fa_err(FATHOM_ENOMEM, "remote embedder: out of memory");
	/* scheme://user:pass@host/... → scheme://host/...: the part before the
	 * first '/' after "//" that has an '@' */
	const char *host = strstr(r->endpoint, "//");
	host = host ? host + 2 : r->endpoint;
	size_t hl = strcspn(host, "/?#");
	const char *at = memchr(host, '@', hl);
	if (at) {
		/* the last '@' of the authority ends the credentials */
		const char *p;
		while ((p = memchr(at + 1, '@', (size_t)(host + hl - at - 1))) != NULL)
			at = p;
		size_t pre = (size_t)(host - r->endpoint);
		fbuf_init(&b, 0);
		fbuf_append(&b, r->endpoint, pre);
		fbuf_puts(&b, at + 1);
		if (b.err)
			return b.err;
		r->shown = fbuf_detach(&b, NULL);
	} else {
		r->shown = fa_strdup(r->endpoint);
	}
	return r->shown ? 0 : fa_err(FATHOM_ENOMEM, "remote embedder: out of memory");
}

int em_remote_open(em_embedder **out, const em_remote_opts *o)
{
	if (!out)
		return fa_err(FATHOM_EINVAL, "remote embedder: no output");
	*out = NULL;
	if (!o || !o->url || !*o->url)
		return fa_err(FATHOM_EINVAL, "remote embedder: no URL");
	if (strlen(o->url) > RM_URL_MAX || !clean_text(o->url, 0) ||
	    (strncasecmp(o->url, "http://", 7) != 0 && strncasecmp(o->url, "https://", 8) != 0))
		return fa_err(FATHOM_EINVAL, "remote embedder: the URL must be http:// or https://, "
		              "at most %u bytes, without spaces or control characters", RM_URL_MAX);
	if (o->model && (strlen(o->model) > RM_MODEL_MAX || !clean_text(o->model, 0)))
		return fa_err(FATHOM_EINVAL, "remote embedder: the model name must be at most %u "
		              "bytes, without spaces or control characters", RM_MODEL_MAX);
	if (o->dim > EM_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "remote embedder: dimension %u out of 1..%u", o->dim,
		              EM_MAX_DIM);
	if (o->batch > EM_MAX_BATCH || o->concurrency > 256)
		return fa_err(FATHOM_EINVAL, "remote embedder: batch %u (1..%u) or concurrency %u "
		              "(1..256) out of range", o->batch, EM_MAX_BATCH, o->concurrency);
	if (!(o->timeout >= 0 && o->timeout <= 86400) || !(o->backoff >= 0 && o->backoff <= 60))
		return fa_err(FATHOM_EINVAL, "remote embedder: timeout (0..86400 s) or backoff "
		              "(0..60 s) out of range");
	pthread_once(&curl_once, curl_init_once);
	if (curl_init_rc != CURLE_OK)
		return fa_err(FATHOM_EIO, "remote embedder: curl_global_init: %s",
		              curl_easy_strerror(curl_init_rc));

	remote *r = fa_calloc(1, sizeof *r);
	em_embedder *e = fa_calloc(1, sizeof *e);
	int rc = 0;
	if (!r || !e || pthread_mutex_init(&r->mu, NULL)) {
		fa_free(r);
		fa_free(e);
		return fa_err(FATHOM_ENOMEM, "remote embedder: out of memory");
	}
	r->batch = o->batch ? o->batch : 64;
	r->concurrency = o->concurrency ? o->concurrency : 4;
	r->retries = o->retries == UINT32_MAX ? 0 : o->retries ? o->retries : 3;
	double timeout = o->timeout > 0 ? o->timeout : 60.0;
	r->timeout_ms = (long)ceil(timeout * 1000);
	r->connect_ms = (long)ceil(FA_MIN(timeout, RM_CONNECT_TIMEOUT) * 1000);
	r->backoff = o->backoff > 0 ? o->backoff : 0.2;
	e->ops = &remote_ops;
	e->impl = r;
	if ((rc = endpoint_of(r, o->url)))
		goto fail;
	if (o->model && *o->model && !(r->model = fa_strdup(o->model))) {
		rc = fa_err(FATHOM_ENOMEM, "remote embedder: out of memory");
		goto fail;
	}
	const char *env = o->api_key_env && *o->api_key_env ? o->api_key_env
	                                                    : "FATHOM_EMBED_API_KEY";
	const char *key = getenv(env);
	if (key && *key) {
		if (!clean_text(key, 0)) {
			rc = fa_err(FATHOM_EINVAL, "remote embedder: the key in %s has spaces or control "
			            "characters", env);
			goto fail;
		}
		fbuf b;
		fbuf_init(&b, 0);
		fbuf_printf(&b, "Authorization: Bearer %s", key);
		if ((rc = b.err))
			goto fail;
		r->auth = fbuf_detach(&b, NULL);
	}
	if (strlen(r->shown) + (r->model ? strlen(r->model) : 0) + 48 > EM_IDENT_MAX) {
		rc = fa_err(FATHOM_EINVAL, "remote embedder %s: URL and model too long for an ident "
		            "(%u bytes)", r->shown, EM_IDENT_MAX);
		goto fail;
	}
	uint32_t dim = o->dim;
	if (dim == 0) {
		static const char probe[] = "fathom";
		const char *texts[1] = { probe };
		size_t lens[1] = { sizeof probe - 1 };
		float *row = fa_malloc(EM_MAX_DIM * sizeof *row);
		rc = row ? remote_call(r, texts, lens, 1, 0, row, &dim)
		         : fa_err(FATHOM_ENOMEM, "remote embedder: out of memory");
		fa_free(row);
		if (rc)
			goto fail;
	}
	e->dim = dim;
	int w = snprintf(e->ident, sizeof e->ident, "remote v1 url=%s model=%s dim=%u", r->shown,
	                 r->model ? r->model : "", dim);
	if (w < 0 || (size_t)w >= sizeof e->ident) {
		rc = fa_err(FATHOM_EINVAL, "remote embedder %s: URL and model too long for an ident",
		            r->shown);
		goto fail;
	}
	*out = e;
	return 0;
fail:
	remote_free(e);
	return rc;
}
