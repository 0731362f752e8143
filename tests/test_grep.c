/*
 * test_grep.c — the trigram planner: what it asks of a file for literals,
 * regex constructs it follows, the ones it must not guess about, and its
 * soundness on generated cases checked against PCRE2; and the search over
 * an index: the same files and lines whatever the number of threads, equal
 * to PCRE2 run line by line over the files, and a clean error (never a
 * crash or a leak) when any allocation fails.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <sys/stat.h>
#include <unistd.h>

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

/* PCRE2 allocates through the seam: failing allocations in turn reaches
 * PCRE2's own (compiling the pattern, making match data), each a clean
 * FATHOM_ENOMEM, until the pattern compiles and matches. */
static void test_regex_alloc_seam(void)
{
	int inside_pcre = 0, done = 0;
	for (long n = 0; n < 1000 && !done; n++) {
		g_regex *re = NULL;
		g_matcher *m = NULL;
		fa_err_clear();
		fa_alloc_fail_after(n);
		int rc = g_regex_compile(&re, "(a|b)+c\\d{2,}", 13, G_WORD | G_MULTILINE, "pattern", 0);
		if (!rc)
			rc = g_matcher_new(&m);
		size_t ms = 0, me = 0;
		if (!rc)
			rc = g_regex_match(m, re, "x abbc123 y", 11, 0, &ms, &me);
		fa_alloc_fail_after(-1);
		if (rc == 1) {
			done = 1;
			CHECK_EQ(ms, 2);
			CHECK_EQ(me, 9);
		} else {
			CHECK_EQ(rc, FATHOM_ENOMEM);
			inside_pcre += strstr(fathom_errmsg(), "compiling") != NULL;
		}
		g_matcher_free(m);
		g_regex_free(re);
	}
	CHECK(done);
	CHECK(inside_pcre > 0);
}

/* ---- the search over an index ------------------------------------------------ */

/* Output as text, grown with libc's realloc: the library's allocations
 * are the ones the fault test fails. */
typedef struct out_text {
	char *s;
	size_t n, cap;
	size_t files;
} out_text;

static void out_put(out_text *o, const char *p, size_t n)
{
	if (o->n + n + 1 > o->cap) {
		o->cap = (o->n + n + 1) * 2;
		o->s = realloc(o->s, o->cap);
		if (!o->s) {
			perror("realloc");
			exit(2);
		}
	}
	memcpy(o->s + o->n, p, n);
	o->n += n;
	o->s[o->n] = '\0';
}

/* path:line:text, as grep prints it */
static int collect(void *ctx, const fathom_grep_file *f)
{
	out_text *o = ctx;
	o->files++;
	for (size_t i = 0; i < f->n_lines; i++) {
		const fathom_grep_line *l = &f->lines[i];
		char head[600];
		int hn = snprintf(head, sizeof head, "%s:%u:", f->path, l->line);
		out_put(o, head, (size_t)hn);
		if (f->text)
			out_put(o, f->text + l->start, (size_t)(l->end - l->start));
		out_put(o, "\n", 1);
	}
	return 0;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text sorted (grep's output in path order, whatever order
 * the index keeps its files in). */
static char *sorted_lines(const char *text)
{
	size_t n = 0, cap = 64;
	char *copy = strdup(text ? text : ""), **v = malloc(cap * sizeof *v);
	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		v[n++] = l;
	}
	qsort(v, n, sizeof *v, cmp_lines);
	out_text o = { 0 };
	out_put(&o, "", 0);
	for (size_t i = 0; i < n; i++) {
		out_put(&o, v[i], strlen(v[i]));
		out_put(&o, "\n", 1);
	}
	free(v);
	free(copy);
	return o.s;
}

#define SEARCH_FILES 300
static char search_cwd[4096];   /* the tests' folder, back to after a search test */
static const char *search_pattern = "error_\\d*7|w[ae]rn_\\d\\d";

/* A tree of files with matching lines here and there, indexed, then one
 * file changed (its new line must be found) and one deleted (skipped). */
static fathom_index *search_fixture(char **dir_out, char **root_out)
{
	char *dir = test_tmpdir("grep");
	char p[512];
	if (!getcwd(search_cwd, sizeof search_cwd)) {
		perror("getcwd");
		exit(2);
	}
	snprintf(p, sizeof p, "%s/tree", dir);
	mkdir(p, 0755);
	uint64_t x = 88172645463325252ull;
	for (int d = 0; d < 6; d++) {
		snprintf(p, sizeof p, "%s/tree/d%d", dir, d);
		mkdir(p, 0755);
	}
	for (int f = 0; f < SEARCH_FILES; f++) {
		char body[4096];
		size_t bl = 0;
		int lines = 1 + f % 40;
		for (int l = 0; l < lines; l++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			const char *word = x % 11 == 0 ? "error_" : x % 13 == 0 ? "warn_" : x % 17 == 0 ? "WARN_" : "line ";
			bl += (size_t)snprintf(body + bl, sizeof body - bl, "%s%u and more text\n", word,
			                       (unsigned)(x % 1000));
		}
		snprintf(p, sizeof p, "%s/tree/d%d/f%03d.c", dir, f % 6, f);
		test_write(p, body);
	}
	char ixdir[512];
	snprintf(ixdir, sizeof ixdir, "%s/ix", dir);
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *ix = NULL;
	CHECK_OK(fathom_open(&ix, ixdir, &oo));
	/* relative paths, from dir: the index's root is dir, and the searches
	 * (run from there) print paths relative to it */
	if (chdir(dir) != 0) {
		perror(dir);
		exit(2);
	}
	const char *paths[] = { "tree" };
	fathom_ingest_opts io = FATHOM_INGEST_OPTS_INIT;
	CHECK_OK(fathom_index_paths(ix, paths, 1, &io, NULL));
	CHECK_OK(fathom_commit(ix));
	/* changed since indexing: the index rules it out, the disk has a match */
	snprintf(p, sizeof p, "%s/tree/d1/f001.c", dir);
	test_write(p, "no match here\nbut error_17 is here now\n");
	snprintf(p, sizeof p, "%s/tree/d2/f002.c", dir);
	remove(p);
	*dir_out = dir;
	*root_out = strdup("tree");
	return ix;
}

static void search_teardown(char *dir)
{
	if (chdir(search_cwd) != 0)
		perror(search_cwd);
	test_rmrf(dir);
	free(dir);
}

/* What grep must print: PCRE2 on each line of each file on disk. */
static char *search_reference(const char *root)
{
	int err;
	PCRE2_SIZE eo;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)search_pattern, PCRE2_ZERO_TERMINATED,
	                               PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &eo, NULL);
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	out_text o = { 0 };
	out_put(&o, "", 0);
	for (int f = 0; f < SEARCH_FILES; f++) {
		char p[512], text[8192];
		snprintf(p, sizeof p, "%s/d%d/f%03d.c", root, f % 6, f);
		FILE *fp = fopen(p, "rb");
		if (!fp)
			continue;
		size_t n = fread(text, 1, sizeof text - 1, fp);
		fclose(fp);
		text[n] = '\0';
		unsigned no = 1;
		for (char *l = text; *l; no++) {
			char *e = strchr(l, '\n');
			size_t ll = e ? (size_t)(e - l) : strlen(l);
			if (pcre2_match(re, (PCRE2_SPTR)l, ll, 0, 0, md, NULL) >= 0) {
				char head[600];
				int hn = snprintf(head, sizeof head, "%s:%u:", p, no);
				out_put(&o, head, (size_t)hn);
				out_put(&o, l, ll);
				out_put(&o, "\n", 1);
			}
			if (!e)
				break;
			l = e + 1;
		}
	}
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	char *sorted = sorted_lines(o.s);
	free(o.s);
	return sorted;
}

static void test_search_threads(void)
{
	char *dir, *root;
	fathom_index *ix = search_fixture(&dir, &root);
	char *want = search_reference(root);
	CHECK(strlen(want) > 1000);
	CHECK(strstr(want, "f001.c:2:but error_17 is here now") != NULL);
	char *first = NULL;
	unsigned threads[] = { 1, 2, 4, 0 };
	for (size_t t = 0; t < FA_ARRAY_LEN(threads); t++) {
		fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
		go.threads = threads[t];
		fathom_grep_stats st = FATHOM_GREP_STATS_INIT;
		out_text o = { 0 };
		out_put(&o, "", 0);
		CHECK_OK(fathom_grep(ix, search_pattern, &go, collect, &o, &st));
		CHECK(st.planned);
		CHECK_EQ(st.changed, 1);
		CHECK_EQ(st.missing, 1);
		CHECK(st.threads >= 1 && st.threads <= 16);
		if (threads[t])   /* no more threads than batches of 128 files */
			CHECK_EQ(st.threads, FA_MIN(threads[t], (SEARCH_FILES + 127) / 128));
		/* in index order, the same whatever the threads */
		if (!first)
			first = strdup(o.s);
		else
			CHECK_STR(o.s, first);
		char *got = sorted_lines(o.s);
		CHECK_STR(got, want);
		free(got);
		free(o.s);
	}
	free(first);
	free(want);
	fathom_close(ix);
	search_teardown(dir);
	free(root);
}

/* Every allocation failed in turn, from the first on, until the search
 * succeeds: each run ends in FATHOM_ENOMEM or success, never a crash or a
 * leak (the sanitizer build checks leaks), and the successful run gives
 * the full answer. PCRE2's own allocations go through the seam too. */
static void test_search_alloc_failure(void)
{
	char *dir, *root;
	fathom_index *ix = search_fixture(&dir, &root);
	char *want = search_reference(root);
	static const struct {
		unsigned threads;
		int boolean;
		const char *pattern;
	} runs[] = {
		{ 1, 0, NULL },
		{ 2, 0, NULL },
		{ 2, 1, "error_\\d+ -file:d3 OR (warn_ case:no)" },
	};
	for (size_t r = 0; r < FA_ARRAY_LEN(runs); r++) {
		fathom_grep_opts go = FATHOM_GREP_OPTS_INIT;
		go.threads = runs[r].threads;
		go.boolean = runs[r].boolean;
		const char *pat = runs[r].pattern ? runs[r].pattern : search_pattern;
		out_text ref = { 0 };
		out_put(&ref, "", 0);
		CHECK_OK(fathom_grep(ix, pat, &go, collect, &ref, NULL));
		int done = 0, failures = 0;
		for (long n = 0; n < 100000 && !done; n++) {
			out_text o = { 0 };
			out_put(&o, "", 0);
			fa_alloc_fail_after(n);
			int rc = fathom_grep(ix, pat, &go, collect, &o, NULL);
			fa_alloc_fail_after(-1);
			if (rc == 0) {
				done = 1;
				CHECK_STR(o.s, ref.s);
			} else if (rc == FATHOM_ENOMEM) {
				failures++;
			} else {
				fprintf(stderr, "  run %zu, failing after %ld: %d (%s)\n", r, n, rc,
				        fathom_errmsg());
				test_failed_checks++;
				done = 1;
			}
			free(o.s);
		}
		CHECK(done);
		CHECK(failures > 10);
		printf("     %s, %u threads: %d allocations failed in turn\n",
		       runs[r].boolean ? "boolean query" : "regex", runs[r].threads, failures);
		if (r == 0) {
			char *got = sorted_lines(ref.s);
			CHECK_STR(got, want);
			free(got);
		}
		free(ref.s);
	}
	/* grep as a retrieval source, the same way */
	fathom_results *res = NULL;
	int done = 0;
	for (long n = 0; n < 100000 && !done; n++) {
		fa_alloc_fail_after(n);
		int rc = fathom_grep_chunks(&res, ix, search_pattern, NULL, 10);
		fa_alloc_fail_after(-1);
		if (rc == 0) {
			done = 1;
			CHECK_EQ(fathom_results_count(res), 10);
			fathom_results_free(res);
		} else if (rc != FATHOM_ENOMEM) {
			fprintf(stderr, "  grep chunks, failing after %ld: %d (%s)\n", n, rc, fathom_errmsg());
			test_failed_checks++;
			done = 1;
		}
	}
	CHECK(done);
	free(want);
	fathom_close(ix);
	search_teardown(dir);
	free(root);
}

int main(void)
{
	RUN(test_plans);
	RUN(test_soundness);
	RUN(test_required);
	RUN(test_boolean_queries);
	RUN(test_regex_alloc_seam);
	RUN(test_search_threads);
	RUN(test_search_alloc_failure);
	return TEST_DONE();
}
