/*
 * glossary.c — alias groups, protected names and the curation queue.
 *
 * The payload the index stores (little-endian; docs/FORMAT.md):
 *
 *   u32 next id, u32 item count, then per item:
 *     u8 kind (0 group, 1 protected, 2 candidate), u8 status (0 pending,
 *     1 approved, 2 rejected), u8 source (0 curator, 1 acronym, 2 variant,
 *     3 neighbour),
 *     u8 reserved, u32 id, u64 count, u16 evidence length + bytes,
 *     u16 term count, per term u16 length + bytes (normalised)
 *
 * Every length is checked against what is left, so a damaged payload is
 * FATHOM_ECORRUPT, never a crash. Terms are normalised once, when they come
 * in (q_gloss_norm), so lookups compare bytes.
 */
#include <stdlib.h>
#include <strings.h>

#include "query/glossary.h"

/* ---- normal form and protection -------------------------------------------------- */

int q_gloss_norm(const char *s, size_t n, fbuf *out)
{
	fbuf t;
	fbuf_init(&t, 0);
	int rc = text_normalize(&t, s, n);
	if (!rc && t.err)
		rc = t.err;
	fbuf_reset(out);
	int space = 0;
	for (size_t i = 0; !rc && i < t.len; i++) {
		unsigned char c = t.data[i];
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '-' || c == '_') {
			space = out->len > 0;
			continue;
		}
		if (space)
			fbuf_putc(out, ' ');
		space = 0;
		fbuf_putc(out, c);
	}
	fbuf_free(&t);
	if (!rc && out->err)
		rc = out->err;
	if (!rc && out->len == 0)
		rc = fa_err(FATHOM_EINVAL, "\"%.*s\" has nothing to search for", (int)n, s);
	if (!rc && out->len > Q_GLOSS_MAX_TERM)
		rc = fa_err(FATHOM_ETOOBIG, "glossary term of %zu bytes (at most %d)", out->len,
		            Q_GLOSS_MAX_TERM);
	if (!rc) {
		fbuf_putc(out, '\0');   /* a C string in place; not counted */
		out->len--;
	}
	return rc;
}

static int ident_found(void *ctx, const text_ident *id)
{
	(void)id;
	*(int *)ctx = 1;
	return 1;
}

const char *q_gloss_protected(const q_glossary *g, const char *raw, size_t n)
{
	size_t upper = 0, lower = 0, digit = 0;
	int hump = 0, code = 0;
	for (size_t i = 0; i < n; i++) {
		char c = raw[i];
		if (c >= 'A' && c <= 'Z') {
			upper++;
			hump |= i > 0 && raw[i - 1] >= 'a' && raw[i - 1] <= 'z';
		} else if (c >= 'a' && c <= 'z') {
			lower++;
		} else if (c >= '0' && c <= '9') {
			digit++;
		} else if (c == '_' || c == '(' || c == ')' || c == '.' || c == ':') {
			code = 1;
		}
	}
	int id = 0;
	text_idents(raw, n, NULL, ident_found, &id);
	if (code || hump || id || (digit && (upper || lower)))
		return "a code identifier";
	if (upper >= 2 && lower == 0)
		return "an all-caps acronym";
	fbuf nb;
	fbuf_init(&nb, 0);
	const char *why = NULL;
	if (q_gloss_norm(raw, n, &nb) == 0) {
		for (size_t i = 0; i < g->n && !why; i++) {
			const q_gitem *it = &g->items[i];
			if (it->kind == QG_PROTECTED && it->nterms &&
			    strcmp(it->terms[0], (const char *)nb.data) == 0)
				why = "marked protected";
		}
	}
	fa_err_clear();
	fbuf_free(&nb);
	return why;
}

const q_gitem *q_gloss_group_of(const q_glossary *g, const char *norm, size_t n)
{
	for (size_t i = 0; i < g->n; i++) {
		const q_gitem *it = &g->items[i];
		if (it->kind != QG_GROUP)
			continue;
		for (uint32_t t = 0; t < it->nterms; t++)
			if (strlen(it->terms[t]) == n && memcmp(it->terms[t], norm, n) == 0)
				return it;
	}
	return NULL;
}

/* ---- items -------------------------------------------------------------------- */

static void item_free(q_gitem *it)
{
	for (uint32_t t = 0; t < it->nterms; t++)
		fa_free(it->terms[t]);
	fa_free(it->terms);
	fa_free(it->evidence);
	memset(it, 0, sizeof *it);
}

void q_gloss_free(q_glossary *g)
{
	for (size_t i = 0; i < g->n; i++)
		item_free(&g->items[i]);
	fa_free(g->items);
	memset(g, 0, sizeof *g);
}

static char *dup_n(const char *s, size_t n)
{
	char *d = fa_malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static q_gitem *new_item(q_glossary *g, int kind)
{
	if (g->n >= Q_GLOSS_MAX_ITEMS) {
		fa_err(FATHOM_ETOOBIG, "glossary holds %d items at most", Q_GLOSS_MAX_ITEMS);
		return NULL;
	}
	if (fa_grow((void **)&g->items, &g->cap, g->n + 1, sizeof *g->items)) {
		fa_err(FATHOM_ENOMEM, "glossary");
		return NULL;
	}
	q_gitem *it = &g->items[g->n++];
	memset(it, 0, sizeof *it);
	it->kind = (uint8_t)kind;
	it->id = ++g->next_id;
	return it;
}

static int item_add_term(q_gitem *it, const char *norm, size_t n)
{
	for (uint32_t t = 0; t < it->nterms; t++)
		if (strcmp(it->terms[t], norm) == 0)
			return 0;
	if (it->nterms >= Q_GLOSS_MAX_TERMS)
		return fa_err(FATHOM_ETOOBIG, "a group holds %d terms at most", Q_GLOSS_MAX_TERMS);
	char **nt = fa_realloc(it->terms, (it->nterms + 1) * sizeof *nt);
	if (!nt)
		return fa_err(FATHOM_ENOMEM, "glossary");
	it->terms = nt;
	if (!(it->terms[it->nterms] = dup_n(norm, n)))
		return fa_err(FATHOM_ENOMEM, "glossary");
	it->nterms++;
	return 0;
}

/* ---- the payload ------------------------------------------------------------------- */

typedef struct rd {
	const unsigned char *p, *end;
	int bad;
} rd;

static uint64_t rd_n(rd *r, size_t n)
{
	if ((size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static char *rd_str(rd *r, size_t max)
{
	size_t n = (size_t)rd_n(r, 2);
	/* the strings are C strings: a NUL inside one is damage (it would cut
	 * the string, and the glossary would not write back as it was read) */
	if (r->bad || n > max || (size_t)(r->end - r->p) < n || memchr(r->p, 0, n)) {
		r->bad = 1;
		return NULL;
	}
	char *s = dup_n((const char *)r->p, n);
	r->p += n;
	if (!s)
		r->bad = 2;
	return s;
}

int q_gloss_parse(q_glossary *g, const unsigned char *data, size_t len)
{
	memset(g, 0, sizeof *g);
	if (!data || len == 0)
		return 0;
	rd r = { data, data + len, 0 };
	g->next_id = (uint32_t)rd_n(&r, 4);
	uint64_t n = rd_n(&r, 4);
	if (n > Q_GLOSS_MAX_ITEMS)
		r.bad = 1;
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		if (fa_grow((void **)&g->items, &g->cap, g->n + 1, sizeof *g->items)) {
			r.bad = 2;
			break;
		}
		q_gitem *it = &g->items[g->n++];
		memset(it, 0, sizeof *it);
		it->kind = (uint8_t)rd_n(&r, 1);
		it->status = (uint8_t)rd_n(&r, 1);
		it->source = (uint8_t)rd_n(&r, 1);
		if (rd_n(&r, 1) != 0)   /* reserved, written 0 */
			r.bad = 1;
		it->id = (uint32_t)rd_n(&r, 4);
		it->count = rd_n(&r, 8);
		it->evidence = rd_str(&r, Q_GLOSS_MAX_EVIDENCE);
		uint64_t nt = rd_n(&r, 2);
		if (it->kind > QG_CANDIDATE || it->status > QG_REJECTED || it->source > QG_SRC_NEIGHBOUR ||
		    nt == 0 || nt > Q_GLOSS_MAX_TERMS || it->id == 0 || it->id > g->next_id)
			r.bad = r.bad ? r.bad : 1;
		if (!r.bad && !(it->terms = fa_calloc(nt, sizeof *it->terms)))
			r.bad = 2;
		for (uint64_t t = 0; t < nt && !r.bad; t++) {
			it->terms[t] = rd_str(&r, Q_GLOSS_MAX_TERM);
			it->nterms += it->terms[t] != NULL;
		}
	}
	if (!r.bad && r.p != r.end)
		r.bad = 1;
	if (r.bad) {
		q_gloss_free(g);
		return r.bad == 2 ? fa_err(FATHOM_ENOMEM, "glossary")
		                  : fa_err(FATHOM_ECORRUPT, "the glossary's contents are damaged");
	}
	return 0;
}

static void put_str(fbuf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > Q_GLOSS_MAX_EVIDENCE)
		n = text_utf8_floor(s, n, Q_GLOSS_MAX_EVIDENCE);
	fbuf_put_u16(b, (uint16_t)n);
	if (n)
		fbuf_append(b, s, n);
}

int q_gloss_serialize(const q_glossary *g, fbuf *out)
{
	fbuf_reset(out);
	fbuf_put_u32(out, g->next_id);
	fbuf_put_u32(out, (uint32_t)g->n);
	for (size_t i = 0; i < g->n; i++) {
		const q_gitem *it = &g->items[i];
		unsigned char head[4] = { it->kind, it->status, it->source, 0 };
		fbuf_append(out, head, 4);
		fbuf_put_u32(out, it->id);
		fbuf_put_u64(out, it->count);
		put_str(out, it->evidence);
		fbuf_put_u16(out, (uint16_t)it->nterms);
		for (uint32_t t = 0; t < it->nterms; t++)
			put_str(out, it->terms[t]);
	}
	return out->err;
}

int q_gloss_load(q_glossary *g, ix_index *ix)
{
	const unsigned char *d;
	size_t n;
	uint64_t v;
	ix_glossary(ix, &d, &n, &v);
	return q_gloss_parse(g, d, n);
}

int q_gloss_store(const q_glossary *g, ix_index *ix)
{
	fbuf b;
	fbuf_init(&b, 0);
	int rc = q_gloss_serialize(g, &b);
	if (!rc)
		rc = ix_glossary_stage(ix, b.data, b.len);
	fbuf_free(&b);
	return rc;
}

/* ---- operations ---------------------------------------------------------------------- */

static int find_group_index(const q_glossary *g, const char *norm)
{
	for (size_t i = 0; i < g->n; i++) {
		const q_gitem *it = &g->items[i];
		if (it->kind != QG_GROUP)
			continue;
		for (uint32_t t = 0; t < it->nterms; t++)
			if (strcmp(it->terms[t], norm) == 0)
				return (int)i;
	}
	return -1;
}

static void remove_item(q_glossary *g, size_t i)
{
	item_free(&g->items[i]);
	memmove(&g->items[i], &g->items[i + 1], (g->n - i - 1) * sizeof *g->items);
	g->n--;
}

int q_gloss_add(q_glossary *g, const char *const *terms, size_t n, int from_corpus, uint32_t *id)
{
	if (n < 2)
		return fa_err(FATHOM_EINVAL, "a group needs at least two terms");
	if (n > Q_GLOSS_MAX_TERMS)
		return fa_err(FATHOM_ETOOBIG, "a group holds %d terms at most", Q_GLOSS_MAX_TERMS);
	char *norm[Q_GLOSS_MAX_TERMS] = { 0 };
	fbuf b;
	fbuf_init(&b, 0);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *why = from_corpus ? NULL : q_gloss_protected(g, terms[i], strlen(terms[i]));
		if (why)
			rc = fa_err(FATHOM_EINVAL, "\"%s\" is %s: protected terms never join a group",
			            terms[i], why);
		else if (!(rc = q_gloss_norm(terms[i], strlen(terms[i]), &b)) &&
		         !(norm[i] = dup_n((const char *)b.data, b.len)))
			rc = fa_err(FATHOM_ENOMEM, "glossary");
	}
	fbuf_free(&b);
	size_t distinct = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		int dup = 0;
		for (size_t k = 0; k < i; k++)
			dup |= strcmp(norm[k], norm[i]) == 0;
		distinct += !dup;
	}
	if (!rc && distinct < 2)
		rc = fa_err(FATHOM_EINVAL, "a group needs at least two different terms (\"%s\" and "
		            "\"%s\" are the same once normalised)", terms[0], terms[1]);
	/* The new group absorbs every group that shares a term with it: the
	 * first such group takes the others' terms, and they go. */
	int target = -1;
	for (size_t i = 0; i < n && !rc && target < 0; i++)
		target = find_group_index(g, norm[i]);
	for (size_t i = 0; i < n && !rc && target >= 0; i++) {
		int gi;
		while (!rc && (gi = find_group_index(g, norm[i])) >= 0 && gi != target) {
			q_gitem *old = &g->items[gi];
			for (uint32_t t = 0; t < old->nterms && !rc; t++)
				rc = item_add_term(&g->items[target], old->terms[t], strlen(old->terms[t]));
			remove_item(g, (size_t)gi);
			if (gi < target)
				target--;
		}
	}
	q_gitem *grp = target >= 0 ? &g->items[target] : NULL;
	if (!rc && !grp && !(grp = new_item(g, QG_GROUP)))
		rc = g->n >= Q_GLOSS_MAX_ITEMS ? FATHOM_ETOOBIG : FATHOM_ENOMEM;
	for (size_t i = 0; i < n && !rc; i++)
		rc = item_add_term(grp, norm[i], strlen(norm[i]));
	if (!rc && id)
		*id = grp->id;
	for (size_t i = 0; i < n; i++)
		fa_free(norm[i]);
	return rc;
}

int q_gloss_remove(q_glossary *g, const char *what)
{
	char *end;
	unsigned long id = strtoul(what, &end, 10);
	if (*what && !*end) {
		for (size_t i = 0; i < g->n; i++) {
			if (g->items[i].id == id && g->items[i].kind != QG_CANDIDATE) {
				remove_item(g, i);
				return 0;
			}
		}
		return fa_err(FATHOM_ENOTFOUND, "no glossary group %lu", id);
	}
	fbuf b;
	fbuf_init(&b, 0);
	int rc = q_gloss_norm(what, strlen(what), &b);
	int gi = rc ? -1 : find_group_index(g, (const char *)b.data);
	if (!rc && gi < 0)
		rc = fa_err(FATHOM_ENOTFOUND, "\"%s\" is in no glossary group", what);
	if (!rc) {
		q_gitem *it = &g->items[gi];
		for (uint32_t t = 0; t < it->nterms; t++) {
			if (strcmp(it->terms[t], (const char *)b.data) == 0) {
				fa_free(it->terms[t]);
				it->terms[t] = it->terms[--it->nterms];
				break;
			}
		}
		if (it->nterms < 2)
			remove_item(g, (size_t)gi);
	}
	fbuf_free(&b);
	return rc;
}

int q_gloss_protect(q_glossary *g, const char *name, int on)
{
	fbuf b;
	fbuf_init(&b, 0);
	int rc = q_gloss_norm(name, strlen(name), &b);
	if (rc) {
		fbuf_free(&b);
		return rc;
	}
	const char *norm = (const char *)b.data;
	size_t found = g->n;
	for (size_t i = 0; i < g->n; i++)
		if (g->items[i].kind == QG_PROTECTED && strcmp(g->items[i].terms[0], norm) == 0)
			found = i;
	if (on && found == g->n) {
		if (find_group_index(g, norm) >= 0)
			rc = fa_err(FATHOM_EINVAL, "\"%s\" is in a glossary group: remove it first", name);
		q_gitem *it = rc ? NULL : new_item(g, QG_PROTECTED);
		if (!rc && !it)
			rc = FATHOM_ENOMEM;
		if (it)
			rc = item_add_term(it, norm, b.len);
	} else if (!on) {
		if (found == g->n)
			rc = fa_err(FATHOM_ENOTFOUND, "\"%s\" is not marked protected", name);
		else
			remove_item(g, found);
	}
	fbuf_free(&b);
	return rc;
}

int q_gloss_decide(q_glossary *g, uint32_t id, int approve)
{
	size_t i;
	for (i = 0; i < g->n; i++)
		if (g->items[i].id == id && g->items[i].kind == QG_CANDIDATE)
			break;
	if (i == g->n)
		return fa_err(FATHOM_ENOTFOUND, "no glossary candidate %u (see fathom glossary pending)", id);
	if (g->items[i].status != QG_PENDING)
		return fa_err(FATHOM_EINVAL, "candidate %u was already %s", id,
		              g->items[i].status == QG_APPROVED ? "approved" : "rejected");
	if (approve) {
		/* Copy the terms: adding may move the items array. */
		const char *terms[Q_GLOSS_MAX_TERMS];
		size_t n = g->items[i].nterms;
		for (size_t t = 0; t < n; t++)
			terms[t] = g->items[i].terms[t];
		char *copy[Q_GLOSS_MAX_TERMS] = { 0 };
		int rc = 0;
		for (size_t t = 0; t < n && !rc; t++)
			if (!(copy[t] = dup_n(terms[t], strlen(terms[t]))))
				rc = fa_err(FATHOM_ENOMEM, "glossary");
		if (!rc)
			rc = q_gloss_add(g, (const char *const *)copy, n, 1, NULL);
		for (size_t t = 0; t < n; t++)
			fa_free(copy[t]);
		if (rc)
			return rc;
		for (i = 0; i < g->n; i++)
			if (g->items[i].id == id)
				break;
	}
	g->items[i].status = approve ? QG_APPROVED : QG_REJECTED;
	return 0;
}

/* ---- proposing candidates from the corpus -------------------------------------------- */

/* Is this set of terms already grouped together, queued or rejected? */
static int known(const q_glossary *g, char *const *terms, size_t n)
{
	for (size_t i = 0; i < g->n; i++) {
		const q_gitem *it = &g->items[i];
		if (it->kind == QG_PROTECTED)
			continue;
		size_t hit = 0;
		for (size_t k = 0; k < n; k++)
			for (uint32_t t = 0; t < it->nterms; t++)
				hit += strcmp(it->terms[t], terms[k]) == 0;
		if (hit >= n)
			return 1;
	}
	return 0;
}

static int propose(q_glossary *g, int source, char *const *terms, size_t n, const char *evidence,
                   size_t *added)
{
	for (size_t i = 0; i < g->n; i++) {
		q_gitem *it = &g->items[i];
		if (it->kind != QG_CANDIDATE || it->nterms != n)
			continue;
		size_t same = 0;
		for (size_t k = 0; k < n; k++)
			same += strcmp(it->terms[k], terms[k]) == 0;
		if (same == n) {
			it->count += it->status == QG_PENDING;
			return 0;
		}
	}
	if (known(g, terms, n))
		return 0;
	q_gitem *it = new_item(g, QG_CANDIDATE);
	if (!it)
		return FATHOM_ENOMEM;
	it->source = (uint8_t)source;
	it->count = 1;
	size_t el = strlen(evidence);
	if (el > Q_GLOSS_MAX_EVIDENCE)
		el = text_utf8_floor(evidence, el, Q_GLOSS_MAX_EVIDENCE);
	if (!(it->evidence = dup_n(evidence, el)))
		return fa_err(FATHOM_ENOMEM, "glossary");
	for (size_t k = 0; k < n; k++) {
		int rc = item_add_term(it, terms[k], strlen(terms[k]));
		if (rc)
			return rc;
	}
	(*added)++;
	return 0;
}

static int is_small_word(const char *w, size_t n)
{
	static const char *const small[] = { "of", "and", "the", "for", "in", "on", "to", "a", "an",
	                                     "by", "with", NULL };
	for (size_t i = 0; small[i]; i++)
		if (strlen(small[i]) == n && strncasecmp(small[i], w, n) == 0)
			return 1;
	return 0;
}

/* "Transport Layer Security (TLS)": the words before the parenthesis whose
 * initials spell the acronym (small words like "of" may sit between). */
static int scan_acronyms(q_glossary *g, const char *text, size_t len, const char *doc, size_t *added)
{
	fbuf a, b;
	fbuf_init(&a, 0);
	fbuf_init(&b, 0);
	int rc = 0;
	for (size_t i = 1; i + 3 < len && !rc; i++) {
		if (text[i] != '(' || text[i - 1] != ' ')
			continue;
		size_t j = i + 1;
		while (j < len && text[j] >= 'A' && text[j] <= 'Z' && j - i <= 8)
			j++;
		size_t al = j - i - 1;
		if (al < 2 || al > 8 || j >= len || text[j] != ')')
			continue;
		const char *acr = text + i + 1;
		/* Walk back over words, matching initials from the last letter. */
		size_t k = i - 1, need = al, start = i;
		int words = 0;
		while (need > 0 && words < (int)al * 2 + 2) {
			while (k > 0 && text[k - 1] == ' ')
				k--;
			size_t we = k;
			while (k > 0 && ((text[k - 1] >= 'a' && text[k - 1] <= 'z') ||
			                 (text[k - 1] >= 'A' && text[k - 1] <= 'Z') || text[k - 1] == '-'))
				k--;
			if (k == we)
				break;
			words++;
			char c = text[k];
			if ((c | 0x20) == (acr[need - 1] | 0x20)) {
				need--;
				start = k;
			} else if (!is_small_word(text + k, we - k)) {
				break;
			}
		}
		if (need)
			continue;
		char *terms[2];
		if (q_gloss_norm(acr, al, &a) != 0 || q_gloss_norm(text + start, i - 1 - start, &b) != 0) {
			fa_err_clear();   /* too long a definition: not a candidate */
			continue;
		}
		terms[0] = (char *)a.data;
		terms[1] = (char *)b.data;
		if (strcmp(terms[0], terms[1]) != 0)
			rc = propose(g, QG_SRC_ACRONYM, terms, 2, doc, added);
	}
	fbuf_free(&a);
	fbuf_free(&b);
	return rc;
}

int q_gloss_propose_pair(q_glossary *g, int source, const char *a, const char *b,
                         const char *evidence, size_t *added)
{
	fbuf x, y;
	fbuf_init(&x, 0);
	fbuf_init(&y, 0);
	int rc = q_gloss_norm(a, strlen(a), &x);
	if (!rc)
		rc = q_gloss_norm(b, strlen(b), &y);
	if (!rc && x.len && y.len && strcmp((char *)x.data, (char *)y.data) != 0) {
		int swap = strcmp((char *)x.data, (char *)y.data) > 0;
		char *terms[2] = { (char *)(swap ? y.data : x.data), (char *)(swap ? x.data : y.data) };
		rc = propose(g, source, terms, 2, evidence, added);
	}
	fbuf_free(&x);
	fbuf_free(&y);
	return rc;
}

typedef struct variant_walk {
	q_glossary *g;
	ix_index *ix;
	size_t *added;
	int err;
} variant_walk;

/* "sign-in" indexed whole, and "signin" indexed too: spelling variants. */
static int visit_term(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	(void)ti;
	variant_walk *v = ctx;
	if (len < 3 || len > 40 || !memchr(term, '-', len) || term[0] == '-' || term[len - 1] == '-')
		return 0;
	char joined[48];
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		if (term[i] == '-')
			continue;
		if (!(term[i] >= 'a' && term[i] <= 'z'))
			return 0;   /* letters and hyphens only: not a code token */
		joined[n++] = term[i];
	}
	ix_term_info other;
	int found = 0;
	for (size_t s = 0; s < ix_nsegments(v->ix) && !found; s++) {
		int rc = seg_term(ix_segment_at(v->ix, s), joined, n, &other);
		if (rc && rc != FATHOM_ENOTFOUND)
			return v->err = rc;
		found = rc == 0;
	}
	if (!found)
		return 0;
	fbuf a;
	fbuf_init(&a, 0);
	int rc = q_gloss_norm(term, len, &a);
	if (!rc) {
		joined[n] = '\0';
		char *terms[2] = { (char *)a.data, joined };
		rc = propose(v->g, QG_SRC_VARIANT, terms, 2, "the index's vocabulary", v->added);
	}
	fbuf_free(&a);
	return rc ? (v->err = rc) : 0;
}

int q_gloss_propose(q_glossary *g, ix_index *ix, text_analyzer *an, size_t *added)
{
	(void)an;
	*added = 0;
	/* A scan counts afresh what is still waiting. */
	for (size_t i = 0; i < g->n; i++)
		if (g->items[i].kind == QG_CANDIDATE && g->items[i].status == QG_PENDING)
			g->items[i].count = 0;
	ix_text_window text;   /* whole runs of frames: each decompressed once */
	ix_text_window_init(&text);
	int rc = 0;
	for (size_t s = 0; s < ix_nsegments(ix) && !rc; s++) {
		ix_segment *seg = ix_segment_at(ix, s);
		for (uint32_t d = 0; d < seg_ndocs(seg) && !rc; d++) {
			ix_doc_info di;
			if (seg_doc_is_deleted(seg, d))
				continue;
			if ((rc = seg_doc(seg, d, &di)))
				break;
			const char *t;
			size_t len;
			if ((rc = seg_doc_text_window(seg, d, &text, &t, &len)))
				break;
			rc = scan_acronyms(g, t, len, di.key, added);
		}
	}
	ix_text_window_free(&text);
	variant_walk v = { g, ix, added, 0 };
	for (size_t s = 0; s < ix_nsegments(ix) && !rc; s++) {
		rc = seg_terms(ix_segment_at(ix, s), NULL, 0, visit_term, &v);
		if (v.err)
			rc = v.err;
	}
	return rc;
}
