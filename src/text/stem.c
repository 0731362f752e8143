/*
 * stem.c — the analyser object: a Snowball stemmer (libstemmer) with a cache
 * of stems, and the English stop word list.
 *
 * Stemming the same word again is the ingest hot path (a corpus repeats its
 * vocabulary endlessly), so each analyser keeps a map from word to stem.
 * The map is bounded: past STEM_CACHE_MAX entries it is emptied and refills
 * with whatever is frequent now. In front of it, a direct-mapped table of
 * STEM_L1_SIZE short words (up to 16 bytes, compared as two 64-bit words)
 * answers the common words without hashing them in full or chasing a
 * pointer: it took a SciFact build's stem lookups from 12% of the time to
 * a few. An analyser is not thread-safe; each thread uses its own.
 */
#include <libstemmer.h>

#include "text/text.h"

#define STEM_CACHE_MAX 200000

/* Words longer than this are stemmed but not cached; no term is longer. */
#define STEM_CACHE_WORD_MAX TEXT_MAX_TERM

#define STEM_L1_SIZE 4096      /* a power of two */
#define STEM_L1_WORD 16        /* longest word and stem it holds */

typedef struct stem_l1 {
	uint64_t w0, w1;           /* the word, zero-padded to 16 bytes */
	uint8_t wlen, slen;        /* wlen 0: empty */
	char stem[STEM_L1_WORD + 1];
} stem_l1;

struct text_analyzer {
	struct sb_stemmer *stemmer; /* NULL: stemming off */
	stem_l1 *l1;                /* STEM_L1_SIZE entries, or NULL */
	fa_strmap cache;            /* word -> STEM_REF(offset, len) into stems */
	fbuf stems;                 /* cached stems, each NUL-terminated */
	fbuf result;                /* the result of an uncached text_stem() */
	int general_runs_only;      /* tests: no plain-run fast path */
};

/* A cached stem is stored as offset << 8 | length (length <= 255). */
#define STEM_REF(off, len) (((uint64_t)(off) << 8) | (uint64_t)(len))
#define STEM_REF_OFF(v) ((size_t)((v) >> 8))
#define STEM_REF_LEN(v) ((size_t)((v) & 0xFF))

static int is_no_stemming(const char *lang)
{
	return lang == NULL || lang[0] == '\0' || strcmp(lang, "none") == 0;
}

/* FATHOM_EINVAL naming the languages libstemmer has. */
static int unknown_language(const char *lang)
{
	char list[1024];
	size_t used = 0;
	list[0] = '\0';
	for (const char **l = sb_stemmer_list(); l && *l; l++) {
		size_t len = strlen(*l);
		if (used + len + 3 >= sizeof list)
			break;
		if (used > 0) {
			memcpy(list + used, ", ", 2);
			used += 2;
		}
		memcpy(list + used, *l, len);
		used += len;
		list[used] = '\0';
	}
	return fa_err(FATHOM_EINVAL, "unknown stemming language \"%.64s\" (known: none, %s)",
	              lang, list);
}

int text_analyzer_new(text_analyzer **out, const char *lang)
{
	if (!out)
		return fa_err(FATHOM_EINVAL, "text_analyzer_new: no output pointer");
	*out = NULL;
	text_analyzer *a = fa_calloc(1, sizeof *a);
	if (!a)
		return fa_err(FATHOM_ENOMEM, "allocating an analyser");
	if (!is_no_stemming(lang)) {
		a->stemmer = sb_stemmer_new(lang, "UTF_8");
		if (!a->stemmer) {
			fa_free(a);
			return unknown_language(lang);
		}
	}
	fa_strmap_init(&a->cache);
	fbuf_init(&a->stems, 0);
	fbuf_init(&a->result, 0);
	if (a->stemmer)
		a->l1 = fa_calloc(STEM_L1_SIZE, sizeof *a->l1);   /* NULL: none, slower */
	*out = a;
	return FATHOM_OK;
}

void text_analyzer_free(text_analyzer *a)
{
	if (!a)
		return;
	if (a->stemmer)
		sb_stemmer_delete(a->stemmer);
	fa_strmap_free(&a->cache);
	fbuf_free(&a->stems);
	fbuf_free(&a->result);
	fa_free(a->l1);
	fa_free(a);
}

void text_analyzer_set_plain_runs(text_analyzer *a, int on)
{
	a->general_runs_only = !on;
}

int text_analyzer_plain_runs(const text_analyzer *a)
{
	return !a->general_runs_only;
}

/* Run the stemmer; the result lives in the stemmer until its next call. */
static const char *run_stemmer(text_analyzer *a, const char *w, size_t n, size_t *out_len)
{
	const sb_symbol *st = sb_stemmer_stem(a->stemmer, (const sb_symbol *)w, (int)n);
	if (!st) {
		fa_err(FATHOM_ENOMEM, "stemming a %zu-byte word", n);
		return NULL;
	}
	int len = sb_stemmer_length(a->stemmer);
	*out_len = len > 0 ? (size_t)len : 0;
	return (const char *)st;
}

static const char *stem_uncached(text_analyzer *a, const char *w, size_t n, size_t *out_len)
{
	size_t len = n;
	const char *st = w;
	if (a->stemmer) {
		if (n > (size_t)INT32_MAX) {
			fa_err(FATHOM_ETOOBIG, "word too long to stem (%zu bytes)", n);
			return NULL;
		}
		st = run_stemmer(a, w, n, &len);
		if (!st)
			return NULL;
	}
	fbuf_reset(&a->result);
	if (fbuf_append(&a->result, st, len) != FATHOM_OK || fbuf_putc(&a->result, 0) != FATHOM_OK)
		return NULL;
	*out_len = len;
	return (const char *)a->result.data;
}

/* Start the cache afresh once it is full. */
static void cache_clear(text_analyzer *a)
{
	fa_strmap_free(&a->cache);
	fa_strmap_init(&a->cache);
	fbuf_reset(&a->stems);
}

static const char *stem_and_cache(text_analyzer *a, const char *w, size_t n, size_t *out_len);

const char *text_stem(text_analyzer *a, const char *w, size_t n, size_t *out_len)
{
	size_t dummy;
	if (!out_len)
		out_len = &dummy;
	if (!a || (!w && n > 0)) {
		fa_err(FATHOM_EINVAL, "text_stem: no analyser or word");
		return NULL;
	}
	if (!a->stemmer || n == 0 || n > STEM_CACHE_WORD_MAX)
		return stem_uncached(a, w ? w : "", n, out_len);

	stem_l1 *e = NULL;
	uint64_t w0 = 0, w1 = 0;
	if (a->l1 && n <= STEM_L1_WORD) {
		memcpy(&w0, w, n < 8 ? n : 8);
		if (n > 8)
			memcpy(&w1, w + 8, n - 8);
		uint64_t h = (w0 * 0x9e3779b97f4a7c15ull) ^ (w1 * 0xc2b2ae3d27d4eb4full) ^ n;
		e = &a->l1[(h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull >> 52 & (STEM_L1_SIZE - 1)];
		if (e->wlen == n && e->w0 == w0 && e->w1 == w1) {
			*out_len = e->slen;
			return e->stem;
		}
	}
	const char *st;
	size_t len;
	fa_strmap_slot *slot = fa_strmap_find(&a->cache, w, n);
	if (slot) {
		len = STEM_REF_LEN(slot->value);
		st = (const char *)a->stems.data + STEM_REF_OFF(slot->value);
	} else if (!(st = stem_and_cache(a, w, n, &len))) {
		return NULL;
	}
	if (e && len <= STEM_L1_WORD) {
		e->w0 = w0;
		e->w1 = w1;
		e->wlen = (uint8_t)n;
		e->slen = (uint8_t)len;
		memcpy(e->stem, st, len);
		e->stem[len] = '\0';
	}
	*out_len = len;
	return st;
}

/* Stem w (not in the cache) and cache it. */
static const char *stem_and_cache(text_analyzer *a, const char *w, size_t n, size_t *out_len)
{
	fa_strmap_slot *slot;

	/* w may point into our own buffers (a previous result), which the
	 * appends below can move; work from a copy. */
	char word[STEM_CACHE_WORD_MAX];
	memcpy(word, w, n);
	w = word;

	size_t len;
	const char *st = run_stemmer(a, w, n, &len);
	if (!st)
		return NULL;
	if (len > 255) /* cannot happen for a word <= 64 bytes; stay safe */
		return stem_uncached(a, w, n, out_len);

	if (a->cache.count >= STEM_CACHE_MAX)
		cache_clear(a);
	size_t off = a->stems.len;
	if (fbuf_append(&a->stems, st, len) != FATHOM_OK || fbuf_putc(&a->stems, 0) != FATHOM_OK) {
		/* the analyser lives on in its handle: the next word must find
		 * the buffer as it was, not its sticky error */
		a->stems.len = off;
		a->stems.err = 0;
		fa_err(FATHOM_ENOMEM, "caching a stem");
		return NULL;
	}
	int is_new;
	slot = fa_strmap_upsert(&a->cache, w, n, &is_new);
	if (!slot) {
		fa_err(FATHOM_ENOMEM, "caching a stem");
		return NULL;
	}
	slot->value = STEM_REF(off, len);
	*out_len = len;
	return (const char *)a->stems.data + off;
}

/* ---- stop words ---------------------------------------------------------- */

/* English function words, sorted (strcmp order) for binary search. "s" and
 * "t" are what the tokenizer leaves of "user's" and "don't". */
static const char *const stopwords[] = {
	"a", "about", "above", "after", "again", "against", "all", "am", "an",
	"and", "any", "are", "as", "at", "be", "because", "been", "before",
	"being", "below", "between", "both", "but", "by", "can", "could", "did",
	"do", "does", "doing", "down", "during", "each", "few", "for", "from",
	"further", "had", "has", "have", "having", "he", "her", "here", "hers",
	"herself", "him", "himself", "his", "how", "i", "if", "in", "into", "is",
	"it", "its", "itself", "just", "me", "more", "most", "my", "myself",
	"no", "nor", "not", "now", "of", "off", "on", "once", "only", "or",
	"other", "our", "ours", "ourselves", "out", "over", "own", "s", "same",
	"she", "should", "so", "some", "such", "t", "than", "that", "the",
	"their", "theirs", "them", "themselves", "then", "there", "these",
	"they", "this", "those", "through", "to", "too", "under", "until", "up",
	"very", "was", "we", "were", "what", "when", "where", "which", "while",
	"who", "whom", "why", "will", "with", "would", "you", "your", "yours",
	"yourself", "yourselves",
};

/* strcmp order between a sized word and a NUL-terminated one. */
static int compare_word(const char *w, size_t n, const char *s)
{
	size_t i = 0;
	for (; i < n && s[i] != '\0'; i++) {
		if ((unsigned char)w[i] != (unsigned char)s[i])
			return (unsigned char)w[i] < (unsigned char)s[i] ? -1 : 1;
	}
	if (i < n)
		return 1;
	return s[i] == '\0' ? 0 : -1;
}

int text_in_sorted(const char *const *list, size_t count, const char *w, size_t n)
{
	size_t lo = 0, hi = count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = compare_word(w, n, list[mid]);
		if (c == 0)
			return 1;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

int text_is_stopword(const char *w, size_t n)
{
	if (!w || n == 0 || n > 16)
		return 0;
	return text_in_sorted(stopwords, FA_ARRAY_LEN(stopwords), w, n);
}
