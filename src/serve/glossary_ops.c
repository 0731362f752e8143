/*
 * glossary_ops.c — the glossary and the identifier vocabulary: GET and
 * POST /glossary, POST /glossary/review, GET /vocabulary (and the MCP
 * tools glossary_pending and glossary_review). Every change is one
 * commit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_int.h"

#define SV_GLOSS_ROOM 64         /* room for FATHOM_LIMIT_GLOSSARY_TERMS */

static int gloss_cb(void *ctx, const fathom_gloss_item *it)
{
	json_t *a = ctx;
	json_t *terms = json_array();
	for (size_t i = 0; i < it->n_terms; i++)
		json_array_append_new(terms, sv_jstr(it->terms[i]));
	json_t *o = json_pack("{s:s,s:I,s:o}", "kind", it->kind, "id", (json_int_t)it->id, "terms", terms);
	if (strcmp(it->kind, "candidate") == 0) {
		json_object_set_new(o, "status", sv_jstr(it->status));
		json_object_set_new(o, "source", sv_jstr(it->source));
		json_object_set_new(o, "evidence", sv_jstr(it->evidence));
		json_object_set_new(o, "count", json_integer((json_int_t)it->count));
	}
	json_array_append_new(a, o);
	return json_array_size(a) >= 10000;   /* bounded */
}

json_t *sv_do_glossary_list(sv_state *s, const char *kind, sv_err *e)
{
	if (kind && *kind && strcmp(kind, "group") && strcmp(kind, "protected") &&
	    strcmp(kind, "candidate") && strcmp(kind, "pending")) {
		sv_err_set(e, 400, "kind must be group, protected, candidate or pending");
		return NULL;
	}
	fathom_index *ix = sv_reader(s, e);
	if (!ix)
		return NULL;
	json_t *items = json_array();
	int rc = fathom_glossary_list(ix, kind && *kind ? kind : NULL, gloss_cb, items);
	sv_reader_put(s, ix);
	if (rc && rc != 1) {
		json_decref(items);
		sv_err_api(e, rc, "glossary");
		return NULL;
	}
	return json_pack("{s:o}", "items", items);
}

json_t *sv_do_glossary_review(sv_state *s, json_t *args, sv_err *e)
{
	static const char *const known[] = { "candidate", "decision", NULL };
	if (!json_is_object(args) || sv_only_known(args, known, e)) {
		if (!e->status)
			sv_err_set(e, 400, "the request must be a JSON object");
		return NULL;
	}
	long long cand = 0;
	const char *decision = NULL;
	if (sv_arg_int(args, "candidate", 1, UINT32_MAX, &cand, e) <= 0 ||
	    sv_arg_str(args, "decision", &decision, 16, e) <= 0 ||
	    (strcmp(decision, "approve") && strcmp(decision, "reject"))) {
		if (!e->status || e->status == 0)
			sv_err_set(e, 400, "\"candidate\" (an id from the pending list) and \"decision\" "
			                "(approve or reject) are required");
		return NULL;
	}
	fathom_index *w = sv_writer(s, e);
	if (!w)
		return NULL;
	int approve = strcmp(decision, "approve") == 0;
	int rc = fathom_glossary_decide(w, (uint32_t)cand, approve);
	if (rc)
		return sv_write_failed(s, w, rc, "glossary review", e);
	return sv_commit_done(s, w, json_pack("{s:I,s:s}", "candidate", (json_int_t)cand, "decision",
	                                   approve ? "approved" : "rejected"), e);
}

/* POST /glossary: one change, committed: {"terms": [...]} adds a group;
 * {"remove": "id or term"}, {"protect": "name"}, {"unprotect": "name"};
 * {"propose": true} mines new candidates for the review queue. */
json_t *sv_op_glossary_post(sv_state *s, const sv_req *rq, sv_err *e)
{
	json_t *args = rq->args;
	static const char *const acts[] = { "remove", "protect", "unprotect", "propose", NULL };
	if (json_is_object(args) && json_object_size(args) == 1 &&
	    !json_object_get(args, "terms")) {
		if (sv_only_known(args, acts, e))
			return NULL;
		const char *what = json_object_iter_key(json_object_iter(args));
		const char *arg = NULL;
		int prop = 0;
		if (strcmp(what, "propose") == 0) {
			if (sv_arg_bool(args, "propose", &prop, e) <= 0 || !prop) {
				if (!e->status)
					sv_err_set(e, 400, "\"propose\" must be true");
				return NULL;
			}
		} else if (sv_arg_str(args, what, &arg, 256, e) <= 0 || !*arg) {
			if (!e->status)
				sv_err_set(e, 400, "\"%s\" wants a non-empty string", what);
			return NULL;
		}
		fathom_index *w = sv_writer(s, e);
		if (!w)
			return NULL;
		size_t n = 0;
		int rc = prop ? fathom_glossary_propose(w, &n)
		       : strcmp(what, "remove") == 0 ? fathom_glossary_remove(w, arg)
		       : fathom_glossary_protect(w, arg, strcmp(what, "protect") == 0);
		if (rc)
			return sv_write_failed(s, w, rc, "glossary", e);
		json_t *out = prop ? json_pack("{s:I}", "proposed", (json_int_t)n)
		                   : json_pack("{s:s,s:o}", "done", what, "term", sv_jstr(arg));
		return sv_commit_done(s, w, out, e);
	}
	json_t *tj = json_is_object(args) ? json_object_get(args, "terms") : NULL;
	long long lo, hi;
	sv_limit(FATHOM_LIMIT_GLOSSARY_TERMS, SV_GLOSS_ROOM, &lo, &hi);
	if (!json_is_array(tj) || json_array_size(tj) < (size_t)lo || json_array_size(tj) > (size_t)hi) {
		/* too many is the library's ETOOBIG: 413 */
		sv_err_set(e, json_array_size(tj) > (size_t)hi ? 413 : 400,
		           "\"terms\" must be an array of %lld to %lld strings", lo, hi);
		return NULL;
	}
	const char *terms[SV_GLOSS_ROOM];
	size_t i;
	json_t *v;
	json_array_foreach(tj, i, v) {
		if (!json_is_string(v) || json_string_length(v) > 256 || json_string_length(v) == 0) {
			sv_err_set(e, 400, "\"terms\" must be non-empty strings of at most 256 bytes");
			return NULL;
		}
		terms[i] = json_string_value(v);
	}
	fathom_index *w = sv_writer(s, e);
	if (!w)
		return NULL;
	uint32_t group = 0;
	int rc = fathom_glossary_add(w, terms, json_array_size(tj), &group);
	if (rc)
		return sv_write_failed(s, w, rc, "glossary", e);
	return sv_commit_done(s, w, json_pack("{s:I}", "group", (json_int_t)group), e);
}

json_t *sv_op_glossary_review(sv_state *s, const sv_req *rq, sv_err *e)
{
	return sv_do_glossary_review(s, rq->args, e);
}

/* GET /glossary?kind= */
json_t *sv_op_glossary_get(sv_state *s, const sv_req *rq, sv_err *e)
{
	const char *qs = rq->qs;
	int bad = 0;
	char *kind = sv_qs_get(qs, "kind", &bad);
	json_t *res = NULL;
	if (bad)
		sv_err_set(e, 400, "malformed query string (kind)");
	else
		res = sv_do_glossary_list(s, kind, e);
	fathom_free(kind);
	return res;
}

/* ---- the identifier vocabulary ------------------------------------------------------ */

typedef struct vocab_acc {
	json_t *items;
	size_t limit;
} vocab_acc;

static int vocab_cb(void *ctx, const fathom_vocab_entry *v)
{
	vocab_acc *a = ctx;
	if (json_array_size(a->items) >= a->limit)
		return 1;
	json_t *vars = json_array();
	for (size_t i = 0; i < v->n_variants; i++)
		json_array_append_new(vars, sv_jstr(v->variants[i]));
	json_t *cats = json_array();
	for (size_t i = 0; i < v->n_categories; i++)
		json_array_append_new(cats, json_string(v->categories[i]));
	json_array_append_new(a->items, json_pack("{s:o,s:s,s:o,s:o,s:I,s:I}", "key", sv_jstr(v->key),
	                                          "category", v->category, "categories", cats,
	                                          "variants", vars, "chunks", (json_int_t)v->chunks,
	                                          "occurrences", (json_int_t)v->occurrences));
	return 0;
}

/* GET /vocabulary?category=&prefix=&limit= */
json_t *sv_op_vocab(sv_state *s, const sv_req *rq, sv_err *e)
{
	const char *qs = rq->qs;
	int bad = 0;
	char *cat = sv_qs_get(qs, "category", &bad), *prefix = sv_qs_get(qs, "prefix", &bad);
	json_t *lim = sv_qs_int(qs, "limit", &bad), *res = NULL;
	long long limit = lim ? json_integer_value(lim) : 100;
	fathom_index *ix = NULL;
	if (bad || limit < 1 || limit > 100000)
		sv_err_set(e, 400, "malformed query string (category, prefix, limit 1..100000)");
	else if ((ix = sv_reader(s, e)) != NULL) {
		vocab_acc a = { json_array(), (size_t)limit };
		int rc = fathom_vocab(ix, cat && *cat ? cat : NULL, prefix && *prefix ? prefix : NULL,
		                      vocab_cb, &a);
		sv_reader_put(s, ix);
		if (rc && rc != 1) {
			sv_err_api(e, rc, "vocabulary");
			json_decref(a.items);
		} else {
			res = json_pack("{s:o}", "items", a.items);
		}
	}
	fathom_free(cat);
	fathom_free(prefix);
	json_decref(lim);
	return res;
}
