/*
 * ident.c — exact identifiers: test cases (TC-1001, testcase_42,
 * TEST_AUTH), tickets (JIRA-4521, ABC-123), versions (v2.0.1, 1.0.0-beta,
 * 3.5), code classes (AuthService), functions (handle_login()), model
 * numbers (X100, Model-Y200, SKU-4567) and error codes (E0425, ENOENT,
 * HTTP 404), found in text, and their canonical keys.
 *
 * A key ignores case and delimiters but never merges numbers: the text is
 * cut into runs of ASCII letters and runs of digits; letter runs are joined
 * as they are (TEST_AUTH = TestAuth = testauth), a letter run and a digit
 * run by '-' (TC-1001 = tc_1001 = TC 1001 = TC1001 = "tc-1001"), and two
 * digit runs by '.' when a dot stood between them, else '-' (2.0.1 stays
 * "2.0.1", never 2.0.10 or 20.1). A version drops its leading v. The key
 * never depends on the category: CD169 read as a model number and CD169(+)
 * read as a call share "cd-169" (the category is a property of each
 * occurrence, kept beside the key in the index).
 *
 * The scanner is a hand-written pass over the bytes: candidates are runs of
 * letters, digits and inner delimiters (- _ .) between word boundaries, plus
 * "LETTERS 1234" with one space for the spellings people type (TC 1001,
 * HTTP 404; upper case letters only, so prose like "page 12" stays prose).
 * A name followed by "(" is a call; so is a name, one space (or tab), then
 * "(" when the name or its arguments look like code (call_with_space), as
 * GNU-style declarations are written: pthread_mutex_lock (pthread_mutex_t *m).
 * Each candidate is classified by the first rule that fits. The rules
 * ignore case (jira-4521 is JIRA-4521), except that a class needs its
 * PascalCase humps, so the same spellings are found in documents and in
 * queries.
 */
#include "text/text.h"

/* ASCII letters and digits, looked up: the scan asks of every byte. */
enum { CH_ALPHA = 1, CH_DIGIT = 2 };
static const uint8_t char_kind[256] = {
	['0'] = CH_DIGIT, ['1'] = CH_DIGIT, ['2'] = CH_DIGIT, ['3'] = CH_DIGIT, ['4'] = CH_DIGIT,
	['5'] = CH_DIGIT, ['6'] = CH_DIGIT, ['7'] = CH_DIGIT, ['8'] = CH_DIGIT, ['9'] = CH_DIGIT,
	['A'] = CH_ALPHA, ['B'] = CH_ALPHA, ['C'] = CH_ALPHA, ['D'] = CH_ALPHA, ['E'] = CH_ALPHA,
	['F'] = CH_ALPHA, ['G'] = CH_ALPHA, ['H'] = CH_ALPHA, ['I'] = CH_ALPHA, ['J'] = CH_ALPHA,
	['K'] = CH_ALPHA, ['L'] = CH_ALPHA, ['M'] = CH_ALPHA, ['N'] = CH_ALPHA, ['O'] = CH_ALPHA,
	['P'] = CH_ALPHA, ['Q'] = CH_ALPHA, ['R'] = CH_ALPHA, ['S'] = CH_ALPHA, ['T'] = CH_ALPHA,
	['U'] = CH_ALPHA, ['V'] = CH_ALPHA, ['W'] = CH_ALPHA, ['X'] = CH_ALPHA, ['Y'] = CH_ALPHA,
	['Z'] = CH_ALPHA,
	['a'] = CH_ALPHA, ['b'] = CH_ALPHA, ['c'] = CH_ALPHA, ['d'] = CH_ALPHA, ['e'] = CH_ALPHA,
	['f'] = CH_ALPHA, ['g'] = CH_ALPHA, ['h'] = CH_ALPHA, ['i'] = CH_ALPHA, ['j'] = CH_ALPHA,
	['k'] = CH_ALPHA, ['l'] = CH_ALPHA, ['m'] = CH_ALPHA, ['n'] = CH_ALPHA, ['o'] = CH_ALPHA,
	['p'] = CH_ALPHA, ['q'] = CH_ALPHA, ['r'] = CH_ALPHA, ['s'] = CH_ALPHA, ['t'] = CH_ALPHA,
	['u'] = CH_ALPHA, ['v'] = CH_ALPHA, ['w'] = CH_ALPHA, ['x'] = CH_ALPHA, ['y'] = CH_ALPHA,
	['z'] = CH_ALPHA,
};

static int is_alpha(unsigned char c)
{
	return char_kind[c] & CH_ALPHA;
}

static int is_digit(unsigned char c)
{
	return char_kind[c] & CH_DIGIT;
}

static int is_alnum(unsigned char c)
{
	return char_kind[c] != 0;
}

static unsigned char ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + ('a' - 'A')) : c;
}

static int is_delim(unsigned char c)
{
	return c == '-' || c == '_' || c == '.';
}

const char *text_ident_cat_name(int cat)
{
	static const char *const names[] = { "testcase", "ticket", "version", "class",
	                                     "function", "model", "error" };
	return cat >= 0 && cat < TEXT_IDENT_NCAT ? names[cat] : "?";
}

int text_ident_cat_parse(const char *name)
{
	for (int c = 0; c < TEXT_IDENT_NCAT; c++)
		if (strcmp(name, text_ident_cat_name(c)) == 0)
			return c;
	return -1;
}

int text_ident_key(const char *s, size_t n, char *key, size_t cap, uint32_t *len)
{
	size_t o = 0, i = 0;
	int prev = 0;         /* 0 none, 1 letters, 2 digits */
	int dot = 0;          /* a '.' since the previous run */
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (!is_alnum(c)) {
			dot |= c == '.';
			i++;
			continue;
		}
		int kind = is_digit(c) ? 2 : 1;
		if (prev) {
			char sep = 0;
			if (prev != kind)
				sep = '-';
			else if (kind == 2)
				sep = dot ? '.' : '-';   /* letters join: TEST_AUTH = testauth */
			if (sep) {
				if (o + 1 >= cap)
					return -1;
				key[o++] = sep;
			}
		}
		while (i < n && (is_digit((unsigned char)s[i]) ? 2 : is_alpha((unsigned char)s[i]) ? 1 : 0) == kind) {
			if (o + 1 >= cap)
				return -1;
			key[o++] = (char)ascii_lower((unsigned char)s[i]);
			i++;
		}
		prev = kind;
		dot = 0;
	}
	if (o == 0)
		return -1;
	key[o] = '\0';
	*len = (uint32_t)o;
	return 0;
}

/* ---- classification ------------------------------------------------------- */

/* s[0..n) is w (lower case, NUL-terminated), ignoring case. Stops at the
 * first difference, without measuring w. */
static int ieq(const char *s, size_t n, const char *w)
{
	for (size_t i = 0; i < n; i++)
		if (w[i] == '\0' || ascii_lower((unsigned char)s[i]) != (unsigned char)w[i])
			return 0;
	return n > 0 && w[n] == '\0';
}

/* The lists are short and most words start with another letter than any
 * entry: the first letter is compared before anything else. */
static int in_list(const char *s, size_t n, const char *const *list)
{
	if (n == 0)
		return 0;
	unsigned char c0 = ascii_lower((unsigned char)s[0]);
	for (size_t i = 0; list[i]; i++)
		if ((unsigned char)list[i][0] == c0 && ieq(s, n, list[i]))
			return 1;
	return 0;
}

/* Sorted (strcmp order) for binary search: every word starting with e
 * looks here. */
static const char *const errno_names[] = {
	"e2big", "eacces", "eaddrinuse", "eaddrnotavail", "eafnosupport", "eagain", "ealready",
	"ebadf", "ebusy", "ecanceled", "echild", "econnaborted", "econnrefused", "econnreset",
	"edeadlk", "edestaddrreq", "edom", "edquot", "eexist", "efault", "efbig", "ehostunreach",
	"eidrm", "eilseq", "einprogress", "eintr", "einval", "eio", "eisconn", "eisdir", "eloop",
	"emfile", "emlink", "emsgsize", "enametoolong", "enetdown", "enetunreach", "enfile",
	"enobufs", "enodata", "enodev", "enoent", "enoexec", "enolck", "enomem", "enomsg",
	"enoprotoopt", "enospc", "enosys", "enotconn", "enotdir", "enotempty", "enotrecoverable",
	"enotsock", "enotsup", "enotty", "enxio", "eopnotsupp", "eoverflow", "eperm", "epipe",
	"eproto", "eprotonosupport", "eprototype", "erange", "erofs", "espipe", "esrch", "estale",
	"etime", "etimedout", "ewouldblock", "exdev",
};

/* The longest errno name, enotrecoverable. */
#define ERRNO_NAME_MAX 15

static int is_errno_name(const char *s, size_t n)
{
	char w[ERRNO_NAME_MAX];
	if (n > sizeof w)
		return 0;
	for (size_t i = 0; i < n; i++)
		w[i] = (char)ascii_lower((unsigned char)s[i]);
	return text_in_sorted(errno_names, FA_ARRAY_LEN(errno_names), w, n);
}

static const char *const keywords[] = {
	"if", "for", "while", "switch", "return", "sizeof", "defined", "elif", "catch",
	"else", "case", "do", "and", "or", "not", "typeof", "alignof", "assert", "print",
	"function", "def", "new", "delete", "throw", "with", "in", "is", "when", "match",
	NULL
};

static const char *const testcase_prefixes[] = { "tc", "test", "testcase", "tst", "tcase", NULL };
static const char *const model_prefixes[] = { "sku", "model", "part", "pn", "item", NULL };

/* Runs of the candidate: kind (1 letters, 2 digits), start, length, the
 * delimiter before it (0 for none) and whether a '.' was among those. */
typedef struct run {
	uint8_t kind;
	char delim;
	uint8_t dot;
	uint32_t at, len;
} run;

#define MAX_RUNS 16

/* Split s[0..n) into runs of letters and of digits; humps: also at a
 * camelCase hump (spin|Lock) and before the last capital of an acronym
 * followed by a word (HTTP|Server), where the tokenizer splits too. */
static int split_runs(const char *s, size_t n, int humps, run *r, size_t *nr)
{
	size_t k = 0, i = 0;
	char delim = 0;
	uint8_t dot = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (!is_alnum(c)) {
			delim = (char)c;
			dot |= c == '.';
			i++;
			continue;
		}
		if (k == MAX_RUNS)
			return -1;
		uint8_t kind = is_digit(c) ? 2 : 1;
		size_t at = i++;
		while (i < n && is_alnum((unsigned char)s[i]) && (is_digit((unsigned char)s[i]) ? 2 : 1) == kind) {
			int up = s[i] >= 'A' && s[i] <= 'Z';
			int prev_low = s[i - 1] >= 'a' && s[i - 1] <= 'z';
			int prev_up = s[i - 1] >= 'A' && s[i - 1] <= 'Z';
			int next_low = i + 1 < n && s[i + 1] >= 'a' && s[i + 1] <= 'z';
			if (humps && up && (prev_low || (prev_up && next_low)))
				break;
			i++;
		}
		r[k++] = (run){ kind, delim, dot, (uint32_t)at, (uint32_t)(i - at) };
		delim = 0;
		dot = 0;
	}
	*nr = k;
	return 0;
}

static int all_upper(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!(s[i] >= 'A' && s[i] <= 'Z'))
			return 0;
	return 1;
}

/* Classify s[0..n) (n >= 1); call_after: a '(' follows. -1: not an identifier. */
static int classify(const char *s, size_t n, int call_after)
{
	run r[MAX_RUNS];
	size_t nr;
	if (split_runs(s, n, 0, r, &nr) || nr == 0)
		return -1;
	const char *r0 = s + r[0].at;

	/* function: a name followed by '(' */
	if (call_after) {
		int name = is_alpha((unsigned char)s[0]) || s[0] == '_';
		for (size_t i = 0; i < n && name; i++)
			name = is_alnum((unsigned char)s[i]) || s[i] == '_';
		if (name && n >= 3 && !in_list(s, n, keywords))
			return TEXT_IDENT_FUNCTION;
	}
	/* version: v?D(.D)+(-suffix)? */
	{
		size_t i = 0;
		if (r[0].kind == 1 && r[0].len == 1 && (r0[0] == 'v' || r0[0] == 'V') && nr >= 2 &&
		    r[1].delim == 0)
			i = 1;
		size_t nd = 0;
		while (i < nr && r[i].kind == 2 && (nd == 0 || r[i].delim == '.')) {
			nd++;
			i++;
		}
		if (nd >= 2 && (i == nr || r[i].delim == '-'))
			return TEXT_IDENT_VERSION;
	}
	/* error codes: E0425, ENOENT, HTTP 404 */
	if (nr == 2 && r[0].kind == 1 && r[1].kind == 2 && r[0].len == 1 && (r0[0] == 'E' || r0[0] == 'e') &&
	    r[1].len >= 3 && r[1].len <= 5 && r[1].delim == 0)
		return TEXT_IDENT_ERROR;
	if (nr == 1 && r[0].kind == 1 && ascii_lower((unsigned char)s[0]) == 'e' &&
	    is_errno_name(s, n))   /* every errno name starts with E */
		return TEXT_IDENT_ERROR;
	if (nr == 2 && ieq(r0, r[0].len, "http") && r[1].kind == 2 && r[1].len == 3 &&
	    s[r[1].at] >= '1' && s[r[1].at] <= '5')
		return TEXT_IDENT_ERROR;
	/* test cases: TC-1001, testcase_42, TEST_AUTH */
	if (nr >= 2 && r[0].kind == 1 && r[1].kind == 2 && in_list(r0, r[0].len, testcase_prefixes))
		return TEXT_IDENT_TESTCASE;
	if (nr >= 2 && ieq(r0, r[0].len, "test") && r[1].kind == 1 && r[1].delim == '_') {
		int ok = 1;
		for (size_t i = 0; i < n && ok; i++)
			ok = is_alpha((unsigned char)s[i]) || s[i] == '_' || is_digit((unsigned char)s[i]);
		if (ok)
			return TEXT_IDENT_TESTCASE;
	}
	/* model numbers: SKU-4567, Model-Y200, X100 */
	if (nr >= 2 && r[0].kind == 1 && in_list(r0, r[0].len, model_prefixes) && r[1].delim &&
	    r[nr - 1].kind == 2)
		return TEXT_IDENT_MODEL;
	if (nr == 2 && r[0].kind == 1 && r[1].kind == 2 && r[1].delim == 0 && r[0].len <= 3 &&
	    r[1].len >= 2)
		return TEXT_IDENT_MODEL;
	/* tickets: JIRA-4521, BUG-789, ABC-123 */
	if (nr == 2 && r[0].kind == 1 && r[1].kind == 2 && r[0].len >= 2 && r[0].len <= 10 &&
	    (r[1].delim == '-' || r[1].delim == ' ' || r[1].delim == '_'))
		return TEXT_IDENT_TICKET;
	/* code classes: AuthService, UserController, HTTPServer */
	if (nr == 1 && r[0].kind == 1 && n >= 4 && s[0] >= 'A' && s[0] <= 'Z') {
		/* an upper case letter after a lower case one (AuthService), or an
		 * acronym before a word (HTTPServer) */
		int hump = 0, lower = 0;
		for (size_t i = 1; i < n; i++) {
			int up = s[i] >= 'A' && s[i] <= 'Z';
			if (!up)
				lower = 1;
			else if (lower)
				hump = 1;
			if (up && i + 1 < n && s[i - 1] >= 'A' && s[i - 1] <= 'Z' && s[i + 1] >= 'a' &&
			    s[i + 1] <= 'z' && n >= 5)
				hump = 1;
		}
		if (hump)
			return TEXT_IDENT_CLASS;
	}
	return -1;
}

/* Does the name s[0..n) look like code: an '_' inside, or a camelCase hump
 * (a lower case letter, then an upper case one)? */
static int name_looks_like_code(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '_' || (i > 0 && s[i] >= 'A' && s[i] <= 'Z' && s[i - 1] >= 'a' && s[i - 1] <= 'z'))
			return 1;
	return 0;
}

/* The longest argument list call_with_space reads for code-like signs. */
#define CALL_ARGS_MAX 256

/* p[0..n) starts with "(": do the parentheses hold what a C declaration
 * or call holds, not prose? Nothing or "void", or an '_', '*' or '&'
 * before the ')' (within CALL_ARGS_MAX bytes). "leaves (Morus alba" has
 * none of them. */
static int args_look_like_code(const char *p, size_t n)
{
	size_t i = 1, lim = n < CALL_ARGS_MAX ? n : CALL_ARGS_MAX;
	while (i < lim && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (i < lim && p[i] == ')')
		return 1;
	if (i + 4 < lim && memcmp(p + i, "void", 4) == 0) {
		size_t j = i + 4;
		while (j < lim && (p[j] == ' ' || p[j] == '\t'))
			j++;
		if (j < lim && p[j] == ')')
			return 1;
	}
	for (; i < lim && p[i] != ')' && p[i] != '('; i++)
		if (p[i] == '_' || p[i] == '*' || p[i] == '&')
			return 1;
	return 0;
}

/* s[e] follows the name s[i..e): is it "name (" with a space that still
 * makes a call? Only for a name that is a name (letters, digits, '_'). */
static int call_with_space(const char *s, size_t n, size_t i, size_t e)
{
	if (e + 1 >= n || (s[e] != ' ' && s[e] != '\t') || s[e + 1] != '(')
		return 0;
	for (size_t k = i; k < e; k++)
		if (!is_alnum((unsigned char)s[k]) && s[k] != '_')
			return 0;
	return name_looks_like_code(s + i, e - i) || args_look_like_code(s + e + 1, n - e - 1);
}

int text_idents(const char *s, size_t n, const text_ident_opts *o, text_ident_cb cb, void *ctx)
{
	uint32_t found = 0, min_len = o && o->min_len ? o->min_len : 3;
	uint32_t max = o && o->max_per_text ? o->max_per_text : 50;
	size_t i = 0;
	while (i < n && found < max) {
		unsigned char c = (unsigned char)s[i];
		if (!is_alnum(c) || (i > 0 && (is_alnum((unsigned char)s[i - 1]) || s[i - 1] == '_'))) {
			i++;
			continue;
		}
		/* The candidate: alnum runs with single inner delimiters. */
		size_t e = i;
		int letters = 1;
		while (e < n) {
			if (is_alnum((unsigned char)s[e])) {
				letters &= is_alpha((unsigned char)s[e]);
				e++;
			} else if (is_delim((unsigned char)s[e]) && e + 1 < n && is_alnum((unsigned char)s[e + 1]) &&
			           !(s[e] == '.' && is_alpha((unsigned char)s[e - 1]) &&
			             is_alpha((unsigned char)s[e + 1]))) {
				/* a dot between letters ends it: obj.method(), e.g. */
				letters = 0;
				e++;
			} else {
				break;
			}
		}
		/* A word of letters starting in lower case, not called, is no
		 * identifier: of the rules, only an errno name, a class or a
		 * function can be letters alone. The common candidate ends here. */
		int call_after = (e < n && s[e] == '(') || call_with_space(s, n, i, e);
		if (letters && s[i] >= 'a' && s[i] != 'e' && !call_after) {
			i = e;
			continue;
		}
		/* "TC 1001", "HTTP 404": letters, one space, digits. */
		size_t e2 = e;
		if (letters && e - i >= 2 && e - i <= 10 && e + 1 < n && s[e] == ' ' &&
		    is_digit((unsigned char)s[e + 1]) && all_upper(s + i, e - i)) {
			e2 = e + 1;
			while (e2 < n && is_digit((unsigned char)s[e2]))
				e2++;
			if (e2 < n && (is_alpha((unsigned char)s[e2]) || s[e2] == '_'))
				e2 = e;   /* "TC 10a": not a clean number */
		}
		int cat = -1;
		size_t end = e;
		if (e2 > e) {
			cat = classify(s + i, e2 - i, 0);
			if (cat == TEXT_IDENT_TESTCASE || cat == TEXT_IDENT_TICKET || cat == TEXT_IDENT_ERROR)
				end = e2;
			else
				cat = -1;
		}
		if (cat < 0) {
			cat = classify(s + i, e - i, call_after);
			if (cat == TEXT_IDENT_FUNCTION && e + 1 < n && s[e] == '(' && s[e + 1] == ')')
				end = e + 2;   /* the spelling keeps its "()" */
		}
		if (cat >= 0 && end - i >= min_len) {
			text_ident id;
			id.cat = (uint8_t)cat;
			id.start = (uint32_t)i;
			id.end = (uint32_t)end;
			size_t from = i, to = end;
			if (cat == TEXT_IDENT_VERSION && (s[i] == 'v' || s[i] == 'V'))
				from++;
			if (cat == TEXT_IDENT_FUNCTION)
				to = e;   /* the key is the name's alone */
			if (text_ident_key(s + from, to - from, id.key, sizeof id.key, &id.key_len) == 0) {
				found++;
				int rc = cb(ctx, &id);
				if (rc)
					return rc;
			}
		}
		i = end > i ? end : i + 1;
	}
	return 0;
}

/* ---- the whole tokens of an identifier ----------------------------------- */

/* Joiners between two parts that are not both digits: none (spinLock and
 * SPINLOCK index "spinlock"), '_', '-', '.'. Between digits: '.' where the
 * key has a dot, else '_', '-' or ',' (never none: 1 2 joined is 12). */
static const char joiners_any[] = { 0, '_', '-', '.' };
static const char joiners_digits[] = { '_', '-', ',' };

/* The spellings tried in full (three parts); past it, each joiner for all
 * boundaries. An index keeps the key of every whole token of several parts
 * (docs/FORMAT.md 5.10), which finds any split: the variants matter for the
 * word of one part, and for indexes written before those keys. */
#define MAX_VARIANTS 16

typedef struct variant_walk {
	const char *s;
	const run *p;
	size_t np;
	char out[TEXT_MAX_TERM + 1];
	text_ident_variant_cb cb;
	void *ctx;
	int uniform;       /* -1: every combination; else the joiner's index */
} variant_walk;

static size_t joiners_of(const variant_walk *w, size_t i, const char **j)
{
	if (w->p[i - 1].kind == 2 && w->p[i].kind == 2) {
		*j = w->p[i].dot ? "." : joiners_digits;
		return w->p[i].dot ? 1 : sizeof joiners_digits;
	}
	*j = joiners_any;
	return sizeof joiners_any;
}

/* Write part i at out[o..), then every joiner before part i + 1. A whole
 * token the tokenizer would cut is looked up as cut (TEXT_MAX_TERM). */
static int variant_step(variant_walk *w, size_t i, size_t o)
{
	const run *pi = &w->p[i];
	for (uint32_t k = 0; k < pi->len && o < TEXT_MAX_TERM; k++)
		w->out[o++] = (char)ascii_lower((unsigned char)w->s[pi->at + k]);
	if (i + 1 == w->np) {
		w->out[o] = '\0';
		return w->cb(w->ctx, w->out, o);
	}
	const char *j;
	size_t nj = joiners_of(w, i + 1, &j), from = 0, to = nj;
	if (w->uniform >= 0) {
		from = (size_t)w->uniform < nj ? (size_t)w->uniform : 0;
		to = from + 1;
	}
	for (size_t k = from; k < to; k++) {
		size_t o2 = o;
		if (j[k] && o2 < TEXT_MAX_TERM)
			w->out[o2++] = j[k];
		int rc = variant_step(w, i + 1, o2);
		if (rc)
			return rc;
	}
	return 0;
}

int text_ident_variants(const char *s, size_t n, text_ident_variant_cb cb, void *ctx)
{
	run p[MAX_RUNS];
	size_t np;
	if (split_runs(s, n, 1, p, &np) || np == 0)
		return 0;
	variant_walk w = { s, p, np, { 0 }, cb, ctx, -1 };
	size_t combos = 1;
	for (size_t i = 1; i < np && combos <= MAX_VARIANTS; i++) {
		const char *j;
		combos *= joiners_of(&w, i, &j);
	}
	if (combos <= MAX_VARIANTS)
		return variant_step(&w, 0, 0);
	/* Too many to try: the same joiner at every boundary, as names are
	 * mostly written (ext4_fill_super, ext4-fill-super, ext4FillSuper). */
	for (w.uniform = 0; w.uniform < (int)sizeof joiners_any; w.uniform++) {
		int rc = variant_step(&w, 0, 0);
		if (rc)
			return rc;
	}
	return 0;
}
