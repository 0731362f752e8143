/*
 * settings.c — per-index settings (`fathom config`): the one table of
 * them, their checks, their storage in the manifest, and the step that
 * fills a search's or an indexing run's unset options from them.
 *
 * The table (rows[]) is the only place a setting's name, type, default and
 * bounds are written; fathom_setting_at() publishes it, so validation,
 * `fathom config`, its help, the docs and the daemon read the same rows. A
 * new setting (the embedder's, say: a STRING) is one row, one enum entry,
 * and the code that reads it.
 *
 * Stored as the manifest's named value "settings" (index/payload.c), so a
 * change commits atomically with everything else in its commit:
 *
 *   u8 version (1), then per setting that is set: its name, a NUL, its
 *   value as text (canonical: what fathom_config_get gives), a NUL.
 *
 * A name this build does not know, or a value it does not accept (a newer
 * build's wider range), is kept as it is when another setting changes and
 * read as unset. A record that breaks the layout (no NUL, a bad name, a
 * name twice) is FATHOM_ECORRUPT: the manifest's checksum passed, so a
 * writer wrote it so.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "ingest/ingest.h"
#include "query/query.h"

#define SETTINGS_KEY "settings"
#define SETTINGS_FORMAT 1u
#define API_MAX_SIZE_SETTING 1125899906842624.0   /* 2^50 bytes: exact as a double */
#define API_IGNORE_MAX_BYTES 16384.0

/* Rows, in the order of enum api_setting (api.h). Defaults are the
 * built-in values of query.h and fathom.h's _INIT (test_settings checks
 * that each parses to the value a search or a run takes unset). */
static const fathom_setting_info rows[API_NSETTINGS] = {
	[API_S_K] = { "k", FATHOM_SETTING_INT, "10", 1, Q_MAX_K, NULL,
	              "results per search (search -k)" },
	[API_S_MATCH] = { "match", FATHOM_SETTING_CHOICE, "auto", 0, 0, "auto all any",
	                  "matching mode: auto, all words, any word (search --match)" },
	[API_S_K1] = { "k1", FATHOM_SETTING_NUMBER, "1.5", 0, Q_MAX_K1, NULL,
	               "BM25 term-frequency saturation (search --k1)" },
	[API_S_B] = { "b", FATHOM_SETTING_NUMBER, "0.9", 0, 1, NULL,
	              "BM25 length normalisation (search --b)" },
	[API_S_W_PATH] = { "weight.path", FATHOM_SETTING_NUMBER, "3", 0, Q_MAX_FIELD_WEIGHT, NULL,
	                   "BM25F weight of the path field (search --weight path=W)" },
	[API_S_W_TITLE] = { "weight.title", FATHOM_SETTING_NUMBER, "2.5", 0, Q_MAX_FIELD_WEIGHT,
	                    NULL, "BM25F weight of the title field" },
	[API_S_W_HEADINGS] = { "weight.headings", FATHOM_SETTING_NUMBER, "2", 0,
	                       Q_MAX_FIELD_WEIGHT, NULL, "BM25F weight of the heading trail" },
	[API_S_W_TAGS] = { "weight.tags", FATHOM_SETTING_NUMBER, "2", 0, Q_MAX_FIELD_WEIGHT, NULL,
	                   "BM25F weight of the tags field" },
	[API_S_W_BODY] = { "weight.body", FATHOM_SETTING_NUMBER, "1", 0, Q_MAX_FIELD_WEIGHT, NULL,
	                   "BM25F weight of the body field" },
	[API_S_SNIPPET] = { "snippet-bytes", FATHOM_SETTING_INT, "240", 0, Q_SNIPPET_MAX, NULL,
	                    "target snippet length in bytes (0: none)" },
	[API_S_IGNORE] = { "ignore", FATHOM_SETTING_PATTERNS, "", 0, API_IGNORE_MAX_BYTES, NULL,
	                   ".gitignore lines for index and watch, as if in a .gitignore in\n"
	                   "each PATH indexed (index --no-ignore turns them off)" },
	[API_S_MAX_SIZE] = { "max-size", FATHOM_SETTING_INT, "4194304", 1, API_MAX_SIZE_SETTING,
	                     NULL, "bytes: larger files are indexed for grep alone (index --max-size)" },
	[API_S_GREP_MAX_SIZE] = { "grep-max-size", FATHOM_SETTING_INT, "268435456", 0,
	                          API_MAX_SIZE_SETTING, NULL,
	                          "bytes: larger files are skipped; 0: none over max-size\n"
	                          "(index --grep-max-size)" },
	[API_S_EMBEDDER] = { "embedder", FATHOM_SETTING_CHOICE, "none", 0, 0,
	                     "none corpus static remote external",
	                     "what embeds chunks and queries into vectors: none (lexical only),\n"
	                     "corpus (trained on the index's own text), static (embedder.file),\n"
	                     "remote (embedder.url), external (vectors come with the documents)" },
	[API_S_EMBED_FILE] = { "embedder.file", FATHOM_SETTING_STRING, "", 0, 4095, NULL,
	                       "static: word vectors (GloVe, word2vec text or binary, fastText .vec),\n"
	                       "or a Model2Vec model folder (model.safetensors, tokenizer.json)" },
	[API_S_EMBED_URL] = { "embedder.url", FATHOM_SETTING_STRING, "", 0, 4095, NULL,
	                      "remote: an OpenAI-compatible embeddings URL (.../v1)" },
	[API_S_EMBED_MODEL] = { "embedder.model", FATHOM_SETTING_STRING, "", 0, 255, NULL,
	                        "remote: the model name sent; external: the model's name" },
	[API_S_EMBED_KEY_ENV] = { "embedder.key-env", FATHOM_SETTING_STRING, "FATHOM_EMBED_API_KEY",
	                          0, 255, NULL,
	                          "remote: the environment variable holding the API key" },
	[API_S_EMBED_SEED] = { "embedder.seed", FATHOM_SETTING_INT, "24301", 0, 4294967295.0, NULL,
	                       "corpus: the seed of the training's random projection, read when it\n"
	                       "trains (the first commit, optimize); seeds move hybrid nDCG@10 by\n"
	                       "about 0.002 (docs/BENCHMARKS.md)" },
	[API_S_MODE] = { "mode", FATHOM_SETTING_CHOICE, "auto", 0, 0,
	                 "auto keyword semantic hybrid strict",
	                 "retrieval mode (search --mode); auto: hybrid with an embedder,\n"
	                 "keyword without" },
	[API_S_FUSION] = { "fusion", FATHOM_SETTING_CHOICE, "auto", 0, 0,
	                   "auto rrf convex rrf-weighted",
	                   "how hybrid fuses keyword and vector lists (search --fusion);\n"
	                   "auto: the measured default of the embedder" },
	[API_S_ALPHA] = { "fusion.alpha", FATHOM_SETTING_NUMBER, "0.8", 0, 1, NULL,
	                  "convex and rrf-weighted: the keyword list's weight (search --alpha)" },
	[API_S_MIN_SIM] = { "min-similarity", FATHOM_SETTING_NUMBER, "0", 0, 1, NULL,
	                    "vector hits below this cosine are dropped unless full text found\n"
	                    "them too (search --min-similarity)" },
	[API_S_HNSW_MIN] = { "hnsw.min-vectors", FATHOM_SETTING_INT, "2048", 1, 4294967295.0, NULL,
	                     "segments written with at least this many vectors get an HNSW\n"
	                     "graph; smaller ones are searched exactly (4294967295: never)" },
	[API_S_HNSW_M] = { "hnsw.m", FATHOM_SETTING_INT, "0", 0, 64, NULL,
	                   "HNSW links per node of the graphs written (0: by the segment's\n"
	                   "size, 16 below 100k vectors; 1 counts as 2)" },
	[API_S_HNSW_EFC] = { "hnsw.ef-construction", FATHOM_SETTING_INT, "0", 0, 10000, NULL,
	                     "HNSW beam while building a graph (0: by the segment's size)" },
	[API_S_HNSW_EFS] = { "hnsw.ef-search", FATHOM_SETTING_INT, "0", 0, 10000, NULL,
	                     "HNSW beam while searching, at least the hits fetched (0: the\n"
	                     "graph's own, 40 below 100k vectors)" },
	[API_S_VEC_STORAGE] = { "vector.storage", FATHOM_SETTING_CHOICE, "float32", 0, 0,
	                        "float32 int8 int8-rescore",
	                        "how segments written store chunk vectors: float32; int8 with a\n"
	                        "scale and an offset per row (a quarter of the bytes); or\n"
	                        "int8-rescore, the int8 rows walked and the float32 rows kept to\n"
	                        "score the graph's best again (float32's recall, 1.25x its bytes;\n"
	                        "optimize rewrites)" },
};

const fathom_setting_info *fathom_setting_at(size_t i)
{
	return i < API_NSETTINGS ? &rows[i] : NULL;
}

static int row_of(const char *name)
{
	for (int i = 0; name && i < API_NSETTINGS; i++)
		if (strcmp(rows[i].name, name) == 0)
			return i;
	return -1;
}

const fathom_setting_info *fathom_setting_find(const char *name)
{
	int i = row_of(name);
	return i < 0 ? NULL : &rows[i];
}

/* row_of for a public call: FATHOM_EINVAL (negative) naming what is not a
 * setting. */
static int known_row(const char *name)
{
	int r = row_of(name);
	return r >= 0 ? r : fa_err(FATHOM_EINVAL, "no setting '%s' (fathom config lists them)",
	                           name ? name : "");
}

/* ---- checking a value ------------------------------------------------------------ */

/* The shortest decimal that reads back as the same float (the type the
 * search options hold), so "0.90" is stored as "0.9". */
static void number_text(char *buf, size_t cap, double v)
{
	float f = (float)v;
	for (int prec = 1; prec <= 9; prec++) {
		snprintf(buf, cap, "%.*g", prec, (double)f);
		if ((float)strtod(buf, NULL) == f)
			return;
	}
}

/* Check text against row r: 0 with the canonical text in canon (cap
 * bytes; for patterns and strings the text itself, not copied: *canon_ptr)
 * and the number in *num; else FATHOM_EINVAL naming the setting and what it
 * takes. */
static int check_value(int r, const char *text, double *num, char *canon, size_t cap)
{
	const fathom_setting_info *s = &rows[r];
	size_t len = strlen(text);
	*num = 0;
	switch (s->type) {
	case FATHOM_SETTING_INT: {
		int ok = len > 0 && len <= 16;
		for (size_t i = 0; ok && i < len; i++)
			ok = text[i] >= '0' && text[i] <= '9';
		double v = ok ? strtod(text, NULL) : 0;
		if (!ok || v < s->min || v > s->max)
			return fa_err(FATHOM_EINVAL, "%s wants an integer from %.0f to %.0f, got '%.64s'",
			              s->name, s->min, s->max, text);
		*num = v;
		snprintf(canon, cap, "%.0f", v);
		return 0;
	}
	case FATHOM_SETTING_NUMBER: {
		int ok = len > 0 && len <= 32 && strspn(text, "0123456789.eE+-") == len;
		char *end = NULL;
		errno = 0;
		double v = ok ? strtod(text, &end) : 0;
		if (!ok || errno || end != text + len || !isfinite(v) || v < s->min || v > s->max)
			return fa_err(FATHOM_EINVAL, "%s wants a number from %g to %g, got '%.64s'", s->name,
			              s->min, s->max, text);
		*num = v;
		number_text(canon, cap, v);
		return 0;
	}
	case FATHOM_SETTING_CHOICE: {
		const char *c = s->choices;
		for (int i = 0; *c; i++) {
			size_t n = strcspn(c, " ");
			if (n == len && strncmp(c, text, n) == 0) {
				*num = i;
				snprintf(canon, cap, "%s", text);
				return 0;
			}
			c += n + (c[n] == ' ');
		}
		return fa_err(FATHOM_EINVAL, "%s wants one of %s, got '%.64s'", s->name, s->choices, text);
	}
	case FATHOM_SETTING_PATTERNS:
	case FATHOM_SETTING_STRING:
		if ((double)len > s->max)
			return fa_err(FATHOM_EINVAL, "%s takes at most %.0f bytes, got %zu", s->name, s->max,
			              len);
		if (s->type == FATHOM_SETTING_STRING && strchr(text, '\n'))
			return fa_err(FATHOM_EINVAL, "%s takes one line", s->name);
		if (s->type == FATHOM_SETTING_PATTERNS) {
			gi_set *g = NULL;
			int rc = gi_parse(&g, text, len, "");
			gi_free(g);
			if (rc)
				return fa_err_wrap(rc, "%s", s->name);
		}
		return 0;
	default:
		return fa_err(FATHOM_EINVAL, "%s: a setting of unknown type", s->name);
	}
}

/* ---- the stored records ------------------------------------------------------------ */

/* Visit each record of a stored payload: cb(ctx, key, value) per record.
 * FATHOM_ECORRUPT for a payload that breaks the layout. An empty payload
 * (or none) has no records. */
typedef int (*record_cb)(void *ctx, const char *key, const char *value);

static int key_ok(const char *k, size_t n)
{
	if (n == 0 || n > 64 || !((k[0] >= 'a' && k[0] <= 'z') || (k[0] >= '0' && k[0] <= '9')))
		return 0;
	for (size_t i = 1; i < n; i++) {
		char c = k[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
		      c == '-'))
			return 0;
	}
	return 1;
}

int api_settings_walk(const unsigned char *data, size_t len,
                      int (*cb)(void *ctx, const char *key, const char *value), void *ctx)
{
	if (len == 0)
		return 0;
	if (data[0] != SETTINGS_FORMAT)
		return fa_err(FATHOM_EVERSION, "settings: format %u (this build reads %u)", data[0],
		              SETTINGS_FORMAT);
	if (data[len - 1] != '\0' && len > 1)
		return fa_err(FATHOM_ECORRUPT, "settings: the last record is not terminated");
	const char *p = (const char *)data + 1, *end = (const char *)data + len;
	/* at most 64 KiB: the keys seen, for the duplicate check, fit a small
	 * quadratic scan (a few dozen records) */
	while (p < end) {
		const char *key = p;
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		if (!nul || !key_ok(key, (size_t)(nul - key)))
			return fa_err(FATHOM_ECORRUPT, "settings: a record with no valid name");
		const char *val = nul + 1;
		const char *vend = val < end ? memchr(val, '\0', (size_t)(end - val)) : NULL;
		if (!vend)
			return fa_err(FATHOM_ECORRUPT, "settings: %s has no value", key);
		for (const char *q = (const char *)data + 1; q < key;) {
			if (strcmp(q, key) == 0)
				return fa_err(FATHOM_ECORRUPT, "settings: %s twice", key);
			q += strlen(q) + 1;
			q += strlen(q) + 1;
		}
		if (cb) {
			int rc = cb(ctx, key, val);
			if (rc)
				return rc;
		}
		p = vend + 1;
	}
	return 0;
}

static int keep_record(void *ctx, const char *key, const char *value)
{
	api_settings *s = ctx;
	int r = row_of(key);
	if (r < 0)
		return 0;   /* a newer build's setting: kept, not read */
	double num;
	char canon[64];
	if (check_value(r, value, &num, canon, sizeof canon)) {
		fa_err_clear();
		return 0;   /* a value this build does not take: read as unset */
	}
	s->set |= (uint64_t)1 << r;
	s->num[r] = num;
	s->text[r] = value;
	return 0;
}

int api_settings_parse(api_settings *s, const unsigned char *data, size_t len)
{
	api_settings_free(s);
	if (len == 0)
		return 0;
	if (!(s->mem = fa_malloc(len)))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	memcpy(s->mem, data, len);
	int rc = api_settings_walk(s->mem, len, keep_record, s);
	if (rc)
		api_settings_free(s);
	return rc;
}

void api_settings_free(api_settings *s)
{
	fa_free(s->mem);
	memset(s, 0, sizeof *s);
}

/* The hnsw.* settings and vector.storage to the index: the graphs and the
 * vector rows of the segments it writes, the beam its searches use. */
static void apply_graph_settings(fathom_index *fx)
{
	const api_settings *s = &fx->cfg;
	ix_graph_opts o = { 0, 0, 0, 0, 0 };
	uint32_t *dst[] = { &o.min_vectors, &o.m, &o.ef_construction, &o.ef_search };
	int row[] = { API_S_HNSW_MIN, API_S_HNSW_M, API_S_HNSW_EFC, API_S_HNSW_EFS };
	for (size_t i = 0; i < FA_ARRAY_LEN(row); i++)
		if ((s->set >> row[i]) & 1)
			*dst[i] = (uint32_t)s->num[row[i]];
	if (o.m == 1)
		o.m = 2;
	/* the choice's index: 0 float32, 1 int8, 2 int8-rescore */
	static const uint32_t storage[] = { IX_VEC_F32, IX_VEC_I8, IX_VEC_I8_RESCORE };
	o.storage = IX_VEC_F32;
	if (((s->set >> API_S_VEC_STORAGE) & 1) && s->num[API_S_VEC_STORAGE] >= 0 &&
	    s->num[API_S_VEC_STORAGE] < (double)FA_ARRAY_LEN(storage))
		o.storage = storage[(size_t)s->num[API_S_VEC_STORAGE]];
	(void)ix_set_graph_opts(fx->ix, &o);   /* the table's bounds are within its own */
}

/* The handle's settings, parsed again when the index's payloads changed
 * (a commit seen by refresh, a writer's staging). */
int api_settings_get(fathom_index *fx, const api_settings **out)
{
	uint64_t v = ix_payload_version(fx->ix);
	if (!fx->cfg_ok || v != fx->cfg_version) {
		const unsigned char *d;
		size_t n;
		fx->cfg_ok = 0;
		if (ix_get_value(fx->ix, SETTINGS_KEY, &d, &n) != 0) {
			d = NULL;
			n = 0;
		}
		int rc = api_settings_parse(&fx->cfg, d, n);
		if (rc)
			return rc;
		fx->cfg_version = v;
		fx->cfg_ok = 1;
		apply_graph_settings(fx);
	}
	*out = &fx->cfg;
	return 0;
}

/* ---- the public calls ---------------------------------------------------------------- */

int fathom_config_get(char **out, int *is_set, fathom_index *fx, const char *name)
{
	fa_err_clear();
	if (out)
		*out = NULL;
	if (!out || !fx)
		return fa_err(FATHOM_EINVAL, "no index or no output");
	int r = known_row(name);
	if (r < 0)
		return r;
	const api_settings *s;
	int rc = api_settings_get(fx, &s);
	if (rc)
		return rc;
	int set = (s->set >> r) & 1;
	if (is_set)
		*is_set = set;
	*out = fa_strdup(set ? s->text[r] : rows[r].default_value);
	return *out ? 0 : fa_err(FATHOM_ENOMEM, "out of memory");
}

typedef struct rewrite {
	fbuf out;
	const char *skip;
} rewrite;

static int copy_record(void *ctx, const char *key, const char *value)
{
	rewrite *w = ctx;
	if (strcmp(key, w->skip) == 0)
		return 0;
	int rc = fbuf_append(&w->out, key, strlen(key) + 1);
	return rc ? rc : fbuf_append(&w->out, value, strlen(value) + 1);
}

/* Stage the stored settings with name's record replaced by value (NULL:
 * removed), every other record kept as it was. */
static int restage(fathom_index *fx, const char *name, const char *value)
{
	if (!(fx->flags & (FATHOM_OPEN_WRITE | FATHOM_OPEN_CREATE)))
		return fa_err(FATHOM_EREADONLY, "index opened read-only");
	const unsigned char *d;
	size_t n;
	if (ix_get_value(fx->ix, SETTINGS_KEY, &d, &n) != 0) {
		d = NULL;
		n = 0;
	}
	rewrite w = { .skip = name };
	/* a manifest value holds at most 64 KiB (index/payload.c) */
	fbuf_init(&w.out, 60u << 10);
	unsigned char ver = SETTINGS_FORMAT;
	int rc = fbuf_append(&w.out, &ver, 1);
	if (!rc)
		rc = api_settings_walk(d, n, copy_record, &w);
	if (!rc && value) {
		w.skip = "";   /* now the new record itself */
		rc = copy_record(&w, name, value);
	}
	if (!rc)
		rc = ix_stage_value(fx->ix, SETTINGS_KEY, w.out.data, w.out.len);
	fbuf_free(&w.out);
	return rc;
}

int fathom_config_set(fathom_index *fx, const char *name, const char *value)
{
	fa_err_clear();
	if (!fx || !value)
		return fa_err(FATHOM_EINVAL, "no index or no value");
	int r = known_row(name);
	if (r < 0)
		return r;
	double num;
	char canon[64];
	int rc = check_value(r, value, &num, canon, sizeof canon);
	if (rc)
		return rc;
	int textual = rows[r].type == FATHOM_SETTING_PATTERNS || rows[r].type == FATHOM_SETTING_STRING;
	return restage(fx, rows[r].name, textual ? value : canon);
}

int fathom_config_unset(fathom_index *fx, const char *name)
{
	fa_err_clear();
	if (!fx)
		return fa_err(FATHOM_EINVAL, "no index");
	int r = known_row(name);
	if (r < 0)
		return r;
	return restage(fx, rows[r].name, NULL);
}

/* ---- as JSON -------------------------------------------------------------------------------- */

static const char *type_name(int type)
{
	switch (type) {
	case FATHOM_SETTING_INT: return "integer";
	case FATHOM_SETTING_NUMBER: return "number";
	case FATHOM_SETTING_CHOICE: return "choice";
	case FATHOM_SETTING_PATTERNS: return "patterns";
	default: return "string";
	}
}

/* A value by its type: a number, an array of patterns (one per line), a
 * string. Numbers are the canonical text, which JSON reads as it is. */
/* The parts of w between the separator sep, as a JSON array of strings
 * (patterns one per line, choices one per word). */
static void json_split(fbuf *b, const char *w, char sep)
{
	const char seps[2] = { sep, '\0' };
	fbuf_putc(b, '[');
	for (const char *p = w; *p;) {
		size_t n = strcspn(p, seps);
		if (p != w)
			fbuf_putc(b, ',');
		api_json_strn(b, p, n);
		p += n + (p[n] == sep);
	}
	fbuf_putc(b, ']');
}

static void json_value(fbuf *b, const fathom_setting_info *s, const char *v)
{
	if (s->type == FATHOM_SETTING_INT || s->type == FATHOM_SETTING_NUMBER)
		fbuf_puts(b, v);
	else if (s->type == FATHOM_SETTING_PATTERNS)
		json_split(b, v, '\n');
	else
		api_json_strn(b, v, strlen(v));
}

static void json_setting(fbuf *b, const api_settings *st, int r)
{
	const fathom_setting_info *s = &rows[r];
	int set = (st->set >> r) & 1;
	fbuf_puts(b, "{\"name\":");
	api_json_strn(b, s->name, strlen(s->name));
	fbuf_printf(b, ",\"type\":\"%s\",\"value\":", type_name(s->type));
	json_value(b, s, set ? st->text[r] : s->default_value);
	fbuf_printf(b, ",\"set\":%s,\"default\":", set ? "true" : "false");
	json_value(b, s, s->default_value);
	if (s->type == FATHOM_SETTING_INT || s->type == FATHOM_SETTING_NUMBER) {
		fbuf_printf(b, ",\"min\":%.17g,\"max\":%.17g", s->min, s->max);
	} else if (s->type == FATHOM_SETTING_CHOICE) {
		fbuf_puts(b, ",\"choices\":");
		json_split(b, s->choices, ' ');
	} else {
		fbuf_printf(b, ",\"max_bytes\":%.0f", s->max);
	}
	fbuf_puts(b, ",\"help\":");
	api_json_strn(b, s->help, strlen(s->help));
	fbuf_putc(b, '}');
}

int fathom_config_json(char **out, size_t *len, fathom_index *fx, const char *name)
{
	fa_err_clear();
	if (!out || !fx)
		return fa_err(FATHOM_EINVAL, "no index or no output");
	*out = NULL;
	if (len)
		*len = 0;
	int one = name ? known_row(name) : -1;
	if (name && one < 0)
		return one;
	const api_settings *st;
	int rc = api_settings_get(fx, &st);
	if (rc)
		return rc;
	fbuf b;
	fbuf_init(&b, 0);
	if (name) {
		json_setting(&b, st, one);
	} else {
		fbuf_putc(&b, '[');
		for (int r = 0; r < API_NSETTINGS; r++) {
			if (r)
				fbuf_putc(&b, ',');
			json_setting(&b, st, r);
		}
		fbuf_putc(&b, ']');
	}
	if (b.err) {
		rc = b.err;
		fbuf_free(&b);
		return rc;
	}
	*out = fbuf_detach(&b, len);
	return *out ? 0 : fa_err(FATHOM_ENOMEM, "the settings as JSON");
}

/* ---- defaults for a search and a run ---------------------------------------------------- */

int api_search_defaults(fathom_index *fx, const fathom_search_opts *in, fathom_search_opts *tmp,
                        float weights[FATHOM_NFIELDS], const fathom_search_opts **out)
{
	*out = in;
	const api_settings *s;
	int rc = api_settings_get(fx, &s);
	if (rc || !s->set)
		return rc;
	*tmp = *in;
	if (!tmp->k && (s->set >> API_S_K & 1))
		tmp->k = (uint32_t)s->num[API_S_K];
	if (tmp->match == FATHOM_MATCH_DEFAULT && (s->set >> API_S_MATCH & 1))
		tmp->match = (int)s->num[API_S_MATCH];   /* choices in enum fathom_match order */
	if (tmp->k1 < 0 && (s->set >> API_S_K1 & 1))
		tmp->k1 = (float)s->num[API_S_K1];
	if (tmp->b < 0 && (s->set >> API_S_B & 1))
		tmp->b = (float)s->num[API_S_B];
	if (tmp->snippet_bytes == FATHOM_UNSET_SNIPPET && (s->set >> API_S_SNIPPET & 1))
		tmp->snippet_bytes = (uint32_t)s->num[API_S_SNIPPET];
	int any_weight = 0;
	for (int f = 0; f < FATHOM_NFIELDS; f++)
		any_weight |= (int)(s->set >> (API_S_W_PATH + f) & 1);
	/* more weights than fields is the check's to refuse */
	if (any_weight && in->n_field_weights <= FATHOM_NFIELDS) {
		for (size_t f = 0; f < FATHOM_NFIELDS; f++) {
			int r = API_S_W_PATH + (int)f;
			float given = in->field_weights && f < in->n_field_weights ? in->field_weights[f] : -1;
			weights[f] = given >= 0 ? given : (s->set >> r & 1) ? (float)s->num[r] : -1;
		}
		tmp->field_weights = weights;
		tmp->n_field_weights = FATHOM_NFIELDS;
	}
	*out = tmp;
	return 0;
}

int api_ingest_defaults(fathom_index *fx, fathom_ingest_opts *o)
{
	const api_settings *s = NULL;
	if (fx) {
		int rc = api_settings_get(fx, &s);
		if (rc)
			return rc;
	}
	int has_size = s && (s->set >> API_S_MAX_SIZE & 1);
	int has_grep = s && (s->set >> API_S_GREP_MAX_SIZE & 1);
	if (o->max_file_size == FATHOM_UNSET_SIZE)
		o->max_file_size = has_size ? (uint64_t)s->num[API_S_MAX_SIZE] : API_DEFAULT_MAX_SIZE;
	if (o->grep_max_file_size == FATHOM_UNSET_SIZE)
		o->grep_max_file_size =
		        has_grep ? (uint64_t)s->num[API_S_GREP_MAX_SIZE] : API_DEFAULT_GREP_MAX_SIZE;
	if (!o->ignore)
		o->ignore = s && (s->set >> API_S_IGNORE & 1) ? s->text[API_S_IGNORE] : "";
	return 0;
}
