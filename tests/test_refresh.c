/*
 * test_refresh.c — a read-only handle follows a writer's commits with
 * fathom_refresh(): new documents, deletes (tombstones on a kept segment),
 * merges that remove segment files, and the glossary; nothing moves
 * before the call, and a handle that is current stays as it is.
 */
#include "fathom.h"
#include "test.h"

static size_t count(fathom_index *ix, const char *q)
{
	fathom_results *r = NULL;
	fathom_search_opts so = FATHOM_SEARCH_OPTS_INIT;
	so.k = 100;
	if (fathom_search(&r, ix, q, &so) != 0)
		return (size_t)-1;
	size_t n = fathom_results_count(r);
	fathom_results_free(r);
	return n;
}

static void add(fathom_index *w, const char *id, const char *body)
{
	fathom_doc d = { id, NULL, body, strlen(body), NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(w, &d, NULL));
}

static void test_refresh(void)
{
	char *dir = test_tmpdir("refresh");
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *w, *r;
	CHECK_OK(fathom_open(&w, dir, &oo));
	add(w, "a", "the walrus eats clams");
	add(w, "b", "the walrus sleeps");
	CHECK_OK(fathom_commit(w));
	fathom_open_opts ro = FATHOM_OPEN_OPTS_INIT;
	CHECK_OK(fathom_open(&r, dir, &ro));
	CHECK_EQ(count(r, "walrus"), 2);
	int changed = -1;
	CHECK_OK(fathom_refresh(r, &changed));
	CHECK_EQ(changed, 0);                       /* nothing newer */

	/* a new segment and a delete in the old one */
	add(w, "c", "a walrus swims");
	CHECK_OK(fathom_delete_doc(w, "b"));
	CHECK_OK(fathom_commit(w));
	CHECK_EQ(count(r, "walrus"), 2);            /* the snapshot it had */
	uint64_t g0 = fathom_generation(r);
	CHECK_OK(fathom_refresh(r, &changed));
	CHECK_EQ(changed, 1);
	CHECK(fathom_generation(r) > g0);
	CHECK_EQ(fathom_generation(r), fathom_generation(w));
	CHECK_EQ(count(r, "walrus"), 2);            /* a and c */
	CHECK_EQ(count(r, "sleeps"), 0);
	CHECK_EQ(count(r, "swims"), 1);

	/* a merge into one segment removes the files the reader has open: it
	 * keeps reading them (mapped) until it refreshes */
	CHECK_OK(fathom_optimize(w));
	CHECK_EQ(count(r, "swims"), 1);
	CHECK_OK(fathom_refresh(r, &changed));
	CHECK_EQ(changed, 1);
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, r));
	CHECK_EQ(st.segments, 1);
	CHECK_EQ(st.docs, 2);
	CHECK_EQ(count(r, "clams"), 1);

	/* the glossary of a commit comes with it */
	const char *g[] = { "walrus", "morse" };
	CHECK_OK(fathom_glossary_add(w, g, 2, NULL));
	CHECK_OK(fathom_commit(w));
	CHECK_EQ(count(r, "morse"), 0);
	CHECK_OK(fathom_refresh(r, NULL));
	CHECK_EQ(count(r, "morse"), 2);

	/* a writer's handle is current: refresh does nothing */
	CHECK_OK(fathom_refresh(w, &changed));
	CHECK_EQ(changed, 0);
	fathom_close(r);
	fathom_close(w);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	RUN(test_refresh);
	return TEST_DONE();
}
