/*
 * docgen.c — the man page fathom(1) ('fathom help --man') and the bash
 * and zsh completion scripts ('fathom completion bash|zsh'), written from
 * the table of commands and options that 'fathom help' prints and the
 * parser reads (commands.c), so none of them can drift from the others.
 * The Makefile runs the built binary to make them; make install installs
 * them.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Each option table of command c, then each option of all of them. */
#define FOR_TABLES(c, t)                                                                    \
	for (size_t t = 0; t < sizeof (c)->opts / sizeof (c)->opts[0] && (c)->opts[t]; t++)
#define FOR_OPTS(c, o)                                                                      \
	FOR_TABLES(c, t_)                                                                       \
		for (const cli_opt *o = (c)->opts[t_]; o->name || o->letter; o++)

/* ---- roff ------------------------------------------------------------------------ */

/* One line of text for roff: backslashes escaped, '-' as \- (a minus,
 * which man renders as the ASCII hyphen options are typed with), and a
 * line that would read as a request (a leading '.' or ') guarded. */
static void roff_text(FILE *f, const char *s, size_t n)
{
	if (n && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\\')
			fputs("\\e", f);
		else if (s[i] == '-')
			fputs("\\-", f);
		else
			fputc(s[i], f);
	}
}

/* Each line of text as a line of roff, filled; lines that start with
 * spaces (aligned examples) are kept as they are. */
static void roff_lines(FILE *f, const char *text)
{
	int nofill = 0;
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if ((n && p[0] == ' ') != nofill) {
			nofill = !nofill;
			fputs(nofill ? ".nf\n" : ".fi\n", f);
		}
		roff_text(f, p, n);
		fputc('\n', f);
		p = nl ? nl + 1 : NULL;
	}
	if (nofill)
		fputs(".fi\n", f);
}

static void roff_cstr(FILE *f, const char *s)
{
	roff_text(f, s, strlen(s));
}

static void man_opts(FILE *f, const cli_opt *o)
{
	for (; o->name || o->letter; o++) {
		fputs(".TP\n", f);
		if (o->letter)
			fprintf(f, "\\fB\\-%c\\fR%s", o->letter, o->name ? ", " : "");
		if (o->name) {
			fputs("\\fB\\-\\-", f);
			roff_cstr(f, o->name);
			fputs("\\fR", f);
		}
		if (o->arg) {
			fputs(o->has_arg == optional_argument ? "[=\\fI" : " \\fI", f);
			roff_cstr(f, o->arg);
			fputs(o->has_arg == optional_argument ? "\\fR]" : "\\fR", f);
		}
		fputc('\n', f);
		roff_lines(f, o->help);
		if (o->choices) {
			fputs("(", f);
			roff_cstr(f, o->choices);
			fputs(")\n", f);
		}
	}
}

void cli_write_man(FILE *f)
{
	fprintf(f, ".\\\" fathom(1): written by 'fathom help --man' from the table that\n"
	           ".\\\" 'fathom help' prints; do not edit.\n"
	           ".TH FATHOM 1 \"\" \"fathom %s\" \"User Commands\"\n", FATHOM_VERSION_STRING);
	fputs(".SH NAME\n"
	      "fathom \\- search for documentation and code\n"
	      ".SH SYNOPSIS\n"
	      ".B fathom\n"
	      "[\\fB\\-\\-index\\fR \\fIDIR\\fR] \\fICOMMAND\\fR [\\fIoptions\\fR] [\\fIargs\\fR]\n"
	      ".br\n"
	      ".B fathom\n"
	      "\\fICOMMAND\\fR [\\fB\\-\\-index\\fR \\fIDIR\\fR] [\\fIoptions\\fR] [\\fIargs\\fR]\n"
	      ".SH DESCRIPTION\n"
	      "fathom is a search engine for documentation and code: BM25F full-text\n"
	      "search with a web-style query dialect, exact identifiers, a glossary,\n"
	      "grep with a trigram index, an HTTP daemon and an MCP server, over one\n"
	      "crash-safe on-disk index. The C library it is built on, libfathom,\n"
	      "is installed with it (fathom.h; pkg-config fathom).\n"
	      ".PP\n"
	      "Names in human output are written with C-style escapes; \\-\\-json gives\n"
	      "them exact.\n"
	      ".SH COMMANDS\n", f);
	for (size_t i = 0; i < cli_ncommands; i++) {
		const cli_command *c = &cli_commands[i];
		fputs(".SS \"", f);
		roff_cstr(f, c->name);
		if (c->args) {
			fputc(' ', f);
			roff_cstr(f, c->args);
		}
		fputs("\"\n", f);
		roff_lines(f, c->summary);
		fputs(".PP\n.nf\n", f);
		roff_lines(f, c->usage);
		fputs(".fi\n", f);
		if (c->about) {
			fputs(".PP\n", f);
			roff_lines(f, c->about);
		}
		FOR_TABLES(c, t)
			man_opts(f, c->opts[t]);
		for (const cli_sub *s = c->subs; s && s->name; s++) {
			fputs(".TP\n\\fB", f);
			roff_cstr(f, s->name);
			fputs("\\fR", f);
			if (s->args) {
				fputs(" \\fI", f);
				roff_cstr(f, s->args);
				fputs("\\fR", f);
			}
			fputc('\n', f);
			roff_lines(f, s->help);
		}
		if (c->notes) {
			fputs(".PP\n", f);
			roff_lines(f, c->notes);
		}
		const fathom_setting_info *st;
		for (size_t k = 0; c->args_are == CLI_ARGS_SETTINGS && (st = fathom_setting_at(k)); k++) {
			char text[512];
			cli_setting_line(text, sizeof text, st);
			fputs(".TP\n\\fB", f);
			roff_cstr(f, st->name);
			fputs("\\fR\n", f);
			roff_lines(f, text);
		}
	}
	fputs(".SH COMMON OPTIONS\n", f);
	man_opts(f, cli_opts_global);
	fputs(".TP\n\\fB\\-\\-\\fR\n"
	      "the end of the options: what follows is arguments, even when it starts\n"
	      "with '\\-' (an unknown option is an error)\n"
	      ".SH ENVIRONMENT\n"
	      ".TP\n.B FATHOM_INDEX\n"
	      "the index folder when no \\-\\-index is given (else .fathom)\n"
	      ".SH EXIT STATUS\n"
	      "0 on success, 1 when a search, grep or vocab finds nothing (as grep),\n"
	      "2 on an error.\n"
	      ".SH EXAMPLES\n"
	      ".nf\n"
	      "fathom index \\-\\-index ~/.fathom\\-docs ~/src/project ~/notes\n"
	      "fathom \\-\\-index ~/.fathom\\-docs search \"rate limiting\"\n"
	      "fathom grep \\-\\-index ~/.fathom\\-docs \\-F \\-i \"rate limit\"\n"
	      ".fi\n"
	      ".SH SEE ALSO\n"
	      ".BR rg (1),\n"
	      ".BR grep (1);\n"
	      "the query dialect, the HTTP API and the C library are described in\n"
	      "fathom's docs/QUERY.md and docs/API.md.\n", f);
}

/* ---- the completion scripts ------------------------------------------------------ */

/* The command names, or a command's subcommand names, space-separated. */
static void put_command_names(FILE *f)
{
	for (size_t i = 0; i < cli_ncommands; i++)
		fprintf(f, "%s%s", i ? " " : "", cli_commands[i].name);
}

static void put_sub_names(FILE *f, const cli_sub *subs)
{
	for (const cli_sub *s = subs; s->name; s++)
		fprintf(f, "%s%s", s == subs ? "" : " ", s->name);
}

/* ---- bash --------------------------------------------------------------------- */

/* What a value completes to: the listed choices, folders, files or
 * nothing (a number, a name). */
enum { VAL_NONE, VAL_WORDS, VAL_DIRS, VAL_FILES };

static int value_kind(const cli_opt *o)
{
	if (o->choices)
		return VAL_WORDS;
	if (!o->arg)
		return VAL_NONE;
	if (strcmp(o->arg, "DIR") == 0)
		return VAL_DIRS;
	if (strcmp(o->arg, "FILE") == 0 || strcmp(o->arg, "PATH") == 0)
		return VAL_FILES;
	return VAL_NONE;
}

/* "--name|-l" for a case pattern of bash. */
static void bash_pattern(FILE *f, const cli_opt *o)
{
	if (o->name)
		fprintf(f, "--%s", o->name);
	if (o->letter)
		fprintf(f, "%s-%c", o->name ? "|" : "", o->letter);
}

static void bash_words(FILE *f, const cli_opt *table)
{
	for (const cli_opt *o = table; o->name || o->letter; o++) {
		if (o->name)
			fprintf(f, " --%s", o->name);
		if (o->letter)
			fprintf(f, " -%c", o->letter);
	}
}

static void bash_command(FILE *f, const cli_command *c)
{
	fprintf(f, "\t%s)\n\t\topts='", c->name);
	FOR_TABLES(c, t)
		bash_words(f, c->opts[t]);
	fputs("'\n\t\tcase $prev in\n", f);
	FOR_OPTS(c, o) {
		if (o->has_arg != required_argument)
			continue;
		fputs("\t\t", f);
		bash_pattern(f, o);
		switch (value_kind(o)) {
		case VAL_WORDS: fprintf(f, ") _fathom_words '%s'; return ;;\n", o->choices); break;
		case VAL_DIRS: fputs(") _fathom_files -d; return ;;\n", f); break;
		case VAL_FILES: fputs(") _fathom_files -f; return ;;\n", f); break;
		default: fputs(") return ;;\n", f); break;
		}
	}
	fputs("\t\tesac\n", f);
	switch (c->args_are) {
	case CLI_ARGS_FILES: fputs("\t\targs=files ;;\n", f); break;
	case CLI_ARGS_COMMANDS: fputs("\t\targs=\"$commands\" ;;\n", f); break;
	case CLI_ARGS_WORDS: fprintf(f, "\t\t[ $nargs = 0 ] && args='%s' ;;\n", c->arg_words); break;
	case CLI_ARGS_SETTINGS:
		fputs("\t\t[ $nargs = 0 ] && args='", f);
		cli_put_setting_names(f);
		fputs("' ;;\n", f);
		break;
	default:
		if (c->subs) {
			fputs("\t\t[ $nargs = 0 ] && args='", f);
			put_sub_names(f, c->subs);
			fputs("' ;;\n", f);
		} else {
			fputs("\t\t;;\n", f);
		}
	}
}

static void write_bash(FILE *f)
{
	fputs("# bash completion for fathom: written by 'fathom completion bash' from the\n"
	      "# table that 'fathom help' prints; do not edit.\n"
	      "\n"
	      "_fathom_words() { mapfile -t COMPREPLY < <(compgen -W \"$1\" -- \"$cur\"); }\n"
	      "_fathom_files() {\n"
	      "\tcompopt -o filenames 2> /dev/null\n"
	      "\tmapfile -t COMPREPLY < <(compgen \"$1\" -- \"$cur\")\n"
	      "}\n"
	      "\n"
	      "_fathom() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal commands='", f);
	put_command_names(f);
	fputs("'\n"
	      "\tCOMPREPLY=()\n"
	      "\t# --opt=value arrives as --opt, =, value\n"
	      "\tif [ \"$cur\" = = ]; then cur=; elif [ \"$prev\" = = ] && [ $COMP_CWORD -ge 2 ]; then\n"
	      "\t\tprev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
	      "\t# the command: the first word that is neither an option nor a value\n"
	      "\tlocal cmd= i=1 nargs=0 endopts=\n"
	      "\twhile [ $i -lt $COMP_CWORD ]; do\n"
	      "\t\tlocal w=${COMP_WORDS[i]}\n"
	      "\t\tif [ -z \"$endopts\" ] && [ \"$w\" = --index ]; then\n"
	      "\t\t\t[ \"${COMP_WORDS[i+1]}\" = = ] && i=$((i + 1))\n"
	      "\t\t\ti=$((i + 1))\n"
	      "\t\telif [ -z \"$cmd\" ]; then\n"
	      "\t\t\t[[ $w == -* ]] || cmd=$w\n"
	      "\t\telif [ -n \"$endopts\" ] || [[ $w != -* ]]; then\n"
	      "\t\t\tnargs=$((nargs + 1))\n"
	      "\t\telif [ \"$w\" = -- ]; then\n"
	      "\t\t\tendopts=1\n"
	      "\t\tfi\n"
	      "\t\ti=$((i + 1))\n"
	      "\tdone\n"
	      "\tlocal opts= args=\n"
	      "\tcase $cmd in\n"
	      "\t'')\n"
	      "\t\topts='", f);
	bash_words(f, cli_opts_global);
	fputs("'\n"
	      "\t\t[ \"$prev\" = --index ] && { _fathom_files -d; return; }\n"
	      "\t\targs=$commands ;;\n", f);
	for (size_t i = 0; i < cli_ncommands; i++)
		bash_command(f, &cli_commands[i]);
	fputs("\t*) return ;;\n"
	      "\tesac\n"
	      "\tif [[ $cur == -* ]] && [ -z \"$endopts\" ]; then\n"
	      "\t\t_fathom_words \"$opts\"\n"
	      "\telif [ \"$args\" = files ]; then\n"
	      "\t\t_fathom_files -f\n"
	      "\telif [ -n \"$args\" ]; then\n"
	      "\t\t_fathom_words \"$args\"\n"
	      "\tfi\n"
	      "}\n"
	      "complete -F _fathom fathom\n", f);
	/* a word after a value-taking option other than --index counts as
	 * an argument above; that only matters for glossary, help and
	 * completion, whose first argument is completed, and none of them
	 * has such an option */
}

/* ---- zsh ---------------------------------------------------------------------- */

/* Text inside an _arguments spec, itself inside single quotes: its lines
 * joined into one, up to an aligned example (a line that starts with
 * spaces), with what would end the quotes or the brackets escaped. */
static void zsh_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\n' && s[1] == ' ')
			break;
		if (*s == '\n')
			fputc(' ', f);
		else if (*s == '\'')
			fputs("'\\''", f);
		else if (*s == '[' || *s == ']' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else
			fputc(*s, f);
	}
}

static void zsh_opt(FILE *f, const cli_opt *o)
{
	/* repeatable options may be given again; the others once, by
	 * either spelling */
	int many = strstr(o->help, "repeatable") != NULL;
	const char *eq = o->has_arg == required_argument ? "=" : o->has_arg == optional_argument ?
	                 "=-" : "";
	fputs("\t\t", f);
	if (o->name && o->letter && many)
		fprintf(f, "'*'{-%c,--%s%s}'", o->letter, o->name, eq);
	else if (o->name && o->letter)
		fprintf(f, "'(-%c --%s)'{-%c,--%s%s}'", o->letter, o->name, o->letter, o->name, eq);
	else if (o->name)
		fprintf(f, "'%s--%s%s", many ? "*" : "", o->name, eq);
	else
		fprintf(f, "'%s-%c%s", many ? "*" : "", o->letter, o->has_arg != no_argument ? "+" : "");
	fputc('[', f);
	zsh_text(f, o->help);
	fputc(']', f);
	if (o->has_arg != no_argument) {
		fputs(o->has_arg == optional_argument ? "::" : ":", f);
		zsh_text(f, o->arg ? o->arg : "value");
		switch (value_kind(o)) {
		case VAL_WORDS: fputs(":(", f); zsh_text(f, o->choices); fputs(")", f); break;
		case VAL_DIRS: fputs(":_files -/", f); break;
		case VAL_FILES: fputs(":_files", f); break;
		default: fputs(": ", f); break;
		}
	}
	fputs("' \\\n", f);
}

static void write_zsh(FILE *f)
{
	fputs("#compdef fathom\n"
	      "# zsh completion for fathom: written by 'fathom completion zsh' from the\n"
	      "# table that 'fathom help' prints; do not edit.\n"
	      "\n", f);
	for (size_t i = 0; i < cli_ncommands; i++) {
		const cli_command *c = &cli_commands[i];
		fprintf(f, "_fathom_cmd_%s() {\n\t_arguments -s -S \\\n", c->name);
		FOR_OPTS(c, o)
			zsh_opt(f, o);
		switch (c->args_are) {
		case CLI_ARGS_FILES: fputs("\t\t'*:file:_files'\n", f); break;
		case CLI_ARGS_COMMANDS:
			fputs("\t\t'1:command:(", f);
			put_command_names(f);
			fputs(")'\n", f);
			break;
		case CLI_ARGS_WORDS: fprintf(f, "\t\t'1:argument:(%s)'\n", c->arg_words); break;
		case CLI_ARGS_SETTINGS:
			fputs("\t\t'1:setting:(", f);
			cli_put_setting_names(f);
			fputs(")'\n", f);
			break;
		default:
			if (c->subs) {
				fputs("\t\t'1:subcommand:(", f);
				put_sub_names(f, c->subs);
				fputs(")' \\\n\t\t'*:argument: '\n", f);
			} else {
				fputs("\t\t'*:argument: '\n", f);
			}
		}
		fputs("}\n\n", f);
	}
	fputs("_fathom() {\n"
	      "\tlocal curcontext=$curcontext state line ret=1\n"
	      "\ttypeset -A opt_args\n"
	      "\t_arguments -C \\\n", f);
	for (const cli_opt *o = cli_opts_global; o->name || o->letter; o++) {
		/* -V and -h answer alone: nothing may follow them */
		if (o->has_arg == no_argument && o->name && o->letter) {
			fprintf(f, "\t\t'(- *)'{-%c,--%s}'[", o->letter, o->name);
			zsh_text(f, o->help);
			fputs("]' \\\n", f);
		} else {
			zsh_opt(f, o);
		}
	}
	fputs("\t\t'1:command:->command' \\\n"
	      "\t\t'*::argument:->argument' && ret=0\n"
	      "\tcase $state in\n"
	      "\tcommand)\n"
	      "\t\tlocal -a commands\n"
	      "\t\tcommands=(\n", f);
	for (size_t i = 0; i < cli_ncommands; i++) {
		fprintf(f, "\t\t\t'%s:", cli_commands[i].name);
		zsh_text(f, cli_commands[i].summary);
		fputs("'\n", f);
	}
	fputs("\t\t)\n"
	      "\t\t_describe -t commands 'fathom command' commands && ret=0 ;;\n"
	      "\targument)\n"
	      "\t\tcurcontext=${curcontext%:*:*}:fathom-$words[1]:\n"
	      "\t\tif (( $+functions[_fathom_cmd_$words[1]] )); then\n"
	      "\t\t\t_fathom_cmd_$words[1] && ret=0\n"
	      "\t\tfi ;;\n"
	      "\tesac\n"
	      "\treturn ret\n"
	      "}\n"
	      "\n"
	      "_fathom \"$@\"\n", f);
}

int cli_write_completion(FILE *f, const char *shell)
{
	if (strcmp(shell, "bash") == 0)
		write_bash(f);
	else if (strcmp(shell, "zsh") == 0)
		write_zsh(f);
	else
		return -1;
	return 0;
}
