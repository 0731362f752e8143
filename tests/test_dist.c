/*
 * test_dist.c — the distance kernels (src/embed/dist.c) against their plain
 * references: float32 dot products within a rounding bound, int8 ones
 * exact, the asymmetric float-by-int8 one within the float bound, at every
 * length from 0 to 300 and at offsets that misalign the
 * loads; int8 quantisation within half a step of each value.
 */
#include <float.h>
#include <math.h>

#include "test.h"
#include "embed/embed.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

static float rnd_float(void)
{
	return ((float)(rnd() % 2000001) - 1000000.0f) / 250000.0f;   /* -4 .. 4 */
}

/* A float kernel at every length from 0 to 300 and 4 misalignments, on
 * values in -4..4 (i8: the second operand int8, -128 and 127 among them):
 * the fast one and the reference each within the rounding bound of the
 * exact sum (each float sum is within n ulps of the products' magnitudes).
 * Returns the number of misses. */
static int float_kernel_misses(int i8)
{
	enum { MAX = 300 };
	static float a[MAX + 8], b[MAX + 8];
	static int8_t b8[MAX + 8];
	int bad = 0;
	for (uint32_t n = 0; n <= MAX; n++) {
		for (uint32_t off = 0; off < 4; off++) {
			double mag = 0.0, exact = 0.0;
			for (uint32_t i = 0; i < n; i++) {
				uint32_t r = rnd() % 260;
				a[off + i] = rnd_float();
				b8[off + i] = r >= 256 ? (int8_t)(r & 1 ? 127 : -128) : (int8_t)(r - 128);
				b[off + i] = i8 ? (float)b8[off + i] : rnd_float();
				mag += fabs((double)a[off + i] * b[off + i]);
				exact += (double)a[off + i] * b[off + i];
			}
			float fast = i8 ? em_dot_f32_i8(a + off, b8 + off, n) : em_dot(a + off, b + off, n);
			float ref = i8 ? em_dot_f32_i8_ref(a + off, b8 + off, n)
			               : em_dot_ref(a + off, b + off, n);
			double bound = (n + 2) * (double)FLT_EPSILON * mag + 1e-30;
			bad += fabs((double)fast - exact) > bound || fabs((double)ref - exact) > bound;
			if (n == 0)
				bad += fast != 0.0f || ref != 0.0f;
		}
	}
	return bad;
}

/* A random unit vector of n <= 384 values. */
static void unit_vector(float *u, int n)
{
	double ss = 0;
	for (int i = 0; i < n; i++) {
		u[i] = rnd_float();
		ss += (double)u[i] * u[i];
	}
	for (int i = 0; i < n; i++)
		u[i] = (float)(u[i] / sqrt(ss));
}

static void test_dot_f32(void)
{
	printf("     kernel: %s\n", em_dist_kernel());
	CHECK_EQ(float_kernel_misses(0), 0);
	/* unit vectors: a vector with itself is 1 */
	float u[384];
	unit_vector(u, 384);
	CHECK(fabs(em_dot(u, u, 384) - 1.0f) < 1e-5f);
}

static void test_dot_i8(void)
{
	enum { MAX = 300 };
	static int8_t a[MAX + 8], b[MAX + 8];
	int bad = 0;
	for (uint32_t n = 0; n <= MAX; n++) {
		for (uint32_t off = 0; off < 4; off++) {
			for (uint32_t i = 0; i < n; i++) {
				a[off + i] = (int8_t)(rnd() % 256 - 128);
				b[off + i] = (int8_t)(rnd() % 256 - 128);
			}
			bad += em_dot_i8(a + off, b + off, n) != em_dot_i8_ref(a + off, b + off, n);
		}
	}
	CHECK_EQ(bad, 0);
	/* the extremes: -128 * -128 over a long vector does not overflow */
	static int8_t m[4096];
	memset(m, 0x80, sizeof m);
	CHECK_EQ(em_dot_i8(m, m, 4096), 4096 * 16384);
	CHECK_EQ(em_dot_i8_ref(m, m, 4096), 4096 * 16384);
}

/* the asymmetric kernel (float query, int8 row) against its reference and
 * the exact sum */
static void test_dot_f32_i8(void)
{
	CHECK_EQ(float_kernel_misses(1), 0);
	/* a quantised unit vector scored against itself, scale applied: about 1 */
	float u[384];
	int8_t q[384];
	unit_vector(u, 384);
	float sc = em_quantize_i8(u, 384, q);
	CHECK(fabsf(em_dot_f32_i8(u, q, 384) * sc - 1.0f) < 1e-3f);
}

/* em_axpy against the plain loop, bit for bit, at every length to 300 and
 * 4 misalignments (the word average and the model depend on the bits) */
static void test_axpy(void)
{
	float x[310], y[310], ref[310];
	int bad = 0;
	for (uint32_t n = 0; n <= 300; n++)
		for (uint32_t off = 0; off < 4; off++) {
			float a = rnd_float();
			for (uint32_t i = 0; i < n; i++) {
				x[off + i] = rnd_float();
				y[off + i] = ref[i] = rnd_float();
			}
			for (uint32_t i = 0; i < n; i++)
				ref[i] += a * x[off + i];
			em_axpy(y + off, x + off, a, n);
			bad += n && memcmp(y + off, ref, n * sizeof *ref) != 0;
		}
	CHECK_EQ(bad, 0);
}

static void test_quantize(void)
{
	float v[384];
	int8_t q[384];
	int bad = 0;
	for (int r = 0; r < 200; r++) {
		uint32_t n = 1 + rnd() % 384;
		for (uint32_t i = 0; i < n; i++)
			v[i] = rnd_float() * (r % 7 == 0 ? 1e-6f : 1.0f);
		float scale = em_quantize_i8(v, n, q);
		float m = 0;
		for (uint32_t i = 0; i < n; i++)
			m = fmaxf(m, fabsf(v[i]));
		bad += !(scale > 0.0f) || fabsf(scale * 127.0f - m) > m * 1e-6f;
		for (uint32_t i = 0; i < n; i++)
			bad += q[i] < -127 || fabsf((float)q[i] * scale - v[i]) > 0.5001f * scale;
	}
	CHECK_EQ(bad, 0);
	/* zero and non-finite vectors: scale 0, all zero */
	float z[3] = { 0, 0, 0 }, nf[3] = { 1, INFINITY, 2 };
	int8_t qz[3] = { 1, 1, 1 };
	CHECK(em_quantize_i8(z, 3, qz) == 0.0f);
	CHECK(qz[0] == 0 && qz[1] == 0 && qz[2] == 0);
	memset(qz, 1, 3);
	CHECK(em_quantize_i8(nf, 3, qz) == 0.0f);
	CHECK(qz[0] == 0 && qz[2] == 0);
}

/* About the row's middle: the codes the range gives (the smallest at
 * -127, the largest at 127), then the scale and offset fitted to them by
 * least squares: no worse than the range's own, near them, and leaving an
 * error orthogonal to the row given back; rows of one sign (where
 * em_quantize_i8 uses half the bytes' range) included */
static void test_quantize_affine(void)
{
	float v[384], off;
	int8_t q[384];
	int bad = 0;
	for (int r = 0; r < 200; r++) {
		uint32_t n = 2 + rnd() % 383;
		for (uint32_t i = 0; i < n; i++)
			v[i] = rnd_float() * (r % 7 == 0 ? 1e-6f : 1.0f) + (r % 3 == 0 ? 5.0f : 0.0f);
		float scale = em_quantize_i8_affine(v, n, q, &off);
		float lo = v[0], hi = v[0];
		int8_t qlo = 127, qhi = -127;
		for (uint32_t i = 0; i < n; i++) {
			lo = fminf(lo, v[i]);
			hi = fmaxf(hi, v[i]);
			qlo = q[i] < qlo ? q[i] : qlo;
			qhi = q[i] > qhi ? q[i] : qhi;
		}
		/* the codes: the range's, its middle at 0 and half its spread
		 * over 127 a step (the same float arithmetic as the function) */
		float mid = 0.5f * lo + 0.5f * hi, step = (0.5f * hi - 0.5f * lo) / 127.0f;
		for (uint32_t i = 0; i < n; i++) {
			float c = nearbyintf((v[i] - mid) / step);
			bad += q[i] != (int8_t)(c > 127.0f ? 127 : c < -127.0f ? -127 : c);
		}
		/* the ends reach -127 and 127, unless the spread is a few ulps of
		 * the values (5 +- 1e-6: the middle itself rounds by steps) */
		if (hi - lo > 1e-3f * fabsf(hi))
			bad += qlo != -127 || qhi != 127;
		/* the scale and offset: the least-squares fit to these codes, so
		 * no worse than the range's own, and near them */
		double fit = 0, range = 0;
		for (uint32_t i = 0; i < n; i++) {
			double e = (double)off + (double)q[i] * scale - v[i];
			double e0 = (double)mid + (double)q[i] * step - v[i];
			fit += e * e;
			range += e0 * e0;
		}
		bad += !(scale > 0.0f);
		bad += fit > range * (1 + 1e-4) + 1e-12 * n * (double)hi * hi;
		if (hi - lo > 1e-3f * fabsf(hi))
			bad += fabsf(scale - step) > 0.01f * step ||
			       fabsf(off - mid) > 0.25f * step + 1e-6f * fabsf(hi);
		if (r == 1)
			printf("     %u values: squared error %.3g with the fit, %.3g with the range\n", n,
			       fit, range);
	}
	CHECK_EQ(bad, 0);
	/* the error the fit leaves is orthogonal to the row it gives back (the
	 * normal equations), where the range's is not: the cosine of the two,
	 * on a row of 384 values */
	{
		float u[384], off2;
		int8_t q8[384];
		for (int i = 0; i < 384; i++)
			u[i] = rnd_float();
		float sc = em_quantize_i8_affine(u, 384, q8, &off2);
		float lo = u[0], hi = u[0];
		for (int i = 1; i < 384; i++) {
			lo = fminf(lo, u[i]);
			hi = fmaxf(hi, u[i]);
		}
		float mid = 0.5f * lo + 0.5f * hi, step = (0.5f * hi - 0.5f * lo) / 127.0f;
		double cs[2];
		for (int k = 0; k < 2; k++) {
			double ev = 0, ee = 0, vv = 0;
			for (int i = 0; i < 384; i++) {
				double back = k ? (double)mid + (double)q8[i] * step
				                : (double)off2 + (double)q8[i] * sc;
				double e = back - u[i];
				ev += e * back;
				ee += e * e;
				vv += back * back;
			}
			cs[k] = ev / sqrt(ee * vv);
		}
		printf("     cosine of the error and the row given back: %.2g with the fit, %.2g "
		       "with the range\n", cs[0], cs[1]);
		CHECK(fabs(cs[0]) < 1e-4 && fabs(cs[0]) < fabs(cs[1]));
	}
	/* a constant row: the offset holds it; zero and non-finite rows: 0 */
	float c[3] = { 0.25f, 0.25f, 0.25f }, z[3] = { 0, 0, 0 }, nf[3] = { 1, NAN, 2 };
	int8_t qz[3] = { 1, 1, 1 };
	CHECK(em_quantize_i8_affine(c, 3, qz, &off) == 0.0f && off == 0.25f);
	CHECK(qz[0] == 0 && qz[1] == 0 && qz[2] == 0);
	CHECK(em_quantize_i8_affine(z, 3, qz, &off) == 0.0f && off == 0.0f);
	memset(qz, 1, 3);
	CHECK(em_quantize_i8_affine(nf, 3, qz, &off) == 0.0f && off == 0.0f);
	CHECK(qz[0] == 0 && qz[1] == 0 && qz[2] == 0);
}

int main(void)
{
	/* every kernel this CPU runs: SSE2, then AVX2 when it has it, then the
	 * CPU's own choice */
	for (int k = 0; k <= 2; k++) {
		if (em_dist_select(k == 2 ? -1 : k) != 0) {
			printf("     no %s on this CPU: skipped\n", k ? "AVX2 + FMA" : "SSE2");
			continue;
		}
		RUN(test_dot_f32);
		RUN(test_dot_i8);
		RUN(test_dot_f32_i8);
	}
	RUN(test_axpy);
	RUN(test_quantize);
	RUN(test_quantize_affine);
	return TEST_DONE();
}
