/*
 * test_grep.c — the trigram planner: what it asks of a file for literals,
 * regex constructs it follows, the ones it must not guess about, and its
 * soundness on generated cases checked against PCRE2.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "grep/grep.h"
#include "test.h"

static const char *plan(const char *pat, unsigned flags)
{
	static char out[4096];
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	g_query *q;
	fbuf b;
	fbuf_init(&b, 0);
	if (g_plan(&a, pat, strlen(pat), flags, &q) != 0)
		snprintf(out, sizeof out, "(error)");
	else {
		g_query_format(q, &b);
		snprintf(out, sizeof out, "%.*s", (int)b.len, b.len ? (const char *)b.data : "");
	}
	fbuf_free(&b);
	fa_arena_free(&a);
	return out;
}

static void test_plans(void)
{
	static const struct {
		const char *pat;
		unsigned flags;
		const char *want;
	} cases[] = {
		{ "abcd", 0, "(and \"abc\" \"bcd\")" },
		{ "ab", 0, "ALL" },
		{ "ERR_PTR", 0, "(and \"err\" \"rr_\" \"r_p\" \"_pt\" \"ptr\")" },
		{ "ERR_PTR\\(-E", 0, "(and \"err\" \"rr_\" \"r_p\" \"_pt\" \"ptr\" \"tr(\" \"r(-\" \"(-e\")" },
		{ "foo|bar", 0, "(or \"bar\" \"foo\")" },
		{ "foo|ba", 0, "ALL" },                        /* a branch needs nothing */
		{ "abc.def", 0, "(and \"abc\" \"def\")" },
		{ "abc\\w+def", 0, "(and \"abc\" \"def\")" },
		/* exact sets: the optional u gives two strings; their common
		 * trigrams are required once */
		{ "colou?r", 0, "(and \"col\" \"olo\" (or \"lor\" (and \"lou\" \"our\")))" },
		{ "ab+cd", 0, "\"bcd\"" },
		{ "xab+cd", 0, "(and \"xab\" \"bcd\")" },     /* the last b meets cd */
		{ "(abc|abd)e", 0, "(or (and \"abc\" \"bce\") (and \"abd\" \"bde\"))" },
		{ "x(abc)?yz", 0, "(or (and \"xab\" \"abc\" \"bcy\" \"cyz\") \"xyz\")" },
		{ "(?:abc)+", 0, "\"abc\"" },
		{ "[abc]def", 0, "(and \"def\" (or \"ade\" \"bde\" \"cde\"))" }, /* common parts first */
		{ "abc|abcd", 0, "\"abc\"" },
		{ "[a-z]def", 0, "\"def\"" },                 /* 26 strings: too many to keep */
		{ "0x[0-9a-f]+", 0, "(or \"0x0\" \"0x1\" \"0x2\" \"0x3\" \"0x4\" \"0x5\" \"0x6\" \"0x7\" \"0x8\" \"0x9\" \"0xa\" \"0xb\" \"0xc\" \"0xd\" \"0xe\" \"0xf\")" },
		/* 100 strings are too many; the last digit and "ab" are sure */
		{ "\\d\\dab", 0, "(or \"0ab\" \"1ab\" \"2ab\" \"3ab\" \"4ab\" \"5ab\" \"6ab\" \"7ab\" \"8ab\" \"9ab\")" },
		{ "a.b", 0, "ALL" },
		{ ".*", 0, "ALL" },
		{ "\\Qa.b*c\\E", 0, "(and \"a.b\" \".b*\" \"b*c\")" },
		{ "\\Qabc\\E?d", 0, "(or (and \"abc\" \"bcd\") \"abd\")" }, /* ? takes the c only */
		{ "(?x) a b c", 0, "ALL" },                    /* extended: spaces are not literal */
		{ "(?=abc)abd", 0, "\"abd\"" },               /* a lookahead requires nothing */
		{ "abc\\1def", 0, "(and \"abc\" \"def\")" },   /* a back reference: anything */
		{ "(a)(?R)?b", 0, "ALL" },                     /* recursion: not followed */
		{ "ABC", 0, "\"abc\"" },                       /* the index folds ASCII case */
		{ "\\x41BC", 0, "\"abc\"" },
		{ "\\xe9t\\xe9", 0, "(and \"\\xc3\\xa9t\" \"\\xa9t\\xc3\" \"t\\xc3\\xa9\")" }, /* U+00E9, UTF-8 */
		{ "a.b*c", G_LITERAL, "(and \"a.b\" \".b*\" \"b*c\")" },
		{ "foo\nbar", G_LITERAL, "(or \"bar\" \"foo\")" },
		{ "x{2,}yz", 0, "\"xyz\"" },
		{ "ab{2}cd", 0, "(and \"abb\" \"bbc\" \"bcd\")" },
		{ "x{0,3}yz", 0, "ALL" },
		{ "a{3}", 0, "\"aaa\"" },
		{ "ab{5}", 0, "(and \"bbb\" \"abb\")" },
		{ "abc)", 0, "ALL" },                          /* unbalanced: PCRE2 refuses it */
		/* read as a, '-' and the digits (PCRE2 refuses it; Perl reads it so) */
		{ "[a-\\d]xy", 0, "(or \"-xy\" \"0xy\" \"1xy\" \"2xy\" \"3xy\" \"4xy\" \"5xy\" \"6xy\" \"7xy\" \"8xy\" \"9xy\" \"axy\")" },
		{ "[]a]bc", 0, "(or \"]bc\" \"abc\")" },
		/* forms where a quantifier takes the item before an empty one,
		 * or PCRE2 gives a special meaning: not followed */
		{ "xyzab(?#c)*d", 0, "ALL" },
		{ "xyzab\\Q\\E*d", 0, "ALL" },
		{ "xyzab\\E*d", 0, "ALL" },
		{ "[\\Q]\\E]xyz", 0, "ALL" },
		{ "[[:<:]]abcd", 0, "ALL" },
		{ "xyzab{,2}d", 0, "ALL" },
		{ "xyzab{ 2 }d", 0, "ALL" },
		{ "xyz{a}", 0, "(and \"xyz\" \"yz{\" \"z{a\" \"{a}\")" }, /* a literal brace */
		/* an inline (?i) anywhere: non-ASCII is any character throughout */
		{ "caf\xc3\xa9 (?i)au", 0, "(and \"caf\" \" au\")" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = plan(cases[i].pat, cases[i].flags);
		if (strcmp(got, cases[i].want) != 0) {
			fprintf(stderr, "  [%s]: %s, want %s\n", cases[i].pat, got, cases[i].want);
			test_failed_checks++;
		}
	}
	/* caseless: non-ASCII is any character; k and s are letters like any
	 * other (the index also holds U+212A and U+017F folded to k and s) */
	CHECK_STR(plan("desk top", G_CASELESS), "(and \"des\" \"esk\" \"sk \" \"k t\" \" to\" \"top\")");
	CHECK_STR(plan("café au", G_CASELESS), "(and \"caf\" \" au\")");
	CHECK_STR(plan("café au", 0), "(and \"caf\" \"af\\xc3\" \"f\\xc3\\xa9\" \"\\xc3\\xa9 \" \"\\xa9 a\" \" au\")");
}

/* Generated patterns over a small alphabet, texts too: whenever PCRE2
 * matches, the plan must hold on the text's trigrams. */
static uint8_t seen[1u << 21], tset[1u << 21];

static int add_tri(void *ctx, uint32_t t)
{
	(void)ctx;
	tset[t >> 3] |= (uint8_t)(1u << (t & 7));
	return 0;
}

static int has_tri(void *ctx, uint32_t t)
{
	(void)ctx;
	return tset[t >> 3] >> (t & 7) & 1;
}

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)(rs % n);
}

static void test_soundness(void)
{
	static const char *atoms[] = { "a", "bca", "c", "ab", "abc", "ABx", "[ab]", ".", "\\w",
	                               "(abc|bca)", "(?:cab)", "xab", "\\.", " ab", "sab", "Kab",
	                               "[sk]a", "s{2}", "(?i)kab", "\\d?" };
	static const char *quant[] = { "", "", "", "", "", "?", "*", "+", "{2}", "{0,2}" };
	char pat[256], text[160];
	int matched = 0, planned = 0;
	for (int iter = 0; iter < 20000; iter++) {
		size_t pl = 0;
		int natoms = 1 + (int)rnd(5);
		for (int k = 0; k < natoms; k++)
			pl += (size_t)snprintf(pat + pl, sizeof pat - pl, "%s%s", atoms[rnd(20)], quant[rnd(10)]);
		if (rnd(6) == 0)
			pl += (size_t)snprintf(pat + pl, sizeof pat - pl, "|%s", atoms[rnd(20)]);
		/* texts over the same letters, with U+212A (Kelvin) and U+017F
		 * (long s), which caseless PCRE2 matches as k and s */
		static const char *tokens[] = { "a", "b", "c", "A", "B", "C", " ", "x", "s", ".", "K",
		                                "k", "\xc5\xbf", "\xe2\x84\xaa", "ab", "ca" };
		size_t tl = 0, want = 4 + rnd(40);
		while (tl < want) {
			const char *t = tokens[rnd(16)];
			size_t n = strlen(t);
			if (tl + n > sizeof text)
				break;
			memcpy(text + tl, t, n);
			tl += n;
		}
		unsigned flags = rnd(3) == 0 ? G_CASELESS : 0;
		int err;
		PCRE2_SIZE eo;
		pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, pl,
		                               PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
		                               (flags & G_CASELESS ? PCRE2_CASELESS : 0), &err, &eo, NULL);
		if (!re)
			continue;
		pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
		if (pcre2_match(re, (PCRE2_SPTR)text, tl, 0, 0, md, NULL) >= 0) {
			matched++;
			fa_arena a;
			fa_arena_init(&a, 16 * 1024, 0);
			g_query *q;
			CHECK_OK(g_plan(&a, pat, pl, flags, &q));
			planned += q->op != GQ_ALL;
			memset(tset, 0, sizeof tset);
			CHECK_OK(ix_trigrams((const unsigned char *)text, tl, seen, add_tri, NULL));
			if (!g_query_eval(q, has_tri, NULL)) {
				fprintf(stderr, "  unsound: /%.*s/ on \"%.*s\"\n", (int)pl, pat, (int)tl, text);
				test_failed_checks++;
			}
			/* and every required literal is in the text */
			g_lit req[4];
			uint32_t nreq;
			CHECK_OK(g_required(&a, pat, pl, flags, req, 4, &nreq));
			for (uint32_t r = 0; r < nreq; r++) {
				if (!memmem(text, tl, req[r].p, req[r].n)) {
					fprintf(stderr, "  required \"%.*s\" of /%.*s/ not in \"%.*s\"\n",
					        (int)req[r].n, req[r].p, (int)pl, pat, (int)tl, text);
					test_failed_checks++;
				}
			}
			fa_arena_free(&a);
		}
		pcre2_match_data_free(md);
		pcre2_code_free(re);
	}
	printf("     %d matching cases, %d of them with a trigram plan\n", matched, planned);
	CHECK(matched > 300 && planned > 50);
}

static const char *required(const char *pat, unsigned flags)
{
	static char out[1024];
	fa_arena a;
	fa_arena_init(&a, 4096, 0);
	g_lit v[3];
	uint32_t n;
	size_t o = 0;
	out[0] = '\0';
	if (g_required(&a, pat, strlen(pat), flags, v, 3, &n) == 0)
		for (uint32_t i = 0; i < n; i++)
			o += (size_t)snprintf(out + o, sizeof out - o, "%s[%.*s]", i ? " " : "", (int)v[i].n,
			                      v[i].p);
	fa_arena_free(&a);
	return out;
}

static void test_required(void)
{
	static const struct {
		const char *pat;
		unsigned flags;
		const char *want;
	} cases[] = {
		{ "^\\s*#\\s*define\\s+\\w+_MAGIC\\b", 0, "[define] [_MAGIC]" },
		{ "ERR_PTR\\(-E[A-Z]+\\)", 0, "[ERR_PTR(-E]" },
		{ "static int __init \\w+_init\\(void\\)", 0, "[static int __init ] [_init(void)]" },
		{ "colou?r", 0, "[colo]" },
		{ "ab+cd", 0, "[ab] [cd]" },
		{ "a(bc)d", 0, "" },                  /* single letters around a group */
		{ "xy(bc)*zw", 0, "[xy] [zw]" },
		{ "foo|bar", 0, "" },                  /* an alternative at the top */
		{ "(foo|bar)baz", 0, "[baz]" },
		{ "Foo", G_CASELESS, "" },
		{ "(?i)Foo", 0, "" },
		{ "a.b*c", G_LITERAL, "[a.b*c]" },
		{ "foo\nbar", G_LITERAL, "" },
		{ "\\Qa.b\\E+x", 0, "[a.b]" },      /* + takes the b: the run ends */
		{ "\\x41\\x42C", 0, "[ABC]" },
		{ "caf\\x{e9}", 0, "[caf\xc3\xa9]" },
		{ "one two three four", 0, "[one two three four]" },
		{ "aa\\d{2}bbbb\\w+cc\\sddd", 0, "[ddd] [bbbb] [cc]" }, /* the longest 3 */
		{ "xyzab(?#c)*d", 0, "" },
		{ "xyzab\\Q\\E*d", 0, "" },
		{ "xyzab\\E*d", 0, "" },
		{ "xyzab{,2}d", 0, "" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = required(cases[i].pat, cases[i].flags);
		if (strcmp(got, cases[i].want) != 0) {
			fprintf(stderr, "  required(%s) = %s, want %s\n", cases[i].pat, got, cases[i].want);
			test_failed_checks++;
		}
	}
}

static const char *parse_q(const char *q, unsigned flags)
{
	static char out[4096];
	fa_arena a;
	fa_arena_init(&a, 16 * 1024, 0);
	g_expr *x;
	uint32_t n;
	int rc = g_parse_query(&a, q, strlen(q), flags, &x, &n);
	if (rc) {
		snprintf(out, sizeof out, "error: %s", fathom_errmsg());
	} else {
		fbuf b;
		fbuf_init(&b, 0);
		g_expr_format(x, &b);
		g_query *pq;
		if (g_expr_plan(&a, x, &pq) == 0) {
			fbuf_puts(&b, " => ");
			g_query_format(pq, &b);
		}
		snprintf(out, sizeof out, "%.*s", (int)b.len, b.len ? (const char *)b.data : "");
		fbuf_free(&b);
	}
	fa_arena_free(&a);
	return out;
}

static void test_boolean_queries(void)
{
	static const struct {
		const char *q;
		unsigned flags;
		const char *want;
	} cases[] = {
		{ "error AND handler", 0,
		  "(and (term \"error\") (term \"handler\")) => (and \"err\" \"rro\" \"ror\" \"han\" \"and\" \"ndl\" \"dle\" \"ler\")" },
		{ "error handler", 0,   /* AND is implied */
		  "(and (term \"error\") (term \"handler\")) => (and \"err\" \"rro\" \"ror\" \"han\" \"and\" \"ndl\" \"dle\" \"ler\")" },
		{ "file:auth.c error", 0, "(and (file \"auth.c\") (term \"error\")) => (and \"err\" \"rro\" \"ror\")" },
		{ "lang:c spin_lock", 0,
		  "(and (lang \"c\") (term \"spin_lock\")) => (and \"spi\" \"pin\" \"in_\" \"n_l\" \"_lo\" \"loc\" \"ock\")" },
		{ "foo OR bar", 0, "(or (term \"foo\") (term \"bar\")) => (or \"foo\" \"bar\")" },
		{ "foo or bar", 0, "(or (term \"foo\") (term \"bar\")) => (or \"foo\" \"bar\")" },
		{ "foo -bar", 0, "(and (term \"foo\") (not (term \"bar\"))) => \"foo\"" },
		{ "foo NOT bar", 0, "(and (term \"foo\") (not (term \"bar\"))) => \"foo\"" },
		{ "-file:test foo", 0, "(and (not (file \"test\")) (term \"foo\")) => \"foo\"" },
		{ "(lock OR mutex) release", 0,
		  "(and (or (term \"lock\") (term \"mutex\")) (term \"release\")) => (and (or (and \"loc\" \"ock\") (and \"mut\" \"ute\" \"tex\")) \"rel\" \"ele\" \"lea\" \"eas\" \"ase\")" },
		{ "foo(bar) baz", 0, "(and (term \"foo(bar)\") (term \"baz\")) => (and \"foo\" \"oob\" \"oba\" \"bar\" \"baz\")" },
		{ "(foo)", 0, "(term \"foo\") => \"foo\"" },
		{ "\"a.b c\"", 0, "(term \"a.b c\" literal) => (and \"a.b\" \".b \" \"b c\")" },
		{ "\"say \\\"hi\\\"\"", 0, "(term \"say \\\"hi\\\"\" literal) => (and \"say\" \"ay \" \"y \\x22\" \" \\x22h\" \"\\x22hi\" \"hi\\x22\")" },
		{ "case:no Foo", 0, "(term \"Foo\" caseless) => \"foo\"" },
		{ "case:auto Foo bar", 0, "(and (term \"Foo\") (term \"bar\" caseless)) => (and \"foo\" \"bar\")" },
		{ "foo", G_CASELESS, "(term \"foo\" caseless) => \"foo\"" },
		{ "case:yes foo", G_CASELESS, "(term \"foo\") => \"foo\"" },
		{ "a.b", G_LITERAL, "(term \"a.b\" literal) => \"a.b\"" },
		{ "content:OR", 0, "(term \"OR\") => ALL" },
		{ "file:x", 0, "(file \"x\") => ALL" },
		{ "f:x l:go", 0, "(and (file \"x\") (lang \"go\")) => ALL" },
		{ "foo OR -bar", 0, "(or (term \"foo\") (not (term \"bar\"))) => ALL" },
		/* errors name the column */
		{ "", 0, "error: bad query at column 1: the query holds no pattern, file: or lang:" },
		{ "(foo", 0, "error: bad query at column 1: unclosed parenthesis" },
		{ "foo)", 0, "error: bad query at column 4: unbalanced ')'" },
		{ "AND foo", 0, "error: bad query at column 1: AND with nothing before it" },
		{ "foo AND", 0, "error: bad query at column 5: AND with nothing after it" },
		{ "foo OR", 0, "error: bad query at column 7: OR with nothing on one side" },
		{ "OR foo", 0, "error: bad query at column 1: OR with nothing on one side" },
		{ "foo \"bar", 0, "error: bad query at column 5: unterminated quote" },
		{ "file: foo", 0, "error: bad query at column 1: empty field value" },
		{ "case:maybe foo", 0, "error: bad query at column 1: case: wants yes, no or auto" },
		{ "-", 0, "(term \"-\") => ALL" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = parse_q(cases[i].q, cases[i].flags);
		if (strcmp(got, cases[i].want) != 0) {
			fprintf(stderr, "  [%s]:\n    got  %s\n    want %s\n", cases[i].q, got, cases[i].want);
			test_failed_checks++;
		}
	}
	/* bounded: nesting and the number of patterns */
	char deep[400];
	memset(deep, '(', 200);
	memcpy(deep + 200, "x", 2);
	CHECK(strstr(parse_q(deep, 0), "nested too deep") != NULL);
	fbuf many;
	fbuf_init(&many, 0);
	for (int i = 0; i < 300; i++)
		fbuf_printf(&many, "w%d ", i);
	fbuf_putc(&many, '\0');
	CHECK(strstr(parse_q((const char *)many.data, 0), "too many patterns") != NULL);
	fbuf_free(&many);
}

int main(void)
{
	RUN(test_plans);
	RUN(test_soundness);
	RUN(test_required);
	RUN(test_boolean_queries);
	return TEST_DONE();
}
