/*
 * test.h — a minimal unit-test harness. Each tests/test_*.c defines test
 * functions and lists them in main() with RUN(fn). A failed CHECK prints
 * file:line and the expression and marks the test failed; the test goes on.
 * The binary prints one line per test and exits non-zero on any failure.
 */
#ifndef FATHOM_TEST_H
#define FATHOM_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failed_checks;
static int test_passed, test_failed;

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
	test_failed_checks++; } } while (0)

#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n", \
	__FILE__, __LINE__, #a, #b, a_, b_); test_failed_checks++; } } while (0)

#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_) != 0) { fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
	__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); test_failed_checks++; } } while (0)

/* Check an int return code is FATHOM_OK, printing fathom_errmsg() if not. */
#define CHECK_OK(expr) do { int rc_ = (expr); if (rc_ != 0) { \
	fprintf(stderr, "  %s:%d: %s returned %d (%s)\n", __FILE__, __LINE__, #expr, rc_, fathom_errmsg()); \
	test_failed_checks++; } } while (0)

#define RUN(fn) do { int before_ = test_failed_checks; fn(); \
	if (test_failed_checks == before_) { test_passed++; printf("ok   %s\n", #fn); } \
	else { test_failed++; printf("FAIL %s\n", #fn); } fflush(stdout); } while (0)

/* Print the summary line and return the exit status for main(). */
#define TEST_DONE() (printf("%d passed, %d failed\n", test_passed, test_failed), test_failed ? 1 : 0)

/* A scratch folder under $TMPDIR, removed by the caller with test_rmrf. */
static inline char *test_tmpdir(const char *tag)
{
	const char *base = getenv("TMPDIR");
	static char buf[512];
	snprintf(buf, sizeof buf, "%s/fathom-test-%s-XXXXXX", base && *base ? base : "/tmp", tag);
	char *d = mkdtemp(buf);
	if (!d) { perror("mkdtemp"); exit(2); }
	return strdup(d);
}

static inline void test_rmrf(const char *dir)
{
	char cmd[1024];
	if (!dir || !*dir || strcmp(dir, "/") == 0)
		return;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "  could not remove %s\n", dir);
}

#ifdef FATHOM_H
/* Open the index at dir with flags (FATHOM_OPEN_*), or stop the test. */
static inline fathom_index *test_open(const char *dir, unsigned flags)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	fathom_index *fx = NULL;
	oo.flags = flags;
	if (fathom_open(&fx, dir, &oo) != 0) {
		fprintf(stderr, "  cannot open %s: %s\n", dir, fathom_errmsg());
		exit(2);
	}
	return fx;
}
#endif

/* Write a file (creating parent folders not included). */
static inline void test_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "wb");
	if (!f) { perror(path); exit(2); }
	fwrite(text, 1, strlen(text), f);
	fclose(f);
}

/* A whole file into malloc'd memory (*size bytes); exits on failure. */
static inline unsigned char *test_read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(2); }
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
	if (n < 0 || !b || fread(b, 1, (size_t)n, f) != (size_t)n) { perror(path); exit(2); }
	fclose(f);
	*size = (size_t)n;
	return b;
}

/* Overwrite a file with size bytes of buf (the same length: in place). */
static inline void test_write_file(const char *path, const unsigned char *buf, size_t size)
{
	FILE *f = fopen(path, "r+b");
	if (!f || fwrite(buf, 1, size, f) != size || fclose(f) != 0) { perror(path); exit(2); }
}

/* A segment file's section (docs/FORMAT.md: 32-byte directory records
 * ending before the 160-byte footer, whose byte 136 holds their count):
 * 1 and its offset and length when buf (size bytes) has tag, else 0. */
static inline int test_find_section(const unsigned char *buf, size_t size, const char *tag,
                                    uint64_t *off, uint64_t *len)
{
	uint32_t ndir;
	if (size < 160)
		return 0;
	memcpy(&ndir, buf + size - 160 + 136, 4);
	if ((size_t)ndir * 32 > size - 160)
		return 0;
	const unsigned char *d = buf + size - 160 - (size_t)ndir * 32;
	for (uint32_t i = 0; i < ndir; i++, d += 32)
		if (memcmp(d, tag, 4) == 0) {
			memcpy(off, d + 8, 8);
			memcpy(len, d + 16, 8);
			return 1;
		}
	return 0;
}

#endif
