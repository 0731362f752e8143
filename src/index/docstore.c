/*
 * docstore.c — the document store: the text of every document of a segment,
 * back to back in one raw stream, cut into frames and each frame compressed
 * on its own with zstd. Small documents share a frame and a large one spans
 * several; the frame table maps raw offsets to frames, so reading a snippet
 * decompresses one frame, not the document.
 *
 * A segment with at least DS_DICT_MIN_RAW bytes of text gets a zstd
 * dictionary trained on samples of its own text, and frames of 8 KiB
 * instead of 64 KiB. Every search hit reads its chunk's text for the
 * snippet, and decompressing a whole 64 KiB frame to return 1.5 KB was a
 * third of the daemon's CPU: reading a chunk's text now costs 15 us instead
 * of 55-65. Alone, small frames compress worse (+19% on SciFact) because
 * each starts with an empty window; the dictionary gives them one. The
 * store ends 9% smaller than with 64 KiB frames on SciFact, 8% larger on C
 * source (docs/BENCHMARKS.md). Below the threshold a 16 KiB dictionary
 * would be a large share of the store and fewer than 32 frames too few
 * samples, so small segments keep 64 KiB frames and no dictionary, as in
 * format version 5 (levels 5-9 and frames of 4-16 KiB were measured; 4 KiB
 * frames made C source 17% larger, 16 KiB read at 26 us).
 *
 * Training (fastCover, fixed parameters) takes about 12 ms per MiB of
 * samples, so their budget grows with the text: an eighth of it, 2 to 8
 * MiB (ix_ds_sample_budget). A merge knows its inputs and samples evenly
 * across them (merge.c) before writing anything. A fresh segment's writer
 * does not know how much text will come, so it holds the first
 * DS_TRAIN_WINDOW bytes raw, trains on samples spread over them when the
 * window fills (or at finish), then compresses the window and streams the
 * rest. A tree is often walked folder by folder, so the first 16 MiB of a
 * segment were a poor picture of the rest: a 64 MiB window and 8 MiB of
 * samples made the kernel's document store 3.4% smaller at level 5 for no
 * measurable time (docs/BENCHMARKS.md); on SciFact, whose 7 MB all fit in
 * the window, 8 MiB of samples cost 16% of `fathom add`, hence the budget.
 *
 * Level 9 without a dictionary: on source code 10% smaller than level 3 at
 * no measurable cost to indexing (bound by analysis); level 12 doubled the
 * indexing time for 1%. Level 6 with one: once analysis was made cheaper,
 * compression was a quarter of `fathom add`; level 5 instead of 7 made the
 * kernel quick subset's build 0.93x as long for a 4.9% larger document
 * store (0.6% on SciFact); level 6 with the wider training window above
 * keeps the index no larger than level 7 with the old window (kernel
 * 790.6 MB against 791.1) at about half of level 7's extra time, and 16
 * KiB frames at level 5, smaller than 8 KiB at 7, cost a snippet 29% more
 * (docs/BENCHMARKS.md).
 *
 * Compression is the writer's largest cost, and frames are independent:
 * once the frames are decided, the text is held DS_BATCH_FRAMES frames at a
 * time and each batch compressed on a pool of threads, one zstd context
 * each (loaded with the same dictionary and level, so every frame's bytes
 * are what one context would have made), the frames appended in order.
 * The batch held raw counts in the writer's memory (ix_segw_mem), so a
 * flush may come a few documents earlier than when frames were compressed
 * one at a time; nothing depends on the number of threads.
 *
 * zstd allocates through fathom's allocator (ZSTD_customMem), so allocation
 * failure tests reach it too; the dictionary trainer (zdict) cannot be given
 * an allocator and uses malloc: its failure only means no dictionary.
 */
#define ZSTD_STATIC_LINKING_ONLY
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "index/index_int.h"
#include "util/pool.h"

#define DS_LEVEL 9                              /* frames without a dictionary */
#define DS_DICT_LEVEL 6                         /* frames with one */
#define DS_DICT_MIN_RAW ((uint64_t)256 << 10)  /* text bytes for a dictionary */
#define DS_DICT_MIN ((size_t)16 << 10)          /* dictionary size: raw / 32 in [min, max] */
#define DS_DICT_MAX ((size_t)128 << 10)
#define DS_TRAIN_WINDOW ((size_t)64 << 20)      /* raw text held before training */
#define DS_BATCH_FRAMES 32                      /* frames compressed together */

static void *zs_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return fa_malloc(n);
}

static void zs_free(void *opaque, void *p)
{
	(void)opaque;
	fa_free(p);
}

static const ZSTD_customMem zs_mem = { zs_alloc, zs_free, NULL };

/* A zstd error code as a fathom error: its allocations failing is
 * FATHOM_ENOMEM like any other, not an I/O error. */
static int zs_err(size_t code)
{
	if (ZSTD_getErrorCode(code) == ZSTD_error_memory_allocation)
		return fa_err(FATHOM_ENOMEM, "zstd: %s", ZSTD_getErrorName(code));
	return fa_err(FATHOM_EIO, "zstd: %s", ZSTD_getErrorName(code));
}

/* ---- writing ---------------------------------------------------------------- */

static size_t train_window_bytes = DS_TRAIN_WINDOW;

void ix_ds_set_train_window(size_t bytes)
{
	train_window_bytes = bytes ? FA_MAX(bytes, (size_t)IX_FRAME_RAW) : DS_TRAIN_WINDOW;
}

int ix_ds_init(ix_ds_writer *w)
{
	memset(w, 0, sizeof *w);
	fbuf_init(&w->comp, 0);
	fbuf_init(&w->copied_dicts, 0);
	w->window = train_window_bytes;
	return 0;
}

static void threads_free(struct ix_ds_threads *t);

void ix_ds_free(ix_ds_writer *w)
{
	threads_free(w->threads);
	if (w->cctx)
		ZSTD_freeCCtx(w->cctx);
	fa_free(w->raw);
	fa_free(w->dict);
	fbuf_free(&w->comp);
	fbuf_free(&w->copied_dicts);
	fa_free(w->frames);
	memset(w, 0, sizeof *w);
}

size_t ix_ds_sample_budget(uint64_t raw)
{
	uint64_t b = FA_MIN(FA_MAX(raw / 8, (uint64_t)IX_DS_SAMPLE_MIN), (uint64_t)IX_DS_SAMPLE_MAX);
	return (size_t)FA_MIN(b, raw);
}

int ix_ds_wants_dict(uint64_t raw_estimate)
{
	return raw_estimate >= DS_DICT_MIN_RAW;
}

static _Atomic unsigned ds_threads;

void ix_ds_set_threads(unsigned n)
{
	ds_threads = n;
}

unsigned ix_ds_thread_count(void)
{
	unsigned n = ds_threads;
	return n ? n : fa_cpu_count(0);
}

/* A zstd context with the writer's level and dictionary. */
static int new_cctx(const ix_ds_writer *w, ZSTD_CCtx **out)
{
	if (!(*out = ZSTD_createCCtx_advanced(zs_mem)))
		return fa_err(FATHOM_ENOMEM, "out of memory (zstd context)");
	size_t r = ZSTD_CCtx_setParameter(*out, ZSTD_c_compressionLevel,
	                                  w->dict ? DS_DICT_LEVEL : DS_LEVEL);
	if (!ZSTD_isError(r) && w->dict)
		r = ZSTD_CCtx_loadDictionary(*out, w->dict, w->dict_len);
	if (ZSTD_isError(r))
		return zs_err(r);
	return 0;
}

/* Record the frame of n raw bytes whose c compressed bytes end w->comp. */
static void record_frame(ix_ds_writer *w, size_t c, size_t n)
{
	const ix_ds_frame *prev = w->nframes ? &w->frames[w->nframes - 1] : NULL;
	ix_ds_frame *f = &w->frames[w->nframes++];
	f->raw_start = prev ? prev->raw_start + prev->raw_len : 0;
	f->comp_off = w->comp_base + w->comp.len - c;
	f->comp_len = (uint32_t)c;
	f->raw_len = (uint32_t)n;
}

/* Compress src[0..n) as the next frame. */
static int compress_frame(ix_ds_writer *w, const unsigned char *src, size_t n)
{
	if (n == 0)
		return 0;
	int rc = fa_grow((void **)&w->frames, &w->frames_cap, w->nframes + 1, sizeof *w->frames);
	size_t bound = ZSTD_compressBound(n);
	if (rc || (rc = fbuf_reserve(&w->comp, bound)) != 0)
		return rc;
	size_t c = ZSTD_compress2(w->cctx, w->comp.data + w->comp.len, bound, src, n);
	if (ZSTD_isError(c))
		return zs_err(c);
	w->comp.len += c;
	record_frame(w, c, n);
	return 0;
}

/* The threads of one writer: a pool, a context per worker, and a ring of
 * frames in flight. */
typedef struct ds_slot {
	const unsigned char *src;
	size_t n;
	unsigned char *out;
	size_t out_cap, out_len;
	size_t zerr;           /* a zstd error code, or 0 */
} ds_slot;

typedef struct ix_ds_threads {
	fa_pool *pool;
	ZSTD_CCtx **cctx;       /* one per worker */
	size_t ncctx;
	ds_slot *slots;
	size_t window;
	/* the batch being compressed */
	ix_ds_writer *w;
	const unsigned char *src;
	size_t len, at;
} ix_ds_threads;

static void threads_free(ix_ds_threads *t)
{
	if (!t)
		return;
	fa_pool_free(t->pool);
	for (size_t i = 0; i < t->ncctx; i++)
		if (t->cctx[i])
			ZSTD_freeCCtx(t->cctx[i]);
	fa_free(t->cctx);
	for (size_t i = 0; i < t->window; i++)
		fa_free(t->slots[i].out);
	fa_free(t->slots);
	fa_free(t);
}

/* The writer's threads, started on the first batch; none (NULL) with one
 * CPU or ix_ds_set_threads(1). */
static int threads_start(ix_ds_writer *w)
{
	unsigned n = ix_ds_thread_count();
	if (n < 2 || w->threads)
		return 0;
	ix_ds_threads *t = fa_calloc(1, sizeof *t);
	if (!t)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	int rc = fa_pool_new(&t->pool, FA_MIN(n, FA_POOL_MAX_THREADS));
	if (!rc && fa_pool_threads(t->pool) < 2) {
		threads_free(t);   /* threads could not start: the writer alone */
		return 0;
	}
	if (!rc) {
		t->ncctx = fa_pool_threads(t->pool);
		t->window = t->ncctx * 2;
		t->cctx = fa_calloc(t->ncctx, sizeof *t->cctx);
		t->slots = fa_calloc(t->window, sizeof *t->slots);
		if (!t->cctx || !t->slots)
			rc = fa_err(FATHOM_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < t->ncctx && !rc; i++)
		rc = new_cctx(w, &t->cctx[i]);
	if (rc) {
		threads_free(t);
		return rc;
	}
	w->threads = t;
	return 0;
}

static int ds_produce(void *ctx, size_t slot)
{
	ix_ds_threads *t = ctx;
	if (t->at >= t->len)
		return 0;
	ds_slot *s = &t->slots[slot];
	s->src = t->src + t->at;
	s->n = FA_MIN(t->len - t->at, (size_t)t->w->frame_raw);
	t->at += s->n;
	return 1;
}

static int ds_work(void *ctx, unsigned worker, size_t slot)
{
	ix_ds_threads *t = ctx;
	ds_slot *s = &t->slots[slot];
	size_t bound = ZSTD_compressBound(s->n);
	if (bound > s->out_cap) {
		unsigned char *p = fa_realloc(s->out, bound);
		if (!p)
			return FATHOM_ENOMEM;
		s->out = p;
		s->out_cap = bound;
	}
	size_t c = ZSTD_compress2(t->cctx[worker], s->out, bound, s->src, s->n);
	s->zerr = ZSTD_isError(c) ? c : 0;
	s->out_len = ZSTD_isError(c) ? 0 : c;
	return 0;
}

static int ds_emit(void *ctx, size_t slot)
{
	ix_ds_threads *t = ctx;
	ix_ds_writer *w = t->w;
	ds_slot *s = &t->slots[slot];
	if (s->zerr)
		return zs_err(s->zerr);   /* here: the message is the calling thread's */
	int rc = fa_grow((void **)&w->frames, &w->frames_cap, w->nframes + 1, sizeof *w->frames);
	if (rc || (rc = fbuf_append(&w->comp, s->out, s->out_len)) != 0)
		return rc;
	record_frame(w, s->out_len, s->n);
	return 0;
}

/* Compress src[0..n) as frames of frame_raw bytes (the last one shorter). */
static int compress_frames(ix_ds_writer *w, const unsigned char *src, size_t n)
{
	int rc = n > w->frame_raw ? threads_start(w) : 0;
	if (rc)
		return rc;
	ix_ds_threads *t = w->threads;
	if (!t || n <= w->frame_raw) {
		for (size_t at = 0; at < n && !rc; at += w->frame_raw)
			rc = compress_frame(w, src + at, FA_MIN(n - at, (size_t)w->frame_raw));
		return rc;
	}
	t->w = w;
	t->src = src;
	t->len = n;
	t->at = 0;
	const fa_pipeline fns = { ds_produce, ds_work, ds_emit };
	rc = fa_pool_run(t->pool, t->window, &fns, t);
	if (rc == FATHOM_ENOMEM)
		rc = fa_err(FATHOM_ENOMEM, "out of memory (document store frames)");
	return rc;
}

/* Fix the frame size (small frames with a dictionary, 64 KiB without) and
 * compress the text held so far: whole frames now, the rest (or, at
 * finish, everything) kept in a buffer of one frame. */
static int set_frames(ix_ds_writer *w, int finish)
{
	int rc;
	if (!w->cctx) {
		ZSTD_CCtx *c;
		if ((rc = new_cctx(w, &c)) != 0)
			return rc;
		w->cctx = c;
	}
	w->frame_raw = w->dict ? IX_FRAME_RAW_DICT : IX_FRAME_RAW;
	size_t whole = finish ? w->raw_fill : w->raw_fill - w->raw_fill % w->frame_raw;
	if ((rc = compress_frames(w, w->raw, whole)) != 0)
		return rc;
	size_t cap = (size_t)w->frame_raw * DS_BATCH_FRAMES;
	unsigned char *buf = fa_malloc(cap);
	if (!buf)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	if (w->raw_fill > whole)
		memcpy(buf, w->raw + whole, w->raw_fill - whole);
	fa_free(w->raw);
	w->raw = buf;
	w->raw_cap = cap;
	w->raw_fill -= whole;
	return 0;
}

/* Train the dictionary (when the text is worth one) and fix the frames.
 * A failed training only means no dictionary. */
static int train(ix_ds_writer *w, const unsigned char *samples, const size_t *sizes, size_t n,
                 uint64_t raw_estimate, int finish)
{
	if (ix_ds_wants_dict(raw_estimate) && n >= 8 && n <= UINT32_MAX) {
		size_t cap = (size_t)FA_MIN((uint64_t)DS_DICT_MAX, raw_estimate / 32);
		cap = FA_MAX(cap, DS_DICT_MIN);
		if (!(w->dict = fa_malloc(cap)))
			return fa_err(FATHOM_ENOMEM, "out of memory (text dictionary)");
		/* Fixed parameters, chosen on SciFact and kernel source: short
		 * segments (k 200) did better than longer ones, and accel 4
		 * trains four times faster than 1 for 0.1% in size; f 20 takes
		 * 6 MiB of scratch. */
		ZDICT_fastCover_params_t p;
		memset(&p, 0, sizeof p);
		p.k = 200;
		p.d = 8;
		p.f = 20;
		p.accel = 4;
		p.splitPoint = 1.0;
		p.zParams.compressionLevel = DS_DICT_LEVEL;
		size_t r = ZDICT_trainFromBuffer_fastCover(w->dict, cap, samples, sizes, (unsigned)n, p);
		if (ZDICT_isError(r)) {
			fa_free(w->dict);
			w->dict = NULL;
		} else {
			w->dict_len = r;
		}
	}
	return set_frames(w, finish);
}

int ix_ds_train(ix_ds_writer *w, const unsigned char *samples, const size_t *sizes, size_t n,
                uint64_t raw_estimate)
{
	if (w->frame_raw || w->raw_total)
		return fa_err(FATHOM_EINVAL, "document store: dictionary after text");
	return train(w, samples, sizes, n, raw_estimate, 0);
}

/* The training window is full, or the segment ends before it filled:
 * train on frame-sized pieces of it, evenly spread when it holds more than
 * the sample budget. */
static int train_window(ix_ds_writer *w, int finish)
{
	if (!ix_ds_wants_dict(w->raw_fill))
		return set_frames(w, finish);
	const size_t piece = IX_DS_SAMPLE_PIECE;
	size_t n = (w->raw_fill + piece - 1) / piece;
	unsigned char *copy = NULL;
	const unsigned char *samples = w->raw;
	size_t budget = ix_ds_sample_budget(w->raw_fill);
	if (w->raw_fill > budget) {
		n = budget / piece;
		if (!(copy = fa_malloc(n * piece)))
			return fa_err(FATHOM_ENOMEM, "out of memory (text samples)");
		for (size_t i = 0; i < n; i++)
			memcpy(copy + i * piece, w->raw + (w->raw_fill - piece) / (n - 1) * i, piece);
		samples = copy;
	}
	size_t *sizes = fa_malloc(n * sizeof *sizes);
	int rc;
	if (!sizes) {
		rc = fa_err(FATHOM_ENOMEM, "out of memory (text samples)");
	} else {
		for (size_t i = 0; i < n; i++)
			sizes[i] = copy ? piece : FA_MIN(piece, w->raw_fill - i * piece);
		rc = train(w, samples, sizes, n, w->raw_fill, finish);
	}
	fa_free(sizes);
	fa_free(copy);
	return rc;
}

int ix_ds_append(ix_ds_writer *w, const char *text, size_t len)
{
	if (w->copying && len)
		return fa_err(FATHOM_EINVAL, "document store: text after copied frames");
	while (len) {
		/* Until the frames are decided the text is held, up to the
		 * training window; then a batch of frames at a time. */
		size_t limit = w->frame_raw ? (size_t)w->frame_raw * DS_BATCH_FRAMES : w->window;
		size_t k = FA_MIN(len, limit - w->raw_fill);
		if (w->raw_fill + k > w->raw_cap) {
			size_t cap = FA_MAX(w->raw_cap * 2, (size_t)IX_FRAME_RAW);
			cap = FA_MIN(FA_MAX(cap, w->raw_fill + k), limit);
			unsigned char *p = fa_realloc(w->raw, cap);
			if (!p)
				return fa_err(FATHOM_ENOMEM, "out of memory (document text)");
			w->raw = p;
			w->raw_cap = cap;
		}
		memcpy(w->raw + w->raw_fill, text, k);
		w->raw_fill += k;
		w->raw_total += k;
		text += k;
		len -= k;
		if (w->raw_fill < limit)
			continue;
		int rc;
		if (!w->frame_raw) {
			rc = train_window(w, 0);
		} else {
			rc = compress_frames(w, w->raw, w->raw_fill);
			w->raw_fill = 0;
		}
		if (rc)
			return rc;
	}
	return 0;
}

int ix_ds_finish(ix_ds_writer *w)
{
	if (w->copying)
		return 0;
	if (!w->frame_raw)
		return train_window(w, 1);
	int rc = compress_frames(w, w->raw, w->raw_fill);
	if (!rc)
		w->raw_fill = 0;
	return rc;
}

/* ---- reading ---------------------------------------------------------------- */

/* One cached decompression context per segment: taken and given back with
 * atomic swaps, so concurrent readers never share one (the loser of a race
 * makes its own). */
static ZSTD_DCtx *dctx_take(const ix_segment *s)
{
	void **slot = (void **)&s->dctx;
	ZSTD_DCtx *d = __atomic_exchange_n(slot, NULL, __ATOMIC_ACQ_REL);
	return d ? d : ZSTD_createDCtx_advanced(zs_mem);
}

static void dctx_give(const ix_segment *s, ZSTD_DCtx *d)
{
	void **slot = (void **)&s->dctx;
	void *expected = NULL;
	if (!__atomic_compare_exchange_n(slot, &expected, d, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		ZSTD_freeDCtx(d);
}

static int ds_corrupt(const ix_segment *s, uint64_t frame, const char *what)
{
	return fa_err(FATHOM_ECORRUPT, "%s: document store frame %llu: %s", s->path,
	              (unsigned long long)frame, what);
}

static int dict_corrupt(const ix_segment *s, const char *what)
{
	return fa_err(FATHOM_ECORRUPT, "%s: document store dictionary: %s", s->path, what);
}

/* The dictionaries of a segment, digested: a static ZSTD_DDict each, in
 * an allocation from fathom's allocator. by_id: they came from TDCS, and
 * each frame's header names the one it needs; from TDIC there is one, for
 * every frame. */
typedef struct ds_dictset {
	uint32_t n;
	int by_id;
	uint32_t id[IX_DS_MAX_DICTS];
	ZSTD_DDict *dd[IX_DS_MAX_DICTS];
} ds_dictset;

static void dictset_free(ds_dictset *set)
{
	if (!set)
		return;
	for (uint32_t k = 0; k < set->n; k++)
		fa_free(set->dd[k]);
	fa_free(set);
}

void ix_ds_release(ix_segment *s)
{
	if (s->dctx)
		ZSTD_freeDCtx(s->dctx);
	s->dctx = NULL;
	dictset_free(s->ddict);
	s->ddict = NULL;
}

static int one_dict(const ix_segment *s, const unsigned char *data, size_t len,
                    ix_ds_dictref *out)
{
	if (len == 0 || len > IX_DS_DICT_MAX)
		return dict_corrupt(s, "bad dictionary length");
	out->data = data;
	out->len = len;
	out->id = (uint32_t)ZSTD_getDictID_fromDict(data, len);
	if (out->id == 0)
		return dict_corrupt(s, "not a zstd dictionary");
	return 0;
}

int ix_ds_dicts(const ix_segment *s, ix_ds_dictref *out, size_t cap, size_t *n)
{
	*n = 0;
	uint64_t off = s->sec_off[IX_SEC_DOCSTORE_DICT], len = s->sec_len[IX_SEC_DOCSTORE_DICT];
	int rc;
	if (len) {
		if (cap < 1)
			return fa_err(FATHOM_ETOOBIG, "%s: too many text dictionaries", s->path);
		if ((rc = seg_check_range(s, off, len)) != 0 ||
		    (rc = one_dict(s, s->data + off, (size_t)len, &out[0])) != 0)
			return rc;
		*n = 1;
		return 0;
	}
	off = s->sec_off[IX_SEC_DOCSTORE_DICTS];
	len = s->sec_len[IX_SEC_DOCSTORE_DICTS];
	if (len == 0)
		return 0;
	if ((rc = seg_check_range(s, off, len)) != 0)
		return rc;
	/* u32 count, then count x (u32 offset in the section, u32 length) */
	const unsigned char *sec = s->data + off;
	uint32_t count = len >= 4 ? fa_load32(sec) : 0;
	if (count < 2 || count > IX_DS_MAX_DICTS || 4 + (uint64_t)count * 8 > len)
		return dict_corrupt(s, "bad dictionary table");
	if (count > cap)
		return fa_err(FATHOM_ETOOBIG, "%s: too many text dictionaries", s->path);
	for (uint32_t k = 0; k < count; k++) {
		uint32_t doff = fa_load32(sec + 4 + 8 * k), dlen = fa_load32(sec + 8 + 8 * k);
		if (doff < 4 + count * 8 || doff > len || dlen > len - doff)
			return dict_corrupt(s, "a dictionary outside its section");
		if ((rc = one_dict(s, sec + doff, dlen, &out[k])) != 0)
			return rc;
		for (uint32_t j = 0; j < k; j++)
			if (out[j].id == out[k].id)
				return dict_corrupt(s, "two dictionaries with one id");
	}
	*n = count;
	return 0;
}

/* Digest one dictionary into a DDict that refers to the mapped bytes
 * (checked pages, which the mapping keeps for the segment's life). The
 * DDict is built in a workspace from fathom's allocator, so a NULL from
 * zstd means the dictionary is bad, not that memory ran out. */
static int ddict_make(const ix_segment *s, const ix_ds_dictref *d, ZSTD_DDict **out)
{
	size_t ws = ZSTD_estimateDDictSize(d->len, ZSTD_dlm_byRef);
	void *mem = fa_malloc(ws);
	if (!mem)
		return fa_err(FATHOM_ENOMEM, "out of memory (zstd dictionary)");
	const ZSTD_DDict *dd = ZSTD_initStaticDDict(mem, ws, d->data, d->len, ZSTD_dlm_byRef,
	                                            ZSTD_dct_fullDict);
	if (!dd || (const void *)dd != mem) {
		fa_free(mem);
		return dict_corrupt(s, "bad entropy tables");
	}
	*out = mem;
	return 0;
}

static int dictset_make(const ix_segment *s, ds_dictset **out)
{
	ix_ds_dictref d[IX_DS_MAX_DICTS];
	size_t n;
	int rc = ix_ds_dicts(s, d, IX_DS_MAX_DICTS, &n);
	if (rc)
		return rc;
	ds_dictset *set = fa_calloc(1, sizeof *set);
	if (!set)
		return fa_err(FATHOM_ENOMEM, "out of memory (zstd dictionary)");
	set->by_id = s->sec_len[IX_SEC_DOCSTORE_DICTS] > 0;
	for (size_t k = 0; k < n && !rc; k++) {
		set->id[k] = d[k].id;
		if ((rc = ddict_make(s, &d[k], &set->dd[k])) == 0)
			set->n++;
	}
	if (rc) {
		dictset_free(set);
		return rc;
	}
	*out = set;
	return 0;
}

/* The segment's dictionaries (NULL: it has none). The first reader to
 * need them makes them and publishes the set with a compare-and-swap; a
 * reader that loses the race frees its own. Once published they are only
 * read, which zstd allows from many threads at once. */
static int dictset_get(const ix_segment *s, const ds_dictset **out)
{
	*out = NULL;
	if (s->sec_len[IX_SEC_DOCSTORE_DICT] == 0 && s->sec_len[IX_SEC_DOCSTORE_DICTS] == 0)
		return 0;
	void **slot = (void **)&s->ddict;
	void *have = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (!have) {
		ds_dictset *mine = NULL;
		int rc = dictset_make(s, &mine);
		if (rc)
			return rc;
		if (__atomic_compare_exchange_n(slot, &have, mine, 0, __ATOMIC_ACQ_REL,
		                                __ATOMIC_ACQUIRE))
			have = mine;
		else
			dictset_free(mine);
	}
	*out = have;
	return 0;
}

/* The dictionary frame i needs: the one of TDIC for every frame, or the
 * one of TDCS its header names (none when it names none). */
static int frame_ddict(const ix_segment *s, const ds_dictset *set, uint64_t i,
                       const unsigned char *src, size_t len, const ZSTD_DDict **dd)
{
	*dd = NULL;
	if (!set)
		return 0;
	if (!set->by_id) {
		*dd = set->dd[0];
		return 0;
	}
	uint32_t id = (uint32_t)ZSTD_getDictID_fromFrame(src, len);
	if (id == 0)
		return 0;
	for (uint32_t k = 0; k < set->n; k++) {
		if (set->id[k] == id) {
			*dd = set->dd[k];
			return 0;
		}
	}
	return ds_corrupt(s, i, "names a dictionary the segment does not have");
}

typedef struct frame_info {
	uint64_t raw_start, comp_off;
	uint32_t comp_len, raw_len;
} frame_info;

static int frame_get(const ix_segment *s, uint64_t i, frame_info *fi)
{
	uint64_t off = s->sec_off[IX_SEC_FRAMES] + i * IX_FRAME_REC;
	int rc = seg_check_range(s, off, IX_FRAME_REC);
	if (rc)
		return rc;
	const unsigned char *r = s->data + off;
	fi->raw_start = fa_load64(r);
	fi->comp_off = fa_load64(r + 8);
	fi->comp_len = fa_load32(r + 16);
	fi->raw_len = fa_load32(r + 20);
	if (fi->raw_len == 0 || fi->raw_len > s->frame_raw || fi->comp_len == 0 ||
	    fi->comp_off > s->sec_len[IX_SEC_DOCSTORE] ||
	    fi->comp_len > s->sec_len[IX_SEC_DOCSTORE] - fi->comp_off ||
	    fi->raw_start > s->raw_text || fi->raw_len > s->raw_text - fi->raw_start)
		return ds_corrupt(s, i, "bad frame table entry");
	return 0;
}

/* Decompress frame i into dst (fi->raw_len bytes); set: the segment's
 * dictionaries or NULL. */
static int frame_decompress(const ix_segment *s, ZSTD_DCtx *d, const ds_dictset *set,
                            uint64_t i, const frame_info *fi, unsigned char *dst)
{
	uint64_t off = s->sec_off[IX_SEC_DOCSTORE] + fi->comp_off;
	int rc = seg_check_range(s, off, fi->comp_len);
	if (rc)
		return rc;
	const unsigned char *src = s->data + off;
	const ZSTD_DDict *dd;
	if ((rc = frame_ddict(s, set, i, src, fi->comp_len, &dd)) != 0)
		return rc;
	size_t n = dd ? ZSTD_decompress_usingDDict(d, dst, fi->raw_len, src, fi->comp_len, dd)
	              : ZSTD_decompressDCtx(d, dst, fi->raw_len, src, fi->comp_len);
	if (ZSTD_isError(n) && ZSTD_getErrorCode(n) == ZSTD_error_memory_allocation)
		return zs_err(n);
	if (ZSTD_isError(n))
		return ds_corrupt(s, i, ZSTD_getErrorName(n));
	if (n != fi->raw_len)
		return ds_corrupt(s, i, "wrong decompressed size");
	return 0;
}

int ix_ds_read(const ix_segment *s, uint64_t raw_off, uint64_t len, fbuf *out)
{
	if (len == 0)
		return 0;
	uint64_t end = raw_off + len;
	if (end < raw_off || end > s->raw_text)
		return fa_err(FATHOM_ECORRUPT, "%s: text range past the document store", s->path);
	uint64_t nframes = s->sec_len[IX_SEC_FRAMES] / IX_FRAME_REC;
	/* Last frame starting at or before raw_off. */
	uint64_t lo = 0, hi = nframes;
	frame_info fi;
	const ds_dictset *dd;
	int rc = dictset_get(s, &dd);
	if (rc)
		return rc;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if ((rc = frame_get(s, mid, &fi)) != 0)
			return rc;
		if (fi.raw_start <= raw_off)
			lo = mid;
		else
			hi = mid;
	}
	ZSTD_DCtx *d = dctx_take(s);
	unsigned char *scratch = NULL;
	if (!d)
		return fa_err(FATHOM_ENOMEM, "out of memory (zstd context)");
	uint64_t pos = raw_off;
	for (uint64_t i = lo; pos < end; i++) {
		if (i >= nframes) {
			rc = ds_corrupt(s, i, "missing");
			break;
		}
		if ((rc = frame_get(s, i, &fi)) != 0)
			break;
		if (pos < fi.raw_start || pos >= fi.raw_start + fi.raw_len) {
			rc = ds_corrupt(s, i, "frames do not cover the text");
			break;
		}
		uint64_t from = pos - fi.raw_start;
		uint64_t take = FA_MIN(end - pos, fi.raw_len - from);
		if (from == 0 && take == fi.raw_len) {
			/* The whole frame is wanted: decompress straight into out. */
			if ((rc = fbuf_reserve(out, fi.raw_len)) != 0)
				break;
			if ((rc = frame_decompress(s, d, dd, i, &fi, out->data + out->len)) != 0)
				break;
			out->len += fi.raw_len;
		} else {
			if (!scratch && !(scratch = fa_malloc(s->frame_raw))) {
				rc = fa_err(FATHOM_ENOMEM, "out of memory");
				break;
			}
			if ((rc = frame_decompress(s, d, dd, i, &fi, scratch)) != 0)
				break;
			if ((rc = fbuf_append(out, scratch + from, take)) != 0)
				break;
		}
		pos += take;
	}
	fa_free(scratch);
	dctx_give(s, d);
	return rc;
}

int ix_ds_verify(const ix_segment *s)
{
	if (s->sec_len[IX_SEC_FRAMES] % IX_FRAME_REC)
		return fa_err(FATHOM_ECORRUPT, "%s: frame table size", s->path);
	const ds_dictset *set;
	int rc = dictset_get(s, &set);
	if (rc)
		return rc;
	uint64_t nframes = s->sec_len[IX_SEC_FRAMES] / IX_FRAME_REC, raw = 0, comp = 0;
	ZSTD_DCtx *d = dctx_take(s);
	unsigned char *buf = fa_malloc(s->frame_raw);
	if (!d || !buf)
		rc = fa_err(FATHOM_ENOMEM, "out of memory");
	for (uint64_t i = 0; !rc && i < nframes; i++) {
		frame_info fi;
		if ((rc = frame_get(s, i, &fi)) != 0)
			break;
		/* Frames are back to back in both streams. Each is at most the
		 * frame size: full but for the last of the text a writer
		 * compressed, so a merge that copied frames has shorter ones
		 * where its inputs ended. */
		if (fi.raw_start != raw || fi.comp_off != comp) {
			rc = ds_corrupt(s, i, "frames are not contiguous");
			break;
		}
		const unsigned char *src = s->data + s->sec_off[IX_SEC_DOCSTORE] + fi.comp_off;
		if ((rc = seg_check_range(s, s->sec_off[IX_SEC_DOCSTORE] + fi.comp_off, fi.comp_len)))
			break;
		/* Every frame names one of the segment's dictionaries (0: none). */
		uint32_t id = (uint32_t)ZSTD_getDictID_fromFrame(src, fi.comp_len);
		int known = !set && id == 0;
		for (uint32_t k = 0; set && k < set->n && !known; k++)
			known = set->id[k] == id;
		if (!known) {
			rc = ds_corrupt(s, i, "compressed with another dictionary");
			break;
		}
		rc = frame_decompress(s, d, set, i, &fi, buf);
		raw += fi.raw_len;
		comp += fi.comp_len;
	}
	if (!rc && (raw != s->raw_text || comp != s->sec_len[IX_SEC_DOCSTORE]))
		rc = fa_err(FATHOM_ECORRUPT, "%s: document store size disagrees with its frames",
		            s->path);
	fa_free(buf);
	if (d)
		dctx_give(s, d);
	return rc;
}

void ix_text_window_init(ix_text_window *w)
{
	memset(w, 0, sizeof *w);
	fbuf_init(&w->buf, 0);
}

void ix_text_window_free(ix_text_window *w)
{
	fbuf_free(&w->buf);
	memset(w, 0, sizeof *w);
}

int ix_text_window_read(ix_text_window *w, const ix_segment *s, uint64_t off, uint64_t n,
                        const char **text)
{
	*text = "";
	if (n == 0)
		return 0;
	if (w->seg != s || off < w->start || off - w->start > w->buf.len ||
	    n > w->buf.len - (off - w->start)) {
		uint64_t want = n;
		if (off <= s->raw_text && n <= s->raw_text - off)
			want = FA_MAX(n, FA_MIN(IX_TEXT_WINDOW, s->raw_text - off));
		fbuf_reset(&w->buf);
		w->seg = NULL;
		w->start = off;
		int rc = ix_ds_read(s, off, want, &w->buf);
		if (rc) {
			fbuf_reset(&w->buf);
			return rc;
		}
		w->seg = s;
	}
	*text = (const char *)w->buf.data + (off - w->start);
	return 0;
}

/* Where doc's text lies in the raw stream: *off, *len bytes (its record). */
static int doc_text_span(const ix_segment *s, uint32_t doc, uint64_t *off, uint64_t *len)
{
	const unsigned char *r;
	int rc = seg_doc_rec(s, doc, &r);
	if (rc)
		return rc;
	*off = fa_load64(r);
	*len = fa_load32(r + 48);
	return 0;
}

int seg_doc_text_window(const ix_segment *s, uint32_t doc, ix_text_window *w, const char **text,
                        size_t *len)
{
	uint64_t text_off, text_len;
	*text = "";
	*len = 0;
	int rc = doc_text_span(s, doc, &text_off, &text_len);
	if (rc || (rc = ix_text_window_read(w, s, text_off, text_len, text)))
		return rc;
	*len = (size_t)text_len;
	return 0;
}

int seg_doc_text(const ix_segment *s, uint32_t doc, uint64_t off, uint64_t len, fbuf *out)
{
	uint64_t text_off, text_len;
	int rc = doc_text_span(s, doc, &text_off, &text_len);
	if (rc)
		return rc;
	if (off > text_len)
		return fa_err(FATHOM_EINVAL, "offset %llu past the end of the document (%llu bytes)",
		              (unsigned long long)off, (unsigned long long)text_len);
	len = FA_MIN(len, text_len - off);
	return ix_ds_read(s, text_off + off, len, out);
}

/* ---- copying another segment's frames ------------------------------------------ */

/* Take a dictionary into the writer's set (once per id). */
static int copy_dict(ix_ds_writer *w, const ix_ds_dictref *d)
{
	for (uint32_t k = 0; k < w->ncopied_dicts; k++) {
		if (w->copied_ids[k] != d->id)
			continue;
		if (w->copied_len[k] != d->len ||
		    memcmp(w->copied_dicts.data + w->copied_off[k], d->data, d->len) != 0)
			return fa_err(FATHOM_EINVAL, "document store: two dictionaries with the id %u",
			              (unsigned)d->id);
		return 0;
	}
	if (w->ncopied_dicts == IX_DS_MAX_DICTS)
		return fa_err(FATHOM_ETOOBIG, "document store: more than %u dictionaries",
		              IX_DS_MAX_DICTS);
	uint32_t k = w->ncopied_dicts;
	w->copied_ids[k] = d->id;
	w->copied_off[k] = w->copied_dicts.len;
	w->copied_len[k] = d->len;
	int rc = fbuf_append(&w->copied_dicts, d->data, d->len);
	if (rc)
		return rc;
	w->ncopied_dicts++;
	return 0;
}

static int copied_id_known(const ix_ds_writer *w, uint32_t id)
{
	for (uint32_t k = 0; k < w->ncopied_dicts; k++)
		if (w->copied_ids[k] == id)
			return 1;
	return 0;
}

int ix_ds_copy_frames(ix_ds_writer *w, const ix_segment *s, uint64_t *next, size_t budget)
{
	uint64_t nframes = s->sec_len[IX_SEC_FRAMES] / IX_FRAME_REC;
	int rc;
	if (*next == 0) {
		if (!w->copying && (w->raw_total || w->frame_raw || w->dict))
			return fa_err(FATHOM_EINVAL, "document store: copying frames after text");
		if (w->copying && s->frame_raw != w->frame_raw)
			return fa_err(FATHOM_EINVAL, "document store: copying frames of another size");
		ix_ds_dictref d[IX_DS_MAX_DICTS];
		size_t nd;
		if ((rc = ix_ds_dicts(s, d, IX_DS_MAX_DICTS, &nd)) != 0)
			return rc;
		if (nd == 0)
			return fa_err(FATHOM_EINVAL, "document store: %s has no dictionary to copy",
			              s->path);
		for (size_t i = 0; i < nd; i++)
			if ((rc = copy_dict(w, &d[i])) != 0)
				return rc;
		w->copying = 1;
		w->frame_raw = s->frame_raw;
		w->copy_base = w->raw_total;
	}
	uint64_t i = *next;
	for (; i < nframes && w->comp.len < budget; i++) {
		frame_info fi;
		if ((rc = frame_get(s, i, &fi)) != 0)
			return rc;
		if (fi.raw_start != w->raw_total - w->copy_base)
			return ds_corrupt(s, i, "frames are not contiguous");
		uint64_t off = s->sec_off[IX_SEC_DOCSTORE] + fi.comp_off;
		if ((rc = seg_check_range(s, off, fi.comp_len)) != 0)
			return rc;
		const unsigned char *src = s->data + off;
		if (!copied_id_known(w, (uint32_t)ZSTD_getDictID_fromFrame(src, fi.comp_len)))
			return ds_corrupt(s, i, "compressed with another dictionary");
		if ((rc = fa_grow((void **)&w->frames, &w->frames_cap, w->nframes + 1,
		                  sizeof *w->frames)) != 0 ||
		    (rc = fbuf_append(&w->comp, src, fi.comp_len)) != 0)
			return rc;
		ix_ds_frame *f = &w->frames[w->nframes++];
		f->raw_start = w->raw_total;
		f->comp_off = w->comp_base + w->comp.len - fi.comp_len;
		f->comp_len = fi.comp_len;
		f->raw_len = fi.raw_len;
		w->raw_total += fi.raw_len;
	}
	*next = i;
	if (i == nframes && w->raw_total - w->copy_base != s->raw_text)
		return fa_err(FATHOM_ECORRUPT, "%s: document store size disagrees with its frames",
		              s->path);
	return 0;
}
