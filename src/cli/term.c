/*
 * term.c — what a terminal user sees of a hit's place: whether output is
 * coloured, and how a path is shown. One decision of each for every
 * command (search, grep), so a setting or an environment variable means
 * the same thing everywhere.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* ---- colour ------------------------------------------------------------------ */

int cli_color_parse(const char *when)
{
	if (strcmp(when, "auto") == 0)
		return CLI_COLOR_AUTO;
	if (strcmp(when, "always") == 0)
		return CLI_COLOR_ALWAYS;
	if (strcmp(when, "never") == 0)
		return CLI_COLOR_NEVER;
	return -1;
}

/* A terminal that takes escape sequences (colour, the progress line's
 * erase): not TERM=dumb, nor one with TERM unset. */
int cli_term_ok(int fd)
{
	const char *term = getenv("TERM");
	if (!term || !*term || strcmp(term, "dumb") == 0)
		return 0;
	return isatty(fd) == 1;
}

/* As ripgrep decides (its termcolor crate), and as no-color.org asks: a
 * word on the command line wins over the environment; "auto" colours only
 * a terminal, and not when NO_COLOR is set to anything but "" or TERM is
 * unset or "dumb" (a terminal that cannot take escape sequences). */
int cli_color_on(int when, int fd)
{
	if (when == CLI_COLOR_ALWAYS)
		return 1;
	if (when == CLI_COLOR_NEVER)
		return 0;
	const char *no = getenv("NO_COLOR");
	if (no && *no)
		return 0;
	return cli_term_ok(fd);
}

/* ---- paths -------------------------------------------------------------------- */

void cli_paths_init(cli_paths *p, const char *root)
{
	p->cwd_len = 0;
	p->root_len = 0;
	p->cwd[0] = p->root[0] = '\0';
	/* a folder deeper than PATH_MAX, or one removed under us: no folder
	 * to be relative to, so every path is shown absolute */
	if (getcwd(p->cwd, sizeof p->cwd) && p->cwd[0] == '/')
		p->cwd_len = strlen(p->cwd);
	else
		p->cwd[0] = '\0';
	size_t n = root ? strlen(root) : 0;
	if (n && root[0] == '/' && n < sizeof p->root) {
		memcpy(p->root, root, n + 1);
		p->root_len = n;
	}
}

/* A key is absolute, or relative to the index's root folder. It is shown
 * as grep shows a path: relative to the current folder when the file lies
 * inside it, absolute otherwise. A relative key of an index with no root
 * recorded has nothing to be resolved against and is shown as stored. */
const char *cli_path_show(const cli_paths *p, const char *key, char *buf, size_t cap)
{
	if (!key || !*key)
		return "";
	const char *abs = key;
	if (key[0] != '/') {
		if (!p->root_len)
			return key;
		int n = snprintf(buf, cap, "%s%s%s", p->root,
		                 p->root[p->root_len - 1] == '/' ? "" : "/", key);
		if (n < 0 || (size_t)n >= cap)
			return key;   /* longer than a path can be: the key itself */
		abs = buf;
	}
	if (!p->cwd_len)
		return abs;
	if (p->cwd_len == 1)   /* in "/": everything is inside */
		return abs[1] ? abs + 1 : ".";
	if (strncmp(abs, p->cwd, p->cwd_len) != 0)
		return abs;
	if (abs[p->cwd_len] == '\0')
		return ".";
	if (abs[p->cwd_len] != '/')
		return abs;   /* /work/ab is not inside /work/a */
	return abs + p->cwd_len + 1;
}

void cli_put_path(FILE *f, const char *shown, int color)
{
	if (color)
		fputs(CLI_SGR_PATH, f);
	cli_put_name(f, shown);
	if (color)
		fputs(CLI_SGR_RESET, f);
}
