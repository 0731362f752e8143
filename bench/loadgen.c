/*
 * loadgen.c — an HTTP/1.1 load generator for fathom serve, closed or open
 * loop, on keep-alive connections (bench/serve_bench.sh drives it).
 *
 *   loadgen -u HOST:PORT -f BODIES [-p PATH] [-c CONNS] [-d SECONDS]
 *           [-w WARMUP_SECONDS] [-r RATE [-P]] [-H 'Name: value']
 *
 * BODIES holds one request body per line, sent as POST PATH (default
 * /search) in order, round and round.
 *
 * Closed loop (no -r): each of CONNS connections sends its next request
 * as soon as its previous answer arrived. The completions per second are
 * the server's saturated throughput when CONNS keeps it busy.
 *
 * Open loop (-r RATE): requests fall due at RATE per second, at fixed
 * intervals (or as Poisson arrivals with -P), whatever the answers do. A
 * due request goes out on an idle connection of the CONNS; when every one
 * is busy it waits in a queue. Its latency counts from the time it fell
 * due, not from the time it was sent, so a slow answer that delays later
 * sends is charged to them too (no "coordinated omission", as in wrk2). A
 * timerfd wakes the loop at each due time; the wake-up delay is counted
 * in the latency as well.
 *
 * Requests due (closed loop: answered) in the first WARMUP seconds are not
 * counted. One line of results goes to stdout:
 *   RESULT mode=open conns=C rate=R duration_s=D sent=N done=N errors=N
 *          unfinished=N qps=Q p50_ms=.. p90_ms=.. p99_ms=.. p999_ms=..
 *          max_ms=.. queued=N reconnects=N total=N
 * (sent: counted requests; queued: those that found every connection busy;
 * unfinished: not answered within 10 s of the end; total: every answer,
 * warm-up included). Exit status 0, or 2
 * on a usage or connection error.
 *
 * One thread and epoll: the generator takes little CPU next to the
 * server it measures, which matters on a machine with two CPUs.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024
#define GRACE_S 10.0                 /* after the run, how long answers are awaited */
#define MAX_RESPONSE ((size_t)64 << 20)

typedef struct req {
	char *data;   /* the whole HTTP request */
	size_t len;
} req;

typedef struct conn {
	int fd;           /* -1: closed, opened again when next needed */
	int busy;
	int out;          /* EPOLLOUT asked for */
	int retried;      /* the request in flight was sent again once */
	double due;       /* when the request in flight fell due */
	size_t req;       /* its index in reqs */
	size_t wpos;      /* bytes of it written */
	char *rbuf;
	size_t rlen, rcap;
} conn;

typedef struct lat_list {
	double *v;
	size_t n, cap;
} lat_list;

/* Due times waiting for a free connection (open loop), a growing ring. */
typedef struct due_queue {
	double *v;
	size_t head, n, cap;
} due_queue;

static struct addrinfo *addr;
static req *reqs;
static size_t nreqs, next_req;
static int epfd;
static int open_loop;
static double t_measure, t_end;
static conn **idle;       /* the connections with nothing in flight */
static size_t nidle;
static lat_list lat;
static unsigned long long n_sent, n_done, n_errors, n_reconnects, n_queued, in_flight, n_total;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	fputs("loadgen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		die("out of memory");
	return p;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void lat_add(double ms)
{
	if (lat.n == lat.cap) {
		lat.cap = lat.cap ? lat.cap * 2 : 65536;
		lat.v = xrealloc(lat.v, lat.cap * sizeof *lat.v);
	}
	lat.v[lat.n++] = ms;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of the sorted latencies. */
static double pct(double p)
{
	if (!lat.n)
		return 0;
	size_t i = (size_t)(p * (double)(lat.n - 1) + 0.5);
	return lat.v[i < lat.n ? i : lat.n - 1];
}

static void queue_push(due_queue *q, double due)
{
	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 4096;
		double *v = xrealloc(NULL, cap * sizeof *v);
		for (size_t i = 0; i < q->n; i++)
			v[i] = q->v[(q->head + i) % q->cap];
		free(q->v);
		q->v = v;
		q->cap = cap;
		q->head = 0;
	}
	q->v[(q->head + q->n++) % q->cap] = due;
}

static double queue_pop(due_queue *q)
{
	double d = q->v[q->head];
	q->head = (q->head + 1) % q->cap;
	q->n--;
	return d;
}

/* ---- requests ---------------------------------------------------------------- */

static void load_requests(const char *file, const char *path, const char *host,
                          const char *header)
{
	FILE *f = fopen(file, "r");
	if (!f)
		die("%s: %s", file, strerror(errno));
	char *line = NULL;
	size_t cap = 0, rcap = 0;
	ssize_t n;
	while ((n = getline(&line, &cap, f)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n == 0)
			continue;
		if (nreqs == rcap) {
			rcap = rcap ? rcap * 2 : 1024;
			reqs = xrealloc(reqs, rcap * sizeof *reqs);
		}
		req *r = &reqs[nreqs++];
		int len = asprintf(&r->data,
		                   "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
		                   "%s%sContent-Length: %zd\r\n\r\n%s",
		                   path, host, header ? header : "", header ? "\r\n" : "", n, line);
		if (len < 0)
			die("out of memory");
		r->len = (size_t)len;
	}
	free(line);
	fclose(f);
	if (!nreqs)
		die("%s: no request bodies", file);
}

/* ---- connections ------------------------------------------------------------- */

static void conn_events(conn *c, int out)
{
	struct epoll_event ev = { .events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = c };
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) != 0)
		die("epoll_ctl: %s", strerror(errno));
	c->out = out;
}

static void conn_open(conn *c)
{
	c->fd = socket(addr->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		die("socket: %s", strerror(errno));
	/* a blocking connect (on loopback it is at once), then non-blocking I/O */
	if (connect(c->fd, addr->ai_addr, addr->ai_addrlen) != 0)
		die("connect: %s", strerror(errno));
	int one = 1;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) != 0)
		die("fcntl: %s", strerror(errno));
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = c };
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, c->fd, &ev) != 0)
		die("epoll_ctl: %s", strerror(errno));
	c->out = 0;
	c->rlen = 0;
}

static void conn_close(conn *c)
{
	if (c->fd >= 0) {
		epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
	}
	c->fd = -1;
}

/* Write what is left of the request in flight: 0, or -1 when the
 * connection is broken. */
static int conn_write(conn *c)
{
	const req *r = &reqs[c->req];
	while (c->wpos < r->len) {
		ssize_t n = send(c->fd, r->data + c->wpos, r->len - c->wpos, MSG_NOSIGNAL);
		if (n > 0) {
			c->wpos += (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!c->out)
				conn_events(c, 1);
			return 0;
		} else {
			return -1;
		}
	}
	if (c->out)
		conn_events(c, 0);
	return 0;
}

/* Send the request in flight on c (from its start), on a fresh
 * connection when c's is closed or turns out broken. */
static void conn_start(conn *c)
{
	c->wpos = 0;
	c->rlen = 0;
	if (c->fd < 0)
		conn_open(c);
	if (conn_write(c) != 0) {
		conn_close(c);
		n_reconnects++;
		conn_open(c);
		if (conn_write(c) != 0)
			die("send: %s", strerror(errno));
	}
}

static void send_next(conn *c, double due)
{
	c->busy = 1;
	c->retried = 0;
	c->due = due;
	c->req = next_req;
	next_req = (next_req + 1) % nreqs;
	in_flight++;
	conn_start(c);
}

/* The response in buf: 0 incomplete, 1 complete (*status, *keep set),
 * -1 malformed or not supported (no Content-Length). */
static int parse_response(const char *b, size_t n, int *status, int *keep)
{
	const char *end = memmem(b, n, "\r\n\r\n", 4);
	if (!end)
		return n > 65536 ? -1 : 0;
	if (n < 12 || memcmp(b, "HTTP/1.", 7) != 0)
		return -1;
	*status = atoi(b + 9);
	*keep = 1;
	long long clen = -1;
	for (const char *p = memchr(b, '\n', (size_t)(end - b)); p && p < end;
	     p = memchr(p + 1, '\n', (size_t)(end - p - 1))) {
		const char *h = p + 1;
		if (strncasecmp(h, "content-length:", 15) == 0) {
			clen = strtoll(h + 15, NULL, 10);
		} else if (strncasecmp(h, "connection:", 11) == 0) {
			h += 11;
			while (*h == ' ')
				h++;
			if (strncasecmp(h, "close", 5) == 0)
				*keep = 0;
		}
	}
	size_t hlen = (size_t)(end - b) + 4;
	if (clen < 0 || (size_t)clen > MAX_RESPONSE)
		return -1;
	return n >= hlen + (size_t)clen;
}

static void finish(conn *c, int ok, double now)
{
	c->busy = 0;
	in_flight--;
	n_total++;
	/* open loop: a request counts when it fell due in the window;
	 * closed loop: when it was answered in it */
	double t = open_loop ? c->due : now;
	if (t >= t_measure && t < t_end) {
		n_done++;
		if (ok)
			lat_add((now - c->due) * 1e3);
		else
			n_errors++;
	}
	idle[nidle++] = c;
}

static void on_readable(conn *c, double now)
{
	int closed = 0;
	for (;;) {
		if (c->rlen == c->rcap) {
			if (c->rcap >= MAX_RESPONSE) {
				closed = 1;
				break;
			}
			c->rcap = c->rcap ? c->rcap * 2 : 65536;
			c->rbuf = xrealloc(c->rbuf, c->rcap);
		}
		ssize_t n = recv(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen, 0);
		if (n > 0) {
			c->rlen += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		closed = 1;
		break;
	}
	if (!c->busy) {
		/* an idle connection closed by the server (its idle timeout) */
		if (closed || c->rlen)
			conn_close(c);
		return;
	}
	int status = 0, keep = 1, pr = parse_response(c->rbuf, c->rlen, &status, &keep);
	if (pr == 1) {
		if (!keep)
			conn_close(c);
		c->rlen = 0;
		finish(c, status == 200, now);
		return;
	}
	if (pr == 0 && !closed)
		return;
	conn_close(c);
	if (pr == 0 && c->rlen == 0 && !c->retried) {
		/* closed before any answer (a keep-alive connection the server
		 * was closing as the request went out): send it once more */
		c->retried = 1;
		n_reconnects++;
		conn_start(c);
		return;
	}
	finish(c, 0, now);
}

static void arm_timer(int tfd, double at)
{
	struct itimerspec its;
	memset(&its, 0, sizeof its);
	its.it_value.tv_sec = (time_t)at;
	its.it_value.tv_nsec = (long)((at - (double)(time_t)at) * 1e9);
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		its.it_value.tv_nsec = 1;
	if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
		die("timerfd_settime: %s", strerror(errno));
}

/* xorshift64*, for Poisson arrivals: reproducible, no libc state */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform01(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0;
}

static void usage(void)
{
	die("usage: loadgen -u HOST:PORT -f BODIES [-p PATH] [-c CONNS] [-d SECONDS] "
	    "[-w WARMUP] [-r RATE [-P]] [-H 'Name: value']");
}

int main(int argc, char **argv)
{
	const char *url = NULL, *file = NULL, *path = "/search", *header = NULL;
	double dur = 10, warm = 0, rate = 0;
	int nconn = 8, poisson = 0, c;
	while ((c = getopt(argc, argv, "u:f:p:c:d:w:r:PH:")) != -1) {
		switch (c) {
		case 'u': url = optarg; break;
		case 'f': file = optarg; break;
		case 'p': path = optarg; break;
		case 'c': nconn = atoi(optarg); break;
		case 'd': dur = atof(optarg); break;
		case 'w': warm = atof(optarg); break;
		case 'r': rate = atof(optarg); break;
		case 'P': poisson = 1; break;
		case 'H': header = optarg; break;
		default: usage();
		}
	}
	if (!url || !file || nconn < 1 || nconn > MAX_CONNS || !(dur > 0) || warm < 0 || rate < 0)
		usage();
	if (strncmp(url, "http://", 7) == 0)
		url += 7;
	char host[256];
	snprintf(host, sizeof host, "%s", url);
	host[strcspn(host, "/")] = '\0';
	char *colon = strrchr(host, ':');
	if (!colon)
		usage();
	*colon = '\0';
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	int gai = getaddrinfo(host, colon + 1, &hints, &addr);
	if (gai)
		die("%s: %s", url, gai_strerror(gai));
	*colon = ':';
	load_requests(file, path, host, header);
	open_loop = rate > 0;

	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) < 0)
		die("epoll_create1: %s", strerror(errno));
	conn *conns = calloc((size_t)nconn, sizeof *conns);
	idle = calloc((size_t)nconn, sizeof *idle);
	if (!conns || !idle)
		die("out of memory");
	/* every connection is made before the clock starts */
	for (int i = 0; i < nconn; i++) {
		conn_open(&conns[i]);
		idle[nidle++] = &conns[i];
	}
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (tfd < 0)
		die("timerfd_create: %s", strerror(errno));
	struct epoll_event tev = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, tfd, &tev) != 0)
		die("epoll_ctl: %s", strerror(errno));

	double t_start = now_s() + 0.01, next_due = t_start;
	t_measure = t_start + warm;
	t_end = t_measure + dur;
	due_queue q = { NULL, 0, 0, 0 };
	if (open_loop)
		arm_timer(tfd, next_due);
	struct epoll_event evs[64];
	for (;;) {
		double now = now_s();
		if (open_loop) {
			while (next_due <= now && next_due < t_end) {
				if (next_due >= t_measure)
					n_sent++;
				if (nidle == 0)
					n_queued += next_due >= t_measure;
				queue_push(&q, next_due);
				next_due += poisson ? -log(1.0 - uniform01()) / rate : 1.0 / rate;
			}
			while (q.n && nidle)
				send_next(idle[--nidle], queue_pop(&q));
			if (next_due < t_end)
				arm_timer(tfd, next_due);
			if (now >= t_end && !q.n && !in_flight)
				break;
		} else {
			while (nidle && now >= t_start && now < t_end) {
				if (now >= t_measure)
					n_sent++;
				send_next(idle[--nidle], now);
			}
			if (now >= t_end && !in_flight)
				break;
		}
		if (now >= t_end + GRACE_S)
			break;
		double wait = open_loop ? 0.1 : (now < t_start ? t_start - now : t_end - now);
		int ms = wait > 0.1 ? 100 : wait > 0 ? (int)(wait * 1e3) + 1 : 100;
		int n = epoll_wait(epfd, evs, 64, ms);
		if (n < 0 && errno != EINTR)
			die("epoll_wait: %s", strerror(errno));
		now = now_s();
		for (int i = 0; i < n; i++) {
			conn *cn = evs[i].data.ptr;
			if (!cn) {
				uint64_t ticks;
				if (read(tfd, &ticks, sizeof ticks) < 0 && errno != EAGAIN)
					die("timerfd read: %s", strerror(errno));
				continue;
			}
			if (cn->fd < 0)
				continue;
			if ((evs[i].events & EPOLLOUT) && cn->busy && conn_write(cn) != 0) {
				conn_close(cn);
				finish(cn, 0, now);
				continue;
			}
			if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
				on_readable(cn, now);
		}
	}
	unsigned long long unfinished = in_flight + q.n;
	qsort(lat.v, lat.n, sizeof *lat.v, cmp_double);
	printf("RESULT mode=%s conns=%d rate=%.1f duration_s=%.1f sent=%llu done=%llu errors=%llu "
	       "unfinished=%llu qps=%.1f p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f p999_ms=%.3f "
	       "max_ms=%.3f queued=%llu reconnects=%llu total=%llu\n",
	       open_loop ? "open" : "closed", nconn, rate, dur, n_sent, n_done, n_errors, unfinished,
	       (double)n_done / dur, pct(0.50), pct(0.90), pct(0.99), pct(0.999),
	       lat.n ? lat.v[lat.n - 1] : 0.0, n_queued, n_reconnects, n_total);
	freeaddrinfo(addr);
	return 0;
}
