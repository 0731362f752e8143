/*
 * html.c — an HTML document read as the text a person sees in it.
 *
 * One pass over the bytes, a tag scanner in the manner of HTML5's
 * tokenizer, not a tree builder: text is copied, character references are
 * decoded, and everything else (tags, comments, doctypes, processing
 * instructions, the contents of script and style) becomes nothing, but
 * for its newlines. Every newline of the source is written where it was
 * and no other is (a decoded &#10; is a space), so line N of the text is
 * line N of the file: search hits, snippets and grep all count lines as
 * the file does, with no map from one to the other.
 *
 * Why not libxml2's HTML parser: it reports neither the byte offsets nor
 * reliable line numbers of character data, so the lines could not be
 * kept; and it builds a tree this needs none of. The scanner is linear,
 * reads each byte a bounded number of times, allocates only its output
 * (at most 6/5 of its input: "&nGt;" is six bytes of UTF-8), and is
 * fuzzed (fuzz/fuzz_html.c).
 *
 * A tag that is not phrasing content (p, div, td, li, br...) leaves a
 * space, so "<td>a</td><td>b</td>" reads "a b", not "ab"; inline ones (b,
 * a, span, code...) leave nothing. <title>'s text is the title; h1-h6 are
 * headings, their text read between the start and end tags, white space
 * collapsed, without a trailing permalink mark ("#", "¶": Node.js's and
 * Sphinx's pages end every heading with one). A character
 * reference that is not one of HTML5's, or a named one without its ";",
 * stays as written.
 */
#include <strings.h>
#include <utf8proc.h>

#include "text/text.h"
#include "text/html_entities.h"

#define HTML_TITLE_MAX 512     /* bytes of a title kept */
#define HTML_HEADING_MAX 256   /* bytes of a heading's text kept */
#define HTML_NAME_MAX 16       /* a tag name longer than this is no tag we treat */
#define HTML_ENTITY_MAX 32     /* the longest named reference is 31 */

void text_html_init(text_html *h)
{
	memset(h, 0, sizeof *h);
	fbuf_init(&h->text, 0);
	fbuf_init(&h->strings, 0);
}

void text_html_free(text_html *h)
{
	fbuf_free(&h->text);
	fbuf_free(&h->strings);
	fa_free(h->headings);
	memset(h, 0, sizeof *h);
}

typedef struct html_conv {
	text_html *h;
	const char *s;
	size_t n, i;
	int in_heading;            /* level of the open h1-h6, 0 for none */
	size_t heading_start;      /* where its text starts in h->text */
	size_t title_off;          /* title in h->strings; SIZE_MAX: none */
	size_t title_len;
} html_conv;

static int is_ws(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f';
}

static int is_alpha(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static int is_alnum(char ch)
{
	return is_alpha(ch) || (ch >= '0' && ch <= '9');
}

/* The newlines of [a, b), and nothing else. */
static void put_newlines(html_conv *c, size_t a, size_t b)
{
	for (const char *p = c->s + a, *e = c->s + b; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++)
		fbuf_putc(&c->h->text, '\n');
}

/* A separator, unless the text already ends in white space. */
static void put_space(html_conv *c)
{
	fbuf *t = &c->h->text;
	if (t->len > 0 && !is_ws((char)t->data[t->len - 1]))
		fbuf_putc(t, ' ');
}

/* cp: a scalar value (no surrogate, at most 0x10FFFF), as utf8proc takes. */
static void put_utf8(fbuf *b, uint32_t cp)
{
	utf8proc_uint8_t u[4];
	fbuf_append(b, u, (size_t)utf8proc_encode_char((utf8proc_int32_t)cp, u));
}

/* HTML5's reading of the C1 range in a numeric reference (windows-1252). */
static const uint16_t c1_map[32] = {
	0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
	0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
	0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
	0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
};

/* A character reference at c->s[c->i] == '&': decoded into the text and
 * c->i moved past it, or the '&' copied as written. */
static void put_reference(html_conv *c)
{
	const char *s = c->s;
	size_t i = c->i + 1, n = c->n;
	fbuf *t = &c->h->text;
	if (i < n && s[i] == '#') {
		int hex = i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X');
		size_t j = i + 1 + (size_t)hex, digits = 0;
		uint32_t cp = 0;
		int over = 0;
		for (; j < n; j++, digits++) {
			char ch = s[j];
			uint32_t d;
			if (ch >= '0' && ch <= '9')
				d = (uint32_t)(ch - '0');
			else if (hex && (ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
				d = (uint32_t)((ch | 0x20) - 'a' + 10);
			else
				break;
			if (cp > 0x10FFFF)
				over = 1;   /* stop growing: it is out of range already */
			else
				cp = cp * (hex ? 16u : 10u) + d;
		}
		if (digits > 0) {
			if (j < n && s[j] == ';')
				j++;
			if (over || cp > 0x10FFFF || cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
				cp = 0xFFFD;
			else if (cp >= 0x80 && cp <= 0x9F)
				cp = c1_map[cp - 0x80];
			if (cp < 0x20 || cp == 0x7F)
				cp = ' ';   /* &#10; would move the lines; controls are not text */
			put_utf8(t, cp);
			c->i = j;
			return;
		}
	} else {
		size_t j = i;
		while (j < n && j - i < HTML_ENTITY_MAX && is_alnum(s[j]))
			j++;
		if (j > i && j < n && s[j] == ';') {
			char name[HTML_ENTITY_MAX + 1];
			memcpy(name, s + i, j - i);
			name[j - i] = '\0';
			size_t lo = 0, hi = FA_ARRAY_LEN(html_entities);
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				int cmp = strcmp(html_entities[mid].name, name);
				if (cmp == 0) {
					fbuf_puts(t, html_entities[mid].utf8);
					c->i = j + 1;
					return;
				}
				if (cmp < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
		}
	}
	fbuf_putc(t, '&');
	c->i++;
}

/* Phrasing elements: a tag of one of these leaves no space. */
static int is_inline(const char *name)
{
	static const char *const names[] = {
		"a", "abbr", "acronym", "b", "bdi", "bdo", "big", "cite", "code", "data",
		"del", "dfn", "em", "font", "i", "ins", "kbd", "mark", "q", "s", "samp",
		"small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u", "var",
		"wbr",
	};
	for (size_t i = 0; i < FA_ARRAY_LEN(names); i++) {
		if (strcmp(names[i], name) == 0)
			return 1;
	}
	return 0;
}

/* Past the end of a comment "<!--" at i: after "-->" or "--!>" (or
 * "<!-->", "<!--->", which end at once), or n. */
static size_t skip_comment(const html_conv *c, size_t i)
{
	const char *s = c->s;
	size_t n = c->n, j = i + 4;
	if (j < n && s[j] == '>')
		return j + 1;
	if (j + 1 < n && s[j] == '-' && s[j + 1] == '>')
		return j + 2;
	for (; j + 1 < n; j++) {
		if (s[j] != '-' || s[j + 1] != '-')
			continue;
		if (j + 2 < n && s[j + 2] == '>')
			return j + 3;
		if (j + 3 < n && s[j + 2] == '!' && s[j + 3] == '>')
			return j + 4;
	}
	return n;
}

/* Past the '>' closing a tag whose attributes start at i (quoted values
 * may hold '>'), or n. */
static size_t skip_attributes(const html_conv *c, size_t i)
{
	char quote = 0;
	for (; i < c->n; i++) {
		char ch = c->s[i];
		if (quote) {
			if (ch == quote)
				quote = 0;
		} else if (ch == '>') {
			return i + 1;
		} else if ((ch == '"' || ch == '\'') && i > 0 && (c->s[i - 1] == '=' || is_ws(c->s[i - 1]))) {
			quote = ch;
		}
	}
	return c->n;
}

/* Where "</name" (any case, then a space, '/' or '>') starts at or after
 * i, or n: the end of a raw text element (script, style, title...). */
static size_t find_end_tag(const html_conv *c, size_t i, const char *name)
{
	size_t nl = strlen(name);
	for (const char *p = c->s + i, *e = c->s + c->n; (p = memchr(p, '<', (size_t)(e - p))) != NULL; p++) {
		size_t at = (size_t)(p - c->s);
		if (at + 2 + nl > c->n || p[1] != '/' || strncasecmp(p + 2, name, nl) != 0)
			continue;
		if (at + 2 + nl == c->n || is_ws(p[2 + nl]) || p[2 + nl] == '/' || p[2 + nl] == '>')
			return at;
	}
	return c->n;
}

/* Keep [from, to) of the text, its white space (and no-break spaces)
 * collapsed, at most max bytes of whole characters, at the end of
 * h->strings: its offset there, and *len. */
static size_t keep_string(html_conv *c, size_t from, size_t to, size_t max, size_t *len)
{
	fbuf *st = &c->h->strings;
	const unsigned char *t = c->h->text.data;
	size_t off = st->len;
	int space = 0;
	for (size_t i = from; i < to && st->err == FATHOM_OK;) {
		size_t sl = text_utf8_seq_len(t + i, to - i);
		if (sl == 0)
			sl = 1;   /* not expected: the text is valid UTF-8 */
		if (is_ws((char)t[i]) || (sl == 2 && t[i] == 0xC2 && t[i + 1] == 0xA0)) {
			space = st->len > off;
			i += sl;
			continue;
		}
		if (st->len - off + (size_t)space + sl > max)
			break;
		if (space)
			fbuf_putc(st, ' ');
		space = 0;
		fbuf_append(st, t + i, sl);
		i += sl;
	}
	*len = st->err == FATHOM_OK ? st->len - off : 0;
	return off;
}

static int close_heading(html_conv *c)
{
	text_html *h = c->h;
	size_t len, off = keep_string(c, c->heading_start, h->text.len, HTML_HEADING_MAX, &len);
	/* a permalink's mark is not the heading's text: "Usage#", "Usage ¶" */
	const unsigned char *t = len ? h->strings.data + off : NULL;
	while (len > 0) {
		if (t[len - 1] == '#' || t[len - 1] == ' ')
			len--;
		else if (len >= 2 && t[len - 2] == 0xC2 && t[len - 1] == 0xB6)
			len -= 2;
		else
			break;
	}
	h->strings.len = off + len;
	int level = c->in_heading;
	c->in_heading = 0;
	if (len == 0)
		return h->strings.err;
	if (fa_grow((void **)&h->headings, &h->cap_headings, h->n_headings + 1, sizeof *h->headings))
		return FATHOM_ENOMEM;
	/* text holds the offset in strings until the end, when strings stops
	 * moving */
	h->headings[h->n_headings++] = (text_heading){
		.off = (uint32_t)c->heading_start, .level = (uint32_t)level,
		.text = (const char *)(uintptr_t)off, .len = (uint32_t)len,
	};
	return h->strings.err;
}

/* A tag at c->i == '<' followed by a letter or "/letter". */
static int put_tag(html_conv *c)
{
	const char *s = c->s;
	size_t i = c->i + 1;
	int end = s[i] == '/';
	i += (size_t)end;
	char name[HTML_NAME_MAX + 1];
	size_t nl = 0;
	while (i < c->n && (is_alnum(s[i]) || s[i] == '-' || s[i] == ':')) {
		if (nl < HTML_NAME_MAX)
			name[nl] = (char)(s[i] | (is_alpha(s[i]) ? 0x20 : 0));
		nl++;
		i++;
	}
	if (nl > HTML_NAME_MAX)
		nl = 0;   /* no tag of ours: treated as an unknown one */
	name[nl] = '\0';
	size_t after = skip_attributes(c, i);
	put_newlines(c, c->i, after);
	c->i = after;

	int level = name[0] == 'h' && name[1] >= '1' && name[1] <= '6' && !name[2] ? name[1] - '0' : 0;
	if (level && end) {
		if (c->in_heading)
			return close_heading(c);
		return 0;
	}
	if (!is_inline(name))
		put_space(c);
	if (end)
		return 0;
	if (level) {
		int rc = c->in_heading ? close_heading(c) : 0;
		c->in_heading = level;
		c->heading_start = c->h->text.len;
		return rc;
	}
	if (strcmp(name, "script") == 0 || strcmp(name, "style") == 0) {
		/* raw text, not shown: its newlines alone */
		size_t e = find_end_tag(c, c->i, name);
		put_newlines(c, c->i, e);
		c->i = e;
		return 0;
	}
	if (strcmp(name, "title") == 0 || strcmp(name, "textarea") == 0) {
		/* escapable raw text: references decoded, no tags */
		size_t e = find_end_tag(c, c->i, name), from = c->h->text.len;
		while (c->i < e) {
			if (s[c->i] == '&') {
				put_reference(c);
			} else {
				const char *amp = memchr(s + c->i, '&', e - c->i);
				size_t stop = amp ? (size_t)(amp - s) : e;
				fbuf_append(&c->h->text, s + c->i, stop - c->i);
				c->i = stop;
			}
		}
		if (strcmp(name, "title") == 0 && c->title_off == SIZE_MAX)
			c->title_off = keep_string(c, from, c->h->text.len, HTML_TITLE_MAX, &c->title_len);
	}
	return c->h->text.err;
}

int text_html_to_text(text_html *h, const char *src, size_t n)
{
	fbuf_reset(&h->text);
	fbuf_reset(&h->strings);
	h->n_headings = 0;
	h->title = NULL;
	h->title_len = 0;
	if (n >= UINT32_MAX)
		return fa_err(FATHOM_ETOOBIG, "HTML document of %zu bytes is over the 4 GiB limit", n);
	html_conv c = { .h = h, .s = src, .n = n, .title_off = SIZE_MAX };
	int rc = n ? fbuf_reserve(&h->text, n) : 0;
	while (!rc && c.i < n) {
		const char *s = src;
		size_t i = c.i;
		if (s[i] == '&') {
			put_reference(&c);
		} else if (s[i] != '<') {
			/* a run of plain text at once */
			size_t stop = i + 1;
			while (stop < n && s[stop] != '<' && s[stop] != '&')
				stop++;
			fbuf_append(&h->text, s + i, stop - i);
			c.i = stop;
		} else if (i + 3 < n && memcmp(s + i, "<!--", 4) == 0) {
			size_t e = skip_comment(&c, i);
			put_newlines(&c, i, e);
			c.i = e;
		} else if (i + 1 < n && (s[i + 1] == '!' || s[i + 1] == '?' ||
		                         (s[i + 1] == '/' && i + 2 < n && !is_alpha(s[i + 2])))) {
			/* doctype, CDATA, processing instruction, bogus comment */
			const char *gt = memchr(s + i, '>', n - i);
			size_t e = gt ? (size_t)(gt - s) + 1 : n;
			put_newlines(&c, i, e);
			c.i = e;
		} else if (i + 1 < n && (is_alpha(s[i + 1]) || (s[i + 1] == '/' && i + 2 < n))) {
			rc = put_tag(&c);
		} else {
			fbuf_putc(&h->text, '<');
			c.i++;
		}
		if (!rc)
			rc = h->text.err;
	}
	if (!rc && c.in_heading)
		rc = close_heading(&c);
	if (!rc)
		rc = h->text.err ? h->text.err : h->strings.err;
	if (rc)
		return rc;
	/* strings no longer moves: offsets become pointers */
	const char *base = h->strings.len ? (const char *)h->strings.data : "";
	for (size_t k = 0; k < h->n_headings; k++)
		h->headings[k].text = base + (uintptr_t)h->headings[k].text;
	if (c.title_off != SIZE_MAX && c.title_len > 0) {
		h->title = base + c.title_off;
		h->title_len = c.title_len;
	}
	return 0;
}
