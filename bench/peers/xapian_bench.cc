/*
 * xapian_bench.cc — Xapian as a peer (see harness.c for the command line).
 *
 * Build: a glass database; each chunk is one document, its title and text
 * indexed by a TermGenerator with Stem("english") and the default
 * STEM_SOME strategy (positional unstemmed terms plus Z-prefixed stems),
 * the chunk id in value slot 0 and title + text as the document data, so
 * the text is stored as in fathom's doc store. One commit at the end.
 * Search: BM25Weight with Xapian's defaults; the query goes through a
 * QueryParser with the same stemmer and strategy, default operator OP_OR
 * (--match any) or OP_AND (--match all), and no syntax flags, so words
 * like AND/NOT or a leading '-' in a query are plain words.
 */
#include "harness.h"

#include <xapian.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

struct XapianCtx {
	Xapian::WritableDatabase *wdb = nullptr;
	Xapian::TermGenerator *tg = nullptr;
	Xapian::Database *db = nullptr;
	Xapian::Enquire *enquire = nullptr;
	Xapian::QueryParser *qp = nullptr;
};

int xapian_build_begin(void *vctx, const char *where)
{
	XapianCtx *c = static_cast<XapianCtx *>(vctx);
	try {
		c->wdb = new Xapian::WritableDatabase(where, Xapian::DB_CREATE_OR_OVERWRITE);
		c->tg = new Xapian::TermGenerator();
		c->tg->set_stemmer(Xapian::Stem("english"));
	} catch (const Xapian::Error &e) {
		std::fprintf(stderr, "xapian: %s\n", e.get_description().c_str());
		return -1;
	}
	return 0;
}

int xapian_build_add(void *vctx, const char *id, const char *title, size_t title_len,
                     const char *text, size_t text_len)
{
	XapianCtx *c = static_cast<XapianCtx *>(vctx);
	try {
		Xapian::Document doc;
		c->tg->set_document(doc);
		c->tg->index_text(std::string(title, title_len));
		c->tg->increase_termpos();
		c->tg->index_text(std::string(text, text_len));
		doc.add_value(0, id);
		std::string data(title, title_len);
		data += '\n';
		data.append(text, text_len);
		doc.set_data(data);
		c->wdb->add_document(doc);
	} catch (const Xapian::Error &e) {
		std::fprintf(stderr, "xapian: %s\n", e.get_description().c_str());
		return -1;
	}
	return 0;
}

int xapian_build_end(void *vctx)
{
	XapianCtx *c = static_cast<XapianCtx *>(vctx);
	try {
		c->wdb->commit();
		c->wdb->close();
	} catch (const Xapian::Error &e) {
		std::fprintf(stderr, "xapian: %s\n", e.get_description().c_str());
		return -1;
	}
	delete c->tg;
	delete c->wdb;
	c->tg = nullptr;
	c->wdb = nullptr;
	return 0;
}

int64_t xapian_index_bytes(void *, const char *where)
{
	return bench_path_bytes(where);
}

int xapian_search_open(void *vctx, const char *where)
{
	XapianCtx *c = static_cast<XapianCtx *>(vctx);
	try {
		c->db = new Xapian::Database(where);
		c->enquire = new Xapian::Enquire(*c->db);
		c->enquire->set_weighting_scheme(Xapian::BM25Weight());
		c->qp = new Xapian::QueryParser();
		c->qp->set_stemmer(Xapian::Stem("english"));
		c->qp->set_stemming_strategy(Xapian::QueryParser::STEM_SOME);
		c->qp->set_database(*c->db);
	} catch (const Xapian::Error &e) {
		std::fprintf(stderr, "xapian: %s\n", e.get_description().c_str());
		return -1;
	}
	return 0;
}

int xapian_search(void *vctx, const char *query, int match_all, unsigned k, bench_hits *out)
{
	XapianCtx *c = static_cast<XapianCtx *>(vctx);
	try {
		c->qp->set_default_op(match_all ? Xapian::Query::OP_AND : Xapian::Query::OP_OR);
		Xapian::Query q = c->qp->parse_query(query, 0);
		if (q.empty())
			return 0;
		c->enquire->set_query(q);
		Xapian::MSet mset = c->enquire->get_mset(0, k);
		for (Xapian::MSetIterator it = mset.begin(); it != mset.end(); ++it) {
			std::string id = it.get_document().get_value(0);
			bench_hits_add(out, id.data(), id.size(), it.get_weight());
		}
	} catch (const Xapian::Error &e) {
		std::fprintf(stderr, "xapian: query \"%s\": %s\n", query, e.get_description().c_str());
		return -1;
	}
	return 0;
}

void xapian_close(void *vctx)
{
	XapianCtx *c = static_cast<XapianCtx *>(vctx);
	delete c->qp;
	delete c->enquire;
	delete c->db;
	delete c->tg;
	delete c->wdb;
}

} // namespace

int main(int argc, char **argv)
{
	static const bench_engine engine = {
		"xapian", xapian_build_begin, xapian_build_add, xapian_build_end, xapian_index_bytes,
		xapian_search_open, xapian_search, xapian_close,
	};
	XapianCtx ctx;
	return harness_main(argc, argv, &engine, &ctx);
}
