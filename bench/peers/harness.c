/*
 * harness.c — the shared driver of the peer benchmarks (see harness.h).
 *
 *   <engine>_bench --index WHERE [--chunks FILE] [--queries FILE]
 *                  [--match any|all] [-k N] [--warmup N]
 *                  [--run FILE] [--run-k N] [--tag NAME]
 *
 * --chunks builds a fresh index at WHERE from a JSONL file of chunks
 * ({"id" or "_id", "title", "text"}, one per line; other members ignored).
 * The build is timed from the first byte read to the index being durable,
 * so JSON parsing is inside the figure, as it is for `fathom add --jsonl`.
 *
 * --queries is one query per line (qid = line number, blank lines skipped)
 * or, for a name ending in .jsonl, BEIR queries ({"_id", "text"}). Every
 * query runs --warmup times untimed (default 1, to load the caches), then
 * once timed for top-k; the latency is the wall time of the engine's whole
 * search call, hits read back included. --run writes a TREC run file from
 * one more untimed pass at --run-k (default 100).
 *
 * The figures go to stdout as one JSON line; progress goes to stderr.
 */
#include "harness.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

struct bench_hits {
	char **ids;
	double *scores;
	size_t n, cap;
};

typedef struct query {
	char *qid;
	char *text;
} query;

void bench_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		bench_die("out of memory (%zu bytes)", n);
	return p;
}

static char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int64_t bench_path_bytes(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode))
		return (int64_t)st.st_size;
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int64_t sum = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		size_t len = strlen(path) + strlen(e->d_name) + 2;
		char *sub = xmalloc(len);
		snprintf(sub, len, "%s/%s", path, e->d_name);
		int64_t b = bench_path_bytes(sub);
		free(sub);
		if (b > 0)
			sum += b;
	}
	closedir(d);
	return sum;
}

void bench_hits_add(bench_hits *h, const char *id, size_t id_len, double score)
{
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 128;
		h->ids = realloc(h->ids, cap * sizeof *h->ids);
		h->scores = realloc(h->scores, cap * sizeof *h->scores);
		if (!h->ids || !h->scores)
			bench_die("out of memory");
		h->cap = cap;
	}
	h->ids[h->n] = xstrndup(id, id_len);
	h->scores[h->n] = score;
	h->n++;
}

static void hits_clear(bench_hits *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->ids[i]);
	h->n = 0;
}

/* A JSON string member as a NUL-free C string (NULs become spaces: SQL
 * text columns refuse them), or NULL when absent or not a string. */
static char *member_string(json_t *obj, const char *key, size_t *len)
{
	json_t *v = json_object_get(obj, key);
	if (!json_is_string(v))
		return NULL;
	size_t n = json_string_length(v);
	char *s = xstrndup(json_string_value(v), n);
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	*len = n;
	return s;
}

static char *member_any(json_t *obj, const char *a, const char *b, size_t *len)
{
	char *s = member_string(obj, a, len);
	return s ? s : member_string(obj, b, len);
}

typedef struct build_figures {
	uint64_t chunks, text_bytes;
	double seconds;
} build_figures;

static void build_index(const bench_engine *e, void *ctx, const char *where,
                        const char *chunks_path, build_figures *fig)
{
	FILE *f = fopen(chunks_path, "r");
	if (!f)
		bench_die("%s: %s", chunks_path, strerror(errno));
	double t0 = bench_now();
	if (e->build_begin(ctx, where) != 0)
		bench_die("%s: could not create the index at %s", e->name, where);
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	uint64_t lineno = 0, bad = 0;
	while ((got = getline(&line, &cap, f)) > 0) {
		lineno++;
		json_error_t jerr;
		json_t *obj = json_loadb(line, (size_t)got, JSON_ALLOW_NUL, &jerr);
		if (!json_is_object(obj)) {
			json_decref(obj);
			bad++;
			continue;
		}
		size_t id_len = 0, title_len = 0, text_len = 0;
		char *id = member_any(obj, "id", "_id", &id_len);
		char *title = member_string(obj, "title", &title_len);
		char *text = member_any(obj, "text", "body", &text_len);
		json_decref(obj);
		if (!id) {
			bad++;
		} else {
			if (e->build_add(ctx, id, title ? title : "", title_len,
			                 text ? text : "", text_len) != 0)
				bench_die("%s: adding chunk on line %llu failed", e->name,
				          (unsigned long long)lineno);
			fig->chunks++;
			fig->text_bytes += title_len + text_len;
			if (fig->chunks % 100000 == 0)
				fprintf(stderr, "%s: %llu chunks, %.0f s\n", e->name,
				        (unsigned long long)fig->chunks, bench_now() - t0);
		}
		free(id);
		free(title);
		free(text);
	}
	free(line);
	fclose(f);
	if (e->build_end(ctx) != 0)
		bench_die("%s: finishing the index failed", e->name);
	fig->seconds = bench_now() - t0;
	if (bad)
		fprintf(stderr, "%s: %llu lines skipped (not a JSON object with an id)\n", e->name,
		        (unsigned long long)bad);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static query *read_queries(const char *path, size_t *nq)
{
	FILE *f = fopen(path, "r");
	if (!f)
		bench_die("%s: %s", path, strerror(errno));
	int beir = ends_with(path, ".jsonl");
	query *qs = NULL;
	size_t n = 0, cap = 0, lineno = 0;
	char *line = NULL;
	size_t lcap = 0;
	ssize_t got;
	while ((got = getline(&line, &lcap, f)) > 0) {
		lineno++;
		while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
			line[--got] = '\0';
		if (got == 0)
			continue;
		query q;
		if (beir) {
			json_error_t jerr;
			json_t *obj = json_loadb(line, (size_t)got, JSON_ALLOW_NUL, &jerr);
			size_t l1 = 0, l2 = 0;
			q.qid = json_is_object(obj) ? member_any(obj, "_id", "id", &l1) : NULL;
			q.text = json_is_object(obj) ? member_any(obj, "text", "query", &l2) : NULL;
			json_decref(obj);
			if (!q.qid || !q.text) {
				free(q.qid);
				free(q.text);
				fprintf(stderr, "%s:%zu: not a BEIR query, skipped\n", path, lineno);
				continue;
			}
		} else {
			char num[32];
			snprintf(num, sizeof num, "%zu", lineno);
			q.qid = xstrndup(num, strlen(num));
			q.text = xstrndup(line, (size_t)got);
		}
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			qs = realloc(qs, cap * sizeof *qs);
			if (!qs)
				bench_die("out of memory");
		}
		qs[n++] = q;
	}
	free(line);
	fclose(f);
	*nq = n;
	return qs;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The value at index round(p * (n - 1)) of sorted values: the same rule
 * as `fathom search --timing-json`, so the two sides' figures compare. */
static double percentile(const double *sorted, size_t n, double p)
{
	if (n == 0)
		return 0.0;
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return sorted[i < n ? i : n - 1];
}

/* TREC ids may not hold blanks; chunk ids are paths and could. */
static void print_trec_id(FILE *out, const char *id)
{
	for (const char *p = id; *p; p++)
		fputc(*p == ' ' || *p == '\t' || *p == '\n' ? '_' : *p, out);
}

static void usage(const char *prog)
{
	fprintf(stderr,
	        "usage: %s --index WHERE [--chunks FILE] [--queries FILE] [--match any|all]\n"
	        "          [-k N] [--warmup N] [--run FILE] [--run-k N] [--tag NAME]\n",
	        prog);
	exit(2);
}

static unsigned parse_count(const char *s, const char *prog)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v > 100000)
		usage(prog);
	return (unsigned)v;
}

int harness_main(int argc, char **argv, const bench_engine *e, void *ctx)
{
	const char *where = NULL, *chunks = NULL, *queries = NULL, *run = NULL;
	const char *tag = e->name;
	int match_all = 0;
	unsigned k = 10, run_k = 100, warmup = 1;
	for (int i = 1; i < argc; i += 2) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			usage(argv[0]);
		if (strcmp(a, "--index") == 0)
			where = v;
		else if (strcmp(a, "--chunks") == 0)
			chunks = v;
		else if (strcmp(a, "--queries") == 0)
			queries = v;
		else if (strcmp(a, "--run") == 0)
			run = v;
		else if (strcmp(a, "--tag") == 0)
			tag = v;
		else if (strcmp(a, "--match") == 0) {
			if (strcmp(v, "all") == 0)
				match_all = 1;
			else if (strcmp(v, "any") == 0)
				match_all = 0;
			else
				usage(argv[0]);
		} else if (strcmp(a, "-k") == 0)
			k = parse_count(v, argv[0]);
		else if (strcmp(a, "--run-k") == 0)
			run_k = parse_count(v, argv[0]);
		else if (strcmp(a, "--warmup") == 0)
			warmup = parse_count(v, argv[0]);
		else
			usage(argv[0]);
	}
	if (!where || k == 0 || run_k == 0)
		usage(argv[0]);

	build_figures fig = { 0, 0, 0.0 };
	if (chunks) {
		build_index(e, ctx, where, chunks, &fig);
		fprintf(stderr, "%s: built %llu chunks, %.1f MB of text in %.2f s\n", e->name,
		        (unsigned long long)fig.chunks, (double)fig.text_bytes / 1e6, fig.seconds);
	}
	int64_t ix_bytes = e->index_bytes(ctx, where);

	size_t nq = 0, answered = 0;
	double *lat = NULL, total = 0.0;
	if (queries) {
		query *qs = read_queries(queries, &nq);
		if (e->search_open(ctx, where) != 0)
			bench_die("%s: could not open the index at %s", e->name, where);
		bench_hits hits = { NULL, NULL, 0, 0 };
		lat = xmalloc(nq * sizeof *lat);
		for (unsigned w = 0; w < warmup; w++)
			for (size_t i = 0; i < nq; i++) {
				e->search(ctx, qs[i].text, match_all, k, &hits);
				hits_clear(&hits);
			}
		for (size_t i = 0; i < nq; i++) {
			double t0 = bench_now();
			int rc = e->search(ctx, qs[i].text, match_all, k, &hits);
			lat[i] = (bench_now() - t0) * 1e3;
			total += lat[i];
			if (rc == 0 && hits.n > 0)
				answered++;
			hits_clear(&hits);
		}
		if (run) {
			FILE *out = fopen(run, "w");
			if (!out)
				bench_die("%s: %s", run, strerror(errno));
			for (size_t i = 0; i < nq; i++) {
				e->search(ctx, qs[i].text, match_all, run_k, &hits);
				for (size_t j = 0; j < hits.n; j++) {
					print_trec_id(out, qs[i].qid);
					fputs(" Q0 ", out);
					print_trec_id(out, hits.ids[j]);
					fprintf(out, " %zu %.6f %s\n", j + 1, hits.scores[j], tag);
				}
				hits_clear(&hits);
			}
			if (fclose(out) != 0)
				bench_die("%s: write failed", run);
		}
		free(hits.ids);
		free(hits.scores);
		for (size_t i = 0; i < nq; i++) {
			free(qs[i].qid);
			free(qs[i].text);
		}
		free(qs);
		qsort(lat, nq, sizeof *lat, cmp_double);
	}
	e->close(ctx);

	printf("{\"engine\":\"%s\",\"chunks\":%llu,\"text_bytes\":%llu,\"build_s\":%.3f,"
	       "\"mb_per_s\":%.3f,\"index_bytes\":%lld,\"queries\":%zu,\"answered\":%zu,"
	       "\"k\":%u,\"match\":\"%s\",\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"mean_ms\":%.4f}\n",
	       e->name, (unsigned long long)fig.chunks, (unsigned long long)fig.text_bytes,
	       fig.seconds, fig.seconds > 0 ? (double)fig.text_bytes / 1e6 / fig.seconds : 0.0,
	       (long long)ix_bytes, nq, answered, k, match_all ? "all" : "any",
	       percentile(lat, nq, 0.50), percentile(lat, nq, 0.99), nq ? total / (double)nq : 0.0);
	free(lat);
	return 0;
}
