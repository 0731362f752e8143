/*
 * main.c — the fathom command. A client of the public API only
 * (include/fathom.h); it parses arguments, prints, and sets exit codes:
 * 0 success, 1 no results (as grep), 2 error.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fathom.h"
#include "cli.h"

const char *cli_prog = "fathom";
const char *cli_cmd = NULL;

/* "fathom: WHAT (NOTE; see 'fathom help search')" on stderr, the form of
 * every usage error: the hint names where the command's options are told. */
static void usage_line(const char *note, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void usage_line(const char *note, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cli_prog);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (%s%s", note ? note : "", note ? "; " : "");
	if (cli_cmd)
		fprintf(stderr, "see '%s help %s')\n", cli_prog, cli_cmd);
	else
		fprintf(stderr, "see '%s help')\n", cli_prog);
}

void cli_die_api(int rc, const char *what)
{
	const char *detail = fathom_errmsg();
	if (detail && *detail)
		fprintf(stderr, "%s: %s: %s (%s)\n", cli_prog, what, detail, fathom_strerror(rc));
	else
		fprintf(stderr, "%s: %s: %s\n", cli_prog, what, fathom_strerror(rc));
}

int cli_commit_close(fathom_index *ix, int rc, const char *what)
{
	if (!rc && (rc = fathom_commit(ix)) != 0)
		what = "commit failed";
	if (rc) {
		cli_die_api(rc, what);
		fathom_rollback(ix);
	}
	fathom_close(ix);
	return rc ? 2 : 0;
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_line(NULL, fmt, ap);
	va_end(ap);
	return 2;
}

/* Parse a number with a range check and nothing trailing. */
int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	uint64_t mult = 1;
	if (*end == 'k' || *end == 'K')
		mult = 1024, end++;
	else if (*end == 'M')
		mult = 1024 * 1024, end++;
	else if (*end == 'G')
		mult = 1024ull * 1024 * 1024, end++;
	if (errno || *end || v > hi / mult || v * mult < lo)
		return -1;
	*out = v * mult;
	return 0;
}

int cli_parse_float(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	if (!s || !*s)
		return -1;
	double v = strtod(s, &end);
	if (errno || *end || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

/* The library's bounds for one of its limits: options are checked against
 * what it publishes, never a copy. */
void cli_limit(int which, double *lo, double *hi)
{
	*lo = *hi = 0;
	fathom_limit(which, lo, hi);
}

int cli_parse_limit(const char *s, int which, uint64_t *out)
{
	double lo, hi;
	cli_limit(which, &lo, &hi);
	return cli_parse_u64(s, (uint64_t)lo, (uint64_t)hi, out);
}

/* ---- JSON output ---------------------------------------------------------- */

void cli_json_str(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				fputc(c, f);
		}
	}
	fputc('"', f);
}

void cli_json_cstr(FILE *f, const char *s)
{
	cli_json_str(f, s ? s : "", s ? strlen(s) : 0);
}

/* ---- names in human output ------------------------------------------------ */

/* A file name can hold any byte but '/' and NUL: a newline in one would
 * forge an output line, an escape sequence would drive the terminal. So
 * names are written C-style, as ls -b does: \n, \t, \r, \\ for a
 * backslash, and \xNN for every other control character (C0, DEL, and
 * the C1 controls U+0080-U+009F byte by byte) and every byte that is not
 * part of valid UTF-8. Everything else is written as it is, so the
 * output reads back unambiguously; --json gives the exact bytes. */
void cli_put_name(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	const unsigned char *end = p + strlen((const char *)p);
	while (*p) {
		size_t n = sv_utf8_char(p, (size_t)(end - p));
		int c1 = n == 2 && p[0] == 0xC2 && p[1] < 0xA0;
		if (n > 1 && !c1) {
			fwrite(p, 1, n, f);
			p += n;
			continue;
		}
		if (n == 1 && *p >= 0x20 && *p != 0x7F && *p != '\\') {
			fputc(*p++, f);
			continue;
		}
		switch (*p) {
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		case '\\': fputs("\\\\", f); break;
		default: fprintf(f, "\\x%02x", *p); break;
		}
		p++;
	}
}

/* ---- options ----------------------------------------------------------------- */

/* The long option that the element "--name[=value]" names (a unique
 * prefix, as getopt_long takes it), or NULL; *prefixed: how many options
 * name starts (more than one, no exact match: ambiguous). */
static const struct option *long_named(const struct option *lo, const char *elem, int *prefixed)
{
	const char *name = elem + 2, *eq = strchr(name, '=');
	size_t n = eq ? (size_t)(eq - name) : strlen(name);
	const struct option *found = NULL;
	int decided = 0;
	*prefixed = 0;
	for (; lo && lo->name; lo++) {
		if (strncmp(lo->name, name, n) != 0)
			continue;
		++*prefixed;
		if (decided)
			continue;
		if (strlen(lo->name) == n)
			found = lo, decided = 1;
		else if (found)
			found = NULL, decided = 1;   /* ambiguous */
		else
			found = lo;
	}
	return found;
}

/* "fathom: unknown option '-x' (see 'fathom help grep')" on stderr, the
 * form of every usage error (cli_usage_error). note: what to add before
 * the hint, or NULL. */
static int bad_option(const char *note, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad_option(const char *note, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	usage_line(note, fmt, ap);
	va_end(ap);
	return '?';
}

/* getopt_long's arguments from a command's rows: the short options (":"
 * first, so a missing value is told from an unknown option) and the long
 * ones. Returns -1 when the table is larger than CLI_MAX_OPTS. */
static int build_getopt(const cli_command *cmd, char *sopts, size_t scap, struct option *lo)
{
	size_t ns = 0, nl = 0;
	sopts[ns++] = ':';
	for (size_t t = 0; t < sizeof cmd->opts / sizeof cmd->opts[0] && cmd->opts[t]; t++) {
		for (const cli_opt *o = cmd->opts[t]; o->name || o->letter; o++) {
			int val = o->val ? o->val : o->letter;
			if (o->letter) {
				if (ns + 3 >= scap)
					return -1;
				sopts[ns++] = (char)o->letter;
				if (o->has_arg != no_argument)
					sopts[ns++] = ':';
				if (o->has_arg == optional_argument)
					sopts[ns++] = ':';
			}
			if (o->name) {
				if (nl >= CLI_MAX_OPTS)
					return -1;
				lo[nl++] = (struct option){ o->name, o->has_arg, NULL, val };
			}
		}
	}
	sopts[ns] = '\0';
	lo[nl] = (struct option){ NULL, 0, NULL, 0 };
	return 0;
}

/* The commands whose tables have the long option name, "index, add",
 * into buf; "" when none has. */
static void commands_with(const char *name, size_t n, char *buf, size_t cap)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < cli_ncommands; i++) {
		const cli_command *c = &cli_commands[i];
		if (cli_command_opt(c, name, n) && len < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? ", " : "", c->name);
	}
}

int cli_getopt(int argc, char **argv)
{
	const char *cmd = argv[0];
	static const cli_command *built;
	static char sopts[3 * CLI_MAX_OPTS + 2];
	static struct option lo[CLI_MAX_OPTS + 1];
	const cli_command *command = cli_command_find(cmd);
	if (!command)
		return bad_option(NULL, "no such command '%s'", cmd);
	cli_cmd = command->name;
	if (built != command) {
		if (build_getopt(command, sopts, sizeof sopts, lo))
			return bad_option(NULL, "%s: more options than CLI_MAX_OPTS", cmd);
		built = command;
	}
	opterr = 0;
	int c = getopt_long(argc, argv, sopts, lo, NULL);
	if (c != '?' && c != ':')
		return c;
	/* A missing value ends argv, and an unknown or mis-valued long option
	 * is a whole element: either way it is argv[optind - 1]. An unknown
	 * short option may sit inside a bundle (-xvf), so it is named by
	 * its letter. */
	const char *elem = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	int is_long = strncmp(elem, "--", 2) == 0 && elem[2];
	int prefixed = 0;
	const struct option *o = is_long ? long_named(lo, elem, &prefixed) : NULL;
	if (c == ':') {
		if (is_long)
			return bad_option(NULL, "option '--%s' wants a value", o ? o->name : elem + 2);
		return bad_option(NULL, "option '-%c' wants a value", optopt);
	}
	if (is_long && optopt && o && o->val == optopt && o->has_arg == no_argument)
		return bad_option(NULL, "option '--%s' takes no value", o->name);
	if ((is_long && !optopt && strcmp(elem, "--help") == 0) ||
	    (!(is_long && !optopt) && optopt == 'h')) {
		cli_help_command(stdout, command);
		exit(fflush(stdout) == 0 ? 0 : 2);
	}
	if (is_long && !optopt) {
		const char *eq = strchr(elem, '=');
		int n = eq ? (int)(eq - elem) : (int)strlen(elem);
		if (prefixed > 1)
			return bad_option(NULL, "option '%.*s' is ambiguous", n, elem);
		/* an option of another command is no silent no-op: say whose it is */
		char others[256];
		commands_with(elem + 2, (size_t)n - 2, others, sizeof others);
		char note[300];
		snprintf(note, sizeof note, "an option of %s", others);
		return bad_option(*others ? note : NULL, "unknown option '%.*s'", n, elem);
	}
	/* Inside a bundle getopt has not moved past it yet (argv[optind]); on
	 * its last letter it has (argv[optind - 1]). Name the whole argument
	 * too when it is more than the letter: "-folding" is likelier a query
	 * word than a bundle of options. */
	const char *bundle = optind < argc && argv[optind][0] == '-' && argv[optind][1] != '-' &&
	                     strchr(argv[optind] + 1, optopt) ? argv[optind] : elem;
	const char *note = strcmp(cmd, "search") == 0
		? "-word in a query excludes word: put such a query after --, as in "
		  "fathom search -- '-word other words'"
		: "an argument that starts with '-' goes after --";
	if (bundle[0] == '-' && bundle[1] && bundle[2])
		return bad_option(note, "unknown option '-%c' in '%s'", optopt, bundle);
	return bad_option(note, "unknown option '-%c'", optopt);
}

const char *cli_default_index(void)
{
	const char *e = getenv("FATHOM_INDEX");
	return e && *e ? e : ".fathom";
}

/* The common options before the command: fathom [--index DIR] COMMAND,
 * -V/--version, -h/--help. Returns the index of the command in argv, or
 * -1 with *rc the exit status. */
static int global_options(int argc, char **argv, const char **index, int *rc)
{
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--index") == 0) {
			if (i + 1 >= argc)
				return *rc = cli_usage_error("option '--index' wants a value"), -1;
			*index = argv[++i];
		} else if (strncmp(a, "--index=", 8) == 0) {
			*index = a + 8;
		} else if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
			*rc = cmd_version(1, (char *[]){ (char *)"version", NULL });
			return -1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			cli_help_overview(stdout);
			*rc = fflush(stdout) == 0 ? 0 : 2;
			return -1;
		} else {
			return *rc = cli_usage_error("unknown option '%s' before the command", a), -1;
		}
	}
	if (i >= argc) {
		cli_help_overview(stderr);
		return *rc = 2, -1;
	}
	return i;
}

int main(int argc, char **argv)
{
	const char *index = NULL;
	int rc = 0, at = global_options(argc, argv, &index, &rc);
	if (at < 0)
		return rc;
	const cli_command *c = cli_command_find(argv[at]);
	if (!c)
		return cli_usage_error("unknown command '%s'", argv[at]);
	argc -= at;
	argv += at;
	cli_cmd = c->name;
	if (!index || !cli_command_opt(c, "index", 5))   /* help, version, completion */
		return c->run(argc, argv);
	/* fathom --index DIR COMMAND ... runs as fathom COMMAND --index DIR ...:
	 * one parser, and an --index after the command still wins */
	char **args = calloc((size_t)argc + 3, sizeof *args);
	if (!args) {
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		return 2;
	}
	args[0] = argv[0];
	args[1] = (char *)"--index";
	args[2] = (char *)index;
	memcpy(args + 3, argv + 1, (size_t)(argc - 1) * sizeof *args);
	rc = c->run(argc + 2, args);
	free(args);
	return rc;
}
