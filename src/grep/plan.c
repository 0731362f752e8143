/*
 * plan.c — a regular expression into the trigram query every file that
 * matches it must satisfy, after Russ Cox, "Regular Expression Matching
 * with a Trigram Index" (2012).
 *
 * The planner reads PCRE2 syntax with a recursive descent and computes, for
 * each part of the pattern, what any string it matches looks like:
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
#define MAX_CLASS 40         /* characters a class may expand to */
#define MAX_REPEAT 3         /* copies of x spelled out for x{n} */
#define MAX_CROSS 64         /* exact strings a concatenation may make */
#define MAX_TRI_SET 32       /* strings whose trigrams an OR takes */
#define MAX_PATTERN 16384    /* longer patterns are not planned (read every file) */
#define MAX_ARENA (64u << 20) /* the planner's memory: beyond it, plan nothing */

typedef struct gstr {
	const unsigned char *p;
	uint32_t n;
} gstr;

typedef struct gset {
	gstr *v;
	uint32_t n;
} gset;

typedef struct ginfo {
	int can_empty;
	int has_exact;
	gset exact;
	gset prefix, suffix;   /* when !has_exact */
	g_query *match;
} ginfo;

typedef struct gp {
	fa_arena *a;
	const unsigned char *p, *end;
	int caseless;
	int depth;
	int global_unsupported;   /* the whole pattern is beyond the planner */
	int err;
} gp;

/* ---- query nodes --------------------------------------------------------------- */

static g_query all_q = { GQ_ALL, 0, NULL, 0 };

/* Does the pattern name inline option opt anywhere ((?i), (?-i:...))?
 * Over-counts (inside \Q...\E or a class), never misses. */
static int inline_option(const unsigned char *p, const unsigned char *end, char opt)
{
	for (; p + 2 < end; p++) {
		if (p[0] == '\\') {
			p++;
			continue;
		}
		if (p[0] != '(' || p[1] != '?')
			continue;
		for (const unsigned char *o = p + 2; o < end && *o && strchr("imnsxUJaDSWPT-^", *o); o++)
			if (*o == opt)
				return 1;
	}
	return 0;
}

static void *galloc(gp *g, size_t n)
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

static g_query *node(gp *g, int op)
{
	g_query *q = galloc(g, sizeof *q);
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

static void qlist_add(gp *g, qlist *l, g_query *q)
{
	if (!q)
		return;
	if (l->n == l->cap) {
		uint32_t nc = l->cap ? l->cap * 2 : 8;
		if (nc > G_MAX_TRIGRAMS) {
			l->dropped = 1;   /* only weakens an AND; an OR gives up */
			return;
		}
		g_query **nk = galloc(g, nc * sizeof *nk);
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
static g_query *make_and(gp *g, qlist *l)
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
static g_query *factor_or(gp *g, qlist *k)
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
static g_query *make_or(gp *g, qlist *l)
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

static g_query *and2(gp *g, g_query *x, g_query *y)
{
	g_query *v[2] = { x, y };
	qlist l = { v, 2, 2, 0 };
	return make_and(g, &l);
}

static g_query *or2(gp *g, g_query *x, g_query *y)
{
	g_query *v[2] = { x, y };
	qlist l = { v, 2, 2, 0 };
	return make_or(g, &l);
}

/* ---- string sets ------------------------------------------------------------------ */

static int cmp_fwd(const void *pa, const void *pb)
{
	const gstr *a = pa, *b = pb;
	uint32_t n = a->n < b->n ? a->n : b->n;
	int c = n ? memcmp(a->p, b->p, n) : 0;
	return c ? c : (a->n > b->n) - (a->n < b->n);
}

static int cmp_rev(const void *pa, const void *pb)
{
	const gstr *a = pa, *b = pb;
	uint32_t n = a->n < b->n ? a->n : b->n;
	for (uint32_t i = 1; i <= n; i++) {
		unsigned char x = a->p[a->n - i], y = b->p[b->n - i];
		if (x != y)
			return x < y ? -1 : 1;
	}
	return (a->n > b->n) - (a->n < b->n);
}

/* Sort and drop repeats (suffix sets sort on reversed strings). */
static void set_clean(gset *s, int suffix)
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

static uint32_t set_minlen(const gset *s)
{
	if (s->n == 0)
		return 0;
	uint32_t m = UINT32_MAX;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->v[i].n < m)
			m = s->v[i].n;
	return m;
}

static gset set_new(gp *g, uint32_t cap)
{
	gset s = { galloc(g, (cap ? cap : 1) * sizeof(gstr)), 0 };
	return s;
}

static gset set_one(gp *g, const unsigned char *p, uint32_t n)
{
	gset s = set_new(g, 1);
	if (s.v) {
		unsigned char *c = galloc(g, n);
		if (c) {
			if (n)
				memcpy(c, p, n);
			s.v[0] = (gstr){ c, n };
			s.n = 1;
		}
	}
	return s;
}

static gset set_union(gp *g, const gset *a, const gset *b, int suffix)
{
	gset s = set_new(g, a->n + b->n);
	if (!s.v)
		return s;
	for (uint32_t i = 0; i < a->n; i++)
		s.v[s.n++] = a->v[i];
	for (uint32_t i = 0; i < b->n; i++)
		s.v[s.n++] = b->v[i];
	set_clean(&s, suffix);
	return s;
}

static gset set_cross(gp *g, const gset *a, const gset *b, int suffix)
{
	gset s = set_new(g, a->n * b->n);
	if (!s.v)
		return s;
	for (uint32_t i = 0; i < a->n; i++) {
		for (uint32_t j = 0; j < b->n; j++) {
			uint32_t n = a->v[i].n + b->v[j].n;
			unsigned char *c = galloc(g, n);
			if (!c)
				return s;
			if (a->v[i].n)
				memcpy(c, a->v[i].p, a->v[i].n);
			if (b->v[j].n)
				memcpy(c + a->v[i].n, b->v[j].p, b->v[j].n);
			s.v[s.n++] = (gstr){ c, n };
		}
	}
	set_clean(&s, suffix);
	return s;
}

/* The OR over the strings of s of the AND of each one's trigrams; ALL when
 * one of them is too short to have any, or there are so many that reading
 * their lists would cost more than it saves. */
static g_query *set_trigrams(gp *g, const gset *s)
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

static gset set_empty_string(gp *g)
{
	return set_one(g, (const unsigned char *)"", 0);
}

static ginfo info_any_char(gp *g)
{
	ginfo x = { 0, 0, { NULL, 0 }, set_empty_string(g), set_empty_string(g), &all_q };
	return x;
}

static ginfo info_any_match(gp *g)
{
	ginfo x = info_any_char(g);
	x.can_empty = 1;
	return x;
}

static ginfo info_empty(gp *g)
{
	ginfo x = { 1, 1, set_empty_string(g), { NULL, 0 }, { NULL, 0 }, &all_q };
	return x;
}

static ginfo info_exact(gset s)
{
	ginfo x = { 0, 1, s, { NULL, 0 }, { NULL, 0 }, &all_q };
	for (uint32_t i = 0; i < s.n; i++)
		x.can_empty |= s.v[i].n == 0;
	return x;
}

static void add_exact(gp *g, ginfo *x)
{
	if (x->has_exact)
		x->match = and2(g, x->match, set_trigrams(g, &x->exact));
}

/* Keep a prefix or suffix set small: its trigrams go into the match, and it
 * keeps only its strings' first (last) two bytes, or fewer while it is too
 * large; a string that extends another of the set says nothing more. */
static gset set_copy(gp *g, const gset *s)
{
	gset c = set_new(g, s->n);
	if (c.v) {
		if (s->n)
			memcpy(c.v, s->v, s->n * sizeof *c.v);
		c.n = s->n;
	}
	return c;
}

static void simplify_set(gp *g, ginfo *x, gset *set, int suffix)
{
	/* infos are passed by value and share their arrays: this one gets
	 * its own before its strings are cut */
	gset copy = set_copy(g, set), *s = &copy;
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
			const gstr *prev = &s->v[w - 1], *cur = &s->v[i];
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
static void simplify(gp *g, ginfo *x, int force)
{
	if (x->has_exact) {
		set_clean(&x->exact, 0);
		uint32_t ml = set_minlen(&x->exact);
		if (x->exact.n > MAX_EXACT || (force && ml >= 3) || ml >= MAX_EXACT_LEN) {
			add_exact(g, x);
			gset pre = set_new(g, x->exact.n), suf = set_new(g, x->exact.n);
			if (!pre.v || !suf.v)
				return;
			for (uint32_t i = 0; i < x->exact.n; i++) {
				gstr s = x->exact.v[i];
				if (s.n < 3) {
					pre.v[pre.n++] = s;
					suf.v[suf.n++] = s;
				} else {
					pre.v[pre.n++] = (gstr){ s.p, 2 };
					suf.v[suf.n++] = (gstr){ s.p + s.n - 2, 2 };
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
static void drop_exact(gp *g, ginfo *x)
{
	if (!x->has_exact)
		return;
	add_exact(g, x);
	x->prefix = set_copy(g, &x->exact);
	x->suffix = set_copy(g, &x->exact);
	x->has_exact = 0;
	simplify(g, x, 0);
}

static ginfo concat(gp *g, ginfo x, ginfo y)
{
	ginfo xy;
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
			gset c = set_cross(g, &x.suffix, &y.prefix, 0);
			xy.match = and2(g, xy.match, set_trigrams(g, &c));
		}
	}
	simplify(g, &xy, 0);
	return xy;
}

static ginfo alternate(gp *g, ginfo x, ginfo y)
{
	ginfo xy;
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
static ginfo plus(gp *g, ginfo x)
{
	simplify(g, &x, 1);
	drop_exact(g, &x);
	return x;
}

/* ---- reading PCRE2 syntax ------------------------------------------------------------ */

/* One character's info: exact (folded) or, under -i where folding is more
 * than ASCII, any character. */
static ginfo info_char(gp *g, const unsigned char *bytes, uint32_t n)
{
	unsigned char f[4];
	if (n == 0 || n > 4)
		return info_any_char(g);
	if (g->caseless && bytes[0] >= 0x80)
		return info_any_char(g);
	for (uint32_t i = 0; i < n; i++)
		f[i] = ix_tri_fold(bytes[i]);
	return info_exact(set_one(g, f, n));
}

static uint32_t utf8_encode(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		if (cp >= 0xd800 && cp < 0xe000)
			return 0;
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp < 0x110000) {
		out[0] = (unsigned char)(0xf0 | cp >> 18);
		out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (unsigned char)(0x80 | (cp & 0x3f));
		return 4;
	}
	return 0;
}

static int hexval(unsigned char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	h |= 0x20;
	return h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
}

/* Skip a {...} argument at *p (\x{..}, \p{..}, \g{..}): 0 when malformed. */
static int skip_braces(gp *g, const unsigned char **p)
{
	if (*p >= g->end || **p != '{')
		return 1;
	const unsigned char *q = *p + 1;
	while (q < g->end && *q != '}')
		q++;
	if (q >= g->end)
		return 0;
	*p = q + 1;
	return 1;
}

enum esc_kind {
	ESC_CHAR,      /* one code point: *cp */
	ESC_DIGIT,     /* \d */
	ESC_CLASS,     /* a large class: any one character */
	ESC_EMPTY,     /* an assertion: \b \B \A \z \Z \G \K */
	ESC_ANY,       /* anything: back references, \R \X */
	ESC_BAD        /* not followed: plan nothing */
};

/* The escape at g->p (just after the backslash); advances past it. */
static int read_escape(gp *g, uint32_t *cp, int in_class)
{
	const unsigned char *p = g->p;
	if (p >= g->end)
		return ESC_BAD;
	unsigned char c = *p++;
	g->p = p;
	switch (c) {
	case 't': *cp = '\t'; return ESC_CHAR;
	case 'n': *cp = '\n'; return ESC_CHAR;
	case 'r': *cp = '\r'; return ESC_CHAR;
	case 'f': *cp = '\f'; return ESC_CHAR;
	case 'e': *cp = 27; return ESC_CHAR;
	case 'a': *cp = 7; return ESC_CHAR;
	case 'b':
		if (in_class) {
			*cp = 8;
			return ESC_CHAR;
		}
		return ESC_EMPTY;
	case 'B': case 'A': case 'z': case 'Z': case 'G': case 'K':
		return in_class ? ESC_BAD : ESC_EMPTY;
	case 'd':
		return ESC_DIGIT;
	case 'D': case 'w': case 'W': case 's': case 'S': case 'h': case 'H': case 'v': case 'V':
		return ESC_CLASS;
	case 'N':
		if (p < g->end && *p == '{')
			return skip_braces(g, &g->p) ? ESC_CLASS : ESC_BAD;
		return ESC_CLASS;
	case 'p': case 'P':
		if (p < g->end && *p == '{')
			return skip_braces(g, &g->p) ? ESC_CLASS : ESC_BAD;
		if (p < g->end) {
			g->p = p + 1;   /* \pL */
			return ESC_CLASS;
		}
		return ESC_BAD;
	case 'R': case 'X':
		return in_class ? ESC_BAD : ESC_ANY;
	case 'x': {
		uint32_t v = 0;
		if (p < g->end && *p == '{') {
			const unsigned char *q = p + 1;
			int k = 0;
			while (q < g->end && hexval(*q) >= 0 && k < 8) {
				v = v * 16 + (uint32_t)hexval(*q++);
				k++;
			}
			if (q >= g->end || *q != '}' || k == 0)
				return ESC_BAD;
			g->p = q + 1;
		} else {
			int k = 0;
			while (k < 2 && p < g->end && hexval(*p) >= 0) {
				v = v * 16 + (uint32_t)hexval(*p++);
				k++;
			}
			g->p = p;
		}
		*cp = v;
		return ESC_CHAR;
	}
	case 'o':
		if (p < g->end && *p == '{') {
			const unsigned char *q = p + 1;
			uint32_t v = 0;
			int k = 0;
			while (q < g->end && *q >= '0' && *q <= '7' && k < 11) {
				v = v * 8 + (uint32_t)(*q++ - '0');
				k++;
			}
			if (q >= g->end || *q != '}' || k == 0)
				return ESC_BAD;
			g->p = q + 1;
			*cp = v;
			return ESC_CHAR;
		}
		return ESC_BAD;
	case 'c':
		if (p < g->end && *p >= 0x20 && *p < 0x7f) {
			unsigned char x = *p >= 'a' && *p <= 'z' ? (unsigned char)(*p - 32) : *p;
			*cp = (uint32_t)(x ^ 0x40);
			g->p = p + 1;
			return ESC_CHAR;
		}
		return ESC_BAD;
	case '0': {
		uint32_t v = 0;
		int k = 0;
		while (k < 2 && p < g->end && *p >= '0' && *p <= '7') {
			v = v * 8 + (uint32_t)(*p++ - '0');
			k++;
		}
		g->p = p;
		*cp = v;
		return ESC_CHAR;
	}
	case 'g': case 'k':
		/* back references by number or name: \g1 \g{-1} \k<n> \k'n' \k{n} */
		if (in_class)
			return ESC_BAD;
		if (p < g->end && (*p == '{' || *p == '<' || *p == '\'')) {
			unsigned char close = *p == '{' ? '}' : *p == '<' ? '>' : '\'';
			const unsigned char *q = p + 1;
			while (q < g->end && *q != close)
				q++;
			if (q >= g->end)
				return ESC_BAD;
			g->p = q + 1;
			return ESC_ANY;
		}
		if (c == 'g') {
			while (g->p < g->end && ((*g->p >= '0' && *g->p <= '9') || *g->p == '-' || *g->p == '+'))
				g->p++;
			return ESC_ANY;
		}
		return ESC_BAD;
	case 'Q': case 'E':
		return ESC_BAD;   /* handled by the callers */
	default:
		if (c >= '1' && c <= '9') {
			if (in_class)
				return ESC_BAD;   /* octal or not: not followed */
			while (g->p < g->end && *g->p >= '0' && *g->p <= '9')
				g->p++;
			return ESC_ANY;       /* a back reference */
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80)
			return ESC_BAD;       /* PCRE2 refuses it, or it means more */
		*cp = c;                  /* escaped punctuation stands for itself */
		return ESC_CHAR;
	}
}

static ginfo info_codepoint(gp *g, uint32_t cp)
{
	unsigned char b[4];
	uint32_t n = utf8_encode(cp, b);
	if (n == 0) {
		g->global_unsupported = 1;
		return info_any_char(g);
	}
	return info_char(g, b, n);
}

/* Length of the UTF-8 character starting with lead byte c (0: invalid). */
static uint32_t utf8_len(unsigned char c)
{
	return c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
}

/* A character class at '[': the set of its characters when small and
 * ASCII, else any character. */
static ginfo parse_class(gp *g)
{
	const unsigned char *p = g->p + 1;
	int neg = 0, big = 0;
	uint8_t member[128];
	memset(member, 0, sizeof member);
	if (p < g->end && *p == '^') {
		neg = 1;
		p++;
	}
	int first = 1;
	int have_prev = 0;
	uint32_t prev = 0;
	for (;;) {
		if (p >= g->end) {
			g->global_unsupported = 1;   /* unterminated: PCRE2 refuses it */
			g->p = g->end;
			return info_any_char(g);
		}
		unsigned char c = *p;
		if (c == ']' && !first)
			break;
		first = 0;
		uint32_t cp;
		int is_char = 1;
		if (c == '[' && p + 1 < g->end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			/* [:alpha:] when well formed; else '[' is a member */
			unsigned char kind = p[1];
			const unsigned char *e = p + 2;
			if (e < g->end && *e == '^')
				e++;
			while (e < g->end && ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z')))
				e++;
			if (e + 1 < g->end && e[0] == kind && e[1] == ']') {
				big = 1;
				p = e + 2;
				have_prev = 0;
				continue;
			}
			/* [[:<:]] and other forms PCRE2 gives a meaning or refuses */
			g->global_unsupported = 1;
			g->p = g->end;
			return info_any_char(g);
		} else if (c == '\\') {
			if (p + 1 < g->end && (p[1] == 'Q' || p[1] == 'E')) {
				/* \Q...\E inside a class (ranges across it, a ']' first
				 * in it): not followed */
				g->global_unsupported = 1;
				g->p = g->end;
				return info_any_char(g);
			}
			g->p = p + 1;
			int k = read_escape(g, &cp, 1);
			p = g->p;
			if (k == ESC_DIGIT) {
				for (int d = '0'; d <= '9'; d++)
					member[d] = 1;
				is_char = 0;
			} else if (k == ESC_CLASS) {
				big = 1;
				is_char = 0;
			} else if (k != ESC_CHAR) {
				g->global_unsupported = 1;
				g->p = g->end;
				return info_any_char(g);
			}
		} else if (c >= 0x80) {
			uint32_t n = utf8_len(c);
			if (n == 0 || p + n > g->end) {
				g->global_unsupported = 1;
				g->p = g->end;
				return info_any_char(g);
			}
			cp = 0x80;   /* non-ASCII: any character */
			p += n;
		} else {
			cp = c;
			p++;
		}
		if (!is_char) {
			if (have_prev == 2)
				member['-'] = 1;   /* [a-\d]: the '-' is a member */
			have_prev = 0;
			continue;
		}
		/* a range: prev-cp */
		if (have_prev == 2) {
			if (cp < prev) {
				g->global_unsupported = 1;   /* PCRE2 refuses it */
				g->p = g->end;
				return info_any_char(g);
			}
			if (cp >= 0x80 || cp - prev > MAX_CLASS)
				big = 1;
			else
				for (uint32_t x = prev; x <= cp; x++)
					member[x] = 1;
			have_prev = 0;
			continue;
		}
		if (cp >= 0x80)
			big = 1;
		else
			member[cp] = 1;
		if (p + 1 < g->end && *p == '-' && p[1] != ']') {
			prev = cp;
			have_prev = 2;
			p++;
		} else {
			have_prev = 1;
		}
	}
	g->p = p + 1;
	if (neg || big)
		return info_any_char(g);
	/* the members, folded as the index folds them */
	uint8_t folded[128];
	memset(folded, 0, sizeof folded);
	uint32_t n = 0;
	for (int c = 0; c < 128; c++) {
		if (!member[c])
			continue;
		unsigned char f = ix_tri_fold((unsigned char)c);
		if (!folded[f]) {
			folded[f] = 1;
			n++;
		}
	}
	if (n == 0 || n > MAX_CLASS)
		return info_any_char(g);
	gset s = set_new(g, n);
	unsigned char *bytes = galloc(g, n);
	if (!s.v || !bytes)
		return info_any_char(g);
	for (int c = 0; c < 128; c++) {
		if (folded[c]) {
			bytes[s.n] = (unsigned char)c;
			s.v[s.n] = (gstr){ bytes + s.n, 1 };
			s.n++;
		}
	}
	return info_exact(s);
}

/* A quantifier at p: 0 none; else 1 with its bounds (max UINT32_MAX for
 * none) and *len its length (lazy or possessive suffix included). */
static int quantifier(gp *g, const unsigned char *p, size_t *len, uint32_t *min,
                      uint32_t *max)
{
	*len = 0;
	if (p >= g->end)
		return 0;
	const unsigned char *q = p;
	if (*q == '*' || *q == '?' || *q == '+') {
		*min = *q == '+';
		*max = *q == '?' ? 1 : UINT32_MAX;
		q++;
	} else if (*q == '{') {
		const unsigned char *r = q + 1;
		uint32_t lo = 0, hi;
		int digits = 0, hdigits = 0;
		while (r < g->end && *r >= '0' && *r <= '9') {
			lo = lo * 10 + (uint32_t)(*r - '0');
			if (lo > 100000)
				lo = 100000;
			r++;
			digits++;
		}
		hi = lo;
		if (r < g->end && *r == ',') {
			r++;
			hi = 0;
			while (r < g->end && *r >= '0' && *r <= '9') {
				hi = hi * 10 + (uint32_t)(*r - '0');
				if (hi > 100000)
					hi = 100000;
				r++;
				hdigits++;
			}
			if (!hdigits)
				hi = UINT32_MAX;
		}
		if (!digits || r >= g->end || *r != '}') {
			/* a literal '{' in PCRE2 10.42; {,n} and { 2 , 3 } are
			 * quantifiers from 10.43: not followed */
			const unsigned char *t = q + 1;
			int nd = 0;
			for (int part = 0; part < 2; part++) {
				while (t < g->end && (*t == ' ' || *t == '\t'))
					t++;
				while (t < g->end && *t >= '0' && *t <= '9') {
					t++;
					nd++;
				}
				while (t < g->end && (*t == ' ' || *t == '\t'))
					t++;
				if (part == 0 && t < g->end && *t == ',')
					t++;
				else
					break;
			}
			if (nd && t < g->end && *t == '}')
				g->global_unsupported = 1;
			return 0;
		}
		*min = lo;
		*max = hi;
		q = r + 1;
	} else {
		return 0;
	}
	if (q < g->end && (*q == '?' || *q == '+'))
		q++;
	*len = (size_t)(q - p);
	return 1;
}

static ginfo repeat(gp *g, ginfo x, uint32_t min, uint32_t max)
{
	if (max == 0)
		return info_empty(g);
	if (min == 0)
		return max == 1 ? alternate(g, x, info_empty(g))   /* x? */
		                : info_any_match(g);              /* x*, x{0,n} */
	if (min == 1)
		return max == 1 ? x : plus(g, x);                 /* x, x+, x{1,n} */
	/* x{n,m}, n >= 2: up to MAX_REPEAT copies spelled out; the last as x+
	 * when more may follow (x{2,} is x x+, x{2,4} within x x+, x{5}
	 * within x x x+), whose suffixes are x's, so what follows still
	 * meets it */
	ginfo r = x;
	uint32_t spelled = min < MAX_REPEAT ? min : MAX_REPEAT;
	for (uint32_t i = 2; i < spelled; i++)
		r = concat(g, r, x);
	if (max == min && min <= MAX_REPEAT)
		return concat(g, r, x);
	return concat(g, r, plus(g, x));
}

static ginfo parse_alt(gp *g);

/* A group at '(': its info, having read to its ')'. */
static ginfo parse_group(gp *g)
{
	const unsigned char *p = g->p + 1;
	int discard = 0;   /* a lookaround: read it, keep nothing */
	if (p < g->end && *p == '*') {
		g->global_unsupported = 1;   /* (*VERB) and (*pla:...) */
		g->p = g->end;
		return info_any_match(g);
	}
	if (p < g->end && *p == '?') {
		p++;
		if (p >= g->end) {
			g->global_unsupported = 1;
			g->p = g->end;
			return info_any_match(g);
		}
		unsigned char c = *p;
		if (c == ':' || c == '>' || c == '|') {
			p++;                       /* non-capturing, atomic, branch reset */
		} else if (c == '=' || c == '!') {
			p++;
			discard = 1;
		} else if (c == '<' && p + 1 < g->end && (p[1] == '=' || p[1] == '!')) {
			p += 2;
			discard = 1;
		} else if (c == '<' || c == '\'' || (c == 'P' && p + 1 < g->end && p[1] == '<')) {
			/* a named group */
			unsigned char close = c == '\'' ? '\'' : '>';
			p += c == 'P' ? 2 : 1;
			while (p < g->end && *p != close)
				p++;
			if (p >= g->end) {
				g->global_unsupported = 1;
				g->p = g->end;
				return info_any_match(g);
			}
			p++;
		} else if (c == '#') {
			while (p < g->end && *p != ')')
				p++;
			g->p = p < g->end ? p + 1 : g->end;
			size_t ql;
			uint32_t mn, mx;
			if (quantifier(g, g->p, &ql, &mn, &mx))
				g->global_unsupported = 1;   /* the quantifier takes the item before */
			return info_empty(g);
		} else {
			/* inline options (?i) (?i:...) (?-x); anything else
			 * (conditionals, recursion, callouts) is not followed */
			const unsigned char *o = p;
			int opt_x = 0, opt_i = 0;
			while (o < g->end && *o && strchr("imnsxUJaDSWPT-^", *o)) {
				opt_x |= *o == 'x';
				opt_i |= *o == 'i';
				o++;
			}
			if (o == p || o >= g->end || (*o != ')' && *o != ':')) {
				g->global_unsupported = 1;
				g->p = g->end;
				return info_any_match(g);
			}
			if (opt_x)
				g->global_unsupported = 1;   /* spaces and # change meaning */
			if (opt_i)
				g->caseless = 1;             /* from here on: more cautious */
			if (*o == ')') {
				g->p = o + 1;
				return info_empty(g);
			}
			p = o + 1;
		}
	}
	if (++g->depth > G_MAX_DEPTH) {
		g->global_unsupported = 1;
		g->p = g->end;
		return info_any_match(g);
	}
	g->p = p;
	ginfo x = parse_alt(g);
	g->depth--;
	if (g->p < g->end && *g->p == ')')
		g->p++;
	else
		g->global_unsupported = 1;   /* unclosed: PCRE2 refuses it */
	return discard ? info_empty(g) : x;
}

/* One atom and its quantifier. */
static ginfo parse_piece(gp *g)
{
	unsigned char c = *g->p;
	ginfo x;
	if (c == '(') {
		x = parse_group(g);
	} else if (c == '[') {
		x = parse_class(g);
	} else if (c == '\\') {
		const unsigned char *q = g->p + 1;
		if (q < g->end && *q == 'Q') {
			/* \Q...\E: a literal string; a quantifier after it applies to
			 * its last character */
			q++;
			x = info_empty(g);
			ginfo last = info_empty(g);
			int have_last = 0;
			while (q < g->end && !(q[0] == '\\' && q + 1 < g->end && q[1] == 'E') && !g->err) {
				uint32_t n = utf8_len(*q);
				if (n == 0 || q + n > g->end) {
					g->global_unsupported = 1;
					break;
				}
				if (have_last)
					x = concat(g, x, last);
				last = info_char(g, q, n);
				have_last = 1;
				q += n;
			}
			g->p = q < g->end ? q + 2 : g->end;
			for (;;) {
				size_t ql;
				uint32_t mn, mx;
				if (!quantifier(g, g->p, &ql, &mn, &mx))
					break;
				if (!have_last) {
					/* \Q\E* : the quantifier takes the item before */
					g->global_unsupported = 1;
					g->p = g->end;
					return info_any_match(g);
				}
				g->p += ql;
				last = repeat(g, last, mn, mx);
			}
			return have_last ? concat(g, x, last) : x;
		}
		if (q < g->end && *q == 'E') {
			g->p = q + 1;   /* a stray \E is ignored */
			size_t ql;
			uint32_t mn, mx;
			if (quantifier(g, g->p, &ql, &mn, &mx)) {
				g->global_unsupported = 1;   /* the quantifier takes the item before */
				g->p = g->end;
				return info_any_match(g);
			}
			return info_empty(g);
		}
		g->p = q;
		uint32_t cp = 0;
		switch (read_escape(g, &cp, 0)) {
		case ESC_CHAR: x = info_codepoint(g, cp); break;
		case ESC_DIGIT: {
			gset s = set_new(g, 10);
			unsigned char *d = galloc(g, 10);
			if (!s.v || !d) {
				x = info_any_char(g);
				break;
			}
			for (int i = 0; i < 10; i++) {
				d[i] = (unsigned char)('0' + i);
				s.v[s.n++] = (gstr){ d + i, 1 };
			}
			x = info_exact(s);
			break;
		}
		case ESC_CLASS: x = info_any_char(g); break;
		case ESC_EMPTY: x = info_empty(g); break;
		case ESC_ANY: x = info_any_match(g); break;
		default:
			g->global_unsupported = 1;
			g->p = g->end;
			return info_any_match(g);
		}
	} else if (c == '.') {
		g->p++;
		x = info_any_char(g);
	} else if (c == '^' || c == '$') {
		g->p++;
		x = info_empty(g);
	} else if (c == '*' || c == '+' || c == '?') {
		/* a quantifier with nothing before it: PCRE2 refuses it */
		g->global_unsupported = 1;
		g->p = g->end;
		return info_any_match(g);
	} else {
		uint32_t n = utf8_len(c);
		if (n == 0 || g->p + n > g->end) {
			g->global_unsupported = 1;   /* not UTF-8: PCRE2 refuses it */
			g->p = g->end;
			return info_any_match(g);
		}
		x = info_char(g, g->p, n);
		g->p += n;
	}
	/* quantifiers, possibly more than one (a{2}{3}, a?+ is one) */
	for (;;) {
		size_t ql;
		uint32_t mn, mx;
		if (!quantifier(g, g->p, &ql, &mn, &mx))
			break;
		g->p += ql;
		x = repeat(g, x, mn, mx);
	}
	return x;
}

static ginfo parse_seq(gp *g)
{
	ginfo x = info_empty(g);
	while (g->p < g->end && !g->err && !g->global_unsupported && *g->p != '|' && *g->p != ')')
		x = concat(g, x, parse_piece(g));
	return x;
}

static ginfo parse_alt(gp *g)
{
	ginfo x = parse_seq(g);
	while (g->p < g->end && *g->p == '|' && !g->err && !g->global_unsupported) {
		g->p++;
		x = alternate(g, x, parse_seq(g));
	}
	return x;
}

/* The query of a whole pattern's info. */
static g_query *final_query(gp *g, ginfo x)
{
	simplify(g, &x, 1);
	add_exact(g, &x);
	return x.match;
}

int g_plan(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_query **out)
{
	gp g = { a, (const unsigned char *)pattern, (const unsigned char *)pattern + len,
	         (flags & G_CASELESS) != 0, 0, 0, 0 };
	*out = &all_q;
	if (len > MAX_PATTERN)
		return 0;   /* not planned: every file is read */
	g_query *q;
	if (flags & G_LITERAL) {
		/* lines of the string: any of them */
		ginfo all = { 0 };
		int have = 0;
		const unsigned char *p = g.p;
		while (p <= g.end && !g.err && !g.global_unsupported) {
			const unsigned char *e = p;
			while (e < g.end && *e != '\n')
				e++;
			ginfo line = info_empty(&g);
			for (const unsigned char *c = p; c < e && !g.err;) {
				uint32_t n = utf8_len(*c);
				if (n == 0 || c + n > e) {
					/* not UTF-8: the bytes as they are (no folding trouble) */
					line = concat(&g, line, info_exact(set_one(&g, (const unsigned char[]){ ix_tri_fold(*c) }, 1)));
					c++;
					continue;
				}
				line = concat(&g, line, info_char(&g, c, n));
				c += n;
			}
			all = have ? alternate(&g, all, line) : line;
			have = 1;
			if (e >= g.end)
				break;
			p = e + 1;
		}
		q = have ? final_query(&g, all) : &all_q;
	} else {
		if (inline_option(g.p, g.end, 'i'))
			g.caseless = 1;   /* (?i) after text planned case-sensitively */
		ginfo x = parse_alt(&g);
		if (!g.err && g.p < g.end)
			g.global_unsupported = 1;   /* an unbalanced ')': PCRE2 refuses it */
		q = final_query(&g, x);
	}
	if (g.err)
		return g.err;
	*out = g.global_unsupported || !q ? &all_q : q;
	return 0;
}

/* ---- literals every match contains ----------------------------------------------------------- */

typedef struct litrun {
	fa_arena *a;
	g_lit *out;
	uint32_t max, n;
	unsigned char buf[256];
	uint32_t len;
	int err;
} litrun;

/* The run so far is one required literal (kept when 2 bytes or longer;
 * the longest are kept when there are more than max). */
static void lit_end(litrun *r)
{
	if (r->len >= 2 && !r->err) {
		char *s = fa_arena_strndup(r->a, (const char *)r->buf, r->len);
		if (!s) {
			r->err = fa_err(FATHOM_ENOMEM, "out of memory");
		} else if (r->n < r->max) {
			r->out[r->n++] = (g_lit){ s, r->len };
		} else {
			uint32_t shortest = 0;
			for (uint32_t i = 1; i < r->n; i++)
				if (r->out[i].n < r->out[shortest].n)
					shortest = i;
			if (r->out[shortest].n < r->len)
				r->out[shortest] = (g_lit){ s, r->len };
		}
	}
	r->len = 0;
}

static void lit_add(litrun *r, const unsigned char *b, uint32_t n)
{
	if (r->len + n > sizeof r->buf)
		lit_end(r);   /* a very long run: its first part is as good */
	memcpy(r->buf + r->len, b, n);
	r->len += n;
}

/* Skip the quantifiers at g->p; the smallest count they allow (0 or 1+). */
static uint32_t skip_quantifiers(gp *g, int *any)
{
	uint32_t lo = 1;
	*any = 0;
	for (;;) {
		size_t ql;
		uint32_t mn, mx;
		if (!quantifier(g, g->p, &ql, &mn, &mx))
			return lo;
		g->p += ql;
		*any = 1;
		if (mn == 0)
			lo = 0;
	}
}

/* Does the pattern set an inline option that changes case or spacing
 * ((?i), (?x), (?-i:...))? Then no literal is certain. */
static int inline_case_or_space(const unsigned char *p, const unsigned char *end)
{
	return inline_option(p, end, 'i') || inline_option(p, end, 'x');
}

int g_required(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_lit *out,
               uint32_t max, uint32_t *n)
{
	*n = 0;
	if ((flags & G_CASELESS) || len > MAX_PATTERN || max == 0)
		return 0;
	litrun r;
	memset(&r, 0, sizeof r);
	r.a = a;
	r.out = out;
	r.max = max;
	if (flags & G_LITERAL) {
		if (!memchr(pattern, '\n', len)) {
			for (size_t i = 0; i < len; i += sizeof r.buf) {
				uint32_t k = (uint32_t)(len - i < sizeof r.buf ? len - i : sizeof r.buf);
				lit_add(&r, (const unsigned char *)pattern + i, k);
			}
			lit_end(&r);
		}
		*n = r.n;
		return r.err;
	}
	gp g = { a, (const unsigned char *)pattern, (const unsigned char *)pattern + len, 1, 0, 0, 0 };
	if (inline_case_or_space(g.p, g.end))
		return 0;
	while (g.p < g.end && !g.err) {
		if (g.global_unsupported) {
			*n = 0;
			return 0;
		}
		unsigned char c = *g.p;
		unsigned char bytes[4];
		uint32_t nb = 0;
		int any;
		if (c == '|' || c == ')' || c == '*' || c == '+' || c == '?') {
			*n = 0;   /* an alternative at the top, or what PCRE2 refuses */
			return 0;
		}
		if (c == '(' || c == '[' || c == '.' || c == '^' || c == '$') {
			lit_end(&r);
			if (c == '(')
				(void)parse_group(&g);
			else if (c == '[')
				(void)parse_class(&g);
			else
				g.p++;
			if (g.global_unsupported) {
				*n = 0;
				return 0;
			}
			skip_quantifiers(&g, &any);
			continue;
		}
		if (c == '\\' && g.p + 1 < g.end && g.p[1] == 'Q') {
			/* \Q...\E: literal bytes; a quantifier after \E takes the last */
			const unsigned char *q = g.p + 2, *last = NULL;
			while (q < g.end && !(q[0] == '\\' && q + 1 < g.end && q[1] == 'E')) {
				uint32_t k = utf8_len(*q);
				if (k == 0 || q + k > g.end)
					return 0;
				if (last)
					lit_add(&r, last, utf8_len(*last));
				last = q;
				q += k;
			}
			g.p = q < g.end ? q + 2 : g.end;
			uint32_t lo = skip_quantifiers(&g, &any);
			if (!last && any) {
				*n = 0;   /* \Q\E* : the quantifier takes the item before */
				return 0;
			}
			if (last && lo > 0)
				lit_add(&r, last, utf8_len(*last));
			if (any)
				lit_end(&r);
			continue;
		}
		if (c == '\\') {
			g.p++;
			uint32_t cp = 0;
			int k = read_escape(&g, &cp, 0);
			if (k == ESC_BAD) {
				*n = 0;
				return 0;
			}
			if (k != ESC_CHAR || (nb = utf8_encode(cp, bytes)) == 0) {
				lit_end(&r);
				skip_quantifiers(&g, &any);
				continue;
			}
		} else {
			nb = utf8_len(c);
			if (nb == 0 || g.p + nb > g.end)
				return 0;
			memcpy(bytes, g.p, nb);
			g.p += nb;
		}
		uint32_t lo = skip_quantifiers(&g, &any);
		if (lo > 0)
			lit_add(&r, bytes, nb);
		if (any)
			lit_end(&r);   /* repeated or optional: the run ends here */
	}
	if (g.global_unsupported) {
		*n = 0;
		return 0;
	}
	lit_end(&r);
	*n = r.err ? 0 : r.n;
	return r.err;
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
	gp g = { a, NULL, NULL, 0, 0, 0, 0 };
	qlist l = { (g_query **)q, n, n, 0 };
	return make_and(&g, &l);
}

g_query *g_query_or(fa_arena *a, g_query *const *q, uint32_t n)
{
	gp g = { a, NULL, NULL, 0, 0, 0, 0 };
	qlist l = { (g_query **)q, n, n, 0 };
	return make_or(&g, &l);
}
