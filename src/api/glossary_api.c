/*
 * glossary_api.c — the public glossary calls: load the glossary the index
 * holds (or has staged), change it, stage it for the next commit.
 */
#include "api/api.h"
#include "query/glossary.h"

static int writable(fathom_index *fx)
{
	fa_err_clear();
	if (!fx)
		return fa_err(FATHOM_EINVAL, "no index");
	if (!(fx->flags & (FATHOM_OPEN_WRITE | FATHOM_OPEN_CREATE)))
		return fa_err(FATHOM_EREADONLY, "index opened read-only");
	return 0;
}

/* Load, apply op, stage. */
typedef int (*gloss_op)(q_glossary *g, fathom_index *fx, void *arg);

static int change(fathom_index *fx, gloss_op op, void *arg)
{
	int rc = writable(fx);
	if (rc)
		return rc;
	q_glossary g;
	if ((rc = q_gloss_load(&g, fx->ix)) != 0)
		return rc;
	rc = op(&g, fx, arg);
	if (!rc)
		rc = q_gloss_store(&g, fx->ix);
	q_gloss_free(&g);
	return rc;
}

typedef struct add_arg {
	const char *const *terms;
	size_t n;
	uint32_t *id;
} add_arg;

static int op_add(q_glossary *g, fathom_index *fx, void *arg)
{
	(void)fx;
	add_arg *a = arg;
	return q_gloss_add(g, a->terms, a->n, 0, a->id);
}

int fathom_glossary_add(fathom_index *fx, const char *const *terms, size_t n, uint32_t *group)
{
	for (size_t i = 0; i < n; i++)
		if (!terms || !terms[i])
			return fa_err(FATHOM_EINVAL, "glossary term %zu is NULL", i);
	add_arg a = { terms, n, group };
	return change(fx, op_add, &a);
}

static int op_remove(q_glossary *g, fathom_index *fx, void *arg)
{
	(void)fx;
	return q_gloss_remove(g, arg);
}

int fathom_glossary_remove(fathom_index *fx, const char *what)
{
	if (!what || !*what)
		return fa_err(FATHOM_EINVAL, "remove what? a group id or a term");
	return change(fx, op_remove, (void *)what);
}

typedef struct protect_arg {
	const char *name;
	int on;
} protect_arg;

static int op_protect(q_glossary *g, fathom_index *fx, void *arg)
{
	(void)fx;
	protect_arg *a = arg;
	return q_gloss_protect(g, a->name, a->on);
}

int fathom_glossary_protect(fathom_index *fx, const char *name, int on)
{
	if (!name || !*name)
		return fa_err(FATHOM_EINVAL, "protect what?");
	protect_arg a = { name, on };
	return change(fx, op_protect, &a);
}

static int op_propose(q_glossary *g, fathom_index *fx, void *arg)
{
	int rc = q_gloss_propose(g, fx->ix, fx->an, arg);
	return rc ? rc : api_gloss_neighbours(fx, g, arg);
}

int fathom_glossary_propose(fathom_index *fx, size_t *proposed)
{
	size_t dummy;
	return change(fx, op_propose, proposed ? proposed : &dummy);
}

typedef struct decide_arg {
	uint32_t id;
	int approve;
} decide_arg;

static int op_decide(q_glossary *g, fathom_index *fx, void *arg)
{
	(void)fx;
	decide_arg *a = arg;
	return q_gloss_decide(g, a->id, a->approve);
}

int fathom_glossary_decide(fathom_index *fx, uint32_t candidate, int approve)
{
	decide_arg a = { candidate, approve };
	return change(fx, op_decide, &a);
}

int fathom_glossary_list(fathom_index *fx, const char *kind, fathom_gloss_cb cb, void *ctx)
{
	fa_err_clear();
	if (!fx || !cb)
		return fa_err(FATHOM_EINVAL, "no index or no callback");
	static const char *const kinds[] = { "group", "protected", "candidate" };
	static const char *const status[] = { "pending", "approved", "rejected" };
	static const char *const source[] = { "curator", "acronym", "variant", "neighbour" };
	int want = -1, pending = 0;
	if (kind && *kind) {
		if (strcmp(kind, "pending") == 0) {
			want = QG_CANDIDATE;
			pending = 1;
		}
		for (int k = 0; k < 3 && want < 0; k++)
			if (strcmp(kind, kinds[k]) == 0)
				want = k;
		if (want < 0)
			return fa_err(FATHOM_EINVAL, "no glossary item kind \"%s\" (group, protected, "
			              "candidate, pending)", kind);
	}
	q_glossary g;
	int rc = q_gloss_load(&g, fx->ix);
	for (size_t i = 0; i < g.n && !rc; i++) {
		const q_gitem *it = &g.items[i];
		if ((want >= 0 && it->kind != want) || (pending && it->status != QG_PENDING))
			continue;
		fathom_gloss_item out = { kinds[it->kind], it->id, (const char *const *)it->terms,
		                          it->nterms, it->kind == QG_CANDIDATE ? status[it->status] : "",
		                          it->kind == QG_CANDIDATE ? source[it->source] : "",
		                          it->evidence ? it->evidence : "", it->count };
		rc = cb(ctx, &out);
	}
	q_gloss_free(&g);
	return rc;
}
