/*
 * score.c — BM25F over the five fields of a chunk.
 *
 *   tf~   = sum_f w_f * tf_f / (1 - b + b * len_f / avg_f)
 *   score = idf * tf~ * (k1 + 1) / (k1 + tf~)
 *   idf   = ln(1 + (N - df + 0.5) / (df + 0.5))
 *
 * N counts every committed chunk and df every chunk holding the term, over
 * all segments, so a chunk scores the same whichever segment it lives in.
 * The per-term expressions are inline in query_int.h because the retrieval
 * loops call them for every candidate.
 */
#include "query/query_int.h"

void q_scorer_init(q_scorer *s, const fathom_search_opts *o, ix_index *ix)
{
	static const float defaults[FATHOM_NFIELDS] = FATHOM_FIELD_WEIGHTS_INIT;
	for (int f = 0; f < FATHOM_NFIELDS; f++) {
		s->w[f] = o->field_weights && (size_t)f < o->n_field_weights ? o->field_weights[f]
		                                                             : defaults[f];
		double avg = ix_avg_field_len(ix, f);
		s->avg[f] = (avg > 0.0 && isfinite(avg)) ? avg : 0.0;
		s->b_avg[f] = s->avg[f] > 0.0 ? (double)o->b / s->avg[f] : 0.0;
	}
	s->k1 = o->k1;
	s->b = o->b;
	s->one_minus_b = 1.0 - s->b;
}

double q_idf(uint64_t n_chunks, uint64_t df)
{
	if (df > n_chunks)
		df = n_chunks; /* only a damaged index says so; keep idf >= 0 */
	double n = (double)n_chunks, d = (double)df;
	return log(1.0 + (n - d + 0.5) / (d + 0.5));
}

/* With max_tf and min_len in place of a chunk's tf and lengths, q_tf_tilde
 * gives U >= tf~ of every posting the bound covers, and q_saturate is
 * monotonic, so this is >= each of their scores. */
double q_term_bound(const q_scorer *s, double idf, const ix_bound *b)
{
	return q_saturate(s, idf, q_tf_tilde(s, b->max_tf, b->min_len));
}
