/*
 * fts5_bench.c — SQLite FTS5 as a peer (see harness.c for the command line).
 *
 * Table: fts5(id UNINDEXED, title, text, tokenize='porter unicode61'), so
 * the chunk text is stored as well as indexed, as in fathom's doc store.
 * Build: one transaction with journal and sync off, then FTS5's 'optimize'
 * (merge into one segment), the usual last step of a bulk load.
 * Search: SELECT id, rank ... MATCH ? ORDER BY rank LIMIT k, where rank is
 * bm25() with the default column weights; the query is the user's text cut
 * at what unicode61 treats as separators, each token quoted, joined by OR
 * (--match any) or AND (--match all).
 */
#include "harness.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct fts5_ctx {
	sqlite3 *db;
	sqlite3_stmt *insert, *select;
	char *match;      /* the rewritten MATCH expression */
	size_t match_cap;
} fts5_ctx;

static int exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "fts5: %s: %s\n", sql, err ? err : "?");
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

static int fts5_build_begin(void *vctx, const char *where)
{
	fts5_ctx *c = vctx;
	unlink(where);
	if (sqlite3_open(where, &c->db) != SQLITE_OK)
		return -1;
	if (exec(c->db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
	                "PRAGMA cache_size=-262144;"
	                "CREATE VIRTUAL TABLE chunks USING fts5(id UNINDEXED, title, text,"
	                " tokenize='porter unicode61');"
	                "BEGIN;") != 0)
		return -1;
	if (sqlite3_prepare_v2(c->db, "INSERT INTO chunks(id, title, text) VALUES (?1, ?2, ?3)",
	                       -1, &c->insert, NULL) != SQLITE_OK)
		return -1;
	return 0;
}

static int fts5_build_add(void *vctx, const char *id, const char *title, size_t title_len,
                          const char *text, size_t text_len)
{
	fts5_ctx *c = vctx;
	sqlite3_bind_text(c->insert, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(c->insert, 2, title, (int)title_len, SQLITE_STATIC);
	sqlite3_bind_text(c->insert, 3, text, (int)text_len, SQLITE_STATIC);
	int rc = sqlite3_step(c->insert);
	sqlite3_reset(c->insert);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "fts5: insert: %s\n", sqlite3_errmsg(c->db));
		return -1;
	}
	return 0;
}

static int fts5_build_end(void *vctx)
{
	fts5_ctx *c = vctx;
	sqlite3_finalize(c->insert);
	c->insert = NULL;
	if (exec(c->db, "COMMIT; INSERT INTO chunks(chunks) VALUES('optimize');") != 0)
		return -1;
	sqlite3_close(c->db);
	c->db = NULL;
	return 0;
}

static int64_t fts5_index_bytes(void *vctx, const char *where)
{
	(void)vctx;
	return bench_path_bytes(where);
}

static int fts5_search_open(void *vctx, const char *where)
{
	fts5_ctx *c = vctx;
	if (sqlite3_open_v2(where, &c->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	if (exec(c->db, "PRAGMA cache_size=-262144;") != 0)
		return -1;
	if (sqlite3_prepare_v2(c->db,
	                       "SELECT id, rank FROM chunks WHERE chunks MATCH ?1 "
	                       "ORDER BY rank LIMIT ?2",
	                       -1, &c->select, NULL) != SQLITE_OK) {
		fprintf(stderr, "fts5: %s\n", sqlite3_errmsg(c->db));
		return -1;
	}
	return 0;
}

/* unicode61 splits at every ASCII character that is not a letter or digit;
 * bytes of multi-byte UTF-8 are kept in the token (FTS5 splits those itself
 * inside the quotes, as a phrase). */
static int is_token_byte(unsigned char ch)
{
	return ch >= 0x80 || (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z');
}

/* Rewrite the query as "tok1" OP "tok2" ...; returns the number of tokens. */
static size_t make_match(fts5_ctx *c, const char *q, int match_all)
{
	size_t qlen = strlen(q);
	size_t need = qlen * 7 + 1; /* worst case: 1-byte tokens, "x" AND  per byte */
	if (need > c->match_cap) {
		free(c->match);
		c->match = malloc(need);
		if (!c->match)
			bench_die("out of memory");
		c->match_cap = need;
	}
	const char *op = match_all ? " AND " : " OR ";
	size_t n = 0, out = 0;
	for (size_t i = 0; i < qlen;) {
		if (!is_token_byte((unsigned char)q[i])) {
			i++;
			continue;
		}
		size_t start = i;
		while (i < qlen && is_token_byte((unsigned char)q[i]))
			i++;
		if (n++) {
			memcpy(c->match + out, op, strlen(op));
			out += strlen(op);
		}
		c->match[out++] = '"';
		memcpy(c->match + out, q + start, i - start);
		out += i - start;
		c->match[out++] = '"';
	}
	c->match[out] = '\0';
	return n;
}

static int fts5_search(void *vctx, const char *query, int match_all, unsigned k, bench_hits *out)
{
	fts5_ctx *c = vctx;
	if (make_match(c, query, match_all) == 0)
		return 0;
	sqlite3_bind_text(c->select, 1, c->match, -1, SQLITE_STATIC);
	sqlite3_bind_int(c->select, 2, (int)k);
	int rc;
	while ((rc = sqlite3_step(c->select)) == SQLITE_ROW) {
		const char *id = (const char *)sqlite3_column_text(c->select, 0);
		int id_len = sqlite3_column_bytes(c->select, 0);
		/* bm25() is negative, better is lower; the run file wants higher. */
		bench_hits_add(out, id ? id : "", id ? (size_t)id_len : 0,
		               -sqlite3_column_double(c->select, 1));
	}
	sqlite3_reset(c->select);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "fts5: query %s: %s\n", c->match, sqlite3_errmsg(c->db));
		return -1;
	}
	return 0;
}

static void fts5_close(void *vctx)
{
	fts5_ctx *c = vctx;
	sqlite3_finalize(c->insert);
	sqlite3_finalize(c->select);
	sqlite3_close(c->db);
	free(c->match);
}

int main(int argc, char **argv)
{
	static const bench_engine engine = {
		"fts5", fts5_build_begin, fts5_build_add, fts5_build_end, fts5_index_bytes,
		fts5_search_open, fts5_search, fts5_close,
	};
	fts5_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	return harness_main(argc, argv, &engine, &ctx);
}
