/*
 * fuzz_tokenizer.c — arbitrary bytes as a tokenizer (tokenizer.json or
 * vocab.txt) and a text: the bytes up to the first NUL are the tokenizer,
 * the rest the text (none: a few fixed texts). What loads must encode any
 * bytes (UTF-8 or not) into ids inside its vocabulary, the same ids again,
 * and a cut output must be the first ids of the whole (ASan sees a stray
 * read or write).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/embed.h"
#include "fathom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void encode(const em_wordpiece *wp, const char *text, size_t len)
{
	size_t n = 0, n2 = 0, n3 = 0;
	if (em_wordpiece_encode(wp, text, len, NULL, 0, &n) != 0)
		__builtin_trap();
	if (n > len + 1)
		__builtin_trap();   /* a token takes a byte at least */
	uint32_t *ids = malloc((n ? n : 1) * sizeof *ids);
	uint32_t cut[3];
	if (!ids)
		return;
	if (em_wordpiece_encode(wp, text, len, ids, n, &n2) != 0 || n2 != n)
		__builtin_trap();
	if (em_wordpiece_encode(wp, text, len, cut, 3, &n3) != 0 || n3 != n)
		__builtin_trap();
	for (size_t i = 0; i < n; i++) {
		if (ids[i] >= em_wordpiece_size(wp))
			__builtin_trap();
		if (i < 3 && cut[i] != ids[i])
			__builtin_trap();
	}
	free(ids);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t tl = nul ? (size_t)(nul - data) : size;
	/* copies of exactly their size, so a read past the end is seen */
	char *tok = malloc(tl ? tl : 1);
	if (!tok)
		return 0;
	memcpy(tok, data, tl);
	em_wordpiece *wp = NULL;
	if (em_wordpiece_parse(&wp, tok, tl, "fuzz") != 0) {
		if (wp)
			__builtin_trap();
		free(tok);
		return 0;
	}
	if (em_wordpiece_unk(wp) >= em_wordpiece_size(wp))
		__builtin_trap();
	if (nul) {
		size_t xl = size - tl - 1;
		char *text = malloc(xl ? xl : 1);
		if (text) {
			memcpy(text, nul + 1, xl);
			encode(wp, text, xl);
			free(text);
		}
	} else {
		static const char *const texts[] = {
			"Hello, world! unaffable running", "Äpfel café 中文 ｆｕｌｌ",
			"\xff\xfe\x80 stray \xc3", "a\tb\nc\r\x0b\x0c\xc2\x85 ##s [UNK] [CLS]",
		};
		for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
			encode(wp, texts[i], strlen(texts[i]));
	}
	em_wordpiece_free(wp);
	free(tok);
	return 0;
}
