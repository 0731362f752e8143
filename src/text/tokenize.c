/*
 * tokenize.c — the code-aware tokenizer: splits text into words, numbers,
 * identifiers with their parts, and CJK bigrams, each normalised (NFKC +
 * case fold) and, for words and identifier parts, stemmed.
 *
 * The rules, decided once so ingest and query agree:
 *
 *  - A "run" is a maximal stretch of letters, digits and inner joiners.
 *    Joiners: any number of '_'; a single '-' or '.' between two
 *    letters/digits; a single ',' between two digits ("1,000"). Anything
 *    else, including leading and trailing joiners ("__init__", "end."), a
 *    double hyphen or an apostrophe, separates runs.
 *  - A run splits into parts at joiners, at lower->Upper case changes
 *    (getUser), before the last capital of an acronym followed by a word
 *    (HTTPServer -> http, server; parseHTTPRequest -> parse, http, request),
 *    and between letters and digits (sha256sum -> sha, 256, sum). An acronym
 *    followed by one lowercase letter keeps a plural 's' (URLs, IDs) and
 *    otherwise splits it off: IPv6 -> ip, v, 6 (whole "ipv6").
 *  - A segment that alternates letters and digits more than three times
 *    (hex hashes, base64) is not split: its parts would be noise.
 *  - A run of one part is one token: TOK_WORD (letters, stemmed), TOK_NUM
 *    (digits) or TOK_IDENT (a hash-like mix, unstemmed).
 *  - A run of several parts gives the whole (TOK_IDENT, unstemmed; TOK_NUM
 *    for digits joined by '.' or ',' as in 2.0.1) at the position of its
 *    first part, then each part (TOK_PART, stemmed unless digits) at
 *    consecutive positions. So "getUserName" matches the query
 *    "getUserName" (whole) and the phrase "user name" (parts).
 *  - Han, Hiragana, Katakana and Hangul form CJK runs, indexed as
 *    overlapping bigrams (one position each); a lone character is a unigram.
 *    Each character of a longer run is also emitted as TOK_CJK_CHAR beside
 *    its bigram (the index holds it; a query reads only the bigrams).
 *  - Invalid UTF-8 separates and is counted (rule in utf8.c).
 *  - Terms are cut at TEXT_MAX_TERM bytes on a character boundary. A run of
 *    more than RUN_MAX_CHARS characters ends at its last joiner before the
 *    limit (the rest is a new run); without a joiner it is one part.
 */
#include <utf8proc.h>

#include "text/text.h"

#define RUN_MAX_CHARS 128

/* Raw bytes normalised for one term: NFKC rarely shrinks text by more than
 * a factor of four, and the result is cut to TEXT_MAX_TERM anyway. */
#define TERM_RAW_MAX (4 * TEXT_MAX_TERM)

enum char_class {
	CC_SEP = 0,
	CC_LOWER,
	CC_UPPER,
	CC_LETTER,     /* caseless letter (Lo, Lm, Nl outside CJK) */
	CC_DIGIT,
	CC_MARK,       /* combining mark or format character: continues a char */
	CC_CJK,
	CC_UNDERSCORE,
	CC_HYPHEN,
	CC_DOT,
	CC_COMMA,
	CC_INVALID
};

static int is_alnum_class(int c)
{
	return c >= CC_LOWER && c <= CC_DIGIT;
}

static int is_letter_class(int c)
{
	return c >= CC_LOWER && c <= CC_LETTER;
}

static const uint8_t ascii_class[128] = {
	['0'] = CC_DIGIT, ['1'] = CC_DIGIT, ['2'] = CC_DIGIT, ['3'] = CC_DIGIT,
	['4'] = CC_DIGIT, ['5'] = CC_DIGIT, ['6'] = CC_DIGIT, ['7'] = CC_DIGIT,
	['8'] = CC_DIGIT, ['9'] = CC_DIGIT,
	['A'] = CC_UPPER, ['B'] = CC_UPPER, ['C'] = CC_UPPER, ['D'] = CC_UPPER,
	['E'] = CC_UPPER, ['F'] = CC_UPPER, ['G'] = CC_UPPER, ['H'] = CC_UPPER,
	['I'] = CC_UPPER, ['J'] = CC_UPPER, ['K'] = CC_UPPER, ['L'] = CC_UPPER,
	['M'] = CC_UPPER, ['N'] = CC_UPPER, ['O'] = CC_UPPER, ['P'] = CC_UPPER,
	['Q'] = CC_UPPER, ['R'] = CC_UPPER, ['S'] = CC_UPPER, ['T'] = CC_UPPER,
	['U'] = CC_UPPER, ['V'] = CC_UPPER, ['W'] = CC_UPPER, ['X'] = CC_UPPER,
	['Y'] = CC_UPPER, ['Z'] = CC_UPPER,
	['a'] = CC_LOWER, ['b'] = CC_LOWER, ['c'] = CC_LOWER, ['d'] = CC_LOWER,
	['e'] = CC_LOWER, ['f'] = CC_LOWER, ['g'] = CC_LOWER, ['h'] = CC_LOWER,
	['i'] = CC_LOWER, ['j'] = CC_LOWER, ['k'] = CC_LOWER, ['l'] = CC_LOWER,
	['m'] = CC_LOWER, ['n'] = CC_LOWER, ['o'] = CC_LOWER, ['p'] = CC_LOWER,
	['q'] = CC_LOWER, ['r'] = CC_LOWER, ['s'] = CC_LOWER, ['t'] = CC_LOWER,
	['u'] = CC_LOWER, ['v'] = CC_LOWER, ['w'] = CC_LOWER, ['x'] = CC_LOWER,
	['y'] = CC_LOWER, ['z'] = CC_LOWER,
	['_'] = CC_UNDERSCORE, ['-'] = CC_HYPHEN, ['.'] = CC_DOT, [','] = CC_COMMA,
};

/* Scripts written without spaces between words that we index as bigrams. */
static int is_cjk_codepoint(int32_t cp)
{
	static const int32_t ranges[][2] = {
		{ 0x1100, 0x11FF },   /* Hangul Jamo */
		{ 0x3005, 0x3007 },   /* iteration mark, closing mark, ideographic zero */
		{ 0x3021, 0x3029 },   /* Hangzhou numerals */
		{ 0x3031, 0x3035 },   /* kana repeat marks */
		{ 0x3038, 0x303C },
		{ 0x3040, 0x30FF },   /* Hiragana, Katakana */
		{ 0x3100, 0x312F },   /* Bopomofo */
		{ 0x3130, 0x318F },   /* Hangul compatibility Jamo */
		{ 0x31A0, 0x31BF },   /* Bopomofo extended */
		{ 0x31F0, 0x31FF },   /* Katakana phonetic extensions */
		{ 0x3400, 0x4DBF },   /* CJK extension A */
		{ 0x4E00, 0x9FFF },   /* CJK unified ideographs */
		{ 0xA960, 0xA97F },   /* Hangul Jamo extended A */
		{ 0xAC00, 0xD7FF },   /* Hangul syllables, Jamo extended B */
		{ 0xF900, 0xFAFF },   /* CJK compatibility ideographs */
		{ 0xFF66, 0xFFDC },   /* halfwidth Katakana and Hangul */
		{ 0x1B000, 0x1B16F }, /* Kana supplement, extended */
		{ 0x20000, 0x323AF }, /* CJK extensions B.. */
	};
	if (cp < 0x1100)
		return 0;
	for (size_t i = 0; i < FA_ARRAY_LEN(ranges); i++) {
		if (cp < ranges[i][0])
			return 0;
		if (cp <= ranges[i][1])
			return 1;
	}
	return 0;
}

static int32_t decode_valid(const unsigned char *s, size_t len)
{
	switch (len) {
	case 2:
		return ((int32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F);
	case 3:
		return ((int32_t)(s[0] & 0x0F) << 12) | ((int32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F);
	default:
		return ((int32_t)(s[0] & 0x07) << 18) | ((int32_t)(s[1] & 0x3F) << 12) |
		       ((int32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
	}
}

static int classify_codepoint(int32_t cp)
{
	switch (utf8proc_category(cp)) {
	case UTF8PROC_CATEGORY_LU:
	case UTF8PROC_CATEGORY_LT:
		return CC_UPPER;
	case UTF8PROC_CATEGORY_LL:
		return CC_LOWER;
	case UTF8PROC_CATEGORY_LM:
	case UTF8PROC_CATEGORY_LO:
	case UTF8PROC_CATEGORY_NL:
		return is_cjk_codepoint(cp) ? CC_CJK : CC_LETTER;
	case UTF8PROC_CATEGORY_ND:
		return CC_DIGIT;
	case UTF8PROC_CATEGORY_MN:
	case UTF8PROC_CATEGORY_MC:
	case UTF8PROC_CATEGORY_ME:
		return CC_MARK;
	case UTF8PROC_CATEGORY_CF:
		/* Soft hyphen, joiners, BOM continue a word (normalisation drops
		 * them); a zero-width space is a space. */
		return cp == 0x200B ? CC_SEP : CC_MARK;
	default:
		return CC_SEP;
	}
}

static int char_at_unicode(const unsigned char *s, size_t n, size_t i, size_t *len);

/* The class of the character at s[i] and its length in bytes. ASCII, most
 * of any corpus, is a table lookup inlined into the scanning loops. */
static inline int char_at(const unsigned char *s, size_t n, size_t i, size_t *len)
{
	if (FA_LIKELY(s[i] < 0x80)) {
		*len = 1;
		return ascii_class[s[i]];
	}
	return char_at_unicode(s, n, i, len);
}

static int char_at_unicode(const unsigned char *s, size_t n, size_t i, size_t *len)
{
	size_t k = text_utf8_seq_len(s + i, n - i);
	if (k == 0) {
		/* The invalid byte and up to three continuation bytes after it:
		 * the same unit text_utf8_invalid_count() counts. */
		k = 1;
		while (i + k < n && k < 4 && (s[i + k] & 0xC0) == 0x80)
			k++;
		*len = k;
		return CC_INVALID;
	}
	*len = k;
	return classify_codepoint(decode_valid(s + i, k));
}

/* ---- one call's state ---------------------------------------------------- */

typedef struct part {
	uint32_t start, end;   /* bytes in the input */
	uint8_t has_digit, has_letter, is_ascii;
	uint8_t term_len;
	char term[TEXT_MAX_TERM + 1];
} part;

typedef struct tokenizer {
	text_analyzer *an;
	const unsigned char *s;
	size_t n;
	uint32_t pos;
	text_token_cb cb;
	void *ctx;
	size_t invalid;
	fbuf scratch;          /* non-ASCII normalisation */

	/* The current run: characters (a joiner sequence counts as one). */
	uint32_t off[RUN_MAX_CHARS + 1];
	uint8_t cls[RUN_MAX_CHARS];
	size_t nchars;
	int numeric_joiners_only;  /* every joiner is '.' or ',' */
	int giant;                 /* over RUN_MAX_CHARS with no joiner: one part */

	part parts[RUN_MAX_CHARS];
	size_t nparts;
} tokenizer;

/* Normalise s[start, end) into term (at most TEXT_MAX_TERM bytes, cut on a
 * character boundary); returns the length. */
static int make_term(tokenizer *t, size_t start, size_t end, int is_ascii,
                     char *term, uint8_t *term_len)
{
	const unsigned char *s = t->s;
	size_t len = end - start;
	if (is_ascii) {
		if (len > TEXT_MAX_TERM)
			len = TEXT_MAX_TERM;
		for (size_t i = 0; i < len; i++) {
			unsigned char c = s[start + i];
			term[i] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
		}
		term[len] = '\0';
		*term_len = (uint8_t)len;
		return FATHOM_OK;
	}
	if (len > TERM_RAW_MAX)
		end = text_utf8_floor((const char *)s, t->n, start + TERM_RAW_MAX);
	fbuf_reset(&t->scratch);
	int rc = text_normalize(&t->scratch, (const char *)s + start, end - start);
	if (rc != FATHOM_OK)
		return rc;
	len = t->scratch.len;
	if (len > TEXT_MAX_TERM)
		len = text_utf8_floor((const char *)t->scratch.data, t->scratch.len, TEXT_MAX_TERM);
	if (len > 0)
		memcpy(term, t->scratch.data, len);
	term[len] = '\0';
	*term_len = (uint8_t)len;
	return FATHOM_OK;
}

static int emit(tokenizer *t, const char *term, size_t len, uint32_t pos,
                size_t start, size_t end, int kind)
{
	text_token tok;
	tok.term = term;
	tok.len = (uint32_t)len;
	tok.pos = pos;
	tok.start = (uint32_t)start;
	tok.end = (uint32_t)end;
	tok.kind = (uint8_t)kind;
	return t->cb(t->ctx, &tok);
}

/* Emit a word or part, stemmed unless it holds a digit. */
static int emit_stemmed(tokenizer *t, const part *p, uint32_t pos, int kind)
{
	if (p->has_digit)
		return emit(t, p->term, p->term_len, pos, p->start, p->end, kind);
	size_t len;
	const char *st = text_stem(t->an, p->term, p->term_len, &len);
	if (!st)
		return FATHOM_ENOMEM;
	return emit(t, st, len, pos, p->start, p->end, kind);
}

/* ---- runs ----------------------------------------------------------------- */

/* Collect the run starting at the alnum character at s[i]; returns its end.
 * Fills t->off/cls/nchars. */
static size_t scan_run(tokenizer *t, size_t i)
{
	const unsigned char *s = t->s;
	size_t n = t->n, end = i, last_joiner = 0;
	int have_joiner = 0;
	t->nchars = 0;
	t->numeric_joiners_only = 1;
	t->giant = 0;

	while (i < n) {
		size_t len;
		int c = char_at(s, n, i, &len);
		if (is_alnum_class(c) || (c == CC_MARK && t->nchars > 0)) {
			if (t->nchars == RUN_MAX_CHARS) {
				if (have_joiner) {
					/* End at the last joiner; the rest is a new run. */
					t->nchars = last_joiner;
					end = t->off[last_joiner];
					break;
				}
				/* One giant segment (base64, minified code): one part. */
				t->giant = 1;
				while (i < n) {
					c = char_at(s, n, i, &len);
					if (!is_alnum_class(c) && c != CC_MARK)
						break;
					i += len;
				}
				end = i;
				break;
			}
			t->off[t->nchars] = (uint32_t)i;
			t->cls[t->nchars++] = (uint8_t)c;
			i += len;
			end = i;
			continue;
		}
		if (c < CC_UNDERSCORE || c > CC_COMMA)
			break;
		/* A joiner: it belongs to the run only between two alnums. */
		size_t j = i + 1;
		if (c == CC_UNDERSCORE) {
			while (j < n && s[j] == '_')
				j++;
		}
		if (j >= n)
			break;
		size_t next_len;
		int next = char_at(s, n, j, &next_len);
		if (!is_alnum_class(next))
			break;
		if (c == CC_COMMA && (next != CC_DIGIT || t->cls[t->nchars - 1] != CC_DIGIT))
			break;
		if (t->nchars + 2 > RUN_MAX_CHARS) {
			if (have_joiner) {
				t->nchars = last_joiner;
				end = t->off[last_joiner];
			}
			break;
		}
		if (c != CC_DOT && c != CC_COMMA)
			t->numeric_joiners_only = 0;
		have_joiner = 1;
		last_joiner = t->nchars;
		t->off[t->nchars] = (uint32_t)i;
		t->cls[t->nchars++] = (uint8_t)c;
		i = j;
	}
	t->off[t->nchars] = (uint32_t)end;
	return end;
}

/* Add the characters [a, b) as a part ending at byte end. */
static void add_part(tokenizer *t, size_t a, size_t b, size_t end)
{
	part *p = &t->parts[t->nparts++];
	p->start = t->off[a];
	p->end = (uint32_t)end;
	p->has_digit = p->has_letter = 0;
	p->is_ascii = 1;
	for (size_t k = a; k < b; k++) {
		if (t->cls[k] == CC_DIGIT)
			p->has_digit = 1;
		else if (is_letter_class(t->cls[k]))
			p->has_letter = 1;
	}
	/* Only the bytes make_term() reads matter. */
	size_t check_end = FA_MIN(end, (size_t)p->start + TERM_RAW_MAX);
	for (size_t k = p->start; k < check_end; k++) {
		if (t->s[k] >= 0x80) {
			p->is_ascii = 0;
			break;
		}
	}
}

/* Lowercase letters (marks skipped) from character k, counting up to 2. */
static size_t lower_run(const tokenizer *t, size_t k, size_t b)
{
	size_t count = 0;
	for (; k < b && count < 2; k++) {
		if (t->cls[k] == CC_MARK)
			continue;
		if (t->cls[k] != CC_LOWER)
			break;
		count++;
	}
	return count;
}

/* The first non-mark class at or after k, or CC_SEP at the end. */
static int class_from(const tokenizer *t, size_t k, size_t b)
{
	for (; k < b; k++) {
		if (t->cls[k] != CC_MARK)
			return t->cls[k];
	}
	return CC_SEP;
}

/* Split the characters [a, b) of one joiner-free segment into parts. */
static void split_segment(tokenizer *t, size_t a, size_t b)
{
	/* Hash-like: letters and digits alternating often. */
	int prev = -1;
	unsigned flips = 0;
	for (size_t k = a; k < b; k++) {
		int c = t->cls[k];
		if (c == CC_MARK)
			continue;
		if (prev != -1 && (c == CC_DIGIT) != (prev == CC_DIGIT))
			flips++;
		prev = c;
	}
	if (flips > 3) {
		add_part(t, a, b, t->off[b]);
		return;
	}

	size_t begin = a, ups = 0, last_up = a;
	prev = -1;
	for (size_t k = a; k < b; k++) {
		int c = t->cls[k];
		if (c == CC_MARK)
			continue;
		size_t cut = 0;
		if (prev != -1) {
			if ((c == CC_DIGIT) != (prev == CC_DIGIT)) {
				cut = k;
			} else if (prev == CC_LOWER && c == CC_UPPER) {
				cut = k;
			} else if (prev == CC_UPPER && c == CC_LOWER && ups >= 2) {
				if (lower_run(t, k, b) >= 2)
					cut = last_up;                /* HTTPServer */
				else if (!(t->s[t->off[k]] == 's' && class_from(t, k + 1, b) != CC_LOWER))
					cut = k;                      /* IPv6, but URLs */
			}
		}
		if (cut > begin) {
			add_part(t, begin, cut, t->off[cut]);
			begin = cut;
		}
		if (c == CC_UPPER) {
			ups = prev == CC_UPPER ? ups + 1 : 1;
			last_up = k;
		} else {
			ups = 0;
		}
		prev = c;
	}
	add_part(t, begin, b, t->off[b]);
}

/* A field's positions are 32-bit: the error when the next one would not fit. */
static int positions_full(void)
{
	return fa_err(FATHOM_ETOOBIG, "more than 2^32 token positions in one field");
}

/* Split the run into parts, normalise them, and emit the tokens. */
static int emit_run(tokenizer *t, size_t run_start, size_t run_end)
{
	int rc;
	t->nparts = 0;
	if (t->nchars == 0)
		return FATHOM_OK;
	if (t->giant) {
		add_part(t, 0, t->nchars, run_end);
	} else {
		size_t seg = 0;
		for (size_t k = 0; k <= t->nchars; k++) {
			if (k == t->nchars || (t->cls[k] >= CC_UNDERSCORE && t->cls[k] <= CC_COMMA)) {
				if (k > seg)
					split_segment(t, seg, k);
				seg = k + 1;
			}
		}
	}

	/* Normalise; drop parts that normalise to nothing (ignorables). */
	size_t kept = 0;
	int is_ascii = 1;
	for (size_t i = 0; i < t->nparts; i++) {
		part *p = &t->parts[i];
		rc = make_term(t, p->start, p->end, p->is_ascii, p->term, &p->term_len);
		if (rc != FATHOM_OK)
			return rc;
		is_ascii &= p->is_ascii;
		if (p->term_len > 0)
			t->parts[kept++] = *p;
	}
	t->nparts = kept;
	if (kept == 0)
		return FATHOM_OK;
	if (t->pos > UINT32_MAX - kept)
		return positions_full();

	if (kept == 1) {
		part *p = &t->parts[0];
		int kind = p->has_digit ? (p->has_letter ? TOK_IDENT : TOK_NUM) : TOK_WORD;
		rc = kind == TOK_WORD ? emit_stemmed(t, p, t->pos, TOK_WORD)
		                      : emit(t, p->term, p->term_len, t->pos, p->start, p->end, kind);
		t->pos++;
		return rc;
	}

	int all_digits = t->numeric_joiners_only;
	for (size_t i = 0; i < kept && all_digits; i++)
		all_digits = t->parts[i].has_digit && !t->parts[i].has_letter;
	char whole[TEXT_MAX_TERM + 1];
	uint8_t whole_len;
	rc = make_term(t, run_start, run_end, is_ascii, whole, &whole_len);
	if (rc == FATHOM_OK)
		rc = emit(t, whole, whole_len, t->pos, run_start, run_end,
		          all_digits ? TOK_NUM : TOK_IDENT);
	for (size_t i = 0; i < kept && rc == FATHOM_OK; i++)
		rc = emit_stemmed(t, &t->parts[i], t->pos + (uint32_t)i, TOK_PART);
	t->pos += (uint32_t)kept;
	return rc;
}

/* ---- plain runs ------------------------------------------------------------ */

static int is_ascii_lower(unsigned char c)
{
	return c >= 'a' && c <= 'z';
}

static int is_ascii_upper(unsigned char c)
{
	return c >= 'A' && c <= 'Z';
}

/* Most runs are one plain part: ASCII letters in one case or capitalised
 * (word, Word, WORD), or ASCII digits, up to TEXT_MAX_TERM of them and
 * followed by an ASCII separator or the end. scan_run and emit_run would
 * find one part there and emit it as a word (stemmed) or a number; this
 * emits the same token without their per-character tables. Returns the
 * run's end, or 0 when the run at s[i] is not plain (the general path
 * takes it). */
static size_t emit_plain_run(tokenizer *t, size_t i, int *rc)
{
	const unsigned char *s = t->s;
	size_t n = t->n, j = i;
	if (s[i] >= '0' && s[i] <= '9') {
		while (j < n && s[j] >= '0' && s[j] <= '9')
			j++;
	} else if (is_ascii_lower(s[i]) || (is_ascii_upper(s[i]) && (i + 1 == n || !is_ascii_upper(s[i + 1])))) {
		j++;
		while (j < n && is_ascii_lower(s[j]))
			j++;
	} else if (is_ascii_upper(s[i])) {
		while (j < n && is_ascii_upper(s[j]))
			j++;
	} else {
		return 0;
	}
	if (j - i > TEXT_MAX_TERM || (j < n && (s[j] >= 0x80 || ascii_class[s[j]] != CC_SEP)))
		return 0;
	if (t->pos == UINT32_MAX) {
		*rc = positions_full();
		return j;
	}
	part p;
	p.start = (uint32_t)i;
	p.end = (uint32_t)j;
	p.has_digit = s[i] <= '9';
	p.term_len = (uint8_t)(j - i);
	for (size_t k = 0; k < j - i; k++) {
		unsigned char c = s[i + k];
		p.term[k] = (char)(is_ascii_upper(c) ? c + ('a' - 'A') : c);
	}
	p.term[j - i] = '\0';
	*rc = p.has_digit ? emit(t, p.term, p.term_len, t->pos, i, j, TOK_NUM)
	                  : emit_stemmed(t, &p, t->pos, TOK_WORD);
	t->pos++;
	return j;
}

/* ---- CJK ------------------------------------------------------------------ */

/* Characters NFKC leaves alone, so a bigram of them is copied as is. */
static int is_nfkc_stable_cjk(const unsigned char *s, size_t len)
{
	if (len != 3)
		return 0;
	int32_t cp = decode_valid(s, 3);
	return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
	       (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FA) ||
	       (cp >= 0xAC00 && cp <= 0xD7A3);
}

/* Emit the CJK term s[start, end) (a bigram whose second character begins
 * at mid, or one character with mid == end) at position pos. */
static int emit_cjk(tokenizer *t, size_t start, size_t mid, size_t end, uint32_t pos, int kind)
{
	char term[TEXT_MAX_TERM + 1];
	uint8_t len;
	const unsigned char *s = t->s;
	if (end - start == 6 && mid - start == 3 && is_nfkc_stable_cjk(s + start, 3) &&
	    is_nfkc_stable_cjk(s + mid, 3)) {
		memcpy(term, s + start, 6);
		term[6] = '\0';
		len = 6;
	} else if (end - start == 3 && is_nfkc_stable_cjk(s + start, 3)) {
		memcpy(term, s + start, 3);
		term[3] = '\0';
		len = 3;
	} else {
		int rc = make_term(t, start, end, 0, term, &len);
		if (rc != FATHOM_OK)
			return rc;
		if (len == 0)
			return FATHOM_OK;
	}
	return emit(t, term, len, pos, start, end, kind);
}

/* Emit the CJK run starting at s[i]; returns its end. Each pair of
 * neighbours is a bigram at its own position; each character of a longer
 * run is also a TOK_CJK_CHAR at the position of the bigram it begins (the
 * last one at the last bigram's), so one character finds every chunk that
 * holds it. A lone character is one TOK_CJK unigram. */
static int scan_cjk(tokenizer *t, size_t i, size_t *run_end)
{
	const unsigned char *s = t->s;
	size_t n = t->n, prev_start = i, prev_end, count = 0;
	int rc = FATHOM_OK;

	/* A character here is a CJK code point and any marks after it. */
	size_t len;
	char_at(s, n, i, &len);
	i += len;
	while (i < n && char_at(s, n, i, &len) == CC_MARK)
		i += len;
	prev_end = i;
	while (i < n && rc == FATHOM_OK) {
		if (char_at(s, n, i, &len) != CC_CJK)
			break;
		size_t cur_start = i;
		i += len;
		while (i < n && char_at(s, n, i, &len) == CC_MARK)
			i += len;
		if (t->pos == UINT32_MAX)
			return positions_full();
		rc = emit_cjk(t, prev_start, cur_start, i, t->pos, TOK_CJK);
		if (rc == FATHOM_OK)
			rc = emit_cjk(t, prev_start, prev_end, prev_end, t->pos, TOK_CJK_CHAR);
		t->pos++;
		count++;
		prev_start = cur_start;
		prev_end = i;
	}
	if (rc == FATHOM_OK) {
		if (count > 0) {
			rc = emit_cjk(t, prev_start, prev_end, prev_end, t->pos - 1, TOK_CJK_CHAR);
		} else if (t->pos == UINT32_MAX) {
			rc = positions_full();
		} else {
			rc = emit_cjk(t, prev_start, prev_end, prev_end, t->pos, TOK_CJK);
			t->pos++;
		}
	}
	*run_end = prev_end;
	return rc;
}

/* ---- entry point ---------------------------------------------------------- */

int text_analyze(text_analyzer *a, const char *s, size_t n, uint32_t *pos,
                 text_token_cb cb, void *ctx, size_t *n_invalid)
{
	if (n_invalid)
		*n_invalid = 0;
	if (!a || !cb || (!s && n > 0))
		return fa_err(FATHOM_EINVAL, "text_analyze: missing analyser, text or callback");
	if (n > UINT32_MAX)
		return fa_err(FATHOM_ETOOBIG, "text of %zu bytes is over the 4 GiB field limit", n);

	/* The run arrays make this too big for the stack of small threads. */
	tokenizer *t = fa_malloc(sizeof *t);
	if (!t)
		return fa_err(FATHOM_ENOMEM, "allocating tokenizer state");
	t->an = a;
	t->s = (const unsigned char *)s;
	t->n = n;
	t->pos = pos ? *pos : 0;
	t->cb = cb;
	t->ctx = ctx;
	t->invalid = 0;
	fbuf_init(&t->scratch, 0);

	int rc = FATHOM_OK, plain = text_analyzer_plain_runs(a);
	size_t i = 0;
	while (i < n && rc == FATHOM_OK) {
		size_t len;
		int c = char_at(t->s, n, i, &len);
		if (is_alnum_class(c)) {
			size_t end = plain ? emit_plain_run(t, i, &rc) : 0;
			if (end == 0) {
				end = scan_run(t, i);
				rc = emit_run(t, i, end);
			}
			i = end;
		} else if (c == CC_CJK) {
			rc = scan_cjk(t, i, &i);
		} else {
			if (c == CC_INVALID)
				t->invalid++;
			i += len;
		}
	}

	if (pos)
		*pos = t->pos;
	if (n_invalid)
		*n_invalid = t->invalid;
	fbuf_free(&t->scratch);
	fa_free(t);
	return rc;
}
