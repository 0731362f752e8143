/*
 * test_glossary.c — the glossary's normal form, protection, groups (merge,
 * remove), the queue's decisions, and its payload: round trip, and damage
 * anywhere is an error, never a crash.
 */
#include "query/glossary.h"
#include "test.h"

static const char *norm(const char *s)
{
	static fbuf b;
	static int init;
	if (!init) {
		fbuf_init(&b, 0);
		init = 1;
	}
	if (q_gloss_norm(s, strlen(s), &b) != 0)
		return "(error)";
	return (const char *)b.data;
}

static void test_norm_and_protection(void)
{
	CHECK_STR(norm("Sign-In"), "sign in");
	CHECK_STR(norm("  sign \t in "), "sign in");
	CHECK_STR(norm("SIGN_IN"), "sign in");
	CHECK_STR(norm("Ｒａｔｅ  Limit"), "rate limit");   /* NFKC */
	CHECK_STR(norm("STRASSE"), "strasse");
	CHECK_STR(norm(" - "), "(error)");
	q_glossary g;
	memset(&g, 0, sizeof g);
	CHECK(q_gloss_protected(&g, "TLS", 3) != NULL);
	CHECK(q_gloss_protected(&g, "getUserName", 11) != NULL);
	CHECK(q_gloss_protected(&g, "handle_login()", 14) != NULL);
	CHECK(q_gloss_protected(&g, "TC-1001", 7) != NULL);
	CHECK(q_gloss_protected(&g, "auth", 4) == NULL);
	CHECK(q_gloss_protected(&g, "Sign-in", 7) == NULL);
	CHECK_OK(q_gloss_protect(&g, "Sentinel", 1));
	CHECK(q_gloss_protected(&g, "sentinel", 8) != NULL);
	CHECK_EQ(q_gloss_protect(&g, "nobody", 0), FATHOM_ENOTFOUND);
	q_gloss_free(&g);
}

static void test_groups_and_payload(void)
{
	q_glossary g;
	memset(&g, 0, sizeof g);
	const char *a[] = { "auth", "Authentication" }, *b[] = { "login", "sign-in" },
	           *c[] = { "sign in", "AUTH" }, *bad[] = { "x", "TLS" };
	uint32_t id1 = 0, id2 = 0, id3 = 0;
	CHECK_OK(q_gloss_add(&g, a, 2, 0, &id1));
	CHECK_OK(q_gloss_add(&g, b, 2, 0, &id2));
	CHECK(id1 != id2);
	CHECK_EQ(q_gloss_add(&g, bad, 2, 0, NULL), FATHOM_EINVAL);   /* TLS is protected */
	CHECK_EQ(q_gloss_add(&g, a, 1, 0, NULL), FATHOM_EINVAL);     /* one term */
	/* "sign in" is in group 2, "auth" (AUTH is all caps: refused as typed) */
	CHECK_EQ(q_gloss_add(&g, c, 2, 0, NULL), FATHOM_EINVAL);
	const char *d[] = { "sign in", "auth" };
	CHECK_OK(q_gloss_add(&g, d, 2, 0, &id3));   /* merges groups 1 and 2 */
	const q_gitem *grp = q_gloss_group_of(&g, "login", 5);
	CHECK(grp && grp->nterms == 4);
	CHECK(grp && grp == q_gloss_group_of(&g, "authentication", 14));
	size_t groups = 0;
	for (size_t i = 0; i < g.n; i++)
		groups += g.items[i].kind == QG_GROUP;
	CHECK_EQ(groups, 1);
	CHECK_OK(q_gloss_remove(&g, "Sign-In"));
	CHECK(q_gloss_group_of(&g, "sign in", 7) == NULL);
	CHECK_EQ(q_gloss_remove(&g, "nothing"), FATHOM_ENOTFOUND);
	CHECK_OK(q_gloss_protect(&g, "Sentinel", 1));

	/* round trip */
	fbuf p, p2;
	fbuf_init(&p, 0);
	fbuf_init(&p2, 0);
	CHECK_OK(q_gloss_serialize(&g, &p));
	q_glossary h;
	CHECK_OK(q_gloss_parse(&h, p.data, p.len));
	CHECK_OK(q_gloss_serialize(&h, &p2));
	CHECK(p.len == p2.len && memcmp(p.data, p2.data, p.len) == 0);
	CHECK(q_gloss_group_of(&h, "login", 5) != NULL);
	q_gloss_free(&h);
	/* every truncation and every flipped byte: an error or a valid parse */
	size_t errors = 0;
	for (size_t cut = 0; cut < p.len; cut++)
		errors += q_gloss_parse(&h, p.data, cut) == FATHOM_ECORRUPT || (q_gloss_free(&h), 0);
	CHECK(errors >= p.len - 1);   /* only the empty prefix parses (as empty) */
	for (size_t i = 0; i < p.len; i++) {
		p.data[i] ^= 0x5a;
		if (q_gloss_parse(&h, p.data, p.len) == 0)
			q_gloss_free(&h);
		p.data[i] ^= 0x5a;
	}
	fbuf_free(&p);
	fbuf_free(&p2);
	q_gloss_free(&g);
}

int main(void)
{
	RUN(test_norm_and_protection);
	RUN(test_groups_and_payload);
	return TEST_DONE();
}
