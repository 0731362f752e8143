# lib.sh — helpers for the end-to-end tests. Source it; it sets $F (the
# fathom binary), $T (a scratch folder removed on exit) and check helpers.
set -u
F=${FATHOM_BIN:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build/fathom}
[ -x "$F" ] || { echo "no fathom binary at $F"; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/fathom-e2e-XXXXXX")
trap 'rm -rf "$T"' EXIT
fails=0
checks=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { checks=$((checks + 1)); }
# expect_rc WANT CMD... : run CMD, compare its exit status
expect_rc() {
	local want=$1; shift
	"$@" >"$T/.out" 2>"$T/.err"
	local rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "exit $rc (want $want): $*"; sed 's/^/    /' "$T/.err" | head -5
	else ok; fi
}
# expect_out PATTERN CMD... : stdout must match the extended regex
expect_out() {
	local pat=$1; shift
	"$@" >"$T/.out" 2>"$T/.err"
	if ! grep -Eq -- "$pat" "$T/.out"; then
		fail "output of '$*' lacks /$pat/"; head -20 "$T/.out" | sed 's/^/    /'; sed 's/^/    err: /' "$T/.err" | head -5
	else ok; fi
}
expect_no_out() {
	local pat=$1; shift
	"$@" >"$T/.out" 2>"$T/.err"
	if grep -Eq -- "$pat" "$T/.out"; then
		fail "output of '$*' has /$pat/"; head -20 "$T/.out" | sed 's/^/    /'
	else ok; fi
}
expect_err() {
	local pat=$1; shift
	"$@" >"$T/.out" 2>"$T/.err"
	if ! grep -Eq -- "$pat" "$T/.err"; then
		fail "stderr of '$*' lacks /$pat/"; sed 's/^/    /' "$T/.err" | head -10
	else ok; fi
}
# not_signal CMD... : the command may fail but must not die of a signal
not_signal() {
	"$@" >/dev/null 2>"$T/.err"
	local rc=$?
	if [ "$rc" -ge 126 ]; then
		fail "exit $rc (crash?): $*"; sed 's/^/    /' "$T/.err" | head -20
	else ok; fi
}
# serve_start [OPTIONS...]: start `fathom serve` on $IX (default $T/ix) on
# a free port; sets U (its URL) and PID. serve_stop: SIGTERM, and wait.
serve_start() {
	local ix=${IX:-$T/ix}
	rm -f "$ix/SERVE"
	"$F" serve --index "$ix" --listen 127.0.0.1:0 "$@" 2> "$T/serve.err" &
	PID=$!
	for _ in $(seq 1 100); do [ -s "$ix/SERVE" ] && break; sleep 0.05; done
	U=$(cut -d' ' -f1 "$ix/SERVE" 2> /dev/null)
	[ -n "$U" ] || { echo "daemon did not start:"; cat "$T/serve.err"; exit 1; }
}
serve_stop() { kill -TERM "$PID" 2> /dev/null; wait "$PID" 2> /dev/null; }
# req METHOD PATH [BODY]: a request to the daemon at $U (a body is sent as
# JSON); the reply's body to $T/b, its status to stdout
req() {
	local m=$1 p=$2; shift 2
	if [ $# -gt 0 ]; then
		curl -s -o "$T/b" -w '%{http_code}' -X "$m" "$U$p" -H 'Content-Type: application/json' --data-binary "$1"
	else
		curl -s -o "$T/b" -w '%{http_code}' -X "$m" "$U$p"
	fi
}
# is WANT_STATUS GOT_STATUS JQ_TEST WHAT: the status, and jq's test of $T/b
is() {
	if [ "$2" = "$1" ] && jq -e "$3" "$T/b" > /dev/null 2>&1; then ok; else
		fail "$4: status $2 (want $1), body $(head -c 300 "$T/b")"; fi
}
finish() {
	echo "$checks checks passed, $fails failed"
	[ "$fails" -eq 0 ]
}
