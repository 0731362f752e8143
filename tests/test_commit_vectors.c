/*
 * test_commit_vectors.c — documents and the vectors their embedder needs
 * are one commit (api/embed_train.c): the `corpus` embedder's first
 * training commits the documents it trains on, the model and every
 * chunk's vector in one generation, through fathom_commit and through
 * fathom_optimize with documents pending; a training that fails (too few
 * words) commits nothing; an index that gets the corpus embedder later is
 * trained and embedded in one commit too. (A kill -9 between two commits
 * would otherwise leave documents without vectors: e2e/crash_vectors.sh.)
 */
#include "fathom.h"
#include "test.h"

static fathom_index *open_create(const char *dir)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	fathom_index *fx = NULL;
	oo.flags = FATHOM_OPEN_CREATE;
	if (fathom_open(&fx, dir, &oo) != 0) {
		fprintf(stderr, "  cannot open %s: %s\n", dir, fathom_errmsg());
		exit(2);
	}
	return fx;
}

/* n documents of four topics, 40 words each, from document first on. */
static void add_docs(fathom_index *fx, int first, int n)
{
	static const char *const words[4][6] = {
		{ "kestrel", "heron", "marsh", "nest", "feather", "wing" },
		{ "kernel", "driver", "module", "interrupt", "register", "device" },
		{ "protein", "cell", "gene", "mutation", "receptor", "tissue" },
		{ "river", "valley", "glacier", "delta", "basin", "flood" },
	};
	uint64_t x = 88172645463325252ull + (uint64_t)first;
	for (int d = first; d < first + n; d++) {
		char id[32], body[1024];
		size_t len = 0;
		for (int w = 0; w < 40; w++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			len += (size_t)snprintf(body + len, sizeof body - len, "%s ", words[d % 4][x % 6]);
		}
		snprintf(id, sizeof id, "doc%d", d);
		fathom_doc doc = { id, "A note", body, len, NULL, NULL, 0, NULL, 0, NULL };
		CHECK_OK(fathom_add_doc(fx, &doc, NULL));
	}
}

static fathom_stats stats(fathom_index *fx)
{
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, fx));
	return st;
}

static void test_first_commit(void)
{
	char *dir = test_tmpdir("cv-first");
	fathom_index *fx = open_create(dir);
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	add_docs(fx, 0, 120);
	CHECK_OK(fathom_commit(fx));
	fathom_stats st = stats(fx);
	CHECK_EQ(st.generation, 1);   /* one commit: documents, model, vectors */
	CHECK_EQ(st.docs, 120);
	CHECK_EQ(st.vector_chunks, st.chunks);
	CHECK(st.vector_dim > 0);
	CHECK_STR(st.embedder, "corpus");
	/* more documents: embedded at ingest, one commit */
	add_docs(fx, 120, 40);
	CHECK_OK(fathom_commit(fx));
	st = stats(fx);
	CHECK_EQ(st.generation, 2);
	CHECK_EQ(st.vector_chunks, st.chunks);
	CHECK_EQ(st.docs, 160);
	/* optimize with documents pending: retrained, re-embedded, merged,
	 * the pending ones with them, in one commit */
	add_docs(fx, 160, 20);
	CHECK_OK(fathom_delete_doc(fx, "doc3"));
	CHECK_OK(fathom_optimize(fx));
	st = stats(fx);
	CHECK_EQ(st.generation, 3);
	CHECK_EQ(st.docs, 179);
	CHECK_EQ(st.segments, 1);
	CHECK_EQ(st.deleted_chunks, 0);
	CHECK_EQ(st.vector_chunks, st.chunks);
	CHECK_OK(fathom_verify(fx));
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);
}

/* fathom_optimize as the first commit of a corpus index. */
static void test_optimize_first(void)
{
	char *dir = test_tmpdir("cv-opt");
	fathom_index *fx = open_create(dir);
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	add_docs(fx, 0, 80);
	CHECK_OK(fathom_optimize(fx));
	fathom_stats st = stats(fx);
	CHECK_EQ(st.generation, 1);
	CHECK_EQ(st.docs, 80);
	CHECK_EQ(st.vector_chunks, st.chunks);
	/* no embedder: optimize is the merge alone, pending work included */
	CHECK_OK(fathom_config_set(fx, "embedder", "none"));
	CHECK_OK(fathom_delete_doc(fx, "doc1"));
	CHECK_OK(fathom_optimize(fx));
	st = stats(fx);
	CHECK_EQ(st.generation, 2);
	CHECK_EQ(st.docs, 79);
	CHECK_STR(st.embedder, "none");
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);
}

/* Too few words to train: the commit fails and commits nothing; a
 * rollback leaves the index as it was. */
static void test_training_fails(void)
{
	char *dir = test_tmpdir("cv-fail");
	fathom_index *fx = open_create(dir);
	fathom_doc a = { "a", "A", "hello world", 11, NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(fx, &a, NULL));
	CHECK_OK(fathom_commit(fx));
	CHECK_EQ(stats(fx).generation, 1);
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	fathom_doc b = { "b", "B", "second note", 11, NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(fx, &b, NULL));
	CHECK_EQ(fathom_commit(fx), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "training the corpus embedder") != NULL);
	CHECK_OK(fathom_rollback(fx));
	fathom_stats st = stats(fx);
	CHECK_EQ(st.generation, 1);
	CHECK_EQ(st.docs, 1);
	CHECK_STR(st.embedder, "none");
	fathom_close(fx);
	/* reopened: the same */
	fx = open_create(dir);
	st = stats(fx);
	CHECK_EQ(st.generation, 1);
	CHECK_EQ(st.docs, 1);
	CHECK_OK(fathom_verify(fx));
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);
}

/* A lexical index given the corpus embedder: the next commit trains on
 * every document and embeds every chunk, in one commit. */
static void test_embedder_later(void)
{
	char *dir = test_tmpdir("cv-later");
	fathom_index *fx = open_create(dir);
	add_docs(fx, 0, 100);
	CHECK_OK(fathom_commit(fx));
	add_docs(fx, 100, 30);
	CHECK_OK(fathom_commit(fx));
	fathom_stats st = stats(fx);
	CHECK_EQ(st.generation, 2);
	CHECK_EQ(st.vector_chunks, 0);
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	add_docs(fx, 130, 10);
	CHECK_OK(fathom_commit(fx));
	st = stats(fx);
	CHECK_EQ(st.generation, 3);
	CHECK_EQ(st.docs, 140);
	CHECK_EQ(st.vector_chunks, st.chunks);
	CHECK_OK(fathom_verify(fx));
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);
}

int main(void)
{
	RUN(test_first_commit);
	RUN(test_optimize_first);
	RUN(test_training_fails);
	RUN(test_embedder_later);
	return TEST_DONE();
}
