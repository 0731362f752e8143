/*
 * words.c — the words a word-vector embedder reads in a text: runs of
 * letters and digits, lowercased, cut where code joins words. "read_lines",
 * "readLines", "read-lines" and "ReadLines" all give "read", "lines", so a
 * function and the question about it meet in the same words; "HTTPServer"
 * gives "http", "server" (a run of capitals ends before the capital that
 * starts the next word). Digits stay with their letters ("utf8", "v2").
 *
 * ASCII, most of most texts, is read without utf8proc (its letters, digits
 * and cases are fixed); em_words_ref reads every character through
 * utf8proc, the reference the tests hold the fast path to.
 */
#include <string.h>
#include <utf8proc.h>

#include "embed/embed.h"
#include "fathom.h"
#include "util/util.h"

typedef struct word_buf {
	char b[EM_MAX_WORD + 8];
	size_t n;
	size_t last;                 /* where the run's last character starts */
	int over;                    /* the run passed EM_MAX_WORD: skipped */
	utf8proc_int32_t prev, prev2; /* its last two characters, or 0 */
} word_buf;

static int emit(word_buf *w, size_t n, em_word_cb cb, void *ctx)
{
	return n && !w->over ? cb(ctx, w->b, n) : 0;
}

static int flush(word_buf *w, em_word_cb cb, void *ctx)
{
	int rc = emit(w, w->n, cb, ctx);
	w->n = 0;
	w->over = 0;
	w->prev = w->prev2 = 0;
	return rc;
}

/* The character classes, ASCII by table when fast (what utf8proc says of
 * it: letters Lu and Ll, digits Nd, nothing else a word character). */
static inline int is_upper(utf8proc_int32_t c, int fast)
{
	return fast && c < 0x80 ? c >= 'A' && c <= 'Z' : utf8proc_isupper(c);
}

static inline int is_lower(utf8proc_int32_t c, int fast)
{
	return fast && c < 0x80 ? c >= 'a' && c <= 'z' : utf8proc_islower(c);
}

static void put(word_buf *w, utf8proc_int32_t c, int fast)
{
	utf8proc_uint8_t u[4];
	utf8proc_ssize_t k;
	if (fast && c < 0x80) {
		u[0] = (utf8proc_uint8_t)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
		k = 1;
	} else {
		k = utf8proc_encode_char(utf8proc_tolower(c), u);
	}
	if (w->n + (size_t)k > EM_MAX_WORD) {
		w->over = 1;
		return;
	}
	w->last = w->n;
	memcpy(w->b + w->n, u, (size_t)k);
	w->n += (size_t)k;
	w->prev2 = w->prev;
	w->prev = c;
}

static inline int word_char(utf8proc_int32_t c, int fast)
{
	if (fast && c < 0x80)
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
	utf8proc_category_t cat = utf8proc_category(c);
	return (cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
	       (cat >= UTF8PROC_CATEGORY_MN && cat <= UTF8PROC_CATEGORY_ME) ||
	       cat == UTF8PROC_CATEGORY_ND;
}

static inline int words(const char *text, size_t len, em_word_cb cb, void *ctx, int fast)
{
	word_buf w;
	memset(&w, 0, sizeof w);
	const utf8proc_uint8_t *s = (const utf8proc_uint8_t *)text;
	size_t i = 0;
	int rc;
	while (i < len) {
		utf8proc_int32_t c;
		utf8proc_ssize_t k;
		if (fast && s[i] < 0x80)
			c = s[i], k = 1;
		else
			k = utf8proc_iterate(s + i, (utf8proc_ssize_t)(len - i), &c);
		if (k <= 0 || !word_char(c, fast)) {
			/* a separator (bytes that are not UTF-8 too) */
			if ((rc = flush(&w, cb, ctx)))
				return rc;
			i += k > 0 ? (size_t)k : 1;
			continue;
		}
		if (w.n && !w.over) {
			if (is_upper(c, fast) && is_lower(w.prev, fast)) {
				/* camelCase: a capital after a small letter */
				if ((rc = flush(&w, cb, ctx)))
					return rc;
			} else if (is_lower(c, fast) && is_upper(w.prev, fast) &&
			           is_upper(w.prev2, fast)) {
				/* HTTPServer: the last capital of a run starts the
				 * word its small letters continue */
				char keep[8];
				size_t kl = w.n - w.last;
				utf8proc_int32_t p = w.prev;
				memcpy(keep, w.b + w.last, kl);
				if ((rc = emit(&w, w.last, cb, ctx)))
					return rc;
				memcpy(w.b, keep, kl);
				w.n = kl;
				w.last = 0;
				w.prev = p;
				w.prev2 = 0;
			}
		}
		put(&w, c, fast);
		i += (size_t)k;
	}
	return flush(&w, cb, ctx);
}

int em_words(const char *text, size_t len, em_word_cb cb, void *ctx)
{
	return words(text, len, cb, ctx, 1);
}

int em_words_ref(const char *text, size_t len, em_word_cb cb, void *ctx)
{
	return words(text, len, cb, ctx, 0);
}
