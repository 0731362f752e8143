/*
 * test_text.c — UTF-8 helpers, normalisation, the code-aware tokenizer,
 * stemming, stop words and kind detection.
 *
 * Token lists are compared as one string, "term/K@pos" per token, where K
 * is W(ord), I(dent), P(art), N(um) or C(JK).
 */
#include "test.h"

#include "text/text.h"

static text_analyzer *english;

/* ---- helpers ----------------------------------------------------------------- */

typedef struct collect {
	char out[4096];
	size_t len;
	const char *input;
	size_t input_len;
	uint32_t last_pos;
	int count, bad;
	int stop_after;   /* > 0: return 42 after this many tokens */
} collect;

static int collect_cb(void *ctx, const text_token *t)
{
	static const char kinds[] = "WIPNCc";
	collect *c = ctx;
	/* Invariants every token must hold. */
	if (t->len != strlen(t->term) || t->len == 0 || t->len > TEXT_MAX_TERM ||
	    t->start >= t->end || t->end > c->input_len || t->kind > TOK_CJK_CHAR ||
	    (c->count > 0 && t->pos < c->last_pos) ||
	    text_utf8_invalid_count(t->term, t->len) != 0)
		c->bad++;
	c->last_pos = t->pos;
	c->count++;
	int w = snprintf(c->out + c->len, sizeof c->out - c->len, "%s%s/%c@%u",
	                 c->len ? " " : "", t->term, kinds[t->kind], t->pos);
	if (w > 0 && (size_t)w < sizeof c->out - c->len)
		c->len += (size_t)w;
	if (c->stop_after > 0 && c->count >= c->stop_after)
		return 42;
	return 0;
}

/* Tokens of s (with the English analyser) as one string. */
static const char *toks_n(const char *s, size_t n)
{
	static collect c;
	memset(&c, 0, sizeof c);
	c.input = s;
	c.input_len = n;
	uint32_t pos = 0;
	int rc = text_analyze(english, s, n, &pos, collect_cb, &c, NULL);
	if (rc != 0)
		snprintf(c.out, sizeof c.out, "error %d", rc);
	if (c.bad)
		snprintf(c.out, sizeof c.out, "%d tokens broke an invariant", c.bad);
	return c.out;
}

static const char *toks(const char *s)
{
	return toks_n(s, strlen(s));
}

static const char *normalized(const char *s, size_t n)
{
	static char out[256];
	fbuf b;
	fbuf_init(&b, 0);
	int rc = text_normalize(&b, s, n);
	if (rc != 0 || b.len >= sizeof out)
		snprintf(out, sizeof out, "error %d", rc);
	else
		snprintf(out, sizeof out, "%.*s", (int)b.len, (const char *)b.data);
	fbuf_free(&b);
	return out;
}

/* ---- UTF-8 -------------------------------------------------------------------- */

static void test_utf8_seq_len(void)
{
	const unsigned char *u;
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"a", 1), 1);
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xc3\xa9", 2), 2);
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xe4\xb8\xad", 3), 3);
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xf0\x9f\x98\x80", 4), 4);
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xc3\xa9", 1), 0);      /* truncated */
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xc0\x80", 2), 0);      /* overlong */
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xe0\x80\x80", 3), 0);  /* overlong */
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xed\xa0\x80", 3), 0);  /* surrogate */
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\x80", 1), 0);
	CHECK_EQ(text_utf8_seq_len((const unsigned char *)"\xff", 1), 0);
	u = (const unsigned char *)"\xf4\x8f\xbf\xbf";  /* U+10FFFF itself is fine */
	CHECK_EQ(text_utf8_seq_len(u, 4), 4);
	CHECK_EQ(text_utf8_seq_len(u, 0), 0);
}

static void test_utf8_invalid_and_repair(void)
{
	CHECK_EQ(text_utf8_invalid_count("plain ascii", 11), 0);
	CHECK_EQ(text_utf8_invalid_count("caf\xc3\xa9", 5), 0);
	CHECK_EQ(text_utf8_invalid_count("a\xff" "b", 3), 1);
	/* A truncated sequence is one error, not two. */
	CHECK_EQ(text_utf8_invalid_count("\xe2\x82" "x", 3), 1);
	CHECK_EQ(text_utf8_invalid_count("\xff\xfe", 2), 2);
	/* Stray continuation bytes: one error per four. */
	CHECK_EQ(text_utf8_invalid_count("\x80\x80\x80\x80\x80", 5), 2);

	fbuf b;
	fbuf_init(&b, 0);
	size_t bad = 99;
	CHECK_OK(text_utf8_repair(&b, "a\xff" "b\xe2\x82", 5, &bad));
	CHECK_EQ(bad, 2);
	CHECK_EQ(b.len, 8);
	CHECK(b.len == 8 && memcmp(b.data, "a\xef\xbf\xbd" "b\xef\xbf\xbd", 8) == 0);
	CHECK_EQ(text_utf8_invalid_count((const char *)b.data, b.len), 0);
	fbuf_reset(&b);
	CHECK_OK(text_utf8_repair(&b, "ok", 2, &bad));
	CHECK_EQ(bad, 0);
	CHECK(b.len == 2 && memcmp(b.data, "ok", 2) == 0);
	fbuf_free(&b);
}

/* text_utf8_repair against a byte-at-a-time reference, on text that is
 * mostly ASCII with bad and good multi-byte sequences at every offset
 * (so on both sides of the eight-byte ASCII skip). */
static void ref_repair(fbuf *out, const unsigned char *s, size_t n, size_t *bad)
{
	*bad = 0;
	for (size_t i = 0; i < n;) {
		size_t k = s[i] < 0x80 ? 1 : text_utf8_seq_len(s + i, n - i);
		if (k) {
			fbuf_append(out, s + i, k);
			i += k;
			continue;
		}
		++*bad;
		fbuf_append(out, "\xef\xbf\xbd", 3);
		for (k = 1; i + k < n && k < 4 && (s[i + k] & 0xC0) == 0x80; k++)
			;
		i += k;
	}
}

static void test_utf8_repair_reference(void)
{
	static const char *const bits[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
	                                     "\xff", "\x80\x80", "\xe2\x82", "\xc0\xaf",
	                                     "\xed\xa0\x80" };
	unsigned seed = 12345;
	fbuf a, b;
	fbuf_init(&a, 0);
	fbuf_init(&b, 0);
	unsigned char s[64];
	for (int round = 0; round < 2000; round++) {
		size_t n = 0, want = (size_t)(round % 40);
		while (n < want) {
			seed = seed * 1103515245u + 12345u;
			unsigned r = seed >> 16;
			if (r % 7 == 0) {
				const char *t = bits[r / 7 % (sizeof bits / sizeof *bits)];
				size_t l = strlen(t);
				if (n + l > sizeof s)
					break;
				memcpy(s + n, t, l);
				n += l;
			} else {
				s[n++] = (unsigned char)('a' + r % 26);
			}
		}
		size_t bad_a = 99, bad_b = 99;
		fbuf_reset(&a);
		fbuf_reset(&b);
		CHECK_OK(text_utf8_repair(&a, (const char *)s, n, &bad_a));
		ref_repair(&b, s, n, &bad_b);
		CHECK_EQ(bad_a, bad_b);
		CHECK(a.len == b.len && (a.len == 0 || memcmp(a.data, b.data, a.len) == 0));
	}
	fbuf_free(&a);
	fbuf_free(&b);
}

static void test_utf8_floor(void)
{
	const char *s = "a\xc3\xa9" "b\xe4\xb8\xad";  /* a é b 中 */
	size_t n = strlen(s);
	CHECK_EQ(text_utf8_floor(s, n, 0), 0);
	CHECK_EQ(text_utf8_floor(s, n, 1), 1);
	CHECK_EQ(text_utf8_floor(s, n, 2), 1);  /* inside é */
	CHECK_EQ(text_utf8_floor(s, n, 3), 3);
	CHECK_EQ(text_utf8_floor(s, n, 5), 4);  /* inside 中 */
	CHECK_EQ(text_utf8_floor(s, n, 6), 4);
	CHECK_EQ(text_utf8_floor(s, n, 7), 7);
	CHECK_EQ(text_utf8_floor(s, n, 100), 7);
	/* Stray continuation bytes are their own units. */
	CHECK_EQ(text_utf8_floor("a\x80\x80", 3, 2), 2);
	/* A truncated lead does not pull the boundary back. */
	CHECK_EQ(text_utf8_floor("\xe4\xb8", 2, 1), 1);
}

static void test_normalize(void)
{
	CHECK_STR(normalized("Hello World", 11), "hello world");
	CHECK_STR(normalized("\xef\xac\x81le", 5), "file");                   /* ﬁle */
	CHECK_STR(normalized("\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3", 9), "abc"); /* ＡＢＣ */
	CHECK_STR(normalized("Stra\xc3\x9f" "e", 7), "strasse");              /* Straße */
	CHECK_STR(normalized("STRASSE", 7), "strasse");
	CHECK_STR(normalized("\xc3\x89" "COLE", 6), "\xc3\xa9" "cole");        /* ÉCOLE */
	/* e + combining acute composes to é (NFC part of NFKC). */
	CHECK_STR(normalized("e\xcc\x81", 3), "\xc3\xa9");
	/* Soft hyphen is dropped. */
	CHECK_STR(normalized("co\xc2\xad" "op", 6), "coop");
	/* Invalid input is repaired, not refused. */
	CHECK_STR(normalized("A\xff", 2), "a\xef\xbf\xbd");
	CHECK_STR(normalized("", 0), "");
}

/* ---- tokenizer ------------------------------------------------------------------ */

static void test_plain_words(void)
{
	CHECK_STR(toks("Running quickly, the runners ran."),
	          "run/W@0 quick/W@1 the/W@2 runner/W@3 ran/W@4");
	CHECK_STR(toks("end."), "end/W@0");
	CHECK_STR(toks("  (hello)  "), "hello/W@0");
	CHECK_STR(toks(""), "");
	CHECK_STR(toks("___ --- ... !!! ,,, -_-"), "");
	/* Apostrophes separate: the possessive leaves "s". */
	CHECK_STR(toks("user's"), "user/W@0 s/W@1");
}

static void test_camel_case(void)
{
	CHECK_STR(toks("getUserName"), "getusername/I@0 get/P@0 user/P@1 name/P@2");
	CHECK_STR(toks("HTTPServer"), "httpserver/I@0 http/P@0 server/P@1");
	CHECK_STR(toks("parseHTTPRequest"),
	          "parsehttprequest/I@0 pars/P@0 http/P@1 request/P@2");
	CHECK_STR(toks("XMLHttpRequest"), "xmlhttprequest/I@0 xml/P@0 http/P@1 request/P@2");
	CHECK_STR(toks("iPhone"), "iphone/I@0 i/P@0 phone/P@1");
	/* Acronym plurals stay whole; a word of capitals is one word. */
	CHECK_STR(toks("URLs getURLs HTTP"), "url/W@0 geturls/I@1 get/P@1 url/P@2 http/W@3");
	/* A capitalised word is just a word. */
	CHECK_STR(toks("Running"), "run/W@0");
}

static void test_snake_and_kebab(void)
{
	CHECK_STR(toks("get_user_name"), "get_user_name/I@0 get/P@0 user/P@1 name/P@2");
	CHECK_STR(toks("SCREAMING_SNAKE"), "screaming_snake/I@0 scream/P@0 snake/P@1");
	CHECK_STR(toks("a__b"), "a__b/I@0 a/P@0 b/P@1");
	/* Leading and trailing underscores are not part of the token. */
	CHECK_STR(toks("__init__ _private"), "init/W@0 privat/W@1");
	CHECK_STR(toks("kebab-case-name"), "kebab-case-name/I@0 kebab/P@0 case/P@1 name/P@2");
	CHECK_STR(toks("sign-in"), "sign-in/I@0 sign/P@0 in/P@1");
	/* A hyphen between spaces, or doubled, separates. */
	CHECK_STR(toks("a - b"), "a/W@0 b/W@1");
	CHECK_STR(toks("foo--bar"), "foo/W@0 bar/W@1");
	CHECK_STR(toks("--verbose"), "verbos/W@0");
	/* Joiners do not join across other punctuation. */
	CHECK_STR(toks("a_.b"), "a/W@0 b/W@1");
}

static void test_letters_and_digits(void)
{
	CHECK_STR(toks("sha256sum"), "sha256sum/I@0 sha/P@0 256/P@1 sum/P@2");
	CHECK_STR(toks("utf8"), "utf8/I@0 utf/P@0 8/P@1");
	CHECK_STR(toks("IPv6"), "ipv6/I@0 ip/P@0 v/P@1 6/P@2");
	CHECK_STR(toks("x86_64"), "x86_64/I@0 x/P@0 86/P@1 64/P@2");
	CHECK_STR(toks("a1b2"), "a1b2/I@0 a/P@0 1/P@1 b/P@2 2/P@3");
	CHECK_STR(toks("42"), "42/N@0");
	/* Hash-like strings stay one unstemmed token. */
	CHECK_STR(toks("3f2a9c8d7e"), "3f2a9c8d7e/I@0");
}

static void test_dots_and_numbers(void)
{
	CHECK_STR(toks("os.path.join"), "os.path.join/I@0 os/P@0 path/P@1 join/P@2");
	CHECK_STR(toks("2.0.1"), "2.0.1/N@0 2/P@0 0/P@1 1/P@2");
	CHECK_STR(toks("1,000"), "1,000/N@0 1/P@0 000/P@1");
	CHECK_STR(toks("v1.2"), "v1.2/I@0 v/P@0 1/P@1 2/P@2");
	/* A comma joins digits only. */
	CHECK_STR(toks("a,b"), "a/W@0 b/W@1");
	/* A trailing dot is punctuation. */
	CHECK_STR(toks("see os.path."), "see/W@0 os.path/I@1 os/P@1 path/P@2");
}

static void test_positions(void)
{
	/* The next token follows the last part. */
	CHECK_STR(toks("call getUserName now"),
	          "call/W@0 getusername/I@1 get/P@1 user/P@2 name/P@3 now/W@4");

	/* Positions continue across calls through *pos. */
	collect c;
	memset(&c, 0, sizeof c);
	c.input_len = 100;
	uint32_t pos = 10;
	CHECK_OK(text_analyze(english, "one two", 7, &pos, collect_cb, &c, NULL));
	CHECK_EQ(pos, 12);
	CHECK_OK(text_analyze(english, "snake_case", 10, &pos, collect_cb, &c, NULL));
	CHECK_EQ(pos, 14);
	CHECK_STR(c.out, "one/W@10 two/W@11 snake_case/I@12 snake/P@12 case/P@13");
	CHECK_EQ(c.bad, 0);
}

static void test_identifiers_not_stemmed(void)
{
	/* The whole keeps "running"; the part is stemmed like a word. */
	CHECK_STR(toks("runningTotal"), "runningtotal/I@0 run/P@0 total/P@1");
	CHECK_STR(toks("running_jobs"), "running_jobs/I@0 run/P@0 job/P@1");
}

/* A document and a query, analysed by the same function, meet. */
static void test_query_meets_document(void)
{
	const char *doc = toks("return getUserName(id);");
	char copy[512];
	snprintf(copy, sizeof copy, "%s", doc);
	CHECK(strstr(copy, "getusername/I@1") != NULL);
	CHECK(strstr(copy, "user/P@2 name/P@3") != NULL);
	CHECK_STR(toks("getUserName"), "getusername/I@0 get/P@0 user/P@1 name/P@2");
	CHECK_STR(toks("user name"), "user/W@0 name/W@1");
	CHECK_STR(toks("get_user_name"), "get_user_name/I@0 get/P@0 user/P@1 name/P@2");
}

static void test_unicode_tokens(void)
{
	CHECK_STR(toks("\xef\xac\x81le"), "file/W@0");                          /* ﬁle */
	CHECK_STR(toks("\xef\xbc\xa1\xef\xbc\xa2\xef\xbc\xa3"), "abc/W@0");       /* ＡＢＣ */
	/* Straße and STRASSE fold to one term. */
	CHECK_STR(toks("Stra\xc3\x9f" "e STRASSE strasse"), "strass/W@0 strass/W@1 strass/W@2");
	CHECK_STR(toks("\xc3\x89" "COLE \xc3\xa9" "cole"), "\xc3\xa9" "cole/W@0 \xc3\xa9" "cole/W@1");
	/* Decomposed é (e + U+0301) meets precomposed é. */
	CHECK_STR(toks("e\xcc\x81t\xc3\xa9"), "\xc3\xa9t\xc3\xa9/W@0");
	/* Non-ASCII camelCase splits too. */
	CHECK_STR(toks("get\xc3\x9c" "ber"), "get\xc3\xbc" "ber/I@0 get/P@0 \xc3\xbc" "ber/P@1");
	/* Soft hyphen inside a word does not split it. */
	CHECK_STR(toks("co\xc2\xad" "op"), "coop/W@0");
	/* Fullwidth digits are digits. */
	CHECK_STR(toks("\xef\xbc\x91\xef\xbc\x92"), "12/N@0");
	/* Symbols and emoji are separators. */
	CHECK_STR(toks("a\xe2\x86\x92" "b \xf0\x9f\x98\x80"), "a/W@0 b/W@1");
}

static void test_invalid_utf8(void)
{
	const char bad[] = "bad\xff\xfeword \xe2\x82x \x80";
	size_t n = sizeof bad - 1, invalid = 0;
	collect c;
	memset(&c, 0, sizeof c);
	c.input_len = n;
	uint32_t pos = 0;
	CHECK_OK(text_analyze(english, bad, n, &pos, collect_cb, &c, &invalid));
	CHECK_STR(c.out, "bad/W@0 word/W@1 x/W@2");
	CHECK_EQ(invalid, text_utf8_invalid_count(bad, n));
	CHECK_EQ(invalid, 4);
	CHECK_EQ(c.bad, 0);

	/* Every byte value, in a scramble, never breaks an invariant. */
	unsigned char buf[4096];
	uint32_t x = 12345;
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < sizeof buf; i++) {
			x = x * 1103515245u + 12345u;
			buf[i] = (unsigned char)(x >> 16);
		}
		memset(&c, 0, sizeof c);
		c.input_len = sizeof buf;
		pos = 0;
		CHECK_OK(text_analyze(english, (const char *)buf, sizeof buf, &pos, collect_cb, &c,
		                      &invalid));
		CHECK_EQ(c.bad, 0);
		CHECK_EQ(invalid, text_utf8_invalid_count((const char *)buf, sizeof buf));
	}
}

static void test_cjk(void)
{
	/* 中华人民: bigrams, and each character beside the bigram it begins
	 * (the last beside the last bigram): c is TOK_CJK_CHAR. */
	CHECK_STR(toks("\xe4\xb8\xad\xe5\x8d\x8e\xe4\xba\xba\xe6\xb0\x91"),
	          "\xe4\xb8\xad\xe5\x8d\x8e/C@0 \xe4\xb8\xad/c@0 "
	          "\xe5\x8d\x8e\xe4\xba\xba/C@1 \xe5\x8d\x8e/c@1 "
	          "\xe4\xba\xba\xe6\xb0\x91/C@2 \xe4\xba\xba/c@2 \xe6\xb0\x91/c@2");
	/* A lone character between non-CJK is a unigram: a中b */
	CHECK_STR(toks("a\xe4\xb8\xad" "b"), "a/W@0 \xe4\xb8\xad/C@1 b/W@2");
	/* A two-character run is one bigram and its two characters: 中文 */
	CHECK_STR(toks("\xe4\xb8\xad\xe6\x96\x87"),
	          "\xe4\xb8\xad\xe6\x96\x87/C@0 \xe4\xb8\xad/c@0 \xe6\x96\x87/c@0");
	/* Hangul words: bigrams within each, a 1-syllable word is a unigram. 한국어 가 */
	CHECK_STR(toks("\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4 \xea\xb0\x80"),
	          "\xed\x95\x9c\xea\xb5\xad/C@0 \xed\x95\x9c/c@0 "
	          "\xea\xb5\xad\xec\x96\xb4/C@1 \xea\xb5\xad/c@1 \xec\x96\xb4/c@1 "
	          "\xea\xb0\x80/C@2");
	/* Halfwidth katakana is normalised to fullwidth, characters too: ｶﾀ -> カタ */
	CHECK_STR(toks("\xef\xbd\xb6\xef\xbe\x80"),
	          "\xe3\x82\xab\xe3\x82\xbf/C@0 \xe3\x82\xab/c@0 \xe3\x82\xbf/c@0");
	/* Hiragana + Katakana mixed run, and a voiced mark stays with its kana:
	 * か + U+3099 composes to が, alone as in the bigram. */
	CHECK_STR(toks("\xe3\x81\x8b\xe3\x82\x99\xe3\x81\x84"),
	          "\xe3\x81\x8c\xe3\x81\x84/C@0 \xe3\x81\x8c/c@0 \xe3\x81\x84/c@0");
	/* CJK next to Latin letters splits the run: abc中文def */
	CHECK_STR(toks("abc\xe4\xb8\xad\xe6\x96\x87" "def"),
	          "abc/W@0 \xe4\xb8\xad\xe6\x96\x87/C@1 \xe4\xb8\xad/c@1 "
	          "\xe6\x96\x87/c@1 def/W@2");
}

static void test_long_terms(void)
{
	char s[300];
	memset(s, 'a', 200);
	s[200] = '\0';
	const char *t = toks(s);
	CHECK_EQ(strlen(t), 64 + 4);  /* "aaaa.../W@0" */
	CHECK(strncmp(t + 64, "/W@0", 4) == 0);

	/* A long non-ASCII word is cut on a character boundary: 100 x ᚠ
	 * (3 bytes each) gives 21 characters, 63 bytes. */
	size_t n = 0;
	for (int i = 0; i < 100; i++) {
		memcpy(s + n, "\xe1\x9a\xa0", 3);
		n += 3;
	}
	t = toks_n(s, n);
	CHECK_EQ(strlen(t), 63 + 4);

	/* A giant run (no joiners) is one token, then tokenizing goes on. */
	static char big[5000];
	for (size_t i = 0; i < 4000; i++)
		big[i] = (char)('a' + (i % 7 == 0 ? 'B' - 'a' : (int)(i % 26)));
	memcpy(big + 4000, " tail", 6);
	t = toks(big);
	CHECK(strstr(t, "tail/W@1") != NULL);

	/* A long joined run ends at a joiner before the run limit and the rest
	 * continues as new runs, all with valid positions. */
	size_t m = 0;
	for (int i = 0; i < 300; i++) {
		big[m++] = (char)('a' + i % 26);
		big[m++] = '.';
	}
	big[m - 1] = '\0';
	t = toks(big);
	CHECK(strstr(t, "error") == NULL && strstr(t, "invariant") == NULL);
}

/* ---- plain runs against the general path ------------------------------------- */

static int record_cb(void *ctx, const text_token *t)
{
	fbuf_printf(ctx, "%s/%u@%u[%u,%u) ", t->term, t->kind, t->pos, t->start, t->end);
	return 0;
}

/* Every token (term, kind, position, bytes), the next position and the
 * invalid count, as one string. */
static char *record(text_analyzer *a, const char *s, size_t n, uint32_t pos0)
{
	fbuf b;
	fbuf_init(&b, 0);
	uint32_t pos = pos0;
	size_t invalid = 0;
	int rc = text_analyze(a, s, n, &pos, record_cb, &b, &invalid);
	fbuf_printf(&b, "rc %d pos %u invalid %zu", rc, pos, invalid);
	return fbuf_detach(&b, NULL);
}

static uint64_t plain_rng = 0x9e3779b97f4a7c15ull;

static uint32_t plain_below(uint32_t n)
{
	plain_rng ^= plain_rng << 13;
	plain_rng ^= plain_rng >> 7;
	plain_rng ^= plain_rng << 17;
	return (uint32_t)(plain_rng % n);
}

/* Random text from pieces that sit on each side of the plain-run rules:
 * case changes, digits, joiners, marks, CJK, invalid bytes, runs past the
 * term and run limits; the same tokens with and without plain runs. */
static void test_plain_runs(void)
{
	static const char *pieces[] = {
		"a", "s", "Z", "word", "Word", "WORD", "WORDs", "Words", "wORD", "HTTPServer", "URLs",
		"IPv6", "x", "42", "007", "1,000", "2.0.1", "sha256sum", "a1b2c3d4", "_", "__", "-",
		"--", ".", ",", "'", " ", "  ", "\n", "\t", "(", ")", ";", "\xc3\xa9", "\xc3\x89",
		"\xcc\x81", "\xe4\xb8\xad", "\xe6\x96\x87", "\xff", "\xc3", "\xc3\x9f", "\xef\xac\x81",
		"\xe2\x80\x8b", "\xc2\xad", "running", "Running", "RUNNING", "connected", "the",
	};
	const size_t np = sizeof pieces / sizeof pieces[0];
	text_analyzer *general;
	CHECK_OK(text_analyzer_new(&general, "english"));
	text_analyzer_set_plain_runs(general, 0);
	CHECK(text_analyzer_plain_runs(english));
	CHECK(!text_analyzer_plain_runs(general));
	char s[600];
	int differ = 0;
	for (int iter = 0; iter < 20000 && differ < 3; iter++) {
		size_t n = 0, want = 1 + plain_below(120);
		while (n < want) {
			uint32_t r = plain_below(40);
			if (r == 0) {
				/* a run of one letter past the term (64) or run (128) limit */
				size_t len = 60 + plain_below(80);
				char c = "aAz9"[plain_below(4)];
				memset(s + n, c, len);
				n += len;
			} else {
				const char *pc = pieces[plain_below((uint32_t)np)];
				memcpy(s + n, pc, strlen(pc));
				n += strlen(pc);
			}
		}
		uint32_t pos0 = plain_below(4) == 0 ? UINT32_MAX - plain_below(3) : plain_below(5);
		char *fast = record(english, s, n, pos0);
		char *slow = record(general, s, n, pos0);
		if (strcmp(fast, slow) != 0) {
			fprintf(stderr, "  \"%.*s\"\n  plain:   %s\n  general: %s\n", (int)n, s, fast, slow);
			differ++;
		}
		fa_free(fast);
		fa_free(slow);
	}
	CHECK_EQ(differ, 0);
	text_analyzer_free(general);
}

static int count_cb(void *ctx, const text_token *t)
{
	(void)t;
	(*(int *)ctx)++;
	return 0;
}

static void test_callback_stop(void)
{
	collect c;
	memset(&c, 0, sizeof c);
	c.input_len = 100;
	c.stop_after = 2;
	uint32_t pos = 0;
	CHECK_EQ(text_analyze(english, "one two three four", 18, &pos, collect_cb, &c, NULL), 42);
	CHECK_EQ(c.count, 2);
	int count = 0;
	CHECK_EQ(text_analyze(NULL, "x", 1, &pos, count_cb, &count, NULL), FATHOM_EINVAL);
	CHECK_EQ(text_analyze(english, NULL, 3, &pos, count_cb, &count, NULL), FATHOM_EINVAL);
	/* NULL pos starts at 0. */
	CHECK_OK(text_analyze(english, "a b", 3, NULL, count_cb, &count, NULL));
	CHECK_EQ(count, 2);
}

/* ---- stemming and stop words --------------------------------------------------- */

static void test_stem(void)
{
	size_t len = 0;
	const char *s = text_stem(english, "running", 7, &len);
	CHECK(s != NULL && len == 3 && memcmp(s, "run", 3) == 0 && s[3] == '\0');
	/* Cached the second time, same answer. */
	s = text_stem(english, "running", 7, &len);
	CHECK(s != NULL && len == 3 && memcmp(s, "run", 3) == 0);
	s = text_stem(english, "connections", 11, &len);
	CHECK(s != NULL && len == 7 && memcmp(s, "connect", 7) == 0);
	/* A word not NUL-terminated. */
	s = text_stem(english, "jumpsXXX", 5, &len);
	CHECK(s != NULL && len == 4 && memcmp(s, "jump", 4) == 0 && s[4] == '\0');

	text_analyzer *none = NULL;
	CHECK_OK(text_analyzer_new(&none, "none"));
	s = text_stem(none, "running", 7, &len);
	CHECK(s != NULL && len == 7 && memcmp(s, "running", 7) == 0);
	uint32_t pos = 0;
	int count = 0;
	CHECK_OK(text_analyze(none, "running dogs", 12, &pos, count_cb, &count, NULL));
	CHECK_EQ(count, 2);
	text_analyzer_free(none);
	CHECK_OK(text_analyzer_new(&none, NULL));
	text_analyzer_free(none);

	text_analyzer *de = NULL;
	CHECK_OK(text_analyzer_new(&de, "german"));
	s = text_stem(de, "h\xc3\xa4user", 7, &len);  /* häuser -> haus */
	CHECK(s != NULL && len == 4 && memcmp(s, "haus", 4) == 0);
	text_analyzer_free(de);

	text_analyzer *bad = (text_analyzer *)&bad;
	CHECK_EQ(text_analyzer_new(&bad, "klingon"), FATHOM_EINVAL);
	CHECK(bad == NULL);
	CHECK(strstr(fathom_errmsg(), "klingon") != NULL);
	CHECK(strstr(fathom_errmsg(), "english") != NULL);
}

/* The stem cache empties itself when full and keeps answering right. */
static void test_stem_cache_bound(void)
{
	text_analyzer *a = NULL;
	CHECK_OK(text_analyzer_new(&a, "english"));
	char w[32];
	int wrong = 0;
	for (int i = 0; i < 450000; i++) {
		int n = snprintf(w, sizeof w, "walking%dx", i);
		size_t len;
		const char *s = text_stem(a, w, (size_t)n, &len);
		if (!s || len != (size_t)n || memcmp(s, w, len) != 0)
			wrong++;
	}
	size_t len;
	const char *s = text_stem(a, "walking", 7, &len);
	CHECK(s != NULL && len == 4 && memcmp(s, "walk", 4) == 0);
	CHECK_EQ(wrong, 0);
	text_analyzer_free(a);
}

static void test_stopwords(void)
{
	const char *yes[] = { "a", "an", "the", "of", "to", "in", "is", "are", "what", "how",
	                      "does", "yourselves", "s", "t" };
	const char *no[] = { "user", "fathom", "index", "th", "thee", "zzz", "aa" };
	for (size_t i = 0; i < FA_ARRAY_LEN(yes); i++)
		CHECK(text_is_stopword(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < FA_ARRAY_LEN(no); i++)
		CHECK(!text_is_stopword(no[i], strlen(no[i])));
	CHECK(!text_is_stopword("", 0));
	CHECK(text_is_stopword("thereafter", 5));  /* "there" */
	CHECK(!text_is_stopword(NULL, 3));
}

/* ---- kind detection ------------------------------------------------------------- */

static void test_detect_kind(void)
{
	const struct { const char *path; int kind; const char *lang; } cases[] = {
		{ "README.md", DOC_MARKDOWN, "markdown" },
		{ "docs/guide.markdown", DOC_MARKDOWN, "markdown" },
		{ "x.mdx", DOC_MARKDOWN, "markdown" },
		{ "index.rst", DOC_RST, "rst" },
		{ "notes.txt", DOC_TEXT, "text" },
		{ "src/main.c", DOC_CODE, "c" },
		{ "include/x.h", DOC_CODE, "c" },
		{ "a.cc", DOC_CODE, "cpp" },
		{ "a.hpp", DOC_CODE, "cpp" },
		{ "a.py", DOC_CODE, "python" },
		{ "a.js", DOC_CODE, "javascript" },
		{ "a.ts", DOC_CODE, "typescript" },
		{ "a.go", DOC_CODE, "go" },
		{ "a.rs", DOC_CODE, "rust" },
		{ "A.java", DOC_CODE, "java" },
		{ "a.rb", DOC_CODE, "ruby" },
		{ "run.sh", DOC_CODE, "shell" },
		{ "a.S", DOC_CODE, "asm" },
		{ "a.yaml", DOC_CODE, "yaml" },
		{ "a.json", DOC_CODE, "json" },
		{ "a.toml", DOC_CODE, "toml" },
		{ "Makefile", DOC_CODE, "make" },
		{ "sub/Makefile.am", DOC_CODE, "make" },
		{ "arch/x86/Kconfig.debug", DOC_CODE, "kconfig" },
		{ "Dockerfile", DOC_CODE, "dockerfile" },
		{ "CMakeLists.txt", DOC_CODE, "cmake" },
		{ "NOTES.MD", DOC_MARKDOWN, "markdown" },
		{ "LICENSE", DOC_TEXT, "text" },
		{ "archive.xyz", DOC_TEXT, "text" },
		{ ".hidden", DOC_TEXT, "text" },
		{ "dir.md/file", DOC_TEXT, "text" },
		{ "trailingdot.", DOC_TEXT, "text" },
	};
	for (size_t i = 0; i < FA_ARRAY_LEN(cases); i++) {
		const char *lang = NULL;
		int kind = text_detect_kind(cases[i].path, &lang);
		if (kind != cases[i].kind || !lang || strcmp(lang, cases[i].lang) != 0) {
			fprintf(stderr, "  %s: got %d %s\n", cases[i].path, kind, lang ? lang : "(null)");
			CHECK(0);
		}
	}
	CHECK_EQ(text_detect_kind(NULL, NULL), DOC_TEXT);
	CHECK_EQ(text_detect_kind("a.c", NULL), DOC_CODE);
}

/* ---- allocation failure ------------------------------------------------------------ */

static void test_alloc_failure(void)
{
	const char *text = "getUserName caf\xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 running walked";
	for (long k = 0; k < 40; k++) {
		text_analyzer *a = NULL;
		fa_alloc_fail_after(k);
		int rc = text_analyzer_new(&a, "english");
		if (rc == FATHOM_OK) {
			int count = 0;
			uint32_t pos = 0;
			rc = text_analyze(a, text, strlen(text), &pos, count_cb, &count, NULL);
			CHECK(rc == FATHOM_OK || rc == FATHOM_ENOMEM);
		} else {
			CHECK(rc == FATHOM_ENOMEM || rc == FATHOM_EINVAL);
		}
		fa_alloc_fail_after(-1);
		text_analyzer_free(a);
	}
}

int main(void)
{
	if (text_analyzer_new(&english, "english") != 0) {
		printf("cannot create the English analyser: %s\n", fathom_errmsg());
		return 1;
	}
	RUN(test_utf8_seq_len);
	RUN(test_utf8_invalid_and_repair);
	RUN(test_utf8_repair_reference);
	RUN(test_utf8_floor);
	RUN(test_normalize);
	RUN(test_plain_words);
	RUN(test_camel_case);
	RUN(test_snake_and_kebab);
	RUN(test_letters_and_digits);
	RUN(test_dots_and_numbers);
	RUN(test_positions);
	RUN(test_identifiers_not_stemmed);
	RUN(test_query_meets_document);
	RUN(test_unicode_tokens);
	RUN(test_invalid_utf8);
	RUN(test_cjk);
	RUN(test_long_terms);
	RUN(test_callback_stop);
	RUN(test_plain_runs);
	RUN(test_stem);
	RUN(test_stem_cache_bound);
	RUN(test_stopwords);
	RUN(test_detect_kind);
	RUN(test_alloc_failure);
	text_analyzer_free(english);
	return TEST_DONE();
}
