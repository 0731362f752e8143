/*
 * text.h — text analysis: Unicode normalisation, the code-aware tokenizer,
 * stemming, stop words, and the chunkers that split a document into the
 * units fathom retrieves.
 *
 * The same analyser runs at ingest and at query time, so a query term and an
 * indexed term meet in one form: NFKC, case-folded, and (for plain words)
 * Snowball-stemmed.
 */
#ifndef FATHOM_TEXT_H
#define FATHOM_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "util/util.h"

/* Longest term kept, in bytes after normalisation; longer runs are cut at
 * a character boundary (they are hashes, base64, minified code...). */
#define TEXT_MAX_TERM 64

/* ---- UTF-8 (text/utf8.c) --------------------------------------------------- */

/* Length of the valid UTF-8 sequence starting at s[0] (1..4), or 0 if the
 * bytes there are not a valid sequence (overlong, surrogate, truncated...). */
size_t text_utf8_seq_len(const unsigned char *s, size_t n);

/* Count invalid sequences in [s, s+n). */
size_t text_utf8_invalid_count(const char *s, size_t n);

/* Copy s into out, replacing each invalid sequence by U+FFFD. Returns the
 * count replaced in *n_invalid. */
int text_utf8_repair(fbuf *out, const char *s, size_t n, size_t *n_invalid);

/* Largest k <= pos such that s[k] starts a UTF-8 sequence (or k == n). Used
 * so no chunk or snippet boundary splits a character. */
size_t text_utf8_floor(const char *s, size_t n, size_t pos);

/* NFKC + case fold of [s, s+n) appended to out (utf8proc). ASCII takes a
 * fast path. Invalid input is repaired first. */
int text_normalize(fbuf *out, const char *s, size_t n);

/* ---- tokenizer (text/tokenize.c) ----------------------------------------- */

enum text_token_kind {
	TOK_WORD = 0,   /* a plain word: letters only, stemmed */
	TOK_IDENT = 1,  /* a whole identifier with inner structure (getUserName,
	                 * snake_case, a1b2, kebab-case): kept whole, unstemmed */
	TOK_PART = 2,   /* one part of an identifier (get, user, name), stemmed */
	TOK_NUM = 3,    /* digits (possibly with . or , inside: 2.0.1) */
	TOK_CJK = 4,    /* a CJK character bigram (or a lone character) */
	TOK_CJK_CHAR = 5 /* one character of a longer CJK run, at the position of
	                  * the bigram it begins (the last: of the last bigram);
	                  * indexed so that a one-character query finds it,
	                  * skipped by the query planner */
};

typedef struct text_token {
	const char *term;   /* analysed form, NUL-terminated, valid during the callback */
	uint32_t len;
	uint32_t pos;       /* position in the field: parts take consecutive
	                     * positions, the whole identifier shares the position
	                     * of its first part */
	uint32_t start, end; /* byte range in the input */
	uint8_t kind;       /* enum text_token_kind */
} text_token;

typedef int (*text_token_cb)(void *ctx, const text_token *tok);

typedef struct text_analyzer text_analyzer;

/* lang: a Snowball algorithm name ("english", "german", ...) or "none"/NULL
 * for no stemming. FATHOM_EINVAL for an unknown language. */
int text_analyzer_new(text_analyzer **out, const char *lang);
void text_analyzer_free(text_analyzer *a);

/* Tokenize [s, s+n) calling cb for each token, positions starting at
 * *pos (updated to one past the last position used). A non-zero return from
 * cb stops and is returned. Invalid UTF-8 acts as a separator and is counted
 * in *n_invalid (may be NULL). */
int text_analyze(text_analyzer *a, const char *s, size_t n, uint32_t *pos,
                 text_token_cb cb, void *ctx, size_t *n_invalid);

/* on (the default): text_analyze emits plain runs (word, Word, WORD, 42)
 * without splitting them as identifiers, as the general path would. Off
 * sends every run through the general path, for tests that compare them. */
void text_analyzer_set_plain_runs(text_analyzer *a, int on);
int text_analyzer_plain_runs(const text_analyzer *a);

/* Stem one already-normalised word (returns it unchanged when stemming is
 * off). The result lives in the analyser until the next call. */
const char *text_stem(text_analyzer *a, const char *w, size_t n, size_t *out_len);

/* English stop words (normalised forms, before stemming): used by the AUTO
 * match mode to decide what is a keyword. */
int text_is_stopword(const char *w, size_t n);

/* Whether w[0..n) is in list[0..count), sorted in strcmp order. */
int text_in_sorted(const char *const *list, size_t count, const char *w, size_t n);

/* ---- exact identifiers (text/ident.c) -------------------------------------- */

enum text_ident_cat {
	TEXT_IDENT_TESTCASE = 0, /* TC-1001, testcase_42, TEST_AUTH */
	TEXT_IDENT_TICKET,       /* JIRA-4521, BUG-789, ABC-123 */
	TEXT_IDENT_VERSION,      /* v2.0.1, 1.0.0-beta, 3.5 */
	TEXT_IDENT_CLASS,        /* AuthService, HTTPServer */
	TEXT_IDENT_FUNCTION,     /* handle_login(), process_payment() */
	TEXT_IDENT_MODEL,        /* X100, Model-Y200, SKU-4567 */
	TEXT_IDENT_ERROR,        /* E0425, ENOENT, HTTP 404 */
	TEXT_IDENT_NCAT
};

#define TEXT_IDENT_MAX_KEY 64

typedef struct text_ident {
	uint8_t cat;                    /* enum text_ident_cat */
	uint32_t start, end;            /* the spelling: bytes [start, end) of the text */
	char key[TEXT_IDENT_MAX_KEY + 1]; /* canonical: case and delimiters folded,
	                                  * the same in every category */
	uint32_t key_len;
} text_ident;

typedef struct text_ident_opts {
	uint32_t min_len;       /* shortest spelling (default 3) */
	uint32_t max_per_text;  /* stop after this many (default 50) */
} text_ident_opts;

typedef int (*text_ident_cb)(void *ctx, const text_ident *id);

/* Find the identifiers of [s, s+n), in order. opts may be NULL. */
int text_idents(const char *s, size_t n, const text_ident_opts *opts, text_ident_cb cb, void *ctx);

/* The canonical key of a spelling (NUL-terminated in key): 0, or -1 when it
 * holds no letter or digit or does not fit in cap - 1 bytes. */
int text_ident_key(const char *s, size_t n, char *key, size_t cap, uint32_t *len);

/* The whole tokens (text_analyze's terms, in lower case) an index may hold
 * for the case- and delimiter-variants of the identifier spelled s[0..n):
 * its parts (split at delimiters, letters|digits, camelCase humps) joined at
 * each boundary by nothing, '_', '-' or '.' (two digit parts: '.' where s
 * has one, else '_', '-' or ','). Up to 16 combinations are tried; past
 * that, one joiner at every boundary. cb gets each NUL-terminated (cut at
 * TEXT_MAX_TERM, as the tokenizer cuts); a non-zero return stops. A whole
 * of letters alone ("spinlock") is also a plain word, which the index holds
 * stemmed: the caller stems it. Duplicates are possible. */
typedef int (*text_ident_variant_cb)(void *ctx, const char *term, size_t len);
int text_ident_variants(const char *s, size_t n, text_ident_variant_cb cb, void *ctx);

const char *text_ident_cat_name(int cat);
/* The category of a name ("ticket"...), or -1. */
int text_ident_cat_parse(const char *name);

/* ---- chunking (text/chunk.c) --------------------------------------------- */

enum text_doc_kind {
	DOC_TEXT = 0,
	DOC_MARKDOWN = 1,
	DOC_CODE = 2,
	DOC_HTML = 3,      /* chunked as text: the headings come from the HTML
	                    * pass (text_html_to_text), in text_chunk_opts */
	DOC_RST = 4,       /* reStructuredText: underlined (and overlined) titles */
	DOC_ASCIIDOC = 5   /* AsciiDoc: "= Title", "== Section", underlined titles */
};

/* Guess the kind and the language ("c", "python", "markdown", "text", ...)
 * of a file from its name. lang points to a static string. */
int text_detect_kind(const char *path, const char **lang);

/* A heading the chunker is given rather than finds (HTML's h1-h6): its
 * level, its text (anywhere in memory), and where it is in the document. */
typedef struct text_heading {
	uint32_t off;      /* the byte of the document it starts at */
	uint32_t level;    /* 1..6 */
	const char *text;
	uint32_t len;
} text_heading;

typedef struct text_chunk_opts {
	uint32_t target;   /* target bytes per chunk */
	uint32_t overlap;  /* bytes repeated from the end of the previous chunk */
	uint32_t max;      /* hard cap (a fenced block longer than this is cut) */
	/* DOC_HTML: its headings, in order of off (others ignore them) */
	const text_heading *headings;
	size_t n_headings;
} text_chunk_opts;

typedef struct text_chunk {
	uint32_t order;               /* 0, 1, 2, ... within the document */
	uint32_t byte_start, byte_end; /* [start, end) in the document; never
	                               * inside a UTF-8 sequence */
	uint32_t line_start, line_end; /* 1-based, inclusive */
	const char *headings;          /* heading trail "A > B > C" or "" */
	uint32_t headings_len;
} text_chunk;

typedef int (*text_chunk_cb)(void *ctx, const text_chunk *c);

/* Split a document. Every byte of the document belongs to at least one
 * chunk; chunks come in order. */
int text_chunk_doc(const char *doc, size_t n, int kind, const text_chunk_opts *opts,
                   text_chunk_cb cb, void *ctx);

/* A document title: the first Markdown H1 / setext heading, else NULL
 * (the caller falls back to the file name). Returns a pointer into doc. */
const char *text_markdown_title(const char *doc, size_t n, size_t *len);

/* The same for reStructuredText (its first title) and AsciiDoc (its first
 * level-1 title: "= Title"). NULL for other kinds, or with no title. */
const char *text_markup_title(const char *doc, size_t n, int kind, size_t *len);

/* ---- HTML as text (text/html.c) -------------------------------------------- */

/* An HTML document read as text: tags, comments, script and style removed,
 * character references decoded (HTML5's named ones, decimal, hex); every
 * newline of the source in place and no other, so line N of the text is
 * line N of the file. The title is <title>'s text, the headings h1-h6 with
 * where their text starts (for text_chunk_opts). */
typedef struct text_html {
	fbuf text;
	text_heading *headings;   /* their text points into strings */
	size_t n_headings, cap_headings;
	fbuf strings;             /* heading and title texts */
	const char *title;        /* NULL when there is none */
	size_t title_len;
} text_html;

void text_html_init(text_html *h);
void text_html_free(text_html *h);
/* Convert [src, src+n), valid UTF-8 (text_utf8_repair), into h (reset
 * first). Linear in n; the text is at most 6/5 of n (a few named
 * references are longer in UTF-8 than as written). */
int text_html_to_text(text_html *h, const char *src, size_t n);

#endif /* FATHOM_TEXT_H */
