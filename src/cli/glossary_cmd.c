/*
 * glossary_cmd.c — fathom glossary: alias groups, protected names and the
 * curation queue. Every change is committed before the command returns, so
 * the glossary changes atomically with the index.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int print_item(void *ctx, const fathom_gloss_item *it)
{
	int json = *(int *)ctx;
	if (json) {
		printf("{\"kind\":\"%s\",\"id\":%u,\"terms\":[", it->kind, it->id);
		for (size_t i = 0; i < it->n_terms; i++) {
			if (i)
				fputc(',', stdout);
			cli_json_cstr(stdout, it->terms[i]);
		}
		fputc(']', stdout);
		if (strcmp(it->kind, "candidate") == 0) {
			printf(",\"status\":\"%s\",\"source\":\"%s\",\"count\":%llu,\"evidence\":", it->status,
			       it->source, (unsigned long long)it->count);
			cli_json_cstr(stdout, it->evidence);
		}
		fputs("}\n", stdout);
		return 0;
	}
	printf("%-10s %4u  ", it->kind, it->id);
	for (size_t i = 0; i < it->n_terms; i++)
		printf("%s%s", i ? " = " : "", it->terms[i]);
	if (strcmp(it->kind, "candidate") == 0)
		printf("  [%s, %s, seen %llu times, first in %s]", it->status, it->source,
		       (unsigned long long)it->count, it->evidence);
	fputc('\n', stdout);
	return 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;
	if (cli_parse_u64(s, 1, UINT32_MAX, &v))
		return cli_usage_error("'%s' is not an id (see fathom glossary pending)", s);
	*out = (uint32_t)v;
	return 0;
}

/* A change sent to the daemon that holds the index (POST /glossary). */
static int remote_glossary(const cli_remote *r, const char *sub, char **args, int nargs)
{
	json_t *req = NULL, *reply = NULL;
	const char *target = "/glossary";
	uint32_t id = 0;
	if (strcmp(sub, "add") == 0) {
		if (nargs < 2)
			return cli_usage_error("glossary add TERM TERM...: at least two terms");
		json_t *t = json_array();
		for (int i = 0; i < nargs; i++)
			json_array_append_new(t, json_string(args[i]));
		req = json_pack("{s:o}", "terms", t);
	} else if (strcmp(sub, "remove") == 0 || strcmp(sub, "protect") == 0 ||
	           strcmp(sub, "unprotect") == 0) {
		if (nargs != 1)
			return cli_usage_error("glossary %s wants one argument", sub);
		req = json_pack("{s:s}", sub, args[0]);
	} else if (strcmp(sub, "propose") == 0) {
		req = json_pack("{s:b}", "propose", 1);
	} else if (strcmp(sub, "approve") == 0 || strcmp(sub, "reject") == 0) {
		if (nargs != 1)
			return cli_usage_error("glossary %s ID", sub);
		if (parse_u32(args[0], &id))
			return 2;
		target = "/glossary/review";
		req = json_pack("{s:I,s:s}", "candidate", (json_int_t)id, "decision", sub);
	} else {
		return cli_usage_error("glossary: no subcommand '%s'", sub);
	}
	if (cli_remote_post(r, target, req, &reply))
		return 2;
	json_t *g = json_object_get(reply, "group"), *p = json_object_get(reply, "proposed");
	if (json_is_integer(g))
		printf("group %lld\n", (long long)json_integer_value(g));
	if (json_is_integer(p))
		printf("%lld new candidate%s (fathom glossary pending)\n", (long long)json_integer_value(p),
		       json_integer_value(p) == 1 ? "" : "s");
	json_decref(reply);
	return 0;
}

enum { O_INDEX = 6000, O_JSON };

const cli_opt cli_opts_glossary[] = {
	CLI_OPT_INDEX(O_INDEX),
	{ "json", 0, no_argument, O_JSON, NULL, "JSON output", NULL },
	CLI_OPT_END,
};

const cli_sub cli_glossary_subs[] = {
	{ "add", "TERM TERM...", "make the terms one alias group (auth authentication sign-in)" },
	{ "list", "[KIND]", "groups, protected names and candidates (KIND: group,\n"
	                    "protected, candidate)" },
	{ "remove", "ID|TERM", "drop a group, or a term from its group" },
	{ "protect", "NAME", "never group or expand NAME" },
	{ "unprotect", "NAME", "undo protect" },
	{ "propose", NULL, "scan the corpus for candidates (acronym definitions,\n"
	                   "spelling variants, the corpus embedder's mutual nearest words)" },
	{ "pending", NULL, "the candidates waiting for a decision" },
	{ "approve", "ID", "the candidate becomes a group" },
	{ "reject", "ID", "never propose it again" },
	{ NULL, NULL, NULL },
};

int cmd_glossary(int argc, char **argv)
{
	const char *index = cli_default_index();
	int json = 0, c;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case O_INDEX: index = optarg; break;
		case O_JSON: json = 1; break;
		default: return 2;
		}
	}
	if (optind >= argc)
		return cli_usage_error("glossary: add, list, remove, protect, unprotect, propose, "
		                       "pending, approve or reject?");
	const char *sub = argv[optind++];
	int nargs = argc - optind;
	char **args = argv + optind;
	int readonly = strcmp(sub, "list") == 0 || strcmp(sub, "pending") == 0;
	fathom_index *ix;
	int rc = 0;
	if (readonly) {
		if (cli_open(&ix, index, FATHOM_OPEN_READONLY, NULL))
			return 2;
	} else {
		cli_remote r;
		rc = cli_open_write(&ix, index, FATHOM_OPEN_WRITE, NULL, &r);
		if (rc == 1)
			return remote_glossary(&r, sub, args, nargs);
		if (rc)
			return 2;
	}
	if (readonly) {
		if (nargs > 1 || (nargs == 1 && strcmp(sub, "pending") == 0)) {
			fathom_close(ix);
			return cli_usage_error("glossary %s: unexpected argument", sub);
		}
		const char *kind = strcmp(sub, "pending") == 0 ? "pending" : nargs ? args[0] : NULL;
		rc = fathom_glossary_list(ix, kind, print_item, &json);
		if (rc)
			cli_die_api(rc, "glossary");
		fathom_close(ix);
		return rc ? 2 : 0;
	}
	if (strcmp(sub, "add") == 0) {
		if (nargs < 2) {
			fathom_close(ix);
			return cli_usage_error("glossary add TERM TERM...: at least two terms");
		}
		uint32_t id = 0;
		rc = fathom_glossary_add(ix, (const char *const *)args, (size_t)nargs, &id);
		if (!rc)
			printf("group %u\n", id);
		return cli_commit_close(ix, rc, "glossary add");
	}
	if (strcmp(sub, "remove") == 0 || strcmp(sub, "protect") == 0 || strcmp(sub, "unprotect") == 0) {
		if (nargs != 1) {
			fathom_close(ix);
			return cli_usage_error("glossary %s wants one argument", sub);
		}
		rc = strcmp(sub, "remove") == 0 ? fathom_glossary_remove(ix, args[0])
		                                 : fathom_glossary_protect(ix, args[0], sub[0] == 'p');
		return cli_commit_close(ix, rc, sub);
	}
	if (strcmp(sub, "propose") == 0) {
		size_t n = 0;
		rc = fathom_glossary_propose(ix, &n);
		if (!rc)
			printf("%zu new candidate%s (fathom glossary pending)\n", n, n == 1 ? "" : "s");
		return cli_commit_close(ix, rc, "glossary propose");
	}
	if (strcmp(sub, "approve") == 0 || strcmp(sub, "reject") == 0) {
		uint32_t id = 0;
		if (nargs != 1 || parse_u32(args[0], &id)) {
			fathom_close(ix);
			return nargs != 1 ? cli_usage_error("glossary %s ID", sub) : 2;
		}
		rc = fathom_glossary_decide(ix, id, sub[0] == 'a');
		return cli_commit_close(ix, rc, sub);
	}
	fathom_close(ix);
	return cli_usage_error("glossary: no subcommand '%s'", sub);
}
