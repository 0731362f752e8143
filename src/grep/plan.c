/*
 * plan.c — a regular expression into the trigram query every file that
 * matches it must satisfy.
 *
 * The planner reads PCRE2 syntax with a recursive descent. It keeps runs of
 * literal bytes that every match must contain in a row; a run of n >= 3
 * bytes requires its n - 2 trigrams (AND). Alternatives give an OR of their
 * branches, and a group followed by nothing optional contributes its own
 * query to the AND of its sequence. Everything else ends a run: classes,
 * '.', \w and friends, anchors, and anything optional (*, ?, {0,n}) is
 * dropped from it; + and {n,} end the run after their atom's first copy and
 * start the next with its last. A construct the
 * planner does not follow (inline options such as (?x), backreferences,
 * lookarounds, \Q without \E...) makes its sequence require nothing rather
 * than guess: the result may be weaker than it could be, never wrong.
 *
 * Case: the index folds ASCII letters, so runs are folded too; with -i a
 * non-ASCII byte ends a run (Unicode case folding may change its bytes), and
 * so do k and s, whose caseless partners include U+212A and U+017F.
 */
#include "grep/grep.h"

typedef struct gp {
	fa_arena *a;
	const unsigned char *p, *end;
	unsigned flags;
	int caseless;
	int depth;
	int *global_unsupported;   /* the whole pattern is beyond the planner */
	int err;
} gp;

/* ---- query nodes --------------------------------------------------------------- */

static g_query *node(gp *g, int op)
{
	g_query *q = fa_arena_alloc(g->a, sizeof *q);
	if (!q) {
		g->err = fa_err(FATHOM_ENOMEM, "grep plan");
		return NULL;
	}
	memset(q, 0, sizeof *q);
	q->op = op;
	return q;
}

static g_query all_q = { GQ_ALL, 0, NULL, 0 };

/* A list being built: AND or OR of kids. */
typedef struct qlist {
	g_query **kid;
	uint32_t n, cap;
} qlist;

static void qlist_add(gp *g, qlist *l, g_query *q)
{
	if (!q || g->err)
		return;
	if (l->n == l->cap) {
		uint32_t nc = l->cap ? l->cap * 2 : 8;
		if (nc > G_MAX_TRIGRAMS)
			return;   /* dropping a conjunct only weakens an AND */
		g_query **nk = fa_arena_alloc(g->a, nc * sizeof *nk);
		if (!nk) {
			g->err = fa_err(FATHOM_ENOMEM, "grep plan");
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

/* OR of the list: ALL wins (a branch that needs nothing), NONE dropped. An
 * OR that cannot keep every branch is ALL. */
static g_query *make_or(gp *g, qlist *l, int complete)
{
	if (!complete)
		return &all_q;
	qlist k = { 0 };
	for (uint32_t i = 0; i < l->n; i++) {
		g_query *q = l->kid[i];
		if (q->op == GQ_ALL)
			return q;
		if (q->op == GQ_NONE)
			continue;
		uint32_t before = k.n;
		if (q->op == GQ_OR) {
			for (uint32_t j = 0; j < q->n; j++)
				qlist_add(g, &k, q->kid[j]);
		} else {
			qlist_add(g, &k, q);
		}
		if (k.n == before)
			return &all_q;   /* a branch could not be kept */
	}
	if (k.n == 0) {
		g_query *none = node(g, GQ_NONE);
		return none ? none : &all_q;
	}
	if (k.n == 1)
		return k.kid[0];
	g_query *q = node(g, GQ_OR);
	if (q) {
		q->kid = k.kid;
		q->n = k.n;
	}
	return q ? q : &all_q;
}

/* ---- literal runs ----------------------------------------------------------------- */

typedef struct run {
	unsigned char b[256];
	size_t n;
} run;

/* End the run: its trigrams into the sequence's AND. */
static void flush(gp *g, run *r, qlist *seq)
{
	for (size_t i = 0; i + 2 < r->n; i++) {
		g_query *q = node(g, GQ_TRI);
		if (!q)
			break;
		q->tri = ix_trigram(r->b[i], r->b[i + 1], r->b[i + 2]);
		qlist_add(g, seq, q);
	}
	r->n = 0;
}

static void push_byte(gp *g, run *r, qlist *seq, unsigned char c)
{
	/* Caseless Unicode matching gives k and s partners beyond ASCII (the
	 * Kelvin sign, the long s), and non-ASCII letters theirs: such bytes
	 * end the run rather than promise a trigram. */
	unsigned char f = ix_tri_fold(c);
	if (g->caseless && (c >= 0x80 || f == 'k' || f == 's')) {
		flush(g, r, seq);
		return;
	}
	if (r->n == sizeof r->b) {
		/* keep the last two bytes: trigrams continue across the cut */
		flush(g, r, seq);
		return;
	}
	r->b[r->n++] = ix_tri_fold(c);
}

/* ---- the parser --------------------------------------------------------------------- */

static g_query *parse_alt(gp *g, int *unsupported);

/* A quantifier at p: 0 none; else its minimum (0 or 1) with *len its
 * length (lazy/possessive suffix included). */
static int quantifier(const gp *g, const unsigned char *p, size_t *len, int *is_q)
{
	*is_q = 0;
	*len = 0;
	if (p >= g->end)
		return 0;
	int min;
	const unsigned char *q = p;
	if (*q == '*' || *q == '?') {
		min = 0;
		q++;
	} else if (*q == '+') {
		min = 1;
		q++;
	} else if (*q == '{') {
		const unsigned char *r = q + 1;
		unsigned long lo = 0;
		int digits = 0;
		while (r < g->end && *r >= '0' && *r <= '9') {
			lo = lo * 10 + (unsigned long)(*r - '0');
			if (lo > 100000)
				lo = 100000;
			r++;
			digits++;
		}
		if (r < g->end && *r == ',') {
			r++;
			while (r < g->end && *r >= '0' && *r <= '9')
				r++;
		}
		if (!digits || r >= g->end || *r != '}')
			return 0;   /* a literal '{' in PCRE2 */
		min = lo > 0;
		q = r + 1;
	} else {
		return 0;
	}
	if (q < g->end && (*q == '?' || *q == '+'))
		q++;
	*len = (size_t)(q - p);
	*is_q = 1;
	return min;
}

/* The byte a simple escape stands for, or -1 when it is no single byte. */
static int escape_byte(gp *g, const unsigned char **pp)
{
	const unsigned char *p = *pp;   /* at the char after '\' */
	if (p >= g->end)
		return -1;
	unsigned char c = *p;
	*pp = p + 1;
	switch (c) {
	case 't': return '\t';
	case 'n': return '\n';
	case 'r': return '\r';
	case 'f': return '\f';
	case 'e': return 27;
	case 'a': return 7;
	case 'x': {
		int v = 0, k = 0;
		while (k < 2 && p + 1 + k < g->end) {
			unsigned char h = p[1 + k];
			int d = h >= '0' && h <= '9' ? h - '0' : (h | 0x20) >= 'a' && (h | 0x20) <= 'f' ?
			        (h | 0x20) - 'a' + 10 : -1;
			if (d < 0)
				break;
			v = v * 16 + d;
			k++;
		}
		if (k == 0) {
			*g->global_unsupported = 1;   /* \x{...}: not followed */
			return -1;
		}
		*pp = p + 1 + k;
		return v;
	}
	default:
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
			/* One-letter classes and anchors consume nothing more. Any
			 * other escape may take arguments (\cX, \p{..}, \g{..},
			 * \k<..>, \o{..}, \N{..}, octal, back references): the
			 * planner does not follow them, and plans nothing. */
			if (!strchr("dDwWsSbBhHvVRAzZGXE", c))
				*g->global_unsupported = 1;
			return -1;
		}
		return c;        /* an escaped punctuation character stands for itself */
	}
}

/* Skip a character class starting at '['; 0 when unterminated. */
static int skip_class(gp *g)
{
	const unsigned char *p = g->p + 1;
	if (p < g->end && *p == '^')
		p++;
	if (p < g->end && *p == ']')
		p++;
	while (p < g->end && *p != ']') {
		if (*p == '\\') {
			p++;
		} else if (*p == '[' && p + 1 < g->end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			/* [:alpha:] (and [.x.], [=x=]) only when well formed; else
			 * the '[' is an ordinary member, as PCRE2 reads it */
			unsigned char kind = p[1];
			const unsigned char *e = p + 2;
			if (e < g->end && *e == '^')
				e++;
			while (e < g->end && ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z')))
				e++;
			if (e + 1 < g->end && e[0] == kind && e[1] == ']')
				p = e + 1;
		}
		p++;
	}
	if (p >= g->end)
		return 0;
	g->p = p + 1;
	return 1;
}

/* A sequence up to '|' or ')' or the end. */
static g_query *parse_seq(gp *g, int *unsupported)
{
	qlist seq = { 0 };
	run r;
	r.n = 0;
	while (g->p < g->end && !g->err && *g->p != '|' && *g->p != ')') {
		unsigned char c = *g->p;
		size_t ql;
		int isq, min;
		if (c == '(') {
			flush(g, &r, &seq);
			g->p++;
			int sub_unsupported = 0;
			if (g->p < g->end && *g->p == '?') {
				/* inline options: (?i) folds case from here on, (?x)
				 * changes what a literal is: nothing is planned */
				const unsigned char *o = g->p + 1;
				int opt_x = 0, opt_i = 0;
				while (o < g->end && ((*o >= 'a' && *o <= 'z') || (*o >= 'A' && *o <= 'Z') ||
				                      *o == '-' || *o == '^')) {
					opt_x |= *o == 'x';
					opt_i |= *o == 'i';
					o++;
				}
				if (o < g->end && (*o == ')' || *o == ':') && o > g->p + 1) {
					if (opt_x)
						*g->global_unsupported = 1;
					if (opt_i)
						g->caseless = 1;
				}
				if (g->p + 1 < g->end && g->p[1] == ':') {
					g->p += 2;
				} else {
					/* (?i) (?=...) (?<name>...) and the like: follow
					 * nothing inside, but keep our place. */
					sub_unsupported = 1;
				}
			}
			if (++g->depth > G_MAX_DEPTH) {
				*unsupported = 1;
				sub_unsupported = 1;
			}
			g_query *sub = parse_alt(g, &sub_unsupported);
			g->depth--;
			if (g->p < g->end && *g->p == ')')
				g->p++;
			else
				*g->global_unsupported = 1;   /* unclosed: PCRE2 refuses it */
			min = quantifier(g, g->p, &ql, &isq);
			g->p += ql;
			if (sub_unsupported)
				continue;   /* the group needs nothing we know of */
			if (!isq || min > 0)
				qlist_add(g, &seq, sub);
			continue;
		}
		int byte = -1;
		const unsigned char *atom_end;
		if (c == '[') {
			flush(g, &r, &seq);
			if (!skip_class(g)) {
				/* lost track of the structure: plan nothing at all */
				*g->global_unsupported = 1;
				g->p = g->end;
				break;
			}
			atom_end = g->p;
		} else if (c == '\\') {
			const unsigned char *q = g->p + 1;
			if (q < g->end && *q == 'Q') {
				/* \Q...\E: literal bytes */
				q++;
				while (q < g->end && !(q[0] == '\\' && q + 1 < g->end && q[1] == 'E'))
					push_byte(g, &r, &seq, *q++);
				g->p = q < g->end ? q + 2 : g->end;
				continue;
			}
			byte = escape_byte(g, &q);
			g->p = q;
			atom_end = q;
			if (byte < 0)
				flush(g, &r, &seq);
		} else if (c == '.' || c == '^' || c == '$') {
			flush(g, &r, &seq);
			g->p++;
			atom_end = g->p;
		} else {
			byte = c;
			g->p++;
			atom_end = g->p;
		}
		min = quantifier(g, atom_end, &ql, &isq);
		g->p = atom_end + ql;
		if (byte < 0)
			continue;
		if (isq && min == 0) {
			flush(g, &r, &seq);   /* optional: the run ends before it */
			continue;
		}
		push_byte(g, &r, &seq, (unsigned char)byte);
		if (isq) {
			/* repeated: the first copy ends this run, the last one
			 * starts the next (it sits right before what follows) */
			flush(g, &r, &seq);
			push_byte(g, &r, &seq, (unsigned char)byte);
		}
	}
	flush(g, &r, &seq);
	return make_and(g, &seq);
}

static g_query *parse_alt(gp *g, int *unsupported)
{
	qlist alts = { 0 };
	int complete = 1;
	for (;;) {
		int branch_unsupported = 0;
		g_query *q = parse_seq(g, &branch_unsupported);
		if (branch_unsupported)
			q = &all_q;
		uint32_t before = alts.n;
		qlist_add(g, &alts, q);
		complete &= alts.n > before;
		if (g->p < g->end && *g->p == '|') {
			g->p++;
			continue;
		}
		break;
	}
	(void)unsupported;
	return make_or(g, &alts, complete);
}

int g_plan(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_query **out)
{
	int global = 0;
	gp g = { a, (const unsigned char *)pattern, (const unsigned char *)pattern + len, flags,
	         (flags & G_CASELESS) != 0, 0, &global, 0 };
	*out = &all_q;
	if (flags & G_LITERAL) {
		/* lines of the string: any of them */
		qlist alts = { 0 };
		const unsigned char *p = g.p;
		while (p <= g.end && !g.err) {
			const unsigned char *e = p;
			while (e < g.end && *e != '\n')
				e++;
			qlist seq = { 0 };
			run r;
			r.n = 0;
			for (const unsigned char *q = p; q < e; q++)
				push_byte(&g, &r, &seq, *q);
			flush(&g, &r, &seq);
			qlist_add(&g, &alts, make_and(&g, &seq));
			if (e >= g.end)
				break;
			p = e + 1;
		}
		*out = make_or(&g, &alts, 1);
		return g.err;
	}
	int unsupported = 0;
	g_query *q = parse_alt(&g, &unsupported);
	if (!g.err && g.p < g.end) {
		/* an unbalanced ')': PCRE2 will refuse the pattern; plan nothing */
		q = &all_q;
	}
	*out = unsupported || global ? &all_q : q;
	return g.err;
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
	int global = 0;
	gp g = { a, NULL, NULL, 0, 0, 0, &global, 0 };
	qlist l = { (g_query **)q, n, n };
	return make_and(&g, &l);
}

g_query *g_query_or(fa_arena *a, g_query *const *q, uint32_t n)
{
	int global = 0;
	gp g = { a, NULL, NULL, 0, 0, 0, &global, 0 };
	qlist l = { (g_query **)q, n, n };
	return make_or(&g, &l, 1);
}
