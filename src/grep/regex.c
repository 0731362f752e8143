/*
 * regex.c — PCRE2 for grep: patterns compiled with grep's options (-F
 * quotes the pattern, -w wraps it in non-word boundaries, -i), JIT when
 * PCRE2 allows it, and matching within bounds.
 *
 * PCRE2 allocates through the library's seam: every object is made with a
 * general context whose malloc and free are fa_malloc and fa_free. PCRE2
 * copies those functions into each object it makes (a compiled pattern
 * frees itself with them), so the general context lives only as long as
 * the call that makes an object. JIT code and JIT stacks are mapped by
 * PCRE2 itself (mmap), outside the seam; a JIT compile that fails for
 * memory leaves the interpreter, which gives the same matches.
 *
 * Matching is bounded: PCRE2's match limit (and, without JIT, its depth
 * limit) stop a hostile pattern, and the search fails with FATHOM_ETOOBIG
 * instead of running away.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "grep/grep.h"

#define G_MATCH_LIMIT 10000000u
#define G_DEPTH_LIMIT 10000u
#define G_JIT_STACK (1u << 20)

struct g_regex {
	pcre2_code *code;
	int per_line;          /* matched one line at a time (see line_bound) */
};

struct g_matcher {
	pcre2_match_data *md;
	pcre2_match_context *mc;
	pcre2_jit_stack *js;
};

/* ---- the allocation seam ---------------------------------------------------- */

static void *seam_malloc(PCRE2_SIZE n, void *data)
{
	(void)data;
	return fa_malloc(n);
}

static void seam_free(void *p, void *data)
{
	(void)data;
	fa_free(p);
}

static pcre2_general_context *seam_context(void)
{
	return pcre2_general_context_create(seam_malloc, seam_free, NULL);
}

/* ---- compiling ---------------------------------------------------------------- */

/* Does a match of the regex depend on text beyond its line: \A \z \Z \G
 * (the text's ends, not the line's), lookarounds, (*VERB)s? Such a
 * pattern is matched one line at a time, as grep does; the others run
 * over the whole text at once. Over-counts (a "(?=" inside \Q...\E),
 * never misses. */
static int line_bound(const char *pat, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (pat[i] == '\\' && i + 1 < n) {
			char c = pat[++i];
			if (c == 'Q') {
				/* quoted: to the \E */
				while (i + 2 < n && !(pat[i + 1] == '\\' && pat[i + 2] == 'E'))
					i++;
				i += 2;
				continue;
			}
			if (c == 'A' || c == 'z' || c == 'Z' || c == 'G')
				return 1;
			continue;
		}
		if (pat[i] == '(' && i + 1 < n) {
			if (pat[i + 1] == '*')
				return 1;
			if (pat[i + 1] == '?' && i + 2 < n &&
			    (pat[i + 2] == '=' || pat[i + 2] == '!' ||
			     (pat[i + 2] == '<' && i + 3 < n && (pat[i + 3] == '=' || pat[i + 3] == '!'))))
				return 1;
		}
	}
	return 0;
}

/* Length of the (*UTF), (*LIMIT_MATCH=n)... settings at the start of a
 * pattern, which must stay at its very start. */
static size_t leading_settings(const char *pat, size_t n)
{
	size_t i = 0;
	while (i + 2 < n && pat[i] == '(' && pat[i + 1] == '*') {
		size_t j = i + 2;
		while (j < n && ((pat[j] >= 'A' && pat[j] <= 'Z') || pat[j] == '_' || pat[j] == '=' ||
		                 (pat[j] >= '0' && pat[j] <= '9')))
			j++;
		if (j >= n || pat[j] != ')' || j == i + 2)
			break;
		i = j + 1;
	}
	return i;
}

/* The pattern PCRE2 compiles: -w wraps it in non-word boundaries (after
 * its leading settings; an open \Q closed first), a literal is quoted
 * (each of its lines an alternative). */
static int build_pattern(fbuf *b, const char *pat, size_t plen, int literal, int word)
{
	if (word && !literal) {
		size_t lead = leading_settings(pat, plen);
		fbuf_append(b, pat, lead);
		pat += lead;
		plen -= lead;
	}
	if (word)
		fbuf_puts(b, "(?<!\\w)(?:");
	if (literal) {
		const char *p = pat, *end = pat + plen;
		int first = 1;
		for (;;) {
			const char *e = memchr(p, '\n', (size_t)(end - p));
			size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
			if (!first)
				fbuf_putc(b, '|');
			first = 0;
			fbuf_puts(b, "\\Q");
			for (size_t i = 0; i < n; i++) {
				/* \E inside the string ends the quote: re-open it */
				if (p[i] == '\\' && i + 1 < n && p[i + 1] == 'E') {
					fbuf_puts(b, "\\E\\\\E\\Q");
					i++;
					continue;
				}
				fbuf_putc(b, p[i]);
			}
			fbuf_puts(b, "\\E");
			if (!e)
				break;
			p = e + 1;
		}
	} else {
		fbuf_append(b, pat, plen);
		if (word)
			fbuf_puts(b, "\\E");   /* ends a \Q left open; else nothing */
	}
	if (word)
		fbuf_puts(b, ")(?!\\w)");
	return b->err;
}

static int compile_code(pcre2_code **out, const char *pat, size_t plen, unsigned flags,
                        const char *what, size_t at)
{
	int literal = (flags & G_LITERAL) != 0, word = (flags & G_WORD) != 0;
	*out = NULL;
	if (word && !literal) {
		/* the pattern alone first: its errors name its own columns, and
		 * one that only compiles wrapped (a stray ')') is refused */
		int rc = compile_code(out, pat, plen, flags & ~(unsigned)G_WORD, what, at);
		if (rc)
			return rc;
		pcre2_code_free(*out);
		*out = NULL;
	}
	fbuf b;
	fbuf_init(&b, 0);
	int rc = build_pattern(&b, pat, plen, literal, word);
	if (rc) {
		fbuf_free(&b);
		return rc;
	}
	uint32_t opts = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	if (flags & G_MULTILINE)
		opts |= PCRE2_MULTILINE;
	if (flags & G_CASELESS)
		opts |= PCRE2_CASELESS;
	pcre2_general_context *gc = seam_context();
	pcre2_compile_context *cc = gc ? pcre2_compile_context_create(gc) : NULL;
	pcre2_general_context_free(gc);
	if (!cc) {
		fbuf_free(&b);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	int err;
	PCRE2_SIZE off;
	*out = pcre2_compile((PCRE2_SPTR)(b.len ? (const char *)b.data : ""), b.len, opts, &err, &off,
	                     cc);
	pcre2_compile_context_free(cc);
	size_t prefix = word ? strlen("(?<!\\w)(?:") + (literal ? 0 : leading_settings(pat, plen)) : 0;
	fbuf_free(&b);
	if (!*out) {
		if (err == PCRE2_ERROR_HEAP_FAILED)
			return fa_err(FATHOM_ENOMEM, "out of memory compiling the %s", what);
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(err, msg, sizeof msg);
		size_t col = off > prefix ? off - prefix : 0;
		if (col > plen)
			col = plen;
		return fa_err(FATHOM_EINVAL, "bad %s at column %zu: %s", what, at + col + 1,
		              (const char *)msg);
	}
	pcre2_jit_compile(*out, PCRE2_JIT_COMPLETE);   /* the interpreter if JIT is refused */
	return 0;
}

int g_regex_compile(g_regex **out, const char *pat, size_t plen, unsigned flags,
                    const char *what, size_t at)
{
	*out = NULL;
	g_regex *re = fa_calloc(1, sizeof *re);
	if (!re)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	int rc = compile_code(&re->code, pat, plen, flags, what, at);
	if (rc) {
		fa_free(re);
		return rc;
	}
	re->per_line = !(flags & G_LITERAL) && line_bound(pat, plen);
	*out = re;
	return 0;
}

void g_regex_free(g_regex *re)
{
	if (!re)
		return;
	pcre2_code_free(re->code);
	fa_free(re);
}

int g_regex_per_line(const g_regex *re)
{
	return re->per_line;
}

/* ---- matching ------------------------------------------------------------------- */

int g_matcher_new(g_matcher **out)
{
	*out = NULL;
	g_matcher *m = fa_calloc(1, sizeof *m);
	if (!m)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	pcre2_general_context *gc = seam_context();
	if (gc) {
		m->md = pcre2_match_data_create(1, gc);
		m->mc = pcre2_match_context_create(gc);
		m->js = pcre2_jit_stack_create(32 * 1024, G_JIT_STACK, gc);
		pcre2_general_context_free(gc);
	}
	if (!m->md || !m->mc || !m->js) {
		g_matcher_free(m);
		return fa_err(FATHOM_ENOMEM, "out of memory");
	}
	pcre2_set_match_limit(m->mc, G_MATCH_LIMIT);
	pcre2_set_depth_limit(m->mc, G_DEPTH_LIMIT);
	pcre2_jit_stack_assign(m->mc, NULL, m->js);
	*out = m;
	return 0;
}

void g_matcher_free(g_matcher *m)
{
	if (!m)
		return;
	pcre2_jit_stack_free(m->js);
	pcre2_match_context_free(m->mc);
	pcre2_match_data_free(m->md);
	fa_free(m);
}

static int match_err(int r)
{
	if (r == PCRE2_ERROR_NOMEMORY)
		return fa_err(FATHOM_ENOMEM, "out of memory matching the pattern");
	PCRE2_UCHAR msg[256];
	pcre2_get_error_message(r, msg, sizeof msg);
	return fa_err(FATHOM_ETOOBIG, "the pattern is too costly to match (%s)", (const char *)msg);
}

int g_regex_match(g_matcher *m, const g_regex *re, const char *s, size_t n, size_t start,
                  size_t *ms, size_t *me)
{
	int r = pcre2_match(re->code, (PCRE2_SPTR)s, n, start, 0, m->md, m->mc);
	if (r == PCRE2_ERROR_NOMATCH)
		return 0;
	if (r < 0)
		return match_err(r);
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(m->md);
	*ms = ov[0];
	*me = ov[1];
	if (*me < *ms)   /* \K in a lookbehind: the match ends before it starts */
		*me = *ms;
	return 1;
}
