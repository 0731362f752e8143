/*
 * glossary.h — curated alias groups (auth = authentication = sign-in),
 * protected names, and the curation queue of proposed groups. The index
 * stores the serialised glossary and commits it atomically with everything
 * else (index/manifest.c); this module owns what is inside.
 */
#ifndef FATHOM_GLOSSARY_H
#define FATHOM_GLOSSARY_H

#include "fathom.h"
#include "index/index.h"
#include "text/text.h"

#define Q_GLOSS_MAX_TERMS 32     /* terms per group */
#define Q_GLOSS_MAX_TERM 128     /* bytes per normalised term */
#define Q_GLOSS_MAX_ITEMS 100000
#define Q_GLOSS_MAX_EVIDENCE 1024  /* bytes of a candidate's evidence */

enum q_gloss_kind { QG_GROUP = 0, QG_PROTECTED, QG_CANDIDATE };
enum q_gloss_status { QG_PENDING = 0, QG_APPROVED, QG_REJECTED };
enum q_gloss_source { QG_SRC_CURATOR = 0, QG_SRC_ACRONYM, QG_SRC_VARIANT, QG_SRC_NEIGHBOUR };

typedef struct q_gitem {
	uint8_t kind, status, source;
	uint32_t id;
	uint64_t count;          /* candidates: times seen in the corpus */
	char *evidence;          /* candidates: the first document seen in */
	char **terms;            /* normalised */
	uint32_t nterms;
} q_gitem;

typedef struct q_glossary {
	q_gitem *items;
	size_t n, cap;
	uint32_t next_id;
} q_glossary;

/* Parse a payload (NULL/0: an empty glossary). FATHOM_ECORRUPT on bad bytes. */
int q_gloss_parse(q_glossary *g, const unsigned char *data, size_t len);
void q_gloss_free(q_glossary *g);
int q_gloss_serialize(const q_glossary *g, fbuf *out);

/* The glossary's normal form: NFKC, case folded, hyphens, underscores and
 * runs of white space folded to one space, trimmed. */
int q_gloss_norm(const char *s, size_t n, fbuf *out);

/* Why a term as written may not join a group: "an all-caps acronym", "a code
 * identifier", "marked protected"; NULL when it may. */
const char *q_gloss_protected(const q_glossary *g, const char *raw, size_t n);

/* The group holding the normalised term, or NULL. */
const q_gitem *q_gloss_group_of(const q_glossary *g, const char *norm, size_t n);

/* Operations, on the glossary of ix (read, changed, staged for the commit). */
int q_gloss_load(q_glossary *g, ix_index *ix);
int q_gloss_store(const q_glossary *g, ix_index *ix);
int q_gloss_add(q_glossary *g, const char *const *terms, size_t n, int from_corpus, uint32_t *id);
int q_gloss_remove(q_glossary *g, const char *what);
int q_gloss_protect(q_glossary *g, const char *name, int on);
int q_gloss_decide(q_glossary *g, uint32_t id, int approve);
/* Scan the corpus for candidates; *added counts the new ones. */
int q_gloss_propose(q_glossary *g, ix_index *ix, text_analyzer *an, size_t *added);
/* Propose the pair a, b (normalised, in byte order) from source, with its
 * evidence: a pair already grouped, pending (counted again) or rejected
 * (remembered) is not proposed again. */
int q_gloss_propose_pair(q_glossary *g, int source, const char *a, const char *b,
                         const char *evidence, size_t *added);

#endif /* FATHOM_GLOSSARY_H */
