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
 *
 * That is the strict reading (--strict). By default the parser is lenient,
 * as websearch-style parsers are: raw text never fails to parse. Each
 * syntax error names the byte that caused it (an unclosed '(' or quote, a
 * stray ')', a lone OR, a '-' where no negation can be); that byte is then
 * read literally (a bracket or quote as a separator, OR and '-' as part of
 * a word, a filter or field as a plain word) and the query parsed again.
 * Each such reading is noted for the receipt. After Q_MAX_LENIENT_TRIES
 * rounds every operator is read literally. What still fails is the length
 * limit, the node limit, and a query with no characters but blanks.
 */
#include "query/query_int.h"

typedef struct pstate {
	const char *q;
	size_t len, i;
	q_ast *t;
	uint32_t *stack;     /* children being collected, all levels */
	uint32_t sp;
	int err;
	unsigned char *lit;  /* lenient: 1 where a byte is read literally */
	int limit;           /* the error was a limit: no literal reading helps */
	size_t lit_a, lit_b; /* the bytes that caused the error (SIZE_MAX: none) */
	const char *note;    /* what they were, for the receipt */
	int all_lit;         /* the last round: every operator is literal */
} pstate;

#define NO_OFF SIZE_MAX

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

/* A syntax error at column off; lit_a and lit_b are the bytes a lenient
 * parse reads literally instead, note says what they were. */
static int syntax_at(pstate *st, size_t off, size_t lit_a, size_t lit_b, const char *note,
                     const char *what)
{
	if (!st->err) {
		st->err = fa_err(FATHOM_EINVAL, "query syntax, column %u: %s", column(st, off), what);
		st->lit_a = lit_a;
		st->lit_b = lit_b;
		st->note = note;
	}
	return st->err;
}

static int syntax(pstate *st, size_t off, const char *what)
{
	return syntax_at(st, off, NO_OFF, NO_OFF, NULL, what);
}

static int too_many(pstate *st, size_t off, const char *what)
{
	if (!st->err)
		st->limit = 1;
	return syntax(st, off, what);
}

/* Is byte j the operator character c (not read literally)? */
static int op(const pstate *st, size_t j, char c)
{
	return j < st->len && st->q[j] == c && !(st->lit && st->lit[j]);
}

/* Does byte j separate words: a blank, or a bracket or quote read
 * literally? */
static int sep(const pstate *st, size_t j)
{
	unsigned char ch = (unsigned char)st->q[j];
	return is_space(ch) ||
	       (st->lit && st->lit[j] && (ch == '(' || ch == ')' || ch == '"'));
}

static int literal(const pstate *st, size_t j)
{
	return st->lit && j < st->len && st->lit[j];
}

static void skip_space(pstate *st)
{
	while (st->i < st->len && sep(st, st->i))
		st->i++;
}

static int at_end_of_token(const pstate *st, size_t j)
{
	return j >= st->len || sep(st, j) || op(st, j, ')') || op(st, j, '(') || op(st, j, '"');
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
	return !literal(st, st->i) &&
	       (token_is(st, "OR") || token_is(st, "||") || token_is(st, "|"));
}

/* AND is a no-op, never an error: never read literally */
static int is_and(const pstate *st)
{
	return token_is(st, "AND") || token_is(st, "&&") || token_is(st, "&");
}

static int new_node(pstate *st, int kind, size_t off, uint32_t *out)
{
	q_ast *t = st->t;
	if (t->nnodes >= Q_MAX_NODES)
		return too_many(st, off, "too many terms and operators (at most 512)");
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
		return too_many(st, st->i, "too many terms and operators (at most 512)");
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
		return too_many(st, n->off, "too many terms and operators (at most 512)");
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
		if (sep(st, j) || op(st, j, '"') || op(st, j, ')'))
			break;
		if (op(st, j, '(')) {
			if (j == i)
				break;
			size_t k = j + 1;
			while (k < st->len && !op(st, k, ')') && !op(st, k, '(') && !op(st, k, '"') &&
			       !sep(st, k))
				k++;
			if (op(st, k, ')')) {
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
		return syntax_at(st, off, off ? off - 1 : NO_OFF, NO_OFF, "an operator with no term after it",
		                 "expected a term at the end of the query");
	if (op(st, off, '(')) {
		if (depth >= Q_MAX_DEPTH)
			return syntax_at(st, off, off, NO_OFF, "'(' nested more than 16 deep",
			                 "parentheses nested more than 16 deep");
		st->i++;
		return parse_seq(st, depth + 1, scope, 1, off, out);
	}
	if (op(st, off, '"')) {
		size_t start = ++st->i;
		while (st->i < st->len && !op(st, st->i, '"'))
			st->i++;
		if (st->i >= st->len)
			return syntax_at(st, off, off, NO_OFF, "unclosed '\"'", "this quote is never closed");
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
	if (op(st, off, ')'))
		return syntax_at(st, off, off ? off - 1 : NO_OFF, NO_OFF, "an operator before ')'",
		                 "expected a term before ')'");
	size_t end = word_end(st, off);
	if (end == off)
		return syntax_at(st, off, off ? off - 1 : NO_OFF, NO_OFF, "an operator with no term after it",
		                 "expected a term");
	/* FIELD:term, FIELD:"phrase", FIELD:(group), FILTER:value; a word
	 * read literally is neither */
	const char *colon = literal(st, off) ? NULL : memchr(st->q + off, ':', end - off);
	if (colon) {
		size_t klen = (size_t)(colon - (st->q + off));
		size_t after = off + klen + 1;
		int followed = after < st->len && !sep(st, after) && !op(st, after, ')');
		for (size_t k = 0; followed && k < sizeof scopes / sizeof scopes[0]; k++) {
			if (strlen(scopes[k].name) != klen || memcmp(st->q + off, scopes[k].name, klen))
				continue;
			if (scope && scope != scopes[k].fields)
				return syntax_at(st, off, off, NO_OFF, "a field inside another field",
				                 "a field scope inside another field scope");
			st->i = after;
			return parse_primary(st, depth, scopes[k].fields, 0, out);
		}
		for (size_t k = 0; followed && k < sizeof filter_keys / sizeof filter_keys[0]; k++) {
			if (strlen(filter_keys[k]) != klen || memcmp(st->q + off, filter_keys[k], klen))
				continue;
			if (!top)
				return syntax_at(st, off, off, NO_OFF,
				                 "a filter inside parentheses, OR or negation",
				                 "a filter applies to the whole query: put it outside "
				                 "parentheses, OR and negation");
			size_t vs = after, ve;
			if (op(st, vs, '"')) {
				ve = ++vs;
				while (ve < st->len && !op(st, ve, '"'))
					ve++;
				if (ve >= st->len)
					return syntax_at(st, after, after, NO_OFF, "unclosed '\"'",
					                 "this quote is never closed");
				st->i = ve + 1;
			} else {
				ve = vs;
				while (ve < st->len && !sep(st, ve) && !op(st, ve, ')'))
					ve++;
				st->i = ve;
			}
			if (ve == vs)
				return syntax_at(st, after, off, NO_OFF, "a filter with no value",
				                 "expected a filter value");
			q_ast *t = st->t;
			if (t->nfilters >= Q_MAX_QFILTERS)
				return syntax_at(st, off, off, NO_OFF, "a filter past the 16th",
				                 "too many filters (at most 16)");
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

/* Is the '-' at off a minus sign: "-2", "-40", "-2.5", "-2," (a number and
 * nothing else, up to the end of the word)? Pasted text holds negative
 * numbers and lists such as "E2f-1, -2, -3" far more often than a search
 * that excludes a number, which "!2" still writes. */
static int minus_number(const pstate *st, size_t off)
{
	size_t end = word_end(st, off + 1);
	if (end == off + 1 || st->q[off + 1] < '0' || st->q[off + 1] > '9')
		return 0;
	for (size_t j = off + 1; j < end; j++) {
		char c = st->q[j];
		if (!(c >= '0' && c <= '9') && c != '.' && c != ',')
			return 0;
	}
	return 1;
}

static int parse_unary(pstate *st, int depth, uint8_t scope, int top, uint32_t *out)
{
	size_t off = st->i;
	char ch = st->q[off];
	/* -word, !word at the start of a word; "--flag" and "!!" stay words,
	 * and so does a '-' glued to what is before it: "(-)-epicatechin" */
	if ((ch == '-' || ch == '!') && !literal(st, off) && off + 1 < st->len && !sep(st, off + 1) &&
	    st->q[off + 1] != '-' && st->q[off + 1] != '!' && !(ch == '-' && minus_number(st, off)) &&
	    (off == 0 || sep(st, off - 1) || op(st, off - 1, '('))) {
		st->i++;
		uint32_t child;
		int rc = parse_primary(st, depth, scope, 0, &child);
		if (rc)
			return rc;
		if (child != UINT32_MAX && st->t->node[child].kind == QN_NOT)
			return syntax_at(st, off, off, NO_OFF, "a negation of a negation",
			                 "a negation inside a negation");
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
		return syntax_at(st, off, off, NO_OFF, "a filter as an OR alternative",
		                 "a filter cannot be an OR alternative");
	uint32_t base = st->sp;
	if ((rc = push(st, first)))
		return rc;
	while (is_or(st)) {
		size_t or_off = st->i;
		st->i += st->q[st->i] == 'O' || (st->i + 1 < st->len && st->q[st->i + 1] == '|') ? 2 : 1;
		skip_space(st);
		if (st->i >= st->len || op(st, st->i, ')') || is_or(st))
			return syntax_at(st, or_off, or_off, NO_OFF, "OR with no term after it",
			                 "OR needs a term after it");
		uint32_t alt;
		if ((rc = parse_unary(st, depth, scope, 0, &alt)) || (rc = push(st, alt)))
			return rc;
		skip_space(st);
	}
	for (uint32_t k = base; k < st->sp; k++)
		if (st->t->node[st->stack[k]].kind == QN_NOT)
			return syntax_at(st, st->t->node[st->stack[k]].off, st->t->node[st->stack[k]].off,
			                 NO_OFF, "a negation as an OR alternative",
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
				return syntax_at(st, open_off, open_off, NO_OFF, "unclosed '('",
				                 "this '(' is never closed");
			break;
		}
		char ch = st->q[st->i];
		if (op(st, st->i, ')')) {
			if (!closing)
				return syntax_at(st, st->i, st->i, NO_OFF, "')' without a '('",
				                 "')' without a '(' before it");
			st->i++;
			break;
		}
		if (is_or(st))
			return syntax_at(st, st->i, st->i, NO_OFF, "OR with no term before it",
			                 "OR needs a term before it");
		if (is_and(st)) {
			st->i += st->q[st->i] == 'A' ? 3 : (st->i + 1 < st->len && st->q[st->i + 1] == '&') ? 2 : 1;
			st->t->strict = 1;  /* an explicit AND: the words are required */
			continue;
		}
		if ((ch == '-' || ch == '!') && (st->i + 1 >= st->len || sep(st, st->i + 1))) {
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
			return syntax_at(st, open_off, open_off, st->i - 1, "empty '()'",
			                 "empty parentheses");
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

/* One reading of the query with the literal bytes so far. neg_only and
 * no_terms say which whole-query condition failed (a lenient parse then
 * reads the negations or the filters literally). */
static int parse_once(pstate *st, int *neg_only, int *no_terms)
{
	q_ast *t = st->t;
	t->nnodes = t->nkids = t->nfilters = 0;
	t->root = 0;
	t->strict = 0;
	st->i = 0;
	st->sp = 0;
	st->err = 0;
	st->limit = 0;
	st->lit_a = st->lit_b = NO_OFF;
	st->note = NULL;
	*neg_only = *no_terms = 0;
	int rc = parse_seq(st, 0, 0, 0, 0, &t->root);
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
	if (root->n == 0) {
		*no_terms = 1;
		return fa_err(FATHOM_EINVAL, t->nfilters ? "the query has filters but no terms"
		                                         : "empty query");
	}
	if (!has_positive(t, t->root)) {
		*neg_only = 1;
		return fa_err(FATHOM_EINVAL, "a query needs at least one term that is not negated: "
		                             "-word only removes results");
	}
	return 0;
}

/* Read byte off literally; 1 if it was not yet. */
static int make_literal(pstate *st, size_t off)
{
	if (off >= st->len || st->lit[off])
		return 0;
	st->lit[off] = 1;
	return 1;
}

/* Note a literal reading in the tree, for the receipt (t->nlit counts
 * those past the array too). */
static void add_note(pstate *st, size_t off, const char *what)
{
	q_ast *t = st->t;
	if (t->nlit < Q_MAX_LIT_NOTES)
		t->lit[t->nlit] = (q_litnote){ what, column(st, off) };
	t->nlit++;
}

static int parse_mode(q_ast *t, fa_arena *a, const char *query, size_t len, int strict,
                      const q_ast *relax);

int q_parse(q_ast *t, fa_arena *a, const char *query, size_t len, int strict)
{
	return parse_mode(t, a, query, len, strict, NULL);
}

/* The phrases q_parse_relaxed reads as words: unscoped items of the top
 * level, outside any negation, so their words join the top sequence. */
static int relaxable(const q_node *n)
{
	return n->kind == QN_PHRASE && !n->fields;
}

int q_parse_relaxed(q_ast *t, fa_arena *a, const char *query, size_t len,
                    const q_ast *written, uint32_t *nrelaxed)
{
	*nrelaxed = 0;
	const q_node *root = &written->node[written->root];
	for (uint32_t k = 0; k < root->n; k++)
		*nrelaxed += (uint32_t)relaxable(&written->node[written->kid[root->first + k]]);
	if (!*nrelaxed)
		return 0;
	return parse_mode(t, a, query, len, 0, written);
}

static int parse_mode(q_ast *t, fa_arena *a, const char *query, size_t len, int strict,
                      const q_ast *relax)
{
	memset(t, 0, sizeof *t);
	t->src = query;
	t->src_len = len;
	if (len > Q_MAX_QUERY_BYTES)
		return fa_err(FATHOM_ETOOBIG, "query of %zu bytes (at most %d)", len,
		              Q_MAX_QUERY_BYTES);
	t->node = fa_arena_alloc(a, Q_MAX_NODES * sizeof *t->node);
	t->kid = fa_arena_alloc(a, Q_MAX_NODES * sizeof *t->kid);
	t->filter = fa_arena_alloc(a, Q_MAX_QFILTERS * sizeof *t->filter);
	uint32_t *stack = fa_arena_alloc(a, Q_MAX_NODES * sizeof *stack);
	unsigned char *lit = strict ? NULL : fa_arena_alloc(a, len + 1);
	if (!t->node || !t->kid || !t->filter || !stack || (!strict && !lit))
		return fa_err(FATHOM_ENOMEM, "query syntax tree");
	if (lit)
		memset(lit, 0, len + 1);
	pstate st = { query, len, 0, t, stack, 0, 0, lit, 0, NO_OFF, NO_OFF, NULL, 0 };
	if (relax) {
		/* the quotes of each relaxable phrase, read literally: its words
		 * become words of the query, and the receipt says which */
		const q_node *root = &relax->node[relax->root];
		for (uint32_t k = 0; k < root->n; k++) {
			const q_node *n = &relax->node[relax->kid[root->first + k]];
			if (!relaxable(n))
				continue;
			size_t close = (size_t)(n->text - query) + n->len;
			if (n->off < len && close < len && query[n->off] == '"' && query[close] == '"') {
				lit[n->off] = lit[close] = 1;
				add_note(&st, n->off, "the quotes of a phrase that no chunk holds");
			}
		}
	}
	for (int tries = 0;; tries++) {
		int neg_only, no_terms;
		int rc = parse_once(&st, &neg_only, &no_terms);
		if (!rc)
			break;
		if (strict || st.limit || rc != FATHOM_EINVAL)
			return rc;
		int more = 0;
		if (neg_only) {
			/* nothing but negations: each '-' is part of its word */
			size_t first = NO_OFF;
			for (uint32_t k = 0; k < t->nnodes; k++)
				if (t->node[k].kind == QN_NOT && make_literal(&st, t->node[k].off)) {
					if (first == NO_OFF)
						first = t->node[k].off;
					more = 1;
				}
			if (more)
				add_note(&st, first, "'-' in a query of negations only");
		} else if (no_terms && t->nfilters) {
			/* filters alone: they are words */
			for (uint32_t k = 0; k < t->nfilters; k++)
				more |= make_literal(&st, t->filter[k].off);
			if (more)
				add_note(&st, t->filter[0].off, "a filter with no terms");
		} else if (no_terms) {
			/* nothing but operators and punctuation: one word of it all,
			 * which may analyse to nothing; blanks alone stay an error */
			size_t s = 0, e = len;
			while (s < e && is_space((unsigned char)query[s]))
				s++;
			while (e > s && is_space((unsigned char)query[e - 1]))
				e--;
			if (s == e)
				return rc;
			q_node *root = &t->node[t->root];
			uint32_t w;
			if (t->nkids >= Q_MAX_NODES || (rc = new_node(&st, QN_WORD, s, &w)))
				return rc ? rc : fa_err(FATHOM_ETOOBIG, "too many terms and operators");
			t->node[w].text = query + s;
			t->node[w].len = (uint32_t)(e - s);
			root = &t->node[t->root];
			root->first = t->nkids;
			root->n = 1;
			t->kid[t->nkids++] = w;
			add_note(&st, s, "a query of operators only");
			break;
		} else {
			more = make_literal(&st, st.lit_a);
			more |= make_literal(&st, st.lit_b);
			if (more)
				add_note(&st, st.lit_a, st.note ? st.note : "an operator");
		}
		if (!more || tries >= Q_MAX_LENIENT_TRIES) {
			if (st.all_lit)
				return rc;
			/* no single byte to blame, or too many: every operator is
			 * read literally (AND, a no-op, stays) */
			memset(lit, 1, len);
			st.all_lit = 1;
			add_note(&st, 0, "every operator");
		}
	}
	fa_err_clear();
	return 0;
}

void q_ast_format_literal(const q_ast *t, fbuf *out)
{
	uint32_t shown = t->nlit < Q_MAX_LIT_NOTES ? t->nlit : Q_MAX_LIT_NOTES;
	for (uint32_t k = 0; k < shown; k++)
		fbuf_printf(out, t->lit[k].col ? "%s%s at column %u" : "%s%s", k ? "; " : "", t->lit[k].what,
		            t->lit[k].col);
	if (t->nlit > shown)
		fbuf_printf(out, "; %u more", t->nlit - shown);
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
