/*
 * pg_bench.c — PostgreSQL full text search as a peer (see harness.c for
 * the command line; --index is a libpq conninfo, e.g. what pg_cluster.sh
 * start prints).
 *
 * Table: chunks(id, title, body, tsv) where tsv is a stored generated
 * column to_tsvector('english', title || ' ' || body), with a GIN index.
 * Build: in one transaction CREATE TABLE and COPY FROM STDIN over the
 * connection (with wal_level=minimal this skips the WAL), then CREATE
 * INDEX ... USING gin and ANALYZE; all of it is timed.
 * Search: one prepared statement per mode over the same connection:
 *   all: q = plainto_tsquery('english', $1)              (AND of the lexemes)
 *   any: q = plainto_tsquery(...) with every & made |      (OR of the lexemes)
 * then WHERE tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC LIMIT $2.
 * BENCH_PG_RANK=ts_rank in the environment ranks with ts_rank instead (on
 * SciFact's OR queries it ranks much better than ts_rank_cd).
 * Index size is pg_total_relation_size('chunks'): heap, TOAST and GIN.
 */
#include "harness.h"

#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COPY_FLUSH (1u << 20)

typedef struct pg_ctx {
	PGconn *conn;
	char *buf; /* COPY rows waiting to be sent */
	size_t len, cap;
} pg_ctx;

/* %s is the rank function. */
static const char *const select_sql[2] = {
	"SELECT id, %s(tsv, q) AS rank FROM chunks,"
	" CAST(replace(plainto_tsquery('english', $1)::text, ' & ', ' | ') AS tsquery) AS q"
	" WHERE tsv @@ q ORDER BY rank DESC LIMIT $2",
	"SELECT id, %s(tsv, q) AS rank FROM chunks,"
	" plainto_tsquery('english', $1) AS q"
	" WHERE tsv @@ q ORDER BY rank DESC LIMIT $2",
};

static void ignore_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message; /* "text-search query doesn't contain lexemes" and the like */
}

static int connect_to(pg_ctx *c, const char *conninfo)
{
	c->conn = PQconnectdb(conninfo);
	if (PQstatus(c->conn) != CONNECTION_OK) {
		fprintf(stderr, "pg: %s", PQerrorMessage(c->conn));
		return -1;
	}
	PQsetNoticeProcessor(c->conn, ignore_notice, NULL);
	return 0;
}

static int exec(pg_ctx *c, const char *sql, ExecStatusType want)
{
	PGresult *r = PQexec(c->conn, sql);
	int ok = PQresultStatus(r) == want;
	if (!ok)
		fprintf(stderr, "pg: %s: %s", sql, PQerrorMessage(c->conn));
	PQclear(r);
	return ok ? 0 : -1;
}

static int pg_build_begin(void *vctx, const char *where)
{
	pg_ctx *c = vctx;
	if (connect_to(c, where) != 0)
		return -1;
	if (exec(c, "DROP TABLE IF EXISTS chunks", PGRES_COMMAND_OK) != 0 ||
	    exec(c, "BEGIN", PGRES_COMMAND_OK) != 0 ||
	    exec(c, "CREATE TABLE chunks (id text, title text, body text,"
	            " tsv tsvector GENERATED ALWAYS AS"
	            " (to_tsvector('english', title || ' ' || body)) STORED)",
	         PGRES_COMMAND_OK) != 0 ||
	    exec(c, "COPY chunks (id, title, body) FROM STDIN", PGRES_COPY_IN) != 0)
		return -1;
	return 0;
}

static int flush_copy(pg_ctx *c)
{
	if (c->len && PQputCopyData(c->conn, c->buf, (int)c->len) != 1) {
		fprintf(stderr, "pg: COPY: %s", PQerrorMessage(c->conn));
		return -1;
	}
	c->len = 0;
	return 0;
}

/* One field in COPY's text format: backslash, tab, newline and CR escaped. */
static void put_field(pg_ctx *c, const char *s, size_t n, char end)
{
	size_t need = c->len + 2 * n + 1;
	if (need > c->cap) {
		c->cap = need * 2;
		c->buf = realloc(c->buf, c->cap);
		if (!c->buf)
			bench_die("out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		switch (ch) {
		case '\\': c->buf[c->len++] = '\\'; c->buf[c->len++] = '\\'; break;
		case '\t': c->buf[c->len++] = '\\'; c->buf[c->len++] = 't'; break;
		case '\n': c->buf[c->len++] = '\\'; c->buf[c->len++] = 'n'; break;
		case '\r': c->buf[c->len++] = '\\'; c->buf[c->len++] = 'r'; break;
		default: c->buf[c->len++] = ch; break;
		}
	}
	c->buf[c->len++] = end;
}

static int pg_build_add(void *vctx, const char *id, const char *title, size_t title_len,
                        const char *text, size_t text_len)
{
	pg_ctx *c = vctx;
	put_field(c, id, strlen(id), '\t');
	put_field(c, title, title_len, '\t');
	put_field(c, text, text_len, '\n');
	return c->len >= COPY_FLUSH ? flush_copy(c) : 0;
}

static int pg_build_end(void *vctx)
{
	pg_ctx *c = vctx;
	if (flush_copy(c) != 0 || PQputCopyEnd(c->conn, NULL) != 1)
		return -1;
	PGresult *r;
	int ok = 1;
	while ((r = PQgetResult(c->conn)) != NULL) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			fprintf(stderr, "pg: COPY: %s", PQerrorMessage(c->conn));
			ok = 0;
		}
		PQclear(r);
	}
	if (!ok || exec(c, "COMMIT", PGRES_COMMAND_OK) != 0 ||
	    exec(c, "CREATE INDEX chunks_tsv ON chunks USING gin (tsv)", PGRES_COMMAND_OK) != 0 ||
	    exec(c, "ANALYZE chunks", PGRES_COMMAND_OK) != 0)
		return -1;
	free(c->buf);
	c->buf = NULL;
	c->len = c->cap = 0;
	PQfinish(c->conn);
	c->conn = NULL;
	return 0;
}

static int64_t pg_index_bytes(void *vctx, const char *where)
{
	pg_ctx *c = vctx;
	int own = c->conn == NULL;
	if (own && connect_to(c, where) != 0)
		return -1;
	int64_t bytes = -1;
	PGresult *r = PQexec(c->conn, "SELECT pg_total_relation_size('chunks')");
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
		bytes = strtoll(PQgetvalue(r, 0, 0), NULL, 10);
	PQclear(r);
	if (own) {
		PQfinish(c->conn);
		c->conn = NULL;
	}
	return bytes;
}

static int pg_search_open(void *vctx, const char *where)
{
	pg_ctx *c = vctx;
	if (connect_to(c, where) != 0)
		return -1;
	const char *rank = getenv("BENCH_PG_RANK");
	if (!rank || !*rank)
		rank = "ts_rank_cd";
	if (strcmp(rank, "ts_rank_cd") != 0 && strcmp(rank, "ts_rank") != 0)
		bench_die("pg: BENCH_PG_RANK must be ts_rank_cd or ts_rank");
	static const char *const names[2] = { "q_any", "q_all" };
	for (int i = 0; i < 2; i++) {
		char sql[512];
		snprintf(sql, sizeof sql, select_sql[i], rank);
		PGresult *r = PQprepare(c->conn, names[i], sql, 0, NULL);
		int ok = PQresultStatus(r) == PGRES_COMMAND_OK;
		PQclear(r);
		if (!ok) {
			fprintf(stderr, "pg: prepare: %s", PQerrorMessage(c->conn));
			return -1;
		}
	}
	return 0;
}

static int pg_search(void *vctx, const char *query, int match_all, unsigned k, bench_hits *out)
{
	pg_ctx *c = vctx;
	char limit[16];
	snprintf(limit, sizeof limit, "%u", k);
	const char *params[2] = { query, limit };
	PGresult *r = PQexecPrepared(c->conn, match_all ? "q_all" : "q_any", 2, params, NULL,
	                             NULL, 0);
	if (PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "pg: query \"%s\": %s", query, PQerrorMessage(c->conn));
		PQclear(r);
		return -1;
	}
	int n = PQntuples(r);
	for (int i = 0; i < n; i++)
		bench_hits_add(out, PQgetvalue(r, i, 0), (size_t)PQgetlength(r, i, 0),
		               strtod(PQgetvalue(r, i, 1), NULL));
	PQclear(r);
	return 0;
}

static void pg_close(void *vctx)
{
	pg_ctx *c = vctx;
	if (c->conn)
		PQfinish(c->conn);
	free(c->buf);
}

int main(int argc, char **argv)
{
	static const bench_engine engine = {
		"postgres", pg_build_begin, pg_build_add, pg_build_end, pg_index_bytes,
		pg_search_open, pg_search, pg_close,
	};
	pg_ctx ctx;
	memset(&ctx, 0, sizeof ctx);
	return harness_main(argc, argv, &engine, &ctx);
}
