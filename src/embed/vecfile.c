/*
 * vecfile.c — pretrained word vectors from GloVe, word2vec (text and
 * binary) and fastText .vec files (formats in embed.h).
 *
 * The whole file is parsed from memory with every read bounded by its end:
 * a line is the bytes up to '\n' (a '\r' before it dropped), tokens are
 * separated by spaces or tabs, and a number is at most 63 bytes, copied out
 * and read by strtof (the library never sets a locale). Rows grow by
 * doubling; the words go to one pool; a hash table built at the end finds
 * them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

typedef struct vparse {
	const char *p, *end;    /* what is left to read */
	const char *name;
	uint64_t at;            /* line (text) or entry (binary) being read, from 1 */
	em_vectors *v;
	size_t cap;             /* rows allocated */
	size_t pool_len, pool_cap;
} vparse;

#define VP_NUM 64   /* bytes of a number's token, NUL included */

static int vp_err(const vparse *ps, int code, const char *what)
{
	return fa_err(code, "%s:%llu: %s", ps->name, (unsigned long long)ps->at, what);
}

/* The next line [*ls, *le) (without '\n' or a '\r' before it); 0 at the end. */
static int next_line(vparse *ps, const char **ls, const char **le)
{
	if (ps->p >= ps->end)
		return 0;
	const char *s = ps->p, *nl = memchr(s, '\n', (size_t)(ps->end - s));
	const char *e = nl ? nl : ps->end;
	ps->p = nl ? nl + 1 : ps->end;
	if (e > s && e[-1] == '\r')
		e--;
	*ls = s;
	*le = e;
	return 1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The next token of [*s, e): [*ts, *te); 0 when none is left. */
static int next_token(const char **s, const char *e, const char **ts, const char **te)
{
	const char *p = *s;
	while (p < e && is_blank(*p))
		p++;
	if (p == e)
		return 0;
	*ts = p;
	while (p < e && !is_blank(*p))
		p++;
	*te = p;
	*s = p;
	return 1;
}

static int parse_float(const char *ts, const char *te, float *out)
{
	char buf[VP_NUM];
	size_t n = (size_t)(te - ts);
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, ts, n);
	buf[n] = '\0';
	char *end;
	float f = strtof(buf, &end);
	if (end != buf + n || !isfinite(f))
		return -1;
	*out = f;
	return 0;
}

/* Parse an unsigned decimal of [ts, te) no larger than max. */
static int parse_count(const char *ts, const char *te, uint64_t max, uint64_t *out)
{
	uint64_t x = 0;
	if (ts == te)
		return -1;
	for (const char *p = ts; p < te; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
		if (x > max)
			return -1;
	}
	*out = x;
	return 0;
}

/* A new row for word [w, w + wlen): its values go to *row. */
static int add_row(vparse *ps, const char *w, size_t wlen, float **row)
{
	em_vectors *v = ps->v;
	if (wlen == 0)
		return vp_err(ps, FATHOM_ESYNTAX, "an empty word");
	if (wlen > EM_MAX_WORD)
		return vp_err(ps, FATHOM_ETOOBIG, "a word longer than 512 bytes");
	if (memchr(w, '\0', wlen))
		return vp_err(ps, FATHOM_ESYNTAX, "a NUL byte in a word");
	if (v->n >= EM_MAX_WORDS)
		return vp_err(ps, FATHOM_ETOOBIG, "more than 16,777,216 words");
	if (v->n == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 1024;
		float *nv = fa_realloc(v->v, cap * v->dim * sizeof *nv);
		if (!nv)
			return fa_err(FATHOM_ENOMEM, "%s: vectors of %zu words", ps->name, cap);
		v->v = nv;
		uint32_t *nw = fa_realloc(v->word, cap * sizeof *nw);
		if (!nw)
			return fa_err(FATHOM_ENOMEM, "%s: vectors of %zu words", ps->name, cap);
		v->word = nw;
		ps->cap = cap;
	}
	if (ps->pool_len + wlen + 1 > ps->pool_cap) {
		size_t cap = ps->pool_cap ? ps->pool_cap * 2 : 16384;
		while (cap < ps->pool_len + wlen + 1)
			cap *= 2;
		if (cap > UINT32_MAX)
			return vp_err(ps, FATHOM_ETOOBIG, "words past 4 GiB in all");
		char *np = fa_realloc(v->pool, cap);
		if (!np)
			return fa_err(FATHOM_ENOMEM, "%s: words", ps->name);
		v->pool = np;
		ps->pool_cap = cap;
	}
	v->word[v->n] = (uint32_t)ps->pool_len;
	memcpy(v->pool + ps->pool_len, w, wlen);
	v->pool[ps->pool_len + wlen] = '\0';
	ps->pool_len += wlen + 1;
	*row = v->v + (size_t)v->n * v->dim;
	v->n++;
	return 0;
}

/* One text entry, [s, e): a word and exactly dim values. */
static int text_entry(vparse *ps, const char *s, const char *e)
{
	const char *ts, *te;
	if (!next_token(&s, e, &ts, &te))
		return vp_err(ps, FATHOM_ESYNTAX, "an empty line");
	float *row;
	int rc = add_row(ps, ts, (size_t)(te - ts), &row);
	if (rc)
		return rc;
	for (uint32_t i = 0; i < ps->v->dim; i++) {
		if (!next_token(&s, e, &ts, &te))
			return vp_err(ps, FATHOM_ESYNTAX, "fewer values than the dimension");
		if (parse_float(ts, te, &row[i]))
			return vp_err(ps, FATHOM_ESYNTAX, "a value that is not a finite number");
	}
	if (next_token(&s, e, &ts, &te))
		return vp_err(ps, FATHOM_ESYNTAX, "more values than the dimension");
	return 0;
}

/* The rest is blank lines only. */
static int only_blank_lines(vparse *ps)
{
	const char *ls, *le, *ts, *te;
	while (next_line(ps, &ls, &le)) {
		ps->at++;
		if (next_token(&ls, le, &ts, &te))
			return 0;
	}
	return 1;
}

static int parse_glove(vparse *ps, const char *first, const char *first_end)
{
	/* the dimension: the first line's tokens after the word */
	const char *s = first, *ts, *te;
	uint32_t dim = 0;
	if (!next_token(&s, first_end, &ts, &te))
		return vp_err(ps, FATHOM_ESYNTAX, "an empty first line");
	while (next_token(&s, first_end, &ts, &te))
		if (++dim > EM_MAX_DIM)
			return vp_err(ps, FATHOM_ETOOBIG, "more than 4096 values a vector");
	if (dim == 0)
		return vp_err(ps, FATHOM_ESYNTAX, "a word without values");
	ps->v->dim = dim;
	ps->v->format = EM_VEC_GLOVE;
	int rc = text_entry(ps, first, first_end);
	const char *ls, *le;
	while (!rc && next_line(ps, &ls, &le)) {
		ps->at++;
		s = ls;
		if (!next_token(&s, le, &ts, &te)) {
			uint64_t blank = ps->at;
			if (only_blank_lines(ps))
				break;
			ps->at = blank;
			return vp_err(ps, FATHOM_ESYNTAX, "an empty line");
		}
		rc = text_entry(ps, ls, le);
	}
	return rc;
}

static int parse_w2v_text(vparse *ps, uint64_t n)
{
	const char *ls, *le;
	ps->v->format = EM_VEC_W2V_TEXT;
	for (uint64_t i = 0; i < n; i++) {
		if (!next_line(ps, &ls, &le)) {
			ps->at++;
			return vp_err(ps, FATHOM_ESYNTAX, "fewer words than the header says");
		}
		ps->at++;
		int rc = text_entry(ps, ls, le);
		if (rc)
			return rc;
	}
	if (!only_blank_lines(ps))
		return vp_err(ps, FATHOM_ESYNTAX, "more words than the header says");
	return 0;
}

static int parse_w2v_bin(vparse *ps, uint64_t n)
{
	em_vectors *v = ps->v;
	v->format = EM_VEC_W2V_BIN;
	size_t bytes = (size_t)v->dim * 4;
	for (uint64_t i = 0; i < n; i++) {
		ps->at = i + 1;
		while (ps->p < ps->end && (*ps->p == '\n' || *ps->p == '\r'))
			ps->p++;
		const char *w = ps->p;
		size_t room = (size_t)(ps->end - w);
		const char *sp = memchr(w, ' ', room < EM_MAX_WORD + 1 ? room : EM_MAX_WORD + 1);
		if (!sp) {
			if (room == 0)
				return vp_err(ps, FATHOM_ESYNTAX, "fewer words than the header says");
			return vp_err(ps, room > EM_MAX_WORD ? FATHOM_ETOOBIG : FATHOM_ESYNTAX,
			              room > EM_MAX_WORD ? "a word longer than 512 bytes"
			                                 : "a word without its vector (the file ends)");
		}
		float *row;
		int rc = add_row(ps, w, (size_t)(sp - w), &row);
		if (rc)
			return rc;
		const char *q = sp + 1;
		if ((size_t)(ps->end - q) < bytes)
			return vp_err(ps, FATHOM_ESYNTAX, "a vector cut short (the file ends)");
		for (uint32_t k = 0; k < v->dim; k++) {
			uint32_t u = fa_load32(q + 4 * (size_t)k);
			float f;
			memcpy(&f, &u, sizeof f);
			if (!isfinite(f))
				return vp_err(ps, FATHOM_ESYNTAX, "a value that is not a finite number");
			row[k] = f;
		}
		ps->p = q + bytes;
	}
	while (ps->p < ps->end && (*ps->p == '\n' || *ps->p == '\r' || is_blank(*ps->p)))
		ps->p++;
	if (ps->p < ps->end) {
		ps->at = n + 1;
		return vp_err(ps, FATHOM_ESYNTAX, "more data than the header's words");
	}
	return 0;
}

int em_vectors_index(em_vectors *v, uint32_t *first_dup)
{
	uint32_t ns = 16;
	while (ns < 2 * (uint64_t)v->n)
		ns *= 2;
	fa_free(v->slot);
	v->nslot = 0;
	v->dups = 0;
	*first_dup = UINT32_MAX;
	v->slot = fa_calloc(ns, sizeof *v->slot);
	if (!v->slot)
		return fa_err(FATHOM_ENOMEM, "word table of %u words", v->n);
	v->nslot = ns;
	for (uint32_t i = 0; i < v->n; i++) {
		const char *w = em_vectors_word(v, i);
		size_t len = strlen(w);
		if (em_vectors_find(v, w, len) >= 0) {
			if (!v->dups++)   /* the first keeps the word */
				*first_dup = i;
			continue;
		}
		uint32_t h = (uint32_t)fa_hash64(w, len, 0) & (ns - 1);
		while (v->slot[h])
			h = (h + 1) & (ns - 1);
		v->slot[h] = i + 1;
	}
	return 0;
}

int em_vectors_parse(em_vectors **out, const char *data, size_t len, int format,
                     const char *name)
{
	*out = NULL;
	if (format < EM_VEC_AUTO || format > EM_VEC_W2V_BIN)
		return fa_err(FATHOM_EINVAL, "unknown word vector format %d", format);
	if (len > EM_MAX_FILE)
		return fa_err(FATHOM_ETOOBIG, "%s: a vector file over 16 GiB", name);
	em_vectors *v = fa_malloc(sizeof *v);
	if (!v)
		return fa_err(FATHOM_ENOMEM, "word vectors");
	memset(v, 0, sizeof *v);
	vparse ps = { data, data + len, name, 1, v, 0, 0, 0 };
	if (len >= 3 && memcmp(data, "\xef\xbb\xbf", 3) == 0)
		ps.p += 3;   /* a UTF-8 byte order mark */
	const char *ls, *le, *ts, *te, *s;
	int rc = 0;
	if (!next_line(&ps, &ls, &le)) {
		rc = vp_err(&ps, FATHOM_ESYNTAX, "an empty file");
		goto done;
	}
	/* a header: exactly two counts */
	uint64_t n = 0, dim = 0;
	int header = 0;
	s = ls;
	if (next_token(&s, le, &ts, &te) && !parse_count(ts, te, UINT64_MAX / 16, &n) &&
	    next_token(&s, le, &ts, &te) && !parse_count(ts, te, UINT64_MAX / 16, &dim) &&
	    !next_token(&s, le, &ts, &te))
		header = 1;
	if (format == EM_VEC_GLOVE || (format == EM_VEC_AUTO && !header)) {
		rc = parse_glove(&ps, ls, le);
		goto done;
	}
	if (!header) {
		rc = vp_err(&ps, FATHOM_ESYNTAX, "no header \"words dimension\"");
		goto done;
	}
	if (dim == 0 || dim > EM_MAX_DIM) {
		rc = vp_err(&ps, dim ? FATHOM_ETOOBIG : FATHOM_ESYNTAX,
		            dim ? "more than 4096 values a vector" : "a dimension of 0");
		goto done;
	}
	if (n > EM_MAX_WORDS) {
		rc = vp_err(&ps, FATHOM_ETOOBIG, "more than 16,777,216 words");
		goto done;
	}
	v->dim = (uint32_t)dim;
	if (format == EM_VEC_AUTO) {
		/* text when the first entry reads as a text line */
		vparse probe = ps;
		format = EM_VEC_W2V_BIN;
		if (n == 0) {
			format = EM_VEC_W2V_TEXT;
		} else if (next_line(&probe, &ls, &le)) {
			s = ls;
			uint32_t k = 0;
			int ok = next_token(&s, le, &ts, &te) && !memchr(ls, '\0', (size_t)(le - ls));
			float f;
			while (ok && next_token(&s, le, &ts, &te) && k <= v->dim)
				ok = !parse_float(ts, te, &f) && ++k;
			if (ok && k == v->dim)
				format = EM_VEC_W2V_TEXT;
		}
	}
	rc = format == EM_VEC_W2V_TEXT ? parse_w2v_text(&ps, n) : parse_w2v_bin(&ps, n);
done:
	if (!rc) {
		uint32_t first_dup;   /* a file's later spellings are dropped, counted */
		rc = em_vectors_index(v, &first_dup);
	}
	if (rc) {
		em_vectors_free(v);
		return rc;
	}
	*out = v;
	return 0;
}

int em_vectors_read(em_vectors **out, const char *path, int format)
{
	char *data;
	size_t len;
	*out = NULL;
	int rc = fa_read_file(&data, &len, path, EM_MAX_FILE);
	if (rc)
		return rc;
	rc = em_vectors_parse(out, data, len, format, path);
	fa_free(data);
	return rc;
}

void em_vectors_free(em_vectors *v)
{
	if (!v)
		return;
	fa_free(v->pool);
	fa_free(v->word);
	fa_free(v->v);
	fa_free(v->slot);
	fa_free(v);
}

int64_t em_vectors_find(const em_vectors *v, const char *w, size_t len)
{
	if (!v->nslot)
		return -1;
	uint32_t h = (uint32_t)fa_hash64(w, len, 0) & (v->nslot - 1);
	for (uint32_t s; (s = v->slot[h]) != 0; h = (h + 1) & (v->nslot - 1)) {
		const char *x = em_vectors_word(v, s - 1);
		if (strlen(x) == len && memcmp(x, w, len) == 0)
			return (int64_t)s - 1;
	}
	return -1;
}

void em_vectors_normalize(em_vectors *v)
{
	for (uint32_t i = 0; i < v->n; i++) {
		float *r = v->v + (size_t)i * v->dim;
		double ss = 0.0;
		for (uint32_t k = 0; k < v->dim; k++)
			ss += (double)r[k] * r[k];
		if (ss > 0.0) {
			/* in double: 1 / the length of a row of subnormals
			 * overflows a float */
			double norm = sqrt(ss);
			for (uint32_t k = 0; k < v->dim; k++)
				r[k] = (float)((double)r[k] / norm);
		}
	}
}

const char *em_vec_format_name(int format)
{
	switch (format) {
	case EM_VEC_GLOVE: return "glove";
	case EM_VEC_W2V_TEXT: return "word2vec-text";
	case EM_VEC_W2V_BIN: return "word2vec-binary";
	default: return "auto";
	}
}
