/*
 * fuzz_serve.c — the daemon's request handlers and the MCP message handler
 * on arbitrary input, over a small real index. The input is a selector
 * byte, then (HTTP) a method byte, a target up to the first NUL and a body,
 * or (MCP) one JSON-RPC message. Whatever comes in, the answer is a status
 * and valid JSON, and nothing crashes or leaks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sv_state *st;
static char dir[64];

static void cleanup(void)
{
	sv_close(st);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/fuzz-serve-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	fathom_open_opts oo = FATHOM_OPEN_OPTS_INIT;
	oo.flags = FATHOM_OPEN_CREATE;
	fathom_index *ix;
	if (fathom_open(&ix, dir, &oo))
		abort();
	static const char *const bodies[] = { "The login service validates session tokens.",
	                                      "TC-1001 covers an expired token in AuthService.",
	                                      "Transport Layer Security (TLS) protects the wire." };
	for (int i = 0; i < 3; i++) {
		char id[16];
		snprintf(id, sizeof id, "doc%d", i);
		fathom_doc d = { id, "Title", bodies[i], strlen(bodies[i]), NULL, NULL, 0, NULL, 0, NULL };
		if (fathom_add_doc(ix, &d, NULL))
			abort();
	}
	if (fathom_commit(ix))
		abort();
	fathom_close(ix);
	/* writes go through, and are undone by the next input's lack of them;
	 * a small body limit and time limit keep each input quick */
	sv_opts o = { dir, 0, 0, 1u << 16, 2.0, 0, 0, 0 };
	char why[256];
	if (sv_open(&st, &o, why, sizeof why))
		abort();
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!st)
		setup();
	if (size < 2)
		return 0;
	if (data[0] & 1) {
		char *r = sv_mcp_message(st, (const char *)data + 1, size - 1);
		if (r) {
			json_t *j = json_loads(r, 0, NULL);
			if (!j)
				abort();   /* an answer that is not JSON */
			json_decref(j);
			fathom_free(r);
		}
		return 0;
	}
	static const char *const methods[] = { "GET", "POST", "DELETE", "PUT", "HEAD" };
	const char *method = methods[data[1] % 5];
	const uint8_t *p = data + 2, *end = data + size;
	const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
	size_t tl = nul ? (size_t)(nul - p) : (size_t)(end - p);
	char *target = malloc(tl + 2);
	if (!target)
		return 0;
	target[0] = '/';
	memcpy(target + 1, p, tl);
	target[tl + 1] = '\0';
	const char *body = nul ? (const char *)nul + 1 : NULL;
	size_t blen = nul ? (size_t)(end - nul - 1) : 0;
	sv_reply r;
	sv_handle(st, method, target, body, blen, &r);
	if (r.status < 200 || r.status > 599 || !r.body)
		abort();
	if (strcmp(r.ctype, "application/json") == 0 && r.status != 202) {
		json_t *j = json_loadb(r.body, r.len, 0, NULL);
		if (!j)
			abort();
		json_decref(j);
	}
	sv_reply_free(&r);
	free(target);
	return 0;
}
