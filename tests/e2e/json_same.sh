#!/usr/bin/env bash
# One serializer: the same query with the same options gives the same
# result objects from `fathom search --json`, POST /search on a running
# `fathom serve`, and the MCP search tool (POST /mcp on that daemon, and
# `fathom mcp` over stdio): results, count, why and the receipt, member
# for member.
source "$(dirname "$0")/lib.sh"
for c in curl jq; do command -v $c > /dev/null || { echo "skip: no $c"; exit 77; }; done
R=$T/tree
mkdir -p "$R/docs" "$R/src"
printf '# Sign-in\n\nThe login service validates session tokens.\nTC-1001 covers an expired token.\n\n## Errors\n\nA bad token returns 401 and the "session" ends.\n' > "$R/docs/auth.md"
printf 'int validate_token(const char *t)\n{\n\treturn t && *t; /* TC-1001 session */\n}\n' > "$R/src/token.c"
printf '# Rate limits\n\nauth requests are throttled per session.\n' > "$R/docs/limits.md"
printf 'caf\xc3\xa9 session \xff\xfe bytes that are not UTF-8\n' > "$R/docs/latin.txt"
IX=$T/ix
(cd "$R" && "$F" index -q --index "$IX" .)
printf '%s\n' '{"id":"kb-7","title":"Session \"tokens\" FAQ","url":"https://example.com/kb/7","body":"How long does a session token live? Until logout.","library":"fastapi"}' \
	| "$F" add -q --index "$IX" --jsonl -
"$F" glossary --index "$IX" add auth authentication > /dev/null

serve_start
trap 'kill -9 $PID 2> /dev/null; rm -rf "$T"' EXIT

# The members every interface shares (the daemon adds generation, took_ms).
shared='{query, count, why, results, receipt}'
n=0
# same "QUERY" CLI_OPTIONS... -- JSON_OPTIONS (the same options, spelled for each)
same() {
	local q=$1; shift
	local cli=() json='{}'
	while [ $# -gt 0 ] && [ "$1" != -- ]; do cli+=("$1"); shift; done
	[ $# -gt 0 ] && { shift; json=$1; }
	n=$((n + 1))
	local args
	args=$(jq -cn --arg q "$q" --argjson o "$json" '$o + {query: $q}')
	(cd "$R" && "$F" search --index "$IX" --json "${cli[@]}" -- "$q") > "$T/cli.$n"
	curl -s -X POST "$U/search" -H 'Content-Type: application/json' --data-binary "$args" > "$T/http.$n"
	jq -cn --argjson a "$args" '{jsonrpc: "2.0", id: 1, method: "tools/call", params: {name: "search", arguments: $a}}' > "$T/req.$n"
	curl -s -X POST "$U/mcp" -H 'Content-Type: application/json' --data-binary @"$T/req.$n" | jq '.result.structuredContent' > "$T/mcp.$n"
	"$F" mcp --index "$IX" < "$T/req.$n" | jq '.result.structuredContent' > "$T/stdio.$n"
	jq -S "$shared" "$T/cli.$n" > "$T/want.$n" || { fail "$q: CLI output is not JSON: $(head -c 300 "$T/cli.$n")"; return; }
	for w in http mcp stdio; do
		if jq -S "$shared" "$T/$w.$n" > "$T/got.$n" 2> /dev/null && cmp -s "$T/want.$n" "$T/got.$n"; then
			ok
		else
			fail "$q: $w differs from the CLI"; diff "$T/want.$n" "$T/got.$n" | head -20
		fi
	done
}
has() { # JQ_TEST what: on the last query's CLI output
	jq -e "$1" "$T/cli.$n" > /dev/null && ok || fail "$2: $(head -c 400 "$T/cli.$n")"
}

same "session tokens"
has '.count >= 2 and (.results | all(.score_parts.body != null and .bytes != null and .chunk != null and has("url")))' "rich hits"
has '.results | all(.sources[0].source == "keyword" and .sources[0].rank == .rank)' "each hit's sources"
has '[.results[] | select(.id == "kb-7")][0].url == "https://example.com/kb/7"' "a hit's url"
same "TC-1001"
has '.receipt.identifiers[0].key == "tc-1001" and .receipt.identifiers[0].filter == true' "identifier receipt"
same "auth"
has '(.receipt.glossary | length) == 1' "glossary receipt"
same "session" -k 2 -- '{"k": 2}'
has '.count == 2' "k"
same "session token throttled logout" --match any -- '{"mode": "any"}'
has '.count >= 3' "any"
same "session" --filter library=fastapi -- '{"filters": {"library": "fastapi"}}'
has '.count == 1 and .results[0].id == "kb-7"' "filters"
same "session" --path 'docs/*' -- '{"path": "docs/*"}'
has '[.results[].path | startswith("docs/")] | all' "path glob"
same "café bytes"
has '.count == 1 and (.results[0].snippet | test("\ufffd"))' "invalid UTF-8 repaired"
same "kubernetes"
has '.count == 0 and (.why | test("kubernetes"))' "an empty answer says why"
same '"session tokens" -logout'
has '.receipt.terms | map(select(.negated)) | length == 1' "negated term"
serve_stop
finish
