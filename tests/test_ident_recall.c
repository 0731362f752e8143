/*
 * test_ident_recall.c — an identifier's pre-filter never drops a chunk that
 * holds it. On a real code tree (the kernel/ folder of the kernel source,
 * else /usr/include) and on SciFact, identifiers are sampled from the index's
 * vocabulary and each is queried in several spellings (as seen, lower and
 * upper case, snake_case, kebab-case, camelCase, PascalCase, dotted, with
 * and without "()"). For each spelling, a slow reference written here (its
 * own tokenizer and folding, not the engine's identifier code) scans every
 * chunk's text for the chunks where the spelling occurs as a whole token in
 * any of its case- and delimiter-variants; the chunks the engine's
 * pre-filter allows must include every one of them: recall 1.0.
 *
 * Whole token, for the reference: a maximal run of ASCII letters and digits
 * joined by '_' (any number), a single '-' or '.', or a ',' between digits;
 * any other byte ends it, but a byte of a non-ASCII character continues it
 * (CD169β is not the token CD169). Its fold: the letter runs in lower case
 * run together, a letter run and a digit run joined by '-', two digit runs
 * by '.' when a '.' stood between them, else '-'. Two spellings are
 * variants of one another when their folds are equal.
 *
 * The code tree's files come from bench/work/kernel/tree when `make bench`
 * extracted it, else from /usr/src/linux-source-6.1.tar.xz (its kernel/
 * folder, extracted once into $BUILD/test-cache), else /usr/include; SciFact
 * from ../shared/data/scifact/corpus.jsonl, skipped with a message when
 * absent. Both are cut to a few megabytes so that the test takes seconds.
 */
#include <dirent.h>
#include <unistd.h>
#include <jansson.h>
#include <sys/stat.h>

#include "test.h"
#include "query/query_int.h"

#define CORPUS_MAX_BYTES (6u << 20)
#define CHUNK_TARGET 1500
#define SAMPLE_PER_CORPUS 600
#define MAX_SPELLINGS 16

/* ---- the corpus: documents cut into chunks -------------------------------- */

typedef struct tdoc {
	char *text;
	size_t len;
	char *title;
	uint32_t first, n;     /* its chunks: chunk[first .. first + n) */
} tdoc;

typedef struct tchunk {
	uint32_t doc, start, end;
} tchunk;

typedef struct corpus {
	const char *name;
	tdoc *doc;
	size_t ndoc, capdoc;
	tchunk *chunk;
	size_t nchunk, capchunk;
	size_t bytes;
} corpus;

static void corpus_add(corpus *c, char *text, size_t len, char *title)
{
	if (c->ndoc == c->capdoc) {
		c->capdoc = c->capdoc ? 2 * c->capdoc : 256;
		c->doc = realloc(c->doc, c->capdoc * sizeof *c->doc);
	}
	tdoc *d = &c->doc[c->ndoc];
	d->text = text;
	d->len = len;
	d->title = title;
	d->first = (uint32_t)c->nchunk;
	/* Chunks of about CHUNK_TARGET bytes, cut after a newline (else a
	 * space) and never inside a UTF-8 sequence. */
	size_t at = 0;
	while (at < len) {
		size_t end = len;
		if (len - at > CHUNK_TARGET) {
			end = at + CHUNK_TARGET;
			size_t cut = end;
			while (cut > at + CHUNK_TARGET / 2 && text[cut - 1] != '\n')
				cut--;
			if (cut == at + CHUNK_TARGET / 2) {
				cut = end;
				while (cut > at + CHUNK_TARGET / 2 && text[cut - 1] != ' ')
					cut--;
			}
			end = cut;
			while (end < len && ((unsigned char)text[end] & 0xc0) == 0x80)
				end++;
		}
		if (c->nchunk == c->capchunk) {
			c->capchunk = c->capchunk ? 2 * c->capchunk : 1024;
			c->chunk = realloc(c->chunk, c->capchunk * sizeof *c->chunk);
		}
		c->chunk[c->nchunk++] = (tchunk){ (uint32_t)c->ndoc, (uint32_t)at, (uint32_t)end };
		at = end;
	}
	d->n = (uint32_t)c->nchunk - d->first;
	c->ndoc++;
	c->bytes += len;
}

static void corpus_free(corpus *c)
{
	for (size_t i = 0; i < c->ndoc; i++) {
		free(c->doc[i].text);
		free(c->doc[i].title);
	}
	free(c->doc);
	free(c->chunk);
	memset(c, 0, sizeof *c);
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .c and .h files under dir, recursively, sorted by path. */
static void list_sources(const char *dir, char ***out, size_t *n, size_t *cap)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		size_t l = strlen(e->d_name);
		if (S_ISDIR(st.st_mode)) {
			list_sources(path, out, n, cap);
		} else if (S_ISREG(st.st_mode) && l > 2 && e->d_name[l - 2] == '.' &&
		           (e->d_name[l - 1] == 'c' || e->d_name[l - 1] == 'h')) {
			if (*n == *cap) {
				*cap = *cap ? 2 * *cap : 256;
				*out = realloc(*out, *cap * sizeof **out);
			}
			(*out)[(*n)++] = strdup(path);
		}
	}
	closedir(d);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The code tree: the kernel's kernel/ folder, else /usr/include. */
static const char *code_tree(char *buf, size_t cap)
{
	const char *bench = "bench/work/kernel/tree/linux-source-6.1/kernel";
	if (is_dir(bench))
		return bench;
	const char *build = getenv("BUILD");
	const char *tarball = "/usr/src/linux-source-6.1.tar.xz";
	snprintf(buf, cap, "%s/test-cache/kernel/linux-source-6.1/kernel", build && *build ? build : "build");
	if (is_dir(buf))
		return buf;
	if (access(tarball, R_OK) == 0) {
		char cmd[2048];
		char *cache = strdup(buf);
		*strstr(cache, "/linux-source-6.1/kernel") = '\0';
		printf("     extracting kernel/ from %s into %s (once)\n", tarball, cache);
		fflush(stdout);
		snprintf(cmd, sizeof cmd,
		         "mkdir -p '%s' && tar -xJf %s -C '%s' --wildcards --no-same-owner "
		         "'linux-source-6.1/kernel/*.c' 'linux-source-6.1/kernel/*.h'",
		         cache, tarball, cache);
		int rc = system(cmd);
		free(cache);
		if (rc == 0 && is_dir(buf))
			return buf;
		printf("     could not extract it\n");
	}
	printf("     no kernel source (%s): the code tree is /usr/include instead\n", tarball);
	return is_dir("/usr/include") ? "/usr/include" : NULL;
}

static int load_code(corpus *c)
{
	char buf[1024];
	const char *root = code_tree(buf, sizeof buf);
	if (!root)
		return -1;
	char **files = NULL;
	size_t n = 0, cap = 0;
	list_sources(root, &files, &n, &cap);
	qsort(files, n, sizeof *files, by_name);
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		char *text = c->bytes < CORPUS_MAX_BYTES ? read_file(files[i], &len) : NULL;
		/* text only: the index takes valid UTF-8 */
		if (text && len > 0 && !memchr(text, 0, len) && text_utf8_invalid_count(text, len) == 0)
			corpus_add(c, text, len, strdup(""));
		else
			free(text);
		free(files[i]);
	}
	free(files);
	printf("     code tree %s: %zu files, %zu chunks, %zu bytes\n", root, c->ndoc, c->nchunk, c->bytes);
	return c->ndoc ? 0 : -1;
}

static int load_scifact(corpus *c)
{
	FILE *f = fopen("../shared/data/scifact/corpus.jsonl", "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0 && c->bytes < CORPUS_MAX_BYTES) {
		json_t *j = json_loads(line, 0, NULL);
		const char *text = j ? json_string_value(json_object_get(j, "text")) : NULL;
		const char *title = j ? json_string_value(json_object_get(j, "title")) : NULL;
		if (text && *text)
			corpus_add(c, strdup(text), strlen(text), strdup(title ? title : ""));
		json_decref(j);
	}
	free(line);
	fclose(f);
	printf("     SciFact: %zu documents, %zu chunks, %zu bytes\n", c->ndoc, c->nchunk, c->bytes);
	return c->ndoc ? 0 : -1;
}

/* ---- the reference: whole tokens and their folds --------------------------- */

static int ref_alpha(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int ref_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

static int ref_alnum(unsigned char ch)
{
	return ref_alpha(ch) || ref_digit(ch);
}

/* The fold of s[0..n): see the top. Every byte but letters and digits is a
 * joiner here (the token's own bounds were found by ref_next_token). -1 when
 * it holds no letter or digit or is too long. */
static int ref_fold(const char *s, size_t n, char *out, size_t cap, size_t *len)
{
	size_t o = 0, i = 0;
	int prev = 0, dot = 0;   /* prev: 0 none, 1 letters, 2 digits */
	while (i < n) {
		unsigned char ch = (unsigned char)s[i];
		if (!ref_alnum(ch)) {
			dot |= ch == '.';
			i++;
			continue;
		}
		int kind = ref_digit(ch) ? 2 : 1;
		char sep = prev && prev != kind ? '-' : prev == 2 && kind == 2 ? (dot ? '.' : '-') : 0;
		if (sep && o + 2 <= cap)
			out[o++] = sep;
		for (; i < n && ref_alnum((unsigned char)s[i]) && (ref_digit((unsigned char)s[i]) ? 2 : 1) == kind; i++) {
			if (o + 2 > cap)
				return -1;
			ch = (unsigned char)s[i];
			out[o++] = (char)(ch >= 'A' && ch <= 'Z' ? ch + ('a' - 'A') : ch);
		}
		prev = kind;
		dot = 0;
	}
	if (o == 0)
		return -1;
	out[o] = '\0';
	*len = o;
	return 0;
}

/* The next whole token of t[*at .. n): 1 and its bounds, or 0 at the end. */
static int ref_next_token(const char *t, size_t n, size_t *at, size_t *s, size_t *e)
{
	size_t i = *at;
	for (;;) {
		while (i < n && !ref_alnum((unsigned char)t[i]) && (unsigned char)t[i] < 0x80)
			i++;
		if (i >= n) {
			*at = n;
			return 0;
		}
		size_t start = i;
		int ascii = 1;
		while (i < n) {
			unsigned char ch = (unsigned char)t[i];
			if (ref_alnum(ch)) {
				i++;
			} else if (ch >= 0x80) {
				ascii = 0;
				i++;
			} else if (ch == '_') {
				size_t j = i;
				while (j < n && t[j] == '_')
					j++;
				if (j < n && (ref_alnum((unsigned char)t[j]) || (unsigned char)t[j] >= 0x80))
					i = j;
				else
					break;
			} else if ((ch == '-' || ch == '.') && i + 1 < n &&
			           (ref_alnum((unsigned char)t[i + 1]) || (unsigned char)t[i + 1] >= 0x80) &&
			           i > start) {
				i++;
			} else if (ch == ',' && i + 1 < n && ref_digit((unsigned char)t[i - 1]) &&
			           ref_digit((unsigned char)t[i + 1])) {
				i++;
			} else {
				break;
			}
		}
		*at = i;
		if (!ascii)
			continue;   /* holds a non-ASCII letter: no ASCII identifier */
		*s = start;
		*e = i;
		return 1;
	}
}

/* ---- spellings -------------------------------------------------------------- */

typedef struct spelling_set {
	char s[MAX_SPELLINGS][160];
	int n;
} spelling_set;

static void add_spelling(spelling_set *ss, const char *s)
{
	for (int i = 0; i < ss->n; i++)
		if (strcmp(ss->s[i], s) == 0)
			return;
	if (ss->n < MAX_SPELLINGS && strlen(s) < sizeof ss->s[0])
		snprintf(ss->s[ss->n++], sizeof ss->s[0], "%s", s);
}

/* The parts of an identifier, for writing it again: letter and digit runs,
 * split at camelCase humps. */
static int parts_of(const char *s, char parts[16][72], int *np)
{
	int k = 0;
	size_t i = 0, n = strlen(s);
	while (i < n) {
		if (!ref_alnum((unsigned char)s[i])) {
			i++;
			continue;
		}
		size_t a = i++;
		int digits = ref_digit((unsigned char)s[a]);
		while (i < n && ref_alnum((unsigned char)s[i]) && ref_digit((unsigned char)s[i]) == digits &&
		       !(s[i] >= 'A' && s[i] <= 'Z' && s[i - 1] >= 'a' && s[i - 1] <= 'z'))
			i++;
		if (k == 16 || i - a >= 72)
			return -1;
		for (size_t j = a; j < i; j++)
			parts[k][j - a] = (char)(s[j] >= 'A' && s[j] <= 'Z' ? s[j] + ('a' - 'A') : s[j]);
		parts[k][i - a] = '\0';
		k++;
	}
	*np = k;
	return k ? 0 : -1;
}

/* style: 0 lower, 1 UPPER, 2 camel, 3 Pascal; joiner 0 for none. */
static void join_parts(char parts[16][72], int np, int style, char joiner, const char *tail, char *out,
                       size_t cap)
{
	size_t o = 0;
	for (int p = 0; p < np; p++) {
		if (p && joiner && o + 1 < cap)
			out[o++] = joiner;
		for (size_t j = 0; parts[p][j] && o + 1 < cap; j++) {
			char ch = parts[p][j];
			int up = style == 1 || (j == 0 && ((style == 2 && p > 0) || style == 3));
			out[o++] = up && ch >= 'a' && ch <= 'z' ? (char)(ch - ('a' - 'A')) : ch;
		}
	}
	out[o] = '\0';
	snprintf(out + o, cap - o, "%s", tail);
}

static void spellings_of(const char *seen, spelling_set *ss)
{
	char parts[16][72], buf[160];
	int np = 0;
	memset(ss, 0, sizeof *ss);
	add_spelling(ss, seen);
	snprintf(buf, sizeof buf, "%s()", seen);
	add_spelling(ss, buf);
	if (parts_of(seen, parts, &np))
		return;
	static const struct {
		int style;
		char joiner;
		const char *tail;
	} forms[] = {
		{ 0, 0, "" },   { 1, 0, "" },   { 0, '_', "" },  { 1, '_', "" },  { 0, '-', "" },
		{ 2, 0, "" },   { 3, 0, "" },   { 0, '.', "" },  { 0, '_', "()" }, { 2, 0, "()" },
		{ 3, 0, "()" }, { 1, '_', "()" },
	};
	for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
		join_parts(parts, np, forms[f].style, forms[f].joiner, forms[f].tail, buf, sizeof buf);
		add_spelling(ss, buf);
	}
}

/* ---- the check -------------------------------------------------------------- */

typedef struct ref_entry {
	uint32_t *chunks;
	size_t n, cap;
} ref_entry;

typedef struct sample {
	char spelling[TEXT_IDENT_MAX_KEY + 8];
} sample;

typedef struct vocab_walk {
	sample *v;
	size_t n, cap;
	fa_strmap seen;   /* keys */
} vocab_walk;

static int on_vocab_term(void *ctx, const char *term, size_t len, const ix_term_info *ti)
{
	(void)ti;
	vocab_walk *w = ctx;
	const char *sep = memchr(term, IX_IDENT_SEP, len);
	if (!sep || (size_t)(sep - term) + 2 > len)
		return 0;
	int is_new = 0;
	if (!fa_strmap_upsert(&w->seen, term + 1, (size_t)(sep - term) - 1, &is_new))
		return FATHOM_ENOMEM;
	if (!is_new)
		return 0;
	const char *sp = sep + 2;
	size_t sl = len - (size_t)(sp - term);
	if (sl >= 2 && sp[sl - 2] == '(' && sp[sl - 1] == ')')
		sl -= 2;   /* the name alone: the spellings add "()" again */
	if (sl == 0 || sl >= sizeof w->v[0].spelling)
		return 0;
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 1024;
		w->v = realloc(w->v, w->cap * sizeof *w->v);
	}
	memcpy(w->v[w->n].spelling, sp, sl);
	w->v[w->n].spelling[sl] = '\0';
	w->n++;
	return 0;
}

/* The corpus' own chunk number of each chunk of segment s (its document's
 * key is "d" and its number). */
static uint32_t *chunk_map(ix_segment *s, const corpus *cp)
{
	uint32_t n = seg_nchunks(s);
	uint32_t *g = malloc((n ? n : 1) * sizeof *g);
	for (uint32_t c = 0; c < n; c++) {
		ix_chunk_info ci;
		ix_doc_info di;
		g[c] = UINT32_MAX;
		if (seg_chunk(s, c, &ci) || seg_doc(s, ci.doc, &di) || seg_doc_is_deleted(s, ci.doc))
			continue;
		unsigned long d = strtoul(di.key + 1, NULL, 10);
		if (d < cp->ndoc && ci.order < cp->doc[d].n)
			g[c] = cp->doc[d].first + ci.order;
	}
	return g;
}

static void check_corpus(corpus *cp)
{
	char *dir = test_tmpdir("ident-recall");
	text_analyzer *an = NULL;
	ix_index *ix = NULL;
	CHECK_OK(text_analyzer_new(&an, "english"));
	CHECK_OK(ix_open(&ix, dir, IX_CREATE | IX_WRITE, "english"));
	if (!an || !ix)
		return;
	/* index: one document per file or abstract, our chunks */
	ix_chunk_in *ch = NULL;
	size_t capch = 0;
	for (size_t d = 0; d < cp->ndoc; d++) {
		tdoc *td = &cp->doc[d];
		if (td->n > capch) {
			capch = td->n;
			ch = realloc(ch, capch * sizeof *ch);
		}
		for (uint32_t i = 0; i < td->n; i++) {
			const tchunk *tc = &cp->chunk[td->first + i];
			memset(&ch[i], 0, sizeof ch[i]);
			ch[i].byte_start = tc->start;
			ch[i].byte_end = tc->end;
			ch[i].line_start = ch[i].line_end = 1;
		}
		char key[32];
		snprintf(key, sizeof key, "d%zu", d);
		ix_doc_in in;
		memset(&in, 0, sizeof in);
		in.key = key;
		in.path = "";
		in.title = td->title;
		in.url = "";
		in.lang = "text";
		in.kind = DOC_TEXT;
		in.size = td->len;
		in.content_hash = fa_hash64(td->text, td->len, 0);
		in.text = td->text;
		in.text_len = td->len;
		in.chunks = ch;
		in.n_chunks = td->n;
		CHECK_OK(ix_add_doc(ix, an, &in));
	}
	free(ch);
	CHECK_OK(ix_commit(ix));

	/* sample the vocabulary: every k-th key, in key order */
	vocab_walk vw;
	memset(&vw, 0, sizeof vw);
	fa_strmap_init(&vw.seen);
	char mark[1] = { IX_IDENT_MARK };
	for (size_t s = 0; s < ix_nsegments(ix); s++)
		CHECK_OK(seg_terms(ix_segment_at(ix, s), mark, 1, on_vocab_term, &vw));
	size_t step = vw.n > SAMPLE_PER_CORPUS ? vw.n / SAMPLE_PER_CORPUS : 1;
	size_t nsample = 0;
	spelling_set *sp = calloc(vw.n / step + 1, sizeof *sp);
	for (size_t i = 0; i < vw.n; i += step)
		spellings_of(vw.v[i].spelling, &sp[nsample++]);

	/* the reference: every fold asked for, and the chunks holding it */
	fa_strmap folds;
	fa_strmap_init(&folds);
	ref_entry *ref = NULL;
	size_t nref = 0, capref = 0;
	for (size_t i = 0; i < nsample; i++) {
		for (int k = 0; k < sp[i].n; k++) {
			char f[256];
			size_t fl;
			if (ref_fold(sp[i].s[k], strlen(sp[i].s[k]), f, sizeof f, &fl))
				continue;
			int is_new = 0;
			fa_strmap_slot *slot = fa_strmap_upsert(&folds, f, fl, &is_new);
			if (slot && is_new) {
				if (nref == capref) {
					capref = capref ? 2 * capref : 1024;
					ref = realloc(ref, capref * sizeof *ref);
				}
				memset(&ref[nref], 0, sizeof ref[nref]);
				slot->value = ++nref;
			}
		}
	}
	for (size_t g = 0; g < cp->nchunk; g++) {
		const tchunk *tc = &cp->chunk[g];
		const char *t = cp->doc[tc->doc].text + tc->start;
		size_t n = tc->end - tc->start, at = 0, s, e;
		while (ref_next_token(t, n, &at, &s, &e)) {
			char f[256];
			size_t fl;
			if (ref_fold(t + s, e - s, f, sizeof f, &fl))
				continue;
			fa_strmap_slot *slot = fa_strmap_find(&folds, f, fl);
			if (!slot)
				continue;
			ref_entry *r = &ref[slot->value - 1];
			if (r->n && r->chunks[r->n - 1] == g)
				continue;
			if (r->n == r->cap) {
				r->cap = r->cap ? 2 * r->cap : 8;
				r->chunks = realloc(r->chunks, r->cap * sizeof *r->chunks);
			}
			r->chunks[r->n++] = (uint32_t)g;
		}
	}

	/* the engine: each spelling's pre-filter, segment by segment */
	size_t nseg = ix_nsegments(ix);
	uint32_t **gmap = calloc(nseg ? nseg : 1, sizeof *gmap);
	for (size_t s = 0; s < nseg; s++)
		gmap[s] = chunk_map(ix_segment_at(ix, s), cp);
	uint8_t *allowed = calloc(cp->nchunk / 8 + 1, 1);
	uint64_t spellings = 0, filtered = 0, checked = 0, missed = 0;
	for (size_t i = 0; i < nsample; i++) {
		for (int k = 0; k < sp[i].n; k++) {
			const char *q = sp[i].s[k];
			char f[256];
			size_t fl;
			if (ref_fold(q, strlen(q), f, sizeof f, &fl))
				continue;
			const ref_entry *r = &ref[fa_strmap_find(&folds, f, fl)->value - 1];
			fa_arena a;
			fa_arena_init(&a, 64 * 1024, 0);
			q_ast t;
			q_route route;
			q_plan plan;
			fathom_search_opts o = FATHOM_SEARCH_OPTS_INIT;
			int rc = q_parse(&t, &a, q, strlen(q), 0);
			if (!rc)
				rc = q_route_query(&route, &a, &t, an, q, &o, 0, FATHOM_MODE_KEYWORD, 1);
			if (!rc)
				rc = q_identify(&plan, &a, ix, an, &t, route.ident_any);
			CHECK_OK(rc);
			/* no identifier applied: no pre-filter, every chunk allowed */
			int any = 0;
			memset(allowed, 0, cp->nchunk / 8 + 1);
			for (size_t s = 0; !rc && s < nseg; s++) {
				ix_segment *seg = ix_segment_at(ix, s);
				uint8_t *bits = NULL;
				CHECK_OK(q_ident_bitmap(&plan, &a, seg, &bits, FATHOM_SOURCE_KEYWORD));
				any |= bits != NULL;
				for (uint32_t c = 0; c < seg_nchunks(seg); c++)
					if ((!bits || bits[c >> 3] >> (c & 7) & 1) && gmap[s][c] != UINT32_MAX)
						allowed[gmap[s][c] >> 3] |= (uint8_t)(1u << (gmap[s][c] & 7));
			}
			spellings++;
			filtered += any;
			for (size_t j = 0; j < r->n; j++) {
				uint32_t g = r->chunks[j];
				checked++;
				if (allowed[g >> 3] >> (g & 7) & 1)
					continue;
				if (missed++ < 10) {
					const tchunk *tc = &cp->chunk[g];
					fprintf(stderr, "  %s: the pre-filter of [%s] drops chunk %u of d%u (\"%.60s\")\n",
					        cp->name, q, g - cp->doc[tc->doc].first, tc->doc,
					        cp->doc[tc->doc].text + tc->start);
				}
			}
			fa_arena_free(&a);
		}
	}
	printf("     %s: %zu identifiers, %llu spellings (%llu with a pre-filter), %llu chunks "
	       "checked, %llu dropped: recall %.4f\n",
	       cp->name, nsample, (unsigned long long)spellings, (unsigned long long)filtered,
	       (unsigned long long)checked, (unsigned long long)missed,
	       checked ? (double)(checked - missed) / (double)checked : 1.0);
	CHECK(nsample >= 500 || nsample == vw.n);
	CHECK(filtered > 0);
	CHECK_EQ(missed, 0);

	for (size_t i = 0; i < nref; i++)
		free(ref[i].chunks);
	free(ref);
	free(allowed);
	for (size_t s = 0; s < nseg; s++)
		free(gmap[s]);
	free(gmap);
	free(sp);
	free(vw.v);
	fa_strmap_free(&vw.seen);
	fa_strmap_free(&folds);
	ix_close(ix);
	text_analyzer_free(an);
	test_rmrf(dir);
	free(dir);
}

/* The reference agrees with itself on the examples of the top. */
static void test_reference(void)
{
	char f[64];
	size_t fl;
	static const struct {
		const char *a, *b;
	} same[] = { { "spin_lock", "SpinLock" }, { "CD169", "cd-169" }, { "TC_1001", "tc1001" },
		     { "spin.lock", "SPIN-LOCK" } };
	for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
		char g[64];
		size_t gl;
		CHECK(ref_fold(same[i].a, strlen(same[i].a), f, sizeof f, &fl) == 0);
		CHECK(ref_fold(same[i].b, strlen(same[i].b), g, sizeof g, &gl) == 0);
		CHECK_STR(f, g);
	}
	CHECK(ref_fold("2.0.1", 5, f, sizeof f, &fl) == 0);
	CHECK_STR(f, "2.0.1");
	CHECK(ref_fold("2_0_1", 5, f, sizeof f, &fl) == 0);
	CHECK_STR(f, "2-0-1");
	CHECK(ref_fold("v2.0.10", 7, f, sizeof f, &fl) == 0);
	CHECK_STR(f, "v-2.0.10");
	const char *t = "x->spin_lock(&a); __init foo--bar CD169β 1,000 a.b_c";
	const char *want[] = { "x", "spin_lock", "a", "init", "foo", "bar", "1,000", "a.b_c" };
	size_t at = 0, s, e, k = 0;
	while (ref_next_token(t, strlen(t), &at, &s, &e)) {
		if (k < sizeof want / sizeof want[0])
			CHECK(e - s == strlen(want[k]) && memcmp(t + s, want[k], e - s) == 0);
		k++;
	}
	CHECK_EQ(k, sizeof want / sizeof want[0]);
}

static void test_code_tree(void)
{
	corpus c;
	memset(&c, 0, sizeof c);
	c.name = "code";
	if (load_code(&c) == 0)
		check_corpus(&c);
	else
		printf("     no code tree to read: skipped\n");
	corpus_free(&c);
}

static int have_scifact(void)
{
	return access("../shared/data/scifact/corpus.jsonl", R_OK) == 0;
}

static void test_scifact(void)
{
	corpus c;
	memset(&c, 0, sizeof c);
	c.name = "scifact";
	/* run only when the file is there (main): then it must hold documents */
	int rc = load_scifact(&c);
	CHECK_EQ(rc, 0);
	if (rc == 0)
		check_corpus(&c);
	corpus_free(&c);
}

int main(void)
{
	RUN(test_reference);
	RUN(test_code_tree);
	if (have_scifact())
		RUN(test_scifact);
	else
		printf("skip test_scifact: ../shared/data/scifact/corpus.jsonl is absent\n");
	return TEST_DONE();
}
