/*
 * plan.c — a regular expression into the trigram query every file that
 * matches it must satisfy, after Russ Cox, "Regular Expression Matching
 * with a Trigram Index" (2012).
 *
 * The syntax reader (regex_parse.c) reads PCRE2 syntax with a recursive
 * descent and, with the operations here, computes for each part of the
 * pattern what any string it matches looks like:
 *
 *   can_empty  whether it can match the empty string
 *   exact      the set of all strings it can match, while that set is small
 *   prefix     otherwise, a set one of which starts every match
 *   suffix     ... and one of which ends every match
 *   match      a trigram query every match satisfies
 *
 * Concatenation crosses exact sets (ab then [cd] is {abc, abd}) and, when
 * they are not known, adds the trigrams that straddle the two parts (the
 * cross of the left suffixes and the right prefixes). Alternation unites
 * them. When a set grows past a bound, its strings' trigrams move into the
 * match query and the set keeps only their ends. The query of the whole
 * pattern is its match, ANDed with the trigrams of its exact strings.
 *
 * Strings are kept with ASCII letters folded to lower case, as the index
 * stores trigrams. A construct the planner does not follow is "anything"
 * (back references, lookarounds contribute nothing), and one that changes
 * how the rest of the pattern reads ((?x), conditionals, verbs) makes the
 * whole plan ALL: the result may be weaker than it could be, never wrong.
 * With -i a non-ASCII character is "any character" (Unicode case folding
 * may change its bytes). k and s, whose caseless partners include U+212A
 * (Kelvin) and U+017F (long s), need nothing special: the index also holds
 * the trigrams of each file with those two folded to k and s.
 *
 * Soundness is checked by tests/test_grep.c (generated patterns against
 * PCRE2) and fuzz/fuzz_grepplan.c: no plan may rule out a text that PCRE2
 * matches.
 */
#include <stdlib.h>

#include "grep/grep.h"

#define MAX_EXACT 7          /* strings an exact set may hold */
#define MAX_EXACT_LEN 16     /* longer exact strings move into the query */
#define MAX_SET 20           /* strings a prefix or suffix set may hold */
#define MAX_REPEAT 3         /* copies of x spelled out for x{n} */
#define MAX_CROSS 64         /* exact strings a concatenation may make */
#define MAX_TRI_SET 32       /* strings whose trigrams an OR takes */
#define MAX_ARENA (64u << 20) /* the planner's memory: beyond it, plan nothing */

/* ---- query nodes --------------------------------------------------------------- */

static g_query all_q = { GQ_ALL, 0, NULL, 0 };

void *g_plan_alloc(g_planner *g, size_t n)
{
	if (g->err)
		return NULL;
	if (g->a->total > MAX_ARENA) {
		g->global_unsupported = 1;   /* a pathological pattern: give up */
		g->err = 0;
		return NULL;
	}
	void *p = fa_arena_alloc(g->a, n ? n : 1);
	if (!p)
		g->err = fa_err(FATHOM_ENOMEM, "grep plan");
	return p;
}

static g_query *node(g_planner *g, int op)
{
	g_query *q = g_plan_alloc(g, sizeof *q);
	if (!q)
		return NULL;
	memset(q, 0, sizeof *q);
	q->op = op;
	return q;
}

/* A list being built: AND or OR of kids. */
typedef struct qlist {
	g_query **kid;
	uint32_t n, cap;
	int dropped;   /* a kid did not fit */
} qlist;

static void qlist_add(g_planner *g, qlist *l, g_query *q)
{
	if (!q)
		return;
	if (l->n == l->cap) {
		uint32_t nc = l->cap ? l->cap * 2 : 8;
		if (nc > G_MAX_TRIGRAMS) {
			l->dropped = 1;   /* only weakens an AND; an OR gives up */
			return;
		}
		g_query **nk = g_plan_alloc(g, nc * sizeof *nk);
		if (!nk) {
			l->dropped = 1;
			return;
		}
		if (l->n)
			memcpy(nk, l->kid, l->n * sizeof *nk);
		l->kid = nk;
		l->cap = nc;
	}
	l->kid[l->n++] = q;
}

/* AND of the list, simplified: ALL kids dropped, NONE wins, one kid alone. */
static g_query *make_and(g_planner *g, qlist *l)
{
	qlist k = { 0 };
	for (uint32_t i = 0; i < l->n; i++) {
		g_query *q = l->kid[i];
		if (q->op == GQ_NONE)
			return q;
		if (q->op == GQ_ALL)
			continue;
		if (q->op == GQ_AND) {
			for (uint32_t j = 0; j < q->n; j++)
				qlist_add(g, &k, q->kid[j]);
			continue;
		}
		/* the same trigram twice says nothing more (looked for in short
		 * lists: long ones only cost a list decoded twice) */
		int dup = 0;
		if (q->op == GQ_TRI && k.n <= 32)
			for (uint32_t j = 0; j < k.n && !dup; j++)
				dup = k.kid[j]->op == GQ_TRI && k.kid[j]->tri == q->tri;
		if (!dup)
			qlist_add(g, &k, q);
	}
	if (k.n == 0)
		return &all_q;
	if (k.n == 1)
		return k.kid[0];
	g_query *q = node(g, GQ_AND);
	if (q) {
		q->kid = k.kid;
		q->n = k.n;
	}
	return q ? q : &all_q;
}

static int has_tri(const g_query *q, uint32_t tri)
{
	if (q->op == GQ_TRI)
		return q->tri == tri;
	if (q->op == GQ_AND)
		for (uint32_t i = 0; i < q->n; i++)
			if (q->kid[i]->op == GQ_TRI && q->kid[i]->tri == tri)
				return 1;
	return 0;
}

/* The OR of two or more branches, with the trigrams every branch requires
 * taken out in front: (or (and A B X) (and A B Y)) is (and A B (or X Y)),
 * so each list is read once. */
static g_query *factor_or(g_planner *g, qlist *k)
{
	const g_query *b0 = k->kid[0];
	qlist common = { 0 };
	uint32_t n0 = b0->op == GQ_AND ? b0->n : 1;
	for (uint32_t i = 0; i < n0; i++) {
		const g_query *t = b0->op == GQ_AND ? b0->kid[i] : b0;
		if (t->op != GQ_TRI)
			continue;
		int all = 1;
		for (uint32_t j = 1; j < k->n && all; j++)
			all = has_tri(k->kid[j], t->tri);
		if (all)
			qlist_add(g, &common, (g_query *)t);
	}
	qlist rest = { 0 };
	for (uint32_t j = 0; j < k->n && common.n; j++) {
		g_query *b = k->kid[j];
		qlist left = { 0 };
		uint32_t nb = b->op == GQ_AND ? b->n : 1;
		for (uint32_t i = 0; i < nb; i++) {
			g_query *t = b->op == GQ_AND ? b->kid[i] : b;
			if (!(t->op == GQ_TRI && has_tri(&(g_query){ GQ_AND, 0, common.kid, common.n }, t->tri)))
				qlist_add(g, &left, t);
		}
		if (left.n == 0) {
			rest.n = 0;   /* a branch needs only the common part: the OR adds nothing */
			rest.dropped = 0;
			goto done;
		}
		qlist_add(g, &rest, make_and(g, &left));
	}
	if (!common.n) {
		g_query *q = node(g, GQ_OR);
		if (q) {
			q->kid = k->kid;
			q->n = k->n;
		}
		return q ? q : &all_q;
	}
	{
		g_query *q = node(g, GQ_OR);
		if (!q)
			return &all_q;
		q->kid = rest.kid;
		q->n = rest.n;
		qlist_add(g, &common, rest.n > 1 ? q : rest.kid[0]);
	}
done:
	return make_and(g, &common);
}

/* OR of the list: ALL wins (a branch that needs nothing), NONE dropped. An
 * OR that cannot keep every branch is ALL. */
static g_query *make_or(g_planner *g, qlist *l)
{
	if (l->dropped)
		return &all_q;
	qlist k = { 0 };
	for (uint32_t i = 0; i < l->n; i++) {
		g_query *q = l->kid[i];
		if (q->op == GQ_ALL)
			return q;
		if (q->op == GQ_NONE)
			continue;
		if (q->op == GQ_OR) {
			for (uint32_t j = 0; j < q->n; j++)
				qlist_add(g, &k, q->kid[j]);
		} else {
			qlist_add(g, &k, q);
		}
		if (k.dropped)
			return &all_q;   /* a branch could not be kept */
	}
	if (k.n == 0) {
		g_query *none = node(g, GQ_NONE);
		return none ? none : &all_q;
	}
	if (k.n == 1)
		return k.kid[0];
	return factor_or(g, &k);
}

static g_query *and2(g_planner *g, g_query *x, g_query *y)
{
	g_query *v[2] = { x, y };
	qlist l = { v, 2, 2, 0 };
	return make_and(g, &l);
}

static g_query *or2(g_planner *g, g_query *x, g_query *y)
{
	g_query *v[2] = { x, y };
	qlist l = { v, 2, 2, 0 };
	return make_or(g, &l);
}

/* ---- string sets ------------------------------------------------------------------ */

static int cmp_fwd(const void *pa, const void *pb)
{
	const g_str *a = pa, *b = pb;
	uint32_t n = a->n < b->n ? a->n : b->n;
	int c = n ? memcmp(a->p, b->p, n) : 0;
	return c ? c : (a->n > b->n) - (a->n < b->n);
}

static int cmp_rev(const void *pa, const void *pb)
{
	const g_str *a = pa, *b = pb;
	uint32_t n = a->n < b->n ? a->n : b->n;
	for (uint32_t i = 1; i <= n; i++) {
		unsigned char x = a->p[a->n - i], y = b->p[b->n - i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return (a->n > b->n) - (a->n < b->n);
}

/* Sort and drop repeats (suffix sets sort on reversed strings). */
static void set_clean(g_set *s, int suffix)
{
	if (s->n < 2)
		return;
	int (*cmp)(const void *, const void *) = suffix ? cmp_rev : cmp_fwd;
	qsort(s->v, s->n, sizeof *s->v, cmp);
	uint32_t w = 1;
	for (uint32_t i = 1; i < s->n; i++)
		if (cmp(&s->v[i], &s->v[w - 1]) != 0)
			s->v[w++] = s->v[i];
	s->n = w;
}

static uint32_t set_minlen(const g_set *s)
{
	if (s->n == 0)
		return 0;
	uint32_t m = UINT32_MAX;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i].n < m)
			m = s->v[i].n;
	return m;
}

g_set g_set_new(g_planner *g, uint32_t cap)
{
	g_set s = { g_plan_alloc(g, (cap ? cap : 1) * sizeof(g_str)), 0 };
	return s;
}

g_set g_set_one(g_planner *g, const unsigned char *p, uint32_t n)
{
	g_set s = g_set_new(g, 1);
	if (s.v) {
		unsigned char *c = g_plan_alloc(g, n);
		if (c) {
			if (n)
				memcpy(c, p, n);
			s.v[0] = (g_str){ c, n };
			s.n = 1;
		}
	}
	return s;
}

static g_set set_union(g_planner *g, const g_set *a, const g_set *b, int suffix)
{
	g_set s = g_set_new(g, a->n + b->n);
	if (!s.v)
		return s;
	for (uint32_t i = 0; i < a->n; i++)
		s.v[s.n++] = a->v[i];
	for (uint32_t i = 0; i < b->n; i++)
		s.v[s.n++] = b->v[i];
	set_clean(&s, suffix);
	return s;
}

static g_set set_cross(g_planner *g, const g_set *a, const g_set *b, int suffix)
{
	g_set s = g_set_new(g, a->n * b->n);
	if (!s.v)
		return s;
	for (uint32_t i = 0; i < a->n; i++) {
		for (uint32_t j = 0; j < b->n; j++) {
			uint32_t n = a->v[i].n + b->v[j].n;
			unsigned char *c = g_plan_alloc(g, n);
			if (!c)
				return s;
			if (a->v[i].n)
				memcpy(c, a->v[i].p, a->v[i].n);
			if (b->v[j].n)
				memcpy(c + a->v[i].n, b->v[j].p, b->v[j].n);
			s.v[s.n++] = (g_str){ c, n };
		}
	}
	set_clean(&s, suffix);
	return s;
}

/* The OR over the strings of s of the AND of each one's trigrams; ALL when
 * one of them is too short to have any, or there are so many that reading
 * their lists would cost more than it saves. */
static g_query *set_trigrams(g_planner *g, const g_set *s)
{
	if (s->n == 0 || s->n > MAX_TRI_SET || set_minlen(s) < 3)
		return &all_q;
	qlist alts = { 0 };
	for (uint32_t i = 0; i < s->n && !g->err; i++) {
		qlist seq = { 0 };
		const unsigned char *p = s->v[i].p;
		for (uint32_t k = 0; k + 2 < s->v[i].n; k++) {
			g_query *t = node(g, GQ_TRI);
			if (!t)
				break;
			t->tri = ix_trigram(p[k], p[k + 1], p[k + 2]);
			qlist_add(g, &seq, t);
		}
		qlist_add(g, &alts, make_and(g, &seq));
	}
	return make_or(g, &alts);
}

/* ---- what a part of the pattern matches ---------------------------------------------- */

static g_set set_empty_string(g_planner *g)
{
	return g_set_one(g, (const unsigned char *)"", 0);
}

g_info g_info_any_char(g_planner *g)
{
	g_info x = { 0, 0, { NULL, 0 }, set_empty_string(g), set_empty_string(g), &all_q };
	return x;
}

g_info g_info_any_match(g_planner *g)
{
	g_info x = g_info_any_char(g);
	x.can_empty = 1;
	return x;
}

g_info g_info_empty(g_planner *g)
{
	g_info x = { 1, 1, set_empty_string(g), { NULL, 0 }, { NULL, 0 }, &all_q };
	return x;
}

g_info g_info_exact(g_set s)
{
	g_info x = { 0, 1, s, { NULL, 0 }, { NULL, 0 }, &all_q };
	for (uint32_t i = 0; i < s.n; i++)
		x.can_empty |= s.v[i].n == 0;
	return x;
}

static void add_exact(g_planner *g, g_info *x)
{
	if (x->has_exact)
		x->match = and2(g, x->match, set_trigrams(g, &x->exact));
}

/* Keep a prefix or suffix set small: its trigrams go into the match, and it
 * keeps only its strings' first (last) two bytes, or fewer while it is too
 * large; a string that extends another of the set says nothing more. */
static g_set set_copy(g_planner *g, const g_set *s)
{
	g_set c = g_set_new(g, s->n);
	if (c.v) {
		if (s->n)
			memcpy(c.v, s->v, s->n * sizeof *c.v);
		c.n = s->n;
	}
	return c;
}

static void simplify_set(g_planner *g, g_info *x, g_set *set, int suffix)
{
	/* infos are passed by value and share their arrays: this one gets
	 * its own before its strings are cut */
	g_set copy = set_copy(g, set), *s = &copy;
	set_clean(s, suffix);
	x->match = and2(g, x->match, set_trigrams(g, s));
	for (uint32_t n = 3; n >= 1 && (n == 3 || s->n > MAX_SET); n--) {
		for (uint32_t i = 0; i < s->n; i++) {
			if (s->v[i].n >= n) {
				if (suffix)
					s->v[i].p += s->v[i].n - (n - 1);
				s->v[i].n = n - 1;
			}
		}
		set_clean(s, suffix);
	}
	uint32_t w = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		if (w > 0) {
			const g_str *prev = &s->v[w - 1], *cur = &s->v[i];
			int extends = cur->n >= prev->n &&
			              (prev->n == 0 ||
			               memcmp(suffix ? cur->p + cur->n - prev->n : cur->p, prev->p, prev->n) == 0);
			if (extends)
				continue;
		}
		s->v[w++] = s->v[i];
	}
	s->n = w;
	*set = copy;
}

/* The exact set becomes prefix and suffix sets (and trigrams in the match)
 * when it is too large or its strings too long, or when force asks and its
 * strings have trigrams. */
static void simplify(g_planner *g, g_info *x, int force)
{
	if (x->has_exact) {
		set_clean(&x->exact, 0);
		uint32_t ml = set_minlen(&x->exact);
		if (x->exact.n > MAX_EXACT || (force && ml >= 3) || ml >= MAX_EXACT_LEN) {
			add_exact(g, x);
			g_set pre = g_set_new(g, x->exact.n), suf = g_set_new(g, x->exact.n);
			if (!pre.v || !suf.v)
				return;
			for (uint32_t i = 0; i < x->exact.n; i++) {
				g_str s = x->exact.v[i];
				if (s.n < 3) {
					pre.v[pre.n++] = s;
					suf.v[suf.n++] = s;
				} else {
					pre.v[pre.n++] = (g_str){ s.p, 2 };
					suf.v[suf.n++] = (g_str){ s.p + s.n - 2, 2 };
				}
			}
			x->prefix = pre;
			x->suffix = suf;
			x->has_exact = 0;
		}
	}
	if (!x->has_exact) {
		simplify_set(g, x, &x->prefix, 0);
		simplify_set(g, x, &x->suffix, 1);
	}
}

/* No exact set any more: its strings are the prefixes and suffixes. */
static void drop_exact(g_planner *g, g_info *x)
{
	if (!x->has_exact)
		return;
	add_exact(g, x);
	x->prefix = set_copy(g, &x->exact);
	x->suffix = set_copy(g, &x->exact);
	x->has_exact = 0;
	simplify(g, x, 0);
}

g_info g_info_concat(g_planner *g, g_info x, g_info y)
{
	g_info xy;
	memset(&xy, 0, sizeof xy);
	xy.can_empty = x.can_empty && y.can_empty;
	xy.match = and2(g, x.match, y.match);
	if (x.has_exact && y.has_exact && (uint64_t)x.exact.n * y.exact.n <= MAX_CROSS) {
		xy.has_exact = 1;
		xy.exact = set_cross(g, &x.exact, &y.exact, 0);
	} else {
		if (x.has_exact && y.has_exact) {
			/* the cross would be too large: the parts keep what they know */
			drop_exact(g, &x);
			drop_exact(g, &y);
			xy.match = and2(g, x.match, y.match);
		}
		if (x.has_exact) {
			xy.prefix = set_cross(g, &x.exact, &y.prefix, 0);
		} else {
			xy.prefix = x.prefix;
			if (x.can_empty)
				xy.prefix = set_union(g, &x.prefix, &y.prefix, 0);
		}
		if (y.has_exact) {
			xy.suffix = set_cross(g, &x.suffix, &y.exact, 1);
		} else {
			xy.suffix = y.suffix;
			if (y.can_empty)
				xy.suffix = set_union(g, &y.suffix, &x.suffix, 1);
		}
		/* trigrams that straddle the two parts */
		if (!x.has_exact && !y.has_exact && x.suffix.n <= MAX_SET && y.prefix.n <= MAX_SET &&
		    set_minlen(&x.suffix) + set_minlen(&y.prefix) >= 3) {
			g_set c = set_cross(g, &x.suffix, &y.prefix, 0);
			xy.match = and2(g, xy.match, set_trigrams(g, &c));
		}
	}
	simplify(g, &xy, 0);
	return xy;
}

g_info g_info_alternate(g_planner *g, g_info x, g_info y)
{
	g_info xy;
	memset(&xy, 0, sizeof xy);
	if (x.has_exact && y.has_exact) {
		xy.has_exact = 1;
		xy.exact = set_union(g, &x.exact, &y.exact, 0);
	} else {
		if (x.has_exact) {
			xy.prefix = set_union(g, &x.exact, &y.prefix, 0);
			xy.suffix = set_union(g, &x.exact, &y.suffix, 1);
			add_exact(g, &x);
		} else if (y.has_exact) {
			xy.prefix = set_union(g, &x.prefix, &y.exact, 0);
			xy.suffix = set_union(g, &x.suffix, &y.exact, 1);
			add_exact(g, &y);
		} else {
			xy.prefix = set_union(g, &x.prefix, &y.prefix, 0);
			xy.suffix = set_union(g, &x.suffix, &y.suffix, 1);
		}
	}
	xy.can_empty = x.can_empty || y.can_empty;
	xy.match = or2(g, x.match, y.match);
	simplify(g, &xy, 0);
	return xy;
}

/* x+: at least one x, so its prefixes and suffixes hold; exact no more. */
static g_info plus(g_planner *g, g_info x)
{
	simplify(g, &x, 1);
	drop_exact(g, &x);
	return x;
}

/* One character's info: exact (folded) or, under -i where folding is more
 * than ASCII, any character. */
g_info g_info_char(g_planner *g, const unsigned char *bytes, uint32_t n)
{
	unsigned char f[4];
	if (n == 0 || n > 4)
		return g_info_any_char(g);
	if (g->caseless && bytes[0] >= 0x80)
		return g_info_any_char(g);
	for (uint32_t i = 0; i < n; i++)
		f[i] = ix_tri_fold(bytes[i]);
	return g_info_exact(g_set_one(g, f, n));
}

g_info g_info_repeat(g_planner *g, g_info x, uint32_t min, uint32_t max)
{
	if (max == 0)
		return g_info_empty(g);
	if (min == 0)
		return max == 1 ? g_info_alternate(g, x, g_info_empty(g))   /* x? */
		                : g_info_any_match(g);                      /* x*, x{0,n} */
	if (min == 1)
		return max == 1 ? x : plus(g, x);                           /* x, x+, x{1,n} */
	/* x{n,m}, n >= 2: up to MAX_REPEAT copies spelled out; the last as x+
	 * when more may follow (x{2,} is x x+, x{2,4} within x x+, x{5}
	 * within x x x+), whose suffixes are x's, so what follows still
	 * meets it */
	g_info r = x;
	uint32_t spelled = min < MAX_REPEAT ? min : MAX_REPEAT;
	for (uint32_t i = 2; i < spelled; i++)
		r = g_info_concat(g, r, x);
	if (max == min && min <= MAX_REPEAT)
		return g_info_concat(g, r, x);
	return g_info_concat(g, r, plus(g, x));
}

/* ---- a whole pattern ----------------------------------------------------------------------- */

/* The query of a whole pattern's info. */
static g_query *final_query(g_planner *g, g_info x)
{
	simplify(g, &x, 1);
	add_exact(g, &x);
	return x.match;
}

int g_plan(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_query **out)
{
	g_planner g = { a, (const unsigned char *)pattern, (const unsigned char *)pattern + len,
	                (flags & G_CASELESS) != 0, 0, 0, 0 };
	*out = &all_q;
	if (len > G_MAX_PATTERN)
		return 0;   /* not planned: every file is read */
	g_info x;
	if (flags & G_LITERAL) {
		x = g_read_literal(&g);
	} else {
		if (g_inline_option(g.p, g.end, 'i'))
			g.caseless = 1;   /* (?i) after text planned case-sensitively */
		x = g_read_regex(&g);
		if (!g.err && g.p < g.end)
			g.global_unsupported = 1;   /* an unbalanced ')': PCRE2 refuses it */
	}
	g_query *q = final_query(&g, x);
	if (g.err)
		return g.err;
	*out = g.global_unsupported || !q ? &all_q : q;
	return 0;
}

/* ---- formatting and evaluation ------------------------------------------------------------ */

void g_query_format(const g_query *q, fbuf *out)
{
	switch (q->op) {
	case GQ_ALL:
		fbuf_puts(out, "ALL");
		return;
	case GQ_NONE:
		fbuf_puts(out, "NONE");
		return;
	case GQ_TRI: {
		unsigned char t[3] = { (unsigned char)(q->tri >> 16), (unsigned char)(q->tri >> 8),
		                       (unsigned char)q->tri };
		fbuf_putc(out, '"');
		for (int i = 0; i < 3; i++) {
			if (t[i] < 0x20 || t[i] == '"' || t[i] == '\\' || t[i] >= 0x7f)
				fbuf_printf(out, "\\x%02x", t[i]);
			else
				fbuf_putc(out, t[i]);
		}
		fbuf_putc(out, '"');
		return;
	}
	default:
		fbuf_puts(out, q->op == GQ_AND ? "(and" : "(or");
		for (uint32_t i = 0; i < q->n; i++) {
			fbuf_putc(out, ' ');
			g_query_format(q->kid[i], out);
		}
		fbuf_putc(out, ')');
	}
}

int g_query_eval(const g_query *q, int (*has)(void *ctx, uint32_t tri), void *ctx)
{
	switch (q->op) {
	case GQ_ALL:
		return 1;
	case GQ_NONE:
		return 0;
	case GQ_TRI:
		return has(ctx, q->tri) != 0;
	case GQ_AND:
		for (uint32_t i = 0; i < q->n; i++)
			if (!g_query_eval(q->kid[i], has, ctx))
				return 0;
		return 1;
	default:
		for (uint32_t i = 0; i < q->n; i++)
			if (g_query_eval(q->kid[i], has, ctx))
				return 1;
		return 0;
	}
}

g_query *g_query_and(fa_arena *a, g_query *const *q, uint32_t n)
{
	g_planner g = { a, NULL, NULL, 0, 0, 0, 0 };
	qlist l = { (g_query **)q, n, n, 0 };
	return make_and(&g, &l);
}

g_query *g_query_or(fa_arena *a, g_query *const *q, uint32_t n)
{
	g_planner g = { a, NULL, NULL, 0, 0, 0, 0 };
	qlist l = { (g_query **)q, n, n, 0 };
	return make_or(&g, &l);
}
