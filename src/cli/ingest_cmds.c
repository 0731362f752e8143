/* ingest_cmds.c — fathom index, add, chunk, delete. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "serve/serve.h"

int cli_open(fathom_index **out, const char *dir, unsigned flags, const char *stem)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = flags;
	oo.stem_language = stem;
	int rc = fathom_open(out, dir, &oo);
	if (rc) {
		char what[600];
		snprintf(what, sizeof what, "cannot open index %s", dir);
		cli_die_api(rc, what);
		if (rc == FATHOM_ENOTFOUND && !(flags & FATHOM_OPEN_CREATE))
			fprintf(stderr, "(create one with: fathom index --index %s PATH...)\n", dir);
	}
	return rc;
}

static void human_bytes(char *buf, size_t n, double b)
{
	const char *u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int i = 0;
	while (b >= 1024 && i < 4) {
		b /= 1024;
		i++;
	}
	snprintf(buf, n, i ? "%.1f %s" : "%.0f %s", b, u[i]);
}

static int on_progress(void *ctx, const fathom_ingest_stats *st, uint64_t total, double eta)
{
	cli_ingest *ci = ctx;
	if (!ci->tty || ci->quiet)
		return 0;
	double mbs = st->elapsed_sec > 0 ? (double)st->bytes_read / st->elapsed_sec / 1e6 : 0;
	char done[32], all[32];
	human_bytes(done, sizeof done, (double)st->bytes_read);
	human_bytes(all, sizeof all, (double)total);
	fprintf(stderr, "\r\033[K%llu files, %s of %s, %.1f MB/s", (unsigned long long)st->files_seen,
	        done, all, mbs);
	if (eta >= 0)
		fprintf(stderr, ", ETA %.0fs", eta);
	fflush(stderr);
	return 0;
}

static void on_skip(void *ctx, const char *path, int reason)
{
	cli_ingest *ci = ctx;
	if (reason == FATHOM_SKIP_BAD_RECORD) {
		/* Bad input lines are always shown: they are data the user meant to add. */
		if (ci->tty)
			fprintf(stderr, "\r\033[K");
		fprintf(stderr, "%s: skipped %s\n", cli_prog, path);
		return;
	}
	if (ci->verbose) {
		if (ci->tty)
			fprintf(stderr, "\r\033[K");
		fputs("skip ", stderr);
		cli_put_name(stderr, path);
		fprintf(stderr, ": %s\n", fathom_skip_reason_name(reason));
	}
}

void cli_ingest_init(cli_ingest *ci)
{
	fathom_ingest_opts d = FATHOM_INGEST_OPTS_INIT;
	memset(ci, 0, sizeof *ci);
	ci->io = d;
	ci->io.meta = ci->meta;
	ci->io.progress = on_progress;
	ci->io.on_skip = on_skip;
	ci->io.cb_ctx = ci;
	ci->tty = cli_term_ok(2);   /* the progress line erases itself */
}

void cli_ingest_report(const cli_ingest *ci, const fathom_ingest_stats *st, const char *verb)
{
	if (ci->tty && !ci->quiet)
		fprintf(stderr, "\r\033[K");
	if (ci->quiet)
		return;
	char rb[32];
	human_bytes(rb, sizeof rb, (double)st->bytes_read);
	fprintf(stderr, "%s %llu documents (%llu chunks) in %.2fs; read %s",
	        verb, (unsigned long long)st->docs_added, (unsigned long long)st->chunks_added,
	        st->elapsed_sec, rb);
	if (st->files_unchanged)
		fprintf(stderr, "; %llu unchanged", (unsigned long long)st->files_unchanged);
	if (st->files_deleted)
		fprintf(stderr, "; %llu removed", (unsigned long long)st->files_deleted);
	if (st->invalid_utf8)
		fprintf(stderr, "; %llu invalid UTF-8 sequences repaired", (unsigned long long)st->invalid_utf8);
	if (st->files_grep_only)
		fprintf(stderr, "; %llu for grep alone%s", (unsigned long long)st->files_grep_only,
		        ci->io.grep_only ? "" : " (over --max-size)");
	fputc('\n', stderr);
	if (st->files_skipped) {
		fprintf(stderr, "skipped %llu:", (unsigned long long)st->files_skipped);
		int first = 1;
		for (int r = 1; r < 16; r++) {
			if (!st->skipped_by_reason[r])
				continue;
			fprintf(stderr, "%s %llu %s", first ? "" : ",",
			        (unsigned long long)st->skipped_by_reason[r], fathom_skip_reason_name(r));
			if (r == FATHOM_SKIP_TOO_BIG) {
				char cap[32];
				if (ci->io.max_file_size == FATHOM_UNSET_SIZE) {
					fputs(" (over the index's size caps: fathom config max-size)", stderr);
				} else {
					human_bytes(cap, sizeof cap, (double)ci->io.max_file_size);
					fprintf(stderr, " (%s; --max-size)", cap);
				}
			}
			first = 0;
		}
		fprintf(stderr, "%s\n", ci->verbose ? "" : " (-v lists them)");
	}
}

enum { OPT_META = 2000, OPT_MAXSIZE, OPT_CTARGET, OPT_COVERLAP, OPT_CMAX, OPT_NOIGNORE,
       OPT_NOFOLLOW, OPT_KEEPMISSING, OPT_STEM, OPT_JSONL, OPT_INDEX, OPT_IDMIN, OPT_IDMAX,
       OPT_THREADS, OPT_GREPONLY, OPT_GREPMAX, OPT_WATCH, OPT_DEBOUNCE, OPT_EMBEDDER };

/* The rows the ingest commands share; each command's table holds those it
 * takes (delete and optimize read no files, so --max-size there is an
 * unknown option, which cli_getopt says is one of index and chunk). */
#define ROW_META                                                                           \
	{ "meta", 0, required_argument, OPT_META, "KEY=VALUE",                                  \
	  "tag every document of this run (repeatable)", NULL }
#define ROW_MAXSIZE                                                                        \
	{ "max-size", 0, required_argument, OPT_MAXSIZE, "N",                                   \
	  "full-text index files up to N bytes (default 4M; k/M/G suffixes);\nfor a .gz file, N "  \
	  "bounds the decompressed size", NULL }
#define ROWS_CHUNK                                                                         \
	{ "chunk-target", 0, required_argument, OPT_CTARGET, "N",                               \
	  "target chunk size in bytes (default 1500)", NULL },                                  \
	{ "chunk-overlap", 0, required_argument, OPT_COVERLAP, "N",                             \
	  "bytes repeated from the previous chunk (default 0)", NULL },                         \
	{ "chunk-max", 0, required_argument, OPT_CMAX, "N", "hard cap on a chunk (default 6000)", \
	  NULL },                                                                               \
	{ "ident-min-len", 0, required_argument, OPT_IDMIN, "N",                                \
	  "exact identifiers: shortest spelling kept (default 3)", NULL },                      \
	{ "ident-max", 0, required_argument, OPT_IDMAX, "N",                                    \
	  "exact identifiers: at most N per chunk (default 50)", NULL }
#define ROW_THREADS(what) { "threads", 0, required_argument, OPT_THREADS, "N", what, NULL }
#define ROWS_WALK                                                                          \
	{ "no-ignore", 0, no_argument, OPT_NOIGNORE, NULL, "do not honour .gitignore files",     \
	  NULL },                                                                               \
	{ "no-follow", 0, no_argument, OPT_NOFOLLOW, NULL,                                      \
	  "do not follow symbolic links (by default links to files\n"                           \
	  "and folders are followed, wherever they lead; loops are\n"                           \
	  "skipped). Through 'fathom serve' without a token, nothing\n"                         \
	  "whose real path lies outside the index's root is read", NULL }
#define ROW_STEM                                                                           \
	{ "stem", 0, required_argument, OPT_STEM, "LANG",                                       \
	  "stemming language when creating the index (default english; none)", NULL }
#define ROW_EMBEDDER                                                                       \
	{ "embedder", 0, required_argument, OPT_EMBEDDER, "SPEC",                               \
	  "embed the chunks too, and keep it as the index's setting:\n"                         \
	  "none, corpus, static:PATH (word vectors, a Model2Vec\n"                             \
	  "folder), remote:URL\n"                                                                \
	  "(an OpenAI-compatible .../v1); fathom config embedder", NULL }
#define ROW_VERBOSE                                                                        \
	{ "verbose", 'v', no_argument, 0, NULL, "list every skipped path with the reason", NULL }
#define ROW_QUIET(what) { "quiet", 'q', no_argument, 0, NULL, what, NULL }

const cli_opt cli_opts_index[] = {
	CLI_OPT_INDEX(OPT_INDEX),
	ROW_META,
	ROW_MAXSIZE,
	{ "grep-max-size", 0, required_argument, OPT_GREPMAX, "N",
	  "larger files, up to N bytes, go to the grep index alone\n"
	  "(default 256M; 0: skip them)", NULL },
	{ "grep-only", 0, no_argument, OPT_GREPONLY, NULL,
	  "index files for fathom grep alone: the trigram index and\n"
	  "the file table, no full text (fast to build, small)", NULL },
	ROWS_CHUNK,
	ROW_THREADS("threads reading and analysing files (default: one per CPU;\n"
	            "1: one thread); the index is the same whatever N"),
	ROWS_WALK,
	{ "keep-missing", 0, no_argument, OPT_KEEPMISSING, NULL,
	  "keep documents whose files are gone", NULL },
	ROW_STEM,
	ROW_EMBEDDER,
	ROW_VERBOSE,
	ROW_QUIET("no progress line and no summary"),
	{ "watch", 0, no_argument, OPT_WATCH, NULL,
	  "then keep watching (inotify): what changes is re-indexed\n"
	  "and committed, a batch per quiet moment, until Ctrl-C", NULL },
	{ "debounce", 0, required_argument, OPT_DEBOUNCE, "SECONDS",
	  "quiet time before a batch (default 0.2)", NULL },
	CLI_OPT_END,
};

const cli_opt cli_opts_add[] = {
	CLI_OPT_INDEX(OPT_INDEX),
	{ "jsonl", 0, required_argument, OPT_JSONL, "FILE",
	  "the JSON lines to add (- for stdin)", NULL },
	ROW_META,
	ROWS_CHUNK,
	ROW_THREADS("threads parsing and analysing lines (default: one per CPU)"),
	ROW_STEM,
	ROW_EMBEDDER,
	ROW_VERBOSE,
	ROW_QUIET("no summary"),
	CLI_OPT_END,
};

const cli_opt cli_opts_chunk[] = {
	{ "index", 0, required_argument, OPT_INDEX, "DIR",
	  "not read: chunk splits files as index would, with no index", NULL },
	ROW_MAXSIZE,
	ROWS_CHUNK,
	ROWS_WALK,
	ROW_VERBOSE,
	ROW_QUIET("accepted; chunk prints no progress"),
	CLI_OPT_END,
};

const cli_opt cli_opts_delete[] = {
	CLI_OPT_INDEX(OPT_INDEX),
	{ "verbose", 'v', no_argument, 0, NULL, "accepted; delete prints nothing on success", NULL },
	ROW_QUIET("accepted; delete prints nothing on success"),
	CLI_OPT_END,
};

const cli_opt cli_opts_optimize[] = {
	CLI_OPT_INDEX(OPT_INDEX),
	ROW_QUIET("no summary"),
	CLI_OPT_END,
};

typedef struct ingest_args {
	cli_ingest ci;
	const char *index, *stem, *jsonl, *embedder;
	int watch;
	double debounce;
} ingest_args;

static int parse_ingest(ingest_args *a, int argc, char **argv)
{
	uint64_t v;
	double lo, hi;
	int c;
	cli_ingest_init(&a->ci);
	a->index = cli_default_index();
	a->stem = NULL;
	a->jsonl = NULL;
	a->embedder = NULL;
	a->watch = 0;
	a->debounce = 0.2;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case OPT_INDEX: a->index = optarg; break;
		case OPT_META:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return cli_usage_error("--meta wants KEY=VALUE, got '%s'", optarg);
			cli_limit(FATHOM_LIMIT_META, &lo, &hi);
			if ((double)a->ci.io.n_meta >= hi || a->ci.io.n_meta >= CLI_MAX_META)
				return cli_usage_error("at most %g --meta options", hi);
			a->ci.meta[a->ci.io.n_meta++] = optarg;
			break;
		case OPT_MAXSIZE:
			if (cli_parse_u64(optarg, 1, UINT64_MAX, &v))
				return cli_usage_error("--max-size wants a byte count, got '%s'", optarg);
			a->ci.io.max_file_size = v;
			break;
		case OPT_GREPONLY: a->ci.io.grep_only = 1; break;
		case OPT_GREPMAX:
			if (cli_parse_u64(optarg, 0, UINT64_MAX, &v))
				return cli_usage_error("--grep-max-size wants a byte count, got '%s'", optarg);
			a->ci.io.grep_max_file_size = v;
			break;
		case OPT_IDMIN:
			/* 0 would mean the default: not a length */
			cli_limit(FATHOM_LIMIT_IDENT_MIN_LEN, &lo, &hi);
			if (cli_parse_u64(optarg, 1, (uint64_t)hi, &v))
				return cli_usage_error("--ident-min-len wants 1 to %g, got '%s'", hi, optarg);
			a->ci.io.ident_min_len = (uint32_t)v;
			break;
		case OPT_IDMAX:
			cli_limit(FATHOM_LIMIT_IDENT_MAX, &lo, &hi);
			if (cli_parse_u64(optarg, 1, (uint64_t)hi, &v))
				return cli_usage_error("--ident-max wants 1 to %g, got '%s'", hi, optarg);
			a->ci.io.ident_max = (uint32_t)v;
			break;
		case OPT_THREADS:
			cli_limit(FATHOM_LIMIT_THREADS, &lo, &hi);
			if (cli_parse_u64(optarg, 1, (uint64_t)hi, &v))
				return cli_usage_error("--threads wants 1 to %g, got '%s'", hi, optarg);
			a->ci.io.threads = (unsigned)v;
			break;
		case OPT_CTARGET:
		case OPT_COVERLAP:
		case OPT_CMAX:
			/* the library says which relation between them fails */
			cli_limit(FATHOM_LIMIT_CHUNK_MAX, &lo, &hi);
			if (cli_parse_u64(optarg, 0, (uint64_t)hi, &v))
				return cli_usage_error("chunk sizes are byte counts up to %g, got '%s'", hi,
				                       optarg);
			if (c == OPT_CTARGET)
				a->ci.io.chunk_target = (uint32_t)v;
			else if (c == OPT_COVERLAP)
				a->ci.io.chunk_overlap = (uint32_t)v;
			else
				a->ci.io.chunk_max = (uint32_t)v;
			break;
		case OPT_NOIGNORE: a->ci.io.use_gitignore = 0; break;
		case OPT_NOFOLLOW: a->ci.io.follow_symlinks = 0; break;
		case OPT_KEEPMISSING: a->ci.io.remove_missing = 0; break;
		case OPT_STEM: a->stem = optarg; break;
		case OPT_JSONL: a->jsonl = optarg; break;
		case OPT_EMBEDDER: a->embedder = optarg; break;
		case OPT_WATCH: a->watch = 1; break;
		case OPT_DEBOUNCE:
			if (cli_parse_float(optarg, 0.01, 60, &a->debounce))
				return cli_usage_error("--debounce wants seconds from 0.01 to 60");
			break;
		case 'v': a->ci.verbose = 1; break;
		case 'q': a->ci.quiet = 1; break;
		default: return 2;
		}
	}
	/* A target above the cap raises the cap, so --chunk-target alone works. */
	if (a->ci.io.chunk_max < a->ci.io.chunk_target)
		a->ci.io.chunk_max = a->ci.io.chunk_target;
	return 0;
}

/* ---- through a running daemon (remote.c) ------------------------------------ */

/* The options both index and add send. */
static json_t *remote_opts(const cli_ingest *ci, int for_index)
{
	const fathom_ingest_opts *io = &ci->io;
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I}", "chunk_target", (json_int_t)io->chunk_target,
	                      "chunk_overlap", (json_int_t)io->chunk_overlap, "chunk_max",
	                      (json_int_t)io->chunk_max, "ident_min_len",
	                      (json_int_t)io->ident_min_len, "ident_max", (json_int_t)io->ident_max);
	if (o && for_index) {
		/* unset: the daemon's run takes the index's settings */
		if (io->max_file_size != FATHOM_UNSET_SIZE)
			json_object_set_new(o, "max_size", json_integer((json_int_t)io->max_file_size));
		if (io->grep_max_file_size != FATHOM_UNSET_SIZE)
			json_object_set_new(o, "grep_max_size",
			                    json_integer((json_int_t)io->grep_max_file_size));
		json_object_set_new(o, "grep_only", json_boolean(io->grep_only));
		json_object_set_new(o, "gitignore", json_boolean(io->use_gitignore));
		json_object_set_new(o, "follow_symlinks", json_boolean(io->follow_symlinks));
		json_object_set_new(o, "remove_missing", json_boolean(io->remove_missing));
	}
	json_t *m = json_array();
	for (size_t i = 0; i < io->n_meta; i++)
		json_array_append_new(m, json_string(io->meta[i]));
	json_object_set_new(o, "meta", m);
	return o;
}

/* POST /index with the run's paths and options; the counts into st. */
static int remote_index_post(const cli_remote *r, ingest_args *a, char **paths, int n,
                             fathom_ingest_stats *st)
{
	json_t *pj = cli_daemon_paths(a->index, paths, n), *reply = NULL;
	if (!pj)
		return 2;
	int rc = cli_remote_post(r, "/index",
	                         json_pack("{s:o,s:o,s:b}", "paths", pj, "options",
	                                   remote_opts(&a->ci, 1), "wait", 1), &reply);
	if (!rc)
		cli_remote_stats(reply, st);
	json_decref(reply);
	return rc;
}

static int remote_index(const cli_remote *r, ingest_args *a, char **paths, int n)
{
	if (!a->ci.quiet)
		fprintf(stderr, "%s: the index is served by pid %ld; indexing through %s\n", cli_prog,
		        r->pid, r->url);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	int rc = remote_index_post(r, a, paths, n, &st);
	if (!rc)
		cli_ingest_report(&a->ci, &st, "indexed");
	return rc;
}

/* add --jsonl through the daemon: whole lines, in requests of at most
 * REMOTE_BATCH bytes (a longer line goes alone), each committed. */
#define REMOTE_BATCH (8u << 20)

static int remote_add(const cli_remote *r, ingest_args *a)
{
	FILE *f = strcmp(a->jsonl, "-") == 0 ? stdin : fopen(a->jsonl, "r");
	if (!f) {
		fprintf(stderr, "%s: %s: %s\n", cli_prog, a->jsonl, strerror(errno));
		return 2;
	}
	/* options in the query string: the body is the JSON lines */
	json_t *o = remote_opts(&a->ci, 0);
	char target[16384] = "/documents?on_bad=skip";
	size_t tl = strlen(target);
	const char *key;
	json_t *v;
	json_object_foreach(o, key, v) {
		if (json_is_integer(v))
			tl += (size_t)snprintf(target + tl, sizeof target - tl, "&%s=%lld", key,
			                       (long long)json_integer_value(v));
	}
	for (size_t i = 0; i < a->ci.io.n_meta && tl < sizeof target; i++) {
		char enc[4096];
		if (cli_pct_encode(a->ci.io.meta[i], enc, sizeof enc) == 0)
			tl += (size_t)snprintf(target + tl, sizeof target - tl, "&meta=%s", enc);
	}
	json_decref(o);
	if (tl >= sizeof target) {
		if (f != stdin)
			fclose(f);
		return cli_usage_error("--meta values too long to send to the daemon");
	}
	if (!a->ci.quiet)
		fprintf(stderr, "%s: the index is served by pid %ld; adding through %s\n", cli_prog,
		        r->pid, r->url);
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	char *buf = NULL, *line = NULL;
	size_t len = 0, cap = 0, lcap = 0, requests = 0;
	ssize_t n;
	int rc = 0, eof = 0;
	while (!rc && !eof) {
		n = getline(&line, &lcap, f);
		eof = n < 0;
		/* send what is gathered when the next line would overflow it, or at the end */
		if (len && (eof || len + (size_t)n > REMOTE_BATCH)) {
			json_t *reply = NULL;
			rc = cli_remote_call(r, "POST", target, "application/x-ndjson", buf, len, &reply);
			if (!rc) {
				cli_remote_stats(reply, &st);
				json_t *b = json_object_get(reply, "bad_lines");
				if (json_is_integer(b)) {
					fprintf(stderr, "%s: skipped %s\n", cli_prog,
					        json_string_value(json_object_get(reply, "first_bad")));
				}
				requests++;
			}
			json_decref(reply);
			len = 0;
		}
		if (eof || rc)
			break;
		if (len + (size_t)n > cap) {
			size_t nc = cap * 2 > len + (size_t)n ? cap * 2 : len + (size_t)n;
			char *nb = realloc(buf, nc);
			if (!nb) {
				fprintf(stderr, "%s: out of memory\n", cli_prog);
				rc = 2;
				break;
			}
			buf = nb;
			cap = nc;
		}
		memcpy(buf + len, line, (size_t)n);
		len += (size_t)n;
	}
	if (!rc && ferror(f)) {
		fprintf(stderr, "%s: %s: %s\n", cli_prog, a->jsonl, strerror(errno));
		rc = 2;
	}
	free(buf);
	free(line);
	if (f != stdin)
		fclose(f);
	if (requests)
		cli_ingest_report(&a->ci, &st, "added");
	if (rc && requests)
		fprintf(stderr, "%s: the first %zu request%s committed; the rest did not\n", cli_prog,
		        requests, requests == 1 ? " was" : "s were");
	return rc;
}

/* The long step a commit may take, said on a terminal: the corpus
 * embedder's first training, over every chunk (as long as indexing took,
 * about). */
static void say_training(fathom_index *ix)
{
	fathom_stats st = FATHOM_STATS_INIT;
	if (!isatty(2) || fathom_stats_get(&st, ix) != 0)
		return;
	if (strcmp(st.embedder, "corpus") == 0 && st.vector_chunks == 0)
		fprintf(stderr, "%s: training the corpus embedder on the index's chunks, then "
		                "embedding them\n", cli_prog);
}

/* The steps of a long commit, on one line of a terminal that erases
 * itself. */
static void on_step(void *ctx, const char *step, uint64_t done, uint64_t total)
{
	(void)ctx;
	if (total > 1)
		fprintf(stderr, "\r\033[K  %s: %llu of %llu chunks", step, (unsigned long long)done,
		        (unsigned long long)total);
	else
		fprintf(stderr, "\r\033[K  %s%s", step, done == total ? ": done" : "...");
	fflush(stderr);
}

static void cli_step_progress(fathom_index *ix)
{
	if (cli_term_ok(2))
		fathom_set_step_progress(ix, on_step, NULL);
}

static void cli_step_progress_end(fathom_index *ix)
{
	if (cli_term_ok(2))
		fprintf(stderr, "\r\033[K");
	fathom_set_step_progress(ix, NULL, NULL);
}

static int commit_and_close(fathom_index *ix, int rc)
{
	if (!rc) {
		say_training(ix);
		cli_step_progress(ix);
		rc = fathom_commit(ix);
		cli_step_progress_end(ix);
		if (rc)
			cli_die_api(rc, "commit failed");
	} else {
		fathom_rollback(ix);
	}
	fathom_close(ix);
	return rc ? 2 : 0;
}

/* ---- fathom index --watch ------------------------------------------------------ */

typedef struct watch_ctx {
	ingest_args *a;
	char **paths;
	int n;
	fathom_ingest_stats st;
	int through;             /* the last batch went to a daemon */
} watch_ctx;

static _Atomic int watch_stop;

static void on_stop_signal(int sig)
{
	(void)sig;
	atomic_store(&watch_stop, 1);
}

/* One batch: the writer is opened for it alone, so other writers can go on
 * between batches; the same paths are indexed again (only what changed is
 * read) and committed. When a daemon holds the lock, the batch goes to it. */
static int watch_apply(void *ctx, size_t events)
{
	(void)events;
	watch_ctx *wc = ctx;
	ingest_args *a = wc->a;
	fathom_ingest_stats_init(&wc->st, FATHOM_INGEST_STATS_VERSION);
	int quiet = a->ci.quiet;
	a->ci.quiet = 1;   /* no progress line per batch */
	fathom_index *ix;
	cli_remote r;
	int rc = cli_open_write(&ix, a->index, FATHOM_OPEN_WRITE, NULL, &r);
	wc->through = rc == 1;
	if (rc == 1)
		rc = remote_index_post(&r, a, wc->paths, wc->n, &wc->st); else if (rc == 0) {
		int committed;
		rc = sv_watch_reindex(ix, (const char *const *)wc->paths, (size_t)wc->n, &a->ci.io,
		                      &wc->st, &committed);
		if (rc)
			cli_die_api(rc, "watch: re-indexing failed, nothing committed; trying again");
		fathom_close(ix);
	}
	a->ci.quiet = quiet;
	return rc;
}

static void watch_done(void *ctx, size_t events, double delay, int rc)
{
	watch_ctx *wc = ctx;
	if (wc->a->ci.quiet || rc || (!wc->st.files_indexed && !wc->st.files_deleted))
		return;
	fprintf(stderr, "%s: watch: %zu change%s: %llu re-indexed, %llu removed%s; searchable "
	                "%.2f s after the first\n", cli_prog, events, events == 1 ? "" : "s",
	        (unsigned long long)wc->st.files_indexed, (unsigned long long)wc->st.files_deleted,
	        wc->through ? " (through the daemon)" : "", delay);
}

static int watch_loop(ingest_args *a, char **paths, int n)
{
	sv_watch *w;
	char err[512];
	if (sv_watch_open(&w, (const char *const *)paths, (size_t)n, a->index, err, sizeof err)) {
		fprintf(stderr, "%s: --watch: %s\n", cli_prog, err);
		return 2;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;   /* no SA_RESTART: poll returns */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!a->ci.quiet)
		fprintf(stderr, "%s: watching %zu folder%s for changes (Ctrl-C stops)\n", cli_prog,
		        sv_watch_folders(w), sv_watch_folders(w) == 1 ? "" : "s");
	watch_ctx wc = { a, paths, n, FATHOM_INGEST_STATS_INIT, 0 };
	sv_watch_opts o = { a->debounce, a->debounce * 10 > 2 ? a->debounce * 10 : 2, watch_apply,
	                    watch_done, &wc };
	int rc = sv_watch_run(w, &o, &watch_stop);
	sv_watch_close(w);
	if (rc)
		fprintf(stderr, "%s: --watch: inotify failed: %s\n", cli_prog, strerror(errno));
	else if (!a->ci.quiet)
		fprintf(stderr, "%s: watch stopped\n", cli_prog);
	return rc ? 2 : 0;
}

/* Keep the paths that exist (reporting the others, which are not indexed):
 * one mistyped path must not cost the run of the rest. Moves them to the
 * front of paths; their number. */
static int existing_paths(char **paths, int n)
{
	int kept = 0;
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0) {
			fprintf(stderr, "%s: %s: %s (not indexed)\n", cli_prog, paths[i], strerror(errno));
			continue;
		}
		paths[kept++] = paths[i];
	}
	return kept;
}

/* A first run that fails leaves no index behind: remove what it created
 * in the folder it made (its files, then the folder). */
static void remove_new_index(const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

/* The end of a local index or add: rc, the ingest's result, reported
 * (failed, or the counts as done), then commit or rollback; a first run
 * that fails removes the index it created. 0, or 2. */
static int finish_ingest(fathom_index *ix, int rc, const ingest_args *a, int existed,
                         const fathom_ingest_stats *st, const char *failed, const char *done)
{
	if (rc)
		cli_die_api(rc, failed);
	else
		cli_ingest_report(&a->ci, st, done);
	rc = commit_and_close(ix, rc);
	if (rc && !existed)
		remove_new_index(a->index);
	return rc;
}

/* --embedder SPEC: the settings it stands for, set before the run. */
static int set_embedder(fathom_index *ix, const char *spec)
{
	if (!spec)
		return 0;
	const char *colon = strchr(spec, ':');
	size_t kl = colon ? (size_t)(colon - spec) : strlen(spec);
	char kind[16];
	if (kl == 0 || kl >= sizeof kind)
		return cli_usage_error("--embedder wants none, corpus, static:PATH or remote:URL"), 2;
	memcpy(kind, spec, kl);
	kind[kl] = '\0';
	const char *arg = colon ? colon + 1 : "";
	int rc = 0;
	if (strcmp(kind, "static") == 0) {
		char real[PATH_MAX];
		if (!*arg)
			return cli_usage_error("--embedder static:PATH needs a vector file or model folder"), 2;
		/* the setting outlives this folder: keep the absolute path */
		rc = fathom_config_set(ix, "embedder.file", realpath(arg, real) ? real : arg);
	} else if (strcmp(kind, "remote") == 0) {
		if (!*arg)
			return cli_usage_error("--embedder remote:URL needs the service's URL"), 2;
		rc = fathom_config_set(ix, "embedder.url", arg);
	} else if (*arg) {
		return cli_usage_error("--embedder %s takes no argument", kind), 2;
	}
	if (!rc)
		rc = fathom_config_set(ix, "embedder", kind);
	if (rc) {
		fprintf(stderr, "%s: --embedder: %s\n", cli_prog, fathom_errmsg());
		return 2;
	}
	return 0;
}

int cmd_index(int argc, char **argv)
{
	ingest_args a;
	int rc = parse_ingest(&a, argc, argv);
	if (rc)
		return rc;
	if (optind >= argc)
		return cli_usage_error("index: which files or folders? (fathom index PATH...)");
	char **paths = argv + optind;
	int given = argc - optind, n = existing_paths(paths, given);
	if (n == 0) {
		fprintf(stderr, "%s: nothing to index\n", cli_prog);
		return 2;
	}
	/* exit 2 when a path was missing, once the rest is indexed */
	int partial = n < given ? 2 : 0;
	struct stat ist;
	int existed = stat(a.index, &ist) == 0;
	fathom_index *ix;
	cli_remote r;
	if ((rc = cli_open_write(&ix, a.index, FATHOM_OPEN_CREATE, a.stem, &r)) != 0) {
		if (rc == 1)
			rc = remote_index(&r, &a, paths, n);
		if (rc == 0 && a.watch)
			return watch_loop(&a, paths, n);
		return rc ? 2 : partial;
	}
	if ((rc = set_embedder(ix, a.embedder)) != 0) {
		fathom_close(ix);
		return rc;
	}
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	rc = fathom_index_paths(ix, (const char *const *)paths, (size_t)n, &a.ci.io, &st);
	rc = finish_ingest(ix, rc, &a, existed, &st, "index failed, nothing committed", "indexed");
	if (rc == 0 && a.watch)
		return watch_loop(&a, paths, n);
	return rc ? rc : partial;
}

int cmd_add(int argc, char **argv)
{
	ingest_args a;
	int rc = parse_ingest(&a, argc, argv);
	if (rc)
		return rc;
	if (!a.jsonl) {
		if (optind < argc)
			a.jsonl = argv[optind++];
		else
			return cli_usage_error("add: --jsonl FILE (or - for stdin) is required");
	}
	if (optind < argc)
		return cli_usage_error("add: unexpected argument '%s'", argv[optind]);
	struct stat ist;
	int existed = stat(a.index, &ist) == 0;
	fathom_index *ix;
	cli_remote r;
	if ((rc = cli_open_write(&ix, a.index, FATHOM_OPEN_CREATE, a.stem, &r)) != 0)
		return rc == 1 ? remote_add(&r, &a) : 2;
	if ((rc = set_embedder(ix, a.embedder)) != 0) {
		fathom_close(ix);
		return rc;
	}
	fathom_ingest_stats st = FATHOM_INGEST_STATS_INIT;
	rc = fathom_add_jsonl(ix, a.jsonl, &a.ci.io, &st);
	return finish_ingest(ix, rc, &a, existed, &st, "add failed, nothing committed", "added");
}

typedef struct chunk_out {
	FILE *f;
} chunk_out;

static int print_chunk(void *ctx, const fathom_chunk_info *c)
{
	chunk_out *o = ctx;
	char id[4200];
	snprintf(id, sizeof id, "%s#%u", c->path, c->order);
	fputs("{\"id\":", o->f);
	cli_json_cstr(o->f, id);
	fputs(",\"title\":", o->f);
	cli_json_cstr(o->f, c->path);
	fputs(",\"text\":", o->f);
	cli_json_str(o->f, c->text, c->len);
	fputs(",\"path\":", o->f);
	cli_json_cstr(o->f, c->path);
	fprintf(o->f, ",\"lines\":[%u,%u],\"lang\":", c->line_start, c->line_end);
	cli_json_cstr(o->f, c->lang);
	fputs(",\"headings\":", o->f);
	cli_json_cstr(o->f, c->headings);
	fputs("}\n", o->f);
	return ferror(o->f) ? 1 : 0;
}

int cmd_chunk(int argc, char **argv)
{
	ingest_args a;
	int rc = parse_ingest(&a, argc, argv);
	if (rc)
		return rc;
	if (optind >= argc)
		return cli_usage_error("chunk: which files or folders?");
	a.ci.quiet = 1;
	chunk_out o = { stdout };
	rc = fathom_chunk_paths((const char *const *)argv + optind, (size_t)(argc - optind),
	                        &a.ci.io, print_chunk, &o);
	if (rc) {
		cli_die_api(rc, "chunk failed");
		return 2;
	}
	return fflush(stdout) ? 2 : 0;
}

int cmd_delete(int argc, char **argv)
{
	ingest_args a;
	int rc = parse_ingest(&a, argc, argv);
	if (rc)
		return rc;
	if (optind >= argc)
		return cli_usage_error("delete: which documents?");
	fathom_index *ix;
	cli_remote r;
	if ((rc = cli_open_write(&ix, a.index, FATHOM_OPEN_WRITE, NULL, &r)) == 1) {
		/* one request, one commit, per document */
		rc = 0;
		for (int i = optind; i < argc && !rc; i++) {
			char target[4200] = "/documents/";
			json_t *reply = NULL;
			if (cli_pct_encode(argv[i], target + 11, sizeof target - 11))
				return cli_usage_error("document id too long: %.64s...", argv[i]);
			rc = cli_remote_call(&r, "DELETE", target, NULL, NULL, 0, &reply);
			json_decref(reply);
		}
		return rc;
	}
	if (rc)
		return 2;
	for (int i = optind; i < argc && !rc; i++) {
		rc = fathom_delete_doc(ix, argv[i]);
		if (rc)
			cli_die_api(rc, argv[i]);
	}
	return commit_and_close(ix, rc);
}

int cmd_optimize(int argc, char **argv)
{
	ingest_args a;
	int rc = parse_ingest(&a, argc, argv);
	if (rc)
		return rc;
	if (optind < argc)
		return cli_usage_error("optimize: unexpected argument '%s'", argv[optind]);
	fathom_index *ix;
	cli_remote r;
	if ((rc = cli_open_write(&ix, a.index, FATHOM_OPEN_WRITE, NULL, &r)) == 1) {
		json_t *reply = NULL;
		if ((rc = cli_remote_post(&r, "/optimize", json_object(), &reply)) == 0 && !a.ci.quiet)
			printf("optimized through %s: %llu segment%s, %.1f MiB (was %llu, %.1f MiB)\n", r.url,
			       (unsigned long long)json_integer_value(json_object_get(reply, "segments")),
			       json_integer_value(json_object_get(reply, "segments")) == 1 ? "" : "s",
			       (double)json_integer_value(json_object_get(reply, "bytes")) / 1048576.0,
			       (unsigned long long)json_integer_value(json_object_get(reply, "segments_before")),
			       (double)json_integer_value(json_object_get(reply, "bytes_before")) / 1048576.0);
		json_decref(reply);
		return rc;
	}
	if (rc)
		return 2;
	fathom_stats before = FATHOM_STATS_INIT, after = FATHOM_STATS_INIT;
	cli_step_progress(ix);
	if ((rc = fathom_stats_get(&before, ix)) == 0 && (rc = fathom_optimize(ix)) == 0)
		rc = fathom_stats_get(&after, ix);
	cli_step_progress_end(ix);
	if (rc) {
		cli_die_api(rc, "optimize");
		fathom_close(ix);
		return 2;
	}
	if (!a.ci.quiet)
		printf("optimized: %llu segment%s, %.1f MiB (was %llu, %.1f MiB)\n",
		       (unsigned long long)after.segments, after.segments == 1 ? "" : "s",
		       (double)after.bytes_total / 1048576.0, (unsigned long long)before.segments,
		       (double)before.bytes_total / 1048576.0);
	/* a corpus model retrained by this optimize: how far it moved */
	if (!a.ci.quiet && after.embedder_drift >= 0 &&
	    after.embedder_drift_generation == before.generation)
		printf("corpus embedder retrained: drift %.4f (mean change of the cosine between two "
		       "chunks, old model to new, over %llu pairs)\n",
		       after.embedder_drift, (unsigned long long)after.embedder_drift_pairs);
	fathom_close(ix);
	return 0;
}
