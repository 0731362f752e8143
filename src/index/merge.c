/*
 * merge.c — merging segments: the live documents of several segments are
 * written into one new segment and the tombstoned ones are dropped.
 *
 * Nothing is re-analysed. Documents are copied in input order (their text
 * through the document store), which gives every live chunk its new id; then
 * the term dictionaries are walked together in byte order and each term's
 * postings are copied with the chunk ids mapped, deleted chunks skipped,
 * term frequencies and positions as they were. Because inputs are taken in
 * order and ids only grow within each, the mapped postings come out sorted.
 *
 * When every input keeps all its documents and has a text dictionary
 * (with at most IX_DS_MAX_DICTS between them), their compressed frames are
 * copied as they are, with their dictionaries, and each document's text
 * offset moves by its input's place in the new raw stream: nothing is
 * decompressed or compressed (docs/FORMAT.md 5.4). Otherwise the text is
 * recompressed, with a dictionary trained anew for the merged segment from
 * samples spread evenly over all the inputs (a writer left to itself would
 * train on the first 16 MiB, which is one input); the writer compresses
 * its frames on its threads.
 *
 * The postings are merged on a pool (term_pool.c, as a flush encodes its
 * postings; ix_ds_thread_count threads): the
 * calling thread walks the dictionaries and hands out batches of terms,
 * each with where every input holds it; a worker reads, maps and encodes
 * a batch's terms (ix_term_enc); the calling thread appends the batches'
 * terms in order. So the bytes are those one thread writes.
 *
 * Vectors are copied with their chunks when the input has them from the
 * kept embedder. Chunks without one, when the index has an embedder (the
 * corpus embedder's first training, optimize after a change of embedder),
 * are embedded in batches on a pool of as many threads, slices of chunks
 * handed out in order and written back in order: the same vectors, and
 * the same bytes, whatever the threads.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "index/index_int.h"
#include "util/pool.h"
#include "vec/vec.h"

typedef struct merge_in {
	const ix_segment *s;
	const uint8_t *del_docs, *del_chunks;
	uint32_t n_del_docs;
	uint32_t *map;           /* old chunk -> new chunk, IX_END when deleted */
	uint32_t *doc_map;       /* old doc -> new doc, IX_END when deleted */
	uint64_t tri;            /* next trigram record */
	ix_term_iter it;
	int has_term;
	ix_vecs vec;             /* its vectors (dim 0: none, or not kept) */
} merge_in;

/* The chunks a merge embeds wait in a batch of at most MERGE_EMBED_CHUNKS
 * chunks or MERGE_EMBED_BYTES of text, which is embedded on a pool
 * (ix_ds_thread_count threads, MERGE_EMBED_SLICE chunks an item) and
 * written in chunk order: the same vectors whatever the threads. */
#define MERGE_EMBED_CHUNKS 2048u
#define MERGE_EMBED_BYTES ((size_t)8 << 20)
#define MERGE_EMBED_SLICE 32u

/* A merge's vectors: what to keep, and the chunks to embed. */
typedef struct merge_vec {
	ix_index *ix;
	uint64_t fp;             /* kept fingerprint (0: the first met) */
	ix_segw *w;
	fbuf text;               /* the batch's embedding texts, back to back */
	size_t *off, *len;
	uint32_t *chunk;         /* the batch's chunks, in the merged segment */
	const char **texts;
	float *out;
	uint32_t n;              /* chunks in the batch */
	fa_pool *pool;           /* made for the first batch */
	size_t next;             /* the pipeline's next chunk of the batch */
	size_t *slot_at;         /* each slot's first chunk */
	size_t nslots;
	uint64_t embedded;       /* chunks embedded here (not copied) */
	float *row;              /* an int8 row scaled back (room for row_dim) */
	uint32_t row_dim;
} merge_vec;

/* ---- vectors: copied, or embedded in batches on a pool --------------------- */

static int emb_produce(void *ctx, size_t slot)
{
	merge_vec *mv = ctx;
	if (mv->next >= mv->n)
		return 0;
	mv->slot_at[slot] = mv->next;
	mv->next += FA_MIN((size_t)MERGE_EMBED_SLICE, mv->n - mv->next);
	return 1;
}

static int emb_work(void *ctx, unsigned worker, size_t slot)
{
	(void)worker;
	merge_vec *mv = ctx;
	const ix_embed_hook *eh = &mv->ix->embed;
	size_t i = mv->slot_at[slot], m = FA_MIN((size_t)MERGE_EMBED_SLICE, mv->n - i);
	return eh->embed(eh->ctx, mv->texts + i, mv->len + i, m, mv->out + i * eh->dim);
}

static int emb_emit(void *ctx, size_t slot)
{
	merge_vec *mv = ctx;
	const ix_embed_hook *eh = &mv->ix->embed;
	size_t i0 = mv->slot_at[slot], m = FA_MIN((size_t)MERGE_EMBED_SLICE, mv->n - i0);
	for (size_t i = i0; i < i0 + m; i++) {
		int rc = ix_segw_chunk_vector(mv->w, mv->chunk[i], mv->out + i * eh->dim, eh->dim,
		                              eh->fp);
		if (rc)
			return rc;
	}
	if (eh->progress)
		eh->progress(eh->progress_ctx, mv->embedded + i0 + m);
	return 0;
}

/* Embed the batch and give the writer its vectors. */
static int flush_embeds(merge_vec *mv)
{
	if (mv->n == 0)
		return 0;
	if (!mv->pool) {
		unsigned threads = ix_ds_thread_count();
		int rc = fa_pool_new(&mv->pool, threads > 1 ? threads : 0);
		if (rc)
			return rc;
		mv->nslots = 4 * (size_t)FA_MAX(1u, fa_pool_threads(mv->pool));
		if (!(mv->slot_at = fa_malloc(mv->nslots * sizeof *mv->slot_at)))
			return fa_err(FATHOM_ENOMEM, "merge: vectors");
	}
	for (uint32_t i = 0; i < mv->n; i++)
		mv->texts[i] = (const char *)mv->text.data + mv->off[i];
	mv->next = 0;
	static const fa_pipeline fns = { emb_produce, emb_work, emb_emit };
	int rc = fa_pool_run(mv->pool, mv->nslots, &fns, mv);
	mv->embedded += mv->n;
	mv->n = 0;
	fbuf_reset(&mv->text);
	return rc;
}

/* The arrays of a batch of MERGE_EMBED_CHUNKS chunks. */
static int batch_alloc(merge_vec *mv)
{
	if (mv->off)
		return 0;
	size_t rows;
	if (fa_mul(MERGE_EMBED_CHUNKS, mv->ix->embed.dim, &rows))
		return fa_err(FATHOM_ETOOBIG, "merge: vectors");
	mv->off = fa_malloc(MERGE_EMBED_CHUNKS * sizeof *mv->off);
	mv->len = fa_malloc(MERGE_EMBED_CHUNKS * sizeof *mv->len);
	mv->chunk = fa_malloc(MERGE_EMBED_CHUNKS * sizeof *mv->chunk);
	mv->texts = fa_malloc(MERGE_EMBED_CHUNKS * sizeof *mv->texts);
	mv->out = fa_malloc(rows * sizeof *mv->out);
	if (!mv->off || !mv->len || !mv->chunk || !mv->texts || !mv->out)
		return fa_err(FATHOM_ENOMEM, "merge: vectors");
	return 0;
}

/* The vectors of a document's chunks [c0, c0 + n) of input m: copied when
 * kept; when missing and the index has an embedder, their texts join the
 * batch to embed. */
static int doc_vectors(ix_segw *w, merge_vec *mv, const merge_in *m, const ix_doc_info *di,
                       const char *text, ix_text_window *tw)
{
	const ix_segment *s = m->s;
	const ix_embed_hook *eh = &mv->ix->embed;
	uint32_t c0 = di->first_chunk, n = di->n_chunks;
	int have = m->vec.dim && (!mv->fp || m->vec.fp == mv->fp);
	if (have) {
		if (!mv->fp)
			mv->fp = m->vec.fp;
		if (!m->vec.rows && mv->row_dim < m->vec.dim) {   /* int8 rows alone */
			fa_free(mv->row);
			mv->row_dim = 0;
			if (!(mv->row = fa_malloc((size_t)m->vec.dim * sizeof *mv->row)))
				return fa_err(FATHOM_ENOMEM, "merge: vectors");
			mv->row_dim = m->vec.dim;
		}
		for (uint32_t i = 0; i < n; i++) {
			uint32_t c = c0 + i;
			/* int8 rows scaled back (as vx_hnsw_merge does): the writer
			 * keeps floats, and quantising them again gives the same int8
			 * values (the scale within a rounding) when it stores int8 */
			if (!m->vec.rows &&
			    !(m->vec.scales[c] >= 0.0f && m->vec.scales[c] <= FLT_MAX &&
			      isfinite(m->vec.offsets[c])))
				return fa_err(FATHOM_ECORRUPT,
				              "%s: section 'VECS': chunk %u's scale is %g, its offset %g",
				              s->path, c, (double)m->vec.scales[c],
				              (double)m->vec.offsets[c]);
			int rc = ix_segw_chunk_vector(w, m->map[c], ix_vecs_row(&m->vec, c, mv->row),
			                              m->vec.dim, m->vec.fp);
			if (rc)
				return rc;
		}
		return 0;
	}
	if (!eh->embed || !n)
		return 0;
	int rc = batch_alloc(mv);
	if (rc)
		return rc;
	mv->w = w;
	if (!text && (rc = ix_text_window_read(tw, s, di->text_off, di->text_len, &text)))
		return rc;
	fbuf one;
	fbuf_init(&one, 0);
	for (uint32_t i = 0; i < n && !rc; i++) {
		if ((mv->n == MERGE_EMBED_CHUNKS || mv->text.len >= MERGE_EMBED_BYTES) &&
		    (rc = flush_embeds(mv)))
			break;
		ix_chunk_info ci;
		if ((rc = seg_chunk(s, c0 + i, &ci)) != 0)
			break;
		if (ci.byte_end > di->text_len || ci.byte_start > ci.byte_end) {
			rc = fa_err(FATHOM_ECORRUPT, "%s: chunk %u out of its document", s->path, c0 + i);
			break;
		}
		rc = ix_embed_text(&one, di->title, ci.headings, ci.headings_len,
		                   text + ci.byte_start, ci.byte_end - ci.byte_start);
		mv->off[mv->n] = mv->text.len;
		mv->len[mv->n] = one.len;
		mv->chunk[mv->n] = m->map[c0 + i];
		if (!rc && fbuf_append(&mv->text, one.data, one.len))
			rc = mv->text.err;
		if (!rc)
			mv->n++;
	}
	fbuf_free(&one);
	return rc;
}

/* text_base: where the input's copied frames begin in the new raw stream,
 * or UINT64_MAX when its text is recompressed (read through tw). */
static int copy_docs(ix_segw *w, merge_in *m, uint32_t *next_chunk, ix_text_window *tw,
                     fbuf *strs, uint64_t text_base, merge_vec *mv)
{
	const ix_segment *s = m->s;
	for (uint32_t c = 0; c < s->nchunks; c++)
		m->map[c] = IX_END;
	for (uint32_t d = 0; d < s->ndocs; d++) {
		m->doc_map[d] = IX_END;
		if (ix_bit_get(m->del_docs, d))
			continue;
		m->doc_map[d] = ix_segw_ndocs(w);
		ix_doc_info di;
		int rc = seg_doc(s, d, &di);
		if (rc)
			return rc;
		/* The five named strings, then the tags and meta, which lie back
		 * to back after lang. */
		fbuf_reset(strs);
		const char *fixed[5] = { di.key, di.path, di.title, di.url, di.lang };
		for (int i = 0; i < 5; i++)
			fbuf_append(strs, fixed[i], strlen(fixed[i]) + 1);
		const char *q = di.lang + strlen(di.lang) + 1, *rest = q;
		for (uint32_t i = 0; i < di.n_tags + di.n_meta; i++)
			q += strlen(q) + 1;
		fbuf_append(strs, rest, (size_t)(q - rest));
		if (strs->err)
			return strs->err;
		const char *text = NULL;
		uint64_t text_off = 0;
		if (text_base != UINT64_MAX) {
			if (di.text_off > UINT64_MAX - text_base)
				return fa_err(FATHOM_ECORRUPT, "%s: document %u: bad text offset", s->path, d);
			text_off = text_base + di.text_off;
		} else if ((rc = ix_text_window_read(tw, s, di.text_off, di.text_len, &text)) != 0) {
			return rc;
		}
		ix_doc_rec rec = { di.size, di.mtime_ns, di.content_hash, di.kind, di.n_tags, di.n_meta,
		                   di.trigrams, di.grep_only, text_off };
		rc = ix_segw_add_doc(w, &rec, (const char *)strs->data, strs->len,
		                     text, di.text_len, NULL, 0);
		if (rc)
			return rc;
		for (uint32_t c = di.first_chunk; c < di.first_chunk + di.n_chunks; c++) {
			ix_chunk_info ci;
			if ((rc = seg_chunk(s, c, &ci)) != 0)
				return rc;
			uint32_t fl[FATHOM_NFIELDS];
			for (int f = 0; f < FATHOM_NFIELDS; f++)
				fl[f] = ci.field_len[f];
			rc = ix_segw_add_chunk(w, ci.line_start, ci.line_end, ci.byte_start, ci.byte_end,
			                       ci.headings, ci.headings_len, fl);
			if (rc)
				return rc;
			m->map[c] = (*next_chunk)++;
			if (c + 1 == di.first_chunk + di.n_chunks &&
			    (rc = doc_vectors(w, mv, m, &di, text, tw)) != 0)
				return rc;
		}
	}
	return 0;
}

/* The merged segment's graph from its inputs' (vx_hnsw_merge), when every
 * vector was copied from an input of the kept embedder: node i of the
 * result is then the i-th live chunk in input order, which is the merged
 * chunk i. An input's graph is reused when it lost no chunk (deleted ones
 * are never in the result); an input without one, or whose graph fails its
 * check (it is optional: the rows rebuild it), gives its rows. Otherwise
 * (chunks embedded here, inputs without vectors or of another embedder)
 * the writer builds the graph from the merged rows. */
static int merge_graph(ix_index *ix, ix_segw *w, const merge_in *m, size_t n, const merge_vec *mv)
{
	if (mv->embedded || !mv->fp || ix_segw_vectors_present(w) < ix_graph_min(&ix->graph))
		return 0;
	const vx_hnsw **g = fa_calloc(n ? n : 1, sizeof *g);
	vx_hnsw **own = fa_calloc(n ? n : 1, sizeof *own);
	uint8_t **keep = fa_calloc(n ? n : 1, sizeof *keep);
	int rc = 0;
	size_t ng = 0;
	if (!g || !own || !keep) {
		rc = fa_err(FATHOM_ENOMEM, "merge: HNSW graphs");
		goto done;
	}
	for (size_t k = 0; k < n && !rc; k++) {
		const merge_in *in = &m[k];
		uint32_t nc = in->s->nchunks, live = 0;
		for (uint32_t c = 0; c < nc; c++)
			live += in->map[c] != IX_END;
		if (!live)
			continue;
		/* int8 rows alone: no input graph can be reused (vx_hnsw_merge
		 * reuses only graphs over float rows, which int8-rescore has), so
		 * the writer builds it from the merged rows, the same work */
		if (!in->vec.dim || in->vec.fp != mv->fp || in->vec.count != nc || !in->vec.rows)
			goto done;   /* the writer builds it */
		if (!(keep[ng] = fa_calloc((size_t)nc / 8 + 1, 1))) {
			rc = fa_err(FATHOM_ENOMEM, "merge: HNSW graphs");
			break;
		}
		for (uint32_t c = 0; c < nc; c++)
			if (in->map[c] != IX_END)
				keep[ng][c >> 3] |= (uint8_t)(1u << (c & 7));
		rc = seg_graph(in->s, &g[ng]);
		if (rc) {
			if (rc != FATHOM_ENOTFOUND && rc != FATHOM_ECORRUPT)
				break;
			fa_err_clear();
			if ((rc = vx_hnsw_rows(&own[ng], in->vec.rows, nc, in->vec.dim)))
				break;
			g[ng] = own[ng];
		}
		ng++;
	}
	if (!rc && ng) {
		vx_params p;
		ix_graph_params(&ix->graph, ix_segw_vectors_present(w), &p);
		vx_hnsw *out;
		if (!(rc = vx_hnsw_merge(&out, g, ng, (const uint8_t *const *)keep, &p, VX_MERGE_AUTO,
		                              fa_cpu_count(VX_BUILD_MAX_THREADS))))
			ix_segw_set_graph(w, out);
	}
done:
	for (size_t k = 0; k < n && own && keep; k++) {
		vx_hnsw_free(own[k]);
		fa_free(keep[k]);
	}
	fa_free(g);
	fa_free(own);
	fa_free(keep);
	return rc;
}

/* Whether the inputs' frames can be copied: every input keeps all its
 * documents, is of this format, has text in frames of the dictionary
 * size and one dictionary or more, and between them they hold at most
 * IX_DS_MAX_DICTS distinct dictionaries (the same id: the same bytes). */
static int can_copy_text(const merge_in *m, size_t n)
{
	ix_ds_dictref seen[IX_DS_MAX_DICTS];   /* the first of each id */
	size_t nseen = 0;
	for (size_t k = 0; k < n; k++) {
		const ix_segment *s = m[k].s;
		if (m[k].n_del_docs || s->version != IX_FORMAT_VERSION || s->raw_text == 0 ||
		    s->frame_raw != IX_FRAME_RAW_DICT)
			return 0;
		ix_ds_dictref d[IX_DS_MAX_DICTS];
		size_t nd;
		if (ix_ds_dicts(s, d, IX_DS_MAX_DICTS, &nd) != 0 || nd == 0)
			return 0;   /* a damaged dictionary: the other path reports it */
		for (size_t i = 0; i < nd; i++) {
			size_t j = 0;
			while (j < nseen && seen[j].id != d[i].id)
				j++;
			if (j < nseen) {
				if (seen[j].len != d[i].len || memcmp(seen[j].data, d[i].data, d[i].len) != 0)
					return 0;
				continue;
			}
			if (nseen == IX_DS_MAX_DICTS)
				return 0;
			seen[nseen++] = d[i];
		}
	}
	return 1;
}

/* Samples for the merged segment's text dictionary: the sample budget of
 * the merged text (ix_ds_sample_budget) in frame-sized pieces, each input giving pieces in proportion to
 * its text, spread evenly over its raw stream (text of deleted documents
 * included: it is a small share, and reading it is harmless). */
static int train_text(ix_segw *w, const merge_in *m, size_t n)
{
	uint64_t total = 0;
	for (size_t k = 0; k < n; k++) {
		/* Each at most 64 KiB per 24-byte frame record (segment_read.c). */
		if (total + m[k].s->raw_text < total)
			return fa_err(FATHOM_ETOOBIG, "merge: too much text for one segment");
		total += m[k].s->raw_text;
	}
	if (!ix_ds_wants_dict(total))
		return ix_segw_train_text(w, NULL, NULL, 0, total);
	const size_t piece = IX_DS_SAMPLE_PIECE;
	size_t budget = ix_ds_sample_budget(total);
	uint64_t want = budget / piece;
	size_t *sizes = fa_malloc((size_t)(want + n) * sizeof *sizes), ns = 0;
	fbuf buf;
	fbuf_init(&buf, budget + (size_t)n * piece);
	int rc = sizes ? 0 : fa_err(FATHOM_ENOMEM, "out of memory (text samples)");
	for (size_t k = 0; k < n && !rc; k++) {
		const ix_segment *s = m[k].s;
		uint64_t raw = s->raw_text, len = FA_MIN(raw, (uint64_t)piece);
		/* A share of want, in floating point: want * raw may overflow. */
		uint64_t nk = raw ? FA_MAX((uint64_t)((double)want * (double)raw / (double)total), 1) : 0;
		nk = FA_MIN(nk, want);
		for (uint64_t i = 0; i < nk && !rc; i++) {
			uint64_t at = nk > 1 ? (raw - len) / (nk - 1) * i : 0;
			size_t before = buf.len;
			if ((rc = ix_ds_read(s, at, len, &buf)) == 0)
				sizes[ns++] = buf.len - before;
		}
	}
	if (!rc)
		rc = ix_segw_train_text(w, buf.data, sizes, ns, total);
	fa_free(sizes);
	fbuf_free(&buf);
	return rc;
}

#define MERGE_PREFETCH 8

static int copy_postings(ix_term_enc *e, const merge_in *m, const ix_term_info *ti,
                         ix_postings *p, uint32_t *pos[FATHOM_NFIELDS])
{
	int rc = ix_post_open(p, m->s, ti);
	while (!rc && p->doc != IX_END) {
		/* The encoder reads each posting's chunk record (its field
		 * lengths), a cache miss for a rare term: fetch the record of a
		 * posting some way ahead in the decoded block, and its map entry
		 * further ahead. */
		if (p->i + 2 * MERGE_PREFETCH < p->n)
			__builtin_prefetch(&m->map[p->docs[p->i + 2 * MERGE_PREFETCH]]);
		if (p->i + MERGE_PREFETCH < p->n) {
			uint32_t ahead = m->map[p->docs[p->i + MERGE_PREFETCH]];
			if (ahead < e->nchunks)
				__builtin_prefetch(e->chunks + (size_t)ahead * IX_CHUNK_REC + 28);
		}
		uint32_t nc = m->map[p->doc];
		if (nc != IX_END) {
			uint16_t tf[FATHOM_NFIELDS];
			const uint32_t *cpos[FATHOM_NFIELDS];
			ix_post_tf(p, tf);
			for (int f = 0; f < FATHOM_NFIELDS && !rc; f++) {
				uint32_t n = 0;
				if (tf[f])
					rc = ix_post_positions(p, f, pos[f], IX_MAX_TF, &n);
				if (!rc && n != tf[f])
					rc = fa_err(FATHOM_ECORRUPT, "%s: positions disagree with tf",
					            seg_path(m->s));
				cpos[f] = pos[f];
			}
			if (!rc)
				rc = ix_term_enc_posting(e, nc, tf, cpos);
		}
		if (!rc)
			rc = ix_post_next(p);
	}
	return rc ? rc : p->err;
}

static int advance_term(merge_in *m)
{
	int rc = ix_term_iter_next(&m->it);
	if (rc < 0)
		return rc;
	m->has_term = rc == 1;
	return 0;
}

static int term_less(const merge_in *a, const merge_in *b)
{
	int c = memcmp(a->it.term, b->it.term, FA_MIN(a->it.len, b->it.len));
	return c < 0 || (c == 0 && a->it.len < b->it.len);
}

/* ---- postings, merged on the pool ----------------------------------------- */

/* A batch ends at whichever comes first; a window of batches is in flight. */
#define MERGE_BATCH_TERMS 1024
#define MERGE_BATCH_POSTINGS 65536

typedef struct mt_src {
	size_t k;                /* the input */
	ix_term_info ti;         /* the term there */
} mt_src;

typedef struct mt_term {
	unsigned char term[IX_MAX_TERM];
	size_t len;
	size_t src, nsrc;        /* its inputs, in the slot's srcs */
} mt_term;

typedef struct mt_slot {
	mt_term *terms;          /* MERGE_BATCH_TERMS */
	size_t nterms;
	mt_src *srcs;
	size_t nsrcs, srcs_cap;
} mt_slot;

typedef struct mt_worker {
	ix_postings *p;
	uint32_t *pos[FATHOM_NFIELDS];
} mt_worker;

typedef struct mt_ctx {
	ix_segw *w;
	merge_in *m;
	size_t n;
	const unsigned char *chunks;
	uint32_t nchunks;
	ix_term_pool tp;
	mt_slot *slots;          /* tp.window */
	mt_worker *workers;      /* tp.nworkers */
} mt_ctx;

/* The next batch of terms in byte order, each with the inputs holding it. */
static int mt_produce(void *ctx, size_t slot)
{
	mt_ctx *c = ctx;
	mt_slot *sl = &c->slots[slot];
	merge_in *m = c->m;
	sl->nterms = 0;
	sl->nsrcs = 0;
	uint64_t postings = 0;
	while (sl->nterms < MERGE_BATCH_TERMS && postings < MERGE_BATCH_POSTINGS) {
		merge_in *min = NULL;
		for (size_t k = 0; k < c->n; k++)
			if (m[k].has_term && (!min || term_less(&m[k], min)))
				min = &m[k];
		if (!min)
			break;
		mt_term *t = &sl->terms[sl->nterms++];
		t->len = min->it.len;
		memcpy(t->term, min->it.term, t->len);
		t->src = sl->nsrcs;
		for (size_t k = 0; k < c->n; k++) {
			if (!m[k].has_term || m[k].it.len != t->len || memcmp(m[k].it.term, t->term, t->len))
				continue;
			if (sl->nsrcs == sl->srcs_cap &&
			    fa_grow((void **)&sl->srcs, &sl->srcs_cap, sl->nsrcs + 1, sizeof *sl->srcs))
				return fa_err(FATHOM_ENOMEM, "out of memory");
			sl->srcs[sl->nsrcs].k = k;
			sl->srcs[sl->nsrcs].ti = m[k].it.ti;
			sl->nsrcs++;
			postings += m[k].it.ti.df;
			int rc = advance_term(&m[k]);
			if (rc)
				return rc;
		}
		t->nsrc = sl->nsrcs - t->src;
	}
	return sl->nterms > 0;
}

/* Read, map and encode the batch's terms. */
static int mt_work(void *ctx, unsigned worker, size_t slot)
{
	mt_ctx *c = ctx;
	mt_slot *sl = &c->slots[slot];
	mt_worker *x = &c->workers[worker];
	ix_term_enc *e = &c->tp.enc[worker];
	fbuf *out = &c->tp.out[slot];
	fbuf_reset(out);
	for (size_t i = 0; i < sl->nterms; i++) {
		const mt_term *t = &sl->terms[i];
		ix_term_enc_begin(e, c->chunks, c->nchunks);
		int rc = 0;
		for (size_t j = 0; j < t->nsrc && !rc; j++) {
			const mt_src *src = &sl->srcs[t->src + j];
			rc = copy_postings(e, &c->m[src->k], &src->ti, x->p, x->pos);
		}
		if (!rc)
			rc = ix_term_enc_end(e);
		if (rc || (rc = ix_term_enc_save(e, out, &c->tp.saved[slot][i])) != 0)
			return rc;
	}
	return 0;
}

/* The batch's terms to the segment, in order. */
static int mt_emit(void *ctx, size_t slot)
{
	mt_ctx *c = ctx;
	mt_slot *sl = &c->slots[slot];
	for (size_t i = 0; i < sl->nterms; i++) {
		const mt_term *t = &sl->terms[i];
		int rc = ix_segw_term_put_saved(c->w, (const char *)t->term, t->len, &c->tp.out[slot],
		                                &c->tp.saved[slot][i]);
		if (rc)
			return rc;
	}
	return 0;
}

static void mt_free(mt_ctx *c)
{
	for (size_t i = 0; c->slots && i < c->tp.window; i++) {
		fa_free(c->slots[i].terms);
		fa_free(c->slots[i].srcs);
	}
	for (size_t i = 0; c->workers && i < c->tp.nworkers; i++) {
		fa_free(c->workers[i].p);
		for (int f = 0; f < FATHOM_NFIELDS; f++)
			fa_free(c->workers[i].pos[f]);
	}
	fa_free(c->slots);
	fa_free(c->workers);
	ix_term_pool_close(&c->tp);
}

static int merge_postings(ix_segw *w, merge_in *m, size_t n)
{
	int rc = 0, any = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		rc = ix_term_iter_seek(&m[k].it, m[k].s, 0);
		if (!rc)
			rc = advance_term(&m[k]);
		any |= m[k].has_term;
	}
	if (rc || !any)
		return rc;
	if ((rc = ix_segw_start_terms(w)) != 0)
		return rc;
	mt_ctx c = { .w = w, .m = m, .n = n, .chunks = ix_segw_chunk_recs(w),
	             .nchunks = ix_segw_nchunks(w) };
	if ((rc = ix_term_pool_open(&c.tp, MERGE_BATCH_TERMS)) != 0)
		return rc;
	c.slots = fa_calloc(c.tp.window, sizeof *c.slots);
	c.workers = fa_calloc(c.tp.nworkers, sizeof *c.workers);
	if (!c.slots || !c.workers)
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < c.tp.window; i++)
		if (!(c.slots[i].terms = fa_malloc(MERGE_BATCH_TERMS * sizeof *c.slots[i].terms)))
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < c.tp.nworkers; i++) {
		mt_worker *x = &c.workers[i];
		if (!(x->p = fa_malloc(sizeof *x->p)))
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
		for (int f = 0; f < FATHOM_NFIELDS && !rc; f++)
			if (!(x->pos[f] = fa_malloc(IX_MAX_TF * sizeof(uint32_t))))
				rc = fa_err(FATHOM_ENOMEM, "out of memory");
	}
	if (!rc) {
		fa_pipeline fns = { mt_produce, mt_work, mt_emit };
		rc = ix_term_pool_run(&c.tp, &fns, &c);
	}
	mt_free(&c);
	return rc;
}

/* The inputs' trigram lists, merged in trigram order, documents mapped and
 * deleted ones dropped; inputs are in order, so the lists stay ascending. */
static int merge_trigrams(ix_segw *w, merge_in *m, size_t n)
{
	uint32_t total = ix_segw_ndocs(w);
	uint32_t *out = fa_malloc(((size_t)total + 1) * sizeof *out), *in = NULL;
	size_t in_cap = 0;
	int rc = out ? 0 : fa_err(FATHOM_ENOMEM, "out of memory");
	for (size_t k = 0; k < n; k++)
		m[k].tri = 0;
	while (!rc) {
		uint32_t tri = UINT32_MAX;
		for (size_t k = 0; k < n && !rc; k++) {
			ix_tri_info ti;
			if (m[k].tri < seg_ntrigrams(m[k].s) && !(rc = seg_tri_at(m[k].s, m[k].tri, &ti)))
				tri = FA_MIN(tri, ti.tri);
		}
		if (rc || tri == UINT32_MAX)
			break;
		size_t cnt = 0;
		for (size_t k = 0; k < n && !rc; k++) {
			ix_tri_info ti;
			if (m[k].tri >= seg_ntrigrams(m[k].s) || (rc = seg_tri_at(m[k].s, m[k].tri, &ti)) ||
			    ti.tri != tri)
				continue;
			if (ti.ndocs > in_cap) {
				fa_free(in);
				in_cap = ti.ndocs;
				if (!(in = fa_malloc(in_cap * sizeof *in))) {
					rc = fa_err(FATHOM_ENOMEM, "out of memory");
					break;
				}
			}
			if ((rc = seg_tri_docs(m[k].s, &ti, in)))
				break;
			for (uint32_t i = 0; i < ti.ndocs && cnt < total; i++)
				if (m[k].doc_map[in[i]] != IX_END)
					out[cnt++] = m[k].doc_map[in[i]];
			m[k].tri++;
		}
		if (!rc && cnt)
			rc = ix_segw_tri_list(w, tri, out, cnt);
	}
	fa_free(in);
	fa_free(out);
	return rc;
}

int ix_merge(ix_index *ix, ix_wseg *const *in, size_t n, ix_segment **out, uint64_t *file_len)
{
	*out = NULL;
	*file_len = 0;
	merge_in *m = fa_calloc(n ? n : 1, sizeof *m);
	ix_segw *w = NULL;
	char *path = NULL;
	ix_text_window tw;   /* the inputs' text: whole runs of frames at a time */
	fbuf strs;
	ix_text_window_init(&tw);
	fbuf_init(&strs, 0);
	merge_vec mv = { .ix = ix, .fp = ix->vec_fp };
	fbuf_init(&mv.text, 0);
	int rc = 0;
	if (!m) {
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
		goto cleanup;
	}
	uint64_t live = 0;
	for (size_t k = 0; k < n; k++) {
		m[k].s = in[k]->seg;
		m[k].del_docs = in[k]->del_docs ? in[k]->del_docs : in[k]->seg->del_docs;
		m[k].del_chunks = in[k]->del_chunks ? in[k]->del_chunks : in[k]->seg->del_chunks;
		uint32_t ndel = in[k]->del_chunks ? in[k]->n_del_chunks : in[k]->seg->n_del_chunks;
		m[k].n_del_docs = in[k]->del_docs ? in[k]->n_del_docs : in[k]->seg->n_del_docs;
		live += m[k].s->nchunks - ndel;
		if (live >= IX_END) {
			rc = fa_err(FATHOM_ETOOBIG, "merge: too many chunks for one segment");
			goto cleanup;
		}
		rc = seg_vectors(m[k].s, &m[k].vec);
		if (rc == FATHOM_ENOTFOUND) {
			fa_err_clear();
			rc = 0;
		}
		if (rc)
			goto cleanup;
		m[k].map = fa_malloc(((size_t)m[k].s->nchunks + 1) * sizeof(uint32_t));
		m[k].doc_map = fa_malloc(((size_t)m[k].s->ndocs + 1) * sizeof(uint32_t));
		if (!m[k].map || !m[k].doc_map) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
			goto cleanup;
		}
	}

	uint32_t id = ix_next_seg_id(ix);
	char name[64];
	ix_seg_name(name, sizeof name, id);
	if (!(path = fa_path_join(ix->dir, name))) {
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
		goto cleanup;
	}
	if ((rc = ix_segw_new(&w, id)) != 0 || (rc = ix_segw_open_file(w, path)) != 0)
		goto cleanup;
	ix_segw_collect_trigrams(w, 0);   /* the lists are merged, not rebuilt */
	int copy = can_copy_text(m, n);
	if (!copy && (rc = train_text(w, m, n)) != 0)
		goto cleanup;
	uint32_t next_chunk = 0;
	for (size_t k = 0; k < n && !rc; k++) {
		uint64_t base = UINT64_MAX;
		if (copy && (rc = ix_segw_copy_text(w, m[k].s, &base)) != 0)
			break;
		rc = copy_docs(w, &m[k], &next_chunk, &tw, &strs, base, &mv);
	}
	if (!rc)
		rc = flush_embeds(&mv);
	if (rc)
		goto cleanup;
	if (ix_segw_ndocs(w) == 0)
		goto cleanup;   /* nothing live: no segment */

	ix_segw_set_graph_opts(w, &ix->graph);
	rc = merge_graph(ix, w, m, n, &mv);
	if (!rc)
		rc = merge_postings(w, m, n);
	if (!rc)
		rc = merge_trigrams(w, m, n);
	if (!rc)
		rc = ix_segw_finish(w, file_len);
	if (!rc && (rc = seg_open_file(out, path)) != 0)
		remove(path);

cleanup:
	ix_segw_free(w);   /* removes the file unless finished */
	if (rc)
		*file_len = 0;
	for (size_t k = 0; m && k < n; k++) {
		fa_free(m[k].map);
		fa_free(m[k].doc_map);
	}
	ix_text_window_free(&tw);
	fbuf_free(&strs);
	fbuf_free(&mv.text);
	fa_pool_free(mv.pool);
	fa_free(mv.slot_at);
	fa_free(mv.off);
	fa_free(mv.len);
	fa_free(mv.chunk);
	fa_free(mv.texts);
	fa_free(mv.out);
	fa_free(mv.row);
	fa_free(m);
	fa_free(path);
	return rc;
}
