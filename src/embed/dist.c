/*
 * dist.c — the distance kernels of vector search: dot products of float32
 * and of int8 vectors (cosine on unit vectors is their dot product), the
 * asymmetric one of a float query against an int8 row (em_dot_f32_i8, the
 * row's scale applied by the caller: no quantisation error on the query's
 * side: measured, up to 0.004 of recall@10 better than quantising the query
 * too), and the int8 quantisation of a vector:
 * about zero with one scale (em_quantize_i8), or about the row's middle
 * with a scale and an offset (em_quantize_i8_affine, what segments store).
 *
 * Each kernel has a plain C reference (em_dot_ref, em_dot_i8_ref,
 * em_dot_f32_i8_ref), which the tests hold the fast ones to. On x86-64 the
 * fast ones use AVX2 and FMA when the CPU has them (checked once, at the
 * first call) and SSE2 otherwise; elsewhere the references are used as
 * they are. The float kernels add in a different order from the reference,
 * so their results differ in the last bits (the tests bound by how much);
 * the int8 ones are exact.
 */
#include <math.h>
#include <string.h>

#include "embed/embed.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define EM_X86 1
#include <immintrin.h>
#endif

float em_dot_ref(const float *a, const float *b, uint32_t n)
{
	float s = 0.0f;
	for (uint32_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

int32_t em_dot_i8_ref(const int8_t *a, const int8_t *b, uint32_t n)
{
	int32_t s = 0;
	for (uint32_t i = 0; i < n; i++)
		s += (int32_t)a[i] * (int32_t)b[i];
	return s;
}

float em_dot_f32_i8_ref(const float *q, const int8_t *r, uint32_t n)
{
	float s = 0.0f;
	for (uint32_t i = 0; i < n; i++)
		s += q[i] * (float)r[i];
	return s;
}

#ifdef EM_X86
static float dot_sse2(const float *a, const float *b, uint32_t n)
{
	__m128 s0 = _mm_setzero_ps(), s1 = _mm_setzero_ps();
	uint32_t i = 0;
	for (; i + 8 <= n; i += 8) {
		s0 = _mm_add_ps(s0, _mm_mul_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
		s1 = _mm_add_ps(s1, _mm_mul_ps(_mm_loadu_ps(a + i + 4), _mm_loadu_ps(b + i + 4)));
	}
	s0 = _mm_add_ps(s0, s1);
	float lane[4];
	_mm_storeu_ps(lane, s0);
	float s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
	for (; i < n; i++)
		s += a[i] * b[i];
	return s;
}

__attribute__((target("avx2,fma")))
static float dot_avx2(const float *a, const float *b, uint32_t n)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
	uint32_t i = 0;
	for (; i + 16 <= n; i += 16) {
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
		s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
	}
	for (; i + 8 <= n; i += 8)
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
	s0 = _mm256_add_ps(s0, s1);
	__m128 h = _mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1));
	float lane[4];
	_mm_storeu_ps(lane, h);
	float s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
	for (; i < n; i++)
		s += a[i] * b[i];
	return s;
}

static int32_t dot_i8_sse2(const int8_t *a, const int8_t *b, uint32_t n)
{
	__m128i acc = _mm_setzero_si128();
	uint32_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		/* sign-extend the bytes to 16 bits: unpack with the sign mask */
		__m128i xs = _mm_cmpgt_epi8(_mm_setzero_si128(), x);
		__m128i ys = _mm_cmpgt_epi8(_mm_setzero_si128(), y);
		acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_unpacklo_epi8(x, xs), _mm_unpacklo_epi8(y, ys)));
		acc = _mm_add_epi32(acc, _mm_madd_epi16(_mm_unpackhi_epi8(x, xs), _mm_unpackhi_epi8(y, ys)));
	}
	int32_t lane[4];
	_mm_storeu_si128((__m128i *)(void *)lane, acc);
	int32_t s = lane[0] + lane[1] + lane[2] + lane[3];
	for (; i < n; i++)
		s += (int32_t)a[i] * (int32_t)b[i];
	return s;
}

__attribute__((target("avx2")))
static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b, uint32_t n)
{
	__m256i acc = _mm256_setzero_si256();
	uint32_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(a + i)));
		__m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(b + i)));
		acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
	}
	__m128i h = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
	int32_t lane[4];
	_mm_storeu_si128((__m128i *)(void *)lane, h);
	int32_t s = lane[0] + lane[1] + lane[2] + lane[3];
	for (; i < n; i++)
		s += (int32_t)a[i] * (int32_t)b[i];
	return s;
}

/* The float query against an int8 row: eight bytes widened to 32-bit
 * integers, converted to floats (exactly: |r| <= 128), multiplied and
 * added in two chains of eight lanes. SSE2 has no byte widening worth the
 * shuffles, so without AVX2 the reference is used. */
__attribute__((target("avx2,fma")))
static float dot_f32_i8_avx2(const float *q, const int8_t *r, uint32_t n)
{
	__m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
	uint32_t i = 0;
	for (; i + 16 <= n; i += 16) {
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(r + i));
		__m256 x0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b));
		__m256 x1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(b, 8)));
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), x0, s0);
		s1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), x1, s1);
	}
	for (; i + 8 <= n; i += 8) {
		__m128i b = _mm_loadl_epi64((const __m128i *)(const void *)(r + i));
		s0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b)),
		                     s0);
	}
	s0 = _mm256_add_ps(s0, s1);
	__m128 h = _mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1));
	float lane[4];
	_mm_storeu_ps(lane, h);
	float s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
	for (; i < n; i++)
		s += q[i] * (float)r[i];
	return s;
}

/* 1: AVX2 and FMA; 0: SSE2 only; -1 not checked yet. Racing first calls
 * store the same value. */
static int have_avx2 = -1;

static int use_avx2(void)
{
	int h = __atomic_load_n(&have_avx2, __ATOMIC_RELAXED);
	if (h < 0) {
		__builtin_cpu_init();
		h = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
		__atomic_store_n(&have_avx2, h, __ATOMIC_RELAXED);
	}
	return h;
}
#endif

float em_dot(const float *a, const float *b, uint32_t n)
{
#ifdef EM_X86
	return use_avx2() ? dot_avx2(a, b, n) : dot_sse2(a, b, n);
#else
	return em_dot_ref(a, b, n);
#endif
}

int32_t em_dot_i8(const int8_t *a, const int8_t *b, uint32_t n)
{
#ifdef EM_X86
	return use_avx2() ? dot_i8_avx2(a, b, n) : dot_i8_sse2(a, b, n);
#else
	return em_dot_i8_ref(a, b, n);
#endif
}

float em_dot_f32_i8(const float *q, const int8_t *r, uint32_t n)
{
#ifdef EM_X86
	return use_avx2() ? dot_f32_i8_avx2(q, r, n) : em_dot_f32_i8_ref(q, r, n);
#else
	return em_dot_f32_i8_ref(q, r, n);
#endif
}

int em_dist_select(int avx2)
{
#ifdef EM_X86
	if (avx2 < 0) {
		__atomic_store_n(&have_avx2, -1, __ATOMIC_RELAXED);
		return 0;
	}
	__builtin_cpu_init();
	if (avx2 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
		return -1;
	__atomic_store_n(&have_avx2, avx2 ? 1 : 0, __ATOMIC_RELAXED);
	return 0;
#else
	return avx2 > 0 ? -1 : 0;
#endif
}

const char *em_dist_kernel(void)
{
#ifdef EM_X86
	return use_avx2() ? "avx2" : "sse2";
#else
	return "scalar";
#endif
}

float em_quantize_i8_affine(const float *v, uint32_t n, int8_t *out, float *offset)
{
	float lo = n ? v[0] : 0.0f, hi = lo;
	for (uint32_t i = 1; i < n; i++) {
		lo = fminf(lo, v[i]);
		hi = fmaxf(hi, v[i]);
	}
	memset(out, 0, n);
	*offset = 0.0f;
	/* halves first: lo + hi may overflow where their halves do not */
	float mid = 0.5f * lo + 0.5f * hi, scale = 0.5f * hi - 0.5f * lo;
	if (!isfinite(lo) || !isfinite(hi) || !isfinite(mid) || !isfinite(scale))
		return 0.0f;
	for (uint32_t i = 0; i < n; i++)
		if (isnan(v[i]))
			return 0.0f;   /* fminf and fmaxf pass a NaN by unseen */
	*offset = mid;
	scale /= 127.0f;
	if (!(scale > 0.0f))
		return 0.0f;   /* every value is mid: the offset alone holds the row */
	/* divided, not multiplied by 1 / scale, which a subnormal scale makes
	 * infinite */
	for (uint32_t i = 0; i < n; i++) {
		float q = nearbyintf((v[i] - mid) / scale);
		out[i] = (int8_t)(q > 127.0f ? 127 : q < -127.0f ? -127 : q);
	}
	/* Then the scale and offset that give the row back best from these
	 * codes (least squares, in double). The error left is orthogonal to
	 * the codes and to a constant row, so to the row as given back: a
	 * query near the row sees less of it. On 50k-100k mixtures, brute
	 * force over the int8 rows finds 0.0002-0.0018 more of the true 10
	 * (four seeds). */
	double c1 = 0, c2 = 0, v1 = 0, vc = 0;
	for (uint32_t i = 0; i < n; i++) {
		double c = out[i];
		c1 += c;
		c2 += c * c;
		v1 += v[i];
		vc += v[i] * c;
	}
	double det = (double)n * c2 - c1 * c1;
	if (det > 0) {
		float s = (float)(((double)n * vc - c1 * v1) / det);
		float o = (float)((v1 * c2 - c1 * vc) / det);
		if (s > 0.0f && isfinite(s) && isfinite(o)) {
			scale = s;
			*offset = o;
		}
	}
	return scale;
}

void em_dequantize_i8(const int8_t *q, uint32_t n, float scale, float offset, float *out)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = (float)q[i] * scale + offset;
}

typedef float v4f __attribute__((vector_size(16)));

void em_axpy(float *y, const float *x, float a, uint32_t n)
{
	uint32_t n4 = n & ~3u;
	v4f av = { a, a, a, a };
	for (uint32_t i = 0; i < n4; i += 4) {
		v4f xv, yv;
		memcpy(&xv, x + i, sizeof xv);
		memcpy(&yv, y + i, sizeof yv);
		yv += av * xv;
		memcpy(y + i, &yv, sizeof yv);
	}
	for (uint32_t i = n4; i < n; i++)
		y[i] += a * x[i];
}

float em_sum(const float *v, uint32_t n)
{
	float s = 0.0f;
	for (uint32_t i = 0; i < n; i++)
		s += v[i];
	return s;
}

float em_quantize_i8(const float *v, uint32_t n, int8_t *out)
{
	float m = 0.0f;
	for (uint32_t i = 0; i < n; i++)
		m = fmaxf(m, fabsf(v[i]));
	if (!(m > 0.0f) || !isfinite(m)) {
		memset(out, 0, n);
		return 0.0f;
	}
	float scale = m / 127.0f, inv = 127.0f / m;
	for (uint32_t i = 0; i < n; i++) {
		float q = nearbyintf(v[i] * inv);
		out[i] = (int8_t)(q > 127.0f ? 127 : q < -127.0f ? -127 : q);
	}
	return scale;
}
