# fathom — build, test, fuzz, bench, demo.
#
#   make            optimised build: build/fathom and build/libfathom.{a,so}
#   make test       deps + build + every test (unit, end-to-end, fuzz seed replay)
#   make sanitize   the test suite under ASan + UBSan (build-san/)
#   make fuzz       libFuzzer targets (clang) in build-fuzz/
#   make fuzz-smoke every fuzz target for FUZZ_SECONDS (60) each, under ASan + UBSan
#   make bench      benchmarks against peers (see bench/README.md)
#   make demo       deps + build + index a real corpus + show searches
#   make deps       install missing Debian packages (apt-get; needs root)
#   make install    the binary, libfathom (.so with its soname, .a), fathom.h,
#                   fathom.pc, the man page and the bash and zsh completions
#                   under $(DESTDIR)$(PREFIX) (PREFIX=/usr/local); make uninstall

CC      ?= cc
BUILD   ?= build
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
CSTD    := -std=c11 -D_GNU_SOURCE
# OpenBLAS, its single-threaded build (Debian's libopenblas-serial-dev),
# found by its own folder, which the binaries also search first at run
# time: the threaded build that the system's alternatives pick by default
# starts threads when it loads that spin for a tenth of a second, on every
# process start, and slowed hybrid search's helper thread (docs/BENCHMARKS.md).
# Training threads itself. LAPACK is called through OpenBLAS's own Fortran
# symbols: LAPACKE would load a second BLAS, threaded.
MULTIARCH ?= $(shell $(firstword $(CC)) -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
BLAS_DIR  := /usr/lib/$(MULTIARCH)/openblas-serial
CPPFLAGS += -Iinclude -Isrc -I/usr/include/$(MULTIARCH)/openblas-serial
CFLAGS  ?=
CFLAGS  += $(CSTD) $(WARN) $(OPT) -fPIC -pthread
LDLIBS  := -lutf8proc -lstemmer -lzstd -lz -ljansson -lpcre2-8 -lcurl \
	-L$(BLAS_DIR) -Wl,-rpath,$(BLAS_DIR) -lopenblas -lpthread -lm
SERVE_LIBS := -lmicrohttpd

# The version is fathom.h's, the one place it is written. The soname
# carries major.minor (as libgit2's): before 1.0 a minor version may
# change the ABI (0.2 changed fathom_hit).
VERSION   := $(shell sed -n 's/^\#define FATHOM_VERSION_STRING "\([^"]*\)".*/\1/p' include/fathom.h)
SOVERSION := $(word 1,$(subst ., ,$(VERSION))).$(word 2,$(subst ., ,$(VERSION)))
SONAME    := libfathom.so.$(SOVERSION)

LIB_SRC  := $(sort $(wildcard src/util/*.c src/text/*.c src/ingest/*.c src/index/*.c src/query/*.c src/grep/*.c src/embed/*.c src/vec/*.c src/api/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
SERVE_SRC := $(sort $(wildcard src/serve/*.c))
TEST_SRC := $(sort $(wildcard tests/test_*.c))
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
SERVE_OBJ := $(SERVE_SRC:%.c=$(BUILD)/%.o)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
REPLAY_BIN := $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz/replay_%)

# The header each library the build needs gives, as HEADER:PACKAGE: checked
# before the first compile, so that a machine without them is told which
# packages to install rather than stopped at the first missing header.
DEPS_HEADERS := utf8proc.h:libutf8proc-dev libstemmer.h:libstemmer-dev zstd.h:libzstd-dev zlib.h:zlib1g-dev \
	jansson.h:libjansson-dev pcre2.h:libpcre2-dev microhttpd.h:libmicrohttpd-dev \
	curl/curl.h:libcurl4-openssl-dev $(MULTIARCH)/openblas-serial/cblas.h:libopenblas-serial-dev
# Debian packages the build, the tests and the demo need (the libraries'
# are DEPS_HEADERS' packages, written there alone).
DEPS_BUILD := gcc make pkg-config $(foreach hp,$(DEPS_HEADERS),$(lastword $(subst :, ,$(hp))))
DEPS_TEST  := clang libclang-rt-14-dev grep curl jq python3 python3-jsonschema groff-base zsh ripgrep
DEPS_BENCH := time sqlite3 libsqlite3-dev libxapian-dev xapian-tools g++ postgresql libpq-dev linux-source-6.1 python3 ripgrep codesearch hyperfine wrk python3-hnswlib python3-faiss

.PHONY: all test sanitize fuzz fuzz-smoke bench demo deps deps-bench clean check-header unit e2e replay \
	install uninstall

# The man page and the completion scripts, written by the built binary
# from the table of commands and options that 'fathom help' prints.
GENERATED := $(BUILD)/fathom.1 $(BUILD)/completion/fathom.bash $(BUILD)/completion/_fathom

all: $(BUILD)/fathom $(BUILD)/libfathom.a $(BUILD)/libfathom.so $(GENERATED)

# Before compiling anything: the compiler and the libraries' headers, or
# the Debian packages that give them and 'make deps'.
$(BUILD)/.deps-ok: Makefile
	@mkdir -p $(BUILD)
	@command -v $(firstword $(CC)) > /dev/null 2>&1 || { \
	  echo "fathom: no C compiler '$(firstword $(CC))': install the Debian package gcc" >&2; \
	  echo "  (make deps installs every package the build needs; as root or with sudo)" >&2; exit 1; }
	@missing=""; for hp in $(DEPS_HEADERS); do \
	  printf '#include <%s>\n' "$${hp%%:*}" | $(CC) $(CPPFLAGS) -DPCRE2_CODE_UNIT_WIDTH=8 -E -x c - \
	    > /dev/null 2>&1 || missing="$$missing $${hp#*:}"; done; \
	if [ -n "$$missing" ]; then \
	  echo "fathom: the build needs these Debian packages, which are missing:$$missing" >&2; \
	  echo "  make deps                  installs them (apt-get; as root or with sudo)" >&2; \
	  echo "  sudo apt-get install$$missing" >&2; \
	  exit 1; fi
	@touch $@

# The loops every query runs (decoding postings, scoring, pruning) gain about
# a tenth at -O3 (GCC 12 vectorises little at -O2); docs/BENCHMARKS.md.
# An OPT given on the command line (make sanitize) still wins.
HOT_SRC := src/index/postings.c src/query/wand.c src/query/match.c src/query/keyword.c \
           src/query/topk.c
$(HOT_SRC:%.c=$(BUILD)/%.o): OPT = -O3 -g

$(BUILD)/%.o: %.c | $(BUILD)/.deps-ok
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# The library's objects hide every symbol but what include/fathom.h
# declares, so libfathom.so exports fathom_* alone (tests/e2e/exports.sh
# checks it). The static archive links as before: hidden symbols still
# resolve inside one executable.
$(LIB_OBJ): CFLAGS += -fvisibility=hidden

$(BUILD)/libfathom.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# Linked with its soname; the link named by the soname lets programs
# linked against build/libfathom.so run from the build folder.
# (relinked when the Makefile changes: the soname and the libraries are its)
$(BUILD)/libfathom.so: $(LIB_OBJ) Makefile
	$(CC) -shared $(CFLAGS) -Wl,-soname,$(SONAME) -o $@ $(LIB_OBJ) $(LDFLAGS) $(LDLIBS)
	ln -sf libfathom.so $(BUILD)/$(SONAME)

# The daemon and MCP server: a client of the public API, kept out of
# libfathom so that embedding the library needs no HTTP server.
$(BUILD)/libfathom_serve.a: $(SERVE_OBJ)
	@rm -f $@
	ar rcs $@ $^

# mcp_schema.c builds docs/openapi.json into the binary (.incbin): the MCP
# tools' schemas are the API's.
$(BUILD)/src/serve/mcp_schema.o: docs/openapi.json

$(BUILD)/fathom: $(CLI_OBJ) $(BUILD)/libfathom_serve.a $(BUILD)/libfathom.a
	$(CC) $(CFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libfathom_serve.a $(BUILD)/libfathom.a $(LDFLAGS) $(LDLIBS) $(SERVE_LIBS)

$(BUILD)/tests/%: tests/%.c tests/test.h tests/vecmix.h tests/embed_server.h $(BUILD)/libfathom_serve.a $(BUILD)/libfathom.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) -o $@ $< $(BUILD)/libfathom_serve.a $(BUILD)/libfathom.a $(LDFLAGS) $(LDLIBS) $(SERVE_LIBS)

# Each fuzz target also links against a replay driver, so ordinary builds
# rerun the saved inputs in fuzz/corpus/<target>/ (after libgit2's fuzzers/).
$(BUILD)/fuzz/replay_%: fuzz/%.c fuzz/replay.c $(BUILD)/libfathom_serve.a $(BUILD)/libfathom.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< fuzz/replay.c $(BUILD)/libfathom_serve.a $(BUILD)/libfathom.a $(LDFLAGS) $(LDLIBS) $(SERVE_LIBS)

$(BUILD)/fathom.1: $(BUILD)/fathom
	$(BUILD)/fathom help --man > $@.tmp && mv $@.tmp $@
$(BUILD)/completion/fathom.bash: $(BUILD)/fathom
	@mkdir -p $(dir $@)
	$(BUILD)/fathom completion bash > $@.tmp && mv $@.tmp $@
$(BUILD)/completion/_fathom: $(BUILD)/fathom
	@mkdir -p $(dir $@)
	$(BUILD)/fathom completion zsh > $@.tmp && mv $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=stage]: the Debian layout. zsh
# reads /usr/local/share/zsh/site-functions, and packages' completions
# from /usr/share/zsh/vendor-completions.
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
MANDIR       ?= $(PREFIX)/share/man
BASHCOMPDIR  ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR   ?= $(PREFIX)/share/zsh/$(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
INSTALL      ?= install

install: all
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	$(INSTALL) -m 755 $(BUILD)/fathom $(DESTDIR)$(BINDIR)/fathom
	$(INSTALL) -m 644 $(BUILD)/libfathom.so $(DESTDIR)$(LIBDIR)/libfathom.so.$(VERSION)
	ln -sf libfathom.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libfathom.so
	$(INSTALL) -m 644 $(BUILD)/libfathom.a $(DESTDIR)$(LIBDIR)/libfathom.a
	$(INSTALL) -m 644 include/fathom.h $(DESTDIR)$(INCLUDEDIR)/fathom.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@BLASDIR@|$(BLAS_DIR)|g' fathom.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/fathom.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/fathom.pc
	$(INSTALL) -m 644 $(BUILD)/fathom.1 $(DESTDIR)$(MANDIR)/man1/fathom.1
	$(INSTALL) -m 644 $(BUILD)/completion/fathom.bash $(DESTDIR)$(BASHCOMPDIR)/fathom
	$(INSTALL) -m 644 $(BUILD)/completion/_fathom $(DESTDIR)$(ZSHCOMPDIR)/_fathom
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig > /dev/null; then ldconfig; fi

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/fathom $(DESTDIR)$(LIBDIR)/libfathom.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libfathom.so $(DESTDIR)$(LIBDIR)/libfathom.a \
	    $(DESTDIR)$(INCLUDEDIR)/fathom.h $(DESTDIR)$(PKGCONFIGDIR)/fathom.pc \
	    $(DESTDIR)$(MANDIR)/man1/fathom.1 $(DESTDIR)$(BASHCOMPDIR)/fathom $(DESTDIR)$(ZSHCOMPDIR)/_fathom
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig > /dev/null; then ldconfig; fi

# The public header must compile on its own, pedantic.
check-header:
	@mkdir -p $(BUILD)
	@echo '#include "fathom.h"' > $(BUILD)/header_check.c
	$(CC) -Iinclude -std=c11 -Wall -Wextra -pedantic -Werror -c $(BUILD)/header_check.c -o $(BUILD)/header_check.o

test: deps
	$(MAKE) all check-header $(TEST_BIN) $(REPLAY_BIN)
	BUILD=$(BUILD) tests/run.sh

sanitize: deps
	$(MAKE) BUILD=build-san CC=clang OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" all
	$(MAKE) BUILD=build-san CC=clang OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    LDFLAGS="-fsanitize=address,undefined" $(TEST_SRC:tests/%.c=build-san/tests/%) $(FUZZ_SRC:fuzz/%.c=build-san/fuzz/replay_%)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    BUILD=build-san FATHOM_SANITIZE=1 tests/run.sh

FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=build-fuzz/%)
fuzz: deps
	$(MAKE) BUILD=build-fuzz CC=clang OPT="-O1 -g -fsanitize=fuzzer-no-link,address,undefined" build-fuzz/libfathom.a build-fuzz/libfathom_serve.a
	@for f in $(FUZZ_SRC); do n=$$(basename $$f .c); \
	  echo "clang $$f -> build-fuzz/$$n"; \
	  clang $(CPPFLAGS) $(CSTD) -O1 -g -fsanitize=fuzzer,address,undefined -o build-fuzz/$$n $$f build-fuzz/libfathom_serve.a build-fuzz/libfathom.a $(LDLIBS) $(SERVE_LIBS) || exit 1; \
	done
	@echo "run e.g.: mkdir -p build-fuzz/new && build-fuzz/fuzz_tokenize build-fuzz/new fuzz/corpus/fuzz_tokenize -max_total_time=60"
	@echo "(new inputs go to the first folder; copy crashers into fuzz/corpus/<target>/ so make test replays them)"

# Every fuzz target for FUZZ_SECONDS (default 60) from its saved corpus,
# ASan + UBSan halting on the first error; fails on any crash, leak,
# timeout or sanitizer report, and prints executions, exec/s, coverage and
# new corpus entries per target (fuzz/smoke.sh).
FUZZ_SECONDS ?= 60
fuzz-smoke: fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/smoke.sh $(FUZZ_SRC:fuzz/%.c=%)

# The open-loop load generator of bench/serve_bench.sh: a plain HTTP
# client, no libfathom.
$(BUILD)/bench/loadgen: bench/loadgen.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(LDFLAGS) -lm

# HNSW recall and queries per second on synthetic clustered vectors
# (bench/vec/hnsw_bench.c), beside hnswlib and faiss (bench/vec/peers.py).
$(BUILD)/bench/hnsw_bench: bench/vec/hnsw_bench.c tests/vecmix.h $(BUILD)/libfathom.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -Itests $(CFLAGS) -o $@ $< $(BUILD)/libfathom.a $(LDFLAGS) $(LDLIBS)

# The router's cost and the shapes it reads (bench/route/route_bench.c).
$(BUILD)/bench/route_bench: bench/route/route_bench.c $(BUILD)/libfathom.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ $< $(BUILD)/libfathom.a $(LDFLAGS) $(LDLIBS)

bench: all deps-bench $(BUILD)/bench/loadgen $(BUILD)/bench/hnsw_bench $(BUILD)/bench/route_bench
	bench/route/run.sh $(BUILD)/bench/route_bench
	bench/vec/run.sh $(BUILD)/bench/hnsw_bench
	bench/run.sh
	bench/grep_bench.sh
	bench/serve_bench.sh

demo: deps
	$(MAKE) all
	./demo.sh

# Install the Debian packages in $(1) that are missing (apt-get, only when needed).
define apt_install
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "ok installed" || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null || \
	    { echo "could not install:$$missing" >&2; exit 1; }; \
	fi
endef

deps:
	$(call apt_install,$(DEPS_BUILD) $(DEPS_TEST))

deps-bench:
	$(call apt_install,$(DEPS_BUILD) $(DEPS_BENCH))

clean:
	rm -rf build build-san build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
