/*
 * search_out.c — fathom search's hits as a person and an editor read them.
 *
 * Each hit leads with "path:line:" (the first of its best lines), as grep
 * and ripgrep lead a match, so a terminal or an editor jumps to it; then
 * the snippet's lines, each with its number, as ripgrep's --heading output
 * shows a match with context: "13:" before a line holding a query term,
 * "12-" before one that does not. --vimgrep gives one "path:line:col:text"
 * line per hit instead.
 *
 * The library's snippet is one line (whitespace collapsed), with its
 * highlights. Its lines are found again in the chunk's text: the snippet is
 * a window of that text with each run of whitespace and control characters
 * written as one space, so walking both side by side gives every snippet
 * byte its place in the text, and with it the window's lines and the
 * highlights' places on them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The snippet's whitespace: what the library collapses to one space. */
static int is_space(unsigned char c)
{
	return c <= ' ' || c == 0x7f;
}

typedef struct hit_lines {
	char *text;             /* the chunk's text (fathom_free), or NULL */
	size_t len;
	uint32_t line0;         /* the line text starts on */
	int found;              /* 1: the snippet's window was found in text */
	size_t ws, we;          /* its first and past its last non-space byte */
	size_t *hl;             /* highlights in text: start, end pairs */
	uint32_t n_hl;
	uint32_t lead;          /* the line the hit leads with */
	size_t lead_col;        /* 1-based byte column on it (--vimgrep) */
	size_t head;            /* bytes of the first line before text */
} hit_lines;

/* Does snippet s (n bytes, no leading space) start at text offset p? On a
 * yes map[i] is the text offset of snippet byte i. */
static int snippet_at(const char *t, size_t len, size_t p, const char *s, size_t n, size_t *map)
{
	size_t j = p;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == ' ') {   /* a run of whitespace in the text */
			if (j >= len || !is_space((unsigned char)t[j]))
				return 0;
			map[i] = j;
			while (j < len && is_space((unsigned char)t[j]))
				j++;
			continue;
		}
		if (j >= len || t[j] != s[i])
			return 0;
		map[i] = j++;
	}
	return 1;
}

static int is_match_line(const fathom_hit *h, uint32_t line)
{
	for (uint32_t i = 0; i < h->n_match_lines; i++)
		if (h->match_lines[i] == line)
			return 1;
	return 0;
}

/* The line text offset off is on. */
static uint32_t line_of(const hit_lines *v, size_t off)
{
	uint32_t line = v->line0;
	for (size_t i = 0; i < off && i < v->len; i++)
		line += v->text[i] == '\n';
	return line;
}

static size_t line_begin(const hit_lines *v, size_t off)
{
	while (off > 0 && v->text[off - 1] != '\n')
		off--;
	return off;
}

static size_t line_end(const hit_lines *v, size_t off)
{
	const char *nl = memchr(v->text + off, '\n', v->len - off);
	return nl ? (size_t)(nl - v->text) : v->len;
}

/* Does a highlight start on the line [ls, le)? Its offset, or SIZE_MAX. */
static size_t first_highlight(const hit_lines *v, size_t ls, size_t le)
{
	for (uint32_t i = 0; i < v->n_hl; i++)
		if (v->hl[2 * i] >= ls && v->hl[2 * i] < le)
			return v->hl[2 * i];
	return SIZE_MAX;
}

static void hit_lines_free(hit_lines *v)
{
	fathom_free(v->text);
	free(v->hl);
	memset(v, 0, sizeof *v);
}

/* The document's text, read once for the hits of one document (cached in
 * o). NULL when it cannot be read. */
static const char *doc_text(cli_hits_out *o, const char *id, size_t *len)
{
	if (o->doc && strcmp(o->doc_id, id) == 0) {
		*len = o->doc_len;
		return o->doc;
	}
	fathom_free(o->doc);
	free(o->doc_id);
	o->doc = NULL;
	o->doc_id = strdup(id);
	if (!o->doc_id || fathom_get_ex(&o->doc, &o->doc_len, o->ix, id, 1, 0, NULL) != 0) {
		fathom_free(o->doc);
		o->doc = NULL;
		return NULL;
	}
	*len = o->doc_len;
	return o->doc;
}

/* How many bytes of its first line come before the chunk's text: 0 but
 * for a chunk of a line longer than the chunker's maximum, which is cut
 * into pieces (src/text/chunk.c). On line 1 that is the chunk's byte
 * offset. A chunk inside one line further down is found in that line, read
 * from the document (a whole-document read, so only then). The last piece
 * of a cut line, followed by whole lines, cannot be told from a whole line
 * without that read for every hit: its line's first bytes go unshown, and
 * its column counts from the piece. */
static size_t chunk_head(cli_hits_out *o, const fathom_hit *h, const char *id, const char *c,
                         size_t clen)
{
	if (h->line_start <= 1)
		return (size_t)h->byte_start;
	if (memchr(c, '\n', clen))
		return 0;
	size_t len = 0, at = 0;
	const char *t = doc_text(o, id, &len);
	for (uint32_t line = 1; t && line < h->line_start && at < len; at++)
		line += t[at] == '\n';
	const char *nl = t && at < len ? memchr(t + at, '\n', len - at) : NULL;
	size_t le = nl ? (size_t)(nl - t) : len;
	const char *found = t && clen && at < le ? memmem(t + at, le - at, c, clen) : NULL;
	return found ? (size_t)(found - (t + at)) : 0;
}

/* Read the hit's chunk and find its snippet in it. Without it (or the
 * snippet in it) the hit leads with its first matching line. */
static void hit_lines_find(hit_lines *v, cli_hits_out *o, const fathom_hit *h)
{
	memset(v, 0, sizeof *v);
	v->lead = h->n_match_lines ? h->match_lines[0] : h->line_start;
	v->lead_col = 1;
	const char *s = h->snippet ? h->snippet : "";
	size_t n = strlen(s);
	if (n == 0 || s[0] == ' ' || fathom_get_chunk(&v->text, &v->len, o->ix, h->chunk_id) != 0)
		return;
	/* The document by a name that cannot be read as another file's:
	 * fathom_get reads a relative name against the current folder first. */
	char key[8192];
	const char *id = h->doc_id;
	if (h->path && *h->path && h->path[0] != '/' && o->paths.root_len &&
	    snprintf(key, sizeof key, "%s/%s", o->paths.root, h->path) < (int)sizeof key)
		id = key;
	v->head = chunk_head(o, h, id, v->text, v->len);
	v->line0 = h->line_start;
	size_t *map = malloc(n * sizeof *map);
	if (!map)
		return;
	/* The first place the snippet fits: the library takes the earliest of
	 * equally good windows, and a text repeated word for word is the only
	 * way two places fit. */
	for (size_t p = 0; p < v->len && !v->found; p++)
		if (v->text[p] == s[0] && snippet_at(v->text, v->len, p, s, n, map))
			v->found = 1;
	if (!v->found) {
		free(map);
		return;
	}
	v->ws = map[0];
	v->we = map[n - 1] + 1;
	v->hl = malloc(((size_t)h->n_highlights + 1) * 2 * sizeof *v->hl);
	for (uint32_t i = 0; v->hl && i < h->n_highlights; i++) {
		fathom_span sp = h->highlights[i];
		if (sp.len == 0 || sp.start >= n || sp.len > n - sp.start)
			continue;
		v->hl[2 * v->n_hl] = map[sp.start];
		v->hl[2 * v->n_hl + 1] = map[sp.start + sp.len - 1] + 1;
		v->n_hl++;
	}
	free(map);
	/* The lead: the window's first line holding a query term. */
	uint32_t line = line_of(v, v->ws);
	v->lead = line;
	v->lead_col = v->ws - line_begin(v, v->ws) + 1 + (line_begin(v, v->ws) ? 0 : v->head);
	for (size_t ls = line_begin(v, v->ws); ls < v->we; line++) {
		size_t le = line_end(v, ls), at = first_highlight(v, ls, le);
		if (at != SIZE_MAX || is_match_line(h, line)) {
			v->lead = line;
			v->lead_col = (at != SIZE_MAX ? at : ls > v->ws ? ls : v->ws) - ls + 1 +
			              (ls ? 0 : v->head);
			break;
		}
		ls = le + 1;
	}
}

/* Bytes of the text, as a terminal may take them: the control characters
 * a text may hold (C0 but tab, DEL, C1) become spaces, so no document can
 * drive the terminal, and a byte's column stays its column in the file. */
static void put_text(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			fputc(' ', stdout);
		} else if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
		           (unsigned char)s[i + 1] < 0xA0) {
			fputs("  ", stdout);
			i++;
		} else {
			fputc(c, stdout);
		}
	}
}

/* The line [ls, le) of the text, its highlights in colour. A line that
 * runs on past the snippet's window for more than `reach` bytes is cut
 * there, "..." marking the cut, so a minified file's one line stays a
 * snippet. */
static void put_line(const hit_lines *v, size_t ls, size_t le, size_t reach, int color)
{
	if (le > ls && v->text[le - 1] == '\r')
		le--;
	size_t from = ls, to = le;
	if (v->ws > ls && v->ws - ls > reach) {
		from = v->ws - reach;
		while (from < v->ws && ((unsigned char)v->text[from] & 0xC0) == 0x80)
			from++;
	}
	if (v->we < le && le - v->we > reach) {
		to = v->we + reach;
		while (to > v->we && ((unsigned char)v->text[to] & 0xC0) == 0x80)
			to--;
	}
	if (from > ls || (ls == 0 && v->head))
		fputs("...", stdout);
	size_t at = from;
	for (uint32_t i = 0; color && i < v->n_hl; i++) {
		size_t hs = v->hl[2 * i], he = v->hl[2 * i + 1];
		if (he <= at || hs >= to)
			continue;
		if (hs < at)
			hs = at;
		if (he > to)
			he = to;
		put_text(v->text + at, hs - at);
		fputs(CLI_SGR_MATCH, stdout);
		put_text(v->text + hs, he - hs);
		fputs(CLI_SGR_RESET, stdout);
		at = he;
	}
	put_text(v->text + at, to - at);
	if (to < le)
		fputs("...", stdout);
	fputc('\n', stdout);
}

/* The snippet's lines, "12-text" and "13:text": at most max_lines of
 * them, from two before the lead on, so a window of many short lines
 * stays a few. */
static void put_lines(const hit_lines *v, const fathom_hit *h, size_t reach, uint32_t max_lines,
                      int color)
{
	uint32_t line = line_of(v, v->ws), first = line, last = line_of(v, v->we - 1);
	if (max_lines && last - first >= max_lines) {
		first = v->lead > line + 2 ? v->lead - 2 : line;
		if (last - first < max_lines - 1)
			first = last - (max_lines - 1);
		last = first + (max_lines - 1);
	}
	for (size_t ls = line_begin(v, v->ws); ls < v->we && line <= last; line++) {
		size_t le = line_end(v, ls);
		if (line >= first) {
			int hit = first_highlight(v, ls, le) != SIZE_MAX || is_match_line(h, line);
			printf(color ? CLI_SGR_LINE "%u" CLI_SGR_RESET "%c" : "%u%c", line,
			       hit ? ':' : '-');
			put_line(v, ls, le, reach, color);
		}
		ls = le + 1;
	}
}

/* The snippet as the library made it, one line, when its lines could not
 * be found. */
static void put_flat_snippet(const fathom_hit *h, int color)
{
	const char *s = h->snippet ? h->snippet : "";
	size_t n = strlen(s), at = 0;
	for (uint32_t i = 0; i < h->n_highlights; i++) {
		fathom_span sp = h->highlights[i];
		if (sp.start < at || sp.start > n || sp.len > n - sp.start)
			continue;
		put_text(s + at, sp.start - at);
		fputs(color ? CLI_SGR_MATCH : "", stdout);
		put_text(s + sp.start, sp.len);
		fputs(color ? CLI_SGR_RESET : "", stdout);
		at = sp.start + sp.len;
	}
	put_text(s + at, n - at);
	fputc('\n', stdout);
}

/* "path" or, for a document without one (JSON lines), its id as stored. */
static void put_where(const cli_hits_out *o, const fathom_hit *h, char *buf, size_t cap)
{
	if (h->path && *h->path)
		cli_put_path(stdout, cli_path_show(&o->paths, h->path, buf, cap), o->color);
	else
		cli_put_path(stdout, h->doc_id, o->color);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Every source's score and rank, then fusion's and the reranker's. */
static void put_sources(const fathom_hit *h)
{
	/* full text alone: its receipt below says it all */
	if (h->n_sources == 0 || (h->n_sources == 1 && h->sources[0].source == FATHOM_SOURCE_KEYWORD))
		return;
	printf("     found by");
	for (uint32_t i = 0; i < h->n_sources; i++) {
		const fathom_source_score *x = &h->sources[i];
		const char *name = fathom_source_name(x->source);
		printf("%s %s %.4f (#%u)", i ? "," : "", name ? name : "?", x->score, x->rank);
	}
	fputc('\n', stdout);
}

static void put_explain(const fathom_hit *h)
{
	const fathom_source_score *kw = fathom_hit_source(h, FATHOM_SOURCE_KEYWORD);
	if (fathom_hit_source(h, FATHOM_SOURCE_FUSED) || fathom_hit_source(h, FATHOM_SOURCE_RERANK)) {
		/* the score is fusion's (or the reranker's): the keyword
		 * score's parts follow on their own line */
		printf("   score %.4f (%s)\n", h->score,
		       fathom_hit_source(h, FATHOM_SOURCE_RERANK) ? "reranked" : "fused");
		put_sources(h);
		if (!kw)
			return;
		printf("   keyword %.4f =", kw->score);
	} else if (!kw) {
		printf("   score %.4f\n", h->score);
		put_sources(h);
		return;
	} else {
		printf("   score %.4f =", h->score);
	}
	const char *sep = " (";
	for (uint32_t f = 0; f < h->n_fields; f++) {
		if (h->field_score[f] == 0)
			continue;
		printf("%s%s %.4f", sep, fathom_field_name((int)f), h->field_score[f]);
		sep = " + ";
	}
	printf(") x bonus %.3f\n", h->bonus);
	for (uint32_t f = 0; f < h->n_fields; f++) {
		if (!h->n_matched[f])
			continue;
		printf("     %-8s", fathom_field_name((int)f));
		for (uint32_t j = 0; j < h->n_matched[f]; j++)
			printf(" %s", h->matched[f][j]);
		fputc('\n', stdout);
	}
	if (h->n_missing) {
		printf("     missing ");
		for (uint32_t j = 0; j < h->n_missing; j++) {
			fputc(' ', stdout);
			cli_put_name(stdout, h->missing[j]);
		}
		fputc('\n', stdout);
	}
	if (h->n_match_lines) {
		printf("     lines   ");
		for (uint32_t j = 0; j < h->n_match_lines; j++)
			printf("%s%u", j ? ", " : " ", h->match_lines[j]);
		fputc('\n', stdout);
	}
}

/* The route stage's decision: the query's shape, the mode searched (and
 * the mode asked, when the route changed it), fusion, depth, sources. */
static void put_route(const fathom_results *r)
{
	const fathom_route_receipt *rt = fathom_results_route(r);
	if (!rt)
		return;
	printf("route: %s -> %s", fathom_shape_name(rt->shape), fathom_mode_name(rt->mode));
	if (rt->mode != rt->mode_asked)
		printf(" (asked %s)", fathom_mode_name(rt->mode_asked));
	if (rt->fusion >= 0) {
		printf(", fusion %s", fathom_fusion_name(rt->fusion));
		if (rt->fusion != FATHOM_FUSION_RRF)
			printf(" alpha %.2f", rt->alpha);
	}
	printf(", k %u, fetch %u, sources", rt->k, rt->fetch);
	const char *sep = " ";
	for (int s = 0; s < 32; s++)
		if ((rt->sources >> s) & 1) {
			const char *name = fathom_source_name(s);
			printf("%s%s", sep, name ? name : "?");
			sep = "+";
		}
	if (*rt->embedder)
		printf(", embedder %s", rt->embedder);
	fputc('\n', stdout);
	if ((rt->sources >> FATHOM_SOURCE_VECTOR) & 1) {
		printf("vectors: %u segment%s walked by its HNSW graph, %llu vectors scored one by one",
		       rt->vector_graphs, rt->vector_graphs == 1 ? "" : "s",
		       (unsigned long long)rt->vector_scored);
		if (rt->vector_missing)
			printf(", %llu chunks without a vector of this embedder",
			       (unsigned long long)rt->vector_missing);
		fputc('\n', stdout);
	}
}

/* What the query was read as: --explain's first lines. */
static void put_receipt(const fathom_results *r)
{
	printf("query: %s\n", fathom_results_parsed(r));
	put_route(r);
	if (*fathom_results_literal(r))
		printf("read literally: %s\n", fathom_results_literal(r));
	printf("terms:");
	for (size_t i = 0; i < fathom_results_nterms(r); i++) {
		int req = 0;
		const char *t = fathom_results_term(r, i, &req);
		printf(" %s%s%s", fathom_results_term_negated(r, i) ? "-" : "", t,
		       req ? "(required)" : "");
	}
	printf("\n");
	if (*fathom_results_filters(r))
		printf("filters: %s (applied before ranking)\n", fathom_results_filters(r));
	for (size_t i = 0; i < fathom_results_nexpansions(r); i++) {
		const fathom_expansion *e = fathom_results_expansion(r, i);
		printf("glossary: %s -> (", e->text);
		for (size_t k = 0; k < e->n_aliases; k++)
			printf("%s%s", k ? " | " : "", e->aliases[k]);
		printf(")  [group %u]\n", e->group);
	}
	for (size_t i = 0; i < fathom_results_nidents(r); i++) {
		const fathom_ident_receipt *x = fathom_results_ident(r, i);
		if (x->applied)
			printf("identifier %s (%s, key %s): only the %llu chunk(s) holding it\n", x->text,
			       x->category, x->key, (unsigned long long)x->chunks);
		else
			printf("identifier %s (%s, key %s) occurs nowhere: filter dropped\n", x->text,
			       x->category, x->key);
	}
	printf("\n");
}

void cli_print_hits(const fathom_results *r, cli_hits_out *o)
{
	size_t n = fathom_results_count(r);
	/* how far a line may run on past the snippet's window */
	size_t reach = o->snippet_bytes / 4 > 40 ? o->snippet_bytes / 4 : 40;
	/* and how many lines a snippet may take: 15 for the default 240 bytes */
	uint32_t max_lines = o->snippet_bytes / 16 > 3 ? o->snippet_bytes / 16 : 3;
	char buf[8192];
	if (o->explain && !o->vimgrep)
		put_receipt(r);
	for (size_t i = 0; i < n; i++) {
		const fathom_hit *h = fathom_results_hit(r, i);
		hit_lines v;
		hit_lines_find(&v, o, h);
		put_where(o, h, buf, sizeof buf);
		printf(o->color ? ":" CLI_SGR_LINE "%u" CLI_SGR_RESET ":" : ":%u:", v.lead);
		if (o->vimgrep) {
			printf("%zu:", v.lead_col);
			if (v.found) {
				size_t ls = line_begin(&v, v.ws);
				for (uint32_t l = line_of(&v, v.ws); l < v.lead; l++)
					ls = line_end(&v, ls) + 1;
				put_line(&v, ls, line_end(&v, ls), reach, o->color);
			} else {
				put_flat_snippet(h, o->color);
			}
			hit_lines_free(&v);
			continue;
		}
		/* the title, when it says more than the file's name */
		const char *title = h->title ? h->title : "";
		const char *where = h->path && *h->path ? h->path : h->doc_id;
		if (*title && strcmp(title, base_name(where)) != 0 && strcmp(title, where) != 0) {
			fputs(o->color ? " \033[1m" : " ", stdout);
			cli_put_name(stdout, title);
			fputs(o->color ? CLI_SGR_RESET : "", stdout);
			fputc(' ', stdout);
		}
		printf(" %.3f", h->score);
		if (h->url && *h->url) {
			fputs("  ", stdout);
			cli_put_name(stdout, h->url);
		}
		if (h->stale)   /* the snippet and lines are the indexed copy's */
			fputs("  " CLI_STALE_NOTE, stdout);
		fputc('\n', stdout);
		if (v.found)
			put_lines(&v, h, reach, max_lines, o->color);
		else if (h->snippet && *h->snippet)
			put_flat_snippet(h, o->color);
		if (o->explain)
			put_explain(h);
		hit_lines_free(&v);
		if (i + 1 < n)
			fputc('\n', stdout);
	}
	fathom_free(o->doc);
	free(o->doc_id);
	o->doc = NULL;
	o->doc_id = NULL;
}
