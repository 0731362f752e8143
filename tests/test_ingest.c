/*
 * test_ingest.c — .gitignore semantics, the tree walk and the binary sniff.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "fathom.h"
#include "ingest/ingest.h"
#include "test.h"

/* ---- gitignore semantics table --------------------------------------------- */

typedef struct gi_case {
	const char *patterns;
	const char *base;
	const char *path;
	int is_dir;
	int want;   /* 1 ignored, -1 re-included, 0 no rule */
} gi_case;

static const gi_case gi_cases[] = {
	/* plain names match at any depth, files and folders */
	{ "foo", "", "foo", 0, 1 },
	{ "foo", "", "a/b/foo", 0, 1 },
	{ "foo", "", "a/foo", 1, 1 },
	{ "foo", "", "foobar", 0, 0 },
	{ "foo", "", "xfoo", 0, 0 },
	/* gi_match looks at the path alone; a file under an ignored folder is
	 * never reached by the walker (git check-ignore says 1 here). */
	{ "foo", "", "foo/bar", 0, 0 },
	/* anchoring: a leading or middle slash */
	{ "/foo", "", "foo", 0, 1 },
	{ "/foo", "", "a/foo", 0, 0 },
	{ "a/foo", "", "a/foo", 0, 1 },
	{ "a/foo", "", "b/a/foo", 0, 0 },
	{ "doc/*.txt", "", "doc/x.txt", 0, 1 },
	{ "doc/*.txt", "", "doc/sub/x.txt", 0, 0 },
	/* trailing slash: folders only, and no anchoring by itself */
	{ "foo/", "", "foo", 1, 1 },
	{ "foo/", "", "foo", 0, 0 },
	{ "foo/", "", "a/foo", 1, 1 },
	{ "a/b/", "", "a/b", 1, 1 },
	{ "a/b/", "", "x/a/b", 1, 0 },
	{ "/", "", "x", 0, 0 },
	/* comments, blank lines, escapes */
	{ "# foo", "", "# foo", 0, 0 },
	{ "#foo\nbar", "", "#foo", 0, 0 },
	{ "\\#foo", "", "#foo", 0, 1 },
	{ "\n\n   \nfoo\n\n", "", "foo", 0, 1 },
	{ "\\!bang", "", "!bang", 0, 1 },
	{ "\\*", "", "*", 0, 1 },
	{ "\\*", "", "a", 0, 0 },
	{ "\\?x", "", "?x", 0, 1 },
	{ "\\?x", "", "ax", 0, 0 },
	{ "a\\", "", "a", 0, 0 },              /* lone trailing backslash: dropped */
	{ "a\\", "", "a\\", 0, 0 },
	/* trailing spaces */
	{ "foo   ", "", "foo", 0, 1 },
	{ "foo\\ ", "", "foo ", 0, 1 },
	{ "foo\\ ", "", "foo", 0, 0 },
	{ "foo\\\\ ", "", "foo\\", 0, 1 },     /* escaped backslash, then a space */
	{ "foo\r\nbar\r\n", "", "foo", 0, 1 },
	{ "\xEF\xBB\xBF" "foo", "", "foo", 0, 1 },
	/* negation; later rules win */
	{ "*.log\n!keep.log", "", "keep.log", 0, -1 },
	{ "*.log\n!keep.log", "", "x.log", 0, 1 },
	{ "!keep.log\n*.log", "", "keep.log", 0, 1 },
	{ "!bang", "", "bang", 0, -1 },
	{ "build/\n!build/", "", "build", 1, -1 },
	{ "!x/", "", "x", 0, 0 },
	/* '*' and '?' stay inside one component */
	{ "*.o", "", "a/b/c.o", 0, 1 },
	{ "*.o", "", "c.o.txt", 0, 0 },
	{ "/*.o", "", "c.o", 0, 1 },
	{ "/*.o", "", "a/c.o", 0, 0 },
	{ "a/*.o", "", "a/b/c.o", 0, 0 },
	{ "a/*", "", "a/b", 1, 1 },
	{ "build*", "", "x/build-out", 0, 1 },
	{ "/build*", "", "build/x", 0, 0 },    /* (as above: parent not checked) */
	{ "f*o", "", "fo", 0, 1 },
	{ "f*o", "", "fxyzo", 0, 1 },
	{ "f*o*x", "", "foox", 0, 1 },
	{ "f*o*x", "", "foxo", 0, 0 },
	{ "*a*a*a*a*a*a*b", "", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", 0, 0 },
	{ "?.c", "", "a.c", 0, 1 },
	{ "?.c", "", "ab.c", 0, 0 },
	{ "x/a?b", "", "x/a/b", 0, 0 },
	{ "x/a*b", "", "x/a/b", 0, 0 },
	/* classes */
	{ "[abc].txt", "", "b.txt", 0, 1 },
	{ "[a-c].txt", "", "d.txt", 0, 0 },
	{ "[!a-c].txt", "", "d.txt", 0, 1 },
	{ "[^a-c].txt", "", "a.txt", 0, 0 },
	{ "[]x].txt", "", "].txt", 0, 1 },
	{ "[!]x].txt", "", "].txt", 0, 0 },
	{ "[a-].txt", "", "-.txt", 0, 1 },
	{ "[\\]].txt", "", "].txt", 0, 1 },
	{ "[[:digit:]]*", "", "9lives", 0, 1 },
	{ "[[:digit:]]*", "", "lives", 0, 0 },
	{ "[[:upper:][:digit:]]x", "", "Qx", 0, 1 },
	{ "[[:bogus:]]x", "", "bx", 0, 0 },    /* unknown class: dropped */
	{ "a/x[/]y", "", "a/x/y", 0, 0 },      /* a class never matches '/' */
	{ "[a-", "", "[a-", 0, 0 },            /* unterminated: dropped */
	{ "[a-\nb", "", "b", 0, 1 },           /* ...and only that line */
	/* "**" */
	{ "**/foo", "", "foo", 0, 1 },
	{ "**/foo", "", "a/b/foo", 0, 1 },
	{ "**/foo/bar", "", "x/foo/bar", 0, 1 },
	{ "**/foo/bar", "", "x/foo/baz/bar", 0, 0 },
	{ "abc/**", "", "abc/x/y", 0, 1 },
	{ "abc/**", "", "abc", 1, 0 },
	{ "a/**/b", "", "a/b", 0, 1 },
	{ "a/**/b", "", "a/x/y/b", 0, 1 },
	{ "a/**/b", "", "a/xb", 0, 0 },
	{ "a/**/b", "", "x/a/b", 0, 0 },
	{ "**", "", "any/thing", 0, 1 },
	{ "a**b", "", "x/axyb", 0, 1 },        /* not a whole component: a plain '*' */
	{ "x/a**b", "", "x/a/b", 0, 0 },
	{ "**/", "", "d", 1, 1 },
	{ "**/", "", "f", 0, 0 },
	/* patterns relative to a deeper .gitignore */
	{ "foo", "sub", "sub/foo", 0, 1 },
	{ "foo", "sub", "sub/x/foo", 0, 1 },
	{ "foo", "sub", "foo", 0, 0 },
	{ "foo", "sub", "subfoo", 0, 0 },
	{ "/foo", "sub", "sub/foo", 0, 1 },
	{ "/foo", "sub", "sub/x/foo", 0, 0 },
	{ "x/foo", "sub/", "sub/x/foo", 0, 1 },
	{ "x/foo", "a/sub", "a/sub/x/foo", 0, 1 },
	{ "*", "sub", "sub", 1, 0 },           /* a folder's rules never hit itself */
};

static void test_gitignore_table(void)
{
	for (size_t i = 0; i < sizeof gi_cases / sizeof gi_cases[0]; i++) {
		const gi_case *c = &gi_cases[i];
		gi_set *s = NULL;
		CHECK_OK(gi_parse(&s, c->patterns, strlen(c->patterns), c->base));
		int got = gi_match(s, c->path, c->is_dir);
		if (got != c->want) {
			fprintf(stderr, "  case %zu: patterns \"%s\" base \"%s\" path \"%s\"%s: got %d want %d\n",
			        i, c->patterns, c->base, c->path, c->is_dir ? " (dir)" : "", got, c->want);
			CHECK_EQ(got, c->want);
		}
		gi_free(s);
	}
	CHECK(sizeof gi_cases / sizeof gi_cases[0] >= 40);
}

/* A tiny deterministic generator for the differential tests. */
static uint64_t rng_state = 0x853c49e6748fea9bull;
static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

/* The NFA against fnmatch(3) with FNM_PATHNAME, which has the same meaning
 * for anchored patterns made of literals, '*', '?' and simple classes. */
static void test_gitignore_vs_fnmatch(void)
{
	static const char pat_alpha[] = "ab/*?*[";
	static const char path_alpha[] = "ab/";
	int disagreements = 0, matches = 0;
	for (int iter = 0; iter < 100000; iter++) {
		char pat[32], path[32];
		size_t pl = 1 + rnd(10), ql = rnd(12), k = 0;
		pat[k++] = '/';   /* anchored: matched against the whole path */
		for (size_t i = 0; i < pl && k < 20; i++) {
			char c = pat_alpha[rnd(sizeof pat_alpha - 1)];
			if (c == '[') {
				const char *cls[] = { "[ab]", "[!a]", "[a-b]", "[^b]" };
				const char *cl = cls[rnd(4)];
				memcpy(pat + k, cl, strlen(cl));
				k += strlen(cl);
				continue;
			}
			/* no "**", no trailing '/', no "//": those differ on purpose */
			if (c == '*' && k && pat[k - 1] == '*')
				continue;
			if (c == '/' && pat[k - 1] == '/')
				continue;
			pat[k++] = c;
		}
		while (k > 1 && pat[k - 1] == '/')
			k--;
		pat[k] = '\0';
		if (k == 1)
			continue;
		size_t m = 0;
		for (size_t i = 0; i < ql; i++) {
			char c = path_alpha[rnd(sizeof path_alpha - 1)];
			if (c == '/' && (m == 0 || path[m - 1] == '/'))
				continue;
			path[m++] = c;
		}
		while (m && path[m - 1] == '/')
			m--;
		path[m] = '\0';
		if (m == 0)
			continue;
		gi_set *s = NULL;
		if (gi_parse(&s, pat, k, "") != 0) {
			CHECK(0);
			break;
		}
		int got = gi_match(s, path, 0) == 1;
		int want = fnmatch(pat + 1, path, FNM_PATHNAME) == 0;
		gi_free(s);
		matches += want;
		if (got != want && disagreements++ < 5)
			fprintf(stderr, "  pattern \"%s\" path \"%s\": got %d, fnmatch %d\n", pat, path, got, want);
	}
	CHECK_EQ(disagreements, 0);
	CHECK(matches > 1000); /* the generator does produce matches */
}

/* The inner double star checked against a slow reference: the pattern
 * means "a/b", or "a/" + one or more components + "/b". */
static void test_gitignore_starstar_reference(void)
{
	static const char *paths[] = { "a/b", "a/x/b", "a/x/y/b", "a/xb", "ab", "x/a/b",
		"a/b/c", "a/b/b", "b", "a/a/b" };
	gi_set *s = NULL;
	CHECK_OK(gi_parse(&s, "a/**/b", 6, ""));
	for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
		const char *p = paths[i];
		int want = fnmatch("a/b", p, FNM_PATHNAME) == 0;
		/* a/ + (anything without a leading or trailing '/') + /b */
		size_t n = strlen(p);
		if (n >= 5 && strncmp(p, "a/", 2) == 0 && strcmp(p + n - 2, "/b") == 0 &&
		    p[2] != '/' && p[n - 3] != '/')
			want = 1;
		CHECK_EQ(gi_match(s, p, 0), want);
	}
	gi_free(s);
}

/* Two sets in the walker's order: the deeper one decides first. */
static void test_gitignore_nested_override(void)
{
	gi_set *top = NULL, *sub = NULL;
	CHECK_OK(gi_parse(&top, "*.txt\n", 6, ""));
	CHECK_OK(gi_parse(&sub, "!keep.txt\n", 10, "sub"));
	CHECK_EQ(gi_match(sub, "sub/keep.txt", 0), -1);
	CHECK_EQ(gi_match(sub, "sub/other.txt", 0), 0);
	CHECK_EQ(gi_match(top, "sub/other.txt", 0), 1);
	CHECK_EQ(gi_match(sub, "keep.txt", 0), 0);
	CHECK_EQ(gi_match(top, "keep.txt", 0), 1);
	gi_free(top);
	gi_free(sub);
	CHECK_EQ(gi_match(NULL, "x", 0), 0);
	gi_free(NULL);
}

/* ---- binary sniff ------------------------------------------------------------ */

static void test_looks_binary(void)
{
	const char *txt = "Hello, world.\n\tIndented\r\nform\ffeed\x1b[0m ok\n";
	CHECK_EQ(walk_looks_binary((const unsigned char *)txt, strlen(txt)), 0);
	CHECK_EQ(walk_looks_binary((const unsigned char *)"", 0), 0);
	CHECK_EQ(walk_looks_binary(NULL, 0), 0);
	const char *utf8 = "caf\xc3\xa9 na\xc3\xafve \xe2\x82\xac \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac";
	CHECK_EQ(walk_looks_binary((const unsigned char *)utf8, strlen(utf8)), 0);
	unsigned char nul[] = "abc\0def";
	CHECK_EQ(walk_looks_binary(nul, 7), 1);
	/* Latin-1: every fifth byte invalid as UTF-8 */
	const char *latin1 = "caf\xe9 caf\xe9 caf\xe9 caf\xe9 caf\xe9 caf\xe9 ";
	CHECK_EQ(walk_looks_binary((const unsigned char *)latin1, strlen(latin1)), 1);
	/* A few stray bytes in a long text stay text. */
	unsigned char mostly[1000];
	memset(mostly, 'x', sizeof mostly);
	for (int i = 0; i < 50; i++)
		mostly[i * 20] = 0xFF;
	CHECK_EQ(walk_looks_binary(mostly, sizeof mostly), 0);
	for (int i = 0; i < 150; i++)
		mostly[i * 6] = 0x01;
	CHECK_EQ(walk_looks_binary(mostly, sizeof mostly), 1);
	/* UTF-16 with a byte-order mark */
	unsigned char u16[] = { 0xFF, 0xFE, 'h', 0, 'i', 0 };
	CHECK_EQ(walk_looks_binary(u16, sizeof u16), 1);
	unsigned char u16be[] = { 0xFE, 0xFF, 'h', 'i' };
	CHECK_EQ(walk_looks_binary(u16be, sizeof u16be), 1);
	/* overlong encodings and surrogates are invalid */
	unsigned char bad[40];
	for (int i = 0; i < 40; i += 4) {
		bad[i] = 0xC0; bad[i + 1] = 0xAF; bad[i + 2] = 0xED; bad[i + 3] = 0xA0;
	}
	CHECK_EQ(walk_looks_binary(bad, sizeof bad), 1);
	/* Only the first 8 KiB count: a NUL after them does not. */
	unsigned char *big = malloc(20000);
	memset(big, 'a', 20000);
	big[15000] = 0;
	CHECK_EQ(walk_looks_binary(big, 20000), 0);
	big[100] = 0;
	CHECK_EQ(walk_looks_binary(big, 20000), 1);
	/* A multi-byte character cut by the window is not a fault. */
	memset(big, 'a', 20000);
	for (int i = 0; i + 3 <= 20000; i += 3) {
		big[i] = 0xE2; big[i + 1] = 0x82; big[i + 2] = 0xAC;
	}
	CHECK_EQ(walk_looks_binary(big, 20000), 0);
	free(big);
}

static void test_vcs_names(void)
{
	const char *yes[] = { ".git", ".hg", ".svn", ".bzr", "_darcs", "CVS", ".jj", ".pijul",
		".fossil-settings" };
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		CHECK(walk_is_vcs_dir(yes[i]));
	CHECK(!walk_is_vcs_dir(".github"));
	CHECK(!walk_is_vcs_dir("git"));
	CHECK(!walk_is_vcs_dir(".gitignore"));
	CHECK(!walk_is_vcs_dir(NULL));
}

/* ---- the walk ---------------------------------------------------------------- */

typedef struct walk_log {
	char text[16384];   /* "F path\n" / "S reason path\n" lines */
	size_t len;
	size_t files, skips;
	int stop_after;     /* on_file returns 7 after this many files (0: never) */
	size_t prefix;      /* bytes of the root to cut from the logged paths */
} walk_log;

static void log_line(walk_log *l, const char *fmt, const char *path, int reason)
{
	const char *p = path;
	if (strlen(p) >= l->prefix)
		p += l->prefix;
	int n = snprintf(l->text + l->len, sizeof l->text - l->len, fmt, reason, p);
	if (n > 0 && (size_t)n < sizeof l->text - l->len)
		l->len += (size_t)n;
}

static int on_file_log(void *ctx, const walk_entry *e)
{
	walk_log *l = ctx;
	log_line(l, "F%d %s\n", e->path, 0);
	l->files++;
	if (l->stop_after && l->files == (size_t)l->stop_after)
		return 7;
	return 0;
}

static void on_skip_log(void *ctx, const char *path, int reason)
{
	walk_log *l = ctx;
	log_line(l, "S%d %s\n", path, reason);
	l->skips++;
}

static void mk(const char *root, const char *rel)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (mkdir(p, 0755) != 0) {
		perror(p);
		exit(2);
	}
}

static void put(const char *root, const char *rel, const char *text)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	test_write(p, text);
}

static void ln(const char *root, const char *target, const char *rel)
{
	char p[1024];
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (symlink(target, p) != 0) {
		perror(p);
		exit(2);
	}
}

static char *build_fixture(void)
{
	char *root = test_tmpdir("walk");
	mk(root, ".git");
	mk(root, ".git/info");
	put(root, ".git/HEAD", "ref: refs/heads/main\n");
	put(root, ".git/info/exclude", "secret.txt\n");
	put(root, ".gitignore", "# build outputs\n*.log\nbuild/\n/only_root.txt\n!important.log\nout/\n!out/keep.txt\n");
	put(root, "a.txt", "alpha\n");
	put(root, "b.log", "log\n");
	put(root, "important.log", "keep me\n");
	put(root, "only_root.txt", "x\n");
	put(root, "secret.txt", "x\n");
	put(root, ".hidden", "hidden files are indexed\n");
	char big[2001];
	memset(big, 'b', 2000);
	big[2000] = '\0';
	put(root, "big.txt", big);
	put(root, "bin.dat", "text");
	{
		char p[1024];
		snprintf(p, sizeof p, "%s/bin.dat", root);
		FILE *f = fopen(p, "wb");
		fwrite("\x7f" "ELF\0\0\0\x01\x02", 1, 9, f);
		fclose(f);
	}
	mk(root, ".hg");
	put(root, ".hg/store", "x");
	mk(root, "build");
	put(root, "build/x.txt", "built\n");
	mk(root, "out");
	put(root, "out/keep.txt", "cannot be re-included\n");
	mk(root, "sub");
	put(root, "sub/.gitignore", "!b.log\n*.md\n");
	put(root, "sub/b.log", "re-included by the deeper file\n");
	put(root, "sub/only_root.txt", "the rule is anchored to the root\n");
	put(root, "sub/readme.md", "ignored in sub\n");
	ln(root, "..", "sub/up");
	ln(root, "sub", "zlink");
	ln(root, "does-not-exist", "broken");
	ln(root, "a.txt", "filelink");
	char p[1024];
	snprintf(p, sizeof p, "%s/fifo", root);
	if (mkfifo(p, 0644) != 0) {
		perror(p);
		exit(2);
	}
	return root;
}

static void run_walk(walk_log *l, const char *root, int follow, int gitignore, uint64_t max)
{
	memset(l, 0, sizeof *l);
	l->prefix = strlen(root) + 1;
	if (root[l->prefix - 2] == '/')
		l->prefix--;
	walk_opts o;
	memset(&o, 0, sizeof o);
	o.follow_symlinks = follow;
	o.use_gitignore = gitignore;
	o.max_file_size = max;
	o.on_file = on_file_log;
	o.on_skip = on_skip_log;
	o.ctx = l;
	CHECK_OK(walk_tree(root, &o));
}

static void test_walk_fixture(void)
{
	char *root = build_fixture();
	walk_log l;
	run_walk(&l, root, 1, 1, 1000);
	const char *want =
		"S1 .git\n"
		"F0 .gitignore\n"
		"S1 .hg\n"
		"F0 .hidden\n"
		"F0 a.txt\n"
		"S2 b.log\n"
		"S4 big.txt\n"
		"F0 bin.dat\n"
		"S6 broken\n"
		"S2 build\n"
		"S7 fifo\n"
		"F0 filelink\n"
		"F0 important.log\n"
		"S2 only_root.txt\n"
		"S2 out\n"
		"S2 secret.txt\n"
		"F0 sub/.gitignore\n"
		"F0 sub/b.log\n"
		"F0 sub/only_root.txt\n"
		"S2 sub/readme.md\n"
		"S5 sub/up\n"
		"S5 zlink\n";
	CHECK_STR(l.text, want);

	/* The same again: deterministic. */
	walk_log l2;
	run_walk(&l2, root, 1, 1, 1000);
	CHECK_STR(l2.text, l.text);

	/* Without following links, links are special files. */
	run_walk(&l, root, 0, 1, 0);
	CHECK(strstr(l.text, "S7 broken\n") != NULL);
	CHECK(strstr(l.text, "S7 filelink\n") != NULL);
	CHECK(strstr(l.text, "S7 sub/up\n") != NULL);
	CHECK(strstr(l.text, "S7 zlink\n") != NULL);
	CHECK(strstr(l.text, "F0 big.txt\n") != NULL); /* no size cap */

	/* Without ignore rules, everything but VCS folders comes through. */
	run_walk(&l, root, 1, 0, 0);
	CHECK(strstr(l.text, "F0 build/x.txt\n") != NULL);
	CHECK(strstr(l.text, "F0 out/keep.txt\n") != NULL);
	CHECK(strstr(l.text, "F0 secret.txt\n") != NULL);
	CHECK(strstr(l.text, "F0 sub/readme.md\n") != NULL);
	CHECK(strstr(l.text, "S1 .git\n") != NULL);
	CHECK(strstr(l.text, ".hg/") == NULL);
	CHECK(strstr(l.text, ".git/") == NULL);

	/* The binary file is found by the sniff the caller runs. */
	char p[1024];
	snprintf(p, sizeof p, "%s/bin.dat", root);
	FILE *f = fopen(p, "rb");
	unsigned char buf[64];
	size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
	if (f)
		fclose(f);
	CHECK_EQ(walk_looks_binary(buf, n), 1);

	/* A stop from the callback ends the walk with its value. */
	memset(&l, 0, sizeof l);
	l.prefix = strlen(root) + 1;
	l.stop_after = 2;
	walk_opts o;
	memset(&o, 0, sizeof o);
	o.follow_symlinks = 1;
	o.use_gitignore = 1;
	o.on_file = on_file_log;
	o.ctx = &l;
	CHECK_EQ(walk_tree(root, &o), 7);
	CHECK_EQ(l.files, 2);

	/* A trailing slash on the root does not double the separator. */
	char root_slash[1024];
	snprintf(root_slash, sizeof root_slash, "%s/", root);
	memset(&l, 0, sizeof l);
	l.prefix = 0;
	o.on_file = on_file_log;
	o.on_skip = NULL;
	l.stop_after = 0;
	CHECK_OK(walk_tree(root_slash, &o));
	snprintf(p, sizeof p, "F0 %s/a.txt\n", root);
	CHECK(strstr(l.text, p) != NULL);

	/* A single file as the root: reported as given. */
	snprintf(p, sizeof p, "%s/a.txt", root);
	memset(&l, 0, sizeof l);
	CHECK_OK(walk_tree(p, &o));
	CHECK_EQ(l.files, 1);
	char want1[1100];
	snprintf(want1, sizeof want1, "F0 %s\n", p);
	CHECK_STR(l.text, want1);
	/* ...and one over the size cap is skipped. */
	snprintf(p, sizeof p, "%s/big.txt", root);
	memset(&l, 0, sizeof l);
	o.on_skip = on_skip_log;
	o.max_file_size = 10;
	CHECK_OK(walk_tree(p, &o));
	CHECK_EQ(l.files, 0);
	CHECK_EQ(l.skips, 1);

	/* A missing root is an error, not a skip. */
	snprintf(p, sizeof p, "%s/nope", root);
	CHECK_EQ(walk_tree(p, &o), FATHOM_ENOTFOUND);
	CHECK_EQ(walk_tree(NULL, &o), FATHOM_EINVAL);
	test_rmrf(root);
	free(root);
}

/* Every allocation failing in turn: the walk either fails with
 * FATHOM_ENOMEM or gives exactly the full answer, never a silently
 * different one (an ignore file dropped, a folder left out). */
static void test_walk_alloc_failures(void)
{
	char *root = build_fixture();
	walk_log full, l;
	run_walk(&full, root, 1, 1, 1000);
	int saw_enomem = 0, saw_ok = 0;
	for (long n = 0; n < 400 && !saw_ok; n++) {
		memset(&l, 0, sizeof l);
		l.prefix = strlen(root) + 1;
		walk_opts o;
		memset(&o, 0, sizeof o);
		o.follow_symlinks = 1;
		o.use_gitignore = 1;
		o.max_file_size = 1000;
		o.on_file = on_file_log;
		o.on_skip = on_skip_log;
		o.ctx = &l;
		fa_alloc_fail_after(n);
		int rc = walk_tree(root, &o);
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		if (rc == 0) {
			saw_ok = 1;
			CHECK_STR(l.text, full.text);
		} else {
			saw_enomem = 1;
		}
	}
	CHECK(saw_enomem);
	CHECK(saw_ok);
	/* The same for parsing alone. */
	const char *pats = "*.o\n!keep.o\n[a-z]*.[ch]\na/**/b\nbuild/\n";
	saw_ok = 0;
	for (long n = 0; n < 100 && !saw_ok; n++) {
		gi_set *s = NULL;
		fa_alloc_fail_after(n);
		int rc = gi_parse(&s, pats, strlen(pats), "x");
		fa_alloc_fail_after(-1);
		CHECK(rc == 0 || rc == FATHOM_ENOMEM);
		if (rc == 0) {
			saw_ok = 1;
			CHECK_EQ(gi_match(s, "x/q/keep.o", 0), -1);
			CHECK_EQ(gi_match(s, "x/a/z/b", 0), 1);
		} else {
			CHECK(s == NULL);
		}
		gi_free(s);
	}
	CHECK(saw_ok);
	test_rmrf(root);
	free(root);
}

/* A link to the real folder that sorts first walks the folder under its
 * own name; the real one is then the duplicate. Either way, once. */
static void test_walk_second_link_first(void)
{
	char *root = test_tmpdir("walk2");
	mk(root, "real");
	put(root, "real/x.txt", "x\n");
	ln(root, "real", "alias");
	walk_log l;
	run_walk(&l, root, 1, 1, 0);
	CHECK_STR(l.text, "F0 alias/x.txt\nS5 real\n");
	/* A link inside a folder to its own ancestor two levels up. */
	mk(root, "real/deep");
	ln(root, "../..", "real/deep/loop");
	run_walk(&l, root, 1, 1, 0);
	CHECK(strstr(l.text, "S5 alias/deep/loop\n") != NULL);
	CHECK_EQ(l.files, 1);
	test_rmrf(root);
	free(root);
}

/* Walk path following links, confined to confine (NULL: not), logging
 * paths past shown's. */
static void confined_walk(walk_log *l, const char *path, const char *confine, const char *shown)
{
	memset(l, 0, sizeof *l);
	l->prefix = strlen(shown) + 1;
	walk_opts o;
	memset(&o, 0, sizeof o);
	o.follow_symlinks = 1;
	o.on_file = on_file_log;
	o.on_skip = on_skip_log;
	o.ctx = l;
	o.confine = confine;
	CHECK_OK(walk_tree(path, &o));
}

/* Confined to a folder (a daemon serving it): a link out of it, to a
 * folder, to a file, or to a sibling whose name starts with the folder's,
 * is skipped; a link that stays inside is followed; a root whose path
 * leads out through a link is skipped whole. */
static void test_walk_confine(void)
{
	char *top = test_tmpdir("confine");
	mk(top, "root");
	mk(top, "root2");
	mk(top, "out");
	put(top, "out/secret.txt", "s\n");
	put(top, "root2/p.txt", "p\n");
	put(top, "root/a.txt", "a\n");
	mk(top, "root/sub");
	put(top, "root/sub/b.txt", "b\n");
	ln(top, "../out", "root/linkdir");
	ln(top, "../out/secret.txt", "root/linkfile");
	ln(top, "../root2", "root/prefix");
	ln(top, "a.txt", "root/inside");
	ln(top, "sub", "root/subalias");
	char root[1024], viaout[1024];
	snprintf(root, sizeof root, "%s/root", top);
	snprintf(viaout, sizeof viaout, "%s/root/linkdir", top);
	walk_log l;
	confined_walk(&l, root, root, root);
	CHECK_STR(l.text, "F0 a.txt\nF0 inside\nS11 linkdir\nS11 linkfile\nS11 prefix\n"
	                  "F0 sub/b.txt\nS5 subalias\n");
	/* a root that is a link out, or a file behind one */
	confined_walk(&l, viaout, root, root);
	CHECK_STR(l.text, "S11 linkdir\n");
	snprintf(viaout, sizeof viaout, "%s/root/linkdir/secret.txt", top);
	confined_walk(&l, viaout, root, root);
	CHECK_STR(l.text, "S11 linkdir/secret.txt\n");
	/* unconfined, the same tree is walked through every link */
	confined_walk(&l, root, NULL, root);
	CHECK(strstr(l.text, "F0 linkdir/secret.txt\n") && strstr(l.text, "F0 prefix/p.txt\n"));
	test_rmrf(top);
	free(top);
}

static void test_walk_depth_limit(void)
{
	char *root = test_tmpdir("deep");
	char rel[2048] = "";
	size_t len = 0;
	for (int i = 0; i < 300; i++) {
		if (len)
			rel[len++] = '/';
		rel[len++] = 'd';
		rel[len] = '\0';
		mk(root, rel);
		if (i == 100) {
			char f[2100];
			snprintf(f, sizeof f, "%s/f.txt", rel);
			put(root, f, "reachable\n");
		}
	}
	char f[2100];
	snprintf(f, sizeof f, "%s/f.txt", rel);
	put(root, f, "too deep\n");
	walk_log l;
	run_walk(&l, root, 1, 1, 0);
	CHECK_EQ(l.files, 1);
	CHECK_EQ(l.skips, 1);
	CHECK(strstr(l.text, "S10 ") != NULL);
	test_rmrf(root);
	free(root);
}

/* Is there a .git entry in dir or any folder above it? */
static int inside_repo(const char *dir)
{
	char p[4096], probe[4200];
	if (!realpath(dir, p))
		return 0;
	for (;;) {
		struct stat st;
		snprintf(probe, sizeof probe, "%s/.git", p);
		if (lstat(probe, &st) == 0)
			return 1;
		char *slash = strrchr(p, '/');
		if (!slash || slash == p)
			break;
		*slash = '\0';
	}
	return lstat("/.git", &(struct stat){ 0 }) == 0;
}

/* Walking a folder inside a repository: the ignore files between the top
 * of the repository and the root apply, anchored where they live. */
static void test_walk_inside_repo(void)
{
	char *top = test_tmpdir("repo");
	mk(top, ".git");
	mk(top, ".git/info");
	put(top, ".git/info/exclude", "*.secret\n");
	put(top, ".gitignore", "*.o\n/top_only\nsub/deep/*.tmp\n!keep.o\n");
	put(top, "top_only", "x\n");
	mk(top, "sub");
	put(top, "sub/.gitignore", "*.bak\n");
	put(top, "sub/a.c", "x\n");
	put(top, "sub/a.o", "x\n");
	put(top, "sub/keep.o", "x\n");
	put(top, "sub/top_only", "x\n");
	put(top, "sub/x.bak", "x\n");
	put(top, "sub/k.secret", "x\n");
	mk(top, "sub/deep");
	put(top, "sub/deep/x.tmp", "x\n");
	put(top, "sub/deep/y.txt", "x\n");
	mk(top, "sub/deep/nested");
	put(top, "sub/deep/nested/.gitignore", "!*.bak\n");
	put(top, "sub/deep/nested/n.bak", "x\n");
	put(top, "sub/deep/nested/n.o", "x\n");
	char root[1100];
	snprintf(root, sizeof root, "%s/sub", top);
	walk_log l;
	run_walk(&l, root, 1, 1, 0);
	CHECK_STR(l.text,
		"F0 .gitignore\n"
		"F0 a.c\n"
		"S2 a.o\n"
		"F0 deep/nested/.gitignore\n"
		"F0 deep/nested/n.bak\n"
		"S2 deep/nested/n.o\n"
		"S2 deep/x.tmp\n"
		"F0 deep/y.txt\n"
		"S2 k.secret\n"
		"F0 keep.o\n"
		"F0 top_only\n"
		"S2 x.bak\n");
	/* Deeper still, and with a trailing slash on the root. */
	snprintf(root, sizeof root, "%s/sub/deep/", top);
	run_walk(&l, root, 1, 1, 0);
	CHECK_STR(l.text,
		"F0 nested/.gitignore\n"
		"F0 nested/n.bak\n"
		"S2 nested/n.o\n"
		"S2 x.tmp\n"
		"F0 y.txt\n");
	test_rmrf(top);
	free(top);

	/* Outside a repository, ignore files above the root do not count. */
	char *plain = test_tmpdir("norepo");
	put(plain, ".gitignore", "*.c\n");
	mk(plain, "child");
	put(plain, "child/x.c", "x\n");
	snprintf(root, sizeof root, "%s/child", plain);
	if (!inside_repo(plain)) {
		run_walk(&l, root, 1, 1, 0);
		CHECK_STR(l.text, "F0 x.c\n");
	}
	test_rmrf(plain);
	free(plain);
}

/* A folder that cannot be opened is a skip, not an error. */
static void test_walk_unreadable(void)
{
	if (geteuid() == 0) {
		printf("  (running as root: permission check skipped)\n");
		return;
	}
	char *root = test_tmpdir("perm");
	mk(root, "locked");
	put(root, "locked/x.txt", "x\n");
	put(root, "ok.txt", "x\n");
	char p[1024];
	snprintf(p, sizeof p, "%s/locked", root);
	chmod(p, 0);
	walk_log l;
	run_walk(&l, root, 1, 1, 0);
	CHECK_STR(l.text, "S6 locked\nF0 ok.txt\n");
	chmod(p, 0755);
	test_rmrf(root);
	free(root);
}

int main(void)
{
	RUN(test_gitignore_table);
	RUN(test_gitignore_vs_fnmatch);
	RUN(test_gitignore_starstar_reference);
	RUN(test_gitignore_nested_override);
	RUN(test_looks_binary);
	RUN(test_vcs_names);
	RUN(test_walk_fixture);
	RUN(test_walk_alloc_failures);
	RUN(test_walk_second_link_first);
	RUN(test_walk_confine);
	RUN(test_walk_depth_limit);
	RUN(test_walk_inside_repo);
	RUN(test_walk_unreadable);
	return TEST_DONE();
}
