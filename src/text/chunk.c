/*
 * chunk.c — splitting a document into chunks, the units fathom retrieves.
 *
 * Every line start gets a boundary strength, by document kind:
 *
 *   SECTION  a heading line: Markdown's ATX "## x" or setext text line;
 *            reStructuredText's title (its overline when it has one);
 *            AsciiDoc's "== x" or underlined title; HTML's h1-h6, given
 *            by the caller (text_chunk_opts.headings)
 *   BLOCK    code: a line at column 0, not starting with a closing bracket,
 *            after a blank line or after a line that is just "}"
 *   PARA     the first non-blank line after a blank line; in Markdown also
 *            after a heading and around fenced code blocks
 *   LINE     any other line start
 *   NONE     never a boundary: inside a fenced block that fits in max, and
 *            between a setext heading and its underline
 *
 * The document is cut recursively into "pieces": first always into its
 * sections, then a unit that fits in the target is one piece and a bigger
 * unit is split at the next weaker strength, down to single lines. A
 * fenced block, or a single line, is kept whole up to max; a line longer
 * than max is cut at UTF-8 boundaries (preferably at a space) into pieces
 * of about the target. Recursion is over the fixed list of strengths, so
 * its depth is bounded.
 *
 * Pieces are then packed greedily, in order, up to the target. A new chunk
 * starts at every Markdown heading, except that a heading of a deeper level
 * than the one the chunk started under joins it if it fits (a short "###"
 * subsection stays with its "##" section), and a chunk holding only
 * headings takes what follows. The first piece of a split code block
 * starts a fresh chunk, so a long function is not glued to a small
 * neighbour.
 *
 * Headings of the other markups act as Markdown's. reStructuredText has no
 * fixed levels: a title's level is the order in which its adornment style
 * (the character, and whether it is overlined too) first appears, as
 * docutils reads it.
 *
 * The chunks' own ranges tile the document, so every byte is in a chunk.
 * Overlap extends a chunk's start back to a line start at most `overlap`
 * bytes before it (never past the previous chunk's start, never across a
 * heading, never past max).
 */
#include "text/text.h"

#define CHUNK_DEFAULT_TARGET 1500
#define CHUNK_DEFAULT_MAX 6000
#define CHUNK_MIN_MAX 4          /* room for one character */
#define HEADING_TEXT_MAX 256     /* bytes of one heading kept in the trail */
#define HEADING_LEVELS 6

enum boundary {
	BRK_CUT = -2,     /* a piece cut inside a line */
	BRK_NONE = -1,
	BRK_LINE = 0,
	BRK_PARA = 1,
	BRK_BLOCK = 2,
	BRK_SECTION = 3,
	BRK_DOC = 4       /* the whole document, the top of the recursion */
};

/* Per-line flags. */
#define LF_BLANK 1
#define LF_HEADING 2       /* ATX heading or setext text line */
#define LF_UNDERLINE 4     /* setext underline */
#define LF_FENCE_WHOLE 8   /* opens a fenced block kept whole (fits in max) */

typedef struct heading_ref {
	const char *p;
	uint32_t len;
} heading_ref;

typedef struct chunker {
	const char *doc;
	size_t n;
	int kind;
	uint32_t target, overlap, max;
	text_chunk_cb cb;
	void *ctx;

	uint32_t *line;     /* line starts; line[nlines] == n */
	int8_t *brk;        /* boundary strength at each line start */
	uint8_t *flags;
	uint8_t *hlevel;    /* Markdown heading level, 0 if none */
	size_t nlines;

	/* The chunk being packed: its own bytes [cur_start, cur_end). */
	size_t cur_start, cur_end;
	int cur_base;          /* heading level it started under (7: none) */
	int cur_heading_only;  /* holds only headings and blank lines */
	int cur_no_overlap;    /* starts at a heading */
	int section_level;     /* level of the last heading seen (7: none) */

	uint32_t order;
	size_t prev_start;     /* own start of the previous chunk */
	int have_prev;

	const text_heading *ext;  /* DOC_HTML: the caller's headings */
	size_t n_ext, ext_next;

	/* Heading trail, advanced lazily in document order. */
	heading_ref stack[HEADING_LEVELS];
	int depth;
	size_t trail_line;     /* next line to apply to the stack */
	fbuf trail;
} chunker;

/* ---- lines ----------------------------------------------------------------- */

static size_t line_end_of(const chunker *c, size_t k)
{
	return c->line[k + 1];
}

/* The line's bytes without its newline (and \r). */
static void line_text(const chunker *c, size_t k, const char **p, size_t *len)
{
	size_t s = c->line[k], e = line_end_of(c, k);
	if (e > s && c->doc[e - 1] == '\n')
		e--;
	if (e > s && c->doc[e - 1] == '\r')
		e--;
	*p = c->doc + s;
	*len = e - s;
}

static int is_space(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

static int is_blank(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (!is_space(p[i]))
			return 0;
	}
	return 1;
}

/* Index of the line holding byte off (off < n). */
static size_t line_of(const chunker *c, size_t off)
{
	size_t lo = 0, hi = c->nlines;  /* line[lo] <= off < line[hi] */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->line[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static int index_lines(chunker *c)
{
	size_t count = 1;
	for (const char *p = c->doc, *end = c->doc + c->n;
	     (p = memchr(p, '\n', (size_t)(end - p))) != NULL && p + 1 < end; p++)
		count++;
	size_t bytes;
	if (fa_mul(count + 1, sizeof *c->line, &bytes) != 0)
		return fa_err(FATHOM_ETOOBIG, "too many lines");
	c->line = fa_malloc(bytes);
	c->brk = fa_malloc(count + 1);
	c->flags = fa_calloc(count + 1, 1);
	c->hlevel = fa_calloc(count + 1, 1);
	if (!c->line || !c->brk || !c->flags || !c->hlevel)
		return fa_err(FATHOM_ENOMEM, "indexing %zu lines", count);
	size_t k = 0;
	c->line[k++] = 0;
	for (const char *p = c->doc, *end = c->doc + c->n;
	     (p = memchr(p, '\n', (size_t)(end - p))) != NULL && p + 1 < end; p++)
		c->line[k++] = (uint32_t)(p + 1 - c->doc);
	c->nlines = k;
	c->line[k] = (uint32_t)c->n;
	for (size_t j = 0; j < c->nlines; j++) {
		const char *p;
		size_t len;
		line_text(c, j, &p, &len);
		c->brk[j] = BRK_LINE;
		if (is_blank(p, len))
			c->flags[j] |= LF_BLANK;
	}
	c->brk[0] = BRK_DOC;
	return FATHOM_OK;
}

/* ---- boundary strengths by kind --------------------------------------------- */

static void mark_text(chunker *c)
{
	for (size_t k = 1; k < c->nlines; k++) {
		if (!(c->flags[k] & LF_BLANK) && (c->flags[k - 1] & LF_BLANK))
			c->brk[k] = BRK_PARA;
	}
}

/* A line that is only "}" (maybe "};"), closing a top-level block. */
static int is_closing_line(const char *p, size_t len)
{
	size_t i = 0;
	while (i < len && is_space(p[i]))
		i++;
	if (i == len || p[i] != '}')
		return 0;
	i++;
	if (i < len && p[i] == ';')
		i++;
	return is_blank(p + i, len - i);
}

static void mark_code(chunker *c)
{
	int prev_closing = 0;
	for (size_t k = 0; k < c->nlines; k++) {
		const char *p;
		size_t len;
		line_text(c, k, &p, &len);
		int blank = (c->flags[k] & LF_BLANK) != 0;
		if (k > 0 && !blank) {
			int after_blank = (c->flags[k - 1] & LF_BLANK) != 0;
			int top = len > 0 && !is_space(p[0]) && p[0] != '}' && p[0] != ')' && p[0] != ']';
			if (top && (after_blank || prev_closing))
				c->brk[k] = BRK_BLOCK;
			else if (after_blank)
				c->brk[k] = BRK_PARA;
		}
		prev_closing = is_closing_line(p, len);
	}
}

/* Leading spaces (up to 3 allowed by Markdown for block syntax). */
static size_t md_indent(const char *p, size_t len)
{
	size_t i = 0;
	while (i < len && p[i] == ' ')
		i++;
	return i;
}

/* ATX heading level (1..6) or 0. */
static int md_atx_level(const char *p, size_t len)
{
	size_t i = md_indent(p, len);
	if (i > 3)
		return 0;
	size_t h = 0;
	while (i + h < len && p[i + h] == '#')
		h++;
	if (h < 1 || h > 6)
		return 0;
	if (i + h < len && p[i + h] != ' ' && p[i + h] != '\t')
		return 0;
	return (int)h;
}

/* Heading text of an ATX line: without the #'s, the closing #'s, spaces. */
static void md_atx_text(const char *p, size_t len, const char **out, size_t *out_len)
{
	size_t i = md_indent(p, len);
	while (i < len && p[i] == '#')
		i++;
	while (i < len && is_space(p[i]))
		i++;
	size_t e = len;
	while (e > i && is_space(p[e - 1]))
		e--;
	size_t hashes = e;
	while (hashes > i && p[hashes - 1] == '#')
		hashes--;
	/* "## Title ##": closing hashes only count after a space. */
	if (hashes == i || (hashes < e && is_space(p[hashes - 1]))) {
		e = hashes;
		while (e > i && is_space(p[e - 1]))
			e--;
	}
	*out = p + i;
	*out_len = e - i;
}

/* Setext underline: '=' (level 1) or '-' (level 2) only; 0 if not one. */
static int md_underline_level(const char *p, size_t len)
{
	size_t i = md_indent(p, len);
	if (i > 3 || i == len || (p[i] != '=' && p[i] != '-'))
		return 0;
	char ch = p[i];
	while (i < len && p[i] == ch)
		i++;
	if (!is_blank(p + i, len - i))
		return 0;
	return ch == '=' ? 1 : 2;
}

/* A fence line: returns its length of ` or ~ (>= 3), else 0. */
static size_t md_fence(const char *p, size_t len, char *fence_char)
{
	size_t i = md_indent(p, len);
	if (i > 3 || i == len || (p[i] != '`' && p[i] != '~'))
		return 0;
	char ch = p[i];
	size_t k = 0;
	while (i + k < len && p[i + k] == ch)
		k++;
	if (k < 3)
		return 0;
	*fence_char = ch;
	return k;
}

static int md_is_fence_close(const char *p, size_t len, char ch, size_t open_len)
{
	char got;
	size_t k = md_fence(p, len, &got);
	if (k < open_len || got != ch)
		return 0;
	size_t i = md_indent(p, len) + k;
	return is_blank(p + i, len - i);
}

/* Strengths inside a fenced block [open, close]: none if it fits in max
 * (kept whole), else ordinary lines and paragraphs. */
static void md_mark_fence(chunker *c, size_t open, size_t close_incl)
{
	size_t bytes = line_end_of(c, close_incl) - c->line[open];
	int whole = bytes <= c->max;
	if (whole)
		c->flags[open] |= LF_FENCE_WHOLE;
	for (size_t k = open + 1; k <= close_incl; k++) {
		if (whole)
			c->brk[k] = BRK_NONE;
		else if (!(c->flags[k] & LF_BLANK) && (c->flags[k - 1] & LF_BLANK))
			c->brk[k] = BRK_PARA;
		else
			c->brk[k] = BRK_LINE;
	}
}

/* YAML front matter ("---" ... "---" at the top): returns the line after
 * it, or 0 if there is none. */
static size_t md_front_matter(const chunker *c)
{
	const char *p;
	size_t len;
	line_text(c, 0, &p, &len);
	if (len != 3 || memcmp(p, "---", 3) != 0)
		return 0;
	for (size_t k = 1; k < c->nlines; k++) {
		line_text(c, k, &p, &len);
		if ((len == 3 && memcmp(p, "---", 3) == 0) || (len == 3 && memcmp(p, "...", 3) == 0))
			return k + 1;
	}
	return 0;
}

/* Level of a setext heading whose text is line k (underlined by k + 1). */
static int md_setext_level(const chunker *c, size_t k)
{
	const char *p, *u;
	size_t len, ulen;
	if (k + 1 >= c->nlines || (c->flags[k + 1] & LF_BLANK))
		return 0;
	line_text(c, k, &p, &len);
	line_text(c, k + 1, &u, &ulen);
	if (md_indent(p, len) > 3 || md_underline_level(p, len) > 0)
		return 0;
	return md_underline_level(u, ulen);
}

static void mark_markdown(chunker *c)
{
	size_t k = md_front_matter(c);
	int after_block = k > 0;  /* a heading or fence just ended */
	size_t fence_open = 0, fence_len = 0;
	char fence_char = 0;

	for (; k < c->nlines; k++) {
		const char *p;
		size_t len;
		line_text(c, k, &p, &len);
		int blank = (c->flags[k] & LF_BLANK) != 0;

		if (fence_len > 0) {
			if (md_is_fence_close(p, len, fence_char, fence_len)) {
				md_mark_fence(c, fence_open, k);
				fence_len = 0;
				after_block = 1;
			}
			continue;
		}
		if (blank)
			continue;

		int para = after_block || (k > 0 && (c->flags[k - 1] & LF_BLANK));
		after_block = 0;
		int level = md_atx_level(p, len);
		char ch;
		size_t flen;
		if (level > 0) {
			c->flags[k] |= LF_HEADING;
			c->hlevel[k] = (uint8_t)level;
			c->brk[k] = BRK_SECTION;
			after_block = 1;
		} else if ((flen = md_fence(p, len, &ch)) > 0) {
			fence_open = k;
			fence_len = flen;
			fence_char = ch;
			c->brk[k] = BRK_PARA;
		} else if ((level = md_setext_level(c, k)) > 0) {
			/* Setext heading: this line, underlined by the next. */
			c->flags[k] |= LF_HEADING;
			c->flags[k + 1] |= LF_UNDERLINE;
			c->hlevel[k] = (uint8_t)level;
			c->brk[k] = BRK_SECTION;
			c->brk[k + 1] = BRK_NONE;
			k++;
			after_block = 1;
		} else if (para) {
			c->brk[k] = BRK_PARA;
		}
	}
	if (fence_len > 0)  /* unclosed: runs to the end */
		md_mark_fence(c, fence_open, c->nlines - 1);
	c->brk[0] = BRK_DOC;
}

/* ---- reStructuredText ------------------------------------------------------ */

/* Characters docutils takes for section adornment. */
static int rst_adorn_char(char ch)
{
	return ch != '\0' && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", ch) != NULL;
}

/* An adornment line: one punctuation character, at least 3 times, from the
 * first column (trailing spaces allowed). Its length, its character. */
static size_t rst_adornment(const char *p, size_t len, char *ch)
{
	if (len < 3 || !rst_adorn_char(p[0]))
		return 0;
	size_t i = 0;
	while (i < len && p[i] == p[0])
		i++;
	if (i < 3 || !is_blank(p + i, len - i))
		return 0;
	*ch = p[0];
	return i;
}

/* Characters of [p, p+len) without trailing spaces: a title's width. */
static size_t text_width(const char *p, size_t len)
{
	while (len > 0 && is_space(p[len - 1]))
		len--;
	size_t w = 0;
	for (size_t i = 0; i < len; i++)
		w += ((unsigned char)p[i] & 0xC0) != 0x80;
	return w;
}

typedef struct rst_styles {
	char ch[HEADING_LEVELS];
	uint8_t over[HEADING_LEVELS];
	int n;
} rst_styles;

/* The level of a style, by first appearance; styles past the sixth share
 * the sixth level. */
static int rst_level(rst_styles *st, char ch, int over)
{
	for (int i = 0; i < st->n; i++) {
		if (st->ch[i] == ch && st->over[i] == over)
			return i + 1;
	}
	if (st->n == HEADING_LEVELS)
		return HEADING_LEVELS;
	st->ch[st->n] = ch;
	st->over[st->n] = (uint8_t)over;
	return ++st->n;
}

/* Whether the title at line t may be one: text, and not an adornment. */
static int rst_title_line(const chunker *c, size_t t, int indented_ok)
{
	const char *p;
	size_t len;
	char ch;
	if (t >= c->nlines || (c->flags[t] & LF_BLANK))
		return 0;
	line_text(c, t, &p, &len);
	if (!indented_ok && is_space(p[0]))
		return 0;
	return rst_adornment(p, len, &ch) == 0;
}

/* Mark a title: boundary at its first line `top` (the overline or the
 * title), its text at `title`, adornment lines up to `last`. */
static void mark_title(chunker *c, size_t top, size_t title, size_t last, int level)
{
	for (size_t k = top; k <= last; k++) {
		c->flags[k] |= k == title ? LF_HEADING : LF_UNDERLINE;
		c->hlevel[k] = (uint8_t)level;
		c->brk[k] = k == top ? BRK_SECTION : BRK_NONE;
	}
}

static void mark_rst(chunker *c)
{
	mark_text(c);
	rst_styles st = { .n = 0 };
	for (size_t k = 0; k < c->nlines; k++) {
		if (c->flags[k] & LF_BLANK)
			continue;
		if (k > 0 && !(c->flags[k - 1] & (LF_BLANK | LF_UNDERLINE)))
			continue;   /* a title starts a block */
		const char *p, *u;
		size_t len, ulen, alen, blen;
		char ch, ch2;
		line_text(c, k, &p, &len);
		if ((alen = rst_adornment(p, len, &ch)) > 0) {
			/* overline, title, underline of the same character and length */
			if (!rst_title_line(c, k + 1, 1) || k + 2 >= c->nlines)
				continue;
			const char *t;
			size_t tlen;
			line_text(c, k + 1, &t, &tlen);
			line_text(c, k + 2, &u, &ulen);
			if ((blen = rst_adornment(u, ulen, &ch2)) != alen || ch2 != ch ||
			    text_width(t, tlen) > alen)
				continue;
			mark_title(c, k, k + 1, k + 2, rst_level(&st, ch, 1));
			k += 2;
		} else if (rst_title_line(c, k, 0) && k + 1 < c->nlines) {
			line_text(c, k + 1, &u, &ulen);
			if ((blen = rst_adornment(u, ulen, &ch)) == 0 || text_width(p, len) > blen)
				continue;
			mark_title(c, k, k, k + 1, rst_level(&st, ch, 0));
			k++;
		}
	}
	c->brk[0] = BRK_DOC;
}

/* ---- AsciiDoc -------------------------------------------------------------- */

/* "= Title" (1) to "====== Title" (6): the level, or 0. */
static int adoc_atx_level(const char *p, size_t len)
{
	size_t h = 0;
	while (h < len && p[h] == '=')
		h++;
	if (h < 1 || h > HEADING_LEVELS || h + 1 >= len || p[h] != ' ')
		return 0;
	return is_blank(p + h, len - h) ? 0 : (int)h;
}

/* A delimited block's fence: 4+ of one of - . = * + / _ (or ``` ), alone. */
static size_t adoc_delimiter(const char *p, size_t len)
{
	while (len > 0 && is_space(p[len - 1]))
		len--;
	if (len == 3 && memcmp(p, "```", 3) == 0)
		return 3;
	if (len < 4 || !strchr("-.=*+/_", p[0]))
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (p[i] != p[0])
			return 0;
	}
	return len;
}

/* A two-line title's underline: one of = - ~ ^ +, within two characters of
 * the title's width. Its level, or 0. */
static int adoc_underline_level(const char *t, size_t tlen, const char *u, size_t ulen)
{
	static const char chars[] = "=-~^+";
	while (ulen > 0 && is_space(u[ulen - 1]))
		ulen--;
	const char *at = ulen >= 2 ? strchr(chars, u[0]) : NULL;
	if (!at || u[0] == '\0')
		return 0;
	for (size_t i = 1; i < ulen; i++) {
		if (u[i] != u[0])
			return 0;
	}
	size_t w = text_width(t, tlen);
	if (w < 2 || ulen + 2 < w || w + 2 < ulen)
		return 0;
	/* the title is text: a letter, digit or non-ASCII character first */
	unsigned char f = (unsigned char)t[0];
	if (!(f >= 0x80 || (f >= '0' && f <= '9') || ((f | 0x20) >= 'a' && (f | 0x20) <= 'z')))
		return 0;
	return (int)(at - chars) + 1;
}

static void mark_asciidoc(chunker *c)
{
	mark_text(c);
	const char *fence = NULL;   /* the open delimited block's line */
	size_t fence_len = 0;
	for (size_t k = 0; k < c->nlines; k++) {
		const char *p, *u;
		size_t len, ulen;
		line_text(c, k, &p, &len);
		size_t d = adoc_delimiter(p, len);
		if (fence) {
			if (d == fence_len && memcmp(p, fence, d) == 0)
				fence = NULL;
			continue;
		}
		if (c->flags[k] & LF_BLANK)
			continue;
		int level = adoc_atx_level(p, len);
		if (level > 0) {
			mark_title(c, k, k, k, level);
			continue;
		}
		if (k + 1 < c->nlines && (k == 0 || (c->flags[k - 1] & LF_BLANK)) && d == 0) {
			line_text(c, k + 1, &u, &ulen);
			if ((level = adoc_underline_level(p, len, u, ulen)) > 0) {
				mark_title(c, k, k, k + 1, level);
				k++;
				continue;
			}
		}
		if (d > 0) {
			fence = p;
			fence_len = d;
		}
	}
	c->brk[0] = BRK_DOC;
}

/* ---- HTML: the caller's headings ------------------------------------------------- */

static void mark_html(chunker *c)
{
	mark_text(c);
	for (size_t i = 0; i < c->n_ext; i++) {
		const text_heading *h = &c->ext[i];
		if (h->off >= c->n || h->level < 1 || h->level > HEADING_LEVELS)
			continue;
		size_t k = line_of(c, h->off);
		if (c->hlevel[k] == 0) {
			c->flags[k] |= LF_HEADING;
			c->hlevel[k] = (uint8_t)h->level;
			c->brk[k] = BRK_SECTION;
		}
	}
	c->brk[0] = BRK_DOC;
}

/* ---- heading trail ----------------------------------------------------------- */

/* The text of the heading whose text line is k, by kind. */
static void heading_text(const chunker *c, size_t k, const char **text, size_t *tlen)
{
	const char *p;
	size_t len;
	line_text(c, k, &p, &len);
	size_t i = 0, e = len;
	if (c->kind == DOC_MARKDOWN && md_atx_level(p, len) > 0) {
		md_atx_text(p, len, text, tlen);
		return;
	}
	if (c->kind == DOC_ASCIIDOC && adoc_atx_level(p, len) > 0) {
		/* "== Title ==": the symmetric closing marks go too */
		while (i < len && p[i] == '=')
			i++;
		while (e > i && (is_space(p[e - 1]) || p[e - 1] == '='))
			e--;
	}
	while (i < e && is_space(p[i]))
		i++;
	while (e > i && is_space(p[e - 1]))
		e--;
	*text = p + i;
	*tlen = e - i;
}

static void trail_set(chunker *c, int level, const char *text, size_t tlen)
{
	if (tlen > HEADING_TEXT_MAX)
		tlen = text_utf8_floor(text, tlen, HEADING_TEXT_MAX);
	c->stack[level - 1].p = text;
	c->stack[level - 1].len = (uint32_t)tlen;
	for (int l = level; l < HEADING_LEVELS; l++)
		c->stack[l].len = 0;
	c->depth = level;
}

static void trail_apply(chunker *c, size_t k)
{
	if (c->kind == DOC_HTML) {
		/* every given heading on lines up to k, in order */
		size_t end = line_end_of(c, k);
		for (; c->ext_next < c->n_ext && c->ext[c->ext_next].off < end; c->ext_next++) {
			const text_heading *h = &c->ext[c->ext_next];
			if (h->level >= 1 && h->level <= HEADING_LEVELS)
				trail_set(c, (int)h->level, h->text, h->len);
		}
		return;
	}
	if (!(c->flags[k] & LF_HEADING))
		return;
	const char *text;
	size_t tlen;
	heading_text(c, k, &text, &tlen);
	trail_set(c, c->hlevel[k], text, tlen);
}

/* The trail for a chunk whose own bytes are [start, end): the headings
 * above it, plus any headings it opens with. */
static int trail_for(chunker *c, size_t start, size_t end)
{
	size_t first = line_of(c, start);
	for (; c->trail_line < first; c->trail_line++)
		trail_apply(c, c->trail_line);
	for (; c->trail_line < c->nlines && c->line[c->trail_line] < end; c->trail_line++) {
		uint8_t f = c->flags[c->trail_line];
		if (!(f & (LF_HEADING | LF_UNDERLINE | LF_BLANK)))
			break;
		trail_apply(c, c->trail_line);
	}
	fbuf_reset(&c->trail);
	for (int l = 0; l < c->depth; l++) {
		if (c->stack[l].len == 0)
			continue;
		if (c->trail.len > 0)
			fbuf_append(&c->trail, " > ", 3);
		/* The trail is shown and stored as text: valid UTF-8, no control
		 * characters (a NUL would cut it short). */
		size_t from = c->trail.len;
		if (c->trail.err == FATHOM_OK)
			text_utf8_repair(&c->trail, c->stack[l].p, c->stack[l].len, NULL);
		for (size_t i = from; i < c->trail.len; i++) {
			if (c->trail.data[i] < 0x20 || c->trail.data[i] == 0x7F)
				c->trail.data[i] = ' ';
		}
	}
	fbuf_putc(&c->trail, 0);
	return c->trail.err;
}

/* ---- emitting and packing -------------------------------------------------------- */

static int emit_chunk(chunker *c)
{
	size_t cs = c->cur_start, ce = c->cur_end;
	if (ce <= cs)
		return FATHOM_OK;
	size_t start = cs;
	if (c->overlap > 0 && c->have_prev && !c->cur_no_overlap) {
		/* Earliest allowed start, then the first line start at or after. */
		size_t lo = cs > c->overlap ? cs - c->overlap : 0;
		lo = FA_MAX(lo, c->prev_start);
		if (ce > c->max)
			lo = FA_MAX(lo, ce - c->max);
		size_t k = line_of(c, lo);
		if (c->line[k] < lo)
			k++;
		if (k < c->nlines && c->line[k] < cs)
			start = c->line[k];
	}

	text_chunk ch;
	ch.order = c->order;
	ch.byte_start = (uint32_t)start;
	ch.byte_end = (uint32_t)ce;
	ch.line_start = (uint32_t)line_of(c, start) + 1;
	ch.line_end = (uint32_t)line_of(c, ce - 1) + 1;
	ch.headings = "";
	ch.headings_len = 0;
	if (c->kind != DOC_TEXT && c->kind != DOC_CODE) {
		int rc = trail_for(c, cs, ce);
		if (rc != FATHOM_OK)
			return rc;
		ch.headings = (const char *)c->trail.data;
		ch.headings_len = (uint32_t)(c->trail.len - 1);
	}
	c->order++;
	c->prev_start = cs;
	c->have_prev = 1;
	c->cur_start = c->cur_end = ce;
	return c->cb(c->ctx, &ch);
}

/* Whether lines [a, b) are all headings, underlines or blank. */
static int only_headings(const chunker *c, size_t a, size_t b)
{
	for (size_t k = a; k < b; k++) {
		if (!(c->flags[k] & (LF_HEADING | LF_UNDERLINE | LF_BLANK)))
			return 0;
	}
	return 1;
}

/* Add the piece [start, end), whose start has boundary kind `kind` (and
 * line index k when it starts a line). */
static int add_piece(chunker *c, size_t start, size_t end, int kind, size_t k,
                     int force, int heading_only)
{
	size_t cur = c->cur_end - c->cur_start, size = end - start;
	int join;
	if (cur == 0)
		join = 1;
	else if (c->cur_heading_only)
		join = cur + size <= c->max;
	else if (force)
		join = 0;
	else if (kind == BRK_SECTION)
		join = c->hlevel[k] > c->cur_base && cur + size <= c->target;
	else
		join = cur + size <= c->target;

	if (kind == BRK_SECTION)
		c->section_level = c->hlevel[k];
	if (!join) {
		int rc = emit_chunk(c);
		if (rc != FATHOM_OK)
			return rc;
	}
	if (c->cur_end == c->cur_start) {
		c->cur_start = start;
		c->cur_base = c->section_level;
		c->cur_heading_only = heading_only;
		c->cur_no_overlap = kind == BRK_SECTION;
	} else {
		/* "# Title" then "## Intro": the chunk now lives under Intro. */
		if (kind == BRK_SECTION && c->cur_heading_only)
			c->cur_base = FA_MAX(c->cur_base, c->hlevel[k]);
		c->cur_heading_only &= heading_only;
	}
	c->cur_end = end;
	return FATHOM_OK;
}

/* Cut [start, end) (no usable line boundary inside) into pieces of about
 * the target, on UTF-8 boundaries, preferably after a newline or space. */
static int cut_bytes(chunker *c, size_t start, size_t end, int kind, size_t k, int force)
{
	size_t p = start;
	while (p < end) {
		size_t cut = end;
		if (end - p > c->target) {
			cut = text_utf8_floor(c->doc, c->n, p + c->target);
			size_t half = p + c->target / 2, q = cut;
			while (q > half && q > p && c->doc[q - 1] != '\n' && !is_space(c->doc[q - 1]))
				q--;
			if (q > half && q > p)
				cut = q;
			if (cut <= p) {
				/* The target is smaller than this character. */
				size_t len = text_utf8_seq_len((const unsigned char *)c->doc + p, c->n - p);
				cut = p + (len ? len : 1);
			}
		}
		int rc = add_piece(c, p, cut, kind, k, force, 0);
		if (rc != FATHOM_OK)
			return rc;
		kind = BRK_CUT;
		force = 0;
		p = cut;
	}
	return FATHOM_OK;
}

/* Pieces for lines [a, b), a unit whose inner boundaries are all weaker
 * than `level`; `kind` is the boundary at its start. */
static int split_unit(chunker *c, size_t a, size_t b, int level, int kind, int force)
{
	size_t start = c->line[a], end = c->line[b], size = end - start;
	size_t limit = c->target;
	if (level <= BRK_PARA && (c->flags[a] & LF_FENCE_WHOLE))
		limit = c->max;
	if (level <= BRK_LINE)
		limit = c->max;
	/* The document itself always splits, so Markdown sections do. */
	if (size <= limit && level < BRK_DOC)
		return add_piece(c, start, end, kind, a, force, only_headings(c, a, b));
	if (level <= BRK_LINE)
		return cut_bytes(c, start, end, kind, a, force);

	/* The first piece of a split block starts a fresh chunk. */
	if (kind >= BRK_BLOCK && c->kind == DOC_CODE)
		force = 1;
	int sub = level - 1;
	size_t s = a;
	for (size_t k = a + 1; k <= b; k++) {
		if (k < b && c->brk[k] < sub)
			continue;
		int rc = split_unit(c, s, k, sub, s == a ? kind : c->brk[s], s == a ? force : 0);
		if (rc != FATHOM_OK)
			return rc;
		s = k;
	}
	return FATHOM_OK;
}

/* ---- entry point ---------------------------------------------------------------- */

static void chunker_init(chunker *c, const char *doc, size_t n, int kind)
{
	memset(c, 0, sizeof *c);
	c->doc = doc;
	c->n = n;
	c->kind = kind;
	fbuf_init(&c->trail, 0);
}

static void chunker_free(chunker *c)
{
	fbuf_free(&c->trail);
	fa_free(c->line);
	fa_free(c->brk);
	fa_free(c->flags);
	fa_free(c->hlevel);
}

static void mark_kind(chunker *c)
{
	switch (c->kind) {
	case DOC_MARKDOWN: mark_markdown(c); break;
	case DOC_CODE: mark_code(c); break;
	case DOC_RST: mark_rst(c); break;
	case DOC_ASCIIDOC: mark_asciidoc(c); break;
	case DOC_HTML: mark_html(c); break;
	default: mark_text(c); break;
	}
}

static void chunk_opts(chunker *c, const text_chunk_opts *opts)
{
	uint32_t target = opts ? opts->target : 0, max = opts ? opts->max : 0;
	uint32_t overlap = opts ? opts->overlap : 0;
	if (target == 0)
		target = CHUNK_DEFAULT_TARGET;
	if (max == 0)
		max = FA_MAX(CHUNK_DEFAULT_MAX, target);
	if (max < CHUNK_MIN_MAX)
		max = CHUNK_MIN_MAX;
	if (target > max)
		target = max;
	if (overlap >= target)
		overlap = target / 2;
	c->target = target;
	c->max = max;
	c->overlap = overlap;
}

int text_chunk_doc(const char *doc, size_t n, int kind, const text_chunk_opts *opts,
                   text_chunk_cb cb, void *ctx)
{
	if (!cb || (!doc && n > 0))
		return fa_err(FATHOM_EINVAL, "text_chunk_doc: missing document or callback");
	if (kind < DOC_TEXT || kind > DOC_ASCIIDOC)
		return fa_err(FATHOM_EINVAL, "text_chunk_doc: unknown document kind %d", kind);
	if (n >= UINT32_MAX)
		return fa_err(FATHOM_ETOOBIG, "document of %zu bytes is over the 4 GiB limit", n);
	if (n == 0)
		return FATHOM_OK;

	chunker c;
	chunker_init(&c, doc, n, kind);
	c.cb = cb;
	c.ctx = ctx;
	c.section_level = HEADING_LEVELS + 1;
	if (opts && kind == DOC_HTML) {
		c.ext = opts->headings;
		c.n_ext = opts->headings ? opts->n_headings : 0;
	}
	chunk_opts(&c, opts);

	int rc = index_lines(&c);
	if (rc == FATHOM_OK) {
		mark_kind(&c);
		rc = split_unit(&c, 0, c.nlines, BRK_DOC, BRK_DOC, 0);
	}
	if (rc == FATHOM_OK)
		rc = emit_chunk(&c);

	chunker_free(&c);
	return rc;
}

/* ---- title ----------------------------------------------------------------------- */

/* The line at *p (without newline and \r) into line/len; advances *p. */
static int next_line(const char **p, const char *end, const char **line, size_t *len)
{
	if (*p >= end)
		return 0;
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t l = (size_t)((nl ? nl : end) - *p);
	*line = *p;
	if (l > 0 && (*p)[l - 1] == '\r')
		l--;
	*len = l;
	*p = nl ? nl + 1 : end;
	return 1;
}

const char *text_markdown_title(const char *doc, size_t n, size_t *len)
{
	size_t dummy;
	if (!len)
		len = &dummy;
	*len = 0;
	if (!doc || n == 0)
		return NULL;
	const char *p = doc, *end = doc + n, *l, *prev = NULL;
	size_t ll, prev_len = 0, fence_len = 0;
	char fence_char = 0;

	/* YAML front matter is not text. */
	if (next_line(&p, end, &l, &ll) && ll == 3 && memcmp(l, "---", 3) == 0) {
		const char *q = p;
		while (next_line(&q, end, &l, &ll)) {
			if (ll == 3 && (memcmp(l, "---", 3) == 0 || memcmp(l, "...", 3) == 0)) {
				p = q;
				break;
			}
		}
	} else {
		p = doc;
	}

	while (next_line(&p, end, &l, &ll)) {
		char ch;
		size_t flen;
		const char *t;
		size_t tl;
		if (fence_len > 0) {
			if (md_is_fence_close(l, ll, fence_char, fence_len))
				fence_len = 0;
			prev = NULL;
		} else if ((flen = md_fence(l, ll, &ch)) > 0) {
			fence_len = flen;
			fence_char = ch;
			prev = NULL;
		} else if (md_atx_level(l, ll) == 1) {
			md_atx_text(l, ll, &t, &tl);
			if (tl > 0) {
				*len = tl;
				return t;
			}
			prev = NULL;
		} else if (prev && prev_len > 0 && md_underline_level(l, ll) == 1) {
			*len = prev_len;
			return prev;
		} else if (is_blank(l, ll) || md_atx_level(l, ll) > 0 || md_indent(l, ll) > 3) {
			prev = NULL;
		} else {
			size_t i = md_indent(l, ll), e = ll;
			while (e > i && is_space(l[e - 1]))
				e--;
			prev = l + i;
			prev_len = e - i;
		}
	}
	return NULL;
}

const char *text_markup_title(const char *doc, size_t n, int kind, size_t *len)
{
	size_t dummy;
	if (!len)
		len = &dummy;
	*len = 0;
	if (!doc || n == 0 || n >= UINT32_MAX || (kind != DOC_RST && kind != DOC_ASCIIDOC))
		return NULL;
	chunker c;
	chunker_init(&c, doc, n, kind);
	const char *out = NULL;
	if (index_lines(&c) == FATHOM_OK) {
		mark_kind(&c);
		for (size_t k = 0; k < c.nlines && !out; k++) {
			/* reStructuredText's first title is its document's title,
			 * whatever its style; AsciiDoc's is its level-1 title */
			if (!(c.flags[k] & LF_HEADING) || (kind == DOC_ASCIIDOC && c.hlevel[k] != 1))
				continue;
			heading_text(&c, k, &out, len);
			if (*len == 0)
				out = NULL;
		}
	}
	fa_err_clear();
	chunker_free(&c);
	return out;
}
