/* search_cmd.c — fathom search: one query, or a batch with timings. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char *filters_store[CLI_MAX_FILTERS];
static float weights_store[FATHOM_NFIELDS];

/* The ranking options, which eval takes too. */
const cli_opt cli_opts_search_ranking[] = {
	{ "match", 0, required_argument, OPT_MATCH, "MODE",
	  "auto (default): ranked, any word may match, a short\n"
	  "keyword query's chunks holding more words first; all:\n"
	  "every word required; any: plain ranked disjunction", "auto all any" },
	{ "filter", 0, required_argument, OPT_FILTER, "KEY=VALUE",
	  "metadata filter, applied before ranking (repeatable)", NULL },
	{ "path", 0, required_argument, OPT_PATH, "GLOB", "only documents whose path matches GLOB",
	  NULL },
	{ "lang", 0, required_argument, OPT_LANG, "LANG",
	  "only source files of this language (c, python, markdown...)", NULL },
	{ "weight", 0, required_argument, OPT_WEIGHT, "FIELD=W",
	  "BM25F field weight (path, title, headings, tags, body)", NULL },
	{ "k1", 0, required_argument, OPT_K1, "X", "BM25 parameter k1 (default 1.5)", NULL },
	{ "b", 0, required_argument, OPT_B, "X", "BM25 parameter b (default 0.9)", NULL },
	{ "phrase-bonus", 0, required_argument, OPT_PHRASE, "X",
	  "multiplier when the query terms are adjacent (default 1.25)", NULL },
	{ "prefix-bonus", 0, required_argument, OPT_PREFIX, "X",
	  "multiplier when a title/heading starts with the query (1.15)", NULL },
	{ "exhaustive", 0, no_argument, OPT_EXHAUSTIVE, NULL,
	  "score every candidate (no pruning; the reference)", NULL },
	{ "strict", 0, no_argument, OPT_STRICT, NULL,
	  "a query that is not well formed fails with its column;\n"
	  "by default it is read literally (--explain says what)", NULL },
	{ "mode", 0, required_argument, OPT_MODE, "MODE",
	  "keyword, semantic, hybrid or strict (full text finds,\n"
	  "vectors reorder); default: hybrid with an embedder", "keyword semantic hybrid strict" },
	{ "fusion", 0, required_argument, OPT_FUSION, "HOW",
	  "how hybrid fuses: rrf, convex or rrf-weighted", "rrf convex rrf-weighted" },
	{ "alpha", 0, required_argument, OPT_ALPHA, "A",
	  "convex, rrf-weighted: the keyword list's weight in [0, 1]", NULL },
	{ "min-similarity", 0, required_argument, OPT_MIN_SIM, "S",
	  "drop vector-only hits below this cosine", NULL },
	{ "vector", 0, required_argument, OPT_VECTOR, "JSON",
	  "the query's embedding, a JSON array of numbers (for\n"
	  "vectors that came with the documents)", NULL },
	CLI_OPT_END,
};

static float *vector_store;

static int parse_vector(fathom_search_opts *so, const char *arg)
{
	json_error_t e;
	json_t *a = json_loads(arg, 0, &e);
	size_t n = json_is_array(a) ? json_array_size(a) : 0;
	if (n == 0 || n > 4096) {
		json_decref(a);
		return -1;
	}
	float *v = realloc(vector_store, n * sizeof *v);
	if (!v) {
		json_decref(a);
		return -1;
	}
	vector_store = v;
	for (size_t i = 0; i < n; i++) {
		json_t *x = json_array_get(a, i);
		if (!json_is_number(x)) {
			json_decref(a);
			return -1;
		}
		v[i] = (float)json_number_value(x);
	}
	json_decref(a);
	so->query_vector = v;
	so->query_vector_dim = (uint32_t)n;
	return 0;
}

enum { OPT_JSON = 3000, OPT_EXPLAIN, OPT_BATCH, OPT_RUN, OPT_TJSON, OPT_COLOR, OPT_INDEX2,
       OPT_WARMUP, OPT_SNIPPETS, OPT_VIMGREP };

const cli_opt cli_opts_search[] = {
	CLI_OPT_INDEX(OPT_INDEX2),
	{ NULL, 'k', required_argument, 0, "N", "number of results (default 10)", NULL },
	{ "json", 0, no_argument, OPT_JSON, NULL, "JSON output (schema in docs/QUERY.md)", NULL },
	{ "explain", 0, no_argument, OPT_EXPLAIN, NULL, "print the score parts of each hit", NULL },
	{ "vimgrep", 0, no_argument, OPT_VIMGREP, NULL,
	  "one line per hit, path:line:column:text (its first best\n"
	  "line), as ripgrep --vimgrep and Vim's quickfix read it", NULL },
	{ "color", 0, required_argument, OPT_COLOR, "WHEN",
	  "auto (the default: colour on a terminal, unless NO_COLOR\n"
	  "is set or TERM is dumb), always or never; paths magenta,\n"
	  "line numbers green, matches bold red, as ripgrep's", "auto always never" },
	CLI_OPT_END,
};

const cli_opt cli_opts_search_batch[] = {
	{ "batch", 0, required_argument, OPT_BATCH, "FILE",
	  "run every line of FILE (or a BEIR queries .jsonl) as a query", NULL },
	{ "run", 0, required_argument, OPT_RUN, "FILE", "with --batch: write a TREC run file", NULL },
	{ "timing-json", 0, no_argument, OPT_TJSON, NULL,
	  "with --batch: print one JSON line of latency figures", NULL },
	{ "warmup", 0, no_argument, OPT_WARMUP, NULL,
	  "with --batch: run each query once untimed before timing it", NULL },
	{ "snippets", 0, no_argument, OPT_SNIPPETS, NULL,
	  "with --batch: build each hit's snippet, as a single search\n"
	  "does (by default a batch times ids and scores alone)", NULL },
	CLI_OPT_END,
};

int cli_search_opt(fathom_search_opts *so, int opt, const char *arg)
{
	double v, lo, hi;
	switch (opt) {
	case OPT_MATCH:
		if (strcmp(arg, "all") == 0)
			so->match = FATHOM_MATCH_ALL;
		else if (strcmp(arg, "any") == 0)
			so->match = FATHOM_MATCH_ANY;
		else if (strcmp(arg, "auto") == 0)
			so->match = FATHOM_MATCH_AUTO;
		else
			return cli_usage_error("--match wants all, any or auto, got '%s'", arg), -1;
		return 1;
	case OPT_FILTER:
		if (!strchr(arg, '=') || arg[0] == '=')
			return cli_usage_error("--filter wants KEY=VALUE, got '%s'", arg), -1;
		if (so->n_filters >= CLI_MAX_FILTERS)
			return cli_usage_error("too many --filter options"), -1;
		filters_store[so->n_filters++] = arg;
		so->filters = filters_store;
		return 1;
	case OPT_PATH: so->path_glob = arg; return 1;
	case OPT_LANG: so->lang = arg; return 1;
	case OPT_WEIGHT: {
		const char *eq = strchr(arg, '=');
		int f;
		for (f = 0; eq && f < FATHOM_NFIELDS; f++)
			if (strlen(fathom_field_name(f)) == (size_t)(eq - arg) &&
			    strncmp(arg, fathom_field_name(f), (size_t)(eq - arg)) == 0)
				break;
		cli_limit(FATHOM_LIMIT_FIELD_WEIGHT, &lo, &hi);
		if (!eq || f == FATHOM_NFIELDS || cli_parse_float(eq + 1, lo, hi, &v))
			return cli_usage_error("--weight wants FIELD=W with FIELD one of path, title, "
			                       "headings, tags, body and W in [%g, %g], got '%s'", lo, hi,
			                       arg), -1;
		/* the options are parsed once per process, as filters_store is */
		if (!so->field_weights) {
			/* the other fields unset: the index's weights, else the defaults */
			for (size_t i = 0; i < FATHOM_NFIELDS; i++)
				weights_store[i] = -1;
			so->field_weights = weights_store;
			so->n_field_weights = FATHOM_NFIELDS;
		}
		weights_store[f] = (float)v;
		return 1;
	}
	case OPT_K1:
		cli_limit(FATHOM_LIMIT_K1, &lo, &hi);
		if (cli_parse_float(arg, lo, hi, &v))
			return cli_usage_error("--k1 wants a number in [%g, %g]", lo, hi), -1;
		so->k1 = (float)v;
		return 1;
	case OPT_B:
		cli_limit(FATHOM_LIMIT_B, &lo, &hi);
		if (cli_parse_float(arg, lo, hi, &v))
			return cli_usage_error("--b wants a number in [%g, %g]", lo, hi), -1;
		so->b = (float)v;
		return 1;
	case OPT_PHRASE:
	case OPT_PREFIX:
		cli_limit(FATHOM_LIMIT_BONUS, &lo, &hi);
		if (cli_parse_float(arg, lo, hi, &v))
			return cli_usage_error("bonuses are multipliers in [%g, %g]", lo, hi), -1;
		if (opt == OPT_PHRASE)
			so->phrase_bonus = (float)v;
		else
			so->prefix_bonus = (float)v;
		return 1;
	case OPT_EXHAUSTIVE: so->exhaustive = 1; return 1;
	case OPT_STRICT: so->strict = 1; return 1;
	case OPT_MODE:
		for (int m = FATHOM_MODE_KEYWORD; m <= FATHOM_MODE_STRICT; m++)
			if (strcmp(arg, fathom_mode_name(m)) == 0) {
				so->mode = m;
				return 1;
			}
		return cli_usage_error("--mode wants keyword, semantic, hybrid or strict, got '%s'",
		                       arg), -1;
	case OPT_FUSION:
		for (int f = FATHOM_FUSION_RRF; f <= FATHOM_FUSION_RRF_WEIGHTED; f++)
			if (strcmp(arg, fathom_fusion_name(f)) == 0) {
				so->fusion = f;
				return 1;
			}
		return cli_usage_error("--fusion wants rrf, convex or rrf-weighted, got '%s'", arg), -1;
	case OPT_ALPHA:
	case OPT_MIN_SIM:
		if (cli_parse_float(arg, 0, 1, &v))
			return cli_usage_error("--%s wants a number in [0, 1]",
			                       opt == OPT_ALPHA ? "alpha" : "min-similarity"), -1;
		if (opt == OPT_ALPHA)
			so->alpha = (float)v;
		else
			so->min_similarity = (float)v;
		return 1;
	case OPT_VECTOR:
		if (parse_vector(so, arg))
			return cli_usage_error("--vector wants a JSON array of 1 to 4096 numbers"), -1;
		return 1;
	default: return 0;
	}
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int cli_run_query(fathom_index *ix, const char *q, const fathom_search_opts *so,
                  fathom_results **out, double *ms)
{
	double t0 = now_ms();
	int rc = fathom_search(out, ix, q, so);
	*ms = now_ms() - t0;
	return rc;
}

/* The library's one serializer: the same objects as POST /search and
 * the MCP search tool. why, when not NULL, is what the CLI knows of an
 * empty answer that the library does not (a grep-only index). */
static int print_json(const char *query, const fathom_results *r, const char *why)
{
	fathom_json_opts jo = FATHOM_JSON_OPTS_INIT;
	jo.query = query;
	char *text = NULL;
	size_t len = 0;
	int rc = fathom_results_json(&text, &len, r, &jo);
	if (rc)
		return cli_die_api(rc, "search --json"), -1;
	json_t *o = why ? json_loadb(text, len, 0, NULL) : NULL;
	char *with = o && !json_object_set_new(o, "why", json_string(why))
	             ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (with)
		fputs(with, stdout);
	else
		fwrite(text, 1, len, stdout);
	fputc('\n', stdout);
	free(with);
	json_decref(o);
	fathom_free(text);
	return 0;
}

/* A search that failed, with --json: an object on stdout too, so a
 * script reading it finds the failure where it looks for the answer:
 * {"query": ..., "error": {"message": ..., "column": N}}, the column
 * (from 1) only for a query that does not parse (--strict). The library
 * words such an error "query syntax, column N: what" (QUERY.md). */
static void print_json_error(const char *query, int rc)
{
	const char *m = fathom_errmsg();
	json_t *msg = json_string(m && *m ? m : fathom_strerror(rc));
	json_t *err = json_object(), *o = json_object();
	unsigned col = 0;
	if (!msg)   /* not UTF-8: the error's name, which is */
		msg = json_string(fathom_strerror(rc));
	json_object_set_new(err, "message", msg);
	if (m && sscanf(m, "query syntax, column %u:", &col) == 1 && col)
		json_object_set_new(err, "column", json_integer(col));
	json_t *q = json_string(query);   /* NULL for bytes that are not UTF-8: left out */
	if (q)
		json_object_set_new(o, "query", q);
	json_object_set_new(o, "error", err);
	char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text)
		printf("%s\n", text);
	free(text);
	json_decref(o);
}

/* An index of files indexed for grep alone (index --grep-only, or files
 * over the size cap) has no chunks: no query can find anything in it, and saying "no results"
 * would hide why. The sentence, or NULL for an index with chunks. */
/* The snippet size the search used: the option, else the index's
 * setting (which has the built-in default). */
static uint32_t snippet_size(fathom_index *ix, const fathom_search_opts *so)
{
	if (so->snippet_bytes != FATHOM_UNSET_SNIPPET)
		return so->snippet_bytes;
	char *v = NULL;
	int set = 0;
	uint32_t n = 240;
	if (fathom_config_get(&v, &set, ix, "snippet-bytes") == 0 && v)
		n = (uint32_t)strtoul(v, NULL, 10);
	fathom_free(v);
	return n;
}

static const char *grep_only(fathom_index *ix, char *buf, size_t cap)
{
	fathom_stats st = FATHOM_STATS_INIT;
	if (fathom_stats_get(&st, ix) || st.chunks || !st.grep_files)
		return NULL;
	snprintf(buf, cap, "this index is for grep alone: its %llu file%s %s indexed without text "
	         "to rank (index --grep-only, or over --max-size); 'fathom grep PATTERN' "
	         "searches them", (unsigned long long)st.grep_files, st.grep_files == 1 ? "" : "s",
	         st.grep_files == 1 ? "was" : "were");
	return buf;
}

/* ---- batch ---------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double cli_percentile(double *v, size_t n, double p);
double cli_percentile(double *v, size_t n, double p)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof *v, cmp_double);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

/* Write up to k distinct documents of r as TREC run lines. */
void cli_write_run(FILE *f, const char *qid, const fathom_results *r, size_t k);
void cli_write_run(FILE *f, const char *qid, const fathom_results *r, size_t k)
{
	size_t n = fathom_results_count(r), rank = 0;
	for (size_t i = 0; i < n && rank < k; i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		int dup = 0;
		for (size_t j = 0; j < i && !dup; j++)
			dup = strcmp(fathom_results_hit(r, j)->doc_id, h->doc_id) == 0;
		if (dup)
			continue;
		fprintf(f, "%s Q0 %s %zu %.6f fathom\n", qid, h->doc_id, ++rank, h->score);
	}
}

static int run_batch(fathom_index *ix, const char *file, fathom_search_opts *so,
                     const char *run_file, int timing_json, int warmup)
{
	FILE *in = strcmp(file, "-") == 0 ? stdin : fopen(file, "r");
	if (!in) {
		fprintf(stderr, "%s: %s: cannot open\n", cli_prog, file);
		return 2;
	}
	FILE *run = NULL;
	if (run_file && !(run = fopen(run_file, "w"))) {
		fprintf(stderr, "%s: %s: cannot write\n", cli_prog, run_file);
		if (in != stdin)
			fclose(in);
		return 2;
	}
	size_t flen = strlen(file);
	int is_jsonl = flen > 6 && strcmp(file + flen - 6, ".jsonl") == 0;
	char *line = NULL;
	size_t cap = 0, n = 0, answered = 0, lineno = 0, capms = 0;
	double *ms = NULL, total = 0;
	ssize_t len;
	int rc = 0;
	while ((len = getline(&line, &cap, in)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		char qid[256];
		const char *q = line;
		json_t *obj = NULL;
		snprintf(qid, sizeof qid, "%zu", lineno);
		if (is_jsonl) {
			json_error_t je;
			obj = json_loadb(line, (size_t)len, 0, &je);
			const char *id = json_string_value(json_object_get(obj, "_id"));
			if (!id)
				id = json_string_value(json_object_get(obj, "id"));
			q = json_string_value(json_object_get(obj, "text"));
			if (!q)
				q = json_string_value(json_object_get(obj, "query"));
			if (!obj || !q) {
				fprintf(stderr, "%s: %s:%zu: not a query object\n", cli_prog, file, lineno);
				json_decref(obj);
				continue;
			}
			if (id)
				snprintf(qid, sizeof qid, "%s", id);
		}
		fathom_results *res = NULL;
		double t;
		int qrc = 0;
		if (warmup) {
			/* Once untimed, as the peers' harnesses do, so the timed run
			 * finds the pages it needs mapped and cached. */
			qrc = cli_run_query(ix, q, so, &res, &t);
			fathom_results_free(res);
			res = NULL;
		}
		if (!qrc)
			qrc = cli_run_query(ix, q, so, &res, &t);
		if (qrc) {
			cli_die_api(qrc, q);
			json_decref(obj);
			rc = 2;
			continue;
		}
		if (n == capms) {
			capms = capms ? capms * 2 : 1024;
			double *nm = realloc(ms, capms * sizeof *ms);
			if (!nm) {
				fathom_results_free(res);
				json_decref(obj);
				rc = 2;
				break;
			}
			ms = nm;
		}
		ms[n++] = t;
		total += t;
		answered += fathom_results_count(res) > 0;
		if (run)
			cli_write_run(run, qid, res, so->k ? so->k : SIZE_MAX);   /* 0: the index's k */
		fathom_results_free(res);
		json_decref(obj);
	}
	free(line);
	if (in != stdin)
		fclose(in);
	if (run && fclose(run) != 0) {
		fprintf(stderr, "%s: %s: write failed\n", cli_prog, run_file);
		rc = 2;
	}
	double mean = n ? total / (double)n : 0;
	double p50 = cli_percentile(ms, n, 0.50), p99 = cli_percentile(ms, n, 0.99);
	if (timing_json)
		printf("{\"queries\":%zu,\"answered\":%zu,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"mean_ms\":%.4f}\n",
		       n, answered, p50, p99, mean);
	else
		printf("%zu queries, %zu answered; latency p50 %.3f ms, p99 %.3f ms, mean %.3f ms\n",
		       n, answered, p50, p99, mean);
	free(ms);
	return rc;
}

int cmd_search(int argc, char **argv)
{
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	const char *index = cli_default_index(), *batch = NULL, *run = NULL;
	int json = 0, explain = 0, tjson = 0, warmup = 0, snippets = 0, vimgrep = 0, c;
	int color = CLI_COLOR_AUTO;
	uint64_t v;
	/* Every argument before "--" that starts with '-' is an option: a
	 * query holding -word (a negation) goes after "--" (docs/QUERY.md). */
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		int used = cli_search_opt(&so, c, optarg);
		if (used < 0)
			return 2;
		if (used)
			continue;
		switch (c) {
		case 'k':
			if (cli_parse_limit(optarg, FATHOM_LIMIT_K, &v)) {
				double kmin, kmax;
				cli_limit(FATHOM_LIMIT_K, &kmin, &kmax);
				return cli_usage_error("-k wants a number from %g to %g", kmin, kmax);
			}
			so.k = (uint32_t)v;
			break;
		case OPT_INDEX2: index = optarg; break;
		case OPT_JSON: json = 1; break;
		case OPT_EXPLAIN: explain = 1; break;
		case OPT_VIMGREP: vimgrep = 1; break;
		case OPT_BATCH: batch = optarg; break;
		case OPT_RUN: run = optarg; break;
		case OPT_TJSON: tjson = 1; break;
		case OPT_WARMUP: warmup = 1; break;
		case OPT_SNIPPETS: snippets = 1; break;
		case OPT_COLOR:
			if ((color = cli_color_parse(optarg)) < 0)
				return cli_usage_error("--color wants auto, always or never, got '%s'", optarg);
			break;
		default: return 2;
		}
	}
	if ((run || tjson || warmup || snippets) && !batch)
		return cli_usage_error("--run, --timing-json, --warmup and --snippets go with --batch");
	if (vimgrep && (json || explain || batch))
		return cli_usage_error("--vimgrep is an output of its own: not with --json, --explain "
		                       "or --batch");
	if (!batch && optind >= argc)
		return cli_usage_error("what query? (fathom search WORDS...)");
	fathom_index *ix;
	if (cli_open(&ix, index, FATHOM_OPEN_READONLY, NULL))
		return 2;
	int rc;
	if (batch) {
		/* ids and scores only, unless --snippets asks for what a single
		 * search and the daemon build (bench/serve_bench.sh compares them) */
		if (!snippets)
			so.snippet_bytes = 0;
		rc = run_batch(ix, batch, &so, run, tjson, warmup);
		fathom_close(ix);
		return rc;
	}
	/* The query is the remaining words joined by spaces. */
	size_t qlen = 0;
	for (int i = optind; i < argc; i++)
		qlen += strlen(argv[i]) + 1;
	char *q = malloc(qlen + 1);
	if (!q) {
		fathom_close(ix);
		return 2;
	}
	q[0] = '\0';
	for (int i = optind; i < argc; i++) {
		if (i > optind)
			strcat(q, " ");
		strcat(q, argv[i]);
	}
	fathom_results *res = NULL;
	double ms;
	rc = cli_run_query(ix, q, &so, &res, &ms);
	if (rc) {
		if (json)
			print_json_error(q, rc);
		cli_die_api(rc, "search");
		free(q);
		fathom_close(ix);
		return 2;
	}
	size_t n = fathom_results_count(res);
	int jrc = 0;
	char why[256];
	const char *gonly = n ? NULL : grep_only(ix, why, sizeof why);
	if (json) {
		jrc = print_json(q, res, gonly);
	} else {
		cli_hits_out o = { .ix = ix, .color = cli_color_on(color, 1), .explain = explain,
		                   .vimgrep = vimgrep, .snippet_bytes = snippet_size(ix, &so) };
		cli_paths_init(&o.paths, fathom_root(ix));
		cli_print_hits(res, &o);
	}
	/* stdout holds results alone; --json keeps the reason as "why" */
	if (n == 0 && !json) {
		fflush(stdout);
		fprintf(stderr, "%s: %s%s\n", cli_prog, gonly ? "" : "no results: ",
		        gonly ? gonly : fathom_results_why(res));
	}
	fathom_results_free(res);
	free(q);
	fathom_close(ix);
	return jrc ? 2 : n ? 0 : 1;
}
