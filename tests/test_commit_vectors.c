/*
 * test_commit_vectors.c — documents and the vectors their embedder needs
 * are one commit (api/embed_train.c): the `corpus` embedder's first
 * training commits the documents it trains on, the model and every
 * chunk's vector in one generation, through fathom_commit and through
 * fathom_optimize with documents pending; a training that fails (too few
 * words) commits nothing; an index that gets the corpus embedder later is
 * trained and embedded in one commit too. (A kill -9 between two commits
 * would otherwise leave documents without vectors: e2e/crash_vectors.sh.)
 * The setting embedder.seed names the training's seed: one seed gives one
 * model, another seed another.
 */
#include "fathom.h"
#include "test.h"

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

/* The index is at generation gen with docs documents, each chunk with a
 * vector when vectors is set (none otherwise); the embedder named. */
static void expect(fathom_index *fx, uint64_t gen, uint64_t docs, int vectors,
                   const char *embedder)
{
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, fx));
	CHECK_EQ(st.generation, gen);
	CHECK_EQ(st.docs, docs);
	CHECK_EQ(st.vector_chunks, vectors ? st.chunks : 0);
	CHECK_STR(st.embedder, embedder);
	CHECK_OK(fathom_verify(fx));
}

/* A new index with the corpus embedder and n documents pending. */
static fathom_index *corpus_index(const char *tag, char **dir, int n)
{
	*dir = test_tmpdir(tag);
	fathom_index *fx = test_open(*dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	add_docs(fx, 0, n);
	return fx;
}

static void done(fathom_index *fx, char *dir)
{
	fathom_close(fx);
	test_rmrf(dir);
	free(dir);
}

static void test_first_commit(void)
{
	char *dir;
	fathom_index *fx = corpus_index("cv-first", &dir, 120);
	CHECK_OK(fathom_commit(fx));
	expect(fx, 1, 120, 1, "corpus");   /* one commit: documents, model, vectors */
	/* more documents: embedded at ingest, one commit */
	add_docs(fx, 120, 40);
	CHECK_OK(fathom_commit(fx));
	expect(fx, 2, 160, 1, "corpus");
	/* optimize with documents pending: retrained, re-embedded, merged,
	 * the pending ones with them, in one commit */
	add_docs(fx, 160, 20);
	CHECK_OK(fathom_delete_doc(fx, "doc3"));
	CHECK_OK(fathom_optimize(fx));
	expect(fx, 3, 179, 1, "corpus");
	fathom_stats st = FATHOM_STATS_INIT;
	CHECK_OK(fathom_stats_get(&st, fx));
	CHECK_EQ(st.segments, 1);
	CHECK_EQ(st.deleted_chunks, 0);
	done(fx, dir);
}

/* fathom_optimize as the first commit of a corpus index; without an
 * embedder, the merge alone commits what is pending. */
static void test_optimize_first(void)
{
	char *dir;
	fathom_index *fx = corpus_index("cv-opt", &dir, 80);
	CHECK_OK(fathom_optimize(fx));
	expect(fx, 1, 80, 1, "corpus");
	CHECK_OK(fathom_config_set(fx, "embedder", "none"));
	CHECK_OK(fathom_delete_doc(fx, "doc1"));
	CHECK_OK(fathom_optimize(fx));
	expect(fx, 2, 79, 1, "none");
	done(fx, dir);
}

/* Too few words to train: the commit fails and commits nothing; a
 * rollback leaves the index as it was, reopened too. */
static void test_training_fails(void)
{
	char *dir = test_tmpdir("cv-fail");
	fathom_index *fx = test_open(dir, FATHOM_OPEN_CREATE);
	fathom_doc a = { "a", "A", "hello world", 11, NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(fx, &a, NULL));
	CHECK_OK(fathom_commit(fx));
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	fathom_doc b = { "b", "B", "second note", 11, NULL, NULL, 0, NULL, 0, NULL };
	CHECK_OK(fathom_add_doc(fx, &b, NULL));
	CHECK_EQ(fathom_commit(fx), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "training the corpus embedder") != NULL);
	CHECK_OK(fathom_rollback(fx));
	expect(fx, 1, 1, 0, "none");
	fathom_close(fx);
	fx = test_open(dir, FATHOM_OPEN_CREATE);
	expect(fx, 1, 1, 0, "none");
	done(fx, dir);
}

/* A lexical index given the corpus embedder: the next commit trains on
 * every document and embeds every chunk, in one commit. */
static void test_embedder_later(void)
{
	char *dir = test_tmpdir("cv-later");
	fathom_index *fx = test_open(dir, FATHOM_OPEN_CREATE);
	add_docs(fx, 0, 100);
	CHECK_OK(fathom_commit(fx));
	add_docs(fx, 100, 30);
	CHECK_OK(fathom_commit(fx));
	expect(fx, 2, 130, 0, "none");
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	add_docs(fx, 130, 10);
	CHECK_OK(fathom_commit(fx));
	expect(fx, 3, 140, 1, "corpus");
	done(fx, dir);
}

/* A corpus index of the same documents trained with seed (NULL: the
 * default); the vector of a text under its model into v (dim floats, at
 * most 512), its ident into ident. */
static uint32_t seeded_vector(const char *tag, const char *seed, float *v, char *ident,
                              size_t cap)
{
	char *dir = test_tmpdir(tag);
	fathom_index *fx = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_OK(fathom_config_set(fx, "embedder", "corpus"));
	if (seed)
		CHECK_OK(fathom_config_set(fx, "embedder.seed", seed));
	add_docs(fx, 0, 120);
	CHECK_OK(fathom_commit(fx));
	fathom_embedder *e = NULL;
	CHECK_OK(fathom_embedder_open(&e, fx));
	uint32_t dim = e ? fathom_embedder_dim(e) : 0;
	CHECK(dim > 0 && dim <= 512);
	const char *text = "kernel driver module heron marsh";
	size_t len = strlen(text);
	if (e && dim <= 512)
		CHECK_OK(fathom_embed(e, &text, &len, 1, v));
	snprintf(ident, cap, "%s", e ? fathom_embedder_ident(e) : "");
	fathom_embedder_free(e);
	done(fx, dir);
	return dim;
}

static void test_seed(void)
{
	static float a[512], b[512], c[512];
	char ia[256], ib[256], ic[256];
	uint32_t da = seeded_vector("cv-seed-a", "7", a, ia, sizeof ia);
	uint32_t db = seeded_vector("cv-seed-b", "7", b, ib, sizeof ib);
	uint32_t dc = seeded_vector("cv-seed-c", NULL, c, ic, sizeof ic);
	CHECK(strstr(ia, " seed=7 ") != NULL);
	CHECK(strstr(ic, " seed=24301 ") != NULL);   /* the setting's default */
	CHECK_STR(ia, ib);
	CHECK_EQ(da, db);
	CHECK(memcmp(a, b, da * sizeof *a) == 0);     /* one seed, one model */
	CHECK_EQ(da, dc);
	CHECK(memcmp(a, c, da * sizeof *a) != 0);     /* another seed, another */
	/* out of the setting's range: refused, naming it */
	char *dir = test_tmpdir("cv-seed-bad");
	fathom_index *fx = test_open(dir, FATHOM_OPEN_CREATE);
	CHECK_EQ(fathom_config_set(fx, "embedder.seed", "-1"), FATHOM_EINVAL);
	CHECK(strstr(fathom_errmsg(), "embedder.seed") != NULL);
	done(fx, dir);
}

int main(void)
{
	RUN(test_first_commit);
	RUN(test_optimize_first);
	RUN(test_training_fails);
	RUN(test_embedder_later);
	RUN(test_seed);
	return TEST_DONE();
}
