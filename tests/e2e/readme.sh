#!/usr/bin/env bash
# readme.sh — every command of README.md's "## Usage" example block runs as
# written, in order, in a small fixture tree that has the files the examples
# name (src/auth/login.c, docs/, notes/, doc/ with a .gz and an .html,
# fastapi/docs, corpus.jsonl). A line is taken from the first ```sh block
# after "## Usage": it starts with `fathom `, `\` continuations are joined,
# and a trailing "   # comment" is dropped (a comment holding "exit N" says
# the exit status the line must give; otherwise 0). Output is required on
# stdout, but for lines that change the index (index, add, optimize, a
# config or glossary setting). The eval line needs ../shared/data/scifact
# (linked as scifact/ in the fixture) and is skipped without it.
. "$(dirname "$0")/lib.sh"
README=$(cd "$(dirname "$0")/../.." && pwd)/README.md
D=${SHARED_DATA:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/data}

# The command lines, one a line, with their expected exit status: "RC<TAB>LINE".
awk '
	/^## Usage/ { u = 1; next }
	u && /^```sh/ { inb = 1; next }
	inb && /^```/ { exit }
	!inb { next }
	{
		line = $0
		if (cont != "") { sub(/^[ \t]+/, "", line); line = cont " " line }
		if (line ~ /\\$/) { sub(/[ \t]*\\$/, "", line); cont = line; next }
		cont = ""
		if (line !~ /^fathom /) next
		rc = 0; cmt = ""
		if (match(line, /[ \t]+# .*$/)) { cmt = substr(line, RSTART); line = substr(line, 1, RSTART - 1) }
		if (match(cmt, /exit [0-9]+/)) rc = substr(cmt, RSTART + 5, RLENGTH - 5)
		print rc "\t" line
	}' "$README" > "$T/cmds"
n=$(wc -l < "$T/cmds")
[ "$n" -ge 30 ] || { echo "FAIL: only $n command lines found in README.md's Usage block"; exit 1; }

# The fixture.
W=$T/w
mkdir -p "$W/src/auth" "$W/docs" "$W/notes" "$W/doc/libfoo" "$W/fastapi/docs/tutorial"
{
	echo '/* login.c: password login, sessions and refresh tokens */'
	echo '#include <errno.h>'
	echo 'struct auth_ops { int (*login)(const char *user); };'
	echo 'static int timeout_ms = 3000; /* the login deadline */'
	echo 'const char *getUserName(int uid);'
	echo 'static void *check(int bad) { if (bad) return ERR_PTR(-EINVAL); return 0; }'
	echo 'static void take(struct lk *l, struct sock *sock) { spin_lock(&l->s); mutex_lock(&l->m); (void)sock; }'
	echo '/* TODO: auth OR login in legacy code paths */'
	for i in $(seq 9 130); do echo "int login_step_$i(void) { return $i; } /* auth step $i */"; done
} > "$W/src/auth/login.c"
printf '/* test_lock.c */\nvoid t(void) { spin_lock(&a); mutex_lock(&b); }\n' > "$W/src/auth/test_lock.c"
cat > "$W/src/retry.c" <<'X'
/* retry.c: retry policy with a timeout and a deadline */
int retry(int n) {
	/* the backoff doubles */
	return n * 2;
}
X
cat > "$W/docs/auth.md" <<'X'
# Authentication guide

Sign in with a password; a refresh token renews the session.
Single Sign-On (SSO) and Two-Factor Authentication (2FA) are optional.

## Rate limiting

Login attempts are throttled: rate limiting locks the account for a minute.
Admins can lift the lock. See TC-1001 and JIRA-4242.

## Refresh tokens

A refresh token lives thirty days. Call getUserName to show who is signed in.
X
cat > "$W/docs/retry.md" <<'X'
# Retry

The retry policy: a timeout per attempt and a deadline overall.
Access Control List (ACL) entries and Role Based Access Control (RBAC) decide who may retry.
X
cat > "$W/notes/incidents.md" <<'X'
# Incidents

TC-1001: the login page hung after a timeout; JIRA-4243 tracks the fix.
FIXME: the legacy mode is deprecated.
X
printf 'libfoo (1.2-1) unstable; urgency=high\n\n  * Fix the login timeout.\n' | gzip > "$W/doc/libfoo/changelog.Debian.gz"
printf '<html><head><title>libfoo manual</title></head><body><h1>Login</h1><p>The rate limiting of libfoo.</p></body></html>\n' > "$W/doc/libfoo/index.html"
cat > "$W/fastapi/docs/tutorial/dependencies.md" <<'X'
# Dependencies

FastAPI has a "dependency injection" system.

```python
def common(q: str = None):
    return {"q": q}  # dependency injection
```
X
cat > "$W/corpus.jsonl" <<'X'
{"id":"w1","title":"The walrus","body":"A walrus has tusks and lives in the Arctic.","tags":["animals"]}
{"id":"w2","title":"Rate limiting","text":"Rate limiting with a token bucket.","url":"https://example.org/rl"}
X
printf '"""Dependency injection: declare what a path operation needs."""\ndef get_db():\n    return {}\n' > "$W/fastapi/docs/tutorial/dependencies.py"
[ -d "$D/scifact" ] && ln -s "$D/scifact" "$W/scifact"

cd "$W" || exit 2
export F # each line runs in its own bash, with fathom() calling "$F"
ran=0; skipped=0
while IFS=$'\t' read -r want line; do
	case $line in
	"fathom eval "*scifact*)
		if [ ! -d scifact ]; then echo "skip (no $D/scifact): $line"; skipped=$((skipped + 1)); continue; fi ;;
	esac
	bash -o pipefail -c "fathom() { \"\$F\" \"\$@\"; }; $line" > "$T/.out" 2> "$T/.err" < /dev/null
	rc=$?
	ran=$((ran + 1))
	if [ "$rc" -ne "$want" ]; then
		fail "exit $rc (want $want): $line"; sed 's/^/    /' "$T/.err" | head -5; continue
	fi
	case $line in
	"fathom index "* | "fathom add "* | "fathom optimize "* | "fathom glossary "*" add "* | "fathom glossary "*" approve "* | \
	"fathom config "*" --unset "* | "fathom config --index ix "[a-z]*" "*) ;;
	*)
		if [ "$want" -eq 0 ] && [ ! -s "$T/.out" ]; then
			fail "no output: $line"; sed 's/^/    err: /' "$T/.err" | head -5; continue
		fi ;;
	esac
	ok
done < "$T/cmds"
echo "$ran README commands ran, $skipped skipped, $fails failed"
[ "$fails" -eq 0 ]
