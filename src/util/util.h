/*
 * util.h — the internal toolbox every subsystem uses: errors, the allocator
 * seam, bounded buffers, an arena, CRC32C, varints, bit packing, hashing, a
 * string hash map, files and memory maps.
 *
 * Library code reports errors with fa_err(code, fmt, ...), which records a
 * thread-local detail message (fathom_errmsg) and returns code, so a failing
 * function reads `return fa_err(FATHOM_EIO, "open %s: %s", p, strerror(errno));`
 */
#ifndef FATHOM_UTIL_H
#define FATHOM_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fathom.h"

#if defined(__GNUC__)
#define FA_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define FA_LIKELY(x) __builtin_expect(!!(x), 1)
#define FA_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define FA_PRINTF(a, b)
#define FA_LIKELY(x) (x)
#define FA_UNLIKELY(x) (x)
#endif

#define FA_MIN(a, b) ((a) < (b) ? (a) : (b))
#define FA_MAX(a, b) ((a) > (b) ? (a) : (b))
#define FA_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- errors (util/error.c) ---------------------------------------------- */

/* Set the thread's detail message and return code. */
int fa_err(int code, const char *fmt, ...) FA_PRINTF(2, 3);
/* Prefix the current detail message: "ctx: <old detail>"; returns code. */
int fa_err_wrap(int code, const char *fmt, ...) FA_PRINTF(2, 3);
void fa_err_clear(void);

/* ---- allocation (util/alloc.c) ------------------------------------------ */
/* All library allocation goes through these, so tests can fail the Nth
 * allocation on purpose (fa_alloc_fail_after). */
void *fa_malloc(size_t n);
void *fa_calloc(size_t count, size_t size);
void *fa_realloc(void *p, size_t n);
void fa_free(void *p);
char *fa_strdup(const char *s);
char *fa_strndup(const char *s, size_t n);
/* Make every allocation after the next n fail (n < 0: never fail). */
void fa_alloc_fail_after(long n);
/* Allocations refused since the last fa_alloc_fail_after(): 0 after an
 * operation means it ran to its end without meeting the countdown. */
long fa_alloc_failed(void);

/* ---- versioned public structs (util/abi.c) ----------------------------- */
/* Every public struct passed by pointer starts with `unsigned version` and
 * only grows at its end. An output struct (fathom_stats, ...) is filled as
 * far as the caller's version goes: the library fills its own struct of the
 * current version, checks the caller's version on entry (fa_struct_check)
 * and copies out at the end (fa_struct_copy_out). */
enum fa_struct {
	FA_OPEN_OPTS, FA_INGEST_OPTS, FA_SEARCH_OPTS, FA_GREP_OPTS,
	FA_INGEST_STATS, FA_STATS, FA_GREP_STATS, FA_JSON_OPTS, FA_GET_INFO, FA_NSTRUCTS
};
/* The size of version `version` of a struct; 0: a version not taken. */
size_t fa_struct_size(int which, unsigned version);
/* 0, or FATHOM_EINVAL naming the struct when its version is not taken. */
int fa_struct_check(int which, const void *p);
/* Copy src (the current version) into dst as far as dst's version goes;
 * dst keeps its version. dst's version must have passed fa_struct_check. */
void fa_struct_copy_out(int which, void *dst, const void *src);

/* Overflow-checked size arithmetic: 0 on success, -1 on overflow. */
static inline int fa_add(size_t a, size_t b, size_t *out)
{
	if (a > SIZE_MAX - b)
		return -1;
	*out = a + b;
	return 0;
}
static inline int fa_mul(size_t a, size_t b, size_t *out)
{
	if (b != 0 && a > SIZE_MAX / b)
		return -1;
	*out = a * b;
	return 0;
}

/* Grow *arr (of *cap elements of size elsz) to hold at least need elements. */
int fa_grow(void **arr, size_t *cap, size_t need, size_t elsz);

/* ---- bounded byte buffer (util/buf.c) ----------------------------------- */
typedef struct fbuf {
	unsigned char *data;
	size_t len, cap;
	size_t max;   /* appends past this fail with FATHOM_ETOOBIG; 0 = SIZE_MAX */
	int err;      /* sticky: once set, appends are no-ops */
} fbuf;

void fbuf_init(fbuf *b, size_t max);
void fbuf_free(fbuf *b);
void fbuf_reset(fbuf *b);              /* len = 0, err = 0, memory kept */
int fbuf_reserve(fbuf *b, size_t extra);
int fbuf_append(fbuf *b, const void *p, size_t n);
int fbuf_putc(fbuf *b, int c);
int fbuf_puts(fbuf *b, const char *s);
int fbuf_printf(fbuf *b, const char *fmt, ...) FA_PRINTF(2, 3);
int fbuf_put_u16(fbuf *b, uint16_t v);  /* little endian */
int fbuf_put_u32(fbuf *b, uint32_t v);
int fbuf_put_u64(fbuf *b, uint64_t v);
int fbuf_put_varint(fbuf *b, uint64_t v);
int fbuf_put_zeros(fbuf *b, size_t n);
/* Detach the data (NUL-terminated, caller frees with fa_free). */
char *fbuf_detach(fbuf *b, size_t *len);

/* ---- arena (util/arena.c) ------------------------------------------------ */
/* Bump allocator for per-query and per-document work, freed in one call. */
typedef struct fa_arena_block fa_arena_block;
typedef struct fa_arena {
	fa_arena_block *head;
	size_t block_size;
	size_t total;
	size_t max;   /* 0 = unbounded */
} fa_arena;

void fa_arena_init(fa_arena *a, size_t block_size, size_t max);
void *fa_arena_alloc(fa_arena *a, size_t n);          /* 8-byte aligned; NULL on failure */
void *fa_arena_calloc(fa_arena *a, size_t count, size_t size);
char *fa_arena_strndup(fa_arena *a, const char *s, size_t n);
void fa_arena_reset(fa_arena *a);                      /* keep the first block */
void fa_arena_free(fa_arena *a);

/* ---- little-endian loads/stores ----------------------------------------- */
static inline uint16_t fa_load16(const void *p)
{
	const unsigned char *b = (const unsigned char *)p;
	return (uint16_t)(b[0] | (b[1] << 8));
}
static inline uint32_t fa_load32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}
static inline uint64_t fa_load64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}
static inline void fa_store16(void *p, uint16_t v)
{
	unsigned char *b = p;
	b[0] = (unsigned char)v;
	b[1] = (unsigned char)(v >> 8);
}
static inline void fa_store32(void *p, uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}
static inline void fa_store64(void *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}

/* ---- CRC32C (util/crc32c.c) --------------------------------------------- */
/* Castagnoli CRC, hardware (SSE4.2) when the CPU has it, table otherwise.
 * crc32c(0, p, n) starts a new checksum; pass the previous value to extend. */
uint32_t fa_crc32c(uint32_t crc, const void *data, size_t n);
/* The portable table version, the reference the fast one is tested against. */
uint32_t fa_crc32c_sw(uint32_t crc, const void *data, size_t n);

/* ---- varints (util/varint.c) -------------------------------------------- */
/* LEB128: 7 bits per byte, low first. At most 10 bytes for a uint64_t. */
size_t fa_varint_put(unsigned char *out, uint64_t v);
/* Decode from [*p, end); advances *p. -1 when truncated or over-long.
 * Most varints are one byte: that case is inline, the rest out of line. */
int fa_varint_get_long(const unsigned char **p, const unsigned char *end, uint64_t *v);
int fa_varint_get32_long(const unsigned char **p, const unsigned char *end, uint32_t *v);
static inline int fa_varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	if (FA_LIKELY(*p < end && **p < 0x80)) {
		*v = *(*p)++;
		return 0;
	}
	return fa_varint_get_long(p, end, v);
}
static inline int fa_varint_get32(const unsigned char **p, const unsigned char *end, uint32_t *v)
{
	if (FA_LIKELY(*p < end && **p < 0x80)) {
		*v = *(*p)++;
		return 0;
	}
	return fa_varint_get32_long(p, end, v);
}

/* ---- bit packing (util/bitpack.c) --------------------------------------- */
/* Pack n values of `bits` bits each (0..32), LSB first, into
 * fa_bitpack_bytes(n, bits) bytes. Values must fit in `bits`. */
static inline size_t fa_bitpack_bytes(size_t n, unsigned bits)
{
	return (n * bits + 7) / 8;
}
static inline unsigned fa_bits_needed(uint32_t max_value)
{
	return max_value ? 32u - (unsigned)__builtin_clz(max_value) : 0u;
}
void fa_bitpack(unsigned char *out, const uint32_t *in, size_t n, unsigned bits);
/* Unpack n values; in must hold fa_bitpack_bytes(n, bits) readable bytes. */
void fa_bitunpack(uint32_t *out, const unsigned char *in, size_t n, unsigned bits);

/* ---- hashing and a string map (util/hash.c) ----------------------------- */
uint64_t fa_hash64(const void *data, size_t n, uint64_t seed);

/* Open-addressing map from byte strings to a uint64 value. Keys are copied
 * into the map's own arena. */
typedef struct fa_strmap_slot {
	const char *key;
	uint32_t len;
	uint32_t hash32;
	uint64_t value;
} fa_strmap_slot;

typedef struct fa_strmap {
	fa_strmap_slot *slots;
	size_t cap, count;
	fa_arena keys;
} fa_strmap;

void fa_strmap_init(fa_strmap *m);
void fa_strmap_free(fa_strmap *m);
/* Find key; NULL if absent. */
fa_strmap_slot *fa_strmap_find(const fa_strmap *m, const char *key, size_t len);
/* Find or insert (value 0 when new, *is_new set). NULL on ENOMEM. */
fa_strmap_slot *fa_strmap_upsert(fa_strmap *m, const char *key, size_t len, int *is_new);
/* Iterate: for (i = 0; i < m->cap; i++) if (m->slots[i].key) ... */

/* ---- files (util/file.c) ------------------------------------------------- */
typedef struct fa_map {
	const unsigned char *data;
	size_t len;
	int fd;      /* kept open only while mapped; -1 otherwise */
	int guard;   /* its slot in the SIGBUS guard (mapguard.c); -1: none */
} fa_map;

/* Map a whole file read-only. An empty file maps to data=NULL, len=0. The
 * mapping is registered with the SIGBUS guard (mapguard.c): if the file
 * shrinks while mapped, reads past its new end give zeros instead of
 * killing the process, and fa_map_damaged() says so. */
int fa_map_file(fa_map *m, const char *path);
void fa_unmap(fa_map *m);
/* Did a read of the mapping fault because the file shrank (or changed
 * size) under it? Then what was read from it is zeros, not the file. */
int fa_map_damaged(const fa_map *m);

/* Read a whole regular file (up to max bytes, else FATHOM_ETOOBIG) into a
 * NUL-terminated buffer. Anything else (a FIFO, a device, a folder) is
 * FATHOM_EINVAL, "not a regular file", without waiting on it: the file is
 * opened non-blocking and checked before it is read. */
int fa_read_file(char **out, size_t *len, const char *path, size_t max);
/* fa_read_file, and when root is not NULL only a file whose real path, read
 * from the open descriptor, lies in root (by its real path): otherwise
 * FATHOM_ENOTFOUND with *outside (when not NULL) set to 1. */
int fa_read_file_within(char **out, size_t *len, const char *path, size_t max, const char *root,
                        int *outside);
/* fa_read_file_within with root already resolved (realpath) by the caller,
 * for one who reads many files against the same root: root_real NULL reads
 * any file, "" (a root that could not be resolved) none. */
int fa_read_file_within_real(char **out, size_t *len, const char *path, size_t max,
                             const char *root_real, int *outside);
/* Open a regular file for reading, the way fa_read_file does: the
 * descriptor (blocking, close-on-exec) and its fstat in *st, or a negative
 * code: FATHOM_ENOTFOUND, FATHOM_EINVAL for a FIFO, device or folder
 * (never waiting on it), FATHOM_EIO. */
struct stat;
int fa_open_regular(const char *path, struct stat *st);
/* fa_open_regular of path relative to the folder dfd (or AT_FDCWD). */
int fa_open_regular_at(int dfd, const char *path, struct stat *st);

/* ---- gzip (util/gz.c) ------------------------------------------------------ */
/* Whether a path names a gzip file by its name (ends in ".gz"). */
int fa_gz_name(const char *path);
/* Decompress gzip data (one member or several, back to back) into a new
 * NUL-terminated buffer (fa_free): FATHOM_ETOOBIG past max bytes of output,
 * FATHOM_ECORRUPT (a message with zlib's reason) for data that is not gzip
 * or does not decompress. */
int fa_gunzip(char **out, size_t *out_len, const void *in, size_t in_len, size_t max);

/* ---- the SIGBUS guard of mapped files (util/mapguard.c) ------------------- */
/* Register a live mapping (installs the library's SIGBUS handler the first
 * time): its slot, or -1 when it goes unguarded (the table is full, or the
 * handler could not be installed). */
int fa_guard_add(const void *data, size_t len);
/* Unregister it, before it is unmapped. */
void fa_guard_remove(int slot);
/* 1 when a read in the mapping faulted and was given zero pages. */
int fa_guard_damaged(int slot);

/* Write data to dir/name atomically and durably: write dir/name.tmp, fsync,
 * rename over dir/name, fsync dir. */
int fa_write_atomic(const char *dir, const char *name, const void *data, size_t len);
/* The same, saying whether the new file took the old one's place (*renamed
 * = 1): then a failure (the folder's fsync) leaves the new bytes visible,
 * and a caller must not act as if the old ones were still there. */
int fa_write_atomic_r(const char *dir, const char *name, const void *data, size_t len,
                      int *renamed);
/* Write a new file (must not exist) and fsync it; not yet renamed/visible. */
int fa_write_file_sync(const char *path, const void *data, size_t len);
int fa_fsync_dir(const char *dir);
/* Join dir and name into a new string (fa_free). */
char *fa_path_join(const char *dir, const char *name);
int fa_mkdir_p(const char *path);
/* rel resolved against base, lexically ("." and ".." folded, no symlinks
 * followed): ("a/b", "../c") is "a/c", ("/x", "y/./z") is "/x/y/z", rel
 * absolute is rel normalised, ("a", "..") is ".", ("", "../x") keeps
 * "../x". A new string (fa_free), NULL when out of memory. */
char *fa_path_resolve(const char *base, const char *rel);

/* ---- confinement (util/confine.c) -------------------------------------------- */
/* Is real (a real path: absolute, no links) the folder root_real (also a
 * real path) or under it? "/x2" is not under "/x". */
int fa_real_inside(const char *root_real, const char *real);
/* The real path of what fd has open (from /proc/self/fd): 0, or -1 when it
 * cannot be told. Asked of a descriptor, it holds whatever a link in its
 * path was changed to since. */
int fa_fd_real_path(int fd, char *out, size_t cap);

/* ---- time ----------------------------------------------------------------- */
double fa_now(void);  /* monotonic seconds */

#endif /* FATHOM_UTIL_H */
