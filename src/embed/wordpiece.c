/*
 * wordpiece.c — BERT's WordPiece tokenizer, as Hugging Face's tokenizers
 * library runs it from a tokenizer.json (model "WordPiece", normalizer
 * "BertNormalizer" or none, pre_tokenizer "BertPreTokenizer"), or from a
 * plain vocab.txt (one token a line, the line number its id).
 *
 * A text goes through, character by character:
 *   clean_text        NUL, U+FFFD and control characters (Cc, Cf, Co, Cs
 *                     as HF's tables have them, but not tab, newline and
 *                     CR; unassigned ones stay) dropped; whitespace (tab,
 *                     newline, CR and Unicode's White_Space) to ' '
 *   handle_chinese    a CJK ideograph gets a space either side
 *   strip_accents     NFD (utf8proc), then nonspacing marks (Mn) dropped;
 *                     on when the setting is null and lowercase is on, as
 *                     in BERT
 *   lowercase         Unicode's lowercase of each character (U+0130 to
 *                     "i" + U+0307, the one full mapping of more than one
 *                     character that is not context-dependent)
 *   pre-tokenizer     words split at whitespace (dropped) and punctuation
 *                     (ASCII punctuation and Unicode's P* categories, each
 *                     a word of its own)
 *   WordPiece         each word longest-match-first against the vocabulary,
 *                     pieces after the first prefixed "##"; a word of more
 *                     than max_input_chars_per_word characters, or with a
 *                     part no piece matches, is the unknown token
 * which gives the ids of HF's encode(text, add_special_tokens=False).
 * Before all this, the tokenizer.json's added tokens that are not
 * normalized ("[CLS]", "[MASK]" ...) are found in the raw text, leftmost
 * then longest, and are their own ids (a single_word one only where the
 * characters either side are not letters, digits or '_'); the text
 * between them goes through the steps above. Added tokens marked normalized are not
 * matched (BERT's are all not normalized); lstrip and rstrip change
 * nothing here, since whitespace is never a token.
 *
 * Character classes (control, nonspacing mark, punctuation) are HF's own,
 * measured over every code point (wp_class below); utf8proc decodes,
 * decomposes (NFD) and lowercases. Held to HF's own output: llama.cpp's
 * 46 bert-base-uncased cases, 1000 random texts (tests/data/wordpiece-hf/),
 * and once, every code point.
 *
 * Limits are in embed.h (EM_WP_*). The vocabulary lives in a fa_strmap
 * (token to id); the encoder keeps no state in the tokenizer, so several
 * threads may encode at once.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

struct em_wordpiece {
	fa_strmap vocab;             /* token bytes -> id */
	uint32_t size;               /* the largest id + 1 */
	uint32_t unk;                /* the unknown token's id */
	uint32_t max_word;           /* max_input_chars_per_word */
	uint32_t max_piece;          /* characters in the longest token */
	uint32_t nlen[EM_WP_MAX_TOKEN + 1]; /* tokens of each length in characters */
	char prefix[EM_WP_MAX_PREFIX + 1];
	size_t prefix_len;
	int clean_text, chinese, strip_accents, lowercase;
	/* added tokens matched in the raw text, by first byte then longest */
	struct added {
		char *s;             /* into added_pool */
		uint32_t len, id;
		int single_word;
		int32_t last;            /* its last character */
	} *added;
	uint32_t nadded;
	uint32_t added_at[257];      /* added[added_at[b] .. added_at[b + 1]) start with b */
	char *added_pool;
};

/* ---- characters ---------------------------------------------------------- */

/* A character's class as HF tokenizers sees it, from a table measured on
 * HF itself for every code point (wordpiece_classes.inc, made by
 * tests/data/wordpiece-hf/classes.py): its categories come from older
 * Unicode tables than utf8proc's (the unicode_categories crate's), which
 * read characters assigned since as letters, so utf8proc's categories
 * would split or drop characters HF keeps in a word (568 code points
 * against utf8proc 2.8), and more with each Unicode version. */
enum { WP_CONTROL = 1, WP_MARK, WP_PUNCT };
static const struct wp_range {
	uint32_t lo, hi;
	uint8_t cls;
} wp_class_table[] = {
#include "embed/wordpiece_classes.inc"
};

/* c's class, or 0: part of a word (or whitespace, which is_ws says) */
static int wp_class(utf8proc_int32_t c)
{
	if (((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9'))
		return 0;   /* the common case, without the search */
	size_t lo = 0, hi = sizeof wp_class_table / sizeof wp_class_table[0];
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if ((uint32_t)c > wp_class_table[mid].hi)
			lo = mid + 1;
		else if ((uint32_t)c < wp_class_table[mid].lo)
			hi = mid;
		else
			return wp_class_table[mid].cls;
	}
	return 0;
}

static int is_ws(utf8proc_int32_t c)
{
	switch (c) {
	case 0x09: case 0x0a: case 0x0b: case 0x0c: case 0x0d: case 0x20: case 0x85: case 0xa0:
	case 0x1680: case 0x2028: case 0x2029: case 0x202f: case 0x205f: case 0x3000:
		return 1;
	default:
		return c >= 0x2000 && c <= 0x200a;
	}
}

static int is_control(utf8proc_int32_t c)
{
	return wp_class(c) == WP_CONTROL;
}

static int is_chinese(utf8proc_int32_t c)
{
	return (c >= 0x4e00 && c <= 0x9fff) || (c >= 0x3400 && c <= 0x4dbf) ||
	       (c >= 0x20000 && c <= 0x2a6df) || (c >= 0x2a700 && c <= 0x2b73f) ||
	       (c >= 0x2b740 && c <= 0x2b81f) || (c >= 0x2b920 && c <= 0x2ceaf) ||
	       (c >= 0xf900 && c <= 0xfaff) || (c >= 0x2f800 && c <= 0x2fa1f);
}

/* As HF has it: ASCII punctuation ($, +, <, =, >, ^, `, | and ~ too,
 * symbols in Unicode) and its tables' P* categories */
static int is_punct(utf8proc_int32_t c)
{
	return wp_class(c) == WP_PUNCT;
}

static int is_nonspacing_mark(utf8proc_int32_t c)
{
	return wp_class(c) == WP_MARK;
}

/* ---- encoding -------------------------------------------------------------- */

/* The word being gathered: its bytes, where each character starts, and how
 * many characters it has (counted past what is kept, to know it is too
 * long). */
typedef struct enc {
	const em_wordpiece *wp;
	uint32_t *ids;
	size_t max, n;
	char w[EM_WP_MAX_WORD_CHARS * 4 + 4];
	uint16_t at[EM_WP_MAX_WORD_CHARS + 1];
	size_t wlen;
	uint32_t chars;
	char key[EM_WP_MAX_PREFIX + EM_WP_MAX_WORD_CHARS * 4 + 4];
} enc;

static void put_id(enc *e, uint32_t id)
{
	if (e->n < e->max)
		e->ids[e->n] = id;
	e->n++;
}

static void flush_word(enc *e)
{
	const em_wordpiece *wp = e->wp;
	uint32_t nc = e->chars;
	if (nc == 0)
		return;
	if (nc > wp->max_word) {
		put_id(e, wp->unk);
		goto done;
	}
	e->at[nc] = (uint16_t)e->wlen;
	size_t first = e->n;
	uint32_t start = 0;
	while (start < nc) {
		uint32_t end = nc;
		if (end - start > wp->max_piece)
			end = start + wp->max_piece;
		const fa_strmap_slot *hit = NULL;
		size_t pre = start ? wp->prefix_len : 0;
		memcpy(e->key, wp->prefix, pre);
		for (; end > start; end--) {
			size_t bl = (size_t)e->at[end] - e->at[start];
			memcpy(e->key + pre, e->w + e->at[start], bl);
			if ((hit = fa_strmap_find(&wp->vocab, e->key, pre + bl)))
				break;
		}
		if (!hit) {
			e->n = first;       /* the whole word is unknown */
			put_id(e, wp->unk);
			goto done;
		}
		put_id(e, (uint32_t)hit->value);
		start = end;
	}
done:
	e->wlen = 0;
	e->chars = 0;
}

static void push_char(enc *e, utf8proc_int32_t c)
{
	if (is_ws(c)) {
		flush_word(e);
		return;
	}
	int punct = is_punct(c);
	if (punct)
		flush_word(e);
	if (e->chars < e->wp->max_word) {
		e->at[e->chars] = (uint16_t)e->wlen;
		e->wlen += (size_t)utf8proc_encode_char(c, (utf8proc_uint8_t *)e->w + e->wlen);
	}
	e->chars++;   /* past the limit only counted: the word is unknown */
	if (punct)
		flush_word(e);
}

/* One character of the text through the normalizer, then to the words. */
static void normalize_char(enc *e, utf8proc_int32_t c)
{
	const em_wordpiece *wp = e->wp;
	if (wp->clean_text) {
		if (c == 0 || c == 0xfffd || is_control(c))
			return;
		if (is_ws(c))
			c = ' ';
	}
	int cjk = wp->chinese && is_chinese(c);
	if (cjk)
		push_char(e, ' ');
	utf8proc_int32_t d[8];
	utf8proc_ssize_t nd = 1;
	d[0] = c;
	if (wp->strip_accents) {
		int bc = 0;
		nd = utf8proc_decompose_char(c, d, 8, UTF8PROC_DECOMPOSE, &bc);
		if (nd < 1 || nd > 8) {
			d[0] = c;
			nd = 1;
		}
	}
	for (utf8proc_ssize_t i = 0; i < nd; i++) {
		utf8proc_int32_t x = d[i];
		if (wp->strip_accents && is_nonspacing_mark(x))
			continue;
		if (wp->lowercase) {
			if (x == 0x130) {      /* İ: "i" and a combining dot above */
				push_char(e, 'i');
				x = 0x307;
			} else {
				x = utf8proc_tolower(x);
			}
		}
		push_char(e, x);
	}
	if (cjk)
		push_char(e, ' ');
}

/* letters, digits and '_': what a single_word added token may not touch */
static int word_char(utf8proc_int32_t c)
{
	if (c == '_')
		return 1;
	utf8proc_category_t k = utf8proc_category(c);
	return (k >= UTF8PROC_CATEGORY_LU && k <= UTF8PROC_CATEGORY_LO) ||
	       (k >= UTF8PROC_CATEGORY_ND && k <= UTF8PROC_CATEGORY_NO);
}

/* The longest added token at p + i, or NULL; prev is the character before. */
static const struct added *match_added(const em_wordpiece *wp, const utf8proc_uint8_t *p,
                                       size_t i, size_t len, utf8proc_int32_t prev)
{
	for (uint32_t k = wp->added_at[p[i]]; k < wp->added_at[p[i] + 1]; k++) {
		const struct added *a = &wp->added[k];
		if (a->len > len - i || memcmp(p + i, a->s, a->len) != 0)
			continue;
		if (a->single_word) {
			utf8proc_int32_t next = 0;
			if (i + a->len < len &&
			    utf8proc_iterate(p + i + a->len, (utf8proc_ssize_t)(len - i - a->len), &next) < 1)
				next = 0;
			if ((prev && word_char(prev)) || (next && word_char(next)))
				continue;
		}
		return a;
	}
	return NULL;
}

int em_wordpiece_encode(const em_wordpiece *wp, const char *text, size_t len, uint32_t *ids,
                        size_t max, size_t *n)
{
	*n = 0;
	if (!text && len)
		return fa_err(FATHOM_EINVAL, "wordpiece: no text");
	enc st, *e = &st;
	e->wp = wp;
	e->ids = ids;
	e->max = max;
	e->n = 0;
	e->wlen = 0;
	e->chars = 0;
	const utf8proc_uint8_t *p = (const utf8proc_uint8_t *)text;
	size_t i = 0;
	utf8proc_int32_t prev = 0;
	while (i < len) {
		const struct added *a = wp->nadded ? match_added(wp, p, i, len, prev) : NULL;
		if (a) {
			flush_word(e);
			put_id(e, a->id);
			i += a->len;
			prev = a->last;
			continue;
		}
		utf8proc_int32_t c;
		utf8proc_ssize_t k = utf8proc_iterate(p + i, (utf8proc_ssize_t)(len - i), &c);
		if (k < 1) {      /* a byte that is not UTF-8 reads as U+FFFD */
			c = 0xfffd;
			k = 1;
		}
		i += (size_t)k;
		prev = c;
		normalize_char(e, c);
	}
	flush_word(e);
	*n = e->n;
	return 0;
}

/* ---- loading ------------------------------------------------------------------ */

static void wp_init(em_wordpiece *wp)
{
	fa_strmap_init(&wp->vocab);
	wp->unk = UINT32_MAX;
	wp->max_word = 100;
	memcpy(wp->prefix, "##", 3);
	wp->prefix_len = 2;
	wp->clean_text = wp->chinese = wp->strip_accents = wp->lowercase = 1;
}

void em_wordpiece_free(em_wordpiece *wp)
{
	if (!wp)
		return;
	fa_strmap_free(&wp->vocab);
	fa_free(wp->added);
	fa_free(wp->added_pool);
	fa_free(wp);
}

/* Add a token; FATHOM_ESYNTAX naming name for one that is empty, too long
 * or given twice, or an id out of range. */
static int add_token(em_wordpiece *wp, const char *tok, size_t len, uint64_t id, const char *name)
{
	if (len == 0 || len > EM_WP_MAX_TOKEN)
		return fa_err(FATHOM_ESYNTAX, "%s: token %llu: empty or longer than %u bytes", name,
		              (unsigned long long)id, EM_WP_MAX_TOKEN);
	if (id >= EM_WP_MAX_VOCAB)
		return fa_err(FATHOM_ETOOBIG, "%s: token id %llu (at most %u tokens)", name,
		              (unsigned long long)id, EM_WP_MAX_VOCAB);
	int is_new;
	fa_strmap_slot *s = fa_strmap_upsert(&wp->vocab, tok, len, &is_new);
	if (!s)
		return fa_err(FATHOM_ENOMEM, "%s: vocabulary", name);
	if (!is_new)
		return fa_err(FATHOM_ESYNTAX, "%s: token \"%.*s\" given twice", name,
		              (int)(len < 64 ? len : 64), tok);
	s->value = id;
	if (id + 1 > wp->size)
		wp->size = (uint32_t)id + 1;
	/* the longest piece in characters bounds the longest-match search */
	uint32_t chars = 0;
	for (size_t i = 0; i < len; i++)
		chars += ((unsigned char)tok[i] & 0xc0) != 0x80;
	if (chars > wp->max_piece)
		wp->max_piece = chars;
	wp->nlen[chars]++;
	return 0;
}

static int set_unk(em_wordpiece *wp, const char *unk, const char *name)
{
	const fa_strmap_slot *s = fa_strmap_find(&wp->vocab, unk, strlen(unk));
	if (!s)
		return fa_err(FATHOM_ESYNTAX, "%s: the unknown token \"%.64s\" is not in the vocabulary",
		              name, unk);
	wp->unk = (uint32_t)s->value;
	return 0;
}

/* vocab.txt: a token a line, ids from 0; a vocabulary with no capital
 * letter outside its [SPECIAL] tokens is uncased (lowercased and accents
 * stripped, as bert-base-uncased), else cased. */
static int parse_vocab_txt(em_wordpiece *wp, const char *data, size_t len, const char *name)
{
	size_t i = 0;
	uint64_t id = 0;
	int cased = 0;
	while (i < len) {
		const char *nl = memchr(data + i, '\n', len - i);
		size_t e = nl ? (size_t)(nl - data) : len, l = e - i;
		while (l && (data[i + l - 1] == '\r' || data[i + l - 1] == ' ' || data[i + l - 1] == '\t'))
			l--;
		if (memchr(data + i, '\0', l))
			return fa_err(FATHOM_ESYNTAX, "%s: line %llu: a NUL byte", name,
			              (unsigned long long)id + 1);
		int rc = add_token(wp, data + i, l, id, name);
		if (rc)
			return rc;
		if (!(l > 2 && data[i] == '[' && data[i + l - 1] == ']'))
			for (size_t k = 0; k < l; k++)
				cased |= data[i + k] >= 'A' && data[i + k] <= 'Z';
		id++;
		i = e + 1;
	}
	wp->lowercase = wp->strip_accents = !cased;
	return set_unk(wp, "[UNK]", name);
}

static int json_flag(json_t *o, const char *key, int def)
{
	json_t *v = json_object_get(o, key);
	return json_is_boolean(v) ? json_is_true(v) : def;
}

static int parse_normalizer(em_wordpiece *wp, json_t *n, const char *name)
{
	if (!n || json_is_null(n)) {
		wp->clean_text = wp->chinese = wp->strip_accents = wp->lowercase = 0;
		return 0;
	}
	const char *type = json_string_value(json_object_get(n, "type"));
	if (!type || strcmp(type, "BertNormalizer") != 0)
		return fa_err(FATHOM_EINVAL, "%s: normalizer \"%.64s\" is not supported (only "
		              "BertNormalizer or none)", name, type ? type : "?");
	wp->clean_text = json_flag(n, "clean_text", 1);
	wp->chinese = json_flag(n, "handle_chinese_chars", 1);
	wp->lowercase = json_flag(n, "lowercase", 1);
	wp->strip_accents = json_flag(n, "strip_accents", wp->lowercase);
	return 0;
}

static int by_first_then_longest(const void *x, const void *y)
{
	const struct added *a = x, *b = y;
	int fa = (unsigned char)a->s[0], fb = (unsigned char)b->s[0];
	if (fa != fb)
		return fa - fb;
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return memcmp(a->s, b->s, a->len);
}

/* added_tokens: [{"id": N, "content": "...", "single_word": bool,
 * "normalized": bool, ...}]; the normalized ones are left out. */
static int parse_added(em_wordpiece *wp, json_t *arr, const char *name)
{
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr))
		return fa_err(FATHOM_ESYNTAX, "%s: added_tokens is not a list", name);
	size_t n = json_array_size(arr), pool = 0;
	if (n > EM_WP_MAX_ADDED)
		return fa_err(FATHOM_ETOOBIG, "%s: more than %u added tokens", name, EM_WP_MAX_ADDED);
	wp->added = fa_calloc(n ? n : 1, sizeof *wp->added);
	wp->added_pool = fa_malloc(n * (EM_WP_MAX_TOKEN + 1) + 1);
	if (!wp->added || !wp->added_pool)
		return fa_err(FATHOM_ENOMEM, "%s: added tokens", name);
	for (size_t i = 0; i < n; i++) {
		json_t *t = json_array_get(arr, i), *id = json_object_get(t, "id");
		const char *c = json_string_value(json_object_get(t, "content"));
		size_t cl = c ? strlen(c) : 0;
		if (!c || cl == 0 || cl > EM_WP_MAX_TOKEN || !json_is_integer(id) ||
		    json_integer_value(id) < 0 || json_integer_value(id) >= (json_int_t)EM_WP_MAX_VOCAB)
			return fa_err(FATHOM_ESYNTAX, "%s: added token %zu: not a content of 1 to %u bytes "
			              "and an id under %u", name, i, EM_WP_MAX_TOKEN, EM_WP_MAX_VOCAB);
		uint32_t idv = (uint32_t)json_integer_value(id);
		if (idv + 1 > wp->size)
			wp->size = idv + 1;
		if (!fa_strmap_find(&wp->vocab, c, cl)) {   /* a token of its own */
			uint32_t chars = 0;
			for (size_t k = 0; k < cl; k++)
				chars += ((unsigned char)c[k] & 0xc0) != 0x80;
			wp->nlen[chars]++;
		}
		if (json_flag(t, "normalized", 0))
			continue;
		struct added *a = &wp->added[wp->nadded++];
		a->s = wp->added_pool + pool;
		memcpy(a->s, c, cl + 1);
		pool += cl + 1;
		a->len = (uint32_t)cl;
		a->id = idv;
		a->single_word = json_flag(t, "single_word", 0);
		/* its last character (0 where not UTF-8) */
		const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)c;
		size_t b = cl - 1;
		while (b > 0 && (u[b] & 0xc0) == 0x80)
			b--;
		if (utf8proc_iterate(u + b, (utf8proc_ssize_t)(cl - b), &a->last) < 1)
			a->last = 0;
	}
	qsort(wp->added, wp->nadded, sizeof *wp->added, by_first_then_longest);
	uint32_t k = 0;
	for (unsigned b = 0; b < 257; b++) {
		while (k < wp->nadded && (unsigned char)wp->added[k].s[0] < b)
			k++;
		wp->added_at[b] = k;
	}
	return 0;
}

static int parse_json(em_wordpiece *wp, const char *data, size_t len, const char *name)
{
	json_error_t je;
	json_t *root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return fa_err(FATHOM_ESYNTAX, "%s: %s at line %d", name, je.text, je.line);
	int rc = 0;
	json_t *model = json_object_get(root, "model");
	const char *type = json_string_value(json_object_get(model, "type"));
	if (!json_is_object(model)) {
		rc = fa_err(FATHOM_ESYNTAX, "%s: no tokenizer model", name);
		goto done;
	}
	if (!type || strcmp(type, "WordPiece") != 0) {
		rc = fa_err(FATHOM_EINVAL, "%s: a %.32s tokenizer; only WordPiece tokenizers are "
		            "supported (not Unigram, BPE or WordLevel)", name, type ? type : "untyped");
		goto done;
	}
	json_t *pre = json_object_get(root, "pre_tokenizer");
	const char *pt = json_string_value(json_object_get(pre, "type"));
	if (!pt || strcmp(pt, "BertPreTokenizer") != 0) {
		rc = fa_err(FATHOM_EINVAL, "%s: pre_tokenizer \"%.64s\" is not supported (only "
		            "BertPreTokenizer)", name, pt ? pt : "none");
		goto done;
	}
	if ((rc = parse_normalizer(wp, json_object_get(root, "normalizer"), name)))
		goto done;
	json_t *v = json_object_get(model, "max_input_chars_per_word");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 1) {
			rc = fa_err(FATHOM_ESYNTAX, "%s: max_input_chars_per_word is not a count", name);
			goto done;
		}
		json_int_t m = json_integer_value(v);
		/* longer words are unknown either way; past the limit they are
		 * unknown a little sooner than HF would say */
		wp->max_word = m > (json_int_t)EM_WP_MAX_WORD_CHARS ? EM_WP_MAX_WORD_CHARS : (uint32_t)m;
	}
	v = json_object_get(model, "continuing_subword_prefix");
	if (v && !json_is_null(v)) {
		const char *pfx = json_string_value(v);
		size_t pl = pfx ? strlen(pfx) : SIZE_MAX;
		if (pl > EM_WP_MAX_PREFIX) {
			rc = fa_err(FATHOM_ESYNTAX, "%s: continuing_subword_prefix is not a string of at "
			            "most %u bytes", name, EM_WP_MAX_PREFIX);
			goto done;
		}
		memcpy(wp->prefix, pfx, pl + 1);
		wp->prefix_len = pl;
	}
	json_t *vocab = json_object_get(model, "vocab");
	if (!json_is_object(vocab) || json_object_size(vocab) == 0) {
		rc = fa_err(FATHOM_ESYNTAX, "%s: no vocabulary (model.vocab)", name);
		goto done;
	}
	if (json_object_size(vocab) > EM_WP_MAX_VOCAB) {
		rc = fa_err(FATHOM_ETOOBIG, "%s: more than %u tokens", name, EM_WP_MAX_VOCAB);
		goto done;
	}
	const char *key;
	json_t *val;
	json_object_foreach(vocab, key, val) {
		if (!json_is_integer(val) || json_integer_value(val) < 0) {
			rc = fa_err(FATHOM_ESYNTAX, "%s: token \"%.64s\": an id that is not a count", name,
			             key);
			goto done;
		}
		if ((rc = add_token(wp, key, strlen(key), (uint64_t)json_integer_value(val), name)))
			goto done;
	}
	v = json_object_get(model, "unk_token");
	const char *unk = json_string_value(v);
	if ((rc = set_unk(wp, unk ? unk : "[UNK]", name)))
		goto done;
	rc = parse_added(wp, json_object_get(root, "added_tokens"), name);
done:
	json_decref(root);
	return rc;
}

int em_wordpiece_parse(em_wordpiece **out, const char *data, size_t len, const char *name)
{
	*out = NULL;
	if (len > EM_WP_MAX_FILE)
		return fa_err(FATHOM_ETOOBIG, "%s: more than %zu bytes", name, EM_WP_MAX_FILE);
	em_wordpiece *wp = fa_calloc(1, sizeof *wp);
	if (!wp)
		return fa_err(FATHOM_ENOMEM, "%s: tokenizer", name);
	wp_init(wp);
	size_t i = 0;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	int rc = i < len && data[i] == '{' ? parse_json(wp, data, len, name)
	                                   : parse_vocab_txt(wp, data, len, name);
	if (rc) {
		em_wordpiece_free(wp);
		return rc;
	}
	*out = wp;
	return 0;
}

int em_wordpiece_open(em_wordpiece **out, const char *path)
{
	*out = NULL;
	char *data;
	size_t len;
	int rc = fa_read_file(&data, &len, path, EM_WP_MAX_FILE);
	if (rc)
		return fa_err_wrap(rc, "tokenizer %s", path);
	rc = em_wordpiece_parse(out, data, len, path);
	fa_free(data);
	return rc;
}

uint32_t em_wordpiece_size(const em_wordpiece *wp)
{
	return wp->size;
}

uint32_t em_wordpiece_unk(const em_wordpiece *wp)
{
	return wp->unk;
}

int64_t em_wordpiece_id(const em_wordpiece *wp, const char *tok, size_t len)
{
	const fa_strmap_slot *s = fa_strmap_find(&wp->vocab, tok, len);
	return s ? (int64_t)s->value : -1;
}

uint32_t em_wordpiece_median_chars(const em_wordpiece *wp)
{
	uint64_t n = 0;
	for (uint32_t l = 0; l <= EM_WP_MAX_TOKEN; l++)
		n += wp->nlen[l];
	if (n == 0)
		return 0;
	/* the lengths at sorted places (n - 1) / 2 and n / 2, averaged and
	 * rounded down: numpy's median, as int() takes it */
	uint64_t lo = (n - 1) / 2, hi = n / 2, seen = 0;
	uint32_t a = 0, b = 0;
	int got_a = 0;
	for (uint32_t l = 0; l <= EM_WP_MAX_TOKEN; l++) {
		seen += wp->nlen[l];
		if (!got_a && seen > lo) {
			a = l;
			got_a = 1;
		}
		if (seen > hi) {
			b = l;
			break;
		}
	}
	return (a + b) / 2;
}
