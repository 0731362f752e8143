/*
 * embed_api.c — the index's embedder: which one the settings name, its
 * identity kept with the vectors, the query's embedding, and the public
 * embedder calls.
 *
 * The settings say what embeds (embedder, embedder.file, embedder.url,
 * ...); the named value `embedder` says what made the vectors the index
 * holds: the embedder's ident (kind, version, settings, model checksum).
 * The first ingest that embeds stages it; a later ingest or a query whose
 * embedder has another ident is refused with both named, since its vectors
 * live in another space (`fathom optimize` re-embeds every chunk with the
 * configured embedder and stages its ident). Vectors that came with the
 * documents (embedder external) have the ident "external v1 dim=D
 * model=NAME".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "embed/embed.h"
#include "query/query_int.h"

#define EMBEDDER_KEY "embedder"
#define MODEL_KEY "embedder.model"

static const char *setting_text(const api_settings *s, int row, const char *def)
{
	return (s->set >> row) & 1 ? s->text[row] : def;
}

int api_embedder_kind(fathom_index *fx, int *kind)
{
	const api_settings *s;
	int rc = api_settings_get(fx, &s);
	if (rc)
		return rc;
	*kind = (s->set >> API_S_EMBEDDER) & 1 ? (int)s->num[API_S_EMBEDDER] : API_EMB_NONE;
	return 0;
}

const char *api_embedder_kind_name(int kind)
{
	static const char *const names[] = { "none", "corpus", "static", "remote", "external" };
	return kind >= 0 && kind < (int)FA_ARRAY_LEN(names) ? names[kind] : "none";
}

int api_embedder_ident(fathom_index *fx, const char **ident, size_t *len)
{
	const unsigned char *d;
	size_t n;
	*ident = NULL;
	*len = 0;
	if (ix_get_value(fx->ix, EMBEDDER_KEY, &d, &n) != 0)
		return 0;
	*ident = (const char *)d;
	*len = n;
	return 0;
}

uint64_t api_ident_fp(const char *ident, size_t len)
{
	return fa_hash64(ident, len, 0x76656373);
}

/* The dimension an ident names ("dim=D"), 0 when none. */
static uint32_t ident_dim(const char *ident, size_t len)
{
	for (size_t i = 0; i + 4 < len; i++)
		if ((i == 0 || ident[i - 1] == ' ') && memcmp(ident + i, "dim=", 4) == 0)
			return (uint32_t)strtoul(ident + i + 4, NULL, 10);
	return 0;
}

static int open_configured(fathom_index *fx, int kind, em_embedder **out)
{
	const api_settings *s;
	int rc = api_settings_get(fx, &s);
	if (rc)
		return rc;
	*out = NULL;
	switch (kind) {
	case API_EMB_STATIC: {
		const char *file = setting_text(s, API_S_EMBED_FILE, "");
		if (!*file)
			return fa_err(FATHOM_EINVAL, "embedder static needs a vector file or a Model2Vec "
			                             "model folder: fathom config embedder.file PATH");
		return em_static_open(out, file);
	}
	case API_EMB_REMOTE: {
		const char *url = setting_text(s, API_S_EMBED_URL, "");
		if (!*url)
			return fa_err(FATHOM_EINVAL, "embedder remote needs a URL: fathom config "
			                             "embedder.url URL");
		em_remote_opts o = { 0 };
		o.url = url;
		o.model = setting_text(s, API_S_EMBED_MODEL, "");
		o.api_key_env = setting_text(s, API_S_EMBED_KEY_ENV, "FATHOM_EMBED_API_KEY");
		return em_remote_open(out, &o);
	}
	case API_EMB_CORPUS: {
		const unsigned char *d;
		size_t n;
		if (ix_get_value(fx->ix, MODEL_KEY, &d, &n) != 0)
			return 0;   /* not trained yet: none until the commit trains it */
		em_model *m;
		if ((rc = em_model_read(&m, d, n, MODEL_KEY)))
			return rc;
		if ((rc = em_corpus_new(out, m)))
			em_model_free(m);
		return rc;
	}
	default:
		return 0;
	}
}

int api_embedder(fathom_index *fx, em_embedder **out)
{
	int kind, rc;
	*out = NULL;
	if ((rc = api_embedder_kind(fx, &kind)))
		return rc;
	uint64_t v = ix_payload_version(fx->ix);
	if (fx->emb_ok && fx->emb_version == v && fx->emb_kind == kind) {
		*out = fx->emb;
		return 0;
	}
	em_embedder_free(fx->emb);
	fx->emb = NULL;
	fx->emb_ok = 0;
	if ((rc = open_configured(fx, kind, &fx->emb)))
		return rc;
	fx->emb_ok = 1;
	fx->emb_version = v;
	fx->emb_kind = kind;
	*out = fx->emb;
	return 0;
}

void api_embedder_free(fathom_index *fx)
{
	em_embedder_free(fx->emb);
	fx->emb = NULL;
	fx->emb_ok = 0;
}

/* Refuse an embedder whose ident is not the index's. */
static int same_space(const char *have, size_t hl, const char *want, const char *what)
{
	if (!have || (strlen(want) == hl && memcmp(have, want, hl) == 0))
		return 0;
	return fa_err(FATHOM_EINVAL,
	              "%s: the index's vectors were made by \"%.*s\", but the embedder is \"%s\"; "
	              "run fathom optimize to re-embed every chunk with it",
	              what, (int)FA_MIN(hl, 400), have, want);
}

int api_ingest_embedder(fathom_index *fx, em_embedder **out, uint64_t *fp)
{
	*out = NULL;
	*fp = 0;
	em_embedder *e;
	int rc = api_embedder(fx, &e);
	if (rc || !e)
		return rc;
	const char *have;
	size_t hl;
	api_embedder_ident(fx, &have, &hl);
	if ((rc = same_space(have, hl, e->ident, "indexing")))
		return rc;
	if (!have && (rc = ix_stage_value(fx->ix, EMBEDDER_KEY, e->ident, strlen(e->ident))))
		return rc;
	*out = e;
	*fp = api_ident_fp(e->ident, strlen(e->ident));
	return 0;
}

int api_external_ident(fathom_index *fx, uint32_t dim, uint64_t *fp)
{
	const api_settings *s;
	int rc = api_settings_get(fx, &s);
	if (rc)
		return rc;
	char ident[EM_IDENT_MAX];
	snprintf(ident, sizeof ident, "external v1 dim=%u model=%.255s", dim,
	         setting_text(s, API_S_EMBED_MODEL, "unnamed"));
	const char *have;
	size_t hl;
	api_embedder_ident(fx, &have, &hl);
	if ((rc = same_space(have, hl, ident, "vectors with the documents")))
		return rc;
	if (!have && (rc = ix_stage_value(fx->ix, EMBEDDER_KEY, ident, strlen(ident))))
		return rc;
	*fp = api_ident_fp(ident, strlen(ident));
	return 0;
}

int api_query_vector(fathom_index *fx, const char *query, const fathom_search_opts *o, float **vec,
                     uint32_t *dim, uint64_t *fp, const char **kind_name)
{
	*vec = NULL;
	*dim = 0;
	*fp = 0;
	const char *have;
	size_t hl;
	api_embedder_ident(fx, &have, &hl);
	int kind, rc;
	if ((rc = api_embedder_kind(fx, &kind)))
		return rc;
	*kind_name = api_embedder_kind_name(kind);
	if (!have)
		return fa_err(FATHOM_EINVAL, "this index has no vectors (embedder %s): set one with "
		                             "fathom config embedder ..., then index again, or search "
		                             "with --mode keyword", *kind_name);
	*fp = api_ident_fp(have, hl);
	if (o->query_vector) {
		uint32_t d = ident_dim(have, hl);
		if (o->query_vector_dim == 0 || o->query_vector_dim > EM_MAX_DIM ||
		    (d && o->query_vector_dim != d))
			return fa_err(FATHOM_EINVAL, "a query vector of %u dimensions; the index's have %u",
			              o->query_vector_dim, d);
		*vec = fa_malloc((size_t)o->query_vector_dim * sizeof **vec);
		if (!*vec)
			return fa_err(FATHOM_ENOMEM, "query vector");
		for (uint32_t i = 0; i < o->query_vector_dim; i++)
			(*vec)[i] = isfinite(o->query_vector[i]) ? o->query_vector[i] : 0.0f;
		em_normalize(*vec, o->query_vector_dim);
		*dim = o->query_vector_dim;
		return 0;
	}
	em_embedder *e;
	if ((rc = api_embedder(fx, &e)))
		return rc;
	if (!e)
		return fa_err(FATHOM_EINVAL,
		              kind == API_EMB_EXTERNAL
		                      ? "this index's vectors came with the documents: give a query "
		                        "vector (fathom_search_opts.query_vector, search --vector)"
		                      : "no embedder to embed the query (embedder %s)", *kind_name);
	if ((rc = same_space(have, hl, e->ident, "the query")))
		return rc;
	*vec = fa_malloc((size_t)e->dim * sizeof **vec);
	if (!*vec)
		return fa_err(FATHOM_ENOMEM, "query vector");
	size_t len = strlen(query);
	if ((rc = em_embed(e, &query, &len, 1, *vec))) {
		fa_free(*vec);
		*vec = NULL;
		return rc;
	}
	*dim = e->dim;
	return 0;
}

const char *fathom_mode_name(int mode)
{
	switch (mode) {
	case FATHOM_MODE_KEYWORD: return "keyword";
	case FATHOM_MODE_SEMANTIC: return "semantic";
	case FATHOM_MODE_HYBRID: return "hybrid";
	case FATHOM_MODE_STRICT: return "strict";
	default: return NULL;
	}
}

const char *fathom_fusion_name(int fusion)
{
	switch (fusion) {
	case FATHOM_FUSION_RRF: return "rrf";
	case FATHOM_FUSION_CONVEX: return "convex";
	case FATHOM_FUSION_RRF_WEIGHTED: return "rrf-weighted";
	default: return NULL;
	}
}

/* The measured default fusion of each kind of embedder (docs/BENCHMARKS.md,
 * "Hybrid retrieval"): word-average embedders are weak alone, and a convex
 * combination that leans on full text gains where RRF, which weighs both
 * lists alike, loses. */
static void default_fusion(int kind, const char *ident, int *method, double *alpha)
{
	switch (kind) {
	case API_EMB_CORPUS:
		*method = FATHOM_FUSION_CONVEX;
		*alpha = API_WORDAVG_ALPHA;
		break;
	case API_EMB_STATIC:
		/* word vector files may know few of the corpus's words (GloVe
		 * 10k alone: nDCG 0.08 on SciFact): full text's order, the
		 * vectors' hits after it (API_STATIC_ALPHA) */
		*method = FATHOM_FUSION_CONVEX;
		*alpha = ident && strncmp(ident, "static v1 model2vec=", 20) == 0 ? API_M2V_ALPHA
		                                                                  : API_STATIC_ALPHA;
		break;
	default:
		*method = FATHOM_FUSION_RRF;
		*alpha = 0.5;
		break;
	}
}

int api_hybrid(fathom_index *fx, const char *query, const fathom_search_opts *o, q_hybrid *hy,
               float **qvec)
{
	memset(hy, 0, sizeof *hy);
	*qvec = NULL;
	const api_settings *s;
	int kind, rc;
	if ((rc = api_settings_get(fx, &s)) || (rc = api_embedder_kind(fx, &kind)))
		return rc;
	int mode = o->mode;
	if (mode == FATHOM_MODE_DEFAULT && ((s->set >> API_S_MODE) & 1) && s->num[API_S_MODE] > 0)
		mode = (int)s->num[API_S_MODE] - 1;   /* choices: auto keyword semantic ... */
	if (mode == FATHOM_MODE_DEFAULT)
		mode = kind == API_EMB_NONE ? FATHOM_MODE_KEYWORD : FATHOM_MODE_HYBRID;
	if (mode < FATHOM_MODE_KEYWORD || mode > FATHOM_MODE_STRICT)
		return fa_err(FATHOM_EINVAL, "unknown mode %d", mode);
	hy->mode = mode;
	if (mode == FATHOM_MODE_KEYWORD)
		return 0;
	int method;
	double alpha;
	em_embedder *e = NULL;
	if (kind == API_EMB_STATIC && (rc = api_embedder(fx, &e)))
		return rc;
	default_fusion(kind, e ? e->ident : NULL, &method, &alpha);
	if ((s->set >> API_S_FUSION) & 1 && s->num[API_S_FUSION] > 0)
		method = (int)s->num[API_S_FUSION] - 1;   /* choices: auto rrf convex ... */
	if (o->fusion != FATHOM_FUSION_DEFAULT)
		method = o->fusion;
	if (method < FATHOM_FUSION_RRF || method > FATHOM_FUSION_RRF_WEIGHTED)
		return fa_err(FATHOM_EINVAL, "unknown fusion %d", method);
	if ((s->set >> API_S_ALPHA) & 1)
		alpha = s->num[API_S_ALPHA];
	if (o->alpha >= 0)
		alpha = o->alpha;
	if (!(alpha >= 0 && alpha <= 1))
		return fa_err(FATHOM_EINVAL, "alpha must be in [0, 1]");
	double min_sim = (s->set >> API_S_MIN_SIM) & 1 ? s->num[API_S_MIN_SIM] : 0.0;
	if (o->min_similarity >= 0)
		min_sim = o->min_similarity;
	if (!(min_sim >= 0 && min_sim <= 1))
		return fa_err(FATHOM_EINVAL, "min_similarity must be in [0, 1]");
	hy->fusion.method = method;
	hy->fusion.weight[0] = alpha;
	hy->fusion.weight[1] = 1.0 - alpha;
	hy->min_similarity = min_sim;
	hy->overfetch = Q_HYBRID_OVERFETCH;
	rc = api_query_vector(fx, query, o, qvec, &hy->qv.dim, &hy->qv.fp, &hy->embedder);
	if (rc)
		return rc;
	hy->qv.v = *qvec;
	return 0;
}

/* ---- the public calls ---------------------------------------------------------------- */

struct fathom_embedder {
	em_embedder *e;
	int own;
	em_embedder custom;
	fathom_embed_fn fn;
	void *ctx;
};

int fathom_embedder_open(fathom_embedder **out, fathom_index *fx)
{
	fa_err_clear();
	if (!out || !fx)
		return fa_err(FATHOM_EINVAL, "no index or no output");
	*out = NULL;
	int kind, rc;
	if ((rc = api_embedder_kind(fx, &kind)))
		return rc;
	em_embedder *e = NULL;
	if ((rc = open_configured(fx, kind, &e)))
		return rc;
	if (!e)
		return fa_err(FATHOM_ENOTFOUND, "this index has no embedder that embeds text");
	fathom_embedder *fe = fa_calloc(1, sizeof *fe);
	if (!fe) {
		em_embedder_free(e);
		return fa_err(FATHOM_ENOMEM, "embedder");
	}
	fe->e = e;
	fe->own = 1;
	*out = fe;
	return 0;
}

static int custom_embed(em_embedder *e, const char *const *texts, const size_t *lens, size_t n,
                        float *out)
{
	fathom_embedder *fe = e->impl;
	if (fe->fn(fe->ctx, texts, lens, n, out))
		return fa_err(FATHOM_EINTERRUPTED, "the embedder callback failed");
	for (size_t i = 0; i < n; i++)
		em_normalize(out + i * e->dim, e->dim);
	return 0;
}

int fathom_embedder_custom(fathom_embedder **out, uint32_t dim, const char *ident,
                           fathom_embed_fn fn, void *ctx)
{
	static const em_embedder_ops ops = { "custom", custom_embed, NULL };
	fa_err_clear();
	if (!out || !fn || !ident || !*ident)
		return fa_err(FATHOM_EINVAL, "a custom embedder needs a function and an ident");
	*out = NULL;
	if (dim == 0 || dim > EM_MAX_DIM || strlen(ident) >= EM_IDENT_MAX)
		return fa_err(FATHOM_EINVAL, "a custom embedder of %u dimensions (1..%u)", dim,
		              EM_MAX_DIM);
	fathom_embedder *fe = fa_calloc(1, sizeof *fe);
	if (!fe)
		return fa_err(FATHOM_ENOMEM, "embedder");
	fe->custom.ops = &ops;
	fe->custom.dim = dim;
	fe->custom.impl = fe;
	snprintf(fe->custom.ident, sizeof fe->custom.ident, "%s", ident);
	fe->e = &fe->custom;
	fe->fn = fn;
	fe->ctx = ctx;
	*out = fe;
	return 0;
}

int fathom_embed(fathom_embedder *fe, const char *const *texts, const size_t *lens, size_t n,
                 float *out)
{
	fa_err_clear();
	if (!fe)
		return fa_err(FATHOM_EINVAL, "no embedder");
	for (size_t i = 0; i < n; i += EM_MAX_BATCH) {
		size_t m = FA_MIN(n - i, (size_t)EM_MAX_BATCH);
		int rc = em_embed(fe->e, texts + i, lens + i, m, out + i * fe->e->dim);
		if (rc)
			return rc;
	}
	return 0;
}

uint32_t fathom_embedder_dim(const fathom_embedder *fe)
{
	return fe ? fe->e->dim : 0;
}

const char *fathom_embedder_ident(const fathom_embedder *fe)
{
	return fe ? fe->e->ident : "";
}

void fathom_embedder_free(fathom_embedder *fe)
{
	if (!fe)
		return;
	if (fe->own)
		em_embedder_free(fe->e);
	fa_free(fe);
}
