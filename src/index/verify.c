/*
 * verify.c — ix_verify (every byte of every file the manifest names, every
 * checksum: pages, sections, tombstones, payload files; every structure
 * decoded, the HNSW graph's too) and ix_sizes_get (bytes per structure, for `fathom stats`).
 */
#include "index/index_int.h"

int ix_verify(ix_index *ix)
{
	ix_manifest m;
	int rc = ix_manifest_read(&m, ix->dir);
	if (rc)
		return rc;
	rc = ix_payloads_verify(ix->dir, &m);
	ix_manifest_free(&m);
	if (rc)
		return rc;
	for (size_t i = 0; i < ix->nsegs; i++) {
		ix_segment *s = ix->segs[i];
		if ((rc = seg_verify(s)) != 0)
			return rc;
		/* every vector's values, then the HNSW graph's structure
		 * (seg_graph checks what a search reads) */
		if ((rc = seg_vectors_verify(s)) != 0)
			return rc;
		const struct vx_hnsw *g;
		if ((rc = seg_graph(s, &g)) == FATHOM_ENOTFOUND)
			rc = 0;
		if (rc)
			return rc;
		if (s->del_gen) {
			uint8_t *dd, *dc;
			rc = ix_tomb_read(ix->dir, s->id, s->del_gen, s->ndocs, s->nchunks, &dd, &dc);
			if (rc == FATHOM_ENOTFOUND)
				rc = fa_err_wrap(FATHOM_ECORRUPT, "%s", ix->dir);
			if (rc)
				return rc;
			size_t dl = ((size_t)s->ndocs + 7) / 8, cl = ((size_t)s->nchunks + 7) / 8;
			if (memcmp(dd, s->del_docs, dl) != 0 || memcmp(dc, s->del_chunks, cl) != 0)
				rc = fa_err(FATHOM_ECORRUPT, "%s: tombstones changed on disk", s->path);
			fa_free(dd);
			fa_free(dc);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int ix_sizes_get(ix_index *ix, ix_sizes *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < ix->nsegs; i++) {
		const ix_segment *s = ix->segs[i];
		const uint64_t *l = s->sec_len;
		out->dict += l[IX_SEC_DICT] + l[IX_SEC_DICT_INDEX];
		out->postings += s->post_bytes;
		out->positions += s->pos_bytes;
		out->docstore += l[IX_SEC_DOCSTORE] + l[IX_SEC_FRAMES] + l[IX_SEC_DOCSTORE_DICT];
		out->docs += l[IX_SEC_DOCS] + l[IX_SEC_DOC_STRINGS] + l[IX_SEC_KEYS];
		out->chunks += l[IX_SEC_CHUNKS] + l[IX_SEC_CHUNK_STRINGS];
		out->trigrams += l[IX_SEC_TRI_POST] + l[IX_SEC_TRI_INDEX];
		out->vectors += l[IX_SEC_VECTORS] + l[IX_SEC_GRAPH];
		/* The preamble, the page CRCs, the directory, the footer, and any
		 * section this build does not know. */
		uint64_t known = 0;
		for (int k = 0; k < IX_NSEC; k++)
			known += l[k];
		out->other += s->len - known;
		if (s->del_gen)
			out->other += ix_tomb_file_size(s->ndocs, s->nchunks);
		out->terms += s->nterms;
		out->docs_live += s->ndocs - s->n_del_docs;
		out->chunks_live += s->nchunks - s->n_del_chunks;
		out->chunks_deleted += s->n_del_chunks;
		out->raw_text += s->raw_text;
		for (uint32_t d = 0; d < s->ndocs; d++) {
			if (seg_doc_is_deleted(s, d) || !seg_doc_has_trigrams(s, d))
				continue;
			ix_doc_info di;
			int rc = seg_doc(s, d, &di);
			if (rc)
				return rc;
			out->grep_files++;
			out->grep_file_bytes += di.size;
			out->grep_only_files += (uint64_t)di.grep_only;
		}
	}
	out->other += 44 + strlen(ix->man.stem_lang) + strlen(ix->man.root) +
	              (uint64_t)ix->man.nsegs * 40;
	/* The named values and payload files. */
	for (uint32_t i = 0; i < ix->man.nkv; i++)
		out->other += 2 + strlen(ix->man.kv[i].key) + 4 + ix->man.kv[i].body_len;
	for (size_t i = 0; i < ix->npay; i++)
		if (ix->pay[i].kind == IX_KV_FILE)
			out->other += ix->pay[i].len + 28;
	out->total = out->dict + out->postings + out->positions + out->docstore + out->docs +
	             out->chunks + out->trigrams + out->vectors + out->other;
	return 0;
}
