/*
 * replay.c — runs a libFuzzer target over saved inputs without libFuzzer, so
 * `make test` replays every seed and every crash ever found (fuzz/corpus/<t>/).
 * Usage: replay_<target> DIR_OR_FILE...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (!buf)
		return 1;
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: no such file or folder\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]);
			n++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", argv[i], e->d_name);
			bad += run_file(p);
			n++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs\n", n);
	if (n == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	return bad ? 1 : 0;
}
