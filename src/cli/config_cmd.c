/*
 * config_cmd.c — fathom config: the index's own defaults (k, matching
 * mode, BM25 parameters, field weights, snippet size, ignore rules, size
 * caps). The settings, their types and bounds are the library's table
 * (fathom_setting_at); this file only lists, prints and changes them. A
 * change is committed before the command returns, atomically with the
 * index (it is one commit).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { O_INDEX = 6100, O_JSON, O_UNSET };

const cli_opt cli_opts_config[] = {
	CLI_OPT_INDEX(O_INDEX),
	{ "unset", 0, no_argument, O_UNSET, NULL,
	  "unset KEY: its default applies again (also: --reset)", NULL },
	{ "reset", 0, no_argument, O_UNSET, NULL, "the same as --unset", NULL },
	{ "json", 0, no_argument, O_JSON, NULL, "JSON output", NULL },
	CLI_OPT_END,
};

static const char *type_name(int type)
{
	switch (type) {
	case FATHOM_SETTING_INT: return "integer";
	case FATHOM_SETTING_NUMBER: return "number";
	case FATHOM_SETTING_CHOICE: return "choice";
	case FATHOM_SETTING_PATTERNS: return "patterns";
	case FATHOM_SETTING_STRING: return "string";
	default: return "unknown";
	}
}

/* A value as JSON by its type: a number, an array of patterns, a string. */
static void json_value(const fathom_setting_info *s, const char *v)
{
	if (s->type == FATHOM_SETTING_INT || s->type == FATHOM_SETTING_NUMBER) {
		fputs(v, stdout);
		return;
	}
	if (s->type != FATHOM_SETTING_PATTERNS) {
		cli_json_cstr(stdout, v);
		return;
	}
	fputc('[', stdout);
	for (const char *p = v; *p;) {
		size_t n = strcspn(p, "\n");
		if (p != v)
			fputc(',', stdout);
		cli_json_str(stdout, p, n);
		p += n + (p[n] == '\n');
	}
	fputc(']', stdout);
}

static void json_setting(const fathom_setting_info *s, const char *v, int set)
{
	fputs("{\"name\":", stdout);
	cli_json_cstr(stdout, s->name);
	printf(",\"type\":\"%s\",\"value\":", type_name(s->type));
	json_value(s, v);
	printf(",\"set\":%s,\"default\":", set ? "true" : "false");
	json_value(s, s->default_value);
	if (s->type == FATHOM_SETTING_INT || s->type == FATHOM_SETTING_NUMBER)
		printf(",\"min\":%.17g,\"max\":%.17g", s->min, s->max);
	else if (s->type == FATHOM_SETTING_CHOICE) {
		fputs(",\"choices\":[", stdout);
		for (const char *p = s->choices; *p;) {
			size_t n = strcspn(p, " ");
			if (p != s->choices)
				fputc(',', stdout);
			cli_json_str(stdout, p, n);
			p += n + (p[n] == ' ');
		}
		fputc(']', stdout);
	} else
		printf(",\"max_bytes\":%.0f", s->max);
	fputs(",\"help\":", stdout);
	cli_json_cstr(stdout, s->help);
	fputc('}', stdout);
}

/* name = value, "(default)" when the index does not set it; patterns one
 * per line below the name. */
static void human_setting(const fathom_setting_info *s, const char *v, int set)
{
	if (s->type == FATHOM_SETTING_PATTERNS) {
		printf("%-16s =%s\n", s->name, set ? "" : " (default: none)");
		for (const char *p = v; *p;) {
			size_t n = strcspn(p, "\n");
			printf("    %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
		return;
	}
	printf("%-16s = %s%s\n", s->name, v, set ? "" : " (default)");
}

static int list_all(fathom_index *ix, int json)
{
	if (json)
		fputc('[', stdout);
	const fathom_setting_info *s;
	for (size_t i = 0; (s = fathom_setting_at(i)) != NULL; i++) {
		char *v = NULL;
		int set = 0, rc = fathom_config_get(&v, &set, ix, s->name);
		if (rc) {
			cli_die_api(rc, "config");
			return 2;
		}
		if (json) {
			if (i)
				fputc(',', stdout);
			json_setting(s, v, set);
		} else {
			human_setting(s, v, set);
		}
		fathom_free(v);
	}
	if (json)
		fputs("]\n", stdout);
	return 0;
}

/* The words after KEY as its value: patterns one per word (a line each),
 * anything else exactly one word. NULL (reported) when they do not fit. */
static char *value_of(const fathom_setting_info *s, char **words, int n)
{
	if (n != 1 && s->type != FATHOM_SETTING_PATTERNS) {
		cli_usage_error("config %s takes one value", s->name);
		return NULL;
	}
	size_t len = 1;
	for (int i = 0; i < n; i++)
		len += strlen(words[i]) + 1;
	char *v = malloc(len);
	if (!v) {
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		return NULL;
	}
	v[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (i)
			strcat(v, "\n");
		strcat(v, words[i]);
	}
	return v;
}

int cmd_config(int argc, char **argv)
{
	const char *index = cli_default_index();
	int json = 0, unset = 0, c;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case O_INDEX: index = optarg; break;
		case O_JSON: json = 1; break;
		case O_UNSET: unset = 1; break;
		default: return 2;
		}
	}
	int nargs = argc - optind;
	char **args = argv + optind;
	const fathom_setting_info *s = nargs ? fathom_setting_find(args[0]) : NULL;
	if (nargs && !s)
		return cli_usage_error("config: no setting '%s' (fathom config lists them)", args[0]);
	if (unset && nargs != 1)
		return cli_usage_error("config --unset KEY: one setting");
	fathom_index *ix;
	if (nargs < 2 && !unset) {
		/* reading: no lock taken, a running daemon is no obstacle */
		if (cli_open(&ix, index, FATHOM_OPEN_READONLY, NULL))
			return 2;
		int rc = 0;
		if (nargs == 0) {
			rc = list_all(ix, json);
		} else {
			char *v = NULL;
			int set = 0;
			rc = fathom_config_get(&v, &set, ix, s->name);
			if (rc) {
				cli_die_api(rc, "config");
				rc = 2;
			} else if (json) {
				json_setting(s, v, set);
				fputc('\n', stdout);
			} else {
				printf("%s\n", v);
			}
			fathom_free(v);
		}
		fathom_close(ix);
		return rc;
	}
	char *value = unset ? NULL : value_of(s, args + 1, nargs - 1);
	if (!unset && !value)
		return 2;
	cli_remote r;
	int rc = cli_open_write(&ix, index, FATHOM_OPEN_WRITE, NULL, &r);
	if (rc == 1) {
		free(value);
		fprintf(stderr, "%s: config: 'fathom serve' holds %s (pid %ld); stop it to change a "
		        "setting (fathom help config)\n", cli_prog, index, (long)r.pid);
		return 2;
	}
	if (rc) {
		free(value);
		return 2;
	}
	rc = unset ? fathom_config_unset(ix, s->name) : fathom_config_set(ix, s->name, value);
	const char *what = "config";
	if (!rc && (rc = fathom_commit(ix)) != 0)
		what = "commit failed";
	if (rc) {
		cli_die_api(rc, what);
		fathom_rollback(ix);
	}
	free(value);
	fathom_close(ix);
	return rc ? 2 : 0;
}
