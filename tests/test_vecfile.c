/*
 * test_vecfile.c — word vector files (src/embed/vecfile.c): GloVe's own
 * file from ../shared (skipped with a message when absent), the same
 * vectors written as word2vec text and binary and read back bit for bit,
 * format detection, and every error with its file and line.
 */
#include <math.h>
#include <unistd.h>

#include "test.h"
#include "embed/embed.h"
#include "fathom.h"

#define GLOVE "../shared/data/glove50d10k/glove.6B.50d.10k.txt"

static em_vectors *parse(const char *text, int format, int *rc)
{
	em_vectors *v = NULL;
	*rc = em_vectors_parse(&v, text, strlen(text), format, "t.vec");
	return v;
}

/* Parsing text must fail with code, the message naming "t.vec:LINE:" and
 * holding what. */
static void bad(const char *text, int format, int code, const char *where, const char *what)
{
	int rc;
	em_vectors *v = parse(text, format, &rc);
	CHECK(v == NULL);
	CHECK_EQ(rc, code);
	const char *m = fathom_errmsg();
	if (!strstr(m, where) || !strstr(m, what)) {
		fprintf(stderr, "  message \"%s\" lacks \"%s\" or \"%s\"\n", m, where, what);
		CHECK(0);
	}
	em_vectors_free(v);
}

static void test_glove_text(void)
{
	int rc;
	em_vectors *v = parse("the 0.5 -1.25 3\nof 1e-3 2 -0\n\n", EM_VEC_AUTO, &rc);
	CHECK_OK(rc);
	if (!v)
		return;
	CHECK_EQ(v->n, 2);
	CHECK_EQ(v->dim, 3);
	CHECK_EQ(v->format, EM_VEC_GLOVE);
	CHECK_EQ(em_vectors_find(v, "of", 2), 1);
	CHECK_EQ(em_vectors_find(v, "o", 1), -1);
	CHECK_EQ(em_vectors_find(v, "ofx", 3), -1);
	CHECK(em_vectors_row(v, 0)[1] == -1.25f);
	CHECK(em_vectors_row(v, 1)[0] == 1e-3f);
	CHECK_STR(em_vectors_word(v, 0), "the");
	em_vectors_normalize(v);
	for (uint32_t i = 0; i < v->n; i++) {
		double ss = 0;
		for (uint32_t k = 0; k < v->dim; k++)
			ss += (double)em_vectors_row(v, i)[k] * em_vectors_row(v, i)[k];
		CHECK(fabs(ss - 1.0) < 1e-6);
	}
	em_vectors_free(v);
	/* a row of subnormals still normalises to unit length */
	v = parse("w 1e-44 0\n", EM_VEC_AUTO, &rc);
	CHECK_OK(rc);
	if (v) {
		em_vectors_normalize(v);
		CHECK(em_vectors_row(v, 0)[0] == 1.0f && em_vectors_row(v, 0)[1] == 0.0f);
	}
	em_vectors_free(v);
	/* CRLF lines, a byte order mark, tabs, a word given twice */
	v = parse("\xef\xbb\xbf" "a\t1 2\r\nb 3 4\r\na 5 6\r\n", EM_VEC_AUTO, &rc);
	CHECK_OK(rc);
	if (v) {
		CHECK_EQ(v->n, 3);
		CHECK_EQ(v->dups, 1);
		CHECK_EQ(em_vectors_find(v, "a", 1), 0);
		CHECK(em_vectors_row(v, 1)[1] == 4.0f);
	}
	em_vectors_free(v);
}

static void test_word2vec_text(void)
{
	int rc;
	em_vectors *v = parse("2 2\nx 1 2\ny 3 4\n", EM_VEC_AUTO, &rc);
	CHECK_OK(rc);
	if (v) {
		CHECK_EQ(v->format, EM_VEC_W2V_TEXT);
		CHECK_EQ(v->n, 2);
		CHECK(em_vectors_row(v, 1)[0] == 3.0f);
	}
	em_vectors_free(v);
	/* the same read as GloVe when asked: "2 2" is then a word and a value,
	 * and the next line has two values: an error on line 2 */
	bad("2 2\nx 1 2\n", EM_VEC_GLOVE, FATHOM_ESYNTAX, "t.vec:2:", "more values");
	/* a header of no words */
	v = parse("0 5\n", EM_VEC_AUTO, &rc);
	CHECK_OK(rc);
	if (v)
		CHECK_EQ(v->n, 0);
	em_vectors_free(v);
}

/* word2vec's binary layout, written here from rows */
static char *w2v_binary(const char *const *words, const float *rows, uint32_t n, uint32_t dim,
                        int newline, size_t *len)
{
	size_t cap = 64 + (size_t)n * (dim * 4 + 64);
	char *b = malloc(cap);
	size_t o = (size_t)snprintf(b, cap, "%u %u\n", n, dim);
	for (uint32_t i = 0; i < n; i++) {
		size_t wl = strlen(words[i]);
		memcpy(b + o, words[i], wl);
		o += wl;
		b[o++] = ' ';
		for (uint32_t k = 0; k < dim; k++) {
			float f = rows[(size_t)i * dim + k];
			uint32_t u;
			memcpy(&u, &f, 4);
			for (int j = 0; j < 4; j++)
				b[o++] = (char)(u >> (8 * j));   /* little-endian */
		}
		if (newline)
			b[o++] = '\n';
	}
	*len = o;
	return b;
}

static void test_word2vec_binary(void)
{
	static const char gword[] = { '\xce', '\xb3', 'a', 'm', 'm', 'a', '\0' };   /* "γamma" */
	const char *words[] = { "alpha", "beta", gword };
	/* values whose bytes hold spaces and newlines (0x20, 0x0a) */
	float rows[] = { 1.0f, -2.5f, 1.0e-20f, 0x1.0a0a0ap+0f, 0x1.202020p-3f, 3.0f, 0.0f, -0.0f, 7.0f };
	for (int nl = 0; nl < 2; nl++) {
		size_t len;
		char *b = w2v_binary(words, rows, 3, 3, nl, &len);
		em_vectors *v = NULL;
		CHECK_OK(em_vectors_parse(&v, b, len, EM_VEC_AUTO, "b.bin"));
		if (v) {
			CHECK_EQ(v->format, EM_VEC_W2V_BIN);
			CHECK_EQ(v->n, 3);
			CHECK(memcmp(v->v, rows, sizeof rows) == 0);
			CHECK_EQ(em_vectors_find(v, gword, 6), 2);
		}
		em_vectors_free(v);
		/* cut anywhere in the entries: an error, never a crash */
		size_t hdr = strlen("3 3\n");
		for (size_t cut = hdr; cut < len - (nl ? 1 : 0); cut++) {
			v = NULL;
			int rc = em_vectors_parse(&v, b, cut, EM_VEC_W2V_BIN, "b.bin");
			CHECK(rc == FATHOM_ESYNTAX);
			CHECK(v == NULL);
			CHECK(strstr(fathom_errmsg(), "b.bin:") != NULL);
		}
		free(b);
	}
	/* a NaN in the bytes */
	float nan_row[] = { 1.0f, NAN };
	const char *w1[] = { "w" };
	size_t len;
	char *b = w2v_binary(w1, nan_row, 1, 2, 1, &len);
	em_vectors *v = NULL;
	CHECK_EQ(em_vectors_parse(&v, b, len, EM_VEC_AUTO, "b.bin"), FATHOM_ESYNTAX);
	CHECK(strstr(fathom_errmsg(), "b.bin:1: a value that is not a finite number") != NULL);
	free(b);
}

static void test_errors(void)
{
	bad("", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:1:", "an empty file");
	bad("the 1 2\nof 1 x\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:2:", "not a finite number");
	bad("the 1 2\nof 1 nan\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:2:", "not a finite number");
	bad("the 1 2\nof 1 inf\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:2:", "not a finite number");
	bad("the 1 2\nof 1e999 2\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:2:", "not a finite number");
	bad("the 1 2\nof 1\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:2:", "fewer values");
	bad("the 1 2\nof 1 2 3\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:2:", "more values");
	bad("the 1 2\n\nof 1 2\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:2:", "an empty line");
	bad("the\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:1:", "a word without values");
	bad("3 2\nx 1 2\ny 1 2\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:4:", "fewer words");
	bad("1 2\nx 1 2\ny 1 2\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:3:", "more words");
	bad("1 0\n", EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:1:", "a dimension of 0");
	bad("1 5000\n", EM_VEC_AUTO, FATHOM_ETOOBIG, "t.vec:1:", "4096");
	bad("99999999999 5\n", EM_VEC_AUTO, FATHOM_ETOOBIG, "t.vec:1:", "words");
	bad("the 1\n", EM_VEC_W2V_TEXT, FATHOM_ESYNTAX, "t.vec:1:", "no header");
	char num[200];
	memset(num, '1', sizeof num - 1);
	num[sizeof num - 1] = '\0';
	char line[300];
	snprintf(line, sizeof line, "w %s\n", num);
	bad(line, EM_VEC_AUTO, FATHOM_ESYNTAX, "t.vec:1:", "not a finite number");
	char *longw = malloc(EM_MAX_WORD + 16);
	memset(longw, 'a', EM_MAX_WORD + 1);
	strcpy(longw + EM_MAX_WORD + 1, " 1\n");
	bad(longw, EM_VEC_AUTO, FATHOM_ETOOBIG, "t.vec:1:", "longer than 512");
	free(longw);
	/* a NUL inside a word */
	em_vectors *v = NULL;
	CHECK_EQ(em_vectors_parse(&v, "a\0b 1\n", 6, EM_VEC_AUTO, "t.vec"), FATHOM_ESYNTAX);
	CHECK(strstr(fathom_errmsg(), "NUL") != NULL);
	CHECK_EQ(em_vectors_parse(&v, "x", 1, 9, "t.vec"), FATHOM_EINVAL);
	CHECK_EQ(em_vectors_read(&v, "/nonexistent/fathom.vec", EM_VEC_AUTO), FATHOM_ENOTFOUND);
	CHECK(v == NULL);
}

static void test_glove_file(void)
{
	if (access(GLOVE, R_OK) != 0) {
		printf("     %s is absent: skipped\n", GLOVE);
		return;
	}
	em_vectors *v = NULL;
	CHECK_OK(em_vectors_read(&v, GLOVE, EM_VEC_AUTO));
	if (!v)
		return;
	CHECK_EQ(v->n, 10000);
	CHECK_EQ(v->dim, 50);
	CHECK_EQ(v->format, EM_VEC_GLOVE);
	CHECK_EQ(v->dups, 0);
	CHECK_EQ(em_vectors_find(v, "the", 3), 0);
	const float *the = em_vectors_row(v, 0);
	/* the file's first line: "the 0.418 0.24968 -0.41242 0.1217 ..." */
	CHECK(the[0] == 0.418f && the[1] == 0.24968f && the[2] == -0.41242f && the[3] == 0.1217f);
	/* written as word2vec text (%.9g: every float back exactly) and as
	 * binary, and read back: the same words, the same bits */
	char *dir = test_tmpdir("vecfile");
	char path[600];
	for (int bin = 0; bin < 2; bin++) {
		snprintf(path, sizeof path, "%s/glove.%s", dir, bin ? "bin" : "vec");
		FILE *f = fopen(path, "wb");
		CHECK(f != NULL);
		if (!f)
			break;
		fprintf(f, "%u %u\n", v->n, v->dim);
		for (uint32_t i = 0; i < v->n; i++) {
			const float *r = em_vectors_row(v, i);
			fputs(em_vectors_word(v, i), f);
			if (bin) {
				fputc(' ', f);
				fwrite(r, 4, v->dim, f);   /* the test machine is little-endian */
				fputc('\n', f);
			} else {
				for (uint32_t k = 0; k < v->dim; k++)
					fprintf(f, " %.9g", (double)r[k]);
				fputc('\n', f);
			}
		}
		fclose(f);
		em_vectors *w = NULL;
		CHECK_OK(em_vectors_read(&w, path, EM_VEC_AUTO));
		if (!w)
			continue;
		CHECK_EQ(w->format, bin ? EM_VEC_W2V_BIN : EM_VEC_W2V_TEXT);
		CHECK_EQ(w->n, v->n);
		CHECK_EQ(w->dim, v->dim);
		int same = w->n == v->n && memcmp(w->v, v->v, (size_t)v->n * v->dim * 4) == 0;
		for (uint32_t i = 0; same && i < v->n; i++)
			same = strcmp(em_vectors_word(w, i), em_vectors_word(v, i)) == 0;
		CHECK(same);
		em_vectors_free(w);
	}
	test_rmrf(dir);
	free(dir);
	em_vectors_free(v);
}

int main(void)
{
	RUN(test_glove_text);
	RUN(test_word2vec_text);
	RUN(test_word2vec_binary);
	RUN(test_errors);
	RUN(test_glove_file);
	return TEST_DONE();
}
