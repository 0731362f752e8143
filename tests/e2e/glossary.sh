#!/usr/bin/env bash
# The glossary: groups, normalisation, protection, the curation queue,
# expansion in queries with receipts, and crash safety of a change.
source "$(dirname "$0")/lib.sh"
IX=$T/g
cat > "$T/g.jsonl" <<'J'
{"id":"g1","title":"Auth","text":"Use Transport Layer Security (TLS) for every sign-in. The signin page."}
{"id":"g2","title":"Login","text":"Authentication happens at login; a rate limit applies. See Transport Layer Security (TLS)."}
{"id":"g3","title":"Quota","text":"The throttle and the quota protect the API."}
{"id":"g4","title":"Other","text":"Nothing to see here."}
J
"$F" add -q --index "$IX" --jsonl "$T/g.jsonl"

# Groups, normalised (case, hyphens, spaces), merged when they share a term.
expect_out "^group 1" "$F" glossary --index "$IX" add Auth authentication Sign-In
expect_out "^group 2" "$F" glossary --index "$IX" add "rate  limit" throttle
expect_out "^group 2" "$F" glossary --index "$IX" add Throttle quota
expect_out "auth = authentication = sign in" "$F" glossary --index "$IX" list
expect_out "rate limit = throttle = quota" "$F" glossary --index "$IX" list group
# Protected terms never join a group.
expect_rc 2 "$F" glossary --index "$IX" add TLS security
expect_err "all-caps acronym" "$F" glossary --index "$IX" add TLS security
expect_err "code identifier" "$F" glossary --index "$IX" add getUserName user
expect_err "code identifier" "$F" glossary --index "$IX" add TC-1001 testcase
expect_rc 0 "$F" glossary --index "$IX" protect Sentinel
expect_err "marked protected" "$F" glossary --index "$IX" add sentinel guardian
expect_out "protected .* sentinel" "$F" glossary --index "$IX" list protected

# Expansion: required words become OR groups; receipts say so.
expect_out 'query: \(AND \(OR auth authentication "sign in"\) \(OR "rate limit" throttle quota\)\)' \
	"$F" search --index "$IX" --explain auth rate limit
expect_out "glossary: auth -> \(auth \| authentication \| sign in\)" "$F" search --index "$IX" --explain auth
"$F" search --index "$IX" --json auth > "$T/auth.json"
grep -q '"glossary":\[{"text":"auth","group":1' "$T/auth.json" && ok || fail "no glossary receipt in JSON"
grep -q '"id":"g2"' "$T/auth.json" && ok || fail "auth did not find Authentication through its group"
# ...never phrases, negations or protected words.
expect_out 'query: "auth"' "$F" search --index "$IX" --explain '"auth"'
expect_out 'query: \(AND \(NOT auth\) \(OR "rate limit" throttle quota\)\)' "$F" search --index "$IX" --explain -- -auth quota
expect_out 'query: TLS$' "$F" search --index "$IX" --explain TLS

# The queue: propose, approve, reject; a rejected pair is never proposed again.
expect_out "2 new candidates" "$F" glossary --index "$IX" propose
expect_out "tls = transport layer security .*pending, acronym" "$F" glossary --index "$IX" pending
expect_out "sign in = signin .*pending, variant" "$F" glossary --index "$IX" pending
acr=$("$F" glossary --index "$IX" pending | awk '/acronym/ {print $2}')
var=$("$F" glossary --index "$IX" pending | awk '/variant/ {print $2}')
expect_rc 0 "$F" glossary --index "$IX" approve "$acr"
expect_rc 0 "$F" glossary --index "$IX" reject "$var"
expect_out "0 new candidates" "$F" glossary --index "$IX" propose
expect_out "tls = transport layer security" "$F" glossary --index "$IX" list group
expect_err "already rejected" "$F" glossary --index "$IX" approve "$var"
expect_rc 2 "$F" glossary --index "$IX" approve 999
expect_out 'query: \(OR tls "transport layer security"\)' "$F" search --index "$IX" --explain transport layer security
expect_rc 0 "$F" glossary --index "$IX" remove sign-in
expect_out "auth = authentication$" "$F" glossary --index "$IX" list group
expect_rc 0 "$F" verify --index "$IX"

# A reader opened before a change keeps its glossary; the change is atomic
# with the commit. Crash: kill -9 `glossary approve` at random moments over
# a large queue; the index always opens, verifies, and the candidate is
# either still pending with no group, or approved with its group.
C=$T/c
awk 'function tag(n,   s) { s = ""; do { s = s sprintf("%c", 97 + n % 26); n = int(n / 26) } while (n); return s }
BEGIN { srand(3); for (i = 0; i < 4000; i++) {
	a = sprintf("%c%c%c", 65 + int(rand() * 26), 65 + int(rand() * 26), 65 + int(rand() * 26));
	t = tag(i);
	printf "{\"id\":\"c%d\",\"text\":\"We use %sa%s %sb%s %sc%s (%s) here.\"}\n", i,
		substr(a, 1, 1), t, substr(a, 2, 1), t, substr(a, 3, 1), t, a } }' > "$T/c.jsonl"
"$F" add -q --index "$C" --jsonl "$T/c.jsonl"
"$F" glossary --index "$C" propose > /dev/null
runs=${GLOSS_CRASH_RUNS:-30}
[ "${FATHOM_SANITIZE:-0}" = 1 ] && runs=8
before=0; after=0
for run in $(seq 1 "$runs"); do
	id=$("$F" glossary --index "$C" pending | awk 'NR == 1 {print $2}')
	terms=$("$F" glossary --index "$C" pending | awk 'NR == 1 {print $3}')
	"$F" glossary --index "$C" approve "$id" > /dev/null 2>&1 &
	pid=$!
	sleep "0.00$((RANDOM % 10))$((RANDOM % 10))"
	kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	"$F" verify --index "$C" > /dev/null 2>&1 && ok || fail "run $run: verify failed after a kill"
	state=$("$F" glossary --index "$C" list candidate | awk -v id="$id" '$2 == id {print $0}')
	grouped=$("$F" glossary --index "$C" list group | grep -c "^group .* $terms = " || true)
	case $state in
	*pending*) [ "$grouped" -eq 0 ] && { ok; before=$((before + 1)); } || fail "run $run: pending but grouped" ;;
	*approved*) [ "$grouped" -eq 1 ] && { ok; after=$((after + 1)); } || fail "run $run: approved without its group" ;;
	*) fail "run $run: candidate $id is gone: $state" ;;
	esac
done
echo "    $runs kills: $before left the candidate pending, $after approved"
finish
