/* doc_cmds.c — fathom get, list, stats, verify, vocab. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { OPT_INDEX = 4000, OPT_JSON, OPT_CHUNK, OPT_CATEGORY };

/* Each command takes its own options and no other's (verify --json or
 * list --chunk is an unknown option, as 'fathom help CMD' lists them). */
#define DOC_JSON { "json", 0, no_argument, OPT_JSON, NULL, "JSON lines output", NULL }
const cli_opt cli_opts_get[] = {
	CLI_OPT_INDEX(OPT_INDEX),
	{ "chunk", 0, required_argument, OPT_CHUNK, "CHUNK_ID",
	  "print one chunk by its id (chunk_id in search's JSON output)", NULL },
	CLI_OPT_END,
};
const cli_opt cli_opts_list[] = { CLI_OPT_INDEX(OPT_INDEX), DOC_JSON, CLI_OPT_END };
const cli_opt cli_opts_stats[] = {
	CLI_OPT_INDEX(OPT_INDEX),
	{ "json", 0, no_argument, OPT_JSON, NULL, "one JSON object", NULL },
	CLI_OPT_END,
};
const cli_opt cli_opts_verify[] = { CLI_OPT_INDEX(OPT_INDEX), CLI_OPT_END };
const cli_opt cli_opts_vocab[] = {
	CLI_OPT_INDEX(OPT_INDEX),
	{ "category", 0, required_argument, OPT_CATEGORY, "C", "only identifiers of category C",
	  "testcase ticket version class function model error" },
	DOC_JSON,
	CLI_OPT_END,
};

typedef struct doc_args {
	const char *index, *chunk, *category;
	int json;
} doc_args;

static int parse_doc_args(doc_args *a, int argc, char **argv)
{
	int c;
	a->index = cli_default_index();
	a->chunk = NULL;
	a->category = NULL;
	a->json = 0;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case OPT_INDEX: a->index = optarg; break;
		case OPT_JSON: a->json = 1; break;
		case OPT_CHUNK: a->chunk = optarg; break;
		case OPT_CATEGORY: a->category = optarg; break;
		default: return 2;
		}
	}
	return 0;
}

/* Parse the options of list/stats/verify and open the index read-only;
 * non-zero (already reported) on failure. */
static int parse_and_open(doc_args *a, int argc, char **argv, fathom_index **ix)
{
	if (parse_doc_args(a, argc, argv))
		return 2;
	return cli_open(ix, a->index, FATHOM_OPEN_READONLY, NULL) ? 2 : 0;
}

/* "ID:FROM:COUNT" or "ID:FROM": split off numeric suffixes. Returns the
 * number of suffixes found (0, 1 or 2); id is cut in place. */
static int split_range(char *id, uint32_t *from, uint32_t *count)
{
	uint64_t a, b;
	char *c2 = strrchr(id, ':');
	if (!c2 || cli_parse_u64(c2 + 1, 0, UINT32_MAX, &b))
		return 0;
	*c2 = '\0';
	char *c1 = strrchr(id, ':');
	if (c1 && !cli_parse_u64(c1 + 1, 0, UINT32_MAX, &a)) {
		*c1 = '\0';
		*from = (uint32_t)a;
		*count = (uint32_t)b;
		return 2;
	}
	*from = (uint32_t)b;
	*count = 0;
	return 1;
}

int cmd_get(int argc, char **argv)
{
	doc_args a;
	if (parse_doc_args(&a, argc, argv))
		return 2;
	if (!a.chunk && optind != argc - 1)
		return cli_usage_error("get: one document id or path (fathom get ID[:FROM[:COUNT]])");
	fathom_index *ix;
	if (cli_open(&ix, a.index, FATHOM_OPEN_READONLY, NULL))
		return 2;
	char *text = NULL;
	size_t len = 0;
	fathom_get_info info = FATHOM_GET_INFO_INIT;
	int rc;
	if (a.chunk) {
		uint64_t id;
		if (cli_parse_u64(a.chunk, 0, UINT64_MAX, &id)) {
			fathom_close(ix);
			return cli_usage_error("--chunk wants a chunk id (a number from search --json)");
		}
		rc = fathom_get_chunk(&text, &len, ix, id);
	} else {
		/* The whole argument first: ids and paths may contain ':'. A
		 * relative path is read from the current folder, as grep's are. */
		rc = fathom_get_ex(&text, &len, ix, argv[optind], 0, 0, &info);
		if (rc == FATHOM_ENOTFOUND) {
			char *id = strdup(argv[optind]);
			uint32_t from = 0, count = 0;
			if (id && split_range(id, &from, &count))
				rc = fathom_get_ex(&text, &len, ix, id, from ? from : 1, count, &info);
			free(id);
		}
	}
	if (rc) {
		cli_die_api(rc, "get");
		fathom_close(ix);
		return rc == FATHOM_ENOTFOUND ? 1 : 2;
	}
	if (info.stale) {
		fprintf(stderr, "%s: ", cli_prog);
		cli_put_name(stderr, argv[optind]);
		fputs(" " CLI_STALE_NOTE ": this is the indexed copy (fathom index updates it; "
		      "fathom grep reads the file as it is)\n", stderr);
	}
	fwrite(text, 1, len, stdout);
	if (len && text[len - 1] != '\n')
		fputc('\n', stdout);
	fathom_free(text);
	fathom_close(ix);
	return 0;
}

typedef struct list_ctx {
	int json;
	size_t n;
} list_ctx;

static int print_doc(void *ctx, const char *id, const char *path, uint64_t size, uint32_t n_chunks)
{
	list_ctx *l = ctx;
	l->n++;
	if (l->json) {
		fputs("{\"id\":", stdout);
		cli_json_cstr(stdout, id);
		fputs(",\"path\":", stdout);
		cli_json_cstr(stdout, path);
		printf(",\"size\":%llu,\"chunks\":%u}\n", (unsigned long long)size, n_chunks);
	} else {
		cli_put_name(stdout, id);
		printf("\t%llu bytes\t%u chunks\n", (unsigned long long)size, n_chunks);
	}
	return 0;
}

int cmd_list(int argc, char **argv)
{
	doc_args a;
	fathom_index *ix;
	if (parse_and_open(&a, argc, argv, &ix))
		return 2;
	list_ctx l = { a.json, 0 };
	int rc = fathom_list_docs(ix, print_doc, &l);
	if (rc)
		cli_die_api(rc, "list");
	fathom_close(ix);
	return rc ? 2 : 0;
}

int cmd_stats(int argc, char **argv)
{
	doc_args a;
	fathom_index *ix;
	if (parse_and_open(&a, argc, argv, &ix))
		return 2;
	fathom_stats s = FATHOM_STATS_INIT;
	int rc = fathom_stats_get(&s, ix);
	/* the mode a search takes by default (auto: hybrid with an embedder;
	 * "none" is lexical only) */
	char *mode_set = NULL;
	if (!rc && fathom_config_get(&mode_set, NULL, ix, "mode") != 0)
		mode_set = NULL;
	const char *emb = s.embedder;
	const char *mode = mode_set && *mode_set && strcmp(mode_set, "auto") != 0 ? mode_set
	                   : strcmp(emb, "none") == 0                            ? "keyword"
	                                                                         : "hybrid";
	fathom_close(ix);
	if (rc) {
			fathom_free(mode_set);
		cli_die_api(rc, "stats");
		return 2;
	}
	double ratio = s.raw_text_bytes ? (double)s.bytes_total / (double)s.raw_text_bytes : 0;
	if (a.json) {
		printf("{\"generation\":%llu,\"documents\":%llu,\"chunks\":%llu,\"deleted_chunks\":%llu,"
		       "\"terms\":%llu,\"segments\":%u,\"bytes_total\":%llu,\"bytes\":{\"dictionary\":%llu,"
		       "\"postings\":%llu,\"positions\":%llu,\"docstore\":%llu,\"documents\":%llu,"
		       "\"chunks\":%llu,\"trigrams\":%llu,\"vectors\":%llu,\"other\":%llu},"
		       "\"bytes_trigrams\":%llu,"
		       "\"raw_text_bytes\":%llu,\"size_ratio\":%.4f,\"grep_files\":%llu,"
		       "\"grep_file_bytes\":%llu,\"grep_only_files\":%llu,\"stem_language\":",
		       (unsigned long long)s.generation, (unsigned long long)s.docs,
		       (unsigned long long)s.chunks, (unsigned long long)s.deleted_chunks,
		       (unsigned long long)s.terms, s.segments, (unsigned long long)s.bytes_total,
		       (unsigned long long)s.bytes_dict, (unsigned long long)s.bytes_postings,
		       (unsigned long long)s.bytes_positions, (unsigned long long)s.bytes_docstore,
		       (unsigned long long)s.bytes_docs, (unsigned long long)s.bytes_chunks,
		       (unsigned long long)s.bytes_trigrams, (unsigned long long)s.bytes_vectors,
		       (unsigned long long)s.bytes_other, (unsigned long long)s.bytes_trigrams,
		       (unsigned long long)s.raw_text_bytes, ratio,
		       (unsigned long long)s.grep_files, (unsigned long long)s.grep_file_bytes,
		       (unsigned long long)s.grep_only_files);
		cli_json_cstr(stdout, s.stem_language);
		printf(",\"embedder\":");
		cli_json_cstr(stdout, emb);
		printf(",\"vector_chunks\":%llu,\"vector_dim\":%u", (unsigned long long)s.vector_chunks,
		       s.vector_dim);
		if (s.embedder_drift >= 0)
			printf(",\"embedder_drift\":%.6f,\"embedder_drift_pairs\":%llu", s.embedder_drift,
			       (unsigned long long)s.embedder_drift_pairs);
		printf(",\"default_mode\":");
		cli_json_cstr(stdout, mode);
		printf("}\n");
			fathom_free(mode_set);
		return 0;
	}
	printf("generation   %llu\n", (unsigned long long)s.generation);
	printf("documents    %llu\n", (unsigned long long)s.docs);
	printf("chunks       %llu (%llu deleted, awaiting merge)\n", (unsigned long long)s.chunks,
	       (unsigned long long)s.deleted_chunks);
	printf("terms        %llu (summed over segments)\n", (unsigned long long)s.terms);
	printf("segments     %u\n", s.segments);
	printf("stemming     %s\n", s.stem_language);
	if (strcmp(emb, "none") == 0)
		printf("embedder     none: lexical only (keyword search; fathom config embedder corpus "
		       "adds vectors)\n");
	else
		printf("embedder     %s (default mode %s): %llu chunks with a %u-d vector\n", emb, mode,
		       (unsigned long long)s.vector_chunks, s.vector_dim);
	if (s.embedder_drift >= 0)
		printf("retrained    drift %.4f (mean change of a chunk pair's cosine, %llu pairs; "
		       "measured before commit %llu)\n",
		       s.embedder_drift, (unsigned long long)s.embedder_drift_pairs,
		       (unsigned long long)s.embedder_drift_generation + 1);
	fathom_free(mode_set);
	printf("raw text     %llu bytes\n", (unsigned long long)s.raw_text_bytes);
	printf("index        %llu bytes (%.1f%% of the raw text)\n", (unsigned long long)s.bytes_total,
	       ratio * 100);
	printf("grep         %llu files (%llu for grep alone) of %llu bytes; trigrams %.1f%% of them\n",
	       (unsigned long long)s.grep_files, (unsigned long long)s.grep_only_files,
	       (unsigned long long)s.grep_file_bytes,
	       s.grep_file_bytes ? 100.0 * (double)s.bytes_trigrams / (double)s.grep_file_bytes : 0.0);
	const struct { const char *name; uint64_t v; } parts[] = {
		{ "dictionary", s.bytes_dict }, { "postings", s.bytes_postings },
		{ "positions", s.bytes_positions }, { "doc store", s.bytes_docstore },
		{ "documents", s.bytes_docs }, { "chunks", s.bytes_chunks },
		{ "trigrams", s.bytes_trigrams }, { "vectors", s.bytes_vectors },
		{ "other", s.bytes_other },
	};
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		printf("  %-11s %llu bytes\n", parts[i].name, (unsigned long long)parts[i].v);
	return 0;
}

int cmd_verify(int argc, char **argv)
{
	doc_args a;
	fathom_index *ix;
	if (parse_and_open(&a, argc, argv, &ix))
		return 2;
	int rc = fathom_verify(ix);
	fathom_close(ix);
	if (rc) {
		cli_die_api(rc, "verify");
		return 2;
	}
	printf("ok: every file passed its checks\n");
	return 0;
}

typedef struct vocab_ctx {
	int json;
	uint64_t n;
} vocab_ctx;

static int print_vocab(void *ctx, const fathom_vocab_entry *e)
{
	vocab_ctx *v = ctx;
	v->n++;
	if (v->json) {
		fputs("{\"key\":", stdout);
		cli_json_cstr(stdout, e->key);
		printf(",\"category\":\"%s\",\"categories\":[", e->category);
		for (size_t i = 0; i < e->n_categories; i++)
			printf("%s\"%s\"", i ? "," : "", e->categories[i]);
		printf("],\"chunks\":%llu,\"occurrences\":%llu,\"variants\":[",
		       (unsigned long long)e->chunks, (unsigned long long)e->occurrences);
		for (size_t i = 0; i < e->n_variants; i++) {
			if (i)
				fputc(',', stdout);
			cli_json_cstr(stdout, e->variants[i]);
		}
		fputs("],\"first_seen\":", stdout);
		cli_json_cstr(stdout, e->first_seen);
		fputs("}\n", stdout);
		return 0;
	}
	/* every role seen, the most frequent first: "model,function" */
	char roles[96] = "";
	size_t rl = 0;
	for (size_t i = 0; i < e->n_categories && rl < sizeof roles; i++)
		rl += (size_t)snprintf(roles + rl, sizeof roles - rl, "%s%s", i ? "," : "", e->categories[i]);
	printf("%-24s %-15s %7llu %7llu  ", e->key, e->n_categories ? roles : e->category,
	       (unsigned long long)e->chunks, (unsigned long long)e->occurrences);
	for (size_t i = 0; i < e->n_variants; i++)
		printf("%s%s", i ? ", " : "", e->variants[i]);
	fputs("  (first: ", stdout);
	cli_put_name(stdout, e->first_seen);
	fputs(")\n", stdout);
	return 0;
}

int cmd_vocab(int argc, char **argv)
{
	doc_args a;
	fathom_index *ix;
	if (parse_doc_args(&a, argc, argv))
		return 2;
	if (argc - optind > 1)
		return cli_usage_error("vocab: at most one PREFIX");
	const char *prefix = optind < argc ? argv[optind] : NULL;
	if (cli_open(&ix, a.index, FATHOM_OPEN_READONLY, NULL))
		return 2;
	vocab_ctx v = { a.json, 0 };
	if (!a.json)
		printf("%-24s %-15s %7s %7s  %s\n", "KEY", "CATEGORY", "CHUNKS", "TIMES",
		       "SPELLINGS (first seen in)");
	int rc = fathom_vocab(ix, a.category, prefix, print_vocab, &v);
	fathom_close(ix);
	if (rc) {
		cli_die_api(rc, "vocab");
		return 2;
	}
	if (v.n == 0 && !a.json)
		printf("no identifiers%s%s\n", prefix ? " beginning with " : "", prefix ? prefix : "");
	return v.n ? 0 : 1;
}
