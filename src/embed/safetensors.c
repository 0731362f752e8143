/*
 * safetensors.c — the safetensors container (Hugging Face), as Model2Vec
 * ships its embedding matrix:
 *
 *   u64 (little-endian) N, the header's length
 *   N bytes of JSON: { "NAME": { "dtype": "F32", "shape": [R, C],
 *                               "data_offsets": [BEGIN, END] }, ...,
 *                      "__metadata__": { string: string } }
 *   the data: each tensor's bytes at [BEGIN, END) from the header's end
 *
 * Checked here: the header's length (at most EM_ST_MAX_HEADER and inside
 * the file), JSON that parses to an object, each tensor's dtype known, its
 * shape at most EM_ST_MAX_DIMS non-negative dimensions whose product times
 * the dtype's size is END - BEGIN, and [BEGIN, END) inside the data. A
 * tensor is read as float32 (F16 and BF16 widened exactly, F64 rounded).
 */
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

static int dtype_of(const char *s, int *dt, uint32_t *size)
{
	static const struct { const char *name; int dt; uint32_t size; } t[] = {
		{ "F32", EM_ST_F32, 4 }, { "F16", EM_ST_F16, 2 }, { "BF16", EM_ST_BF16, 2 },
		{ "F64", EM_ST_F64, 8 }, { "I8", EM_ST_I8, 1 }, { "U8", EM_ST_U8, 1 },
		{ "I16", EM_ST_I16, 2 }, { "I32", EM_ST_I32, 4 }, { "I64", EM_ST_I64, 8 },
		{ "BOOL", EM_ST_BOOL, 1 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (strcmp(s, t[i].name) == 0) {
			*dt = t[i].dt;
			*size = t[i].size;
			return 0;
		}
	return -1;
}

static int st_err(const char *name, const char *tensor, const char *what)
{
	if (tensor)
		return fa_err(FATHOM_ESYNTAX, "%s: tensor \"%.100s\": %s", name, tensor, what);
	return fa_err(FATHOM_ESYNTAX, "%s: %s", name, what);
}

/* A JSON integer in [0, max]. */
static int get_count(json_t *j, uint64_t max, uint64_t *out)
{
	if (!json_is_integer(j))
		return -1;
	json_int_t x = json_integer_value(j);
	if (x < 0 || (uint64_t)x > max)
		return -1;
	*out = (uint64_t)x;
	return 0;
}

static int read_tensor(const char *name, const char *key, json_t *val, uint64_t data_len,
                       em_tensor *t)
{
	if (!json_is_object(val))
		return st_err(name, key, "not an object");
	const char *ds = json_string_value(json_object_get(val, "dtype"));
	if (!ds)
		return st_err(name, key, "no dtype");
	uint32_t esize;
	if (dtype_of(ds, &t->dtype, &esize))
		return st_err(name, key, "an unknown dtype");
	json_t *shape = json_object_get(val, "shape"), *offs = json_object_get(val, "data_offsets");
	if (!json_is_array(shape) || json_array_size(shape) > EM_ST_MAX_DIMS)
		return st_err(name, key, "a shape that is not a list of at most 8 sizes");
	t->ndim = (uint32_t)json_array_size(shape);
	uint64_t count = 1;
	for (uint32_t d = 0; d < t->ndim; d++) {
		if (get_count(json_array_get(shape, d), UINT32_MAX, &t->shape[d]))
			return st_err(name, key, "a size that is not a count");
		if (t->shape[d] && count > UINT64_MAX / 16 / t->shape[d])
			return st_err(name, key, "more values than a file can hold");
		count *= t->shape[d];
	}
	uint64_t b, e;
	if (!json_is_array(offs) || json_array_size(offs) != 2 ||
	    get_count(json_array_get(offs, 0), UINT64_MAX / 2, &b) ||
	    get_count(json_array_get(offs, 1), UINT64_MAX / 2, &e) || b > e)
		return st_err(name, key, "data_offsets that are not [begin, end]");
	if (e > data_len)
		return st_err(name, key, "data past the end of the file");
	if (e - b != count * esize)
		return st_err(name, key, "data_offsets that disagree with the shape and dtype");
	size_t kl = strlen(key);
	if (kl >= sizeof t->name)
		return st_err(name, NULL, "a tensor name longer than 255 bytes");
	memcpy(t->name, key, kl + 1);
	t->off = b;
	t->len = e - b;
	t->count = count;
	return 0;
}

int em_st_parse(em_st **out, const unsigned char *data, size_t len, const char *name)
{
	*out = NULL;
	if (len < 8)
		return st_err(name, NULL, "shorter than the 8 bytes of the header's length");
	uint64_t hl = fa_load64(data);
	if (hl > EM_ST_MAX_HEADER)
		return fa_err(FATHOM_ETOOBIG, "%s: a header of %llu bytes (at most 100 MB)", name,
		              (unsigned long long)hl);
	if (hl > len - 8)
		return st_err(name, NULL, "a header longer than the file");
	json_error_t je;
	json_t *root = json_loadb((const char *)data + 8, (size_t)hl, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return fa_err(FATHOM_ESYNTAX, "%s: header: %s at byte %d", name, je.text, je.position);
	int rc = 0;
	em_st *st = NULL;
	if (!json_is_object(root)) {
		rc = st_err(name, NULL, "a header that is not a JSON object");
		goto done;
	}
	size_t n = json_object_size(root);
	if (n > EM_ST_MAX_TENSORS + 1) {
		rc = fa_err(FATHOM_ETOOBIG, "%s: more than %u tensors", name, EM_ST_MAX_TENSORS);
		goto done;
	}
	st = fa_malloc(sizeof *st + (n ? n : 1) * sizeof st->t[0]);
	if (!st) {
		rc = fa_err(FATHOM_ENOMEM, "%s: tensors", name);
		goto done;
	}
	memset(st, 0, sizeof *st);
	st->data = data + 8 + hl;
	st->data_len = len - 8 - (size_t)hl;
	const char *key;
	json_t *val;
	json_object_foreach(root, key, val) {
		if (strcmp(key, "__metadata__") == 0) {
			if (!json_is_object(val)) {
				rc = st_err(name, NULL, "__metadata__ that is not an object");
				goto done;
			}
			continue;
		}
		if ((rc = read_tensor(name, key, val, st->data_len, &st->t[st->n])))
			goto done;
		st->n++;
	}
done:
	json_decref(root);
	if (rc) {
		fa_free(st);
		return rc;
	}
	*out = st;
	return 0;
}

void em_st_free(em_st *st)
{
	fa_free(st);
}

const em_tensor *em_st_find(const em_st *st, const char *tensor)
{
	for (uint32_t i = 0; i < st->n; i++)
		if (strcmp(st->t[i].name, tensor) == 0)
			return &st->t[i];
	return NULL;
}

/* IEEE half to float, exactly (subnormals, infinities and NaN too). */
static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, u;
	if (exp == 0x1f) {
		u = sign | 0x7f800000u | (man << 13);
	} else if (exp) {
		u = sign | ((exp + 112) << 23) | (man << 13);
	} else if (man) {
		/* subnormal: man * 2^-24 */
		float f = (float)man * 0x1p-24f;
		memcpy(&u, &f, 4);
		u |= sign;
	} else {
		u = sign;
	}
	float f;
	memcpy(&f, &u, 4);
	return f;
}

int em_st_floats(const em_st *st, const em_tensor *t, float *out)
{
	const unsigned char *p = st->data + t->off;
	if (t->dtype != EM_ST_F32 && t->dtype != EM_ST_F16 && t->dtype != EM_ST_BF16 &&
	    t->dtype != EM_ST_F64)
		return fa_err(FATHOM_EINVAL, "tensor \"%s\" does not hold floating point values",
		              t->name);
	for (uint64_t i = 0; i < t->count; i++) {
		float f;
		switch (t->dtype) {
		case EM_ST_F32: {
			uint32_t u = fa_load32(p + 4 * i);
			memcpy(&f, &u, 4);
			break;
		}
		case EM_ST_F16:
			f = half_to_float(fa_load16(p + 2 * i));
			break;
		case EM_ST_BF16: {
			uint32_t u = (uint32_t)fa_load16(p + 2 * i) << 16;
			memcpy(&f, &u, 4);
			break;
		}
		default: {   /* F64 */
			uint64_t u = fa_load64(p + 8 * i);
			double d;
			memcpy(&d, &u, 8);
			f = (float)d;
			break;
		}
		}
		if (!isfinite(f))
			return fa_err(FATHOM_ESYNTAX, "tensor \"%s\": value %llu is not a finite number",
			              t->name, (unsigned long long)i);
		out[i] = f;
	}
	return 0;
}
