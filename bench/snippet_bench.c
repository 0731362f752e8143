/*
 * snippet_bench.c — what snippets cost a search. Every query of a queries
 * file (JSON lines with a "text" field, as BEIR's) runs against one index
 * with snippets (the default 240 bytes, which reads each hit's chunk text
 * from the document store) and without (snippet_bytes 0, as `fathom search
 * --batch` does), the two interleaved query by query over several rounds so
 * that drift hits both alike. It prints the mean time per query of each and
 * their difference: the snippets' cost. A client of the public API only.
 *
 *   cc -O2 -Iinclude -o build/snippet_bench bench/snippet_bench.c build/libfathom.a \
 *      -lutf8proc -lstemmer -lzstd -ljansson -lpcre2-8 -lpthread -lm
 *   build/snippet_bench INDEX QUERIES.jsonl [ROUNDS] [K]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fathom.h"

#define MAX_QUERIES 100000

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One search; its time in seconds, or a negative value on an error. */
static double timed_search(fathom_index *ix, const char *q, const fathom_search_opts *so,
                           size_t *hits)
{
	fathom_results *r = NULL;
	double t0 = now_s();
	int rc = fathom_search(&r, ix, q, so);
	double t = now_s() - t0;
	if (rc && rc != FATHOM_ENOTFOUND) {
		fprintf(stderr, "%s: %s\n", q, fathom_errmsg());
		return -1;
	}
	*hits += r ? fathom_results_count(r) : 0;
	fathom_results_free(r);
	return t;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: snippet_bench INDEX QUERIES.jsonl [ROUNDS] [K]\n");
		return 2;
	}
	int rounds = argc > 3 ? atoi(argv[3]) : 3;
	int k = argc > 4 ? atoi(argv[4]) : 10;
	if (rounds < 1 || rounds > 1000 || k < 1 || k > 1000) {
		fprintf(stderr, "ROUNDS 1..1000, K 1..1000\n");
		return 2;
	}
	FILE *f = fopen(argv[2], "r");
	if (!f) {
		perror(argv[2]);
		return 2;
	}
	char **qs = calloc(MAX_QUERIES, sizeof *qs);
	size_t nq = 0;
	char line[65536];
	while (qs && nq < MAX_QUERIES && fgets(line, sizeof line, f)) {
		json_t *j = json_loads(line, 0, NULL);
		const char *t = j ? json_string_value(json_object_get(j, "text")) : NULL;
		if (t && *t && (qs[nq] = strdup(t)) != NULL)
			nq++;
		json_decref(j);
	}
	fclose(f);
	fathom_index *ix;
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	if (!qs || nq == 0 || fathom_open(&ix, argv[1], &oo)) {
		fprintf(stderr, "%s\n", nq ? fathom_errmsg() : "no queries");
		return 2;
	}
	fathom_search_opts with = FATHOM_SEARCH_OPTS_INIT, without = FATHOM_SEARCH_OPTS_INIT;
	with.k = without.k = (uint32_t)k;
	with.match = without.match = FATHOM_MATCH_ANY;
	without.snippet_bytes = 0;
	double t_with = 0, t_without = 0;
	size_t hits = 0, h = 0;
	/* One untimed round warms the page cache and the segments' checks. */
	for (size_t i = 0; i < nq; i++)
		if (timed_search(ix, qs[i], &with, &h) < 0)
			return 1;
	for (int r = 0; r < rounds; r++)
		for (size_t i = 0; i < nq; i++) {
			double a = timed_search(ix, qs[i], &with, &hits);
			double b = timed_search(ix, qs[i], &without, &h);
			if (a < 0 || b < 0)
				return 1;
			t_with += a;
			t_without += b;
		}
	double n = (double)nq * rounds;
	printf("%zu queries x %d rounds, top-%d, %.1f hits per query\n", nq, rounds, k,
	       (double)hits / n);
	printf("with snippets     %8.1f us per query\n", t_with / n * 1e6);
	printf("without snippets  %8.1f us per query\n", t_without / n * 1e6);
	printf("snippets          %8.1f us per query, %.2f us per hit\n",
	       (t_with - t_without) / n * 1e6, hits ? (t_with - t_without) / (double)hits * 1e6 : 0.0);
	fathom_close(ix);
	for (size_t i = 0; i < nq; i++)
		free(qs[i]);
	free(qs);
	return 0;
}
