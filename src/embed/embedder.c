/*
 * embedder.c — the embedder interface's one entry point: em_embed checks
 * what it is given and what the implementation wrote, so that a broken
 * embedder (a remote service answering NaN, a model with a zero row) is an
 * error naming it, never a silently bad index.
 */
#include <math.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

int em_normalize(float *v, uint32_t dim)
{
	double ss = 0.0;
	for (uint32_t k = 0; k < dim; k++)
		ss += (double)v[k] * v[k];
	if (!(ss > 0.0) || !isfinite(ss)) {
		memset(v, 0, (size_t)dim * sizeof *v);
		return 0;
	}
	/* in double: 1 / the length of a row of subnormals overflows a float */
	double norm = sqrt(ss);
	for (uint32_t k = 0; k < dim; k++)
		v[k] = (float)((double)v[k] / norm);
	return 1;
}

int em_embed(em_embedder *e, const char *const *texts, const size_t *lens, size_t n,
             float *out)
{
	if (!e || !e->ops || !e->ops->embed || (n && (!texts || !lens || !out)))
		return fa_err(FATHOM_EINVAL, "embed: no embedder, texts or output");
	if (e->dim == 0 || e->dim > EM_MAX_DIM)
		return fa_err(FATHOM_EINVAL, "embed: dimension %u out of 1..%u", e->dim, EM_MAX_DIM);
	if (n > EM_MAX_BATCH)
		return fa_err(FATHOM_EINVAL, "embed: %zu texts in one batch, at most %u", n,
		              EM_MAX_BATCH);
	if (n == 0)
		return 0;
	int rc = e->ops->embed(e, texts, lens, n, out);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const float *r = out + i * e->dim;
		double ss = 0.0;
		for (uint32_t k = 0; k < e->dim; k++) {
			if (!isfinite(r[k]))
				return fa_err(FATHOM_ECORRUPT,
				              "embedder %s: text %zu got a value that is not finite",
				              e->ops->kind, i);
			ss += (double)r[k] * r[k];
		}
		if (ss != 0.0 && fabs(ss - 1.0) > 1e-3)
			return fa_err(FATHOM_ECORRUPT,
			              "embedder %s: text %zu got a vector of length %g, not 1",
			              e->ops->kind, i, sqrt(ss));
	}
	return 0;
}

void em_embedder_free(em_embedder *e)
{
	if (e && e->ops && e->ops->free)
		e->ops->free(e);
}
