#!/bin/sh
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
#   full:  everything but drivers/gpu/ and drivers/net/ (together 600 MB,
#          most of it generated GPU register headers); about 650 MB of text.
#          The whole tree (1.25 GB) would take Xapian alone ~15 minutes on
#          2 cores, and `make bench` must stay well under an hour.
#   quick: Documentation/ kernel/ mm/ fs/ include/ (about 100 MB of text).
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

if [ "${BENCH_QUICK:-0}" = 1 ]; then
	name=quick
	dirs="$top/Documentation $top/kernel $top/mm $top/fs $top/include"
else
	name=full
	dirs=$(cd "$work/tree" && for d in "$top"/*; do
		[ -d "$d" ] || continue
		if [ "$d" = "$top/drivers" ]; then
			for s in "$d"/*; do
				case $s in "$d/gpu" | "$d/net") ;; *) echo "$s" ;; esac
			done
		else
			echo "$d"
		fi
	done)
	# loose files at the top (Makefile, ...) and in drivers/
	dirs="$dirs $(cd "$work/tree" && find "$top" "$top/drivers" -maxdepth 1 -type f | sort)"
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
