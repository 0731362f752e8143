/*
 * results_json.c — fathom_results_json(): search results as JSON, the one
 * serializer behind `fathom search --json`, POST /search and the MCP
 * search tool (include/fathom.h gives the shape, docs/QUERY.md each
 * member). It reads the results through the public accessors alone and
 * writes into one bounded buffer, so a failed allocation leaves nothing
 * behind and is FATHOM_ENOMEM.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"

/* A JSON string of n bytes: escapes, and U+FFFD for each invalid UTF-8
 * sequence (a path or title read from disk may hold any bytes). Also the
 * settings' serializer's (settings.c). */
void api_json_strn(fbuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	if (!s)
		n = 0;
	fbuf_putc(b, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c >= 0x80) {
			size_t k = text_utf8_seq_len(p + i, n - i);
			if (k)
				fbuf_append(b, p + i, k);
			else
				fbuf_puts(b, "\xef\xbf\xbd");
			i += k ? k : 1;
			continue;
		}
		switch (c) {
		case '"': fbuf_puts(b, "\\\""); break;
		case '\\': fbuf_puts(b, "\\\\"); break;
		case '\n': fbuf_puts(b, "\\n"); break;
		case '\r': fbuf_puts(b, "\\r"); break;
		case '\t': fbuf_puts(b, "\\t"); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fbuf_printf(b, "\\u%04x", c);
			else
				fbuf_putc(b, c);
		}
		i++;
	}
	fbuf_putc(b, '"');
}

static void put_str(fbuf *b, const char *s)
{
	api_json_strn(b, s, s ? strlen(s) : 0);
}

/* The shortest decimal that reads back as the same double (15 digits
 * usually do; 17 always do), always with a point or an exponent so that
 * a typed reader sees a real ("0.0", not "0"). JSON has no NaN or
 * infinity: 0.0. */
static void put_num(fbuf *b, double v)
{
	char t[48];
	if (!isfinite(v))
		v = 0;
	snprintf(t, sizeof t, "%.15g", v);
	if (strtod(t, NULL) != v)
		snprintf(t, sizeof t, "%.17g", v);
	fbuf_puts(b, t);
	if (!strpbrk(t, ".e"))
		fbuf_puts(b, ".0");
}

static void put_key(fbuf *b, const char *key, int first)
{
	if (!first)
		fbuf_putc(b, ',');
	put_str(b, key);
	fbuf_putc(b, ':');
}

static const char *tf(int v)
{
	return v ? "true" : "false";
}

/* One hit. The only place that reads fathom_hit's scoring members: a new
 * hit layout is adapted here alone. */
static void put_hit(fbuf *b, const fathom_hit *h, size_t rank)
{
	fbuf_printf(b, "{\"rank\":%zu", rank);
	put_key(b, "id", 0);
	put_str(b, h->doc_id);
	fbuf_printf(b, ",\"chunk_id\":%llu,\"chunk\":%u", (unsigned long long)h->chunk_id,
	            h->chunk_order);
	put_key(b, "path", 0);
	put_str(b, h->path);
	put_key(b, "title", 0);
	put_str(b, h->title);
	put_key(b, "url", 0);
	put_str(b, h->url);
	fbuf_printf(b, ",\"lines\":[%u,%u],\"bytes\":[%llu,%llu],\"score\":", h->line_start,
	            h->line_end, (unsigned long long)h->byte_start, (unsigned long long)h->byte_end);
	put_num(b, h->score);
	/* every field, 0 where the hit has no keyword receipt (a grep hit) */
	fbuf_puts(b, ",\"score_parts\":{");
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		put_key(b, fathom_field_name(f), f == 0);
		put_num(b, (uint32_t)f < h->n_fields ? h->field_score[f] : 0.0);
	}
	put_key(b, "bonus", 0);
	put_num(b, h->bonus);
	fbuf_puts(b, "},\"sources\":[");
	for (uint32_t j = 0; j < h->n_sources; j++) {
		const char *name = fathom_source_name(h->sources[j].source);
		fbuf_puts(b, j ? ",{\"source\":" : "{\"source\":");
		put_str(b, name ? name : "unknown");
		fbuf_puts(b, ",\"score\":");
		put_num(b, h->sources[j].score);
		fbuf_printf(b, ",\"rank\":%u}", h->sources[j].rank);
	}
	fbuf_puts(b, "],\"matched\":{");
	int first = 1;
	for (uint32_t f = 0; f < h->n_fields && f < FATHOM_NFIELDS; f++) {
		if (!h->n_matched[f])
			continue;
		put_key(b, fathom_field_name((int)f), first);
		first = 0;
		fbuf_putc(b, '[');
		for (uint32_t j = 0; j < h->n_matched[f]; j++) {
			if (j)
				fbuf_putc(b, ',');
			put_str(b, h->matched[f][j]);
		}
		fbuf_putc(b, ']');
	}
	fbuf_puts(b, "},\"missing\":[");
	for (uint32_t j = 0; j < h->n_missing; j++) {
		if (j)
			fbuf_putc(b, ',');
		put_str(b, h->missing[j]);
	}
	fbuf_putc(b, ']');
	put_key(b, "snippet", 0);
	put_str(b, h->snippet);
	fbuf_puts(b, ",\"highlights\":[");
	for (uint32_t j = 0; j < h->n_highlights; j++)
		fbuf_printf(b, "%s[%u,%u]", j ? "," : "", h->highlights[j].start, h->highlights[j].len);
	fbuf_puts(b, "],\"match_lines\":[");
	for (uint32_t j = 0; j < h->n_match_lines; j++)
		fbuf_printf(b, "%s%u", j ? "," : "", h->match_lines[j]);
	fbuf_putc(b, ']');
	/* as fathom grep marks a file: the text shown is the indexed copy */
	if (h->stale)
		fbuf_puts(b, ",\"changed_since_indexing\":true");
	fbuf_putc(b, '}');
}

/* How the query was read: the receipt. */
/* "route": the route stage's decision (fathom_route_receipt). */
static void put_route(fbuf *b, const fathom_route_receipt *rt)
{
	if (!rt)
		return;
	put_key(b, "route", 0);
	fbuf_puts(b, "{\"shape\":");
	put_str(b, fathom_shape_name(rt->shape));
	put_key(b, "mode", 0);
	put_str(b, fathom_mode_name(rt->mode));
	put_key(b, "mode_asked", 0);
	put_str(b, fathom_mode_name(rt->mode_asked));
	if (rt->fusion >= 0) {
		put_key(b, "fusion", 0);
		put_str(b, fathom_fusion_name(rt->fusion));
		put_key(b, "alpha", 0);
		put_num(b, rt->alpha);
	}
	fbuf_printf(b, ",\"k\":%u,\"fetch\":%u,\"sources\":[", rt->k, rt->fetch);
	int first = 1;
	for (int s = 0; s < 32; s++) {
		const char *name = fathom_source_name(s);
		if (!((rt->sources >> s) & 1) || !name)
			continue;
		if (!first)
			fbuf_putc(b, ',');
		put_str(b, name);
		first = 0;
	}
	fbuf_putc(b, ']');
	put_key(b, "embedder", 0);
	put_str(b, rt->embedder);
	if ((rt->sources >> FATHOM_SOURCE_VECTOR) & 1)
		fbuf_printf(b, ",\"vector_scored\":%llu,\"vector_graphs\":%u,\"vector_missing\":%llu",
		            (unsigned long long)rt->vector_scored, rt->vector_graphs,
		            (unsigned long long)rt->vector_missing);
	fbuf_putc(b, '}');
}

static void put_receipt(fbuf *b, const fathom_results *r)
{
	fbuf_puts(b, "{\"parsed\":");
	put_str(b, fathom_results_parsed(r));
	if (*fathom_results_literal(r)) {
		put_key(b, "read_literally", 0);
		put_str(b, fathom_results_literal(r));
	}
	put_key(b, "filters", 0);
	put_str(b, fathom_results_filters(r));
	put_route(b, fathom_results_route(r));
	fbuf_puts(b, ",\"terms\":[");
	for (size_t i = 0; i < fathom_results_nterms(r); i++) {
		int req = 0;
		const char *t = fathom_results_term(r, i, &req);
		fbuf_puts(b, i ? ",{\"term\":" : "{\"term\":");
		put_str(b, t);
		fbuf_printf(b, ",\"required\":%s,\"negated\":%s}", tf(req),
		            tf(fathom_results_term_negated(r, i)));
	}
	fbuf_puts(b, "],\"identifiers\":[");
	for (size_t i = 0; i < fathom_results_nidents(r); i++) {
		const fathom_ident_receipt *x = fathom_results_ident(r, i);
		fbuf_puts(b, i ? ",{\"text\":" : "{\"text\":");
		put_str(b, x->text);
		put_key(b, "key", 0);
		put_str(b, x->key);
		put_key(b, "category", 0);
		put_str(b, x->category);
		fbuf_printf(b, ",\"filter\":%s,\"chunks\":%llu}", tf(x->applied),
		            (unsigned long long)x->chunks);
	}
	fbuf_puts(b, "],\"glossary\":[");
	for (size_t i = 0; i < fathom_results_nexpansions(r); i++) {
		const fathom_expansion *x = fathom_results_expansion(r, i);
		fbuf_puts(b, i ? ",{\"text\":" : "{\"text\":");
		put_str(b, x->text);
		fbuf_printf(b, ",\"group\":%u,\"aliases\":[", x->group);
		for (size_t k = 0; k < x->n_aliases; k++) {
			if (k)
				fbuf_putc(b, ',');
			put_str(b, x->aliases[k]);
		}
		fbuf_puts(b, "]}");
	}
	fbuf_puts(b, "]}");
}

int fathom_results_json(char **out, size_t *len, const fathom_results *r,
                        const fathom_json_opts *opts)
{
	fathom_json_opts def = FATHOM_JSON_OPTS_INIT;
	fa_err_clear();
	if (!out)
		return fa_err(FATHOM_EINVAL, "no output for the JSON");
	*out = NULL;
	if (len)
		*len = 0;
	if (!r)
		return fa_err(FATHOM_EINVAL, "no results");
	if (!opts)
		opts = &def;
	int rc = fa_struct_check(FA_JSON_OPTS, opts);
	if (rc)
		return rc;
	fbuf b;
	fbuf_init(&b, 0);
	size_t n = fathom_results_count(r);
	fbuf_putc(&b, '{');
	if (opts->query) {
		put_key(&b, "query", 1);
		put_str(&b, opts->query);
		fbuf_putc(&b, ',');
	}
	fbuf_printf(&b, "\"count\":%zu", n);
	if (n == 0) {
		put_key(&b, "why", 0);
		put_str(&b, fathom_results_why(r));
	}
	fbuf_puts(&b, ",\"results\":[");
	for (size_t i = 0; i < n && !b.err; i++) {
		if (i)
			fbuf_putc(&b, ',');
		put_hit(&b, fathom_results_hit(r, i), i + 1);
	}
	fbuf_puts(&b, "],\"receipt\":");
	put_receipt(&b, r);
	fbuf_putc(&b, '}');
	if (b.err) {   /* fa_err has said why (out of memory) */
		rc = b.err;
		fbuf_free(&b);
		return rc;
	}
	*out = fbuf_detach(&b, len);
	return *out ? 0 : fa_err(FATHOM_ENOMEM, "the results as JSON");
}
