/*
 * secdir.c — the tail of a segment file: the section directory and the
 * footer, encoded and decoded here and nowhere else (docs/FORMAT.md 5.2).
 *
 * Format 7 ends a segment in
 *   page CRCs  u32 per 1 KiB page of [0, data_end)
 *   directory  32 bytes per section: 4-byte ASCII tag, u32 flags (bit 0:
 *              required), u64 file offset, u64 length, u32 CRC32C of the
 *              section's bytes, u32 reserved (0)
 *   footer     160 bytes: statistics, the directory's entry count and CRC,
 *              its own CRC
 * so a new section is a new tag, never a new footer layout. A reader skips
 * a section whose tag it does not know when the section is optional, and
 * refuses the segment (FATHOM_EVERSION, naming the file and the tag) when it
 * is required. Formats 5 and 6 had a fixed table of 12 and 13 (offset,
 * length) pairs inside a longer footer; ix_footer_decode turns that table
 * into directory entries, so the reader has one path for all three.
 */
#include "index/index_int.h"

/* The footer's fields. Offsets 0..127 are the same in formats 5, 6 and 7;
 * after them format 7 has fixed fields where 5 and 6 had the section table. */
#define FTR_MAGIC 0
#define FTR_VERSION 8
#define FTR_SIZE 12
#define FTR_SEG_ID 16
#define FTR_PAGE 20
#define FTR_NCHUNKS 24
#define FTR_NDOCS 28
#define FTR_NTERMS 32
#define FTR_NDICT_BLOCKS 40
#define FTR_DICT_BLOCK_TERMS 48
#define FTR_PAGE_TABLE_CRC 52
#define FTR_RAW_TEXT 56
#define FTR_POST_BYTES 64
#define FTR_POS_BYTES 72
#define FTR_DATA_END 80
#define FTR_FIELD_LEN 88             /* u64 per field */
#define FTR_TABLE 128                /* formats 5, 6: the section table */
#define FTR7_THASH 128
#define FTR7_FRAME_RAW 132
#define FTR7_NDIR 136
#define FTR7_DIR_CRC 140
#define FOOTER_SIZE_V5 328u
#define FOOTER_SIZE_V6 352u
#define LEGACY_NSEC_V5 12            /* format 5's table: format 6's without TDIC */

/* The fixed section table of formats 5 and 6, in its order. Frozen: it is
 * what those files hold, whatever sections later builds add. */
static const uint32_t legacy_tags[IX_LEGACY_NSEC] = {
	IX_TAG('T', 'E', 'X', 'T'), IX_TAG('P', 'O', 'S', 'T'), IX_TAG('T', 'R', 'I', 'P'),
	IX_TAG('D', 'I', 'C', 'T'), IX_TAG('D', 'I', 'D', 'X'), IX_TAG('F', 'R', 'A', 'M'),
	IX_TAG('D', 'O', 'C', 'S'), IX_TAG('D', 'S', 'T', 'R'), IX_TAG('C', 'H', 'N', 'K'),
	IX_TAG('C', 'S', 'T', 'R'), IX_TAG('K', 'E', 'Y', 'S'), IX_TAG('T', 'R', 'I', 'I'),
	IX_TAG('T', 'D', 'I', 'C'),
};

/* The sections this build knows (format 7 finds them by tag). */
const ix_secinfo ix_known_sections[IX_NSEC] = {
	[IX_SEC_DOCSTORE] = { IX_TAG('T', 'E', 'X', 'T'), IX_SECF_REQUIRED },
	[IX_SEC_TERMDATA] = { IX_TAG('P', 'O', 'S', 'T'), IX_SECF_REQUIRED },
	[IX_SEC_TRI_POST] = { IX_TAG('T', 'R', 'I', 'P'), IX_SECF_REQUIRED },
	[IX_SEC_DICT] = { IX_TAG('D', 'I', 'C', 'T'), IX_SECF_REQUIRED },
	[IX_SEC_DICT_INDEX] = { IX_TAG('D', 'I', 'D', 'X'), IX_SECF_REQUIRED },
	[IX_SEC_FRAMES] = { IX_TAG('F', 'R', 'A', 'M'), IX_SECF_REQUIRED },
	[IX_SEC_DOCS] = { IX_TAG('D', 'O', 'C', 'S'), IX_SECF_REQUIRED },
	[IX_SEC_DOC_STRINGS] = { IX_TAG('D', 'S', 'T', 'R'), IX_SECF_REQUIRED },
	[IX_SEC_CHUNKS] = { IX_TAG('C', 'H', 'N', 'K'), IX_SECF_REQUIRED },
	[IX_SEC_CHUNK_STRINGS] = { IX_TAG('C', 'S', 'T', 'R'), IX_SECF_REQUIRED },
	[IX_SEC_KEYS] = { IX_TAG('K', 'E', 'Y', 'S'), IX_SECF_REQUIRED },
	[IX_SEC_TRI_INDEX] = { IX_TAG('T', 'R', 'I', 'I'), IX_SECF_REQUIRED },
	/* Absent or empty: the frames use no dictionary. */
	[IX_SEC_DOCSTORE_DICT] = { IX_TAG('T', 'D', 'I', 'C'), 0 },
	[IX_SEC_DOCSTORE_DICTS] = { IX_TAG('T', 'D', 'C', 'S'), IX_SECF_REQUIRED | IX_SECF_WHEN_USED },
	/* Absent: no chunk of the segment has a vector. Required when there:
	 * a build that cannot read them must not drop them in a merge. */
	[IX_SEC_VECTORS] = { IX_TAG('V', 'E', 'C', 'S'), IX_SECF_REQUIRED | IX_SECF_WHEN_USED },
	/* Absent: vector search scores every vector of the segment. */
	[IX_SEC_GRAPH] = { IX_TAG('H', 'N', 'S', 'W'), 0 },
};

int ix_section_of_tag(uint32_t tag)
{
	for (int i = 0; i < IX_NSEC; i++)
		if (ix_known_sections[i].tag == tag)
			return i;
	return -1;
}

void ix_tag_name(uint32_t tag, char out[5])
{
	for (int i = 0; i < 4; i++) {
		unsigned c = (tag >> (8 * i)) & 0xff;
		out[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[4] = '\0';
}

/* ---- the directory -------------------------------------------------------- */

void ix_secdir_encode(unsigned char *out, const ix_secent *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++, out += IX_SECDIR_REC) {
		fa_store32(out, e[i].tag);
		fa_store32(out + 4, e[i].flags);
		fa_store64(out + 8, e[i].off);
		fa_store64(out + 16, e[i].len);
		fa_store32(out + 24, e[i].crc);
		fa_store32(out + 28, 0);
	}
}

void ix_secdir_decode(const unsigned char *in, uint32_t n, ix_secent *e)
{
	for (uint32_t i = 0; i < n; i++, in += IX_SECDIR_REC) {
		e[i].tag = fa_load32(in);
		e[i].flags = fa_load32(in + 4);
		e[i].off = fa_load64(in + 8);
		e[i].len = fa_load64(in + 16);
		e[i].crc = fa_load32(in + 24);
		e[i].has_crc = 1;
	}
}

/* ---- the footer ------------------------------------------------------------ */

uint32_t ix_footer_size(uint32_t version)
{
	switch (version) {
	case 5: return FOOTER_SIZE_V5;
	case 6: return FOOTER_SIZE_V6;
	case IX_FORMAT_VERSION: return IX_FOOTER_SIZE;
	default: return 0;
	}
}

void ix_footer_encode(unsigned char out[IX_FOOTER_SIZE], const ix_footer *f)
{
	memset(out, 0, IX_FOOTER_SIZE);
	memcpy(out + FTR_MAGIC, IX_FTR_MAGIC, 8);
	fa_store32(out + FTR_VERSION, IX_FORMAT_VERSION);
	fa_store32(out + FTR_SIZE, IX_FOOTER_SIZE);
	fa_store32(out + FTR_SEG_ID, f->seg_id);
	fa_store32(out + FTR_PAGE, IX_PAGE);
	fa_store32(out + FTR_NCHUNKS, f->nchunks);
	fa_store32(out + FTR_NDOCS, f->ndocs);
	fa_store64(out + FTR_NTERMS, f->nterms);
	fa_store64(out + FTR_NDICT_BLOCKS, f->ndict_blocks);
	fa_store32(out + FTR_DICT_BLOCK_TERMS, f->dict_block_terms);
	fa_store32(out + FTR_PAGE_TABLE_CRC, f->page_table_crc);
	fa_store64(out + FTR_RAW_TEXT, f->raw_text);
	fa_store64(out + FTR_POST_BYTES, f->post_bytes);
	fa_store64(out + FTR_POS_BYTES, f->pos_bytes);
	fa_store64(out + FTR_DATA_END, f->data_end);
	for (int i = 0; i < FATHOM_NFIELDS; i++)
		fa_store64(out + FTR_FIELD_LEN + 8 * i, f->field_len_sum[i]);
	fa_store32(out + FTR7_THASH, f->thash_buckets);
	fa_store32(out + FTR7_FRAME_RAW, f->frame_raw);
	fa_store32(out + FTR7_NDIR, f->ndir);
	fa_store32(out + FTR7_DIR_CRC, f->dir_crc);
	fa_store32(out + IX_FOOTER_SIZE - 4, fa_crc32c(0, out, IX_FOOTER_SIZE - 4));
}

int ix_footer_decode(const unsigned char *d, uint64_t len, ix_footer *f, ix_secent *legacy)
{
	memset(f, 0, sizeof *f);
	if (len < IX_PREAMBLE_SIZE)
		return FATHOM_ECORRUPT;
	f->version = fa_load32(d + 8);
	f->size = ix_footer_size(f->version);
	if (f->size == 0)
		return FATHOM_EVERSION;
	if (len < IX_PREAMBLE_SIZE + (uint64_t)f->size)
		return FATHOM_ECORRUPT;
	const unsigned char *p = d + len - f->size;
	f->magic_ok = memcmp(p + FTR_MAGIC, IX_FTR_MAGIC, 8) == 0;
	f->footer_version = fa_load32(p + FTR_VERSION);
	f->stored_size = fa_load32(p + FTR_SIZE);
	f->seg_id = fa_load32(p + FTR_SEG_ID);
	f->page_size = fa_load32(p + FTR_PAGE);
	f->nchunks = fa_load32(p + FTR_NCHUNKS);
	f->ndocs = fa_load32(p + FTR_NDOCS);
	f->nterms = fa_load64(p + FTR_NTERMS);
	f->ndict_blocks = fa_load64(p + FTR_NDICT_BLOCKS);
	f->dict_block_terms = fa_load32(p + FTR_DICT_BLOCK_TERMS);
	f->page_table_crc = fa_load32(p + FTR_PAGE_TABLE_CRC);
	f->raw_text = fa_load64(p + FTR_RAW_TEXT);
	f->post_bytes = fa_load64(p + FTR_POST_BYTES);
	f->pos_bytes = fa_load64(p + FTR_POS_BYTES);
	f->data_end = fa_load64(p + FTR_DATA_END);
	for (int i = 0; i < FATHOM_NFIELDS; i++)
		f->field_len_sum[i] = fa_load64(p + FTR_FIELD_LEN + 8 * i);
	f->crc = fa_load32(p + f->size - 4);
	f->crc_ok = fa_crc32c(0, p, f->size - 4) == f->crc;
	if (f->version == IX_FORMAT_VERSION) {
		f->thash_buckets = fa_load32(p + FTR7_THASH);
		f->frame_raw = fa_load32(p + FTR7_FRAME_RAW);
		f->ndir = fa_load32(p + FTR7_NDIR);
		f->dir_crc = fa_load32(p + FTR7_DIR_CRC);
		return 0;
	}
	/* Formats 5 and 6: the fixed table, every section required, the
	 * statistics after it. */
	int nsec = f->version == 5 ? LEGACY_NSEC_V5 : IX_LEGACY_NSEC;
	for (int i = 0; i < nsec; i++)
		legacy[i] = (ix_secent){ legacy_tags[i], IX_SECF_REQUIRED,
		                         fa_load64(p + FTR_TABLE + 16 * i),
		                         fa_load64(p + FTR_TABLE + 16 * i + 8), 0, 0 };
	f->ndir = (uint32_t)nsec;
	f->thash_buckets = fa_load32(p + FTR_TABLE + 16 * nsec);
	f->frame_raw = f->version == 5 ? IX_FRAME_RAW : fa_load32(p + FTR_TABLE + 16 * nsec + 4);
	return 0;
}

/* The bytes between data_end and the footer: the page CRCs, then (format
 * 7) the directory. 0 when they do not add up to the file's length. */
static uint64_t dir_offset(const ix_footer *f, uint64_t len)
{
	uint64_t npages = (f->data_end + IX_PAGE - 1) / IX_PAGE;
	uint64_t dir_len = f->version == IX_FORMAT_VERSION ? (uint64_t)f->ndir * IX_SECDIR_REC : 0;
	if (f->data_end > len || npages * 4 > len - f->data_end ||
	    dir_len > len - f->data_end - npages * 4 ||
	    len - f->data_end - npages * 4 - dir_len != f->size)
		return 0;
	return f->data_end + npages * 4;
}

uint64_t ix_secdir_offset(const ix_footer *f, uint64_t len)
{
	return dir_offset(f, len);
}

void ix_seg_reseal(unsigned char *d, size_t size)
{
	ix_footer f;
	ix_secent legacy[IX_LEGACY_NSEC];
	if (ix_footer_decode(d, size, &f, legacy) != 0)
		return;
	unsigned char *p = d + size - f.size;
	if (f.version == IX_FORMAT_VERSION && f.ndir > IX_SECDIR_MAX)
		return;
	uint64_t at = dir_offset(&f, size);
	if (at == 0) {
		/* Pick the data length that fits the file. */
		uint64_t dir_len = f.version == IX_FORMAT_VERSION ? (uint64_t)f.ndir * IX_SECDIR_REC : 0;
		if (size < f.size + dir_len + IX_PREAMBLE_SIZE)
			return;
		uint64_t avail = size - f.size - dir_len, de = avail;
		while (de > IX_PREAMBLE_SIZE && de + (de + IX_PAGE - 1) / IX_PAGE * 4 > avail)
			de--;
		if (de + (de + IX_PAGE - 1) / IX_PAGE * 4 != avail)
			return;
		f.data_end = de;
		fa_store64(p + FTR_DATA_END, de);
		at = dir_offset(&f, size);
		if (at == 0)
			return;
	}
	if (f.version == IX_FORMAT_VERSION) {
		/* Section checksums, for the sections that lie in the data. */
		unsigned char *dir = d + at;
		for (uint32_t i = 0; i < f.ndir; i++) {
			ix_secent e;
			ix_secdir_decode(dir + (size_t)i * IX_SECDIR_REC, 1, &e);
			if (e.off <= f.data_end && e.len <= f.data_end - e.off) {
				e.crc = fa_crc32c(0, d + e.off, e.len);
				ix_secdir_encode(dir + (size_t)i * IX_SECDIR_REC, &e, 1);
			}
		}
		fa_store32(p + FTR7_DIR_CRC, fa_crc32c(0, dir, (size_t)f.ndir * IX_SECDIR_REC));
	}
	uint64_t npages = (f.data_end + IX_PAGE - 1) / IX_PAGE;
	for (uint64_t pg = 0; pg < npages; pg++) {
		uint64_t off = pg * IX_PAGE, n = FA_MIN((uint64_t)IX_PAGE, f.data_end - off);
		fa_store32(d + f.data_end + pg * 4, fa_crc32c(0, d + off, n));
	}
	fa_store32(p + FTR_PAGE_TABLE_CRC, fa_crc32c(0, d + f.data_end, npages * 4));
	fa_store32(p + f.size - 4, fa_crc32c(0, p, f.size - 4));
}
