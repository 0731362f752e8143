/*
 * config_ops.c — the index's settings over HTTP: GET /config (the library's
 * one serializer of them, as `fathom config --json` prints) and POST
 * /config (set or unset one; a change is one commit), which `fathom
 * config` uses while a daemon holds the index.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

json_t *sv_op_config_get(sv_state *s, const sv_req *rq, sv_err *e)
{
	(void)rq;
	fathom_index *ix = sv_reader(s, e);
	if (!ix)
		return NULL;
	char *text = NULL;
	int rc = fathom_config_json(&text, NULL, ix, NULL);
	uint64_t gen = fathom_generation(ix);
	sv_reader_put(s, ix);
	if (rc) {
		sv_err_api(e, rc, "config");
		return NULL;
	}
	json_t *settings = json_loads(text, 0, NULL);
	fathom_free(text);
	if (!settings) {
		sv_err_set(e, 500, "out of memory");
		return NULL;
	}
	return json_pack("{s:o,s:I}", "settings", settings, "generation", (json_int_t)gen);
}

/* {"key": "k", "value": "20"} sets (a number is taken as its text, an
 * array of strings as patterns one per line); {"key": "k", "unset": true}
 * unsets. The library checks the value against its table. */
json_t *sv_op_config_post(sv_state *s, const sv_req *rq, sv_err *e)
{
	static const char *const known[] = { "key", "value", "unset", NULL };
	json_t *args = rq->args;
	if (!json_is_object(args) || sv_only_known(args, known, e)) {
		if (!e->status)
			sv_err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	const char *key = NULL;
	int unset = 0;
	if (sv_arg_str(args, "key", &key, 64, e) < 0 || sv_arg_bool(args, "unset", &unset, e) < 0)
		return NULL;
	json_t *v = json_object_get(args, "value");
	if (!key || !fathom_setting_find(key) || (unset ? v != NULL : v == NULL)) {
		sv_err_set(e, 400, "\"key\" (a setting: GET /config lists them) and either \"value\" "
		                "or \"unset\": true are required");
		return NULL;
	}
	char num[64], *joined = NULL;
	const char *value = NULL;
	if (json_is_string(v)) {
		value = json_string_value(v);
	} else if (json_is_integer(v)) {
		snprintf(num, sizeof num, "%lld", (long long)json_integer_value(v));
		value = num;
	} else if (json_is_real(v)) {
		snprintf(num, sizeof num, "%.17g", json_real_value(v));
		value = num;
	} else if (json_is_array(v)) {
		size_t i, n = 1;
		json_t *p;
		json_array_foreach(v, i, p) {
			if (!json_is_string(p) || json_string_length(p) > 65536) {
				sv_err_set(e, 400, "\"value\" as an array holds patterns (strings)");
				return NULL;
			}
			n += json_string_length(p) + 1;
		}
		if (n > (64u << 10) || !(joined = fathom_malloc(n))) {
			sv_err_set(e, n > (64u << 10) ? 400 : 500, "\"value\" is too long");
			return NULL;
		}
		joined[0] = '\0';
		json_array_foreach(v, i, p) {
			if (i)
				strcat(joined, "\n");
			strcat(joined, json_string_value(p));
		}
		value = joined;
	} else if (!unset) {
		sv_err_set(e, 400, "\"value\" must be a string, a number or an array of strings");
		return NULL;
	}
	fathom_index *w = sv_writer(s, e);
	if (!w) {
		fathom_free(joined);
		return NULL;
	}
	int rc = unset ? fathom_config_unset(w, key) : fathom_config_set(w, key, value);
	fathom_free(joined);
	if (rc)
		return sv_write_failed(s, w, rc, "config", e);
	char *now = NULL;
	int set = 0;
	if (fathom_config_get(&now, &set, w, key) != 0)
		return sv_write_failed(s, w, FATHOM_ENOMEM, "config", e);
	json_t *out = json_pack("{s:s,s:s,s:b}", "key", key, "value", now, "set", set);
	fathom_free(now);
	return sv_commit_done(s, w, out, e);
}
