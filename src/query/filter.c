/*
 * filter.c — restrictions applied before ranking: metadata "key=value"
 * pairs (all must hold), a glob over the document path, and a language.
 *
 * A filtered query builds one bitmap of allowed chunks per segment by
 * walking the segment's documents, so the retrieval loops test a bit per
 * candidate; an unfiltered query builds nothing and tests nothing.
 */
#include <fnmatch.h>

#include "query/query_int.h"

int q_filter_init(q_filter *f, fa_arena *a, const fathom_search_opts *o)
{
	memset(f, 0, sizeof *f);
	if (o->n_filters > 0) {
		if (!o->filters)
			return fa_err(FATHOM_EINVAL, "%zu filters but no filter array", o->n_filters);
		if (o->n_filters > 256)
			return fa_err(FATHOM_ETOOBIG, "more than 256 filters");
		f->keys = fa_arena_alloc(a, o->n_filters * sizeof *f->keys);
		f->values = fa_arena_alloc(a, o->n_filters * sizeof *f->values);
		if (!f->keys || !f->values)
			return fa_err(FATHOM_ENOMEM, "filters");
		for (size_t i = 0; i < o->n_filters; i++) {
			const char *s = o->filters[i];
			const char *eq = s ? strchr(s, '=') : NULL;
			if (!eq || eq == s)
				return fa_err(FATHOM_EINVAL, "filter \"%s\" is not key=value",
				              s ? s : "(null)");
			f->keys[i] = fa_arena_strndup(a, s, (size_t)(eq - s));
			f->values[i] = eq + 1;
			if (!f->keys[i])
				return fa_err(FATHOM_ENOMEM, "filters");
		}
		f->n = o->n_filters;
	}
	if (o->path_glob && *o->path_glob) {
		f->glob = o->path_glob;
		f->glob_base = strchr(o->path_glob, '/') == NULL;
	}
	if (o->lang && *o->lang)
		f->lang = o->lang;
	f->active = f->n > 0 || f->glob || f->lang;
	return 0;
}

int q_filter_doc(const q_filter *f, const ix_doc_info *d)
{
	for (size_t i = 0; i < f->n; i++) {
		const char *v = ix_doc_meta(d, f->keys[i]);
		if (!v || strcmp(v, f->values[i]) != 0)
			return 0;
	}
	if (f->lang && (!d->lang || strcmp(d->lang, f->lang) != 0))
		return 0;
	if (f->glob) {
		const char *path = d->path ? d->path : "";
		if (fnmatch(f->glob, path, 0) != 0) {
			const char *base = strrchr(path, '/');
			if (!f->glob_base || !base || fnmatch(f->glob, base + 1, 0) != 0)
				return 0;
		}
	}
	return 1;
}

int q_filter_bitmap(const q_filter *f, fa_arena *a, ix_segment *s, uint8_t **out)
{
	*out = NULL;
	if (!f->active)
		return 0;
	uint32_t nchunks = seg_nchunks(s), ndocs = seg_ndocs(s);
	uint8_t *bits = fa_arena_calloc(a, (size_t)nchunks / 8 + 1, 1);
	if (!bits)
		return fa_err(FATHOM_ENOMEM, "filter bitmap of %u chunks", nchunks);
	for (uint32_t d = 0; d < ndocs; d++) {
		if (seg_doc_is_deleted(s, d))
			continue;
		ix_doc_info di;
		int rc = seg_doc(s, d, &di);
		if (rc)
			return rc;
		if (!q_filter_doc(f, &di))
			continue;
		if (di.first_chunk > nchunks || di.n_chunks > nchunks - di.first_chunk)
			return fa_err(FATHOM_ECORRUPT, "%s: doc %u has chunks past the end",
			              seg_path(s), d);
		for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks; c++)
			bits[c >> 3] |= (uint8_t)(1u << (c & 7));
	}
	*out = bits;
	return 0;
}
