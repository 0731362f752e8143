/*
 * parse.c — the query dialect into an AST. docs/QUERY.md has the grammar;
 * in short:
 *
 *   query    := seq
 *   seq      := item*                      items are ANDed
 *   item     := unary (OR unary)*          a run of ORs is one group
 *   unary    := ('-' | '!') primary | primary
 *   primary  := '(' seq ')' | '"' words '"' | FIELD ':' primary
 *             | FILTER ':' value | word ['*']
 *   OR       := 'OR' | '|' | '||'          (AND, '&' and '&&' are no-ops)
 *
 * A hand-written recursive descent. Recursion only enters parentheses, and
 * parentheses nest at most Q_MAX_DEPTH deep, so the stack is bounded; so
 * are the number of nodes and the query length. Every error says at which
 * column (in characters, from 1) and what was expected.
 */
#include "query/query_int.h"

typedef struct pstate {
	const char *q;
	size_t len, i;
	q_ast *t;
	uint32_t *stack;     /* children being collected, all levels */
	uint32_t sp;
	int err;
} pstate;

static int is_space(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

/* Column of byte offset off, in characters from 1. */
static uint32_t column(const pstate *st, size_t off)
{
	uint32_t col = 1;
	for (size_t i = 0; i < off && i < st->len; i++)
		col += ((unsigned char)st->q[i] & 0xC0) != 0x80;
	return col;
}

static int syntax(pstate *st, size_t off, const char *what)
{
	if (!st->err)
		st->err = fa_err(FATHOM_EINVAL, "query syntax, column %u: %s", column(st, off), what);
	return st->err;
}

static void skip_space(pstate *st)
{
	while (st->i < st->len && is_space((unsigned char)st->q[st->i]))
		st->i++;
}

static int at_end_of_token(const pstate *st, size_t j)
{
	return j >= st->len || is_space((unsigned char)st->q[j]) || st->q[j] == ')' ||
	       st->q[j] == '(' || st->q[j] == '"';
}

/* Is the token at i exactly w (followed by a token end)? */
static int token_is(const pstate *st, const char *w)
{
	size_t n = strlen(w);
	return st->i + n <= st->len && memcmp(st->q + st->i, w, n) == 0 &&
	       at_end_of_token(st, st->i + n);
}

static int is_or(const pstate *st)
{
	return token_is(st, "OR") || token_is(st, "||") || token_is(st, "|");
}

static int is_and(const pstate *st)
{
	return token_is(st, "AND") || token_is(st, "&&") || token_is(st, "&");
}

static int new_node(pstate *st, int kind, size_t off, uint32_t *out)
{
	q_ast *t = st->t;
	if (t->nnodes >= Q_MAX_NODES)
		return syntax(st, off, "too many terms and operators (at most 512)");
	q_node *n = &t->node[t->nnodes];
	memset(n, 0, sizeof *n);
	n->kind = (uint8_t)kind;
	n->off = (uint32_t)off;
	*out = t->nnodes++;
	return 0;
}

static int push(pstate *st, uint32_t node)
{
	if (st->sp >= Q_MAX_NODES)
		return syntax(st, st->i, "too many terms and operators (at most 512)");
	st->stack[st->sp++] = node;
	return 0;
}

/* Make node own the children stack[base..sp) and pop them. */
static int adopt(pstate *st, uint32_t node, uint32_t base)
{
	q_ast *t = st->t;
	q_node *n = &t->node[node];
	uint32_t count = st->sp - base;
	if (t->nkids + count > Q_MAX_NODES)
		return syntax(st, n->off, "too many terms and operators (at most 512)");
	n->first = t->nkids;
	n->n = count;
	memcpy(t->kid + t->nkids, st->stack + base, count * sizeof *t->kid);
	t->nkids += count;
	st->sp = base;
	return 0;
}

static const struct {
	const char *name;
	uint8_t fields;
} scopes[] = {
	{ "title", 1u << FATHOM_FIELD_TITLE },
	{ "path", 1u << FATHOM_FIELD_PATH },
	{ "body", 1u << FATHOM_FIELD_BODY },
	{ "tags", 1u << FATHOM_FIELD_TAGS },
	{ "tag", 1u << FATHOM_FIELD_TAGS },
	{ "headings", 1u << FATHOM_FIELD_HEADINGS },
	{ "heading", 1u << FATHOM_FIELD_HEADINGS },
};

static const char *const filter_keys[] = { "library", "version", "system", "lang" };

/* The end of a word starting at i: up to whitespace, a quote, or a
 * parenthesis, except that name(...) with no space inside stays one word
 * (handle_login(), printf(x)). */
static size_t word_end(const pstate *st, size_t i)
{
	size_t j = i;
	while (j < st->len) {
		unsigned char ch = (unsigned char)st->q[j];
		if (is_space(ch) || ch == '"' || ch == ')')
			break;
		if (ch == '(') {
			if (j == i)
				break;
			size_t k = j + 1;
			while (k < st->len && st->q[k] != ')' && st->q[k] != '(' && st->q[k] != '"' &&
			       !is_space((unsigned char)st->q[k]))
				k++;
			if (k < st->len && st->q[k] == ')') {
				j = k + 1;
				continue;
			}
			break;
		}
		j++;
	}
	return j;
}

static int parse_seq(pstate *st, int depth, uint8_t scope, int closing, size_t open_off,
                     uint32_t *out);

/* A primary; *out is UINT32_MAX when it was a filter (no node). */
static int parse_primary(pstate *st, int depth, uint8_t scope, int top, uint32_t *out)
{
	*out = UINT32_MAX;
	size_t off = st->i;
	if (off >= st->len)
		return syntax(st, off, "expected a term at the end of the query");
	char ch = st->q[off];
	if (ch == '(') {
		if (depth >= Q_MAX_DEPTH)
			return syntax(st, off, "parentheses nested more than 16 deep");
		st->i++;
		return parse_seq(st, depth + 1, scope, 1, off, out);
	}
	if (ch == '"') {
		size_t start = ++st->i;
		while (st->i < st->len && st->q[st->i] != '"')
			st->i++;
		if (st->i >= st->len)
			return syntax(st, off, "this quote is never closed");
		size_t end = st->i++;
		int rc = new_node(st, QN_PHRASE, off, out);
		if (rc)
			return rc;
		q_node *n = &st->t->node[*out];
		n->text = st->q + start;
		n->len = (uint32_t)(end - start);
		n->fields = scope;
		return 0;
	}
	if (ch == ')')
		return syntax(st, off, "expected a term before ')'");
	size_t end = word_end(st, off);
	if (end == off)
		return syntax(st, off, "expected a term");
	/* FIELD:term, FIELD:"phrase", FIELD:(group), FILTER:value */
	const char *colon = memchr(st->q + off, ':', end - off);
	if (colon) {
		size_t klen = (size_t)(colon - (st->q + off));
		size_t after = off + klen + 1;
		int followed = after < st->len && !is_space((unsigned char)st->q[after]) &&
		               st->q[after] != ')';
		for (size_t k = 0; followed && k < sizeof scopes / sizeof scopes[0]; k++) {
			if (strlen(scopes[k].name) != klen || memcmp(st->q + off, scopes[k].name, klen))
				continue;
			if (scope && scope != scopes[k].fields)
				return syntax(st, off, "a field scope inside another field scope");
			st->i = after;
			return parse_primary(st, depth, scopes[k].fields, 0, out);
		}
		for (size_t k = 0; followed && k < sizeof filter_keys / sizeof filter_keys[0]; k++) {
			if (strlen(filter_keys[k]) != klen || memcmp(st->q + off, filter_keys[k], klen))
				continue;
			if (!top)
				return syntax(st, off, "a filter applies to the whole query: put it outside "
				                       "parentheses, OR and negation");
			size_t vs = after, ve;
			if (st->q[vs] == '"') {
				ve = ++vs;
				while (ve < st->len && st->q[ve] != '"')
					ve++;
				if (ve >= st->len)
					return syntax(st, after, "this quote is never closed");
				st->i = ve + 1;
			} else {
				ve = vs;
				while (ve < st->len && !is_space((unsigned char)st->q[ve]) && st->q[ve] != ')')
					ve++;
				st->i = ve;
			}
			if (ve == vs)
				return syntax(st, after, "expected a filter value");
			q_ast *t = st->t;
			if (t->nfilters >= Q_MAX_QFILTERS)
				return syntax(st, off, "too many filters (at most 16)");
			t->filter[t->nfilters++] = (q_qfilter){ filter_keys[k], st->q + vs,
			                                        (uint32_t)(ve - vs), (uint32_t)off };
			return 0;
		}
	}
	int rc = new_node(st, QN_WORD, off, out);
	if (rc)
		return rc;
	q_node *n = &st->t->node[*out];
	n->fields = scope;
	n->text = st->q + off;
	n->len = (uint32_t)(end - off);
	if (n->len > 1 && n->text[n->len - 1] == '*') {
		n->prefix = 1;
		while (n->len > 0 && n->text[n->len - 1] == '*')
			n->len--;
	}
	st->i = end;
	return 0;
}

static int parse_unary(pstate *st, int depth, uint8_t scope, int top, uint32_t *out)
{
	size_t off = st->i;
	char ch = st->q[off];
	/* -word, !word; "--flag" and "!!" stay words */
	if ((ch == '-' || ch == '!') && off + 1 < st->len && !is_space((unsigned char)st->q[off + 1]) &&
	    st->q[off + 1] != '-' && st->q[off + 1] != '!') {
		st->i++;
		uint32_t child;
		int rc = parse_primary(st, depth, scope, 0, &child);
		if (rc)
			return rc;
		if (st->t->node[child].kind == QN_NOT)
			return syntax(st, off, "a negation inside a negation");
		uint32_t base = st->sp;
		if ((rc = new_node(st, QN_NOT, off, out)) || (rc = push(st, child)))
			return rc;
		return adopt(st, *out, base);
	}
	return parse_primary(st, depth, scope, top, out);
}

/* item := unary (OR unary)* */
static int parse_item(pstate *st, int depth, uint8_t scope, int top, uint32_t *out)
{
	size_t off = st->i;
	uint32_t first;
	int rc = parse_unary(st, depth, scope, top, &first);
	if (rc)
		return rc;
	skip_space(st);
	if (!is_or(st)) {
		*out = first;
		return 0;
	}
	if (first == UINT32_MAX)
		return syntax(st, off, "a filter cannot be an OR alternative");
	uint32_t base = st->sp;
	if ((rc = push(st, first)))
		return rc;
	while (is_or(st)) {
		size_t or_off = st->i;
		st->i += st->q[st->i] == 'O' || (st->i + 1 < st->len && st->q[st->i + 1] == '|') ? 2 : 1;
		skip_space(st);
		if (st->i >= st->len || st->q[st->i] == ')' || is_or(st))
			return syntax(st, or_off, "OR needs a term after it");
		uint32_t alt;
		if ((rc = parse_unary(st, depth, scope, 0, &alt)) || (rc = push(st, alt)))
			return rc;
		skip_space(st);
	}
	for (uint32_t k = base; k < st->sp; k++)
		if (st->t->node[st->stack[k]].kind == QN_NOT)
			return syntax(st, st->t->node[st->stack[k]].off,
			              "a negation cannot be an OR alternative (write it outside the group)");
	if ((rc = new_node(st, QN_OR, off, out)) || (rc = adopt(st, *out, base)))
		return rc;
	st->t->strict = 1;
	return 0;
}

static int parse_seq(pstate *st, int depth, uint8_t scope, int closing, size_t open_off,
                     uint32_t *out)
{
	uint32_t base = st->sp;
	int rc;
	for (;;) {
		skip_space(st);
		if (st->i >= st->len) {
			if (closing)
				return syntax(st, open_off, "this '(' is never closed");
			break;
		}
		char ch = st->q[st->i];
		if (ch == ')') {
			if (!closing)
				return syntax(st, st->i, "')' without a '(' before it");
			st->i++;
			break;
		}
		if (is_or(st))
			return syntax(st, st->i, "OR needs a term before it");
		if (is_and(st)) {
			st->i += st->q[st->i] == 'A' ? 3 : (st->i + 1 < st->len && st->q[st->i + 1] == '&') ? 2 : 1;
			continue;
		}
		if ((ch == '-' || ch == '!') &&
		    (st->i + 1 >= st->len || is_space((unsigned char)st->q[st->i + 1]))) {
			st->i++;  /* a lone dash is punctuation */
			continue;
		}
		uint32_t item = UINT32_MAX;
		if ((rc = parse_item(st, depth, scope, depth == 0, &item)))
			return rc;
		if (item == UINT32_MAX)
			continue;
		/* AND is associative: a group of plain words inside a sequence
		 * joins it, so "Escherichia coli (E. coli)" is three words, as
		 * a reader means it. */
		q_ast *t = st->t;
		const q_node *in = &t->node[item];
		if (in->kind == QN_AND && item + 1 == t->nnodes && in->first + in->n == t->nkids) {
			/* The group was the last node made and its children the last
			 * adopted: unmake it, so its children are counted once, under
			 * this sequence, and no orphan node is left behind. The kid
			 * entries stay readable until the next adopt overwrites them. */
			uint32_t first = in->first, n = in->n;
			t->nnodes--;
			t->nkids = first;
			for (uint32_t k = 0; k < n; k++)
				if ((rc = push(st, t->kid[first + k])))
					return rc;
			continue;
		}
		if ((rc = push(st, item)))
			return rc;
	}
	uint32_t n = st->sp - base;
	if (closing) {
		/* Parentheses alone are no operator: "(SLE)" in a sentence stays
		 * a word of the sentence. What they hold (OR, -) may be. */
		if (n == 0)
			return syntax(st, open_off, "empty parentheses");
		if (n == 1) {
			*out = st->stack[--st->sp];
			return 0;
		}
	}
	if ((rc = new_node(st, QN_AND, closing ? open_off : 0, out)))
		return rc;
	return adopt(st, *out, base);
}

/* Does the subtree hold a term that is not negated? */
static int has_positive(const q_ast *t, uint32_t node)
{
	const q_node *n = &t->node[node];
	if (n->kind == QN_WORD || n->kind == QN_PHRASE)
		return 1;
	if (n->kind == QN_NOT)
		return 0;
	for (uint32_t k = 0; k < n->n; k++)
		if (has_positive(t, t->kid[n->first + k]))
			return 1;
	return 0;
}

int q_parse(q_ast *t, fa_arena *a, const char *query, size_t len)
{
	memset(t, 0, sizeof *t);
	if (len > Q_MAX_QUERY_BYTES)
		return fa_err(FATHOM_ETOOBIG, "query of %zu bytes (at most %d)", len,
		              Q_MAX_QUERY_BYTES);
	t->node = fa_arena_alloc(a, Q_MAX_NODES * sizeof *t->node);
	t->kid = fa_arena_alloc(a, Q_MAX_NODES * sizeof *t->kid);
	t->filter = fa_arena_alloc(a, Q_MAX_QFILTERS * sizeof *t->filter);
	uint32_t *stack = fa_arena_alloc(a, Q_MAX_NODES * sizeof *stack);
	if (!t->node || !t->kid || !t->filter || !stack)
		return fa_err(FATHOM_ENOMEM, "query syntax tree");
	pstate st = { query, len, 0, t, stack, 0, 0 };
	int rc = parse_seq(&st, 0, 0, 0, 0, &t->root);
	if (rc)
		return rc;
	const q_node *root = &t->node[t->root];
	for (uint32_t k = 0; k < root->n; k++) {
		const q_node *c = &t->node[t->kid[root->first + k]];
		if (c->kind == QN_NOT || c->prefix || c->fields)
			t->strict = 1;
	}
	for (uint32_t k = 0; k < t->nnodes; k++)
		if (t->node[k].prefix || t->node[k].fields)
			t->strict = 1;
	if (root->n == 0)
		return fa_err(FATHOM_EINVAL, t->nfilters ? "the query has filters but no terms"
		                                         : "empty query");
	if (!has_positive(t, t->root))
		return fa_err(FATHOM_EINVAL, "a query needs at least one term that is not negated: "
		                             "-word only removes results");
	return 0;
}

/* ---- the canonical form --------------------------------------------------- */

static void fmt_node(const q_ast *t, uint32_t node, fbuf *out)
{
	const q_node *n = &t->node[node];
	if (n->fields) {
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			if (n->fields & (1u << f)) {
				fbuf_puts(out, fathom_field_name(f));
				fbuf_putc(out, ':');
			}
	}
	switch (n->kind) {
	case QN_WORD:
		fbuf_append(out, n->text, n->len);
		if (n->prefix)
			fbuf_putc(out, '*');
		return;
	case QN_PHRASE:
		fbuf_putc(out, '"');
		fbuf_append(out, n->text, n->len);
		fbuf_putc(out, '"');
		return;
	case QN_NOT:
		fbuf_puts(out, "(NOT ");
		break;
	case QN_AND:
		fbuf_puts(out, "(AND");
		break;
	default:
		fbuf_puts(out, "(OR");
		break;
	}
	for (uint32_t k = 0; k < n->n; k++) {
		if (k || n->kind != QN_NOT)
			fbuf_putc(out, ' ');
		fmt_node(t, t->kid[n->first + k], out);
	}
	fbuf_putc(out, ')');
}

void q_ast_format(const q_ast *t, fbuf *out)
{
	const q_node *root = &t->node[t->root];
	if (root->kind == QN_AND && root->n == 1)
		fmt_node(t, t->kid[root->first], out);
	else
		fmt_node(t, t->root, out);
	for (uint32_t k = 0; k < t->nfilters; k++) {
		fbuf_putc(out, ' ');
		fbuf_puts(out, t->filter[k].key);
		fbuf_putc(out, '=');
		fbuf_append(out, t->filter[k].value, t->filter[k].vlen);
	}
}
