/*
 * query.c — boolean grep queries in the style of Zoekt: `error AND handler`,
 * `file:auth.c error`, `lang:c spin_lock`, `(lock OR mutex) -test`.
 *
 *   query  := or
 *   or     := and { ("OR" | "or") and }
 *   and    := unary { ["AND"] unary }         adjacent parts must all hold
 *   unary  := "-" unary | "NOT" unary | atom
 *   atom   := "(" or ")" | FIELD ":" value | value
 *   value  := "quoted text" | word
 *
 * A word runs to the next space; parentheses inside it belong to it while
 * they balance ("foo(bar)" is one word, "(foo bar)" a group). Backslash
 * escapes the next character in a word (kept, for the regex) and in quotes
 * (dropped, so "a \"b\"" is a "b"). Fields: file: (f:), lang: (l:),
 * content: (c:, a pattern even when it reads as an operator) and case:
 * (yes, no, auto: caseless unless the word has a capital), which applies to
 * the whole query. Recursion is bounded by G_MAX_DEPTH, terms by
 * G_MAX_TERMS.
 */
#include <ctype.h>
#include <utf8proc.h>

#include "grep/grep.h"

typedef struct qp {
	fa_arena *a;
	const char *s, *p, *end;
	unsigned flags;
	int depth;
	uint32_t nterms;
	int case_mode;   /* -1 as the flags say, 0 sensitive, 1 caseless, 2 auto */
	int settings;    /* case: settings read so far */
	int err;
} qp;

static int syntax(qp *q, const char *at, const char *what)
{
	if (!q->err)
		q->err = fa_err(FATHOM_ESYNTAX, "bad query at column %zu: %s", (size_t)(at - q->s) + 1,
		                what);
	return q->err;
}

static void skip_space(qp *q)
{
	while (q->p < q->end && isspace((unsigned char)*q->p))
		q->p++;
}

static g_expr *new_node(qp *q, int op)
{
	g_expr *x = fa_arena_calloc(q->a, 1, sizeof *x);
	if (!x && !q->err)
		q->err = fa_err(FATHOM_ENOMEM, "out of memory");
	if (x)
		x->op = op;
	return x;
}

/* Is the word at p exactly kw, followed by a space, '(' or the end? */
static int keyword(const qp *q, const char *kw)
{
	size_t n = strlen(kw);
	if ((size_t)(q->end - q->p) < n || memcmp(q->p, kw, n) != 0)
		return 0;
	const char *e = q->p + n;
	return e == q->end || isspace((unsigned char)*e) || *e == '(';
}

/* A value: quoted text (unescaped, literal) or a word (kept as written). */
static int value(qp *q, const char **text, size_t *len, int *quoted)
{
	fbuf b;
	fbuf_init(&b, 1u << 20);
	*quoted = 0;
	if (q->p < q->end && *q->p == '"') {
		const char *open = q->p++;
		*quoted = 1;
		for (;;) {
			if (q->p >= q->end) {
				fbuf_free(&b);
				return syntax(q, open, "unterminated quote");
			}
			char c = *q->p++;
			if (c == '"')
				break;
			if (c == '\\' && q->p < q->end)
				c = *q->p++;
			fbuf_putc(&b, c);
		}
	} else {
		int depth = 0;
		while (q->p < q->end && !isspace((unsigned char)*q->p)) {
			char c = *q->p;
			if (c == '\\' && q->p + 1 < q->end) {
				fbuf_append(&b, q->p, 2);
				q->p += 2;
				continue;
			}
			if (c == '(')
				depth++;
			if (c == ')') {
				if (depth == 0)
					break;   /* it closes a group around the word */
				depth--;
			}
			fbuf_putc(&b, c);
			q->p++;
		}
	}
	if (b.err) {
		int rc = b.err;
		fbuf_free(&b);
		return q->err ? q->err : (q->err = fa_err(rc, "query value too long"));
	}
	char *t = fa_arena_strndup(q->a, b.len ? (const char *)b.data : "", b.len);
	*len = b.len;
	fbuf_free(&b);
	if (!t)
		return q->err = fa_err(FATHOM_ENOMEM, "out of memory");
	*text = t;
	return 0;
}

static g_expr *parse_or(qp *q);

static g_expr *term_node(qp *q, const char *at, const char *text, size_t len, int literal)
{
	if (len == 0) {
		syntax(q, at, "empty pattern");
		return NULL;
	}
	if (q->nterms >= G_MAX_TERMS) {
		syntax(q, at, "too many patterns (at most 256)");
		return NULL;
	}
	g_expr *x = new_node(q, GX_TERM);
	if (!x)
		return NULL;
	x->text = text;
	x->len = len;
	x->literal = literal;
	x->term = q->nterms++;
	x->caseless = -1;   /* resolved once case: is known */
	x->at = (size_t)(at - q->s) + (*at == '"');
	return x;
}

static g_expr *parse_atom(qp *q)
{
	skip_space(q);
	const char *at = q->p;
	if (q->p >= q->end) {
		syntax(q, at, "a pattern is missing");
		return NULL;
	}
	if (*q->p == '(') {
		q->p++;
		if (++q->depth > G_MAX_DEPTH) {
			syntax(q, at, "nested too deep");
			return NULL;
		}
		g_expr *x = parse_or(q);
		q->depth--;
		skip_space(q);
		if (!q->err && (q->p >= q->end || *q->p != ')')) {
			syntax(q, at, "unclosed parenthesis");
			return NULL;
		}
		q->p++;
		return q->err ? NULL : x;
	}
	if (*q->p == ')') {
		syntax(q, at, "unbalanced ')'");
		return NULL;
	}
	/* field:value */
	static const struct {
		const char *name;
		int op;
	} fields[] = {
		{ "file:", GX_FILE }, { "f:", GX_FILE }, { "lang:", GX_LANG }, { "l:", GX_LANG },
		{ "content:", GX_TERM }, { "c:", GX_TERM }, { "case:", -1 },
	};
	for (size_t i = 0; i < FA_ARRAY_LEN(fields); i++) {
		size_t n = strlen(fields[i].name);
		if ((size_t)(q->end - q->p) < n || memcmp(q->p, fields[i].name, n) != 0)
			continue;
		q->p += n;
		const char *vat = q->p;
		const char *text;
		size_t len;
		int quoted;
		if (value(q, &text, &len, &quoted))
			return NULL;
		if (fields[i].op == GX_TERM)
			return term_node(q, vat, text, len, quoted || (q->flags & G_LITERAL));
		if (fields[i].op < 0) {
			if (strcmp(text, "yes") == 0)
				q->case_mode = 0;
			else if (strcmp(text, "no") == 0)
				q->case_mode = 1;
			else if (strcmp(text, "auto") == 0)
				q->case_mode = 2;
			else
				syntax(q, at, "case: wants yes, no or auto");
			q->settings++;
			return NULL;   /* a setting, not a part of the expression */
		}
		if (len == 0) {
			syntax(q, at, "empty field value");
			return NULL;
		}
		g_expr *x = new_node(q, fields[i].op);
		if (x) {
			x->text = text;
			x->len = len;
			x->caseless = -1;
			x->at = (size_t)(vat - q->s);
		}
		return x;
	}
	const char *text;
	size_t len;
	int quoted;
	if (value(q, &text, &len, &quoted))
		return NULL;
	return term_node(q, at, text, len, quoted || (q->flags & G_LITERAL));
}

static g_expr *parse_unary(qp *q)
{
	skip_space(q);
	const char *at = q->p;
	int neg = 0;
	if (q->p < q->end && *q->p == '-' && q->p + 1 < q->end && !isspace((unsigned char)q->p[1])) {
		q->p++;
		neg = 1;
	} else if (keyword(q, "NOT")) {
		q->p += 3;
		neg = 1;
	}
	if (!neg)
		return parse_atom(q);
	if (++q->depth > G_MAX_DEPTH) {
		syntax(q, at, "nested too deep");
		return NULL;
	}
	g_expr *kid = parse_unary(q);
	q->depth--;
	if (!kid) {
		if (!q->err)
			syntax(q, at, "nothing to negate");
		return NULL;
	}
	g_expr *x = new_node(q, GX_NOT);
	if (!x)
		return NULL;
	x->kid = fa_arena_alloc(q->a, sizeof *x->kid);
	if (!x->kid) {
		q->err = fa_err(FATHOM_ENOMEM, "out of memory");
		return NULL;
	}
	x->kid[0] = kid;
	x->n = 1;
	return x;
}

/* A list of parts into one node of op (or the part itself when alone). */
typedef struct xlist {
	g_expr **v;
	uint32_t n, cap;
} xlist;

static void xlist_add(qp *q, xlist *l, g_expr *x)
{
	if (!x || q->err)
		return;
	if (l->n == l->cap) {
		uint32_t nc = l->cap ? l->cap * 2 : 4;
		g_expr **nv = fa_arena_alloc(q->a, nc * sizeof *nv);
		if (!nv) {
			q->err = fa_err(FATHOM_ENOMEM, "out of memory");
			return;
		}
		if (l->n)
			memcpy(nv, l->v, l->n * sizeof *nv);
		l->v = nv;
		l->cap = nc;
	}
	l->v[l->n++] = x;
}

static g_expr *join(qp *q, xlist *l, int op)
{
	if (q->err || l->n == 0)
		return NULL;
	if (l->n == 1)
		return l->v[0];
	g_expr *x = new_node(q, op);
	if (x) {
		x->kid = l->v;
		x->n = l->n;
	}
	return x;
}

static int at_and_end(qp *q)
{
	skip_space(q);
	return q->p >= q->end || *q->p == ')' || keyword(q, "OR") || keyword(q, "or");
}

static g_expr *parse_and(qp *q)
{
	xlist l = { 0 };
	while (!q->err && !at_and_end(q)) {
		const char *at = q->p;
		if (keyword(q, "AND")) {
			if (l.n == 0) {
				syntax(q, at, "AND with nothing before it");
				break;
			}
			q->p += 3;
			if (at_and_end(q)) {
				syntax(q, at, "AND with nothing after it");
				break;
			}
		}
		int before = q->settings;
		g_expr *x = parse_unary(q);
		if (!x && !q->err && q->settings == before)
			syntax(q, at, "a pattern is missing");
		xlist_add(q, &l, x);
	}
	return join(q, &l, GX_AND);
}

static g_expr *parse_or(qp *q)
{
	xlist l = { 0 };
	for (;;) {
		skip_space(q);
		const char *at = q->p;
		g_expr *x = parse_and(q);
		if (q->err)
			return NULL;
		if (!x) {
			/* only settings (case:) or nothing at all */
			if (l.n > 0 || (q->p < q->end && *q->p != ')'))
				syntax(q, at, "OR with nothing on one side");
		}
		xlist_add(q, &l, x);
		skip_space(q);
		if (keyword(q, "OR") || keyword(q, "or")) {
			q->p += 2;
			if (!x) {
				syntax(q, at, "OR with nothing before it");
				return NULL;
			}
			continue;
		}
		break;
	}
	return join(q, &l, GX_OR);
}

static int has_upper(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\' && i + 1 < n) {
			i++;   /* \W, \S, \D are classes, not capitals */
			continue;
		}
		if (isupper((unsigned char)s[i]))
			return 1;
		if ((unsigned char)s[i] >= 0x80) {
			/* a non-ASCII capital (É, Ä) counts too */
			utf8proc_int32_t cp;
			utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
			                                      (utf8proc_ssize_t)(n - i), &cp);
			if (k <= 0)
				continue;
			if (utf8proc_isupper(cp))
				return 1;
			i += (size_t)k - 1;
		}
	}
	return 0;
}

static void resolve_case(g_expr *x, int mode, int dflt)
{
	if (x->op == GX_TERM || x->op == GX_FILE)
		x->caseless = mode < 0 ? dflt : mode == 2 ? !has_upper(x->text, x->len) : mode;
	for (uint32_t i = 0; i < x->n; i++)
		resolve_case(x->kid[i], mode, dflt);
}

int g_parse_query(fa_arena *a, const char *s, size_t len, unsigned flags, g_expr **out,
                  uint32_t *nterms)
{
	qp q = { a, s, s, s + len, flags, 0, 0, -1, 0, 0 };
	*out = NULL;
	*nterms = 0;
	if (memchr(s, '\0', len))
		return fa_err(FATHOM_ESYNTAX, "bad query: a NUL byte");
	g_expr *x = parse_or(&q);
	skip_space(&q);
	if (!q.err && q.p < q.end)
		syntax(&q, q.p, "unbalanced ')'");
	if (!q.err && !x)
		syntax(&q, s, "the query holds no pattern, file: or lang:");
	if (q.err)
		return q.err;
	resolve_case(x, q.case_mode, (flags & G_CASELESS) != 0);
	*out = x;
	*nterms = q.nterms;
	return 0;
}

void g_expr_format(const g_expr *x, fbuf *out)
{
	static const char *names[] = { "term", "file", "lang", "and", "or", "not" };
	fbuf_printf(out, "(%s", names[x->op]);
	if (x->op <= GX_LANG) {
		fbuf_puts(out, " \"");
		for (size_t i = 0; i < x->len; i++) {
			unsigned char c = (unsigned char)x->text[i];
			if (c == '"' || c == '\\')
				fbuf_putc(out, '\\');
			fbuf_putc(out, c);
		}
		fbuf_putc(out, '"');
		if (x->op == GX_TERM && x->literal)
			fbuf_puts(out, " literal");
		if (x->op != GX_LANG && x->caseless > 0)
			fbuf_puts(out, " caseless");
	}
	for (uint32_t i = 0; i < x->n; i++) {
		fbuf_putc(out, ' ');
		g_expr_format(x->kid[i], out);
	}
	fbuf_putc(out, ')');
}

int g_expr_plan(fa_arena *a, const g_expr *x, g_query **out)
{
	static g_query all = { GQ_ALL, 0, NULL, 0 };
	*out = &all;
	switch (x->op) {
	case GX_TERM:
		return g_plan(a, x->text, x->len,
		              (x->literal ? G_LITERAL : 0) | (x->caseless > 0 ? G_CASELESS : 0), out);
	case GX_AND:
	case GX_OR: {
		g_query **k = fa_arena_alloc(a, x->n * sizeof *k);
		if (!k)
			return fa_err(FATHOM_ENOMEM, "out of memory");
		for (uint32_t i = 0; i < x->n; i++) {
			int rc = g_expr_plan(a, x->kid[i], &k[i]);
			if (rc)
				return rc;
		}
		*out = x->op == GX_AND ? g_query_and(a, k, x->n) : g_query_or(a, k, x->n);
		return 0;
	}
	default:
		return 0;   /* a path, a language or a negation: no trigram to require */
	}
}
