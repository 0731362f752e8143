#!/usr/bin/env bash
# Crash safety with vectors in the index (issue 15): kill -9 `fathom add`
# and `fathom optimize` at random moments while they embed, train the
# corpus embedder, merge and commit. After each kill the index opens,
# passes every checksum (verify), holds exactly the documents of a commit
# (the old one or the new one, never a mix), and its semantic search
# answers exactly as that commit did when it was made without a kill; then
# the same command run again completes, and the index is the new commit.
#
# Scenarios, in turn:
#   first     a new index, add --embedder corpus (the first commit trains
#             the corpus embedder and embeds every chunk)
#   add       a trained corpus index, add more documents (embedded at ingest)
#   optimize  the same, optimize (retrains, re-embeds every chunk, merges)
#   external  documents that bring their own "vector", added to an index
#             of such documents
#   static    add --embedder static:GloVe (skipped without ../shared)
source "$(dirname "$0")/lib.sh"
N=${CRASH_RUNS:-20}
[ "${FATHOM_SANITIZE:-0}" = 1 ] && N=${CRASH_RUNS:-10}
GLOVE=$(cd "$(dirname "$0")/../.." && pwd)/../shared/data/glove50d10k/glove.6B.50d.10k.txt

# The corpus: five topics, deterministic. gen TAG FROM TO VECTORS
gen() {
	awk -v tag="$1" -v from="$2" -v to="$3" -v vec="$4" 'BEGIN {
		srand(from + 7)
		split("kernel scheduler thread process interrupt lock mutex cpu", t0)
		split("database query index table join transaction commit row", t1)
		split("network socket packet router latency tcp protocol bandwidth", t2)
		split("garden flower soil water seed plant leaf root", t3)
		split("music guitar chord melody rhythm song piano note", t4)
		split("the a of and to in is for on with that this it as are be by", c)
		for (i = from; i < to; i++) {
			k = i % 5; body = ""
			for (j = 0; j < 120; j++) {
				r = int(rand() * 8) + 1
				if (rand() < 0.5)
					w = (k == 0 ? t0[r] : k == 1 ? t1[r] : k == 2 ? t2[r] : k == 3 ? t3[r] : t4[r])
				else
					w = c[int(rand() * 17) + 1]
				body = body w " "
			}
			printf "{\"id\":\"%s%d\",\"title\":\"topic %d %s %d\",\"body\":\"%s%sword\"", tag, i, k, tag, i, body, tag
			if (vec) {
				printf ",\"vector\":["
				for (j = 0; j < 16; j++)
					printf "%s%.4f", j ? "," : "", (j % 5 == k ? 1 : 0) + rand() * 0.3
				printf "]"
			}
			printf "}\n"
		}
	}'
}
gen alpha 0 2000 0 > "$T/a.jsonl"
gen beta 2000 3000 0 > "$T/b.jsonl"
gen alpha 0 2000 1 > "$T/av.jsonl"
gen beta 2000 3000 1 > "$T/bv.jsonl"
QV='[1,0,0,0,0,1,0,0,0,0,1,0,0,0,0,1]'

ids() { "$F" list --index "$1" 2> /dev/null | cut -f1 | sort; }
# The semantic answer of an index (ids and scores), and a hybrid one.
answer() {
	local v=()
	[ "$2" = external ] && v=(--vector "$QV")
	{ "$F" search --index "$1" --mode semantic -k 8 --json "${v[@]}" guitar chord melody &&
	  "$F" search --index "$1" --mode hybrid -k 8 --json "${v[@]}" kernel thread betaword; } 2>&1 |
		jq -c '[.results[]? | [.id, (.score * 1e5 | round)]], (.error // empty)' 2> /dev/null
}

# args SCENARIO IX: the command each scenario kills, into A (run as
# "$F" "${A[@]}", so that & gives fathom's own pid to kill).
args() {
	case $1 in
	first) A=(add -q --index "$2" --embedder corpus --jsonl "$T/a.jsonl") ;;
	add | static) A=(add -q --index "$2" --jsonl "$T/b.jsonl") ;;
	optimize) A=(optimize -q --index "$2") ;;
	external) A=(add -q --index "$2" --jsonl "$T/bv.jsonl") ;;
	esac
}
cmd() { args "$1" "$2"; "$F" "${A[@]}"; }

# Each scenario's index before (ix_S.0, absent for first) and after the
# command, and their answers, from runs without a kill.
scen=(first add optimize external)
[ -f "$GLOVE" ] && scen+=(static) || echo "note: no ../shared/data/glove50d10k: the static scenario is skipped"
"$F" add -q --index "$T/ix_add.0" --embedder corpus --jsonl "$T/a.jsonl" || { echo "setup failed"; exit 2; }
cp -a "$T/ix_add.0" "$T/ix_optimize.0"
"$F" add -q --index "$T/ix_optimize.0" --jsonl "$T/b.jsonl" || { echo "setup failed"; exit 2; }
"$F" add -q --index "$T/ix_external.0" --jsonl "$T/av.jsonl" || { echo "setup failed"; exit 2; }
if [ -f "$GLOVE" ]; then
	"$F" add -q --index "$T/ix_static.0" --embedder "static:$GLOVE" --jsonl "$T/a.jsonl" ||
		{ echo "setup failed"; exit 2; }
fi
declare -A full_ms
for s in "${scen[@]}"; do
	old=$T/ix_$s.0 new=$T/ix_$s.1
	rm -rf "$new"
	[ -d "$old" ] && cp -a "$old" "$new"
	t0=$(date +%s%N)
	cmd "$s" "$new" || { echo "setup: $s failed"; exit 2; }
	t1=$(date +%s%N)
	full_ms[$s]=$(( (t1 - t0) / 1000000 + 1 ))
	ids "$new" > "$T/ids_$s.1"
	answer "$new" "$s" > "$T/ans_$s.1"
	"$F" stats --index "$new" | awk '$1 == "generation" { print $2 }' > "$T/gen_$s.1"
	if [ -d "$old" ]; then
		ids "$old" > "$T/ids_$s.0"
		answer "$old" "$s" > "$T/ans_$s.0"
		"$F" stats --index "$old" | awk '$1 == "generation" { print $2 }' > "$T/gen_$s.0"
	fi
	# how many files a re-run leaves, from either commit (orphans of a kill
	# must be gone; a re-run from the new commit replaces its documents)
	nfiles() { ls "$1" | grep -vc '^LOCK$'; }
	nfiles "$new" > "$T/nf_$s.0"
	cp -a "$new" "$T/ix_again"
	cmd "$s" "$T/ix_again" || { echo "setup: $s again failed"; exit 2; }
	nfiles "$T/ix_again" > "$T/nf_$s.1"
	rm -rf "$T/ix_again"
	grep -q '"error"\|message' "$T/ans_$s.1" && { echo "setup: $s: search failed: $(cat "$T/ans_$s.1")"; exit 2; }
	[ "$(wc -l < "$T/ids_$s.1")" -gt 1000 ] || { echo "setup: $s: too few documents"; exit 2; }
done
[ "$(wc -l < "$T/ids_add.1")" = 3000 ] || { echo "setup: add: not 3000 documents"; exit 2; }

declare -A seen_old seen_new
for run in $(seq 1 "$N"); do
	s=${scen[$(( (run - 1) % ${#scen[@]} ))]}
	IX=$T/ix_run
	rm -rf "$IX"
	[ -d "$T/ix_$s.0" ] && cp -a "$T/ix_$s.0" "$IX"
	# from 10% to 130% of a full run, each scenario's kills spread over
	# it in strata (round k of R takes a random moment in the k-th R-th):
	# through ingest, training, the merge, the commit, and after the end
	rounds=$(( (N + ${#scen[@]} - 1) / ${#scen[@]} )); k=$(( (run - 1) / ${#scen[@]} ))
	delay_us=$(( full_ms[$s] * (100 + k * 1200 / rounds + RANDOM % (1200 / rounds)) ))
	args "$s" "$IX"
	"$F" "${A[@]}" > /dev/null 2>&1 &
	pid=$!
	sleep "$(printf '0.%06d' $((delay_us % 1000000)))"
	[ $delay_us -ge 1000000 ] && sleep $((delay_us / 1000000))
	kill -9 $pid 2> /dev/null; wait $pid 2> /dev/null
	what="run $run ($s, kill after ${delay_us}us)"
	if [ "$s" = first ] && { [ ! -f "$IX/MANIFEST" ] ||
	                         "$F" stats --index "$IX" 2>&1 | grep -q '^generation *0$'; }; then
		# killed before the first commit: no index, or an empty one, and
		# nothing is found
		"$F" search --index "$IX" guitar > /dev/null 2>&1 && fail "$what: no commit, yet a search answers"
		[ -z "$(ids "$IX")" ] || fail "$what: no commit, yet documents are listed"
		state=0
	else
		if ! "$F" verify --index "$IX" > "$T/v" 2>&1; then
			fail "$what: verify failed: $(cat "$T/v")"; continue
		fi
		"$F" stats --index "$IX" --json > "$T/st" 2>&1
		gen=$(jq -r .generation "$T/st")
		# every chunk of the commit has its vector
		jq -e '.chunks > 0 and .vector_chunks == .chunks' "$T/st" > /dev/null && ok ||
			fail "$what: chunks without vectors: $(cat "$T/st")"
		ids "$IX" > "$T/ids_now"
		answer "$IX" "$s" > "$T/ans_now"
		if [ "$s" = optimize ]; then
			# the same documents either way: the generation tells
			if [ "$gen" = "$(cat "$T/gen_$s.0")" ]; then state=0
			elif [ "$gen" = "$(cat "$T/gen_$s.1")" ]; then state=1
			else fail "$what: generation $gen is neither the old nor the new commit's"; continue; fi
			cmp -s "$T/ids_now" "$T/ids_$s.1" || { fail "$what: documents changed"; continue; }
		elif cmp -s "$T/ids_now" "$T/ids_$s.1" && [ "$gen" = "$(cat "$T/gen_$s.1")" ]; then
			state=1
		elif [ -f "$T/ids_$s.0" ] && cmp -s "$T/ids_now" "$T/ids_$s.0"; then
			state=0
		else
			fail "$what: generation $gen, $(wc -l < "$T/ids_now") documents: neither the old commit nor the new"
			continue
		fi
		# the vectors are those of that commit: the same answers
		if cmp -s "$T/ans_now" "$T/ans_$s.$state"; then ok; else
			fail "$what: at the $([ $state = 0 ] && echo old || echo new) commit (generation $gen), search answers otherwise: $(head -c 300 "$T/ans_now")"
		fi
	fi
	[ $state = 0 ] && seen_old[$s]=$(( ${seen_old[$s]:-0} + 1 )) || seen_new[$s]=$(( ${seen_new[$s]:-0} + 1 ))
	# The next run cleans up and carries on from the last commit.
	cmd "$s" "$IX" > "$T/rerun" 2>&1 || { fail "$what: the run after the kill failed: $(cat "$T/rerun")"; continue; }
	"$F" verify --index "$IX" > /dev/null 2>&1 || fail "$what: verify after the re-run failed"
	ids "$IX" | cmp -s - "$T/ids_$s.1" || fail "$what: after the re-run, not the new commit's documents"
	answer "$IX" "$s" | cmp -s - "$T/ans_$s.1" || fail "$what: after the re-run, search answers otherwise"
	# no file of the killed run is left behind: as many files as the
	# same run from that commit leaves without a kill
	n_files=$(nfiles "$IX")
	[ "$n_files" = "$(cat "$T/nf_$s.$state")" ] ||
		fail "$what: $n_files files after the re-run, $(cat "$T/nf_$s.$state") without the kill: $(ls "$IX" | tr '\n' ' ')"
done
for s in "${scen[@]}"; do
	printf '%s: full run %s ms; kills leaving the old commit %s, the new %s\n' "$s" "${full_ms[$s]}" \
		"${seen_old[$s]:-0}" "${seen_new[$s]:-0}"
done
finish
