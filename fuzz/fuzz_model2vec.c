/*
 * fuzz_model2vec.c — arbitrary bytes as a Model2Vec model.safetensors
 * beside a fixed WordPiece tokenizer of 8 tokens: what loads (the matrix
 * picked, weights and a mapping checked) must embed texts into unit or
 * zero rows of its dimension, and never read outside its tensors.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char TOK[] =
	"{\"normalizer\":{\"type\":\"BertNormalizer\"},\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
	"\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"vocab\":{\"[PAD]\":0,\"[UNK]\":1,"
	"\"a\":2,\"b\":3,\"##b\":4,\"cd\":5,\"!\":6,\"e\":7}}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	em_embedder *e = NULL;
	if (em_m2v_new(&e, TOK, sizeof TOK - 1, "tokenizer.json", buf, size, "model.safetensors",
	               "fuzz") != 0) {
		if (e)
			__builtin_trap();
		free(buf);
		return 0;
	}
	free(buf);   /* nothing of the file is kept */
	const char *texts[4] = { "a b cd!", "abb e", "zzz", "" };
	size_t lens[4] = { 7, 5, 3, 0 };
	float *out = malloc(4 * (size_t)e->dim * sizeof *out);
	if (out && em_embed(e, texts, lens, 4, out) == 0) {
		for (size_t i = 0; i < 4; i++) {
			double ss = 0;
			for (uint32_t k = 0; k < e->dim; k++)
				ss += (double)out[i * e->dim + k] * out[i * e->dim + k];
			if (!(ss == 0.0 || fabs(ss - 1.0) < 1e-3))
				__builtin_trap();
		}
		/* "zzz" is unknown: zero */
		for (uint32_t k = 0; k < e->dim; k++)
			if (out[2 * e->dim + k] != 0.0f)
				__builtin_trap();
	}
	free(out);
	em_embedder_free(e);
	return 0;
}
