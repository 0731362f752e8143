/*
 * gz.c — gzip files read as the text they hold (zlib).
 *
 * Which files: a name ending in ".gz" (fa_gz_name). /usr/share/doc keeps
 * most changelogs, READMEs and manuals so; indexing them and grepping them
 * means reading them decompressed, at ingest and again at search time.
 *
 * Bounded: the output never grows past the caller's max (a decompression
 * bomb is FATHOM_ETOOBIG after max + 1 bytes of output, whatever its
 * ratio), and zlib allocates through the library's seam. Concatenated
 * members (gzip a; gzip b; cat) are read one after another, as gzip -d
 * does; trailing zero bytes (tape padding) are ignored; anything else that
 * does not decompress is FATHOM_ECORRUPT with zlib's reason.
 */
#include <zlib.h>

#include "util/util.h"

int fa_gz_name(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	return n > 3 && memcmp(path + n - 3, ".gz", 3) == 0 && path[n - 4] != '/';
}

static voidpf gz_alloc(voidpf opaque, uInt items, uInt size)
{
	(void)opaque;
	return fa_calloc(items, size);
}

static void gz_free(voidpf opaque, voidpf p)
{
	(void)opaque;
	fa_free(p);
}

static int all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i])
			return 0;
	}
	return 1;
}

int fa_gunzip(char **out, size_t *out_len, const void *in, size_t in_len, size_t max)
{
	*out = NULL;
	*out_len = 0;
	if (in_len < 2 || ((const unsigned char *)in)[0] != 0x1f ||
	    ((const unsigned char *)in)[1] != 0x8b)
		return fa_err(FATHOM_ECORRUPT, "not gzip data (no gzip header)");
	z_stream z;
	memset(&z, 0, sizeof z);
	z.zalloc = gz_alloc;
	z.zfree = gz_free;
	/* 16 + MAX_WBITS: a gzip wrapper, its header and CRC checked */
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return fa_err(FATHOM_ENOMEM, "out of memory (zlib)");
	fbuf b;
	/* One byte over max tells a bomb from an exact fit. */
	fbuf_init(&b, max < SIZE_MAX - 1 ? max + 1 : max);
	const unsigned char *p = in;
	size_t left = in_len;
	int rc = 0;
	for (;;) {
		size_t room = b.max - b.len;
		size_t want = FA_MIN(room, (size_t)256 << 10);
		if (want == 0) {   /* b.len is max + 1: past max */
			rc = fa_err(FATHOM_ETOOBIG, "decompresses to more than %zu bytes", max);
			break;
		}
		if ((rc = fbuf_reserve(&b, want)) != 0)
			break;
		/* zlib counts in uInt: feed at most 1 GiB at a time */
		uInt feed = (uInt)FA_MIN(left, (size_t)1 << 30);
		z.next_in = (Bytef *)(uintptr_t)p;
		z.avail_in = feed;
		z.next_out = b.data + b.len;
		z.avail_out = (uInt)want;
		int zr = inflate(&z, Z_NO_FLUSH);
		size_t used = feed - z.avail_in;
		p += used;
		left -= used;
		b.len += want - z.avail_out;
		if (zr == Z_STREAM_END) {
			/* another member, or padding, or the end */
			if (left == 0 || all_zero(p, left))
				break;
			if (left < 2 || p[0] != 0x1f || p[1] != 0x8b) {
				rc = fa_err(FATHOM_ECORRUPT, "trailing garbage after the gzip data");
				break;
			}
			if (inflateReset(&z) != Z_OK) {
				rc = fa_err(FATHOM_ECORRUPT, "zlib could not start the next member");
				break;
			}
			continue;
		}
		if (zr == Z_MEM_ERROR) {
			rc = fa_err(FATHOM_ENOMEM, "out of memory (zlib)");
			break;
		}
		if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
			rc = fa_err(FATHOM_ECORRUPT, "corrupt gzip data: %s", z.msg ? z.msg : "invalid");
			break;
		}
		if (zr == Z_BUF_ERROR && z.avail_out != 0) {
			/* no progress with room to write: the input ran out */
			rc = fa_err(FATHOM_ECORRUPT, "truncated gzip data");
			break;
		}
		if (left == 0 && z.avail_in == 0 && z.avail_out != 0) {
			rc = fa_err(FATHOM_ECORRUPT, "truncated gzip data");
			break;
		}
	}
	inflateEnd(&z);
	if (rc == 0 && b.err)
		rc = b.err;
	if (rc == 0 && b.len > max)   /* the last byte written was one too many */
		rc = fa_err(FATHOM_ETOOBIG, "decompresses to more than %zu bytes", max);
	if (rc) {
		fbuf_free(&b);
		return rc;
	}
	*out = fbuf_detach(&b, out_len);
	if (!*out)
		return fa_err(FATHOM_ENOMEM, "out of memory");
	return 0;
}
