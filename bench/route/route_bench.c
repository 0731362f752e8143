/*
 * route_bench.c — the router's cost: parse + route (shape, mode mix,
 * over-fetch) of every query of the given BEIR queries.jsonl files,
 * repeated, timed with CLOCK_MONOTONIC; and how many queries took each
 * shape. The router must stay far under 0.1 ms a query (issue 15).
 *
 *   build/bench/route_bench ../shared/data/scifact/queries.jsonl ...
 */
#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "query/query_int.h"

#define MAX_Q 20000

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	text_analyzer *an = NULL;
	if (argc < 2 || text_analyzer_new(&an, "english") != 0) {
		fprintf(stderr, "usage: route_bench queries.jsonl ...\n");
		return 2;
	}
	for (int f = 1; f < argc; f++) {
		static char *q[MAX_Q];
		size_t n = 0;
		FILE *fp = fopen(argv[f], "r");
		if (!fp) {
			perror(argv[f]);
			return 2;
		}
		char line[65536];
		while (n < MAX_Q && fgets(line, sizeof line, fp)) {
			json_t *o = json_loads(line, 0, NULL);
			const char *t = o ? json_string_value(json_object_get(o, "text")) : NULL;
			if (t)
				q[n++] = strdup(t);
			json_decref(o);
		}
		fclose(fp);
		unsigned shapes[4] = { 0, 0, 0, 0 };
		fa_arena a;
		fa_arena_init(&a, 64 * 1024, 0);
		int reps = 20;
		static double took[MAX_Q * 20];
		size_t nt = 0;
		double t0 = now();
		for (int r = 0; r < reps; r++)
			for (size_t i = 0; i < n; i++) {
				double s = now();
				fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
				o.k = 10;
				o.match = FATHOM_MATCH_AUTO;
				q_ast t;
				q_route rt;
				if (q_parse(&t, &a, q[i], strlen(q[i]), 0) == 0 &&
				    q_route_query(&rt, &a, &t, an, q[i], &o, 0, FATHOM_MODE_HYBRID, 3) == 0 &&
				    r == 0 && rt.shape >= 0 && rt.shape < 4)
					shapes[rt.shape]++;
				fa_arena_reset(&a);
				took[nt++] = now() - s;
			}
		double per = (now() - t0) / ((double)reps * (n ? n : 1));
		qsort(took, nt, sizeof *took, cmp_d);
		double p99 = nt ? took[nt * 99 / 100] : 0;
		printf("%s: %zu queries x %d, parse+route %.2f us mean, %.2f us p99; shapes: "
		       "keywords %u, question %u, identifier %u, comparison %u\n",
		       argv[f], n, reps, per * 1e6, p99 * 1e6, shapes[0], shapes[1], shapes[2], shapes[3]);
		fa_arena_free(&a);
		for (size_t i = 0; i < n; i++)
			free(q[i]);
	}
	text_analyzer_free(an);
	return 0;
}
