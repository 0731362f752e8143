/*
 * config_cmd.c — fathom config: the index's own defaults (k, matching
 * mode, BM25 parameters, field weights, snippet size, ignore rules, size
 * caps). The settings, their types and bounds are the library's table
 * (fathom_setting_at), and --json is the library's serializer
 * (fathom_config_json); this file only lists, prints and changes them. A
 * change is committed before the command returns, atomically with the
 * index (it is one commit); while a daemon holds the index it is sent
 * there (POST /config) and committed by it.
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

/* One setting (name) or all (NULL) as the library's serializer writes them. */
static int print_json(fathom_index *ix, const char *name)
{
	char *text = NULL;
	int rc = fathom_config_json(&text, NULL, ix, name);
	if (rc) {
		cli_die_api(rc, "config");
		return 2;
	}
	puts(text);
	fathom_free(text);
	return 0;
}

/* The longest setting name: the column the "=" signs line up at. */
static int name_width(void)
{
	size_t w = 0;
	const fathom_setting_info *s;
	for (size_t i = 0; (s = fathom_setting_at(i)) != NULL; i++)
		w = strlen(s->name) > w ? strlen(s->name) : w;
	return (int)w;
}

/* name = value, "(default)" when the index does not set it; patterns one
 * per line below the name. */
static void human_setting(const fathom_setting_info *s, const char *v, int set)
{
	int w = name_width();
	if (s->type == FATHOM_SETTING_PATTERNS) {
		printf("%-*s =%s\n", w, s->name, set ? "" : " (default: none)");
		for (const char *p = v; *p;) {
			size_t n = strcspn(p, "\n");
			printf("    %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
		return;
	}
	printf("%-*s = %s%s\n", w, s->name, v, set ? "" : " (default)");
}

static int list_all(fathom_index *ix)
{
	const fathom_setting_info *s;
	for (size_t i = 0; (s = fathom_setting_at(i)) != NULL; i++) {
		char *v = NULL;
		int set = 0, rc = fathom_config_get(&v, &set, ix, s->name);
		if (rc) {
			cli_die_api(rc, "config");
			return 2;
		}
		human_setting(s, v, set);
		fathom_free(v);
	}
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
		if (json) {
			rc = print_json(ix, nargs ? s->name : NULL);
		} else if (nargs == 0) {
			rc = list_all(ix);
		} else {
			char *v = NULL;
			int set = 0;
			rc = fathom_config_get(&v, &set, ix, s->name);
			if (rc) {
				cli_die_api(rc, "config");
				rc = 2;
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
	/* a value set on a new folder creates the index (its settings before
	 * its first documents); an unset needs one */
	int rc = cli_open_write(&ix, index, unset ? FATHOM_OPEN_WRITE : FATHOM_OPEN_CREATE, NULL, &r);
	if (rc == 1) {
		/* the daemon holds the lock: it commits the change (POST /config) */
		json_t *req = unset ? json_pack("{s:s,s:b}", "key", s->name, "unset", 1)
		                    : json_pack("{s:s,s:s}", "key", s->name, "value", value), *reply = NULL;
		free(value);
		if (!req || cli_remote_post(&r, "/config", req, &reply))
			return 2;
		json_decref(reply);
		return 0;
	}
	if (rc) {
		free(value);
		return 2;
	}
	rc = unset ? fathom_config_unset(ix, s->name) : fathom_config_set(ix, s->name, value);
	free(value);
	return cli_commit_close(ix, rc, "config");
}
