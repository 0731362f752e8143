#!/bin/bash
# prepare_kernel.sh — the Linux kernel corpus, chunked once by fathom.
#
#   bench/prepare_kernel.sh FATHOM_BINARY      (BENCH_QUICK=1 for the small subset)
#
# Prints the path of the chunks JSONL on stdout. Idempotent: the extracted
# tree and each chunks file are kept in bench/work/kernel/ and reused (the
# chunks until the fathom binary is newer than them).
#
# 1. Extract from Debian's linux-source-6.1 tarball only the text files the
#    benchmark covers (.c .h .S .rst .txt Kconfig* Makefile .py .sh .json
#    .yaml), into bench/work/kernel/tree/linux-source-6.1/.
# 2. Chunk the subset with `fathom chunk` (fathom's own chunker), from the
#    tree folder so chunk ids read "linux-source-6.1/kernel/fork.c#3".
#    Every engine, fathom included, then indexes that same JSONL.
#
# Subsets (folders of the tree):
#   full:  the whole tree but drivers/gpu/drm/amd/ (420 MB, nearly all of
#          it generated register headers: #define lines that would outweigh
#          the rest of the kernel); about 830 MB of text.
#   quick: Documentation/ kernel/ mm/ fs/ include/ (about 140 MB of text).
set -eu

fathom=${1:?usage: prepare_kernel.sh FATHOM_BINARY}
case $fathom in /*) ;; *) fathom=$PWD/$fathom ;; esac
here=$(cd "$(dirname "$0")" && pwd)
work=$here/work/kernel
tarball=${KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
top=linux-source-6.1

if [ ! -f "$work/tree/.done" ]; then
	[ -f "$tarball" ] || { echo "prepare_kernel: $tarball missing (apt-get install linux-source-6.1)" >&2; exit 1; }
	echo "prepare_kernel: extracting the text files of $tarball" >&2
	rm -rf "$work/tree"
	mkdir -p "$work/tree"
	tar -xJf "$tarball" -C "$work/tree" --wildcards --no-same-owner \
		'*.c' '*.h' '*.S' '*.rst' '*.txt' '*/Kconfig*' '*/Makefile' \
		'*.py' '*.sh' '*.json' '*.yaml'
	touch "$work/tree/.done"
fi

# paths_without ROOT SKIP: the entries under ROOT that together cover all of
# it but SKIP (the folders on the way to SKIP are opened up, one level each)
paths_without() {
	for p in "$1"/*; do
		if [ "$p" = "$2" ]; then
			continue
		elif [ -d "$p" ] && case $2 in "$p"/*) true ;; *) false ;; esac; then
			paths_without "$p" "$2"
		else
			echo "$p"
		fi
	done
}

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	name=quick
	dirs="$top/Documentation $top/kernel $top/mm $top/fs $top/include"
else
	name=full
	dirs=$(cd "$work/tree" && paths_without "$top" "$top/drivers/gpu/drm/amd")
fi

out=$work/chunks-$name.jsonl
# chunked again when fathom was rebuilt, so the chunks are its chunker's
if [ ! -s "$out" ] || [ "$fathom" -nt "$out" ]; then
	echo "prepare_kernel: chunking the $name subset with $fathom chunk" >&2
	# shellcheck disable=SC2086 # the folder list is meant to split
	(cd "$work/tree" && "$fathom" chunk $dirs) > "$out.tmp"
	mv "$out.tmp" "$out"
fi
echo "$out"
