/*
 * snippet.c — the passage shown under a hit. The chunk text is tokenised
 * again with the index's analyser, so a highlight lands exactly on the
 * tokens whose analysed form is a query term (stemmed forms included). The
 * window of about `target` bytes with the most distinct query terms wins
 * (then the most matches, then the earliest); its ends are moved to word
 * boundaries when one is near, and always to UTF-8 boundaries. Runs of
 * whitespace and control characters collapse to one space, so a snippet is
 * one line of plain text.
 */
#include <stdlib.h>

#include "query/query_int.h"
#include "text/text.h"

#define Q_MAX_MATCHES 4096
#define Q_WORD_SLACK 24   /* how far an end may move to reach a word boundary */
#define SCAN_FULL 1       /* the callback's "stop", not an error */

typedef struct snip_scan {
	const q_plan *p;
	size_t len;
	q_match *m;
	uint32_t n;
} snip_scan;

static int on_token(void *ctx, const text_token *tok)
{
	snip_scan *s = ctx;
	if (s->n >= Q_MAX_MATCHES)
		return SCAN_FULL;
	if (tok->start >= tok->end || tok->end > s->len)
		return 0;
	for (uint32_t t = 0; t < s->p->nterms; t++) {
		const q_term *qt = &s->p->terms[t];
		if (qt->scored && qt->len == tok->len && memcmp(qt->text, tok->term, tok->len) == 0) {
			s->m[s->n].start = tok->start;
			s->m[s->n].end = tok->end;
			s->m[s->n].term = t;
			s->n++;
			break;
		}
	}
	return 0;
}

static int cmp_match(const void *a, const void *b)
{
	const q_match *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->end > y->end) - (x->end < y->end);
}

/* Whitespace and the other ASCII control characters (a NUL would cut the
 * snippet short for a C caller): all become one space. */
static int is_space(unsigned char ch)
{
	return ch <= ' ' || ch == 0x7f;
}

/* The run of matches [*bi, *bj) with the most distinct terms that fits in
 * target bytes (a single match always fits). */
static void best_window(const q_match *m, uint32_t n, uint32_t *cnt, uint32_t nterms,
                        size_t target, uint32_t *bi, uint32_t *bj)
{
	memset(cnt, 0, (nterms ? nterms : 1) * sizeof *cnt);
	uint32_t j = 0, distinct = 0, best_distinct = 0, best_count = 0;
	*bi = 0;
	*bj = 1;
	for (uint32_t i = 0; i < n; i++) {
		if (j <= i) {
			j = i;
			if (cnt[m[j].term]++ == 0)
				distinct++;
			j++;
		}
		while (j < n && m[j].end - m[i].start <= target) {
			if (cnt[m[j].term]++ == 0)
				distinct++;
			j++;
		}
		if (distinct > best_distinct || (distinct == best_distinct && j - i > best_count)) {
			best_distinct = distinct;
			best_count = j - i;
			*bi = i;
			*bj = j;
		}
		if (--cnt[m[i].term] == 0)
			distinct--;
	}
}

/* Move the window's ends to word boundaries nearby, never cutting the
 * matched span [s0, e0), and to UTF-8 boundaries. */
static void snap_window(const char *text, size_t len, size_t s0, size_t e0,
                        size_t *ws, size_t *we)
{
	const unsigned char *t = (const unsigned char *)text;
	size_t a = *ws, b = *we;
	if (a > 0 && !is_space(t[a - 1]) && !is_space(t[a])) {
		size_t k;
		for (k = a; k < s0 && k < a + Q_WORD_SLACK && !is_space(t[k]); k++)
			;
		if (k < s0 && is_space(t[k])) {
			a = k + 1;
		} else {
			for (k = a; k > 0 && a - k < Q_WORD_SLACK && !is_space(t[k - 1]); k--)
				;
			if (k == 0 || is_space(t[k - 1]))
				a = k;
		}
	}
	if (b > 0 && b < len && !is_space(t[b - 1]) && !is_space(t[b])) {
		size_t k;
		for (k = b; k > e0 && b - k < Q_WORD_SLACK && !is_space(t[k - 1]); k--)
			;
		if (k > e0 && is_space(t[k - 1]))
			b = k - 1;
	}
	*ws = text_utf8_floor(text, len, a);
	*we = text_utf8_floor(text, len, b);
	if (*we < e0)
		*we = e0;
}

int q_snip_work_init(q_snip_work *w, fa_arena *a, uint32_t nterms)
{
	w->m = fa_arena_alloc(a, Q_MAX_MATCHES * sizeof *w->m);
	w->src_end = fa_arena_alloc(a, Q_MAX_MATCHES * sizeof *w->src_end);
	w->cnt = fa_arena_alloc(a, (nterms ? nterms : 1) * sizeof *w->cnt);
	return w->m && w->src_end && w->cnt ? 0 : fa_err(FATHOM_ENOMEM, "snippet");
}

int q_snippet(fa_arena *a, q_snip_work *w, text_analyzer *an, const q_plan *p,
              const char *text, size_t len, uint32_t target, uint32_t line0,
              const char **snippet, fathom_span **hl, uint32_t *n_hl, uint32_t **lines,
              uint32_t *n_lines)
{
	*snippet = "";
	*hl = NULL;
	*n_hl = 0;
	*lines = NULL;
	*n_lines = 0;
	if (len == 0)
		return 0;
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	snip_scan sc = { p, len, w->m, 0 };
	uint32_t pos = 0;
	int rc = text_analyze(an, text, len, &pos, on_token, &sc, NULL);
	if (rc && rc != SCAN_FULL)
		return rc;
	qsort(sc.m, sc.n, sizeof *sc.m, cmp_match);

	/* The lines the matches are on, for the receipt: distinct, in order. */
	if (sc.n) {
		uint32_t *ln = fa_arena_alloc(a, FA_MIN(sc.n, (uint32_t)Q_MAX_MATCH_LINES) * sizeof *ln);
		if (!ln)
			return fa_err(FATHOM_ENOMEM, "match lines");
		uint32_t line = line0, nl = 0;
		size_t at = 0;
		for (uint32_t i = 0; i < sc.n && nl < Q_MAX_MATCH_LINES; i++) {
			for (; at < sc.m[i].start; at++)
				line += text[at] == '\n';
			if (nl == 0 || ln[nl - 1] != line)
				ln[nl++] = line;
		}
		*lines = ln;
		*n_lines = nl;
	}

	size_t ws, we, s0 = 0, e0 = 0;
	if (sc.n == 0) {
		ws = 0;
		we = FA_MIN(len, (size_t)target);
	} else {
		uint32_t bi, bj;
		best_window(sc.m, sc.n, w->cnt, p->nterms, target, &bi, &bj);
		s0 = sc.m[bi].start;
		for (uint32_t i = bi; i < bj; i++)
			e0 = FA_MAX(e0, (size_t)sc.m[i].end);
		if (e0 - s0 >= target) {
			ws = s0;
			we = e0;
		} else {
			size_t slack = target - (e0 - s0), before = slack / 3;
			ws = s0 > before ? s0 - before : 0;
			we = FA_MIN(len, ws + target);
			if (we - ws < target)
				ws = we > target ? we - target : 0;
		}
	}
	snap_window(text, len, s0, e0, &ws, &we);
	if (sc.n == 0)
		s0 = e0 = ws;

	/* The matches inside the window, merged where they overlap (an
	 * identifier and one of its parts, say). */
	fathom_span *spans = fa_arena_alloc(a, (sc.n ? sc.n : 1) * sizeof *spans);
	char *out = fa_arena_alloc(a, we - ws + 1);
	if (!spans || !out)
		return fa_err(FATHOM_ENOMEM, "snippet");
	uint32_t ns = 0, *src_end = w->src_end;
	for (uint32_t i = 0; i < sc.n; i++) {
		const q_match *m = &sc.m[i];
		if (m->start < ws || m->end > we)
			continue;
		if (ns > 0 && m->start <= src_end[ns - 1]) {
			src_end[ns - 1] = FA_MAX(src_end[ns - 1], m->end);
			continue;
		}
		spans[ns].start = m->start; /* source offsets until mapped below */
		src_end[ns] = m->end;
		ns++;
	}

	/* Copy, collapsing whitespace, and map the spans to output offsets. */
	size_t o = 0;
	uint32_t open = 0, close = 0;
	int pending_space = 0;
	for (size_t i = ws; i <= we; i++) {
		while (close < open && src_end[close] == i) {
			spans[close].len = (uint32_t)(o - spans[close].start);
			close++;
		}
		if (i == we)
			break;
		unsigned char ch = (unsigned char)text[i];
		if (is_space(ch)) {
			pending_space = o > 0;
			continue;
		}
		if (pending_space) {
			out[o++] = ' ';
			pending_space = 0;
		}
		if (open < ns && spans[open].start == i) {
			spans[open].start = (uint32_t)o;
			open++;
		}
		out[o++] = (char)ch;
	}
	out[o] = '\0';
	*snippet = out;
	*hl = spans;
	*n_hl = close;
	return 0;
}
