/*
 * http.c — the daemon on libmicrohttpd: a thread per connection (a long
 * ingest never holds up a search), a cap on connections, an idle timeout
 * for slow clients, bounded headers and bodies, an optional bearer token,
 * and Host/Origin checks against DNS rebinding. SIGTERM and SIGINT stop
 * new connections, let the requests in flight finish (each write commits
 * before it is answered), then close the index.
 *
 * Slow clients: libmicrohttpd's idle timeout restarts with every byte, so
 * a client sending a header line a second would hold its connection for
 * ever. A watchdog thread gives each request head (from the connection's
 * start, or from the end of the request before it on a kept-alive
 * connection, to its last header) --head-timeout seconds in all, then
 * shuts the connection's socket down; and no client address may hold
 * every connection (MHD_OPTION_PER_IP_CONNECTION_LIMIT), so one more
 * client can always come in from elsewhere.
 *
 * Cross-site requests: a web page can send a "simple" POST (form types,
 * no preflight) to a daemon on the same machine. Every request with an
 * Origin must come from the daemon's own origin (an allowed host, the
 * port the request was sent to; "null" never), and every POST must
 * declare a JSON body (application/json, or JSON lines), which no simple
 * request can.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "serve/serve.h"

/* One connection, as the watchdog sees it. */
typedef struct hconn {
	struct hconn *prev, *next;
	MHD_socket fd;
	double head_t0;           /* when its current request head began */
	int in_head;              /* 1 until that head has all come */
	int cut;                  /* shut down by the watchdog */
} hconn;

typedef struct hctx {
	sv_state *s;
	const sv_http_opts *o;
	char *token;              /* NULL: none required */
	char host[260];           /* the listen host, as given */
	int loopback;             /* listening on loopback only */
	unsigned port;            /* the port bound */
	_Atomic int inflight;
	/* the watchdog */
	pthread_mutex_t mu;
	pthread_cond_t wake;
	hconn *conns;             /* open connections */
	double head_timeout;
	int dog_stop;
} hctx;

typedef struct hreq {
	char *uri;                /* the raw target: path and query string */
	char *body;
	size_t len, cap;
	int too_large;
	int started;
	double t0;
	const char *cors;         /* its Origin, when --allow-origin names it */
} hreq;

static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls;
	(void)c;
	hreq *r = fathom_calloc(1, sizeof *r);
	if (r)
		r->uri = sv_strdup(uri ? uri : "/");
	return r;
}

/* The watchdog's record of connection c (NULL: none was made). */
static hconn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* The head of the request on c began (at) or is complete (at < 0). */
static void head_mark(hctx *h, struct MHD_Connection *c, double at)
{
	hconn *hc = conn_of(c);
	if (!hc)
		return;
	pthread_mutex_lock(&h->mu);
	hc->in_head = at >= 0;
	if (at >= 0)
		hc->head_t0 = at;
	pthread_mutex_unlock(&h->mu);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	hctx *h = cls;
	hconn *hc = *socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		hc = ci ? fathom_calloc(1, sizeof *hc) : NULL;
		*socket_context = hc;
		if (!hc)
			return;   /* no memory: the idle timeout alone guards it */
		hc->fd = ci->connect_fd;
		hc->head_t0 = sv_now();
		hc->in_head = 1;
		pthread_mutex_lock(&h->mu);
		hc->next = h->conns;
		if (h->conns)
			h->conns->prev = hc;
		h->conns = hc;
		pthread_mutex_unlock(&h->mu);
		return;
	}
	if (!hc)
		return;
	/* Called before libmicrohttpd closes the socket: once unlinked, the
	 * watchdog never touches a descriptor that may be reused. */
	pthread_mutex_lock(&h->mu);
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		h->conns = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	pthread_mutex_unlock(&h->mu);
	fathom_free(hc);
	*socket_context = NULL;
}

/* Shut down every connection whose request head has taken longer than
 * head_timeout; libmicrohttpd then sees the end of the stream and closes
 * it. Checked ten times a second. */
static void *watchdog(void *arg)
{
	hctx *h = arg;
	pthread_mutex_lock(&h->mu);
	while (!h->dog_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 100 * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&h->wake, &h->mu, &ts);
		double now = sv_now();
		for (hconn *hc = h->conns; hc && !h->dog_stop; hc = hc->next) {
			if (!hc->in_head || hc->cut || now - hc->head_t0 <= h->head_timeout)
				continue;
			shutdown(hc->fd, SHUT_RDWR);
			hc->cut = 1;
		}
	}
	pthread_mutex_unlock(&h->mu);
	return NULL;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	hctx *h = cls;
	hreq *r = *con_cls;
	/* a kept-alive connection waits for its next head from now */
	head_mark(h, c, sv_now());
	if (!r)
		return;
	if (r->started)
		atomic_fetch_sub(&h->inflight, 1);
	fathom_free(r->uri);
	fathom_free(r->body);
	fathom_free(r);
	*con_cls = NULL;
}

/* CORS (--allow-origin): a browser client served from another origin (the
 * MCP Inspector, a web page) may call the daemon from exactly these
 * origins. Its preflight (OPTIONS) is answered before the token check, as
 * a preflight carries no credentials; every reply to it names the origin.
 * Without --allow-origin, OPTIONS is what it was (405). */
static int cors_allowed(const hctx *h, const char *origin)
{
	for (size_t i = 0; origin && i < h->o->n_cors_origins; i++)
		if (!strcasecmp(origin, h->o->cors_origins[i]))
			return 1;
	return 0;
}

/* cors: the Origin of a request from a --allow-origin origin, or NULL. */
static enum MHD_Result send_reply(struct MHD_Connection *c, const sv_reply *rp, int head,
                                  const char *cors)
{
	struct MHD_Response *res = MHD_create_response_from_buffer(
		head ? 0 : rp->len, head ? (void *)"" : rp->body,
		head ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_COPY);
	if (!res)
		return MHD_NO;
	if (rp->ctype)
		MHD_add_response_header(res, "Content-Type", rp->ctype);
	MHD_add_response_header(res, "Cache-Control", "no-store");
	MHD_add_response_header(res, "X-Content-Type-Options", "nosniff");
	if (rp->status == 401)
		MHD_add_response_header(res, "WWW-Authenticate", "Bearer");
	if (cors) {
		MHD_add_response_header(res, "Access-Control-Allow-Origin", cors);
		MHD_add_response_header(res, "Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate");
		MHD_add_response_header(res, "Vary", "Origin");
	}
	enum MHD_Result ok = MHD_queue_response(c, (unsigned)rp->status, res);
	MHD_destroy_response(res);
	return ok;
}

/* An error answered before routing (a guard, the body's size or type): to
 * a --allow-origin origin it names that origin too, or a browser client
 * would see a network error instead of the status and its message. */
static enum MHD_Result send_error(struct MHD_Connection *c, const hreq *r, int status,
                                  const char *msg, int ep)
{
	sv_reply rp;
	memset(&rp, 0, sizeof rp);
	sv_reply_error(&rp, status, msg);
	enum MHD_Result ok = send_reply(c, &rp, 0, r->cors);
	sv_reply_free(&rp);
	sv_metrics_record(ep, status, sv_now() - r->t0);
	return ok;
}

/* host[:port] without the port; "[::1]:7700" -> "::1". */
static void host_name(const char *h, char *out, size_t cap)
{
	size_t n;
	if (h[0] == '[') {
		const char *e = strchr(h, ']');
		n = e ? (size_t)(e - h - 1) : strlen(h + 1);
		h++;
	} else {
		const char *colon = strrchr(h, ':');
		n = colon && !strchr(colon + 1, ':') && colon == strchr(h, ':') ? (size_t)(colon - h)
		                                                                 : strlen(h);
	}
	if (n >= cap)
		n = cap - 1;
	memcpy(out, h, n);
	out[n] = '\0';
}

static int host_allowed(const hctx *h, const char *host)
{
	char name[256];
	host_name(host, name, sizeof name);
	if (h->o->n_allow_hosts == 0 && !h->loopback)
		return 1;   /* listening on a network address, no list given */
	if (!strcasecmp(name, "localhost") || !strcmp(name, "127.0.0.1") || !strcmp(name, "::1") ||
	    !strcasecmp(name, h->host))
		return 1;
	for (size_t i = 0; i < h->o->n_allow_hosts; i++)
		if (!strcasecmp(name, h->o->allow_hosts[i]))
			return 1;
	return 0;
}

/* The port an authority names ("host:port", "[::1]:port"), dflt when it
 * names none, 0 when it is no port. */
static unsigned authority_port(const char *a, unsigned dflt)
{
	const char *p;
	if (a[0] == '[') {
		p = strchr(a, ']');
		if (!p || (p[1] && p[1] != ':'))
			return 0;
		p = p[1] ? p + 2 : NULL;
	} else {
		p = strchr(a, ':');
		if (p && strchr(p + 1, ':'))
			return 0;   /* a bare IPv6 address is no authority */
		p = p ? p + 1 : NULL;
	}
	if (!p)
		return dflt;
	char *end;
	unsigned long v = strtoul(p, &end, 10);
	return *p >= '0' && *p <= '9' && !*end && v > 0 && v <= 65535 ? (unsigned)v : 0;
}

/* An Origin is allowed when it is the daemon's own: http or https, a host
 * the Host check takes (and, where that takes any, the one in Host), and
 * the port the request was sent to. "null" (sandboxed frames, files,
 * some redirects) is anyone's, so never. */
static int origin_allowed(const hctx *h, const char *origin, const char *host)
{
	unsigned dflt;
	const char *a;
	if (!strncasecmp(origin, "http://", 7)) {
		dflt = 80;
		a = origin + 7;
	} else if (!strncasecmp(origin, "https://", 8)) {
		dflt = 443;
		a = origin + 8;
	} else {
		return 0;
	}
	if (!*a || strchr(a, '/') || strchr(a, '@') || !host_allowed(h, a))
		return 0;
	char oname[256], hname[256];
	host_name(a, oname, sizeof oname);
	host_name(host, hname, sizeof hname);
	if (h->o->n_allow_hosts == 0 && !h->loopback && strcasecmp(oname, hname) != 0)
		return 0;
	unsigned op = authority_port(a, dflt), hp = authority_port(host, dflt);
	return op != 0 && (op == hp || op == h->port);
}

/* Is a POST's Content-Type JSON, or JSON lines (POST /documents)? The
 * media type alone counts, not its parameters (charset=utf-8). */
static int json_content_type(const char *ct)
{
	static const char *const ok[] = { "application/json", "application/x-ndjson",
	                                  "application/jsonl", "application/x-jsonlines" };
	if (!ct)
		return 0;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	size_t n = strcspn(ct, "; \t");
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (n == strlen(ok[i]) && !strncasecmp(ct, ok[i], n))
			return 1;
	return 0;
}

static enum MHD_Result send_preflight(struct MHD_Connection *c, const char *origin, double t0)
{
	struct MHD_Response *res = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
	if (!res)
		return MHD_NO;
	MHD_add_response_header(res, "Access-Control-Allow-Origin", origin);
	MHD_add_response_header(res, "Access-Control-Allow-Methods", "GET, HEAD, POST, DELETE, OPTIONS");
	MHD_add_response_header(res, "Access-Control-Allow-Headers",
	                        "Content-Type, Accept, Authorization, MCP-Protocol-Version, "
	                        "Mcp-Session-Id, Last-Event-ID");
	MHD_add_response_header(res, "Access-Control-Max-Age", "600");
	MHD_add_response_header(res, "Vary", "Origin");
	enum MHD_Result ok = MHD_queue_response(c, 204, res);
	MHD_destroy_response(res);
	sv_metrics_record(SV_EP_OTHER, 204, sv_now() - t0);
	return ok;
}

typedef struct header_count {
	unsigned host, content_length, content_type;
} header_count;

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
	(void)kind;
	(void)value;
	header_count *n = cls;
	if (!key)
		return MHD_YES;
	n->host += !strcasecmp(key, "Host");
	n->content_length += !strcasecmp(key, "Content-Length");
	n->content_type += !strcasecmp(key, "Content-Type");
	return MHD_YES;
}

/* Constant-time comparison of the Authorization header with the token. */
static int token_ok(const hctx *h, const char *auth)
{
	if (!h->token)
		return 1;
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
		return 0;
	const char *t = auth + 7;
	size_t a = strlen(t), b = strlen(h->token);
	unsigned char d = (unsigned char)(a != b);
	for (size_t i = 0; i < b; i++)
		d |= (unsigned char)(h->token[i] ^ (i < a ? t[i] : 0));
	return d == 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **con_cls)
{
	(void)url;
	(void)version;
	hctx *h = cls;
	hreq *r = *con_cls;
	if (!r)
		return MHD_NO;   /* out of memory at the start: drop the connection */
	size_t max_body = sv_options(h->s)->max_body;
	if (!r->started) {
		r->started = 1;
		r->t0 = sv_now();
		atomic_fetch_add(&h->inflight, 1);
		head_mark(h, c, -1);   /* the head is all here */
		const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
		r->cors = cors_allowed(h, origin) ? origin : NULL;
		header_count n = { 0, 0, 0 };
		MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &n);
		/* Two of these could be read two ways (which Host was checked, how
		 * long the body is), so none is taken twice. */
		if (n.host > 1 || n.content_length > 1 || n.content_type > 1)
			return send_error(c, r, 400, n.host > 1 ? "more than one Host header"
			                          : n.content_length > 1 ? "more than one Content-Length header"
			                          : "more than one Content-Type header", SV_EP_OTHER);
		const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
		if (!host || !host_allowed(h, host))
			return send_error(c, r, 403,
			                  "Host not allowed (DNS rebinding guard; see --allow-host)",
			                  SV_EP_OTHER);
		/* an Origin must be the daemon's own, or one --allow-origin names */
		if (origin && !r->cors && !origin_allowed(h, origin, host))
			return send_error(c, r, 403, "Origin not allowed (only the daemon's own origin: an "
			                  "allowed host and this port, never null; or --allow-origin)",
			                  SV_EP_OTHER);
		if (r->cors && strcmp(method, "OPTIONS") == 0)
			return send_preflight(c, r->cors, r->t0);
		if (strncmp(r->uri, "/health", 7) != 0 &&
		    !token_ok(h, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization")))
			return send_error(c, r, 401, "a bearer token is required", SV_EP_OTHER);
		/* MCP (Streamable HTTP): a version we do not speak is a 400 */
		const char *mv = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
		if (mv && !sv_mcp_version_ok(mv) && strncmp(r->uri, "/mcp", 4) == 0 &&
		    (r->uri[4] == '\0' || r->uri[4] == '?'))
			return send_error(c, r, 400, "unsupported MCP-Protocol-Version", SV_EP_MCP);
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		if (cl && strtoull(cl, NULL, 10) > max_body) {
			char msg[128];
			snprintf(msg, sizeof msg, "the body is over the limit of %zu bytes (--max-body)", max_body);
			return send_error(c, r, 413, msg, SV_EP_OTHER);
		}
		if (strcmp(method, "POST") == 0 &&
		    !json_content_type(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type")))
			return send_error(c, r, 415, "a POST must have Content-Type: application/json "
			                  "(POST /documents: or application/x-ndjson)", SV_EP_OTHER);
		return MHD_YES;   /* the body, if any, comes next */
	}
	if (*upload_size) {
		size_t n = *upload_size;
		*upload_size = 0;
		if (r->too_large || r->len + n > max_body) {
			r->too_large = 1;   /* chunked past the limit: read and drop the rest */
			return MHD_YES;
		}
		if (r->len + n + 1 > r->cap) {
			size_t cap = r->cap ? r->cap : 4096;
			while (cap < r->len + n + 1)
				cap *= 2;
			char *b = fathom_realloc(r->body, cap);
			if (!b)
				return MHD_NO;
			r->body = b;
			r->cap = cap;
		}
		memcpy(r->body + r->len, upload, n);
		r->len += n;
		r->body[r->len] = '\0';
		return MHD_YES;
	}
	if (r->too_large)
		return send_error(c, r, 413, "the body is over the limit (--max-body)",
		                  SV_EP_OTHER);
	sv_reply rp;
	int head = strcmp(method, "HEAD") == 0;
	sv_handle(h->s, method, r->uri, r->body, r->len, &rp);
	enum MHD_Result ok = send_reply(c, &rp, head, r->cors);
	sv_metrics_record(rp.endpoint, rp.status, sv_now() - r->t0);
	sv_reply_free(&rp);
	return ok;
}

/* "127.0.0.1:7700", "[::1]:7700", ":7700", "7700". */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sl, char *host,
                        size_t hcap, unsigned *port)
{
	char buf[256];
	if (strlen(s) >= sizeof buf)
		return -1;
	snprintf(buf, sizeof buf, "%s", s);
	char *p, *h = buf;
	if (buf[0] == '[') {
		char *e = strchr(buf, ']');
		if (!e || e[1] != ':')
			return -1;
		*e = '\0';
		h = buf + 1;
		p = e + 2;
	} else if ((p = strrchr(buf, ':')) != NULL) {
		*p++ = '\0';
	} else {
		p = buf;
		h = "";
	}
	if (!*h)
		h = "127.0.0.1";
	char *end;
	unsigned long v = strtoul(p, &end, 10);
	if (!*p || *end || v > 65535)
		return -1;
	*port = (unsigned)v;
	snprintf(host, hcap, "%s", h);
	memset(ss, 0, sizeof *ss);
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	if (!strcmp(h, "localhost"))
		h = "127.0.0.1";
	if (inet_pton(AF_INET, h, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)v);
		*sl = sizeof *a4;
	} else if (inet_pton(AF_INET6, h, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)v);
		*sl = sizeof *a6;
	} else {
		return -1;
	}
	return 0;
}

/* Bind and listen ourselves, so a busy port is an error that says so:
 * SO_REUSEADDR (a restart need not wait out TIME_WAIT) but never
 * SO_REUSEPORT, with which a second daemon would share the port and
 * requests would go to either index at random. */
static int open_listener(const struct sockaddr_storage *ss, socklen_t sl, unsigned *port)
{
	int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	struct sockaddr_storage got;
	socklen_t gl = sizeof got;
	if (bind(fd, (const struct sockaddr *)ss, sl) != 0 || listen(fd, 128) != 0 ||
	    getsockname(fd, (struct sockaddr *)&got, &gl) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	*port = ntohs(got.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&got)->sin6_port
	                                         : ((struct sockaddr_in *)&got)->sin_port);
	return fd;
}

static int is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static char *read_token(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char buf[1024];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return n ? sv_strdup(buf) : NULL;
}

int sv_http_run(sv_state *s, const sv_http_opts *o)
{
	hctx h;
	memset(&h, 0, sizeof h);
	h.s = s;
	h.o = o;
	struct sockaddr_storage ss;
	socklen_t sl = 0;
	if (parse_listen(o->listen ? o->listen : "127.0.0.1:7700", &ss, &sl, h.host, sizeof h.host,
	                 &h.port)) {
		fprintf(stderr, "fathom serve: --listen wants HOST:PORT (an IP address; [::1]:PORT for "
		                "IPv6), got '%s'\n", o->listen);
		return 2;
	}
	h.loopback = is_loopback(&ss);
	if (o->token_file && !(h.token = read_token(o->token_file))) {
		fprintf(stderr, "fathom serve: %s: no token in it (%s)\n", o->token_file,
		        errno ? strerror(errno) : "empty");
		return 2;
	}
	/* signals: handled by this thread alone, with sigwait */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	int lfd = open_listener(&ss, sl, &h.port);
	if (lfd < 0) {
		int e = errno;
		fprintf(stderr, "fathom serve: cannot listen on %s port %u: %s%s\n", h.host, h.port,
		        strerror(e), e == EADDRINUSE ? " (another fathom serve, or another program, "
		                                       "has it; choose another with --listen)" : "");
		fathom_free(h.token);
		return 2;
	}
	unsigned maxconn = o->max_connections ? o->max_connections : 256;
	/* One client address may hold all connections but a few (at least one
	 * kept for the others). */
	unsigned per_ip = maxconn > 1 ? maxconn - (maxconn / 16 ? maxconn / 16 : 1) : 1;
	h.head_timeout = o->head_timeout > 0 ? o->head_timeout : 10;
	pthread_mutex_init(&h.mu, NULL);
	pthread_cond_init(&h.wake, NULL);
	struct MHD_Daemon *d = MHD_start_daemon(
		flags, (uint16_t)h.port, NULL, NULL, on_request, &h,
		MHD_OPTION_LISTEN_SOCKET, (MHD_socket)lfd,
		MHD_OPTION_URI_LOG_CALLBACK, uri_logger, &h,
		MHD_OPTION_NOTIFY_COMPLETED, completed, &h,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, &h,
		MHD_OPTION_CONNECTION_LIMIT, maxconn,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(o->idle_timeout ? o->idle_timeout : 30),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(o->header_limit ? o->header_limit : 65536),
		MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "fathom serve: cannot serve on %s port %u: %s\n", h.host, h.port,
		        strerror(errno));
		close(lfd);
		fathom_free(h.token);
		return 2;
	}
	/* the watchdog: signals go to the sigwait below, not to it */
	pthread_t dog;
	int dog_rc = pthread_create(&dog, NULL, watchdog, &h);
	if (dog_rc)
		fprintf(stderr, "fathom serve: no watchdog for slow request heads: %s\n",
		        strerror(dog_rc));
	unsigned port = h.port;
	char url[320];
	snprintf(url, sizeof url, ss.ss_family == AF_INET6 ? "http://[%s]:%u" : "http://%s:%u",
	         h.host, port);
	/* where the CLI finds the daemon: SERVE in the index folder */
	char serve_path[4096];
	snprintf(serve_path, sizeof serve_path, "%s/SERVE", sv_index_dir(s));
	FILE *sf = fopen(serve_path, "w");
	if (sf) {
		fprintf(sf, "%s %ld %s\n", url, (long)getpid(), o->token_file ? o->token_file : "-");
		fclose(sf);
	}
	if (!o->quiet) {
		fprintf(stderr, "fathom serve: listening on %s (index %s%s%s)\n", url, sv_index_dir(s),
		        sv_writable(s) ? "" : ", read-only", h.token ? ", token required" : "");
		fflush(stderr);
	}
	int sig = 0;
	sigwait(&set, &sig);
	if (!o->quiet)
		fprintf(stderr, "fathom serve: %s: finishing requests in flight\n", strsignal(sig));
	MHD_socket ls = MHD_quiesce_daemon(d);   /* no new connections */
	double t0 = sv_now();
	while (atomic_load(&h.inflight) > 0 && sv_now() - t0 < 30)
		usleep(10000);
	if (!dog_rc) {
		pthread_mutex_lock(&h.mu);
		h.dog_stop = 1;
		pthread_cond_signal(&h.wake);
		pthread_mutex_unlock(&h.mu);
		pthread_join(dog, NULL);
	}
	MHD_stop_daemon(d);
	if (ls != MHD_INVALID_SOCKET)
		close(ls);
	pthread_cond_destroy(&h.wake);
	pthread_mutex_destroy(&h.mu);
	unlink(serve_path);
	fathom_free(h.token);
	if (!o->quiet)
		fprintf(stderr, "fathom serve: stopped\n");
	return 0;
}
