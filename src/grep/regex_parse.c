/*
 * regex_parse.c — the PCRE2 syntax reader: a pattern read by recursive
 * descent, each part handed to the trigram planner's operations (plan.c)
 * as it is read, and the literal strings every match of a pattern contains
 * (g_required), read by the same functions.
 *
 *   alt    := seq { "|" seq }
 *   seq    := { piece }
 *   piece  := atom { quantifier }
 *   atom   := "(" group ")" | "[" class "]" | "\" escape | "\Q" text "\E"
 *           | "." | "^" | "$" | a UTF-8 character
 *
 * The reader follows what PCRE2 accepts, and says "anything" for what it
 * does not follow: a construct that changes how the rest of the pattern
 * reads ((?x), conditionals, verbs, a class it cannot bound) sets
 * global_unsupported, and the whole plan becomes ALL. Group nesting is
 * bounded by G_MAX_DEPTH.
 */
#include "grep/grep.h"

#define MAX_CLASS 40         /* characters a class may expand to */

/* ---- characters and escapes ------------------------------------------------------- */

int g_inline_option(const unsigned char *p, const unsigned char *end, char opt)
{
	for (; p + 2 < end; p++) {
		if (p[0] == '\\') {
			p++;
			continue;
		}
		if (p[0] != '(' || p[1] != '?')
			continue;
		for (const unsigned char *o = p + 2; o < end && *o && strchr("imnsxUJaDSWPT-^", *o); o++)
			if (*o == opt)
				return 1;
	}
	return 0;
}

static uint32_t utf8_encode(uint32_t cp, unsigned char *out)
{
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | cp >> 6);
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		if (cp >= 0xd800 && cp < 0xe000)
			return 0;
		out[0] = (unsigned char)(0xe0 | cp >> 12);
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	if (cp < 0x110000) {
		out[0] = (unsigned char)(0xf0 | cp >> 18);
		out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (unsigned char)(0x80 | (cp & 0x3f));
		return 4;
	}
	return 0;
}

static int hexval(unsigned char h)
{
	if (h >= '0' && h <= '9')
		return h - '0';
	h |= 0x20;
	return h >= 'a' && h <= 'f' ? h - 'a' + 10 : -1;
}

/* Skip a {...} argument at *p (\x{..}, \p{..}, \g{..}): 0 when malformed. */
static int skip_braces(g_planner *g, const unsigned char **p)
{
	if (*p >= g->end || **p != '{')
		return 1;
	const unsigned char *q = *p + 1;
	while (q < g->end && *q != '}')
		q++;
	if (q >= g->end)
		return 0;
	*p = q + 1;
	return 1;
}

enum esc_kind {
	ESC_CHAR,      /* one code point: *cp */
	ESC_DIGIT,     /* \d */
	ESC_CLASS,     /* a large class: any one character */
	ESC_EMPTY,     /* an assertion: \b \B \A \z \Z \G \K */
	ESC_ANY,       /* anything: back references, \R \X */
	ESC_BAD        /* not followed: plan nothing */
};

/* The escape at g->p (just after the backslash); advances past it. */
static int read_escape(g_planner *g, uint32_t *cp, int in_class)
{
	const unsigned char *p = g->p;
	if (p >= g->end)
		return ESC_BAD;
	unsigned char c = *p++;
	g->p = p;
	switch (c) {
	case 't': *cp = '\t'; return ESC_CHAR;
	case 'n': *cp = '\n'; return ESC_CHAR;
	case 'r': *cp = '\r'; return ESC_CHAR;
	case 'f': *cp = '\f'; return ESC_CHAR;
	case 'e': *cp = 27; return ESC_CHAR;
	case 'a': *cp = 7; return ESC_CHAR;
	case 'b':
		if (in_class) {
			*cp = 8;
			return ESC_CHAR;
		}
		return ESC_EMPTY;
	case 'B': case 'A': case 'z': case 'Z': case 'G': case 'K':
		return in_class ? ESC_BAD : ESC_EMPTY;
	case 'd':
		return ESC_DIGIT;
	case 'D': case 'w': case 'W': case 's': case 'S': case 'h': case 'H': case 'v': case 'V':
		return ESC_CLASS;
	case 'N':
		if (p < g->end && *p == '{')
			return skip_braces(g, &g->p) ? ESC_CLASS : ESC_BAD;
		return ESC_CLASS;
	case 'p': case 'P':
		if (p < g->end && *p == '{')
			return skip_braces(g, &g->p) ? ESC_CLASS : ESC_BAD;
		if (p < g->end) {
			g->p = p + 1;   /* \pL */
			return ESC_CLASS;
		}
		return ESC_BAD;
	case 'R': case 'X':
		return in_class ? ESC_BAD : ESC_ANY;
	case 'x': {
		uint32_t v = 0;
		if (p < g->end && *p == '{') {
			const unsigned char *q = p + 1;
			int k = 0;
			while (q < g->end && hexval(*q) >= 0 && k < 8) {
				v = v * 16 + (uint32_t)hexval(*q++);
				k++;
			}
			if (q >= g->end || *q != '}' || k == 0)
				return ESC_BAD;
			g->p = q + 1;
		} else {
			int k = 0;
			while (k < 2 && p < g->end && hexval(*p) >= 0) {
				v = v * 16 + (uint32_t)hexval(*p++);
				k++;
			}
			g->p = p;
		}
		*cp = v;
		return ESC_CHAR;
	}
	case 'o':
		if (p < g->end && *p == '{') {
			const unsigned char *q = p + 1;
			uint32_t v = 0;
			int k = 0;
			while (q < g->end && *q >= '0' && *q <= '7' && k < 11) {
				v = v * 8 + (uint32_t)(*q++ - '0');
				k++;
			}
			if (q >= g->end || *q != '}' || k == 0)
				return ESC_BAD;
			g->p = q + 1;
			*cp = v;
			return ESC_CHAR;
		}
		return ESC_BAD;
	case 'c':
		if (p < g->end && *p >= 0x20 && *p < 0x7f) {
			unsigned char x = *p >= 'a' && *p <= 'z' ? (unsigned char)(*p - 32) : *p;
			*cp = (uint32_t)(x ^ 0x40);
			g->p = p + 1;
			return ESC_CHAR;
		}
		return ESC_BAD;
	case '0': {
		uint32_t v = 0;
		int k = 0;
		while (k < 2 && p < g->end && *p >= '0' && *p <= '7') {
			v = v * 8 + (uint32_t)(*p++ - '0');
			k++;
		}
		g->p = p;
		*cp = v;
		return ESC_CHAR;
	}
	case 'g': case 'k':
		/* back references by number or name: \g1 \g{-1} \k<n> \k'n' \k{n} */
		if (in_class)
			return ESC_BAD;
		if (p < g->end && (*p == '{' || *p == '<' || *p == '\'')) {
			unsigned char close = *p == '{' ? '}' : *p == '<' ? '>' : '\'';
			const unsigned char *q = p + 1;
			while (q < g->end && *q != close)
				q++;
			if (q >= g->end)
				return ESC_BAD;
			g->p = q + 1;
			return ESC_ANY;
		}
		if (c == 'g') {
			while (g->p < g->end && ((*g->p >= '0' && *g->p <= '9') || *g->p == '-' || *g->p == '+'))
				g->p++;
			return ESC_ANY;
		}
		return ESC_BAD;
	case 'Q': case 'E':
		return ESC_BAD;   /* handled by the callers */
	default:
		if (c >= '1' && c <= '9') {
			if (in_class)
				return ESC_BAD;   /* octal or not: not followed */
			while (g->p < g->end && *g->p >= '0' && *g->p <= '9')
				g->p++;
			return ESC_ANY;       /* a back reference */
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80)
			return ESC_BAD;       /* PCRE2 refuses it, or it means more */
		*cp = c;                  /* escaped punctuation stands for itself */
		return ESC_CHAR;
	}
}

static g_info info_codepoint(g_planner *g, uint32_t cp)
{
	unsigned char b[4];
	uint32_t n = utf8_encode(cp, b);
	if (n == 0) {
		g->global_unsupported = 1;
		return g_info_any_char(g);
	}
	return g_info_char(g, b, n);
}

/* Length of the UTF-8 character starting with lead byte c (0: invalid). */
static uint32_t utf8_len(unsigned char c)
{
	return c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
}

/* A character class at '[': the set of its characters when small and
 * ASCII, else any character. */
static g_info parse_class(g_planner *g)
{
	const unsigned char *p = g->p + 1;
	int neg = 0, big = 0;
	uint8_t member[128];
	memset(member, 0, sizeof member);
	if (p < g->end && *p == '^') {
		neg = 1;
		p++;
	}
	int first = 1;
	int have_prev = 0;
	uint32_t prev = 0;
	for (;;) {
		if (p >= g->end) {
			g->global_unsupported = 1;   /* unterminated: PCRE2 refuses it */
			g->p = g->end;
			return g_info_any_char(g);
		}
		unsigned char c = *p;
		if (c == ']' && !first)
			break;
		first = 0;
		uint32_t cp;
		int is_char = 1;
		if (c == '[' && p + 1 < g->end && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
			/* [:alpha:] when well formed; else '[' is a member */
			unsigned char kind = p[1];
			const unsigned char *e = p + 2;
			if (e < g->end && *e == '^')
				e++;
			while (e < g->end && ((*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z')))
				e++;
			if (e + 1 < g->end && e[0] == kind && e[1] == ']') {
				big = 1;
				p = e + 2;
				have_prev = 0;
				continue;
			}
			/* [[:<:]] and other forms PCRE2 gives a meaning or refuses */
			g->global_unsupported = 1;
			g->p = g->end;
			return g_info_any_char(g);
		} else if (c == '\\') {
			if (p + 1 < g->end && (p[1] == 'Q' || p[1] == 'E')) {
				/* \Q...\E inside a class (ranges across it, a ']' first
				 * in it): not followed */
				g->global_unsupported = 1;
				g->p = g->end;
				return g_info_any_char(g);
			}
			g->p = p + 1;
			int k = read_escape(g, &cp, 1);
			p = g->p;
			if (k == ESC_DIGIT) {
				for (int d = '0'; d <= '9'; d++)
					member[d] = 1;
				is_char = 0;
			} else if (k == ESC_CLASS) {
				big = 1;
				is_char = 0;
			} else if (k != ESC_CHAR) {
				g->global_unsupported = 1;
				g->p = g->end;
				return g_info_any_char(g);
			}
		} else if (c >= 0x80) {
			uint32_t n = utf8_len(c);
			if (n == 0 || p + n > g->end) {
				g->global_unsupported = 1;
				g->p = g->end;
				return g_info_any_char(g);
			}
			cp = 0x80;   /* non-ASCII: any character */
			p += n;
		} else {
			cp = c;
			p++;
		}
		if (!is_char) {
			if (have_prev == 2)
				member['-'] = 1;   /* [a-\d]: the '-' is a member */
			have_prev = 0;
			continue;
		}
		/* a range: prev-cp */
		if (have_prev == 2) {
			if (cp < prev) {
				g->global_unsupported = 1;   /* PCRE2 refuses it */
				g->p = g->end;
				return g_info_any_char(g);
			}
			if (cp >= 0x80 || cp - prev > MAX_CLASS)
				big = 1;
			else
				for (uint32_t x = prev; x <= cp; x++)
					member[x] = 1;
			have_prev = 0;
			continue;
		}
		if (cp >= 0x80)
			big = 1;
		else
			member[cp] = 1;
		if (p + 1 < g->end && *p == '-' && p[1] != ']') {
			prev = cp;
			have_prev = 2;
			p++;
		} else {
			have_prev = 1;
		}
	}
	g->p = p + 1;
	if (neg || big)
		return g_info_any_char(g);
	/* the members, folded as the index folds them */
	uint8_t folded[128];
	memset(folded, 0, sizeof folded);
	uint32_t n = 0;
	for (int c = 0; c < 128; c++) {
		if (!member[c])
			continue;
		unsigned char f = ix_tri_fold((unsigned char)c);
		if (!folded[f]) {
			folded[f] = 1;
			n++;
		}
	}
	if (n == 0 || n > MAX_CLASS)
		return g_info_any_char(g);
	g_set s = g_set_new(g, n);
	unsigned char *bytes = g_plan_alloc(g, n);
	if (!s.v || !bytes)
		return g_info_any_char(g);
	for (int c = 0; c < 128; c++) {
		if (folded[c]) {
			bytes[s.n] = (unsigned char)c;
			s.v[s.n] = (g_str){ bytes + s.n, 1 };
			s.n++;
		}
	}
	return g_info_exact(s);
}

/* A quantifier at p: 0 none; else 1 with its bounds (max UINT32_MAX for
 * none) and *len its length (lazy or possessive suffix included). */
static int quantifier(g_planner *g, const unsigned char *p, size_t *len, uint32_t *min,
                      uint32_t *max)
{
	*len = 0;
	if (p >= g->end)
		return 0;
	const unsigned char *q = p;
	if (*q == '*' || *q == '?' || *q == '+') {
		*min = *q == '+';
		*max = *q == '?' ? 1 : UINT32_MAX;
		q++;
	} else if (*q == '{') {
		const unsigned char *r = q + 1;
		uint32_t lo = 0, hi;
		int digits = 0, hdigits = 0;
		while (r < g->end && *r >= '0' && *r <= '9') {
			lo = lo * 10 + (uint32_t)(*r - '0');
			if (lo > 100000)
				lo = 100000;
			r++;
			digits++;
		}
		hi = lo;
		if (r < g->end && *r == ',') {
			r++;
			hi = 0;
			while (r < g->end && *r >= '0' && *r <= '9') {
				hi = hi * 10 + (uint32_t)(*r - '0');
				if (hi > 100000)
					hi = 100000;
				r++;
				hdigits++;
			}
			if (!hdigits)
				hi = UINT32_MAX;
		}
		if (!digits || r >= g->end || *r != '}') {
			/* a literal '{' in PCRE2 10.42; {,n} and { 2 , 3 } are
			 * quantifiers from 10.43: not followed */
			const unsigned char *t = q + 1;
			int nd = 0;
			for (int part = 0; part < 2; part++) {
				while (t < g->end && (*t == ' ' || *t == '\t'))
					t++;
				while (t < g->end && *t >= '0' && *t <= '9') {
					t++;
					nd++;
				}
				while (t < g->end && (*t == ' ' || *t == '\t'))
					t++;
				if (part == 0 && t < g->end && *t == ',')
					t++;
				else
					break;
			}
			if (nd && t < g->end && *t == '}')
				g->global_unsupported = 1;
			return 0;
		}
		*min = lo;
		*max = hi;
		q = r + 1;
	} else {
		return 0;
	}
	if (q < g->end && (*q == '?' || *q == '+'))
		q++;
	*len = (size_t)(q - p);
	return 1;
}

/* ---- the recursive descent --------------------------------------------------------- */

static g_info parse_alt(g_planner *g);

/* A group at '(': its info, having read to its ')'. */
static g_info parse_group(g_planner *g)
{
	const unsigned char *p = g->p + 1;
	int discard = 0;   /* a lookaround: read it, keep nothing */
	if (p < g->end && *p == '*') {
		g->global_unsupported = 1;   /* (*VERB) and (*pla:...) */
		g->p = g->end;
		return g_info_any_match(g);
	}
	if (p < g->end && *p == '?') {
		p++;
		if (p >= g->end) {
			g->global_unsupported = 1;
			g->p = g->end;
			return g_info_any_match(g);
		}
		unsigned char c = *p;
		if (c == ':' || c == '>' || c == '|') {
			p++;                       /* non-capturing, atomic, branch reset */
		} else if (c == '=' || c == '!') {
			p++;
			discard = 1;
		} else if (c == '<' && p + 1 < g->end && (p[1] == '=' || p[1] == '!')) {
			p += 2;
			discard = 1;
		} else if (c == '<' || c == '\'' || (c == 'P' && p + 1 < g->end && p[1] == '<')) {
			/* a named group */
			unsigned char close = c == '\'' ? '\'' : '>';
			p += c == 'P' ? 2 : 1;
			while (p < g->end && *p != close)
				p++;
			if (p >= g->end) {
				g->global_unsupported = 1;
				g->p = g->end;
				return g_info_any_match(g);
			}
			p++;
		} else if (c == '#') {
			while (p < g->end && *p != ')')
				p++;
			g->p = p < g->end ? p + 1 : g->end;
			size_t ql;
			uint32_t mn, mx;
			if (quantifier(g, g->p, &ql, &mn, &mx))
				g->global_unsupported = 1;   /* the quantifier takes the item before */
			return g_info_empty(g);
		} else {
			/* inline options (?i) (?i:...) (?-x); anything else
			 * (conditionals, recursion, callouts) is not followed */
			const unsigned char *o = p;
			int opt_x = 0, opt_i = 0;
			while (o < g->end && *o && strchr("imnsxUJaDSWPT-^", *o)) {
				opt_x |= *o == 'x';
				opt_i |= *o == 'i';
				o++;
			}
			if (o == p || o >= g->end || (*o != ')' && *o != ':')) {
				g->global_unsupported = 1;
				g->p = g->end;
				return g_info_any_match(g);
			}
			if (opt_x)
				g->global_unsupported = 1;   /* spaces and # change meaning */
			if (opt_i)
				g->caseless = 1;             /* from here on: more cautious */
			if (*o == ')') {
				g->p = o + 1;
				return g_info_empty(g);
			}
			p = o + 1;
		}
	}
	if (++g->depth > G_MAX_DEPTH) {
		g->global_unsupported = 1;
		g->p = g->end;
		return g_info_any_match(g);
	}
	g->p = p;
	g_info x = parse_alt(g);
	g->depth--;
	if (g->p < g->end && *g->p == ')')
		g->p++;
	else
		g->global_unsupported = 1;   /* unclosed: PCRE2 refuses it */
	return discard ? g_info_empty(g) : x;
}

/* One atom and its quantifier. */
static g_info parse_piece(g_planner *g)
{
	unsigned char c = *g->p;
	g_info x;
	if (c == '(') {
		x = parse_group(g);
	} else if (c == '[') {
		x = parse_class(g);
	} else if (c == '\\') {
		const unsigned char *q = g->p + 1;
		if (q < g->end && *q == 'Q') {
			/* \Q...\E: a literal string; a quantifier after it applies to
			 * its last character */
			q++;
			x = g_info_empty(g);
			g_info last = g_info_empty(g);
			int have_last = 0;
			while (q < g->end && !(q[0] == '\\' && q + 1 < g->end && q[1] == 'E') && !g->err) {
				uint32_t n = utf8_len(*q);
				if (n == 0 || q + n > g->end) {
					g->global_unsupported = 1;
					break;
				}
				if (have_last)
					x = g_info_concat(g, x, last);
				last = g_info_char(g, q, n);
				have_last = 1;
				q += n;
			}
			g->p = q < g->end ? q + 2 : g->end;
			for (;;) {
				size_t ql;
				uint32_t mn, mx;
				if (!quantifier(g, g->p, &ql, &mn, &mx))
					break;
				if (!have_last) {
					/* \Q\E* : the quantifier takes the item before */
					g->global_unsupported = 1;
					g->p = g->end;
					return g_info_any_match(g);
				}
				g->p += ql;
				last = g_info_repeat(g, last, mn, mx);
			}
			return have_last ? g_info_concat(g, x, last) : x;
		}
		if (q < g->end && *q == 'E') {
			g->p = q + 1;   /* a stray \E is ignored */
			size_t ql;
			uint32_t mn, mx;
			if (quantifier(g, g->p, &ql, &mn, &mx)) {
				g->global_unsupported = 1;   /* the quantifier takes the item before */
				g->p = g->end;
				return g_info_any_match(g);
			}
			return g_info_empty(g);
		}
		g->p = q;
		uint32_t cp = 0;
		switch (read_escape(g, &cp, 0)) {
		case ESC_CHAR: x = info_codepoint(g, cp); break;
		case ESC_DIGIT: {
			g_set s = g_set_new(g, 10);
			unsigned char *d = g_plan_alloc(g, 10);
			if (!s.v || !d) {
				x = g_info_any_char(g);
				break;
			}
			for (int i = 0; i < 10; i++) {
				d[i] = (unsigned char)('0' + i);
				s.v[s.n++] = (g_str){ d + i, 1 };
			}
			x = g_info_exact(s);
			break;
		}
		case ESC_CLASS: x = g_info_any_char(g); break;
		case ESC_EMPTY: x = g_info_empty(g); break;
		case ESC_ANY: x = g_info_any_match(g); break;
		default:
			g->global_unsupported = 1;
			g->p = g->end;
			return g_info_any_match(g);
		}
	} else if (c == '.') {
		g->p++;
		x = g_info_any_char(g);
	} else if (c == '^' || c == '$') {
		g->p++;
		x = g_info_empty(g);
	} else if (c == '*' || c == '+' || c == '?') {
		/* a quantifier with nothing before it: PCRE2 refuses it */
		g->global_unsupported = 1;
		g->p = g->end;
		return g_info_any_match(g);
	} else {
		uint32_t n = utf8_len(c);
		if (n == 0 || g->p + n > g->end) {
			g->global_unsupported = 1;   /* not UTF-8: PCRE2 refuses it */
			g->p = g->end;
			return g_info_any_match(g);
		}
		x = g_info_char(g, g->p, n);
		g->p += n;
	}
	/* quantifiers, possibly more than one (a{2}{3}, a?+ is one) */
	for (;;) {
		size_t ql;
		uint32_t mn, mx;
		if (!quantifier(g, g->p, &ql, &mn, &mx))
			break;
		g->p += ql;
		x = g_info_repeat(g, x, mn, mx);
	}
	return x;
}

static g_info parse_seq(g_planner *g)
{
	g_info x = g_info_empty(g);
	while (g->p < g->end && !g->err && !g->global_unsupported && *g->p != '|' && *g->p != ')')
		x = g_info_concat(g, x, parse_piece(g));
	return x;
}

static g_info parse_alt(g_planner *g)
{
	g_info x = parse_seq(g);
	while (g->p < g->end && *g->p == '|' && !g->err && !g->global_unsupported) {
		g->p++;
		x = g_info_alternate(g, x, parse_seq(g));
	}
	return x;
}

g_info g_read_regex(g_planner *g)
{
	return parse_alt(g);
}

/* -F: the lines of the string, any of them. */
g_info g_read_literal(g_planner *g)
{
	g_info all = { 0 };
	int have = 0;
	const unsigned char *p = g->p;
	while (p <= g->end && !g->err && !g->global_unsupported) {
		const unsigned char *e = p;
		while (e < g->end && *e != '\n')
			e++;
		g_info line = g_info_empty(g);
		for (const unsigned char *c = p; c < e && !g->err;) {
			uint32_t n = utf8_len(*c);
			if (n == 0 || c + n > e) {
				/* not UTF-8: the bytes as they are (no folding trouble) */
				line = g_info_concat(g, line, g_info_exact(g_set_one(g, (const unsigned char[]){ ix_tri_fold(*c) }, 1)));
				c++;
				continue;
			}
			line = g_info_concat(g, line, g_info_char(g, c, n));
			c += n;
		}
		all = have ? g_info_alternate(g, all, line) : line;
		have = 1;
		if (e >= g->end)
			break;
		p = e + 1;
	}
	return have ? all : g_info_any_match(g);
}

/* ---- literals every match contains ----------------------------------------------------------- */

typedef struct litrun {
	fa_arena *a;
	g_lit *out;
	uint32_t max, n;
	unsigned char buf[256];
	uint32_t len;
	int err;
} litrun;

/* The run so far is one required literal (kept when 2 bytes or longer;
 * the longest are kept when there are more than max). */
static void lit_end(litrun *r)
{
	if (r->len >= 2 && !r->err) {
		char *s = fa_arena_strndup(r->a, (const char *)r->buf, r->len);
		if (!s) {
			r->err = fa_err(FATHOM_ENOMEM, "out of memory");
		} else if (r->n < r->max) {
			r->out[r->n++] = (g_lit){ s, r->len };
		} else {
			uint32_t shortest = 0;
			for (uint32_t i = 1; i < r->n; i++)
				if (r->out[i].n < r->out[shortest].n)
					shortest = i;
			if (r->out[shortest].n < r->len)
				r->out[shortest] = (g_lit){ s, r->len };
		}
	}
	r->len = 0;
}

static void lit_add(litrun *r, const unsigned char *b, uint32_t n)
{
	if (r->len + n > sizeof r->buf)
		lit_end(r);   /* a very long run: its first part is as good */
	memcpy(r->buf + r->len, b, n);
	r->len += n;
}

/* Skip the quantifiers at g->p; the smallest count they allow (0 or 1+). */
static uint32_t skip_quantifiers(g_planner *g, int *any)
{
	uint32_t lo = 1;
	*any = 0;
	for (;;) {
		size_t ql;
		uint32_t mn, mx;
		if (!quantifier(g, g->p, &ql, &mn, &mx))
			return lo;
		g->p += ql;
		*any = 1;
		if (mn == 0)
			lo = 0;
	}
}

/* Does the pattern set an inline option that changes case or spacing
 * ((?i), (?x), (?-i:...))? Then no literal is certain. */
static int inline_case_or_space(const unsigned char *p, const unsigned char *end)
{
	return g_inline_option(p, end, 'i') || g_inline_option(p, end, 'x');
}

int g_required(fa_arena *a, const char *pattern, size_t len, unsigned flags, g_lit *out,
               uint32_t max, uint32_t *n)
{
	*n = 0;
	if ((flags & G_CASELESS) || len > G_MAX_PATTERN || max == 0)
		return 0;
	litrun r;
	memset(&r, 0, sizeof r);
	r.a = a;
	r.out = out;
	r.max = max;
	if (flags & G_LITERAL) {
		if (!memchr(pattern, '\n', len)) {
			for (size_t i = 0; i < len; i += sizeof r.buf) {
				uint32_t k = (uint32_t)(len - i < sizeof r.buf ? len - i : sizeof r.buf);
				lit_add(&r, (const unsigned char *)pattern + i, k);
			}
			lit_end(&r);
		}
		*n = r.n;
		return r.err;
	}
	g_planner g = { a, (const unsigned char *)pattern, (const unsigned char *)pattern + len, 1, 0, 0, 0 };
	if (inline_case_or_space(g.p, g.end))
		return 0;
	while (g.p < g.end && !g.err) {
		if (g.global_unsupported) {
			*n = 0;
			return 0;
		}
		unsigned char c = *g.p;
		unsigned char bytes[4];
		uint32_t nb = 0;
		int any;
		if (c == '|' || c == ')' || c == '*' || c == '+' || c == '?') {
			*n = 0;   /* an alternative at the top, or what PCRE2 refuses */
			return 0;
		}
		if (c == '(' || c == '[' || c == '.' || c == '^' || c == '$') {
			lit_end(&r);
			if (c == '(')
				(void)parse_group(&g);
			else if (c == '[')
				(void)parse_class(&g);
			else
				g.p++;
			if (g.global_unsupported) {
				*n = 0;
				return 0;
			}
			skip_quantifiers(&g, &any);
			continue;
		}
		if (c == '\\' && g.p + 1 < g.end && g.p[1] == 'Q') {
			/* \Q...\E: literal bytes; a quantifier after \E takes the last */
			const unsigned char *q = g.p + 2, *last = NULL;
			while (q < g.end && !(q[0] == '\\' && q + 1 < g.end && q[1] == 'E')) {
				uint32_t k = utf8_len(*q);
				if (k == 0 || q + k > g.end)
					return 0;
				if (last)
					lit_add(&r, last, utf8_len(*last));
				last = q;
				q += k;
			}
			g.p = q < g.end ? q + 2 : g.end;
			uint32_t lo = skip_quantifiers(&g, &any);
			if (!last && any) {
				*n = 0;   /* \Q\E* : the quantifier takes the item before */
				return 0;
			}
			if (last && lo > 0)
				lit_add(&r, last, utf8_len(*last));
			if (any)
				lit_end(&r);
			continue;
		}
		if (c == '\\') {
			g.p++;
			uint32_t cp = 0;
			int k = read_escape(&g, &cp, 0);
			if (k == ESC_BAD) {
				*n = 0;
				return 0;
			}
			if (k != ESC_CHAR || (nb = utf8_encode(cp, bytes)) == 0) {
				lit_end(&r);
				skip_quantifiers(&g, &any);
				continue;
			}
		} else {
			nb = utf8_len(c);
			if (nb == 0 || g.p + nb > g.end)
				return 0;
			memcpy(bytes, g.p, nb);
			g.p += nb;
		}
		uint32_t lo = skip_quantifiers(&g, &any);
		if (lo > 0)
			lit_add(&r, bytes, nb);
		if (any)
			lit_end(&r);   /* repeated or optional: the run ends here */
	}
	if (g.global_unsupported) {
		*n = 0;
		return 0;
	}
	lit_end(&r);
	*n = r.err ? 0 : r.n;
	return r.err;
}
