/*
 * lines.c — the receipts of a source that finds lines (fathom grep, whose
 * retrieval lives in src/grep): the chunk's matching lines and the first of
 * them as its snippet, both taken from the file as the source read it,
 * which may be newer than the indexed text.
 */
#include "query/query_int.h"

/* The receipt lives with the source's list, which goes before the results
 * do: what the hit points to is copied into the results' arena. */
static int lines_receipt(const q_source *self, const q_cand *c, const ix_chunk_info *ci,
                         fathom_hit *h, fathom_results *r)
{
	(void)self;
	(void)ci;
	const q_line_receipt *x = c->receipt;
	if (!x)
		return 0;
	fa_arena *a = q_results_arena(r);
	uint32_t *lines = fa_arena_alloc(a, (x->n_lines ? x->n_lines : 1) * sizeof *lines);
	if (!lines)
		return fa_err(FATHOM_ENOMEM, "hit lines");
	if (x->n_lines)
		memcpy(lines, x->lines, x->n_lines * sizeof *lines);
	h->match_lines = lines;
	h->n_match_lines = x->n_lines;
	if (x->snippet) {
		h->snippet = fa_arena_strndup(a, x->snippet, strlen(x->snippet));
		if (!h->snippet)
			return fa_err(FATHOM_ENOMEM, "hit snippet");
	}
	if (x->highlight) {
		fathom_span *sp = fa_arena_alloc(a, sizeof *sp);
		if (!sp)
			return fa_err(FATHOM_ENOMEM, "hit snippet");
		*sp = *x->highlight;
		h->highlights = sp;
		h->n_highlights = 1;
	}
	return 0;
}

const q_source q_grep_source = { FATHOM_SOURCE_GREP, lines_receipt, NULL, NULL };
