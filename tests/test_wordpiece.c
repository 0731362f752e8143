/*
 * test_wordpiece.c — the WordPiece tokenizer (src/embed/wordpiece.c):
 * small vocabularies written here (longest match first, "##" pieces, the
 * unknown word, punctuation, accents, CJK, control characters, the word
 * length limit, truncated output, vocab.txt, refused tokenizers), then
 * llama.cpp's 46 reference strings for bert-base-uncased
 * (../shared/data/models/tokenizer-tests/bert-uncased.{inp,out}, ids as
 * Hugging Face's tokenizers gives them without [CLS] and [SEP]) against
 * all-MiniLM-L6-v2's tokenizer.json, which must all match exactly. The
 * reference part is skipped when ../shared is absent.
 */
#include <jansson.h>

#include "test.h"
#include "embed/embed.h"
#include "fathom.h"

#define SHARED "../shared/data/models/"

/* A tokenizer.json around a vocabulary of tokens with ids 0.. */
static em_wordpiece *tiny(const char *const *toks, size_t n, const char *normalizer, int maxw)
{
	char buf[8192];
	size_t o = 0;
	o += (size_t)snprintf(buf + o, sizeof buf - o,
	                      "{\"version\":\"1.0\",\"normalizer\":%s,"
	                      "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
	                      "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\","
	                      "\"continuing_subword_prefix\":\"##\",\"max_input_chars_per_word\":%d,"
	                      "\"vocab\":{",
	                      normalizer, maxw);
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\"%s\":%zu", i ? "," : "", toks[i], i);
	o += (size_t)snprintf(buf + o, sizeof buf - o, "}}}");
	em_wordpiece *wp = NULL;
	CHECK_OK(em_wordpiece_parse(&wp, buf, o, "tiny.json"));
	return wp;
}

static const char *const TOKS[] = {
	"[UNK]", "[CLS]", "un", "##aff", "##able", "runn", "##ing", "run", "!", ",", "hello",
	"world", "cafe", "\\u4e2d", "a", "##b", "##c", "abc", "$", "'", "s",
};
#define BERT_NORM "{\"type\":\"BertNormalizer\",\"clean_text\":true,\"handle_chinese_chars\":true," \
	"\"strip_accents\":null,\"lowercase\":true}"

/* encode text and compare with the expected ids (-1 ends the list) */
static void expect(const em_wordpiece *wp, const char *text, const int *want)
{
	uint32_t ids[64];
	size_t n = 99;
	CHECK_OK(em_wordpiece_encode(wp, text, strlen(text), ids, 64, &n));
	size_t k = 0;
	while (want[k] >= 0)
		k++;
	int same = n == k;
	for (size_t i = 0; same && i < k; i++)
		same = ids[i] == (uint32_t)want[i];
	if (!same) {
		fprintf(stderr, "  \"%s\": got", text);
		for (size_t i = 0; i < n && i < 64; i++)
			fprintf(stderr, " %u", ids[i]);
		fprintf(stderr, ", want");
		for (size_t i = 0; i < k; i++)
			fprintf(stderr, " %d", want[i]);
		fprintf(stderr, "\n");
	}
	CHECK(same);
}

static void test_tiny(void)
{
	em_wordpiece *wp = tiny(TOKS, sizeof TOKS / sizeof TOKS[0], BERT_NORM, 100);
	if (!wp)
		return;
	CHECK_EQ(em_wordpiece_size(wp), 21);
	CHECK_EQ(em_wordpiece_unk(wp), 0);
	CHECK_EQ(em_wordpiece_id(wp, "[CLS]", 5), 1);
	CHECK_EQ(em_wordpiece_id(wp, "##ing", 5), 6);
	CHECK_EQ(em_wordpiece_id(wp, "nope", 4), -1);
	expect(wp, "unaffable", (const int[]){ 2, 3, 4, -1 });
	expect(wp, "UnAffable running", (const int[]){ 2, 3, 4, 5, 6, -1 });  /* longest first */
	expect(wp, "run", (const int[]){ 7, -1 });
	expect(wp, "unaffablex", (const int[]){ 0, -1 });      /* a part unmatched: the whole word */
	expect(wp, "hello,world!", (const int[]){ 10, 9, 11, 8, -1 });
	expect(wp, "  \t\n hello \r\n ", (const int[]){ 10, -1 });
	expect(wp, "", (const int[]){ -1 });
	expect(wp, "Café", (const int[]){ 12, -1 });             /* precomposed é */
	expect(wp, "cafe\xcc\x81", (const int[]){ 12, -1 });     /* e + combining acute */
	expect(wp, "a\xe4\xb8\xad" "b", (const int[]){ 14, 13, 0, -1 }); /* CJK split; "b" alone unknown */
	expect(wp, "abc", (const int[]){ 17, -1 });
	expect(wp, "a\x01" "bc", (const int[]){ 17, -1 });       /* control dropped */
	expect(wp, "a\xe2\x80\x8d" "bc", (const int[]){ 17, -1 }); /* ZWJ (Cf) dropped */
	expect(wp, "a\xff" "bc", (const int[]){ 17, -1 });       /* not UTF-8: dropped as U+FFFD */
	expect(wp, "a\xc2\xa0" "abc", (const int[]){ 14, 17, -1 }); /* no-break space splits */
	expect(wp, "$'s", (const int[]){ 18, 19, 20, -1 });       /* ASCII symbols are punctuation */
	expect(wp, "a\xe2\x80\x94" "a", (const int[]){ 14, 0, 14, -1 }); /* em dash: Pd */
	/* HF's classes, from older Unicode tables: U+2E43 (Po since Unicode
	 * 10) is a letter there, U+166D (now So) punctuation, U+1734 (now Mc)
	 * a nonspacing mark; U+2260 (Sm) is "=" and a combining mark after
	 * NFD, so punctuation when accents are stripped, else a letter */
	expect(wp, "a\xe2\xb9\x83" "b", (const int[]){ 0, -1 });
	expect(wp, "a\xe1\x99\xad" "b", (const int[]){ 14, 0, 0, -1 });
	expect(wp, "a\xe1\x9c\xb4" "b", (const int[]){ 14, 15, -1 });
	expect(wp, "a\xe2\x89\xa0" "a", (const int[]){ 14, 0, 14, -1 });
	/* truncated output: the count is the text's */
	uint32_t ids[2];
	size_t n = 0;
	CHECK_OK(em_wordpiece_encode(wp, "run run run", 11, ids, 2, &n));
	CHECK_EQ(n, 3);
	CHECK_EQ(ids[0], 7);
	CHECK_OK(em_wordpiece_encode(wp, "run run", 7, NULL, 0, &n));
	CHECK_EQ(n, 2);
	em_wordpiece_free(wp);

	/* the word length limit: 5 characters */
	wp = tiny(TOKS, sizeof TOKS / sizeof TOKS[0], BERT_NORM, 5);
	if (wp) {
		expect(wp, "runn", (const int[]){ 5, -1 });
		expect(wp, "running", (const int[]){ 0, -1 });
		expect(wp, "abcabc", (const int[]){ 0, -1 });
		em_wordpiece_free(wp);
	}
	/* no normalizer: case and accents kept */
	wp = tiny(TOKS, sizeof TOKS / sizeof TOKS[0], "null", 100);
	if (wp) {
		expect(wp, "Hello hello", (const int[]){ 0, 10, -1 });
		expect(wp, "café", (const int[]){ 0, -1 });
		em_wordpiece_free(wp);
	}
	/* lowercase without stripping accents */
	wp = tiny(TOKS, sizeof TOKS / sizeof TOKS[0],
	          "{\"type\":\"BertNormalizer\",\"lowercase\":true,\"strip_accents\":false}", 100);
	if (wp) {
		expect(wp, "HELLO Café", (const int[]){ 10, 0, -1 });
		expect(wp, "a\xe2\x89\xa0" "a", (const int[]){ 0, -1 });
		em_wordpiece_free(wp);
	}
}

/* added tokens found in the raw text before anything else */
static void test_added(void)
{
	const char *j =
		"{\"added_tokens\":["
		"{\"id\":1,\"content\":\"[CLS]\",\"single_word\":false,\"normalized\":false},"
		"{\"id\":21,\"content\":\"<w>\",\"single_word\":true,\"normalized\":false},"
		"{\"id\":22,\"content\":\"[CLS]x\",\"normalized\":false},"
		"{\"id\":23,\"content\":\"hello\",\"normalized\":true}],"
		"\"normalizer\":" BERT_NORM ",\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
		"\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"vocab\":{"
		"\"[UNK]\":0,\"[CLS]\":1,\"hello\":2,\"world\":3,\"[\":4,\"cl\":5,\"##s\":6,\"]\":7,"
		"\"<\":8,\"w\":9,\">\":10,\"a\":11,\"x\":12}}}";
	em_wordpiece *wp = NULL;
	CHECK_OK(em_wordpiece_parse(&wp, j, strlen(j), "added.json"));
	if (!wp)
		return;
	CHECK_EQ(em_wordpiece_size(wp), 24);   /* the added ids count */
	expect(wp, "hello[CLS]world", (const int[]){ 2, 1, 3, -1 });
	expect(wp, "[cls] [CLS]x", (const int[]){ 4, 5, 6, 7, 22, -1 });  /* exact bytes; longest */
	expect(wp, "a <w> a<w>", (const int[]){ 11, 21, 11, 8, 9, 10, -1 }); /* single_word */
	expect(wp, "<w>,x", (const int[]){ 21, 0, 12, -1 });   /* "," not in the vocabulary */
	expect(wp, "HELLO", (const int[]){ 2, -1 });   /* a normalized added token: the vocabulary's */
	em_wordpiece_free(wp);
}

static void test_vocab_txt(void)
{
	const char *v = "[PAD]\n[UNK]\nhello\n##s\nworld\r\n!\n";
	em_wordpiece *wp = NULL;
	CHECK_OK(em_wordpiece_parse(&wp, v, strlen(v), "vocab.txt"));
	if (!wp)
		return;
	CHECK_EQ(em_wordpiece_size(wp), 6);
	CHECK_EQ(em_wordpiece_unk(wp), 1);
	/* lengths 5 5 5 3 5 1: sorted 1 3 5 5 5 5, median 5 */
	CHECK_EQ(em_wordpiece_median_chars(wp), 5);
	expect(wp, "Hellos, WORLD!", (const int[]){ 2, 3, 1, 4, 5, -1 });
	em_wordpiece_free(wp);
	/* a cased vocabulary is not lowercased */
	const char *c = "[UNK]\nHello\nhello\n";
	CHECK_OK(em_wordpiece_parse(&wp, c, strlen(c), "cased.txt"));
	if (wp) {
		/* lengths 5 5 5 */
		CHECK_EQ(em_wordpiece_median_chars(wp), 5);
		expect(wp, "Hello hello HELLO", (const int[]){ 1, 2, 0, -1 });
		em_wordpiece_free(wp);
	}
	/* 1 2 3 5: (2 + 3) / 2 rounded down */
	const char *m = "[UNK]\na\nbb\nccc\n";
	CHECK_OK(em_wordpiece_parse(&wp, m, strlen(m), "m.txt"));
	if (wp) {
		CHECK_EQ(em_wordpiece_median_chars(wp), 2);
		em_wordpiece_free(wp);
	}
}

/* what is refused, each with the file's name in the message */
static void refused(const char *json, int code, const char *words)
{
	em_wordpiece *wp = (em_wordpiece *)1;
	int rc = em_wordpiece_parse(&wp, json, strlen(json), "bad/tokenizer.json");
	CHECK_EQ(rc, code);
	CHECK(wp == NULL);
	CHECK(strstr(fathom_errmsg(), "bad/tokenizer.json") != NULL);
	if (!strstr(fathom_errmsg(), words))
		fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", fathom_errmsg(), words);
	CHECK(strstr(fathom_errmsg(), words) != NULL);
}

static void test_refused(void)
{
	refused("{\"model\":{\"type\":\"Unigram\",\"vocab\":[[\"a\",0.0]]},"
	        "\"pre_tokenizer\":{\"type\":\"Metaspace\"}}",
	        FATHOM_EINVAL, "Unigram");
	refused("{\"model\":{\"type\":\"BPE\",\"vocab\":{},\"merges\":[]}}", FATHOM_EINVAL, "BPE");
	refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0}},"
	        "\"pre_tokenizer\":{\"type\":\"Whitespace\"}}",
	        FATHOM_EINVAL, "Whitespace");
	refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0}},"
	        "\"normalizer\":{\"type\":\"NFKC\"},\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}}",
	        FATHOM_EINVAL, "NFKC");
	refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"a\":0}},"
	        "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}}",
	        FATHOM_ESYNTAX, "[UNK]");
	refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":-1}},"
	        "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}}",
	        FATHOM_ESYNTAX, "id");
	refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":0,\"[UNK]\":1}},"
	        "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}}",
	        FATHOM_ESYNTAX, "duplicate");
	refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{\"[UNK]\":9999999}},"
	        "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}}",
	        FATHOM_ETOOBIG, "9999999");
	refused("{\"model\":{\"type\":\"WordPiece\",\"vocab\":{}},"
	        "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"}}",
	        FATHOM_ESYNTAX, "vocabulary");
	refused("{\"model\":", FATHOM_ESYNTAX, "line");
	refused("[UNK]\n\n", FATHOM_ESYNTAX, "empty");   /* vocab.txt with an empty line */
	em_wordpiece *wp = (em_wordpiece *)1;
	CHECK_EQ(em_wordpiece_open(&wp, "/nonexistent/tokenizer.json"), FATHOM_ENOTFOUND);
	CHECK(wp == NULL);
	CHECK(strstr(fathom_errmsg(), "/nonexistent/tokenizer.json") != NULL);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long l = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)l + 1);
	if (fread(b, 1, (size_t)l, f) != (size_t)l) {
		free(b);
		fclose(f);
		return NULL;
	}
	b[l] = 0;
	fclose(f);
	*len = (size_t)l;
	return b;
}

static int reference_matched = -1, hf_matched = -1, hf_cases = 0;

/* tests/data/wordpiece-hf/random.jsonl: 1000 random texts and the ids HF
 * tokenizers gives them (gen.js beside it says how they were made) */
static void test_hf_random(void)
{
	em_wordpiece *wp = NULL;
	CHECK_OK(em_wordpiece_open(&wp, SHARED "all-MiniLM-L6-v2/tokenizer.json"));
	FILE *f = fopen("tests/data/wordpiece-hf/random.jsonl", "rb");
	CHECK(f != NULL);
	if (!wp || !f)
		goto done;
	char *line = NULL;
	size_t cap = 0;
	ssize_t l;
	int ok = 0, shown = 0;
	uint32_t ids[1024];
	while ((l = getline(&line, &cap, f)) > 0) {
		json_error_t je;
		json_t *o = json_loadb(line, (size_t)l, JSON_ALLOW_NUL, &je);
		json_t *text = json_object_get(o, "text"), *want = json_object_get(o, "ids");
		CHECK(json_is_string(text) && json_is_array(want));
		if (!json_is_string(text) || !json_is_array(want)) {
			json_decref(o);
			continue;
		}
		const char *t = json_string_value(text);
		size_t tl = json_string_length(text), n = 0;
		CHECK_OK(em_wordpiece_encode(wp, t, tl, ids, 1024, &n));
		int same = n == json_array_size(want);
		for (size_t i = 0; same && i < n; i++)
			same = ids[i] == (uint32_t)json_integer_value(json_array_get(want, i));
		if (!same && shown++ < 5)
			fprintf(stderr, "  differs from HF: \"%.80s\"\n", t);
		ok += same;
		hf_cases++;
		json_decref(o);
	}
	free(line);
	CHECK_EQ(hf_cases, 1000);
	CHECK_EQ(ok, hf_cases);
	hf_matched = ok;
done:
	if (f)
		fclose(f);
	em_wordpiece_free(wp);
}

static void test_bert_reference(void)
{
	size_t il, ol;
	char *inp = slurp(SHARED "tokenizer-tests/bert-uncased.inp", &il);
	char *outp = slurp(SHARED "tokenizer-tests/bert-uncased.out", &ol);
	em_wordpiece *wp = NULL;
	CHECK(inp && outp);
	CHECK_OK(em_wordpiece_open(&wp, SHARED "all-MiniLM-L6-v2/tokenizer.json"));
	if (!inp || !outp || !wp)
		goto done;
	CHECK_EQ(em_wordpiece_size(wp), 30522);
	CHECK_EQ(em_wordpiece_unk(wp), 100);
	/* inputs each end with "\n__ggml_vocab_test__\n"; outputs are a line each */
	static const char sep[] = "\n__ggml_vocab_test__\n";
	const char *p = inp, *end = inp + il, *o = outp;
	int cases = 0, matched = 0;
	uint32_t *ids = malloc(4096 * sizeof *ids);
	while (p < end) {
		const char *s = strstr(p, sep);
		if (!s)
			break;
		const char *nl = strchr(o, '\n');
		if (!nl)
			break;
		size_t n = 0;
		CHECK_OK(em_wordpiece_encode(wp, p, (size_t)(s - p), ids, 4096, &n));
		/* the expected line, id by id */
		const char *q = o;
		size_t k = 0;
		int same = 1;
		while (q < nl) {
			char *e;
			unsigned long x = strtoul(q, &e, 10);
			if (e == q)
				break;
			if (k >= n || ids[k] != x)
				same = 0;
			k++;
			q = e;
		}
		same = same && k == n;
		if (!same) {
			fprintf(stderr, "  case %d \"%.*s\": got", cases, (int)(s - p < 60 ? s - p : 60), p);
			for (size_t i = 0; i < n && i < 40; i++)
				fprintf(stderr, " %u", ids[i]);
			fprintf(stderr, "\n     want%.*s\n", (int)(nl - o < 300 ? nl - o : 300), o);
		}
		matched += same;
		cases++;
		p = s + sizeof sep - 1;
		o = nl + 1;
	}
	/* special tokens written in the text, as HF's encode finds them */
	const char *sp = "[CLS] Hello [MASK]x[SEP]";
	size_t n = 0;
	CHECK_OK(em_wordpiece_encode(wp, sp, strlen(sp), ids, 4096, &n));
	CHECK_EQ(n, 5);
	CHECK(n == 5 && ids[0] == 101 && ids[1] == 7592 && ids[2] == 103 && ids[3] == 1060 &&
	      ids[4] == 102);
	free(ids);
	CHECK_EQ(cases, 46);
	CHECK_EQ(matched, 46);
	reference_matched = matched;
done:
	em_wordpiece_free(wp);
	free(inp);
	free(outp);
}

int main(void)
{
	RUN(test_tiny);
	RUN(test_added);
	RUN(test_vocab_txt);
	RUN(test_refused);
	FILE *f = fopen(SHARED "tokenizer-tests/bert-uncased.inp", "rb");
	if (!f) {
		printf("skip test_bert_reference: " SHARED " absent\n");
		int rc = TEST_DONE();
		return rc ? rc : 77;
	}
	fclose(f);
	RUN(test_bert_reference);
	RUN(test_hf_random);
	printf("bert-base-uncased reference: %d/46 match; HF tokenizers on random texts: %d/%d\n",
	       reference_matched, hf_matched, hf_cases);
	return TEST_DONE();
}
