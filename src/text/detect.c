/*
 * detect.c — a file's document kind (text, Markdown, code) and language
 * from its name. Names are tried first (Makefile, Dockerfile), then the
 * extension, case-sensitively (".S" is assembly, ".C" is C++) and then
 * ignoring case. Anything unknown is plain text. A compressed file is
 * known by the name inside: "NEWS.md.gz" is Markdown, "changelog.gz" text.
 */
#include <strings.h>

#include "text/text.h"

typedef struct kind_rule {
	const char *key;   /* a file name or an extension without the dot */
	int kind;
	const char *lang;
} kind_rule;

static const kind_rule name_rules[] = {
	{ "Makefile", DOC_CODE, "make" },
	{ "makefile", DOC_CODE, "make" },
	{ "GNUmakefile", DOC_CODE, "make" },
	{ "Kbuild", DOC_CODE, "make" },
	{ "Kconfig", DOC_CODE, "kconfig" },
	{ "Dockerfile", DOC_CODE, "dockerfile" },
	{ "Containerfile", DOC_CODE, "dockerfile" },
	{ "CMakeLists.txt", DOC_CODE, "cmake" },
	{ "Gemfile", DOC_CODE, "ruby" },
	{ "Rakefile", DOC_CODE, "ruby" },
	{ "Jenkinsfile", DOC_CODE, "groovy" },
	{ "Vagrantfile", DOC_CODE, "ruby" },
	{ "meson.build", DOC_CODE, "meson" },
	{ "BUILD", DOC_CODE, "starlark" },
	{ "WORKSPACE", DOC_CODE, "starlark" },
	{ ".bashrc", DOC_CODE, "shell" },
	{ ".bash_profile", DOC_CODE, "shell" },
	{ ".profile", DOC_CODE, "shell" },
	{ ".zshrc", DOC_CODE, "shell" },
	{ ".gitignore", DOC_TEXT, "text" },
	{ ".gitattributes", DOC_TEXT, "text" },
	{ ".editorconfig", DOC_CODE, "ini" },
};

static const kind_rule ext_rules[] = {
	/* prose */
	{ "md", DOC_MARKDOWN, "markdown" },
	{ "markdown", DOC_MARKDOWN, "markdown" },
	{ "mdx", DOC_MARKDOWN, "markdown" },
	{ "mkd", DOC_MARKDOWN, "markdown" },
	{ "mdown", DOC_MARKDOWN, "markdown" },
	{ "rst", DOC_RST, "rst" },
	{ "txt", DOC_TEXT, "text" },
	{ "text", DOC_TEXT, "text" },
	{ "adoc", DOC_ASCIIDOC, "asciidoc" },
	{ "asciidoc", DOC_ASCIIDOC, "asciidoc" },
	{ "org", DOC_TEXT, "org" },
	{ "tex", DOC_TEXT, "latex" },
	{ "1", DOC_TEXT, "man" },
	{ "man", DOC_TEXT, "man" },
	/* C family */
	{ "c", DOC_CODE, "c" },
	{ "h", DOC_CODE, "c" },
	{ "C", DOC_CODE, "cpp" },
	{ "H", DOC_CODE, "cpp" },
	{ "cc", DOC_CODE, "cpp" },
	{ "cpp", DOC_CODE, "cpp" },
	{ "cxx", DOC_CODE, "cpp" },
	{ "c++", DOC_CODE, "cpp" },
	{ "hpp", DOC_CODE, "cpp" },
	{ "hh", DOC_CODE, "cpp" },
	{ "hxx", DOC_CODE, "cpp" },
	{ "h++", DOC_CODE, "cpp" },
	{ "ipp", DOC_CODE, "cpp" },
	{ "tpp", DOC_CODE, "cpp" },
	{ "inl", DOC_CODE, "cpp" },
	{ "m", DOC_CODE, "objc" },
	{ "mm", DOC_CODE, "objcpp" },
	{ "cs", DOC_CODE, "csharp" },
	{ "S", DOC_CODE, "asm" },
	{ "s", DOC_CODE, "asm" },
	{ "asm", DOC_CODE, "asm" },
	/* other languages */
	{ "py", DOC_CODE, "python" },
	{ "pyi", DOC_CODE, "python" },
	{ "pyw", DOC_CODE, "python" },
	{ "js", DOC_CODE, "javascript" },
	{ "mjs", DOC_CODE, "javascript" },
	{ "cjs", DOC_CODE, "javascript" },
	{ "jsx", DOC_CODE, "javascript" },
	{ "ts", DOC_CODE, "typescript" },
	{ "tsx", DOC_CODE, "typescript" },
	{ "mts", DOC_CODE, "typescript" },
	{ "cts", DOC_CODE, "typescript" },
	{ "go", DOC_CODE, "go" },
	{ "rs", DOC_CODE, "rust" },
	{ "java", DOC_CODE, "java" },
	{ "kt", DOC_CODE, "kotlin" },
	{ "kts", DOC_CODE, "kotlin" },
	{ "scala", DOC_CODE, "scala" },
	{ "sc", DOC_CODE, "scala" },
	{ "groovy", DOC_CODE, "groovy" },
	{ "gradle", DOC_CODE, "groovy" },
	{ "rb", DOC_CODE, "ruby" },
	{ "php", DOC_CODE, "php" },
	{ "pl", DOC_CODE, "perl" },
	{ "pm", DOC_CODE, "perl" },
	{ "t", DOC_CODE, "perl" },
	{ "sh", DOC_CODE, "shell" },
	{ "bash", DOC_CODE, "shell" },
	{ "zsh", DOC_CODE, "shell" },
	{ "ksh", DOC_CODE, "shell" },
	{ "fish", DOC_CODE, "fish" },
	{ "ps1", DOC_CODE, "powershell" },
	{ "bat", DOC_CODE, "batch" },
	{ "cmd", DOC_CODE, "batch" },
	{ "swift", DOC_CODE, "swift" },
	{ "lua", DOC_CODE, "lua" },
	{ "sql", DOC_CODE, "sql" },
	{ "r", DOC_CODE, "r" },
	{ "jl", DOC_CODE, "julia" },
	{ "hs", DOC_CODE, "haskell" },
	{ "ml", DOC_CODE, "ocaml" },
	{ "mli", DOC_CODE, "ocaml" },
	{ "ex", DOC_CODE, "elixir" },
	{ "exs", DOC_CODE, "elixir" },
	{ "erl", DOC_CODE, "erlang" },
	{ "clj", DOC_CODE, "clojure" },
	{ "el", DOC_CODE, "elisp" },
	{ "lisp", DOC_CODE, "lisp" },
	{ "scm", DOC_CODE, "scheme" },
	{ "dart", DOC_CODE, "dart" },
	{ "zig", DOC_CODE, "zig" },
	{ "nim", DOC_CODE, "nim" },
	{ "v", DOC_CODE, "verilog" },
	{ "vhd", DOC_CODE, "vhdl" },
	{ "vim", DOC_CODE, "vim" },
	{ "awk", DOC_CODE, "awk" },
	{ "sed", DOC_CODE, "sed" },
	{ "mk", DOC_CODE, "make" },
	{ "mak", DOC_CODE, "make" },
	{ "cmake", DOC_CODE, "cmake" },
	{ "dts", DOC_CODE, "devicetree" },
	{ "dtsi", DOC_CODE, "devicetree" },
	{ "proto", DOC_CODE, "protobuf" },
	{ "vue", DOC_CODE, "vue" },
	{ "svelte", DOC_CODE, "svelte" },
	/* data and markup */
	{ "yaml", DOC_CODE, "yaml" },
	{ "yml", DOC_CODE, "yaml" },
	{ "json", DOC_CODE, "json" },
	{ "jsonl", DOC_CODE, "json" },
	{ "toml", DOC_CODE, "toml" },
	{ "ini", DOC_CODE, "ini" },
	{ "cfg", DOC_CODE, "ini" },
	{ "conf", DOC_CODE, "ini" },
	{ "xml", DOC_CODE, "xml" },
	{ "xsl", DOC_CODE, "xml" },
	{ "svg", DOC_CODE, "xml" },
	{ "html", DOC_HTML, "html" },
	{ "htm", DOC_HTML, "html" },
	{ "xhtml", DOC_HTML, "html" },
	{ "css", DOC_CODE, "css" },
	{ "scss", DOC_CODE, "css" },
	{ "less", DOC_CODE, "css" },
	{ "diff", DOC_CODE, "diff" },
	{ "patch", DOC_CODE, "diff" },
};

static const kind_rule *find_rule(const kind_rule *rules, size_t n, const char *key,
                                  int ignore_case)
{
	for (size_t i = 0; i < n; i++) {
		if (ignore_case ? strcasecmp(rules[i].key, key) == 0 : strcmp(rules[i].key, key) == 0)
			return &rules[i];
	}
	return NULL;
}

int text_detect_kind(const char *path, const char **lang)
{
	const char *unused;
	if (!lang)
		lang = &unused;
	*lang = "text";
	if (!path)
		return DOC_TEXT;
	const char *slash = strrchr(path, '/');
	const char *full = slash ? slash + 1 : path;
	/* The name without ".gz" (cut to fit: a longer name keeps its end,
	 * where the extension is). */
	char name[256];
	size_t len = strlen(full);
	if (fa_gz_name(full))
		len -= 3;
	const char *from = full + (len >= sizeof name ? len - (sizeof name - 1) : 0);
	len -= (size_t)(from - full);
	memcpy(name, from, len);
	name[len] = '\0';
	const char *base = name;

	const kind_rule *r = find_rule(name_rules, FA_ARRAY_LEN(name_rules), base, 0);
	/* Kconfig.debug, Makefile.am, Dockerfile.dev ... */
	static const char *const prefixes[] = { "Kconfig", "Makefile", "Dockerfile" };
	for (size_t i = 0; !r && i < FA_ARRAY_LEN(prefixes); i++) {
		if (strncmp(base, prefixes[i], strlen(prefixes[i])) == 0)
			r = find_rule(name_rules, FA_ARRAY_LEN(name_rules), prefixes[i], 0);
	}
	if (!r) {
		const char *dot = strrchr(base, '.');
		if (dot && dot != base && dot[1] != '\0') {
			r = find_rule(ext_rules, FA_ARRAY_LEN(ext_rules), dot + 1, 0);
			if (!r)
				r = find_rule(ext_rules, FA_ARRAY_LEN(ext_rules), dot + 1, 1);
		}
	}
	if (!r)
		return DOC_TEXT;
	*lang = r->lang;
	return r->kind;
}
