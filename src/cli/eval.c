/*
 * eval.c — fathom eval: BEIR-layout evaluation (corpus.jsonl, queries.jsonl,
 * qrels/TSV). Metrics as trec_eval computes them: nDCG@10 with linear
 * gains over the graded judgements, Recall@100, MRR@10.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

double cli_percentile(double *v, size_t n, double p);
void cli_write_run(FILE *f, const char *qid, const fathom_results *r, size_t k);

typedef struct judgement {
	char *qid, *docid;
	int rel;
} judgement;

typedef struct qrels {
	judgement *j;
	size_t n, cap;
} qrels;

static int load_qrels(qrels *q, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: %s: cannot open\n", cli_prog, path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		char *a = strtok(line, "\t \r\n"), *b = strtok(NULL, "\t \r\n"), *c = strtok(NULL, "\t \r\n");
		char *d = strtok(NULL, "\t \r\n");
		if (!a)
			continue;
		if (lineno == 1 && strcmp(a, "query-id") == 0)
			continue; /* the BEIR header */
		/* TREC qrels have four columns: qid 0 docid rel. */
		if (d) {
			b = c;
			c = d;
		}
		if (!b || !c) {
			fprintf(stderr, "%s: %s:%zu: expected query-id, corpus-id, score\n", cli_prog, path, lineno);
			free(line);
			fclose(f);
			return -1;
		}
		if (q->n == q->cap) {
			q->cap = q->cap ? q->cap * 2 : 1024;
			judgement *nj = realloc(q->j, q->cap * sizeof *nj);
			if (!nj)
				break;
			q->j = nj;
		}
		q->j[q->n].qid = strdup(a);
		q->j[q->n].docid = strdup(b);
		q->j[q->n].rel = atoi(c);
		q->n++;
	}
	free(line);
	fclose(f);
	return 0;
}

/* Query texts by id. */
static json_t *load_queries(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: %s: cannot open\n", cli_prog, path);
		return NULL;
	}
	json_t *map = json_object();
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) >= 0) {
		json_error_t je;
		json_t *o = json_loadb(line, (size_t)len, 0, &je);
		const char *id = json_string_value(json_object_get(o, "_id"));
		if (!id)
			id = json_string_value(json_object_get(o, "id"));
		json_t *text = json_object_get(o, "text");
		if (id && json_is_string(text))
			json_object_set(map, id, text);
		json_decref(o);
	}
	free(line);
	fclose(f);
	return map;
}

static int has_docs(const char *dir)
{
	struct stat st;
	char p[4096];
	snprintf(p, sizeof p, "%s/MANIFEST", dir);
	return stat(p, &st) == 0;
}

enum { OPT_CORPUS = 5000, OPT_QUERIES, OPT_QRELS, OPT_RUN, OPT_INDEX, OPT_CTARGET, OPT_STEM };

/* eval's own options; it takes search's ranking options too. */
const cli_opt cli_opts_eval[] = {
	{ "corpus", 0, required_argument, OPT_CORPUS, "FILE",
	  "the documents, BEIR corpus.jsonl (indexed unless --index has them)", NULL },
	{ "queries", 0, required_argument, OPT_QUERIES, "FILE", "BEIR queries.jsonl", NULL },
	{ "qrels", 0, required_argument, OPT_QRELS, "FILE", "BEIR relevance judgements (.tsv)",
	  NULL },
	{ "index", 0, required_argument, OPT_INDEX, "DIR",
	  "reuse this index if it holds documents, else build the\n"
	  "corpus into it (default: a temporary one, removed after)", NULL },
	{ NULL, 'k', required_argument, 0, "N", "results per query (default 100; 10 to 10000)",
	  NULL },
	{ "run", 0, required_argument, OPT_RUN, "FILE", "write a TREC run file", NULL },
	{ "chunk-target", 0, required_argument, OPT_CTARGET, "N",
	  "chunk documents (default: one chunk per document)", NULL },
	{ "stem", 0, required_argument, OPT_STEM, "LANG",
	  "stemming language of the index built (default english; none)", NULL },
	CLI_OPT_END,
};

int cmd_eval(int argc, char **argv)
{
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	const char *corpus = NULL, *queries = NULL, *qrels_path = NULL, *run = NULL, *index = NULL;
	const char *stem = NULL;
	uint64_t v, k = 100, ctarget = 0;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		int used = cli_search_opt(&so, c, optarg);
		if (used < 0)
			return 2;
		if (used)
			continue;
		switch (c) {
		case 'k':
			if (cli_parse_u64(optarg, 10, 10000, &v))
				return cli_usage_error("-k wants a number from 10 to 10000");
			k = v;
			break;
		case OPT_CORPUS: corpus = optarg; break;
		case OPT_QUERIES: queries = optarg; break;
		case OPT_QRELS: qrels_path = optarg; break;
		case OPT_RUN: run = optarg; break;
		case OPT_INDEX: index = optarg; break;
		case OPT_STEM: stem = optarg; break;
		case OPT_CTARGET:
			if (cli_parse_limit(optarg, FATHOM_LIMIT_CHUNK_TARGET, &ctarget)) {
				double cmin, cmax;
				cli_limit(FATHOM_LIMIT_CHUNK_TARGET, &cmin, &cmax);
				return cli_usage_error("--chunk-target wants a byte count from %g to %g", cmin,
				                       cmax);
			}
			break;
		default: return 2;
		}
	}
	if (!queries || !qrels_path)
		return cli_usage_error("eval needs --queries and --qrels (and --corpus or an --index)");
	char tmpdir[] = "/tmp/fathom-eval-XXXXXX";
	int own_index = 0;
	if (!index) {
		if (!mkdtemp(tmpdir)) {
			fprintf(stderr, "%s: cannot make a temporary folder\n", cli_prog);
			return 2;
		}
		index = tmpdir;
		own_index = 1;
	}
	int rc = 0;
	fathom_index *ix = NULL;
	if (!has_docs(index) || own_index) {
		if (!corpus) {
			rc = cli_usage_error("no index at %s: give --corpus to build one", index);
			goto out;
		}
		cli_ingest ci;
		cli_ingest_init(&ci);
		/* BEIR judges documents: by default each document is one chunk
		 * (as large a chunk as the library takes). */
		double cmin, cmax;
		cli_limit(FATHOM_LIMIT_CHUNK_TARGET, &cmin, &cmax);
		ci.io.chunk_target = ctarget ? (uint32_t)ctarget : (uint32_t)cmax;
		ci.io.chunk_max = ci.io.chunk_target;
		if (cli_open(&ix, index, FATHOM_OPEN_CREATE, stem)) {
			rc = 2;
			goto out;
		}
		fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
		int arc = fathom_add_jsonl(ix, corpus, &ci.io, &st);
		cli_ingest_report(&ci, &st, "indexed");
		if (!arc)
			arc = fathom_commit(ix);
		fathom_close(ix);
		ix = NULL;
		if (arc) {
			cli_die_api(arc, "indexing the corpus");
			rc = 2;
			goto out;
		}
	}
	if (cli_open(&ix, index, FATHOM_OPEN_READONLY, NULL)) {
		rc = 2;
		goto out;
	}
	qrels q = { 0 };
	json_t *qtext = load_queries(queries);
	if (!qtext || load_qrels(&q, qrels_path)) {
		rc = 2;
		goto out_q;
	}
	FILE *runf = run ? fopen(run, "w") : NULL;
	if (run && !runf) {
		fprintf(stderr, "%s: %s: cannot write\n", cli_prog, run);
		rc = 2;
		goto out_q;
	}
	so.k = (uint32_t)k;
	so.snippet_bytes = 0;
	double *lat = calloc(q.n + 1, sizeof *lat);
	double sum_ndcg = 0, sum_recall = 0, sum_mrr = 0;
	size_t nq = 0, answered = 0, missing = 0;
	for (size_t i = 0; i < q.n; i++) {
		/* One pass per query id: the qrels list each query's judgements together. */
		if (i > 0 && strcmp(q.j[i].qid, q.j[i - 1].qid) == 0)
			continue;
		size_t j0 = i, j1 = i;
		while (j1 < q.n && strcmp(q.j[j1].qid, q.j[i].qid) == 0)
			j1++;
		const char *text = json_string_value(json_object_get(qtext, q.j[i].qid));
		if (!text) {
			missing++;
			continue;
		}
		fathom_results *res = NULL;
		double ms;
		int qrc = cli_run_query(ix, text, &so, &res, &ms);
		if (qrc) {
			cli_die_api(qrc, text);
			continue;
		}
		lat[nq++] = ms;
		size_t n = fathom_results_count(res);
		answered += n > 0;
		if (runf)
			cli_write_run(runf, q.j[i].qid, res, k);
		/* Ranked distinct documents. */
		double dcg = 0, idcg = 0, rr = 0;
		size_t rank = 0, found = 0, relevant = 0;
		int gains[10] = { 0 };
		size_t ng = 0;
		for (size_t j = j0; j < j1; j++)
			if (q.j[j].rel > 0) {
				relevant++;
				/* Ideal ordering: the judged gains, largest first (insertion). */
				int g = q.j[j].rel;
				size_t p = ng < 10 ? ng++ : 10;
				while (p > 0 && gains[p - 1] < g) {
					if (p < 10)
						gains[p] = gains[p - 1];
					p--;
				}
				if (p < 10)
					gains[p] = g;
			}
		for (size_t r = 0; r < ng; r++)
			idcg += gains[r] / log2((double)r + 2);
		for (size_t h = 0; h < n && rank < k; h++) {
			const fathom_hit *hit = fathom_results_hit(res, h);
			int dup = 0;
			for (size_t p = 0; p < h && !dup; p++)
				dup = strcmp(fathom_results_hit(res, p)->doc_id, hit->doc_id) == 0;
			if (dup)
				continue;
			int rel = 0;
			for (size_t j = j0; j < j1; j++)
				if (strcmp(q.j[j].docid, hit->doc_id) == 0)
					rel = q.j[j].rel;
			if (rank < 10 && rel > 0) {
				dcg += rel / log2((double)rank + 2);
				if (rr == 0)
					rr = 1.0 / (double)(rank + 1);
			}
			if (rank < 100 && rel > 0)
				found++;
			rank++;
		}
		fathom_results_free(res);
		sum_ndcg += idcg > 0 ? dcg / idcg : 0;
		sum_recall += relevant ? (double)found / (double)relevant : 0;
		sum_mrr += rr;
	}
	if (runf)
		fclose(runf);
	if (nq == 0) {
		fprintf(stderr, "%s: no query of the qrels was found in %s\n", cli_prog, queries);
		rc = 2;
	} else {
		double p50 = cli_percentile(lat, nq, 0.5), p99 = cli_percentile(lat, nq, 0.99);
		printf("queries      %zu (answered %zu, no results %zu)\n", nq, answered, nq - answered);
		printf("nDCG@10      %.4f\n", sum_ndcg / (double)nq);
		printf("Recall@100   %.4f\n", sum_recall / (double)nq);
		printf("MRR@10       %.4f\n", sum_mrr / (double)nq);
		printf("latency      p50 %.3f ms, p99 %.3f ms\n", p50, p99);
		if (missing)
			printf("(%zu query ids of the qrels are not in %s)\n", missing, queries);
	}
	free(lat);
out_q:
	for (size_t i = 0; i < q.n; i++) {
		free(q.j[i].qid);
		free(q.j[i].docid);
	}
	free(q.j);
	json_decref(qtext);
out:
	if (ix)
		fathom_close(ix);
	if (own_index) {
		char cmd[256];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "%s: could not remove %s\n", cli_prog, tmpdir);
	}
	return rc;
}
