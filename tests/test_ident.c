/*
 * test_ident.c — exact identifiers: detection by category, the canonical
 * key (case- and delimiter-agnostic, never merging numbers), limits.
 */
#include "test.h"
#include "text/text.h"

typedef struct found {
	char out[1024];
	size_t len;
	int n;
} found;

static int collect(void *ctx, const text_ident *id)
{
	found *f = ctx;
	f->len += (size_t)snprintf(f->out + f->len, sizeof f->out - f->len, "%s%s:%s",
	                           f->n++ ? " " : "", text_ident_cat_name(id->cat), id->key);
	return 0;
}

/* The identifiers of text, as "category:key ..." */
static const char *idents(const char *text)
{
	static found f;
	memset(&f, 0, sizeof f);
	if (text_idents(text, strlen(text), NULL, collect, &f) != 0)
		return "(error)";
	return f.out;
}

typedef struct ident_case {
	const char *text, *want;
} ident_case;

/* Each text's identifiers must read as its want. */
static void check_cases(const ident_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *got = idents(cases[i].text);
		if (strcmp(got, cases[i].want) != 0) {
			fprintf(stderr, "  [%s]: got \"%s\", want \"%s\"\n", cases[i].text, got, cases[i].want);
			test_failed_checks++;
		}
	}
}

static void test_categories(void)
{
	static const ident_case cases[] = {
		{ "see TC-1001 now", "testcase:tc-1001" },
		{ "testcase_42 fails", "testcase:testcase-42" },
		{ "run TEST_AUTH first", "testcase:testauth" },
		{ "TC 1001 and TC1001", "testcase:tc-1001 testcase:tc-1001" },
		{ "JIRA-4521, BUG-789 and ISSUE-123.", "ticket:jira-4521 ticket:bug-789 ticket:issue-123" },
		{ "fixed in ABC-123", "ticket:abc-123" },
		{ "upgrade to v2.0.1 or 1.0.0-beta, not 3.5", "version:2.0.1 version:1.0.0-beta version:3.5" },
		{ "the AuthService calls UserController and PaymentHandler",
		  "class:authservice class:usercontroller class:paymenthandler" },
		{ "an HTTPServer", "class:httpserver" },
		{ "call handle_login() then process_payment(x)",
		  "function:handlelogin function:processpayment" },
		{ "if (x) while(y) sizeof(z) for(;;)", "" },
		{ "the X100 and Model-Y200 with SKU-4567", "model:x-100 model:modely-200 model:sku-4567" },
		{ "error E0425 or ENOENT or HTTP 404", "error:e-0425 error:enoent error:http-404" },
		{ "plain words and 2024-01-15 dates", "" },
		{ "The Quick brown fox", "" },
		{ "ab-1 and x-1", "ticket:ab-1" },       /* a ticket needs two letters */
		{ "see page 12", "" },                   /* "TC 1001" needs capitals */
		{ "x", "" },
		{ "", "" },
	};
	check_cases(cases, sizeof cases / sizeof cases[0]);
	/* Case does not matter, but for the PascalCase of a class and the
	 * space of "TC 1001". */
	CHECK_STR(idents("what about jira-4521 and enoent?"), "ticket:jira-4521 error:enoent");
	CHECK_STR(idents("What happened with TC-1001?"), "testcase:tc-1001");
	CHECK_STR(idents("see page 12 of authservice"), "");
	/* The errno names are looked up in a sorted list: its ends, its
	 * middle, and words beside them. */
	CHECK_STR(idents("EACCES eio EXDEV enotrecoverable EWouldBlock"),
	          "error:eacces error:eio error:exdev error:enotrecoverable error:ewouldblock");
	CHECK_STR(idents("e2 enable end eios exdevs enotrecover ezzz e"), "");
}

static const char *key(const char *s)
{
	static char k[TEXT_IDENT_MAX_KEY + 1];
	uint32_t n;
	if (text_ident_key(s, strlen(s), k, sizeof k, &n) != 0)
		return "(none)";
	CHECK_EQ(n, strlen(k));
	return k;
}

/* Do two spellings have different keys? */
static int differ(const char *a, const char *b)
{
	char ka[TEXT_IDENT_MAX_KEY + 1];
	snprintf(ka, sizeof ka, "%s", key(a));
	return strcmp(ka, key(b)) != 0;
}

static void test_keys(void)
{
	/* the same identifier, however spelled */
	CHECK_STR(key("TC-1001"), "tc-1001");
	CHECK_STR(key("tc_1001"), "tc-1001");
	CHECK_STR(key("TC 1001"), "tc-1001");
	CHECK_STR(key("TC1001"), "tc-1001");
	CHECK_STR(key("Tc.1001"), "tc-1001");
	CHECK_STR(key("TEST_AUTH"), "testauth");
	CHECK_STR(key("TestAuth"), "testauth");
	CHECK_STR(key("test-auth"), "testauth");
	/* numbers never merge or shift */
	CHECK(differ("2.0.1", "2.0.10"));
	CHECK(differ("2.0.1", "20.1"));
	CHECK(differ("2.0.1", "2-0-1"));
	CHECK(differ("TC-1001", "TC-10010"));
	CHECK(differ("TC-1001", "TC-100-1"));
	CHECK(differ("TC-1001-2", "TC-10012"));
	CHECK(!differ("TC-1001", "tc 1001"));
	CHECK_STR(key("1.0.0-beta"), "1.0.0-beta");
	CHECK_STR(key("--"), "(none)");
	char small[4];
	uint32_t n;
	CHECK_EQ(text_ident_key("abcdef", 6, small, sizeof small, &n), -1);
	/* the scanner and the key agree: every spelling of TC-1001 */
	const char *spellings[] = { "TC-1001", "tc_1001", "TC 1001", "TC1001" };
	for (size_t i = 0; i < 4; i++)
		CHECK_STR(idents(spellings[i]), "testcase:tc-1001");
	/* a version's v is dropped */
	CHECK_STR(idents("v2.0.1"), "version:2.0.1");
	CHECK_STR(idents("2.0.1"), "version:2.0.1");
	/* the key never depends on the role: a model number, and the same read
	 * as a call (CD169(+)), share one key */
	CHECK_STR(idents("CD169 and CD169(+) cells"), "model:cd-169 function:cd-169");
}

/* "name (" followed by arguments is a call as "name(" is, when the name or
 * the arguments look like code; prose before a parenthesis stays prose. */
static void test_call_with_space(void)
{
	static const ident_case cases[] = {
		/* GNU-style declarations */
		{ "extern int pthread_mutex_lock (pthread_mutex_t *__mutex) __THROW;",
		  "function:pthreadmutexlock" },
		{ "extern void *malloc (size_t __size);", "function:malloc" },
		{ "int getUserName (x)", "function:getusername" },
		{ "int fflush_all (void);", "function:fflushall" },
		{ "rand (void)", "function:rand" },
		{ "abort ()", "function:abort" },
		{ "free\t(p_x)", "function:free" },
		/* prose: a word, then a parenthesis */
		{ "Mulberry leaves (Morus alba) lower glucose", "" },
		{ "the receptor (see above) binds", "" },
		{ "several values (x, y and z)", "" },
		{ "if (x_y) while (*p)", "" },      /* keywords never */
		{ "leaves (Morus alba", "" },       /* never closed */
		/* two spaces, or a line between: not a call */
		{ "foo_bar  (x_y)", "" },
	};
	check_cases(cases, sizeof cases / sizeof cases[0]);
}

typedef struct vlist {
	char out[8192];
	size_t len;
	int n;
} vlist;

static int collect_variant(void *ctx, const char *term, size_t len)
{
	vlist *v = ctx;
	CHECK_EQ(strlen(term), len);
	v->len += (size_t)snprintf(v->out + v->len, sizeof v->out - v->len, "%s%s", v->n++ ? " " : "", term);
	return 0;
}

static const char *variants(const char *s)
{
	static vlist v;
	memset(&v, 0, sizeof v);
	if (text_ident_variants(s, strlen(s), collect_variant, &v) != 0)
		return "(error)";
	return v.out;
}

/* The whole tokens an index may hold for an identifier's spellings. */
static void test_variants(void)
{
	CHECK_STR(variants("spinLock()"), "spinlock spin_lock spin-lock spin.lock");
	CHECK_STR(variants("SPIN_LOCK"), "spinlock spin_lock spin-lock spin.lock");
	CHECK_STR(variants("HTTPServer"), "httpserver http_server http-server http.server");
	CHECK_STR(variants("CD169"), "cd169 cd_169 cd-169 cd.169");
	/* digits after digits keep their dot, or lack of one */
	CHECK_STR(variants("2.0.1"), "2.0.1");
	CHECK_STR(variants("TC-1-2"), "tc1_2 tc1-2 tc1,2 tc_1_2 tc_1-2 tc_1,2 tc-1_2 tc-1-2 tc-1,2 "
	                             "tc.1_2 tc.1-2 tc.1,2");
	CHECK_STR(variants("kmalloc"), "kmalloc");
	CHECK_STR(variants("--"), "");
	/* past 16 combinations, one joiner for every boundary */
	CHECK_STR(variants("a_b_c_d"), "abcd a_b_c_d a-b-c-d a.b.c.d");
	vlist v;
	memset(&v, 0, sizeof v);
	CHECK_OK(text_ident_variants("a_b_c", 5, collect_variant, &v));
	CHECK_EQ(v.n, 16);
}

static int stop_at_two(void *ctx, const text_ident *id)
{
	(void)id;
	return ++*(int *)ctx == 2 ? 7 : 0;
}

static void test_limits(void)
{
	/* at most max_per_text, and min_len */
	char buf[4096];
	size_t o = 0;
	for (int i = 0; i < 80; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "TC-%d ", 1000 + i);
	found f;
	memset(&f, 0, sizeof f);
	CHECK_OK(text_idents(buf, o, NULL, collect, &f));
	CHECK_EQ(f.n, 50);
	text_ident_opts lim = { 8, 5 };
	memset(&f, 0, sizeof f);
	CHECK_OK(text_idents(buf, o, &lim, collect, &f));
	CHECK_EQ(f.n, 0);   /* "TC-1000" has 7 characters */
	lim.min_len = 3;
	memset(&f, 0, sizeof f);
	CHECK_OK(text_idents(buf, o, &lim, collect, &f));
	CHECK_EQ(f.n, 5);
	int seen = 0;
	CHECK_EQ(text_idents(buf, o, NULL, stop_at_two, &seen), 7);
	/* bytes that are not ASCII are boundaries, never a crash */
	CHECK_STR(idents("\xff\xfeTC-1001\x80 東京JIRA-1"), "testcase:tc-1001 ticket:jira-1");
	CHECK_EQ(text_ident_cat_parse("ticket"), TEXT_IDENT_TICKET);
	CHECK_EQ(text_ident_cat_parse("nope"), -1);
}

int main(void)
{
	RUN(test_categories);
	RUN(test_keys);
	RUN(test_call_with_space);
	RUN(test_variants);
	RUN(test_limits);
	return TEST_DONE();
}
