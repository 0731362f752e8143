/*
 * fuzz_gitignore.c — the input up to the first NUL byte is a .gitignore,
 * the rest is paths to match, one a line (a trailing '/' marks a folder).
 * Besides not crashing, a set parsed for folder "a" must judge "a/<path>"
 * exactly as a set parsed for the root judges "<path>".
 */
#include <stdint.h>
#include <string.h>

#include "ingest/ingest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	const char *nul = memchr(p, '\0', size);
	size_t pat_len = nul ? (size_t)(nul - p) : size;
	gi_set *root = NULL, *sub = NULL;
	if (gi_parse(&root, p, pat_len, "") != 0)
		return 0;
	if (gi_parse(&sub, p, pat_len, "a") != 0) {
		gi_free(root);
		return 0;
	}
	char path[4096], prefixed[4100];
	size_t i = nul ? pat_len + 1 : size;
	while (i < size) {
		const char *nl = memchr(p + i, '\n', size - i);
		size_t end = nl ? (size_t)(nl - p) : size, n = end - i;
		if (n >= sizeof path)
			n = sizeof path - 1;
		memcpy(path, p + i, n);
		path[n] = '\0';
		i = end + 1;
		int is_dir = 0;
		if (n > 0 && path[n - 1] == '/') {
			path[--n] = '\0';
			is_dir = 1;
		}
		if (n == 0 || memchr(path, '\0', n))
			continue;
		int r = gi_match(root, path, is_dir);
		if (r < -1 || r > 1)
			__builtin_trap();
		memcpy(prefixed, "a/", 2);
		memcpy(prefixed + 2, path, n + 1);
		if (gi_match(sub, prefixed, is_dir) != r)
			__builtin_trap();
	}
	gi_free(root);
	gi_free(sub);
	return 0;
}
