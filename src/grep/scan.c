/*
 * scan.c — the lines of a text that a pattern matches, as grep sees them: a
 * match must lie within one line, and a line is reported once, with its
 * first match.
 *
 * Most patterns run over the whole text at once, from one match to the
 * next, which is much faster than a call per line; a match that runs past
 * its line is tried again on the line alone. Patterns whose matches depend
 * on what lies beyond the line (g_regex_per_line) are matched one line at a
 * time.
 */
#include "grep/grep.h"

/* Newlines in [p, p + n): a word at a time. */
static size_t count_newlines(const char *p, size_t n)
{
	size_t c = 0, i = 0;
	const uint64_t ones = 0x0101010101010101ull, low7 = 0x7f7f7f7f7f7f7f7full;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		uint64_t x = w ^ (ones * '\n');
		/* high bit of each byte set where x's byte is zero */
		uint64_t z = ~(((x & low7) + low7) | x | low7);
		c += (size_t)(((z >> 7) * ones) >> 56);
	}
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

int g_lines_add(g_lines *l, const fathom_grep_line *line)
{
	if (l->n == l->cap && fa_grow((void **)&l->v, &l->cap, l->n + 1, sizeof *l->v))
		return fa_err(FATHOM_ENOMEM, "out of memory");
	l->v[l->n++] = *line;
	return 0;
}

/* A matching line: 0 go on, 1 enough (the limit, or past 2^32 lines),
 * < 0 error. */
static int line_found(g_lines *out, size_t line_no, size_t ls, size_t le, size_t ms, size_t me,
                      uint32_t limit)
{
	if (line_no > UINT32_MAX)
		return 1;
	fathom_grep_line l = { (uint32_t)line_no, ls, le, ms, me };
	int rc = g_lines_add(out, &l);
	if (rc)
		return rc;
	return limit && out->n >= limit;
}

/* Each line of text[from, len) matched alone. */
static int scan_lines(g_matcher *m, const g_regex *re, const char *text, size_t len,
                      size_t from, uint32_t limit, g_lines *out)
{
	size_t line_no = 1 + count_newlines(text, from), pos = from;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t le = nl ? (size_t)(nl - text) : len;
		size_t ms = 0, me = 0;
		int r = g_regex_match(m, re, text + pos, le - pos, 0, &ms, &me);
		if (r < 0)
			return r;
		if (r == 1 && (r = line_found(out, line_no, pos, le, pos + ms, pos + me, limit)) != 0)
			return r < 0 ? r : 0;
		if (!nl)
			break;
		pos = le + 1;
		line_no++;
	}
	return 0;
}

int g_scan(g_matcher *m, const g_regex *re, const char *text, size_t len, size_t from,
           uint32_t limit, g_lines *out)
{
	out->n = 0;
	if (g_regex_per_line(re))
		return scan_lines(m, re, text, len, from, limit, out);
	size_t pos = from, counted = 0, line_no = 1;
	while (pos < len) {   /* no phantom line after a final newline */
		size_t ms = 0, me = 0;
		int r = g_regex_match(m, re, text, len, pos, &ms, &me);
		if (r <= 0)
			return r;
		/* the line holding the match's start */
		size_t ls = ms;
		while (ls > pos && text[ls - 1] != '\n')
			ls--;
		if (ms == len && ls == len)
			break;   /* an empty match at the very end: no line there */
		const char *nl = memchr(text + ms, '\n', len - ms);
		size_t le = nl ? (size_t)(nl - text) : len;
		line_no += count_newlines(text + counted, ls - counted);
		counted = ls;
		size_t lms = 0, lme = 0;
		if (me > le || ms < ls) {
			/* it ran past the line: does the line alone match? */
			r = g_regex_match(m, re, text + ls, le - ls, 0, &lms, &lme);
			if (r < 0)
				return r;
		} else {
			r = 1;
			lms = ms - ls;
			lme = me - ls;
		}
		if (r == 1 && (r = line_found(out, line_no, ls, le, ls + lms, ls + lme, limit)) != 0)
			return r < 0 ? r : 0;
		if (!nl)
			break;
		pos = le + 1;
	}
	return 0;
}

int g_lines_merge(g_lines *out, g_lines *const *src, uint32_t n, uint32_t limit)
{
	out->n = 0;
	for (uint32_t s = 0; s < n; s++)
		for (size_t i = 0; i < src[s]->n; i++)
			if (g_lines_add(out, &src[s]->v[i]))
				return FATHOM_ENOMEM;
	/* insertion sort by line, then match start; drop repeats of a line */
	for (size_t i = 1; i < out->n; i++) {
		fathom_grep_line v = out->v[i];
		size_t j = i;
		while (j > 0 && (out->v[j - 1].line > v.line ||
		                 (out->v[j - 1].line == v.line && out->v[j - 1].match_start > v.match_start))) {
			out->v[j] = out->v[j - 1];
			j--;
		}
		out->v[j] = v;
	}
	size_t k = 0;
	for (size_t i = 0; i < out->n; i++)
		if (k == 0 || out->v[k - 1].line != out->v[i].line)
			out->v[k++] = out->v[i];
	out->n = k;
	if (limit && out->n > limit)
		out->n = limit;
	return 0;
}
