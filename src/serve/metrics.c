/*
 * metrics.c — request counters, error counters and latency histograms per
 * endpoint (lock-free: relaxed atomics), and the Prometheus text format
 * with the index's own gauges read at scrape time.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/serve.h"

static const double bounds[] = { 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                 0.5, 1, 2.5, 5, 10 };
#define NB (sizeof bounds / sizeof bounds[0])

typedef struct ep_metrics {
	_Atomic uint64_t requests, errors_4xx, errors_5xx;
	_Atomic uint64_t bucket[NB + 1];   /* the last: +Inf */
	_Atomic uint64_t sum_us;
} ep_metrics;

static ep_metrics eps[SV_NEP];

void sv_metrics_record(int ep, int status, double seconds)
{
	if (ep < 0 || ep >= SV_NEP)
		ep = SV_EP_OTHER;
	ep_metrics *m = &eps[ep];
	atomic_fetch_add_explicit(&m->requests, 1, memory_order_relaxed);
	if (status >= 500)
		atomic_fetch_add_explicit(&m->errors_5xx, 1, memory_order_relaxed);
	else if (status >= 400)
		atomic_fetch_add_explicit(&m->errors_4xx, 1, memory_order_relaxed);
	size_t b = 0;
	while (b < NB && seconds > bounds[b])
		b++;
	atomic_fetch_add_explicit(&m->bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&m->sum_us, (uint64_t)(seconds * 1e6), memory_order_relaxed);
}

/* watch mode: from a change on disk to its commit */
static const double wbounds[] = { 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60 };
#define WNB (sizeof wbounds / sizeof wbounds[0])
static struct {
	_Atomic int on;
	_Atomic uint64_t folders, batches, failed, events, last_us, sum_us;
	_Atomic uint64_t bucket[WNB + 1];
} wm;

void sv_metrics_watch_folders(size_t n)
{
	atomic_store(&wm.folders, n);
	atomic_store(&wm.on, 1);
}

void sv_metrics_watch(double delay, size_t events, int ok)
{
	atomic_fetch_add_explicit(&wm.batches, 1, memory_order_relaxed);
	if (!ok)
		atomic_fetch_add_explicit(&wm.failed, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&wm.events, events, memory_order_relaxed);
	atomic_store(&wm.last_us, (uint64_t)(delay * 1e6));
	atomic_fetch_add_explicit(&wm.sum_us, (uint64_t)(delay * 1e6), memory_order_relaxed);
	size_t b = 0;
	while (b < WNB && delay > wbounds[b])
		b++;
	atomic_fetch_add_explicit(&wm.bucket[b], 1, memory_order_relaxed);
}

typedef struct out {
	char *p;
	size_t n, cap;
	int err;
} out;

static void put(out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(out *o, const char *fmt, ...)
{
	if (o->err)
		return;
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(o->p + o->n, o->cap - o->n, fmt, ap);
		va_end(ap);
		if (k < 0) {
			o->err = 1;
			return;
		}
		if ((size_t)k < o->cap - o->n) {
			o->n += (size_t)k;
			return;
		}
		size_t cap = o->cap * 2 + (size_t)k;
		char *np = fathom_realloc(o->p, cap);
		if (!np) {
			o->err = 1;
			return;
		}
		o->p = np;
		o->cap = cap;
	}
}

char *sv_metrics_text(sv_state *s, size_t *len)
{
	out o = { fathom_malloc(8192), 0, 8192, 0 };
	if (!o.p)
		return NULL;
	o.p[0] = '\0';
	put(&o, "# HELP fathom_requests_total Requests answered, by endpoint.\n"
	        "# TYPE fathom_requests_total counter\n");
	for (int e = 0; e < SV_NEP; e++)
		put(&o, "fathom_requests_total{endpoint=\"%s\"} %llu\n", sv_endpoint_name(e),
		    (unsigned long long)atomic_load(&eps[e].requests));
	put(&o, "# HELP fathom_errors_total Requests answered with an error status, by endpoint and class.\n"
	        "# TYPE fathom_errors_total counter\n");
	for (int e = 0; e < SV_NEP; e++) {
		put(&o, "fathom_errors_total{endpoint=\"%s\",class=\"4xx\"} %llu\n", sv_endpoint_name(e),
		    (unsigned long long)atomic_load(&eps[e].errors_4xx));
		put(&o, "fathom_errors_total{endpoint=\"%s\",class=\"5xx\"} %llu\n", sv_endpoint_name(e),
		    (unsigned long long)atomic_load(&eps[e].errors_5xx));
	}
	put(&o, "# HELP fathom_request_duration_seconds Time to answer a request, by endpoint.\n"
	        "# TYPE fathom_request_duration_seconds histogram\n");
	for (int e = 0; e < SV_NEP; e++) {
		uint64_t cum = 0;
		const char *name = sv_endpoint_name(e);
		for (size_t b = 0; b <= NB; b++) {
			cum += atomic_load(&eps[e].bucket[b]);
			if (b < NB)
				put(&o, "fathom_request_duration_seconds_bucket{endpoint=\"%s\",le=\"%g\"} %llu\n",
				    name, bounds[b], (unsigned long long)cum);
			else
				put(&o, "fathom_request_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} %llu\n",
				    name, (unsigned long long)cum);
		}
		put(&o, "fathom_request_duration_seconds_sum{endpoint=\"%s\"} %.6f\n", name,
		    (double)atomic_load(&eps[e].sum_us) / 1e6);
		put(&o, "fathom_request_duration_seconds_count{endpoint=\"%s\"} %llu\n", name,
		    (unsigned long long)cum);
	}
	fathom_index *ix = sv_reader_get(s);
	fathom_stats st = FATHOM_STATS_INIT;
	if (ix && fathom_stats_get(&st, ix) == 0) {
		put(&o, "# HELP fathom_documents Live documents in the index.\n# TYPE fathom_documents gauge\n"
		        "fathom_documents %llu\n", (unsigned long long)st.docs);
		put(&o, "# HELP fathom_chunks Live chunks in the index.\n# TYPE fathom_chunks gauge\n"
		        "fathom_chunks %llu\n", (unsigned long long)st.chunks);
		put(&o, "# HELP fathom_segments Segments in the index.\n# TYPE fathom_segments gauge\n"
		        "fathom_segments %u\n", st.segments);
		put(&o, "# HELP fathom_index_bytes Bytes of the index files.\n# TYPE fathom_index_bytes gauge\n"
		        "fathom_index_bytes %llu\n", (unsigned long long)st.bytes_total);
		put(&o, "# HELP fathom_generation The commit searches see.\n# TYPE fathom_generation gauge\n"
		        "fathom_generation %llu\n", (unsigned long long)st.generation);
	}
	sv_reader_put(s, ix);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	double up = sv_now() - sv_started(s);
	put(&o, "# HELP fathom_start_time_seconds When the daemon started (unix time).\n"
	        "# TYPE fathom_start_time_seconds gauge\nfathom_start_time_seconds %.3f\n",
	    (double)now.tv_sec + (double)now.tv_nsec * 1e-9 - up);
	put(&o, "# HELP fathom_uptime_seconds Seconds since the daemon started.\n"
	        "# TYPE fathom_uptime_seconds gauge\nfathom_uptime_seconds %.3f\n", up);
	put(&o, "# HELP fathom_last_commit_time_seconds The daemon's last commit (unix time; 0: none yet).\n"
	        "# TYPE fathom_last_commit_time_seconds gauge\nfathom_last_commit_time_seconds %.3f\n",
	    sv_last_commit(s));
	put(&o, "# HELP fathom_writable 1 when the daemon holds the writer lock.\n"
	        "# TYPE fathom_writable gauge\nfathom_writable %d\n", sv_writable(s));
	if (atomic_load(&wm.on)) {
		put(&o, "# HELP fathom_watch_folders Folders watched for changes (serve --watch).\n"
		        "# TYPE fathom_watch_folders gauge\nfathom_watch_folders %llu\n",
		    (unsigned long long)atomic_load(&wm.folders));
		put(&o, "# HELP fathom_watch_events_total File changes seen.\n"
		        "# TYPE fathom_watch_events_total counter\nfathom_watch_events_total %llu\n",
		    (unsigned long long)atomic_load(&wm.events));
		put(&o, "# HELP fathom_watch_batches_total Debounced batches re-indexed, and failed.\n"
		        "# TYPE fathom_watch_batches_total counter\n"
		        "fathom_watch_batches_total{result=\"ok\"} %llu\n"
		        "fathom_watch_batches_total{result=\"failed\"} %llu\n",
		    (unsigned long long)(atomic_load(&wm.batches) - atomic_load(&wm.failed)),
		    (unsigned long long)atomic_load(&wm.failed));
		put(&o, "# HELP fathom_watch_last_delay_seconds From the last batch's first change on "
		        "disk to its commit.\n# TYPE fathom_watch_last_delay_seconds gauge\n"
		        "fathom_watch_last_delay_seconds %.6f\n",
		    (double)atomic_load(&wm.last_us) / 1e6);
		put(&o, "# HELP fathom_watch_delay_seconds From a batch's first change on disk to its "
		        "commit.\n# TYPE fathom_watch_delay_seconds histogram\n");
		uint64_t cum = 0;
		for (size_t b = 0; b <= WNB; b++) {
			cum += atomic_load(&wm.bucket[b]);
			if (b < WNB)
				put(&o, "fathom_watch_delay_seconds_bucket{le=\"%g\"} %llu\n", wbounds[b],
				    (unsigned long long)cum);
			else
				put(&o, "fathom_watch_delay_seconds_bucket{le=\"+Inf\"} %llu\n",
				    (unsigned long long)cum);
		}
		put(&o, "fathom_watch_delay_seconds_sum %.6f\nfathom_watch_delay_seconds_count %llu\n",
		    (double)atomic_load(&wm.sum_us) / 1e6, (unsigned long long)cum);
	}
	if (o.err) {
		fathom_free(o.p);
		return NULL;
	}
	*len = o.n;
	return o.p;
}
