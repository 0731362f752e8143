/*
 * test_safetensors.c — the safetensors container (src/embed/safetensors.c)
 * on files built here: the tensors found with their shapes and values
 * (F32, F16 and BF16 exactly, F64 rounded), and each kind of damage an
 * error naming the file and the tensor.
 */
#include <math.h>

#include "test.h"
#include "embed/embed.h"
#include "fathom.h"

/* header JSON + data into one buffer (the length prefix little-endian) */
static unsigned char *file_of(const char *json, const void *data, size_t dlen, size_t *len)
{
	size_t hl = strlen(json);
	unsigned char *b = malloc(8 + hl + dlen + 1);
	for (int i = 0; i < 8; i++)
		b[i] = (unsigned char)((uint64_t)hl >> (8 * i));
	memcpy(b + 8, json, hl);
	if (dlen)
		memcpy(b + 8 + hl, data, dlen);
	*len = 8 + hl + dlen;
	return b;
}

static void test_read(void)
{
	float m[6] = { 1.0f, -2.5f, 0.125f, 3.0f, -0.0f, 1e-30f };
	size_t len;
	unsigned char *b = file_of("{\"__metadata__\":{\"format\":\"pt\"},"
	                           "\"embeddings\":{\"dtype\":\"F32\",\"shape\":[3,2],\"data_offsets\":[0,24]}}",
	                           m, sizeof m, &len);
	em_st *st = NULL;
	CHECK_OK(em_st_parse(&st, b, len, "m.safetensors"));
	if (st) {
		CHECK_EQ(st->n, 1);
		const em_tensor *t = em_st_find(st, "embeddings");
		CHECK(t != NULL);
		CHECK(em_st_find(st, "embedding") == NULL);
		if (t) {
			CHECK_EQ(t->ndim, 2);
			CHECK_EQ(t->shape[0], 3);
			CHECK_EQ(t->shape[1], 2);
			float out[6];
			CHECK_OK(em_st_floats(st, t, out));
			CHECK(memcmp(out, m, sizeof m) == 0);
		}
	}
	em_st_free(st);
	free(b);
}

static void test_dtypes(void)
{
	/* F16: 1, -2, the smallest subnormal, the largest finite; BF16: 1, -3;
	 * F64: 0.1 (rounded to the nearest float) */
	unsigned char d[8 + 4 + 8];
	uint16_t h[4] = { 0x3c00, 0xc000, 0x0001, 0x7bff };
	uint16_t bf[2] = { 0x3f80, 0xc040 };
	double x = 0.1;
	for (int i = 0; i < 4; i++) {
		d[2 * i] = (unsigned char)h[i];
		d[2 * i + 1] = (unsigned char)(h[i] >> 8);
	}
	for (int i = 0; i < 2; i++) {
		d[8 + 2 * i] = (unsigned char)bf[i];
		d[8 + 2 * i + 1] = (unsigned char)(bf[i] >> 8);
	}
	memcpy(d + 12, &x, 8);   /* the test machine is little-endian */
	size_t len;
	unsigned char *b = file_of("{\"h\":{\"dtype\":\"F16\",\"shape\":[4],\"data_offsets\":[0,8]},"
	                           "\"b\":{\"dtype\":\"BF16\",\"shape\":[2,1],\"data_offsets\":[8,12]},"
	                           "\"d\":{\"dtype\":\"F64\",\"shape\":[],\"data_offsets\":[12,20]},"
	                           "\"i\":{\"dtype\":\"I8\",\"shape\":[0],\"data_offsets\":[20,20]}}",
	                           d, sizeof d, &len);
	em_st *st = NULL;
	CHECK_OK(em_st_parse(&st, b, len, "d.safetensors"));
	if (st) {
		float out[4];
		CHECK_OK(em_st_floats(st, em_st_find(st, "h"), out));
		CHECK(out[0] == 1.0f && out[1] == -2.0f && out[2] == 0x1p-24f && out[3] == 65504.0f);
		CHECK_OK(em_st_floats(st, em_st_find(st, "b"), out));
		CHECK(out[0] == 1.0f && out[1] == -3.0f);
		CHECK_OK(em_st_floats(st, em_st_find(st, "d"), out));
		CHECK(out[0] == 0.1f);
		CHECK_EQ(em_st_find(st, "d")->count, 1);   /* a scalar */
		CHECK_EQ(em_st_floats(st, em_st_find(st, "i"), out), FATHOM_EINVAL);
	}
	em_st_free(st);
	free(b);
	/* a NaN in the data: found when read */
	float nanv[2] = { 1.0f, NAN };
	b = file_of("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", nanv, 8, &len);
	st = NULL;
	CHECK_OK(em_st_parse(&st, b, len, "n.safetensors"));
	if (st) {
		float out[2];
		CHECK_EQ(em_st_floats(st, &st->t[0], out), FATHOM_ESYNTAX);
		CHECK(strstr(fathom_errmsg(), "value 1 is not a finite number") != NULL);
	}
	em_st_free(st);
	free(b);
}

/* every half against the formula: a tensor of all 65,536 bit patterns */
static void test_every_half(void)
{
	static unsigned char d[65536 * 2];
	for (uint32_t h = 0; h < 65536; h++) {
		d[2 * h] = (unsigned char)h;
		d[2 * h + 1] = (unsigned char)(h >> 8);
	}
	size_t len;
	unsigned char *b = file_of("{\"h\":{\"dtype\":\"F16\",\"shape\":[65536],"
	                           "\"data_offsets\":[0,131072]}}", d, sizeof d, &len);
	em_st *st = NULL;
	CHECK_OK(em_st_parse(&st, b, len, "h.safetensors"));
	static float out[65536];
	int bad_values = 0, finite = 0;
	for (uint32_t h = 0; st && h < 65536; h++) {
		/* one value at a time: the non-finite ones are refused */
		em_tensor one = st->t[0];
		one.off = 2 * h;
		one.count = 1;
		int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
		double want = exp == 0 ? ldexp(man, -24) : ldexp(1024 + man, exp - 25);
		if (h & 0x8000)
			want = -want;
		int rc = em_st_floats(st, &one, out);
		if (exp == 0x1f) {
			bad_values += rc != FATHOM_ESYNTAX;
			continue;
		}
		finite++;
		bad_values += rc != 0 || (double)out[0] != want || !!signbit(out[0]) != !!(h & 0x8000);
	}
	CHECK_EQ(finite, 63488);
	CHECK_EQ(bad_values, 0);
	em_st_free(st);
	free(b);
}

static void bad(const char *json, size_t dlen, int code, const char *what)
{
	static unsigned char zeros[64];
	size_t len;
	unsigned char *b = file_of(json, zeros, dlen, &len);
	em_st *st = NULL;
	int rc = em_st_parse(&st, b, len, "bad.safetensors");
	CHECK_EQ(rc, code);
	CHECK(st == NULL);
	const char *m = fathom_errmsg();
	if (!strstr(m, "bad.safetensors") || !strstr(m, what)) {
		fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", m, what);
		CHECK(0);
	}
	em_st_free(st);
	free(b);
}

static void test_errors(void)
{
	bad("[1]", 0, FATHOM_ESYNTAX, "not a JSON object");
	bad("{\"x\":", 0, FATHOM_ESYNTAX, "header:");
	bad("{\"x\":{\"dtype\":\"F8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1, FATHOM_ESYNTAX,
	    "an unknown dtype");
	bad("{\"x\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, FATHOM_ESYNTAX, "no dtype");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4, FATHOM_ESYNTAX,
	    "a shape");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4,
	    FATHOM_ESYNTAX, "a shape");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, FATHOM_ESYNTAX,
	    "a size that is not a count");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 8, FATHOM_ESYNTAX,
	    "disagree with the shape");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, FATHOM_ESYNTAX,
	    "past the end");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, FATHOM_ESYNTAX,
	    "data_offsets that are not");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, FATHOM_ESYNTAX,
	    "data_offsets that are not");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[4294967295,4294967295,4294967295],"
	    "\"data_offsets\":[0,4]}}", 4, FATHOM_ESYNTAX, "more values than");
	bad("{\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
	    "\"x\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, FATHOM_ESYNTAX,
	    "duplicate");
	bad("{\"__metadata__\":[]}", 0, FATHOM_ESYNTAX, "__metadata__");
	bad("{\"x\":3}", 0, FATHOM_ESYNTAX, "tensor \"x\": not an object");
	/* the length prefix itself */
	unsigned char b[16] = { 0 };
	em_st *st = NULL;
	CHECK_EQ(em_st_parse(&st, b, 7, "short.safetensors"), FATHOM_ESYNTAX);
	b[0] = 200;   /* a header of 200 bytes in a file of 16 */
	CHECK_EQ(em_st_parse(&st, b, 16, "cut.safetensors"), FATHOM_ESYNTAX);
	CHECK(strstr(fathom_errmsg(), "longer than the file") != NULL);
	memset(b, 0, 8);
	b[4] = 1;   /* 2^32 bytes: over 100 MB */
	CHECK_EQ(em_st_parse(&st, b, 16, "huge.safetensors"), FATHOM_ETOOBIG);
	CHECK(st == NULL);
}

int main(void)
{
	RUN(test_read);
	RUN(test_dtypes);
	RUN(test_every_half);
	RUN(test_errors);
	return TEST_DONE();
}
