/* ingest_cmds.c — fathom index, add, chunk, delete. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

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
		fprintf(stderr, "skip %s: %s\n", path, fathom_skip_reason_name(reason));
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
	ci->tty = isatty(2);
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
				human_bytes(cap, sizeof cap, (double)ci->io.max_file_size);
				fprintf(stderr, " (%s; --max-size)", cap);
			}
			first = 0;
		}
		fprintf(stderr, "%s\n", ci->verbose ? "" : " (-v lists them)");
	}
}

enum { OPT_META = 2000, OPT_MAXSIZE, OPT_CTARGET, OPT_COVERLAP, OPT_CMAX, OPT_NOIGNORE,
       OPT_NOFOLLOW, OPT_KEEPMISSING, OPT_STEM, OPT_JSONL, OPT_INDEX, OPT_IDMIN, OPT_IDMAX,
       OPT_GREPONLY, OPT_GREPMAX };

static const struct option ingest_longopts[] = {
	{ "index", required_argument, NULL, OPT_INDEX },
	{ "meta", required_argument, NULL, OPT_META },
	{ "max-size", required_argument, NULL, OPT_MAXSIZE },
	{ "grep-only", no_argument, NULL, OPT_GREPONLY },
	{ "grep-max-size", required_argument, NULL, OPT_GREPMAX },
	{ "chunk-target", required_argument, NULL, OPT_CTARGET },
	{ "chunk-overlap", required_argument, NULL, OPT_COVERLAP },
	{ "chunk-max", required_argument, NULL, OPT_CMAX },
	{ "ident-min-len", required_argument, NULL, OPT_IDMIN },
	{ "ident-max", required_argument, NULL, OPT_IDMAX },
	{ "no-ignore", no_argument, NULL, OPT_NOIGNORE },
	{ "no-follow", no_argument, NULL, OPT_NOFOLLOW },
	{ "keep-missing", no_argument, NULL, OPT_KEEPMISSING },
	{ "stem", required_argument, NULL, OPT_STEM },
	{ "jsonl", required_argument, NULL, OPT_JSONL },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ NULL, 0, NULL, 0 },
};

typedef struct ingest_args {
	cli_ingest ci;
	const char *index, *stem, *jsonl;
} ingest_args;

static int parse_ingest(ingest_args *a, int argc, char **argv, int allow_jsonl)
{
	uint64_t v;
	int c;
	cli_ingest_init(&a->ci);
	a->index = cli_default_index();
	a->stem = NULL;
	a->jsonl = NULL;
	optind = 1;
	while ((c = getopt_long(argc, argv, "vq", ingest_longopts, NULL)) != -1) {
		switch (c) {
		case OPT_INDEX: a->index = optarg; break;
		case OPT_META:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return cli_usage_error("--meta wants KEY=VALUE, got '%s'", optarg);
			if (a->ci.io.n_meta >= 64)
				return cli_usage_error("at most 64 --meta options");
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
		case OPT_CTARGET:
		case OPT_COVERLAP:
		case OPT_IDMIN:
			if (cli_parse_u64(optarg, 1, 64, &v))
				return cli_usage_error("--ident-min-len wants 1 to 64, got '%s'", optarg);
			a->ci.io.ident_min_len = (uint32_t)v;
			break;
		case OPT_IDMAX:
			if (cli_parse_u64(optarg, 1, 1000, &v))
				return cli_usage_error("--ident-max wants 1 to 1000, got '%s'", optarg);
			a->ci.io.ident_max = (uint32_t)v;
			break;
		case OPT_CMAX:
			if (cli_parse_u64(optarg, 0, 1u << 30, &v))
				return cli_usage_error("chunk sizes are byte counts up to 1G, got '%s'", optarg);
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
		case OPT_JSONL:
			if (!allow_jsonl)
				return cli_usage_error("--jsonl belongs to 'fathom add'");
			a->jsonl = optarg;
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

static int commit_and_close(fathom_index *ix, int rc)
{
	if (!rc) {
		rc = fathom_commit(ix);
		if (rc)
			cli_die_api(rc, "commit failed");
	} else {
		fathom_rollback(ix);
	}
	fathom_close(ix);
	return rc ? 2 : 0;
}

int cmd_index(int argc, char **argv)
{
	ingest_args a;
	int rc = parse_ingest(&a, argc, argv, 0);
	if (rc)
		return rc;
	if (optind >= argc)
		return cli_usage_error("index: which files or folders? (fathom index PATH...)");
	fathom_index *ix;
	if (cli_open(&ix, a.index, FATHOM_OPEN_CREATE, a.stem))
		return 2;
	fathom_ingest_stats st;
	rc = fathom_index_paths(ix, (const char *const *)argv + optind, (size_t)(argc - optind),
	                        &a.ci.io, &st);
	cli_ingest_report(&a.ci, &st, "indexed");
	if (rc)
		cli_die_api(rc, "index failed, nothing committed");
	return commit_and_close(ix, rc);
}

int cmd_add(int argc, char **argv)
{
	ingest_args a;
	int rc = parse_ingest(&a, argc, argv, 1);
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
	fathom_index *ix;
	if (cli_open(&ix, a.index, FATHOM_OPEN_CREATE, a.stem))
		return 2;
	fathom_ingest_stats st;
	rc = fathom_add_jsonl(ix, a.jsonl, &a.ci.io, &st);
	cli_ingest_report(&a.ci, &st, "added");
	if (rc)
		cli_die_api(rc, "add failed, nothing committed");
	return commit_and_close(ix, rc);
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
	int rc = parse_ingest(&a, argc, argv, 0);
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
	int rc = parse_ingest(&a, argc, argv, 0);
	if (rc)
		return rc;
	if (optind >= argc)
		return cli_usage_error("delete: which documents?");
	fathom_index *ix;
	if (cli_open(&ix, a.index, FATHOM_OPEN_WRITE, NULL))
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
	int rc = parse_ingest(&a, argc, argv, 0);
	if (rc)
		return rc;
	if (optind < argc)
		return cli_usage_error("optimize: unexpected argument '%s'", argv[optind]);
	fathom_index *ix;
	if (cli_open(&ix, a.index, FATHOM_OPEN_WRITE, NULL))
		return 2;
	fathom_stats before, after;
	if ((rc = fathom_stats_get(&before, ix)) == 0 && (rc = fathom_optimize(ix)) == 0)
		rc = fathom_stats_get(&after, ix);
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
	fathom_close(ix);
	return 0;
}
