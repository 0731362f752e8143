/*
 * gitignore.c — .gitignore patterns, parsed once per file and matched
 * against paths relative to the walk root, with git's semantics:
 *
 *  - blank lines and lines starting with '#' are skipped; "\#" and "\!"
 *    start a pattern with a literal '#' or '!';
 *  - trailing spaces are dropped unless escaped ("foo\ ");
 *  - a leading '!' re-includes what an earlier pattern excluded;
 *  - a trailing '/' makes the pattern match folders only;
 *  - a pattern with a '/' at its start or in its middle is anchored to the
 *    folder holding the .gitignore and matched against the whole path below
 *    it; a pattern without one is matched against the last path component
 *    at any depth;
 *  - '*' and '?' never match '/'; "[a-z]", "[!x]", "[^x]" and "[[:alpha:]]"
 *    are classes; "**" as a whole component matches any number of folders
 *    ("**" + "/" leading, "/" + "**" trailing, "/" + "**" + "/" inside);
 *    other runs of '*' act as a single '*'.
 *
 * Matching is byte-wise and case-sensitive, as git does on Linux.
 * gi_match judges one path by itself: that a file below an excluded folder
 * stays excluded whatever later rules say is the walker's doing (it never
 * enters an excluded folder).
 *
 * Globs run as a small NFA over compiled tokens (a set of "where in the
 * pattern could we be" bits advanced once per path byte), so a hostile
 * pattern like "*a*a*a*a*b" costs O(path x pattern), never the exponential
 * backtracking of a naive matcher, and needs no recursion. The common
 * shapes ("name", "*.ext", "prefix*") skip the NFA altogether, which keeps
 * a walk over thousands of files cheap.
 */
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"

/* Patterns longer than this (in tokens) are dropped: no real ignore file
 * has them, and the bound keeps the NFA state on the stack. */
#define GI_MAX_TOKENS 1024
#define GI_STATE_WORDS ((GI_MAX_TOKENS + 1 + 63) / 64)

enum gi_tok_kind {
	TOK_LIT,        /* one byte */
	TOK_ANY,        /* '?': one byte other than '/' */
	TOK_CLASS,      /* [...]: one byte other than '/' in the set */
	TOK_STAR,       /* '*': any run of bytes without '/' */
	TOK_STARSTAR,   /* trailing or lone "**": any run of bytes */
	TOK_STARDIR     /* "**" + "/": zero or more whole "name/" components */
};

typedef struct gi_tok {
	uint8_t kind;
	uint8_t ch;       /* TOK_LIT */
	uint32_t cls;     /* TOK_CLASS: index into the set's class table */
} gi_tok;

typedef struct gi_class {
	uint64_t bits[4]; /* one bit per byte value */
} gi_class;

enum gi_shape {
	SHAPE_LITERAL,    /* no wildcards: compare bytes */
	SHAPE_SUFFIX,     /* '*' + literal without '/': "*.o" */
	SHAPE_PREFIX,     /* literal + '*' without '/': "build*" */
	SHAPE_GLOB        /* anything else: glob_match */
};

typedef struct gi_pattern {
	uint32_t tok_start, n_tok;
	size_t lit_off;   /* SHAPE_LITERAL/SUFFIX/PREFIX: the literal part, */
	size_t lit_len;   /* in the set's pool (an offset: the pool may move) */
	uint32_t head, tail;  /* SHAPE_GLOB: one-byte tokens before the first and
	                       * after the last star, matched without the NFA */
	uint8_t has_star;
	uint8_t has_stardir;
	uint8_t shape;
	uint8_t negate;
	uint8_t dir_only;
	uint8_t basename; /* no '/' in the pattern: match the last component */
} gi_pattern;

struct gi_set {
	char *base;       /* folder relative to the walk root, "" for the root */
	size_t base_len;
	gi_pattern *pats;
	size_t n_pats, cap_pats;
	gi_tok *toks;
	size_t n_toks, cap_toks;
	gi_class *classes;
	size_t n_classes, cap_classes;
	char *lits;       /* literal parts, NUL-separated */
	size_t lits_len, lits_cap;
};

/* ---- parsing ------------------------------------------------------------- */

static int push_tok(gi_set *s, uint8_t kind, uint8_t ch, uint32_t cls)
{
	int rc = fa_grow((void **)&s->toks, &s->cap_toks, s->n_toks + 1, sizeof *s->toks);
	if (rc)
		return rc;
	s->toks[s->n_toks].kind = kind;
	s->toks[s->n_toks].ch = ch;
	s->toks[s->n_toks].cls = cls;
	s->n_toks++;
	return 0;
}

static void class_set(gi_class *c, unsigned b)
{
	c->bits[b >> 6] |= (uint64_t)1 << (b & 63);
}

static int class_has(const gi_class *c, unsigned b)
{
	return (int)((c->bits[b >> 6] >> (b & 63)) & 1);
}

/* Named POSIX classes inside brackets: "[[:digit:]]". */
static int class_add_named(gi_class *c, const char *name, size_t n)
{
	static const char *const names[] = {
		"alnum", "alpha", "blank", "cntrl", "digit", "graph",
		"lower", "print", "punct", "space", "upper", "xdigit"
	};
	size_t which = FA_ARRAY_LEN(names);
	for (size_t i = 0; i < FA_ARRAY_LEN(names); i++)
		if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
			which = i;
	if (which == FA_ARRAY_LEN(names))
		return -1;
	/* ASCII only, as in the C locale. */
	for (unsigned b = 0; b < 128; b++) {
		int alpha = (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z');
		int digit = b >= '0' && b <= '9';
		int graph = b > 32 && b < 127;
		int in = 0;
		switch (which) {
		case 0: in = alpha || digit; break;
		case 1: in = alpha; break;
		case 2: in = b == ' ' || b == '\t'; break;
		case 3: in = b < 32 || b == 127; break;
		case 4: in = digit; break;
		case 5: in = graph; break;
		case 6: in = b >= 'a' && b <= 'z'; break;
		case 7: in = graph || b == ' '; break;
		case 8: in = graph && !alpha && !digit; break;
		case 9: in = b == ' ' || (b >= '\t' && b <= '\r'); break;
		case 10: in = b >= 'A' && b <= 'Z'; break;
		default: in = digit || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F'); break;
		}
		if (in)
			class_set(c, b);
	}
	return 0;
}

/* Parse a bracket expression starting after '['. Returns the index just
 * past the closing ']', or 0 when the bracket is malformed (git then
 * matches nothing with the pattern, and so do we). */
static size_t parse_class(gi_class *c, const char *p, size_t i, size_t n)
{
	int negate = 0;
	memset(c, 0, sizeof *c);
	if (i < n && (p[i] == '!' || p[i] == '^')) {
		negate = 1;
		i++;
	}
	int first = 1;
	for (;;) {
		if (i >= n)
			return 0;
		unsigned char lo = (unsigned char)p[i];
		if (lo == ']' && !first)
			break;
		first = 0;
		if (lo == '[' && i + 1 < n && p[i + 1] == ':') {
			size_t j = i + 2;
			while (j + 1 < n && !(p[j] == ':' && p[j + 1] == ']'))
				j++;
			if (j + 1 >= n || class_add_named(c, p + i + 2, j - (i + 2)) != 0)
				return 0;
			i = j + 2;
			continue;
		}
		if (lo == '\\') {
			if (++i >= n)
				return 0;
			lo = (unsigned char)p[i];
		}
		i++;
		unsigned char hi = lo;
		if (i + 1 < n && p[i] == '-' && p[i + 1] != ']') {
			i++;
			hi = (unsigned char)p[i];
			if (hi == '\\') {
				if (++i >= n)
					return 0;
				hi = (unsigned char)p[i];
			}
			i++;
		}
		for (unsigned b = lo; b <= hi; b++)
			class_set(c, b);
	}
	if (negate)
		for (int w = 0; w < 4; w++)
			c->bits[w] = ~c->bits[w];
	return i + 1;
}

/* Tokenize p[0..n) (leading '/' and trailing '/' already removed). Returns
 * 0, 1 when the pattern is malformed and must be dropped, or an error. */
static int compile(gi_set *s, gi_pattern *pat, const char *p, size_t n)
{
	pat->tok_start = (uint32_t)s->n_toks;
	size_t i = 0;
	while (i < n) {
		unsigned char c = (unsigned char)p[i];
		int rc = 0;
		if (c == '*') {
			size_t j = i;
			while (j < n && p[j] == '*')
				j++;
			int at_start = i == 0 || p[i - 1] == '/';
			if (j - i >= 2 && at_start && j == n) {
				rc = push_tok(s, TOK_STARSTAR, 0, 0);
				i = j;
			} else if (j - i >= 2 && at_start && p[j] == '/') {
				rc = push_tok(s, TOK_STARDIR, 0, 0);
				i = j + 1;
			} else {
				rc = push_tok(s, TOK_STAR, 0, 0);
				i = j;
			}
		} else if (c == '?') {
			rc = push_tok(s, TOK_ANY, 0, 0);
			i++;
		} else if (c == '[') {
			rc = fa_grow((void **)&s->classes, &s->cap_classes, s->n_classes + 1,
			             sizeof *s->classes);
			if (rc)
				return rc;
			size_t end = parse_class(&s->classes[s->n_classes], p, i + 1, n);
			if (end == 0)
				return 1;
			rc = push_tok(s, TOK_CLASS, 0, (uint32_t)s->n_classes);
			s->n_classes++;
			i = end;
		} else if (c == '\\') {
			if (i + 1 >= n)
				return 1; /* a lone trailing backslash: git drops the pattern */
			rc = push_tok(s, TOK_LIT, (uint8_t)p[i + 1], 0);
			i += 2;
		} else {
			rc = push_tok(s, TOK_LIT, c, 0);
			i++;
		}
		if (rc)
			return rc;
		if (s->n_toks - pat->tok_start > GI_MAX_TOKENS)
			return 1;
	}
	pat->n_tok = (uint32_t)(s->n_toks - pat->tok_start);
	return 0;
}

/* Store the literal bytes of toks[from, to) in the set's literal pool. */
static int save_literal(gi_set *s, gi_pattern *pat, size_t from, size_t to)
{
	size_t need;
	if (fa_add(s->lits_len, to - from + 1, &need))
		return fa_err(FATHOM_ENOMEM, "gitignore literal pool too large");
	int rc = fa_grow((void **)&s->lits, &s->lits_cap, need, 1);
	if (rc)
		return rc;
	pat->lit_off = s->lits_len;
	pat->lit_len = to - from;
	for (size_t t = from; t < to; t++)
		s->lits[s->lits_len++] = (char)s->toks[t].ch;
	s->lits[s->lits_len++] = '\0';
	return 0;
}

static int is_one_byte(const gi_tok *t)
{
	return t->kind == TOK_LIT || t->kind == TOK_ANY || t->kind == TOK_CLASS;
}

/* Pick the cheapest way to match the compiled pattern. */
static int classify(gi_set *s, gi_pattern *pat)
{
	const gi_tok *t = s->toks + pat->tok_start;
	size_t n = pat->n_tok, stars = 0, star_at = 0, others = 0, slashes = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i].kind == TOK_STAR) {
			stars++;
			star_at = i;
		} else if (t[i].kind != TOK_LIT) {
			others++;
		} else if (t[i].ch == '/') {
			slashes++;
		}
	}
	size_t start = pat->tok_start;
	pat->shape = SHAPE_GLOB;
	pat->has_star = 0;
	pat->has_stardir = 0;
	pat->head = pat->tail = 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i].kind == TOK_STAR || t[i].kind == TOK_STARSTAR || t[i].kind == TOK_STARDIR)
			pat->has_star = 1;
		if (t[i].kind == TOK_STARDIR)
			pat->has_stardir = 1;
	}
	if (pat->has_star) {
		while (pat->head < n && is_one_byte(&t[pat->head]))
			pat->head++;
		while (pat->tail < n && is_one_byte(&t[n - 1 - pat->tail]))
			pat->tail++;
	}
	if (others)
		return 0;
	if (stars == 0) {
		pat->shape = SHAPE_LITERAL;
		return save_literal(s, pat, start, start + n);
	}
	if (stars == 1 && slashes == 0 && star_at == 0) {
		pat->shape = SHAPE_SUFFIX;
		return save_literal(s, pat, start + 1, start + n);
	}
	if (stars == 1 && slashes == 0 && star_at == n - 1) {
		pat->shape = SHAPE_PREFIX;
		return save_literal(s, pat, start, start + n - 1);
	}
	return 0;
}

/* Parse one line; malformed patterns are dropped, like git does. */
static int parse_line(gi_set *s, const char *p, size_t n)
{
	if (n && p[n - 1] == '\r')
		n--;
	/* Trailing spaces go unless the last one is escaped by an odd run of
	 * backslashes. */
	while (n && p[n - 1] == ' ') {
		size_t bs = 0;
		while (bs + 1 < n && p[n - 2 - bs] == '\\')
			bs++;
		if (bs % 2 == 1)
			break;
		n--;
	}
	if (n == 0 || p[0] == '#')
		return 0;
	gi_pattern pat;
	memset(&pat, 0, sizeof pat);
	if (p[0] == '!') {
		pat.negate = 1;
		p++;
		n--;
	}
	if (n && p[n - 1] == '/') {
		pat.dir_only = 1;
		n--;
	}
	if (n == 0)
		return 0;
	pat.basename = 1;
	for (size_t i = 0; i < n; i++)
		if (p[i] == '/')
			pat.basename = 0;
	if (p[0] == '/') {
		p++;
		n--;
	}
	if (n == 0)
		return 0;
	size_t toks_before = s->n_toks, classes_before = s->n_classes;
	int rc = compile(s, &pat, p, n);
	if (rc == 1) {
		s->n_toks = toks_before;
		s->n_classes = classes_before;
		return 0;
	}
	if (rc)
		return rc;
	rc = classify(s, &pat);
	if (rc)
		return rc;
	rc = fa_grow((void **)&s->pats, &s->cap_pats, s->n_pats + 1, sizeof *s->pats);
	if (rc)
		return rc;
	s->pats[s->n_pats++] = pat;
	return 0;
}

int gi_parse(gi_set **out, const char *text, size_t n, const char *base)
{
	*out = NULL;
	if (!text && n)
		return fa_err(FATHOM_EINVAL, "gi_parse: NULL text");
	if (!base)
		base = "";
	gi_set *s = fa_calloc(1, sizeof *s);
	if (!s)
		return fa_err(FATHOM_ENOMEM, "out of memory parsing ignore patterns");
	/* Keep the base without a trailing '/', so prefix checks are simple. */
	size_t bl = strlen(base);
	while (bl && base[bl - 1] == '/')
		bl--;
	s->base = fa_strndup(base, bl);
	s->base_len = bl;
	int rc = s->base ? 0 : fa_err(FATHOM_ENOMEM, "out of memory parsing ignore patterns");
	/* A UTF-8 byte-order mark is not part of the first pattern. */
	if (n >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
		text += 3;
		n -= 3;
	}
	size_t i = 0;
	while (rc == 0 && i < n) {
		const char *nl = memchr(text + i, '\n', n - i);
		size_t end = nl ? (size_t)(nl - text) : n;
		rc = parse_line(s, text + i, end - i);
		i = end + 1;
	}
	if (rc) {
		gi_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void gi_free(gi_set *s)
{
	if (!s)
		return;
	fa_free(s->base);
	fa_free(s->pats);
	fa_free(s->toks);
	fa_free(s->classes);
	fa_free(s->lits);
	fa_free(s);
}

/* ---- matching -------------------------------------------------------------- */

static void bit_set(uint64_t *w, size_t i)
{
	w[i >> 6] |= (uint64_t)1 << (i & 63);
}

static int bit_get(const uint64_t *w, size_t i)
{
	return (int)((w[i >> 6] >> (i & 63)) & 1);
}

/* Follow the empty-string moves: every star-like token may match nothing.
 * They only go forward, so one ascending pass reaches the closure. */
static void nfa_close(const gi_tok *t, size_t n, uint64_t *cur)
{
	for (size_t i = 0; i < n; i++)
		if (bit_get(cur, i) && (t[i].kind == TOK_STAR || t[i].kind == TOK_STARSTAR ||
		                         t[i].kind == TOK_STARDIR))
			bit_set(cur, i + 1);
}

/* State i in `cur` means "about to match token i"; state i in `inner`
 * means "inside a folder name consumed by the TOK_STARDIR at i". */
static int nfa_match(const gi_set *s, const gi_tok *t, size_t n, const char *str, size_t len)
{
	size_t words = n / 64 + 1;
	uint64_t cur[GI_STATE_WORDS], inner[GI_STATE_WORDS];
	uint64_t ncur[GI_STATE_WORDS], ninner[GI_STATE_WORDS];
	memset(cur, 0, words * 8);
	memset(inner, 0, words * 8);
	bit_set(cur, 0);
	nfa_close(t, n, cur);
	for (size_t k = 0; k < len; k++) {
		unsigned char c = (unsigned char)str[k];
		int any = 0;
		memset(ncur, 0, words * 8);
		memset(ninner, 0, words * 8);
		for (size_t w = 0; w < words; w++) {
			uint64_t live = cur[w] | inner[w];
			while (live) {
				size_t i = w * 64 + (size_t)__builtin_ctzll(live);
				live &= live - 1;
				if (bit_get(inner, i)) {
					/* i is a TOK_STARDIR: the folder name goes on until '/'. */
					if (c == '/')
						bit_set(ncur, i);
					else
						bit_set(ninner, i);
					any = 1;
				}
				if (i >= n || !bit_get(cur, i))
					continue;
				switch (t[i].kind) {
				case TOK_LIT:
					if (c == t[i].ch) {
						bit_set(ncur, i + 1);
						any = 1;
					}
					break;
				case TOK_ANY:
					if (c != '/') {
						bit_set(ncur, i + 1);
						any = 1;
					}
					break;
				case TOK_CLASS:
					if (c != '/' && class_has(&s->classes[t[i].cls], c)) {
						bit_set(ncur, i + 1);
						any = 1;
					}
					break;
				case TOK_STAR:
					if (c != '/') {
						bit_set(ncur, i);
						any = 1;
					}
					break;
				case TOK_STARSTAR:
					bit_set(ncur, i);
					any = 1;
					break;
				case TOK_STARDIR:
					if (c != '/') {
						bit_set(ninner, i);
						any = 1;
					}
					break;
				default:
					break;
				}
			}
		}
		if (!any)
			return 0;
		nfa_close(t, n, ncur);
		memcpy(cur, ncur, words * 8);
		memcpy(inner, ninner, words * 8);
	}
	return bit_get(cur, n);
}

static int byte_fits(const gi_set *s, const gi_tok *t, unsigned char c)
{
	switch (t->kind) {
	case TOK_LIT:
		return c == t->ch;
	case TOK_ANY:
		return c != '/';
	case TOK_CLASS:
		return c != '/' && class_has(&s->classes[t->cls], c);
	default:
		return 0;
	}
}

/* Stars and one-byte tokens over a string without '/', where every star
 * may take any run: the classic greedy scan that, on a mismatch, lets the
 * last star take one more byte. Linear in practice, O(len x n) at worst. */
static int star_match(const gi_set *s, const gi_tok *t, size_t n, const char *str, size_t len)
{
	size_t i = 0, j = 0, star_i = SIZE_MAX, star_j = 0;
	while (j < len) {
		if (i < n && (t[i].kind == TOK_STAR || t[i].kind == TOK_STARSTAR)) {
			star_i = i++;
			star_j = j;
		} else if (i < n && byte_fits(s, &t[i], (unsigned char)str[j])) {
			i++;
			j++;
		} else if (star_i != SIZE_MAX) {
			i = star_i + 1;
			j = ++star_j;
		} else {
			return 0;
		}
	}
	while (i < n && (t[i].kind == TOK_STAR || t[i].kind == TOK_STARSTAR))
		i++;
	return i == n;
}

/* A glob: the one-byte tokens at both ends each take exactly one byte, so
 * they are checked in place; only the part between the outer stars (often
 * a single '*') needs the NFA. */
static int glob_match(const gi_set *s, const gi_pattern *pat, const char *str, size_t len)
{
	const gi_tok *t = s->toks + pat->tok_start;
	size_t n = pat->n_tok;
	if (!pat->has_star) {
		if (len != n)
			return 0;
		for (size_t i = 0; i < n; i++)
			if (!byte_fits(s, &t[i], (unsigned char)str[i]))
				return 0;
		return 1;
	}
	size_t head = pat->head, tail = pat->tail;
	if (len < head + tail)
		return 0;
	for (size_t i = 0; i < head; i++)
		if (!byte_fits(s, &t[i], (unsigned char)str[i]))
			return 0;
	for (size_t i = 0; i < tail; i++)
		if (!byte_fits(s, &t[n - tail + i], (unsigned char)str[len - tail + i]))
			return 0;
	t += head;
	n -= head + tail;
	str += head;
	len -= head + tail;
	if (n == 1 && t[0].kind == TOK_STAR)
		return !memchr(str, '/', len);
	if (n == 1 && t[0].kind == TOK_STARSTAR)
		return 1;
	if (!pat->has_stardir && !memchr(str, '/', len))
		return star_match(s, t, n, str, len);
	return nfa_match(s, t, n, str, len);
}

static int pattern_matches(const gi_set *s, const gi_pattern *pat, const char *str, size_t len)
{
	/* Literal shapes always have their bytes in the pool. */
	const char *lit = pat->shape == SHAPE_GLOB ? NULL : s->lits + pat->lit_off;
	switch (pat->shape) {
	case SHAPE_LITERAL:
		return len == pat->lit_len && memcmp(str, lit, len) == 0;
	case SHAPE_SUFFIX:
		/* The '*' part must not hold a '/' (only possible when anchored). */
		return len >= pat->lit_len &&
		       memcmp(str + len - pat->lit_len, lit, pat->lit_len) == 0 &&
		       (pat->basename || !memchr(str, '/', len - pat->lit_len));
	case SHAPE_PREFIX:
		return len >= pat->lit_len && memcmp(str, lit, pat->lit_len) == 0 &&
		       !memchr(str + pat->lit_len, '/', len - pat->lit_len);
	default:
		return glob_match(s, pat, str, len);
	}
}

/* Match a path already made relative to the set's base folder. Later
 * patterns win, so scan from the last one. */
static int match_rel(const gi_set *s, const char *rel, size_t len, int is_dir)
{
	const char *slash = len ? memrchr(rel, '/', len) : NULL;
	const char *name = slash ? slash + 1 : rel;
	size_t name_len = len - (size_t)(name - rel);
	for (size_t k = s->n_pats; k-- > 0;) {
		const gi_pattern *pat = &s->pats[k];
		if (pat->dir_only && !is_dir)
			continue;
		int hit = pat->basename ? pattern_matches(s, pat, name, name_len)
		                        : pattern_matches(s, pat, rel, len);
		if (hit)
			return pat->negate ? -1 : 1;
	}
	return 0;
}

int gi_match(const gi_set *s, const char *relpath, int is_dir)
{
	if (!s || !relpath)
		return 0;
	size_t len = strlen(relpath);
	if (s->base_len) {
		/* Only paths strictly below the base folder are governed by it. */
		if (len <= s->base_len || memcmp(relpath, s->base, s->base_len) != 0 ||
		    relpath[s->base_len] != '/')
			return 0;
		relpath += s->base_len + 1;
		len -= s->base_len + 1;
	}
	if (len == 0)
		return 0;
	return match_rel(s, relpath, len, is_dir);
}
