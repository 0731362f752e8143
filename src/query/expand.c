/*
 * expand.c — glossary expansion: a query word (or a run of up to four
 * words) that is a member of an alias group becomes an OR group of the
 * group's members, so "auth rate limit" is read as
 * (auth | authentication | "sign in") AND ("rate limit" | throttle | quota).
 *
 * Only words that bind are expanded: the top level's required words and
 * the alternatives of an OR. Never phrases, negations, prefixes, field
 * scoped words, or protected words (all-caps acronyms, code identifiers,
 * names marked protected), and never the optional words of a ranked,
 * natural-language query. Each expansion is recorded for the receipts.
 */
#include "query/query_int.h"
#include "query/glossary.h"

#define Q_EXPAND_NGRAM 4

typedef struct xstate {
	q_ast *t;
	const q_glossary *g;
	uint32_t *stack;
	uint32_t sp;
	fbuf norm, one;
} xstate;

static int is_plain_word(const q_ast *t, uint32_t node)
{
	const q_node *n = &t->node[node];
	return n->kind == QN_WORD && !n->prefix && n->fields == 0;
}

/* The group of the words t->node[kids[0..n)], joined by spaces, if any and
 * none of them is protected. */
static const q_gitem *group_of_run(xstate *x, const uint32_t *kids, uint32_t n)
{
	fbuf_reset(&x->norm);
	for (uint32_t i = 0; i < n; i++) {
		const q_node *w = &x->t->node[kids[i]];
		if (q_gloss_protected(x->g, w->text, w->len))
			return NULL;
		if (q_gloss_norm(w->text, w->len, &x->one) != 0) {
			fa_err_clear();
			return NULL;
		}
		if (i)
			fbuf_putc(&x->norm, ' ');
		fbuf_append(&x->norm, x->one.data, x->one.len);
	}
	if (x->norm.err)
		return NULL;
	return q_gloss_group_of(x->g, (const char *)x->norm.data, x->norm.len);
}

/* Push onto the stack the members of group g as leaves (phrases for
 * members of several words). */
static int push_members(xstate *x, const q_gitem *g, uint32_t off)
{
	q_ast *t = x->t;
	for (uint32_t i = 0; i < g->nterms; i++) {
		if (t->nnodes >= Q_MAX_NODES || x->sp >= Q_MAX_NODES)
			return FATHOM_ETOOBIG;
		q_node *n = &t->node[t->nnodes];
		memset(n, 0, sizeof *n);
		n->kind = strchr(g->terms[i], ' ') ? QN_PHRASE : QN_WORD;
		n->text = g->terms[i];
		n->len = (uint32_t)strlen(g->terms[i]);
		n->off = off;
		x->stack[x->sp++] = t->nnodes++;
	}
	return 0;
}

static int record(xstate *x, const char *text, uint32_t len, const q_gitem *g)
{
	q_ast *t = x->t;
	if (t->nexp >= Q_MAX_EXPANSIONS)
		return 0;
	t->exp[t->nexp].text = text;
	t->exp[t->nexp].len = len;
	t->exp[t->nexp].group = g->id;
	t->exp[t->nexp].terms = (const char *const *)g->terms;
	t->exp[t->nexp].nterms = g->nterms;
	t->nexp++;
	return 0;
}

/* Give node the children stack[base..sp), in a fresh range of kid[]. */
static int adopt(xstate *x, uint32_t node, uint32_t base)
{
	q_ast *t = x->t;
	uint32_t n = x->sp - base;
	if (t->nkids + n > Q_MAX_NODES)
		return FATHOM_ETOOBIG;
	memcpy(t->kid + t->nkids, x->stack + base, n * sizeof *t->kid);
	t->node[node].first = t->nkids;
	t->node[node].n = n;
	t->nkids += n;
	x->sp = base;
	return 0;
}

/* Expand the alternatives of an OR node in place. */
static int expand_or(xstate *x, uint32_t node)
{
	q_ast *t = x->t;
	uint32_t base = x->sp, first = t->node[node].first, n = t->node[node].n;
	int changed = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t kid = t->kid[first + k];
		const q_gitem *g = is_plain_word(t, kid) ? group_of_run(x, &t->kid[first + k], 1) : NULL;
		if (g) {
			int rc = push_members(x, g, t->node[kid].off);
			if (rc)
				return rc;
			record(x, t->node[kid].text, t->node[kid].len, g);
			changed = 1;
		} else {
			if (x->sp >= Q_MAX_NODES)
				return FATHOM_ETOOBIG;
			x->stack[x->sp++] = kid;
		}
	}
	if (!changed) {
		x->sp = base;
		return 0;
	}
	return adopt(x, node, base);
}

int q_expand(q_ast *t, const q_glossary *g, int top_binds, uint32_t *stack)
{
	t->nexp = 0;
	if (!g || g->n == 0)
		return 0;
	xstate x = { t, g, stack, 0, { 0 }, { 0 } };
	fbuf_init(&x.norm, 4096);
	fbuf_init(&x.one, 4096);
	q_node *root = &t->node[t->root];
	uint32_t first = root->first, n = root->n;
	int rc = 0, changed = 0;
	for (uint32_t k = 0; k < n && !rc;) {
		uint32_t kid = t->kid[first + k];
		const q_node *c = &t->node[kid];
		if (c->kind == QN_OR) {
			uint32_t before = t->nkids;
			rc = expand_or(&x, kid);
			changed |= t->nkids != before;
		}
		if (!rc && top_binds && is_plain_word(t, kid)) {
			/* the longest run of words that is a member */
			uint32_t run = 1;
			while (run < Q_EXPAND_NGRAM && k + run < n && is_plain_word(t, t->kid[first + k + run]))
				run++;
			const q_gitem *grp = NULL;
			for (; run >= 1 && !grp; run--)
				if ((grp = group_of_run(&x, &t->kid[first + k], run)) != NULL)
					break;
			if (grp) {
				if (t->nnodes >= Q_MAX_NODES) {
					rc = FATHOM_ETOOBIG;
					break;
				}
				uint32_t or = t->nnodes++;
				memset(&t->node[or], 0, sizeof t->node[or]);
				t->node[or].kind = QN_OR;
				t->node[or].off = c->off;
				uint32_t base = x.sp;
				if ((rc = push_members(&x, grp, c->off)) || (rc = adopt(&x, or, base)))
					break;
				const q_node *last = &t->node[t->kid[first + k + run - 1]];
				record(&x, c->text, (uint32_t)(last->text + last->len - c->text), grp);
				if (x.sp >= Q_MAX_NODES) {
					rc = FATHOM_ETOOBIG;
					break;
				}
				x.stack[x.sp++] = or;
				k += run;
				changed = 1;
				continue;
			}
		}
		if (x.sp >= Q_MAX_NODES) {
			rc = FATHOM_ETOOBIG;
			break;
		}
		x.stack[x.sp++] = kid;
		k++;
	}
	if (!rc && changed)
		rc = adopt(&x, t->root, 0);
	fbuf_free(&x.norm);
	fbuf_free(&x.one);
	if (rc == FATHOM_ETOOBIG)
		return fa_err(FATHOM_ETOOBIG, "the query grows past %d parts with its glossary "
		              "expansions", Q_MAX_NODES);
	return rc;
}
