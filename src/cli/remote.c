/*
 * remote.c — writes through a running daemon. When `fathom index`, `add`,
 * `delete`, `glossary` or `optimize` finds the index's writer lock held and
 * <index>/SERVE names a live `fathom serve`, the write goes to that daemon
 * over HTTP (libcurl) instead of failing on the lock; the daemon commits it
 * and every search it serves sees it at once.
 *
 * SERVE is one line: "URL PID TOKEN_FILE" (TOKEN_FILE "-" when the daemon
 * wants no token). The token is read from that file, so who may write
 * through the daemon is who may read the file.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "cli.h"

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

int cli_remote_find(const char *index, cli_remote *r)
{
	memset(r, 0, sizeof *r);
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/SERVE", index);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[PATH_MAX + 512], tok[PATH_MAX];
	int ok = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	long pid = 0;
	tok[0] = '\0';
	if (!ok || sscanf(line, "%319s %ld %4095s", r->url, &pid, tok) < 2 ||
	    strncmp(r->url, "http://", 7) != 0 || pid <= 0)
		return -1;
	/* a daemon killed with -9 leaves SERVE behind */
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return -1;
	r->pid = pid;
	if (tok[0] && strcmp(tok, "-") != 0) {
		FILE *t = fopen(tok, "r");
		if (!t || !fgets(r->token, sizeof r->token, t)) {
			fprintf(stderr, "%s: the daemon at %s wants the token in %s: %s\n", cli_prog, r->url,
			        tok, t ? "it is empty" : strerror(errno));
			if (t)
				fclose(t);
			return -2;
		}
		fclose(t);
		trim(r->token);
	}
	return 0;
}

int cli_open_write(fathom_index **out, const char *dir, unsigned flags, const char *stem,
                   cli_remote *r)
{
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = flags;
	oo.stem_language = stem;
	int rc = fathom_open(out, dir, &oo);
	if (rc == FATHOM_ELOCKED) {
		int f = cli_remote_find(dir, r);
		if (f == 0) {
			if (stem) {
				fprintf(stderr, "%s: --stem applies when an index is created; the index %s "
				                "exists (served at %s)\n", cli_prog, dir, r->url);
				return 2;
			}
			return 1;
		}
		if (f == -2)
			return 2;
	}
	if (rc) {
		char what[600];
		snprintf(what, sizeof what, "cannot open index %s", dir);
		cli_die_api(rc, what);
		if (rc == FATHOM_ELOCKED)
			fprintf(stderr, "(no daemon serves it to send the write to: another process "
			                "is writing; try again when it is done)\n");
		return 2;
	}
	return 0;
}

int cli_remote_call(const cli_remote *r, const char *method, const char *target,
                    const char *ctype, const char *body, size_t len, json_t **reply)
{
	*reply = NULL;
	static int inited;
	if (!inited) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		inited = 1;
	}
	CURL *c = curl_easy_init();
	if (!c) {
		fprintf(stderr, "%s: out of memory (curl)\n", cli_prog);
		return 2;
	}
	char url[4096 + 400];
	snprintf(url, sizeof url, "%s%s", r->url, target);
	struct curl_slist *h = NULL;
	char hb[640];
	if (ctype) {
		snprintf(hb, sizeof hb, "Content-Type: %s", ctype);
		h = curl_slist_append(h, hb);
	}
	if (r->token[0]) {
		snprintf(hb, sizeof hb, "Authorization: Bearer %s", r->token);
		h = curl_slist_append(h, hb);
	}
	h = curl_slist_append(h, "Expect:");   /* no 100-continue round trip */
	char *resp = NULL;
	size_t resp_len = 0;
	FILE *out = open_memstream(&resp, &resp_len);   /* curl's default writer fwrites here */
	if (!out) {
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		return 2;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	CURLcode cc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	int rc = 0;
	if (fclose(out) != 0) {   /* resp and resp_len are final after it */
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		rc = 2;
	} else if (cc != CURLE_OK) {
		fprintf(stderr, "%s: the daemon at %s: %s\n", cli_prog, r->url, curl_easy_strerror(cc));
		rc = 2;
	} else {
		json_error_t je;
		json_t *j = resp_len ? json_loadb(resp, resp_len, 0, &je) : NULL;
		if (status / 100 != 2) {
			json_t *m = json_object_get(json_object_get(j, "error"), "message");
			fprintf(stderr, "%s: the daemon at %s answered %ld: %s\n", cli_prog, r->url, status,
			        json_is_string(m) ? json_string_value(m) : "(no message)");
			json_decref(j);
			rc = 2;
		} else {
			*reply = j ? j : json_object();
		}
	}
	free(resp);
	return rc;
}

/* Percent-encode s (RFC 3986 unreserved kept) into out; 0, or -1 if it
 * does not fit. */
int cli_pct_encode(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int keep = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		           (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~';
		if (o + (keep ? 1 : 3) >= cap)
			return -1;
		if (keep) {
			out[o++] = (char)*p;
		} else {
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* POST a JSON object; reply as for cli_remote_call. Steals args. */
int cli_remote_post(const cli_remote *r, const char *target, json_t *args, json_t **reply)
{
	char *body = json_dumps(args, JSON_COMPACT);
	json_decref(args);
	if (!body) {
		fprintf(stderr, "%s: out of memory\n", cli_prog);
		return 2;
	}
	int rc = cli_remote_call(r, "POST", target, "application/json", body, strlen(body), reply);
	free(body);
	return rc;
}

static uint64_t ju(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);
	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

void cli_remote_stats(json_t *reply, fathom_ingest_stats *st)
{
	st->docs_added += ju(reply, "added");
	st->chunks_added += ju(reply, "chunks");
	st->files_seen += ju(reply, "files_seen");
	st->files_indexed += ju(reply, "files_indexed");
	st->files_unchanged += ju(reply, "files_unchanged");
	st->files_deleted += ju(reply, "files_deleted");
	st->files_skipped += ju(reply, "files_skipped");
	st->files_grep_only += ju(reply, "files_grep_only");
	st->bytes_read += ju(reply, "bytes_read");
	st->invalid_utf8 += ju(reply, "invalid_utf8");
	json_t *sec = json_object_get(reply, "seconds");
	if (json_is_number(sec))
		st->elapsed_sec += json_number_value(sec);
	json_t *sk = json_object_get(reply, "skipped");
	for (int i = 1; i < 16; i++)
		st->skipped_by_reason[i] += ju(sk, fathom_skip_reason_name(i));
}

/* Lexically normalise an absolute path in place: "." and ".." parts and
 * repeated slashes go, as the index's own key rebasing does. */
static void lexical(char *p)
{
	char *out = p, *in = p;
	while (*in) {
		while (*in == '/')
			in++;
		char *e = strchr(in, '/');
		size_t n = e ? (size_t)(e - in) : strlen(in);
		if (n == 0)
			break;
		if (n == 1 && in[0] == '.') {
		} else if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (out > p && *--out != '/')
				;
		} else {
			*out++ = '/';
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

/* The paths as the daemon, working in the index's root folder, must see
 * them to give every file the key a local run would: from inside the root,
 * relative to it; from outside it, absolute (a local run keys those by the
 * absolute path). */
json_t *cli_daemon_paths(const char *index, char **paths, int n)
{
	fathom_index *ro = NULL;
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_READONLY;
	int rc = fathom_open(&ro, index, &oo);
	if (rc) {
		cli_die_api(rc, index);
		return NULL;
	}
	char root[4096], cwd[4096];
	snprintf(root, sizeof root, "%s", fathom_root(ro) ? fathom_root(ro) : "");
	fathom_close(ro);
	if (!getcwd(cwd, sizeof cwd)) {
		fprintf(stderr, "%s: cannot tell the current folder\n", cli_prog);
		return NULL;
	}
	size_t rl = strlen(root);
	int inside = rl && (strcmp(root, "/") == 0 || strcmp(cwd, root) == 0 ||
	                    (strncmp(cwd, root, rl) == 0 && cwd[rl] == '/'));
	json_t *out = json_array();
	for (int i = 0; i < n; i++) {
		char abs[8300];
		if (paths[i][0] == '/') {
			json_array_append_new(out, json_string(paths[i]));
			continue;
		}
		if (!rl) {
			fprintf(stderr, "%s: the index has no root folder yet, so the daemon cannot tell "
			                "what '%s' is relative to: give absolute paths\n", cli_prog, paths[i]);
			json_decref(out);
			return NULL;
		}
		snprintf(abs, sizeof abs, "%s/%s", cwd, paths[i]);
		lexical(abs);
		if (!inside) {
			json_array_append_new(out, json_string(abs));
			continue;
		}
		const char *rel = strcmp(root, "/") == 0 ? abs + 1 : abs + rl;
		while (*rel == '/')
			rel++;
		json_array_append_new(out, json_string(*rel ? rel : "."));
	}
	return out;
}
