/* TEMPORARY: until the helpers' remote.c and ppmi.c land */
#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"
int em_remote_open(em_embedder **out, const em_remote_opts *o)
{
	(void)o;
	*out = NULL;
	return fa_err(FATHOM_EINVAL, "remote: not built");
}
int em_model_read(em_model **out, const unsigned char *data, size_t len, const char *name)
{
	(void)data, (void)len, (void)name;
	*out = NULL;
	return fa_err(FATHOM_EINVAL, "corpus: not built");
}
void em_model_free(em_model *m)
{
	(void)m;
}
int em_corpus_new(em_embedder **out, em_model *m)
{
	(void)m;
	*out = NULL;
	return fa_err(FATHOM_EINVAL, "corpus: not built");
}
