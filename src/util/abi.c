/*
 * abi.c — the versions of the public structs, in one table.
 *
 * Every struct that crosses the API by pointer starts with `unsigned
 * version`. For options structs the caller says which fields it has; for
 * output structs (fathom_stats, ...) which fields it has room for, and the
 * library fills exactly those. A struct only grows at its end, so version
 * v of a struct is its first size[v] bytes. The fathom_*_init() functions
 * are the _INIT macros for callers that cannot use a C initializer (other
 * languages): like libgit2's git_*_options_init(), they take the version
 * the caller was built with and refuse one this library does not take.
 */
#include <stddef.h>

#include "util/util.h"

typedef struct struct_info {
	const char *name;
	unsigned current;
	size_t size[8];          /* by version; 0: a version not taken */
} struct_info;

/* Options and output structs alike. For an options struct, an older
 * version listed here is one whose layout is a prefix of the current one
 * and that the functions reading the struct accept (kept in step with
 * their checks), so an _init() never makes a struct that is refused. */
static const struct_info structs[FA_NSTRUCTS] = {
	[FA_OPEN_OPTS] = { "fathom_open_opts", FATHOM_OPEN_OPTS_VERSION,
	                   { 0, sizeof(fathom_open_opts) } },
	[FA_INGEST_OPTS] = { "fathom_ingest_opts", FATHOM_INGEST_OPTS_VERSION,
	                     { 0, offsetof(fathom_ingest_opts, ident_min_len),
	                       offsetof(fathom_ingest_opts, grep_max_file_size),
	                       offsetof(fathom_ingest_opts, threads),
	                       offsetof(fathom_ingest_opts, confine_root),
	                       offsetof(fathom_ingest_opts, ignore),
	                       sizeof(fathom_ingest_opts) } },
	/* versions 1 and 2 held the field weights inline, after match: no
	 * prefix of version 3, so fathom_search reads them by their own
	 * layout (q_search_opts_upgrade), and no _init makes them */
	[FA_SEARCH_OPTS] = { "fathom_search_opts", FATHOM_SEARCH_OPTS_VERSION,
	                     { 0, 0, 0, offsetof(fathom_search_opts, strict),
	                       offsetof(fathom_search_opts, mode), offsetof(fathom_search_opts, mode),
	                       sizeof(fathom_search_opts) } },
	/* versions 1 and 2 of fathom_grep_opts were never taken by a release
	 * that had version 3 */
	[FA_GREP_OPTS] = { "fathom_grep_opts", FATHOM_GREP_OPTS_VERSION,
	                   { 0, 0, 0, sizeof(fathom_grep_opts) } },
	[FA_INGEST_STATS] = { "fathom_ingest_stats", FATHOM_INGEST_STATS_VERSION,
	                      { 0, sizeof(fathom_ingest_stats) } },
	[FA_STATS] = { "fathom_stats", FATHOM_STATS_VERSION,
	               { 0, offsetof(fathom_stats, embedder), offsetof(fathom_stats, bytes_vectors),
	                 sizeof(fathom_stats) } },
	[FA_GREP_STATS] = { "fathom_grep_stats", FATHOM_GREP_STATS_VERSION,
	                    { 0, sizeof(fathom_grep_stats) } },
	[FA_JSON_OPTS] = { "fathom_json_opts", FATHOM_JSON_OPTS_VERSION,
	                   { 0, sizeof(fathom_json_opts) } },
	[FA_GET_INFO] = { "fathom_get_info", FATHOM_GET_INFO_VERSION,
	                  { 0, sizeof(fathom_get_info) } },
};

/* A struct's new version needs its row here: the size of each older
 * version, or 0 where its layout is not a prefix of this one (a version
 * the library then reads some other way, or not at all). These stop the
 * build until the row is updated. */
_Static_assert(FATHOM_OPEN_OPTS_VERSION == 1, "a new fathom_open_opts version: update structs[]");
_Static_assert(FATHOM_INGEST_OPTS_VERSION == 6, "a new fathom_ingest_opts version: update structs[]");
_Static_assert(FATHOM_SEARCH_OPTS_VERSION == 6, "a new fathom_search_opts version: update structs[]");
_Static_assert(FATHOM_GREP_OPTS_VERSION == 3, "a new fathom_grep_opts version: update structs[]");
_Static_assert(FATHOM_INGEST_STATS_VERSION == 1, "a new fathom_ingest_stats version: update structs[]");
_Static_assert(FATHOM_STATS_VERSION == 3, "a new fathom_stats version: update structs[]");
_Static_assert(FATHOM_GREP_STATS_VERSION == 1, "a new fathom_grep_stats version: update structs[]");
_Static_assert(FATHOM_JSON_OPTS_VERSION == 1, "a new fathom_json_opts version: update structs[]");
_Static_assert(FATHOM_GET_INFO_VERSION == 1, "a new fathom_get_info version: update structs[]");

/* The version is the first member of each. */
_Static_assert(offsetof(fathom_open_opts, version) == 0, "version first");
_Static_assert(offsetof(fathom_ingest_opts, version) == 0, "version first");
_Static_assert(offsetof(fathom_search_opts, version) == 0, "version first");
_Static_assert(offsetof(fathom_grep_opts, version) == 0, "version first");
_Static_assert(offsetof(fathom_ingest_stats, version) == 0, "version first");
_Static_assert(offsetof(fathom_stats, version) == 0, "version first");
_Static_assert(offsetof(fathom_grep_stats, version) == 0, "version first");
_Static_assert(offsetof(fathom_json_opts, version) == 0, "version first");
_Static_assert(offsetof(fathom_get_info, version) == 0, "version first");
_Static_assert(FATHOM_SKIP_BAD_GZIP < FATHOM_SKIP_SLOTS, "skip reasons fit skipped_by_reason");

size_t fa_struct_size(int which, unsigned version)
{
	const struct_info *s = &structs[which];
	if (version == 0 || version > s->current || version >= FA_ARRAY_LEN(s->size))
		return 0;
	return s->size[version];
}

static int bad_version(int which, unsigned version)
{
	return fa_err(FATHOM_EINVAL, "%s version %u: this library takes up to %u",
	              structs[which].name, version, structs[which].current);
}

int fa_struct_check(int which, const void *p)
{
	unsigned version = *(const unsigned *)p;
	return fa_struct_size(which, version) ? 0 : bad_version(which, version);
}

void fa_struct_copy_out(int which, void *dst, const void *src)
{
	unsigned version = *(const unsigned *)dst;
	size_t n = fa_struct_size(which, version);
	memcpy(dst, src, n);
	memcpy(dst, &version, sizeof version);
}

/* Fill p with the defaults of a version: the _INIT macro's fields that the
 * version has. */
static int init_from(int which, void *p, unsigned version, const void *tmpl)
{
	fa_err_clear();
	if (!p)
		return fa_err(FATHOM_EINVAL, "no %s to initialise", structs[which].name);
	size_t n = fa_struct_size(which, version);
	if (!n)
		return bad_version(which, version);
	memcpy(p, tmpl, n);
	memcpy(p, &version, sizeof version);
	return 0;
}

int fathom_open_opts_init(fathom_open_opts *opts, unsigned version)
{
	static const fathom_open_opts tmpl = FATHOM_OPEN_OPTS_INIT;
	return init_from(FA_OPEN_OPTS, opts, version, &tmpl);
}

/* Before version 6 of fathom_ingest_opts and 5 of fathom_search_opts
 * nothing was unset: their _INIT held the built-in defaults, which these
 * templates keep, so an older version's _init() gives what it gave. */
int fathom_ingest_opts_init(fathom_ingest_opts *opts, unsigned version)
{
	static const fathom_ingest_opts tmpl = FATHOM_INGEST_OPTS_INIT;
	fathom_ingest_opts old = tmpl;
	old.max_file_size = 4u << 20;
	old.grep_max_file_size = 256u << 20;
	return init_from(FA_INGEST_OPTS, opts, version, version < 6 ? &old : &tmpl);
}

int fathom_search_opts_init(fathom_search_opts *opts, unsigned version)
{
	static const fathom_search_opts tmpl = FATHOM_SEARCH_OPTS_INIT;
	fathom_search_opts old = tmpl;
	old.k = 10;
	old.match = FATHOM_MATCH_AUTO;
	old.k1 = 1.5f;
	old.b = 0.9f;
	old.snippet_bytes = 240;
	return init_from(FA_SEARCH_OPTS, opts, version, version < 5 ? &old : &tmpl);
}

int fathom_grep_opts_init(fathom_grep_opts *opts, unsigned version)
{
	static const fathom_grep_opts tmpl = FATHOM_GREP_OPTS_INIT;
	return init_from(FA_GREP_OPTS, opts, version, &tmpl);
}

int fathom_ingest_stats_init(fathom_ingest_stats *st, unsigned version)
{
	static const fathom_ingest_stats tmpl = FATHOM_INGEST_STATS_INIT;
	return init_from(FA_INGEST_STATS, st, version, &tmpl);
}

int fathom_stats_init(fathom_stats *st, unsigned version)
{
	static const fathom_stats tmpl = FATHOM_STATS_INIT;
	return init_from(FA_STATS, st, version, &tmpl);
}

int fathom_grep_stats_init(fathom_grep_stats *st, unsigned version)
{
	static const fathom_grep_stats tmpl = FATHOM_GREP_STATS_INIT;
	return init_from(FA_GREP_STATS, st, version, &tmpl);
}

int fathom_json_opts_init(fathom_json_opts *opts, unsigned version)
{
	static const fathom_json_opts tmpl = FATHOM_JSON_OPTS_INIT;
	return init_from(FA_JSON_OPTS, opts, version, &tmpl);
}

int fathom_get_info_init(fathom_get_info *info, unsigned version)
{
	static const fathom_get_info tmpl = FATHOM_GET_INFO_INIT;
	return init_from(FA_GET_INFO, info, version, &tmpl);
}
