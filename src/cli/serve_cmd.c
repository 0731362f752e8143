/*
 * serve_cmd.c — `fathom serve` (the HTTP daemon) and `fathom mcp` (the MCP
 * server on stdio): options, then src/serve does the work.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "serve/serve.h"

#define MAX_ALLOW 16
#define MAX_WATCH 64

/* serve's and mcp's defaults: 64 MiB bodies, 30 s a request. */
#define SV_OPTS_DEFAULT { .max_body = 64u << 20, .request_timeout = 30.0 }

/* Open the index for serving: its folder made absolute, and the current
 * folder moved to the index's root, so grep paths read as the index has
 * them whatever folder the daemon was started from. An index with no root
 * (built from absolute paths) gets "/": a relative path is refused there,
 * and an id that is no path is never read as one against the folder the
 * daemon happened to start in. On failure, 2 and why (also printed). */
static int open_state(sv_state **out, sv_opts *so, const char *index, char *why, size_t whylen)
{
	char abs[PATH_MAX];
	if (!realpath(index, abs)) {
		snprintf(why, whylen, "%s: %s (build one with 'fathom index' first)", index,
		         strerror(errno));
		fprintf(stderr, "%s: %s\n", cli_prog, why);
		return 2;
	}
	so->index = abs;
	int rc = sv_open(out, so, why, whylen);
	if (rc) {
		const char *detail = fathom_errmsg();
		snprintf(why, whylen, "%s: %s%s%s%s", index, detail && *detail ? detail : "",
		         detail && *detail ? " (" : "", fathom_strerror(rc), detail && *detail ? ")" : "");
		fprintf(stderr, "%s: %s\n", cli_prog, why);
		return 2;
	}
	if (why[0])
		fprintf(stderr, "%s: serving read-only: %s\n", cli_prog, why);
	fathom_index *r = sv_reader_get(*out);
	const char *root = r ? fathom_root(r) : "";
	if (root && *root && chdir(root) != 0)
		fprintf(stderr, "%s: %s: %s (grep paths are relative to %s)\n", cli_prog, root,
		        strerror(errno), abs);
	else if ((!root || !*root) && chdir("/") != 0)
		fprintf(stderr, "%s: /: %s\n", cli_prog, strerror(errno));
	sv_reader_put(*out, r);
	return 0;
}

/* --max-reply-bytes: the MCP tools' replies, at most (16 KiB to 1 GiB). */
static int parse_max_reply(const char *arg, sv_opts *so)
{
	uint64_t v;
	if (cli_parse_u64(arg, 16384, (uint64_t)1 << 30, &v))
		return cli_usage_error("--max-reply-bytes wants bytes from 16384 to 1073741824");
	so->max_reply = (size_t)v;
	return 0;
}

enum { O_INDEX = 1000, O_LISTEN, O_TOKEN, O_ALLOW, O_MAXBODY, O_TIMEOUT, O_MAXCONN, O_IDLE,
       O_RO, O_WATCH, O_DEBOUNCE, O_MAXREPLY, O_ORIGIN, O_HEAD };

#define OPT_READ_ONLY(what) { "read-only", 0, no_argument, O_RO, NULL, what, NULL }
#define OPT_MAX_REPLY(what)                                                                  \
	{ "max-reply-bytes", 0, required_argument, O_MAXREPLY, "N", what, NULL }

const cli_opt cli_opts_serve[] = {
	CLI_OPT_INDEX(O_INDEX),
	{ "listen", 0, required_argument, O_LISTEN, "HOST:PORT",
	  "address (default 127.0.0.1:7700; port 0: any free one)", NULL },
	{ "token-file", 0, required_argument, O_TOKEN, "FILE",
	  "require 'Authorization: Bearer TOKEN' (TOKEN: the file)", NULL },
	{ "allow-host", 0, required_argument, O_ALLOW, "NAME",
	  "accept this Host/Origin name too (DNS rebinding guard)", NULL },
	{ "allow-origin", 0, required_argument, O_ORIGIN, "URL",
	  "let a browser client from this origin (http://HOST:PORT)\n"
	  "call the daemon (CORS: preflight OPTIONS answered)", NULL },
	{ "max-body", 0, required_argument, O_MAXBODY, "BYTES",
	  "largest request body (default 64 MiB)", NULL },
	{ "timeout", 0, required_argument, O_TIMEOUT, "SECONDS",
	  "time a search, grep or ingest may run (default 30; 0: none)", NULL },
	{ "max-connections", 0, required_argument, O_MAXCONN, "N",
	  "concurrent connections (default 256; one client address\n"
	  "may hold all but N/16, at least one, of them)", NULL },
	{ "idle-timeout", 0, required_argument, O_IDLE, "S",
	  "close a connection silent this long (default 30)", NULL },
	{ "head-timeout", 0, required_argument, O_HEAD, "S",
	  "close a connection whose request head (or, kept alive,\n"
	  "its next one) takes longer than this in all (default 10)", NULL },
	OPT_READ_ONLY("never take the writer lock"),
	{ "watch", 0, required_argument, O_WATCH, "PATH",
	  "keep PATH's files indexed as they change (inotify;\n"
	  "repeatable; as given to 'fathom index')", NULL },
	{ "debounce", 0, required_argument, O_DEBOUNCE, "SECONDS",
	  "quiet time before a watch batch (default 0.2)", NULL },
	OPT_MAX_REPLY("largest MCP tool reply at /mcp (default 256 KiB); a\n"
	              "larger one comes in pages (the tools' offset)"),
	{ "quiet", 'q', no_argument, 0, NULL,
	  "no lines on stderr when the daemon starts, stops or\n"
	  "re-indexes watched files", NULL },
	CLI_OPT_END,
};

const cli_opt cli_opts_mcp[] = {
	CLI_OPT_INDEX(O_INDEX),
	OPT_READ_ONLY("never write: the glossary_review tool is not offered"),
	OPT_MAX_REPLY("largest tool reply (default 256 KiB, from 16384); a\n"
	              "larger one comes in pages: reply_truncated, next_offset,\n"
	              "and the same call with offset=next_offset goes on"),
	CLI_OPT_END,
};

int cmd_serve(int argc, char **argv)
{
	const char *index = cli_default_index();
	sv_opts so = SV_OPTS_DEFAULT;
	char *watch[MAX_WATCH];
	int nwatch = 0;
	double debounce = 0.2;
	sv_http_opts ho = { "127.0.0.1:7700", NULL, NULL, 0, 256, 65536, 30, 0, NULL, 0, 10.0 };
	const char *allow[MAX_ALLOW], *origins[MAX_ALLOW];
	uint64_t v;
	double d;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case O_INDEX: index = optarg; break;
		case O_LISTEN: ho.listen = optarg; break;
		case O_TOKEN: ho.token_file = optarg; break;
		case O_ALLOW:
			if (ho.n_allow_hosts == MAX_ALLOW)
				return cli_usage_error("at most %d --allow-host", MAX_ALLOW);
			allow[ho.n_allow_hosts++] = optarg;
			break;
		case O_MAXBODY:
			if (cli_parse_u64(optarg, 1024, (uint64_t)1 << 34, &v))
				return cli_usage_error("--max-body wants bytes from 1024");
			so.max_body = (size_t)v;
			break;
		case O_TIMEOUT:
			if (cli_parse_float(optarg, 0, 86400, &d))
				return cli_usage_error("--timeout wants seconds (0: none)");
			so.request_timeout = d;
			break;
		case O_MAXCONN:
			if (cli_parse_u64(optarg, 1, 100000, &v))
				return cli_usage_error("--max-connections wants a number from 1");
			ho.max_connections = (unsigned)v;
			break;
		case O_IDLE:
			if (cli_parse_u64(optarg, 1, 3600, &v))
				return cli_usage_error("--idle-timeout wants seconds from 1 to 3600");
			ho.idle_timeout = (unsigned)v;
			break;
		case O_HEAD:
			if (cli_parse_float(optarg, 0.1, 3600, &d))
				return cli_usage_error("--head-timeout wants seconds from 0.1 to 3600");
			ho.head_timeout = d;
			break;
		case O_RO: so.read_only = 1; break;
		case 'q': ho.quiet = 1; break;
		case O_WATCH:
			if (nwatch == MAX_WATCH)
				return cli_usage_error("at most %d --watch", MAX_WATCH);
			watch[nwatch++] = optarg;
			break;
		case O_DEBOUNCE:
			if (cli_parse_float(optarg, 0.01, 60, &debounce))
				return cli_usage_error("--debounce wants seconds from 0.01 to 60");
			break;
		case O_MAXREPLY:
			if (parse_max_reply(optarg, &so))
				return 2;
			break;
		case O_ORIGIN:
			if (ho.n_cors_origins == MAX_ALLOW)
				return cli_usage_error("at most %d --allow-origin", MAX_ALLOW);
			if (strncmp(optarg, "http://", 7) != 0 && strncmp(optarg, "https://", 8) != 0)
				return cli_usage_error("--allow-origin wants an origin: http://HOST:PORT or "
				                       "https://HOST:PORT");
			origins[ho.n_cors_origins++] = optarg;
			break;
		default: return 2;
		}
	}
	if (optind < argc)
		return cli_usage_error("serve takes no arguments ('%s')", argv[optind]);
	ho.allow_hosts = allow;
	ho.cors_origins = origins;
	/* made absolute before the move to the index's root, and written to
	 * SERVE so the CLI on this machine can authenticate (file permissions
	 * decide who may) */
	char token_abs[PATH_MAX];
	if (ho.token_file) {
		if (!realpath(ho.token_file, token_abs)) {
			fprintf(stderr, "%s: --token-file %s: %s\n", cli_prog, ho.token_file, strerror(errno));
			return 2;
		}
		ho.token_file = token_abs;
		so.any_path = 1;   /* POST /index may read outside the root: callers are known */
	}
	so.confine = !so.any_path;   /* and grep and get read nothing outside it */
	/* the watched paths as the daemon, in the index's root, must name them */
	json_t *wp = NULL;
	if (nwatch && !(wp = cli_daemon_paths(index, watch, nwatch)))
		return 2;
	sv_state *s;
	char why[1024];
	int rc = open_state(&s, &so, index, why, sizeof why);
	if (rc) {
		json_decref(wp);
		return rc;
	}
	if (wp) {
		const char *paths[MAX_WATCH];
		for (int i = 0; i < nwatch; i++)
			paths[i] = json_string_value(json_array_get(wp, (size_t)i));
		char err[512];
		if (sv_serve_watch_start(s, paths, (size_t)nwatch, debounce, ho.quiet, err, sizeof err)) {
			fprintf(stderr, "%s: --watch: %s\n", cli_prog, err);
			json_decref(wp);
			sv_close(s);
			return 2;
		}
	}
	rc = sv_http_run(s, &ho);
	sv_serve_watch_stop();
	json_decref(wp);
	sv_close(s);
	return rc;
}

int cmd_mcp(int argc, char **argv)
{
	const char *index = cli_default_index();
	sv_opts so = SV_OPTS_DEFAULT;
	int c;
	optind = 1;
	while ((c = cli_getopt(argc, argv)) != -1) {
		switch (c) {
		case O_INDEX: index = optarg; break;
		case O_RO: so.read_only = 1; break;
		case O_MAXREPLY:
			if (parse_max_reply(optarg, &so))
				return 2;
			break;
		default: return 2;
		}
	}
	if (optind < argc)
		return cli_usage_error("mcp takes no arguments ('%s')", argv[optind]);
	so.lazy_writer = 1;   /* glossary_review takes the lock for its commit alone */
	/* stdout is the protocol's: nothing else may be printed there. Without
	 * an index the server still answers the handshake, and each tool call
	 * says why it cannot work: a client that sees only a closed connection
	 * cannot tell its user what is wrong. */
	sv_state *s = NULL;
	char why[1024];
	if (open_state(&s, &so, index, why, sizeof why)) {
		char reason[1200];
		snprintf(reason, sizeof reason, "fathom has no index to serve: %s", why);
		return sv_mcp_stdio(NULL, &so, reason);
	}
	int rc = sv_mcp_stdio(s, &so, NULL);
	sv_close(s);
	return rc;
}
