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
		{ "foo|bar", 0, "(or \"foo\" \"bar\")" },
		{ "foo|ba", 0, "ALL" },                        /* a branch needs nothing */
		{ "abc.def", 0, "(and \"abc\" \"def\")" },
		{ "abc\\w+def", 0, "(and \"abc\" \"def\")" },
		{ "colou?r", 0, "(and \"col\" \"olo\")" },       /* u is optional: the run ends */
		{ "ab+cd", 0, "\"bcd\"" },
		{ "xab+cd", 0, "(and \"xab\" \"bcd\")" },     /* the last b meets cd */
		{ "(abc|abd)e", 0, "(or \"abc\" \"abd\")" },
		{ "x(abc)?yz", 0, "ALL" },
		{ "(?:abc)+", 0, "\"abc\"" },
		{ "[abc]def", 0, "\"def\"" },
		{ "a.b", 0, "ALL" },
		{ ".*", 0, "ALL" },
		{ "\\Qa.b*c\\E", 0, "(and \"a.b\" \".b*\" \"b*c\")" },
		{ "(?x) a b c", 0, "ALL" },                    /* extended: spaces are not literal */
		{ "(?=abc)abd", 0, "\"abd\"" },
		{ "abc\\1def", 0, "ALL" },                      /* a back reference: not followed */
		{ "ABC", 0, "\"abc\"" },                       /* the index folds ASCII case */
		{ "a.b*c", G_LITERAL, "(and \"a.b\" \".b*\" \"b*c\")" },
		{ "foo\nbar", G_LITERAL, "(or \"foo\" \"bar\")" },
		{ "x{2,}yz", 0, "\"xyz\"" },
		{ "ab{2}cd", 0, "\"bcd\"" },
		{ "x{0,3}yz", 0, "ALL" },
		{ "a{3}", 0, "ALL" },
		{ "abc)", 0, "ALL" },                          /* unbalanced: PCRE2 refuses it */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *got = plan(cases[i].pat, cases[i].flags);
		if (strcmp(got, cases[i].want) != 0) {
			fprintf(stderr, "  [%s]: %s, want %s\n", cases[i].pat, got, cases[i].want);
			test_failed_checks++;
		}
	}
	/* caseless: k and s end runs too */
	CHECK_STR(plan("desk top", G_CASELESS), "(and \" to\" \"top\")");
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
	                               "(abc|bca)", "(?:cab)", "xab", "\\.", " ab", "sab", "Kab" };
	static const char *quant[] = { "", "", "", "", "", "?", "*", "+", "{2}", "{0,2}" };
	char pat[128], text[64];
	int matched = 0, planned = 0;
	for (int iter = 0; iter < 8000; iter++) {
		size_t pl = 0;
		int natoms = 1 + (int)rnd(5);
		for (int k = 0; k < natoms; k++)
			pl += (size_t)snprintf(pat + pl, sizeof pat - pl, "%s%s", atoms[rnd(16)], quant[rnd(10)]);
		if (rnd(6) == 0)
			pl += (size_t)snprintf(pat + pl, sizeof pat - pl, "|%s", atoms[rnd(16)]);
		size_t tl = 4 + rnd(40);
		for (size_t k = 0; k < tl; k++)
			text[k] = "abcABC xs.Kabcab"[rnd(16)];
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
			fa_arena_free(&a);
		}
		pcre2_match_data_free(md);
		pcre2_code_free(re);
	}
	printf("     %d matching cases, %d of them with a trigram plan\n", matched, planned);
	CHECK(matched > 300 && planned > 50);
}

int main(void)
{
	RUN(test_plans);
	RUN(test_soundness);
	return TEST_DONE();
}
