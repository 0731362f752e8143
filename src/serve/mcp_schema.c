/*
 * mcp_schema.c — the MCP tools as docs/openapi.json declares them. The file
 * is built into the binary; its "x-mcp-tools" list gives each tool's name,
 * title, description, input and output schema, and the schemas point
 * ($ref) at the HTTP API's own (SearchRequest, GrepResponse...), so the
 * MCP schemas and the API's cannot drift apart: there is one source.
 * tools/list shows them with every $ref inlined (a client resolves no
 * references into a file it never sees).
 *
 * Every call's arguments are checked against the tool's input schema
 * before the operation runs, with the subset of JSON Schema the file uses
 * (type, enum, minimum, maximum, minLength, maxLength, minItems, maxItems,
 * maxProperties, items, properties, required, additionalProperties,
 * oneOf). tests/e2e/mcp_limits.sh checks that the HTTP operations take
 * what the schemas say, up to each bound and not past it.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "serve/mcp_int.h"

/* docs/openapi.json, NUL-terminated (the Makefile makes mcp_schema.o
 * depend on it; the path is relative to the folder make runs in). */
__asm__(".section .rodata\n"
        ".balign 16\n"
        ".hidden sv_openapi_json\n"
        ".globl sv_openapi_json\n"
        "sv_openapi_json:\n"
        ".incbin \"docs/openapi.json\"\n"
        ".byte 0\n"
        ".previous\n");
extern const char sv_openapi_json[];

#define MAX_DEPTH 32   /* of $refs and of nested schemas */

/* ---- the tools, built once ---------------------------------------------------------- */

static pthread_mutex_t tools_mu = PTHREAD_MUTEX_INITIALIZER;
static json_t *spec;    /* the parsed file */
static json_t *listed;  /* the tools/list array, every tool */

/* The value at a local JSON pointer ("#/components/schemas/X"); NULL when
 * there is none. The pointers are the file's own: no ~0 or ~1 in them. */
static json_t *resolve(const char *ref)
{
	if (strncmp(ref, "#/", 2) != 0)
		return NULL;
	json_t *v = spec;
	char key[128];
	for (const char *p = ref + 2; *p && v;) {
		size_t n = strcspn(p, "/");
		if (n >= sizeof key)
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		v = json_object_get(v, key);
		p += n + (p[n] == '/');
	}
	return v;
}

/* A deep copy of v with every {"$ref": ...} replaced by what it points at. */
static json_t *inline_refs(json_t *v, int depth)
{
	if (depth > MAX_DEPTH)
		return NULL;
	const char *ref = json_string_value(json_object_get(v, "$ref"));
	if (ref) {
		json_t *t = resolve(ref);
		return t ? inline_refs(t, depth + 1) : NULL;
	}
	if (json_is_object(v)) {
		json_t *o = json_object();
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x) {
			json_t *c = inline_refs(x, depth + 1);
			if (!o || !c || json_object_set_new(o, k, c)) {
				json_decref(c);
				json_decref(o);
				return NULL;
			}
		}
		return o;
	}
	if (json_is_array(v)) {
		json_t *a = json_array();
		size_t i;
		json_t *x;
		json_array_foreach(v, i, x) {
			if (!a || json_array_append_new(a, inline_refs(x, depth + 1))) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	return json_copy(v);
}

/* One tool as tools/list shows it. The input schema keeps no top-level
 * oneOf: some clients refuse one there (the Anthropic API takes no
 * oneOf/anyOf/allOf at the top of a tool's schema), so "one of id or path"
 * is said in the descriptions and checked here. A tool that pages answers
 * reply_truncated and next_offset too. */
static json_t *list_entry(json_t *t)
{
	json_t *in = inline_refs(json_object_get(t, "inputSchema"), 0);
	json_t *out = inline_refs(json_object_get(t, "outputSchema"), 0);
	json_t *page = resolve("#/components/schemas/McpPage/properties");
	json_t *props = json_object_get(out, "properties");
	json_t *e = NULL;
	if (!in || !props || !page)
		goto fail;
	json_object_del(in, "oneOf");
	if (json_is_true(json_object_get(t, "pages")) &&
	    (json_object_set_new(props, "reply_truncated",
	                         json_deep_copy(json_object_get(page, "reply_truncated"))) ||
	     json_object_set_new(props, "next_offset",
	                         json_deep_copy(json_object_get(page, "next_offset")))))
		goto fail;
	e = json_pack("{s:O,s:O,s:O,s:o,s:o,s:{s:O,s:b}}", "name", json_object_get(t, "name"), "title",
	              json_object_get(t, "title"), "description", json_object_get(t, "description"),
	              "inputSchema", in, "outputSchema", out, "annotations", "readOnlyHint",
	              json_object_get(t, "readOnly"), "openWorldHint", 0);
	return e;
fail:
	json_decref(in);
	json_decref(out);
	return NULL;
}

/* The file parsed and the list built, on the first use; 0 or -1 (out of
 * memory: tried again on the next use). */
static int tools_ready(void)
{
	pthread_mutex_lock(&tools_mu);
	if (!listed) {
		if (!spec)
			spec = json_loads(sv_openapi_json, 0, NULL);
		json_t *l = spec ? json_array() : NULL, *t;   /* no spec: no list, tried again */
		size_t i;
		json_array_foreach(json_object_get(spec, "x-mcp-tools"), i, t) {
			if (!l || json_array_append_new(l, list_entry(t))) {
				json_decref(l);
				l = NULL;
				break;
			}
		}
		listed = l;
	}
	int rc = listed ? 0 : -1;
	pthread_mutex_unlock(&tools_mu);
	return rc;
}

/* The tool's entry in the file (its input schema with the $refs as they
 * are); NULL when there is none (or, read_only, when it writes). */
static json_t *find(const char *name, int read_only)
{
	if (tools_ready())
		return NULL;
	json_t *t;
	size_t i;
	json_array_foreach(json_object_get(spec, "x-mcp-tools"), i, t) {
		if (strcmp(json_string_value(json_object_get(t, "name")), name) != 0)
			continue;
		if (read_only && !json_is_true(json_object_get(t, "readOnly")))
			return NULL;
		return t;
	}
	return NULL;
}

json_t *sv_mcp_tools(int read_only)
{
	if (tools_ready())
		return NULL;
	json_t *l = json_array(), *t;
	size_t i;
	json_array_foreach(listed, i, t) {
		if (read_only && !json_is_true(json_object_get(json_object_get(t, "annotations"),
		                                               "readOnlyHint")))
			continue;
		if (!l || json_array_append(l, t)) {
			json_decref(l);
			return NULL;
		}
	}
	return l;
}

int sv_mcp_tool_known(const char *name, int read_only)
{
	return find(name, read_only) != NULL;
}

/* ---- arguments against a schema ---------------------------------------------------- */

static const char *type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a number";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	case JSON_NULL: return "null";
	}
	return "?";
}

static int type_is(json_t *v, const char *type)
{
	return !strcmp(type, "object")    ? json_is_object(v)
	     : !strcmp(type, "array")     ? json_is_array(v)
	     : !strcmp(type, "string")    ? json_is_string(v)
	     : !strcmp(type, "integer")   ? json_is_integer(v)
	     : !strcmp(type, "number")    ? json_is_number(v)
	     : !strcmp(type, "boolean")   ? json_is_boolean(v)
	     : !strcmp(type, "null")      ? json_is_null(v) : 1;
}

/* Characters (code points) of a UTF-8 string, as JSON Schema counts them. */
static size_t utf8_chars(const char *s, size_t n)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

static long long num(json_t *schema, const char *key, long long dflt)
{
	json_t *v = json_object_get(schema, key);
	return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static int check(json_t *sc, json_t *v, const char *where, sv_err *e, int depth);

/* oneOf: exactly one branch holds. A choice between required members
 * ("one of id or path") is said as such. */
static int check_one_of(json_t *sc, json_t *v, const char *where, sv_err *e, int depth)
{
	json_t *choices = json_object_get(sc, "oneOf"), *b;
	size_t i, hold = 0;
	char names[200] = "";
	size_t nn = 0;
	json_array_foreach(choices, i, b) {
		sv_err ignore = { 0, "" };
		hold += check(b, v, where, &ignore, depth + 1) == 0;
		const char *r = json_string_value(json_array_get(json_object_get(b, "required"), 0));
		if (r && nn < sizeof names)
			nn += (size_t)snprintf(names + nn, sizeof names - nn, "%s\"%s\"", i ? " or " : "", r);
	}
	if (hold == 1)
		return 0;
	if (nn && nn < sizeof names)
		sv_err_set(e, 400, "arguments: give exactly one of %s", names);
	else
		sv_err_set(e, 400, "argument %s: matches %zu of the schema's choices, want one", where, hold);
	return -1;
}

static int check_object(json_t *sc, json_t *v, const char *where, sv_err *e, int depth)
{
	json_t *props = json_object_get(sc, "properties"), *extra = json_object_get(sc, "additionalProperties");
	json_t *x;
	const char *k;
	size_t i;
	char sub[160];
	if (json_object_size(v) > (size_t)num(sc, "maxProperties", (long long)json_object_size(v))) {
		sv_err_set(e, 400, "argument %s: more than %lld members", where, num(sc, "maxProperties", 0));
		return -1;
	}
	json_array_foreach(json_object_get(sc, "required"), i, x) {
		if (!json_object_get(v, json_string_value(x))) {
			sv_err_set(e, 400, "argument \"%s\" is required", json_string_value(x));
			return -1;
		}
	}
	json_object_foreach(v, k, x) {
		json_t *ps = json_object_get(props, k);
		if (*where)
			snprintf(sub, sizeof sub, "%s.%.64s", where, k);
		else
			snprintf(sub, sizeof sub, "\"%.64s\"", k);
		if (!ps && json_is_false(extra)) {
			char list[256] = "";
			size_t n = 0;
			const char *pk;
			json_t *pv;
			json_object_foreach(props, pk, pv) {
				if (n < sizeof list)
					n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", pk);
			}
			sv_err_set(e, 400, "argument %s: unknown member (known: %s)", sub, n ? list : "none");
			return -1;
		}
		if (!ps)
			ps = json_is_object(extra) ? extra : NULL;
		if (ps && check(ps, x, sub, e, depth + 1))
			return -1;
	}
	return 0;
}

static int check(json_t *sc, json_t *v, const char *where, sv_err *e, int depth)
{
	if (depth > MAX_DEPTH) {
		sv_err_set(e, 400, "argument %s: nested too deep", where);
		return -1;
	}
	const char *ref = json_string_value(json_object_get(sc, "$ref"));
	if (ref)
		return check(resolve(ref), v, where, e, depth + 1);
	const char *type = json_string_value(json_object_get(sc, "type"));
	if (type && !type_is(v, type)) {
		sv_err_set(e, 400, "argument %s: want %s %s, got %s", where,
		           strchr("aeiou", type[0]) ? "an" : "a", type, type_name(v));
		return -1;
	}
	json_t *en = json_object_get(sc, "enum"), *x;
	size_t i;
	if (en) {
		int hit = 0;
		char list[200] = "";
		size_t n = 0;
		json_array_foreach(en, i, x) {
			hit |= json_equal(x, v);
			if (json_is_string(x) && n < sizeof list)
				n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "",
				                      json_string_value(x));
		}
		if (!hit) {
			sv_err_set(e, 400, "argument %s: must be one of %s", where, list);
			return -1;
		}
	}
	if (json_is_integer(v)) {
		long long n = (long long)json_integer_value(v);
		if (n < num(sc, "minimum", n)) {
			sv_err_set(e, 400, "argument %s: %lld is below the minimum %lld", where, n,
			           num(sc, "minimum", 0));
			return -1;
		}
		if (n > num(sc, "maximum", n)) {
			sv_err_set(e, 400, "argument %s: %lld is above the maximum %lld", where, n,
			           num(sc, "maximum", 0));
			return -1;
		}
	}
	if (json_is_string(v)) {
		long long c = (long long)utf8_chars(json_string_value(v), json_string_length(v));
		if (c > num(sc, "maxLength", c) || c < num(sc, "minLength", c)) {
			sv_err_set(e, 400, "argument %s: %lld characters, want %lld to %lld", where, c,
			           num(sc, "minLength", 0), num(sc, "maxLength", c));
			return -1;
		}
	}
	if (json_is_array(v)) {
		long long n = (long long)json_array_size(v);
		if (n > num(sc, "maxItems", n) || n < num(sc, "minItems", n)) {
			sv_err_set(e, 400, "argument %s: %lld items, want %lld to %lld", where, n,
			           num(sc, "minItems", 0), num(sc, "maxItems", n));
			return -1;
		}
		json_t *items = json_object_get(sc, "items");
		char sub[160];
		json_array_foreach(v, i, x) {
			snprintf(sub, sizeof sub, "%.120s[%zu]", where, i);
			if (items && check(items, x, sub, e, depth + 1))
				return -1;
		}
	}
	if (json_is_object(v) && check_object(sc, v, where, e, depth))
		return -1;
	if (json_object_get(sc, "oneOf") && check_one_of(sc, v, where, e, depth))
		return -1;
	return 0;
}

int sv_mcp_check_args(const char *name, json_t *args, sv_err *e)
{
	json_t *t = find(name, 0);
	if (!t) {
		sv_err_set(e, 500, "no schema for the tool %.100s (out of memory?)", name);
		return -1;
	}
	return check(json_object_get(t, "inputSchema"), args, "", e, 0);
}
