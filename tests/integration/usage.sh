#!/bin/bash
# The command line of the real binary: --help is complete, --version tells
# the build and the kernel, every bad input is one line naming it and exit
# 2, and a pod without a shared PID namespace is a configuration error.
set -eu
: "${RG_BUILDDIR:?}"
RG=$RG_BUILDDIR/rearguard
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# expect_usage_error NEEDLE ARG... : exit 2, exactly one line on stderr that contains NEEDLE, nothing on stdout.
expect_usage_error() {
	local needle=$1 out err rc=0
	shift
	out=$("$RG" "$@" 2>/tmp/rg-usage-err.$$) || rc=$?
	err=$(cat /tmp/rg-usage-err.$$)
	rm -f /tmp/rg-usage-err.$$
	[ "$rc" = 2 ] || fail "rearguard $*: exit $rc, want 2"
	[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "rearguard $*: stderr is not one line: $err"
	case $err in rearguard:*"$needle"*) ;; *) fail "rearguard $*: \"$err\" does not say \"$needle\"" ;; esac
	[ -z "$out" ] || fail "rearguard $*: wrote to stdout"
}

help=$("$RG" --help) || fail "--help exit $?"
for word in --sidecar --app --apps --dir --restart-policy --startup-timeout --sidecar-wait --ready-timeout --stop-timeout \
	--kill-after --term-grace --restart-grace --termination-log --log-format --verbose --quiet --version \
	REARGUARD_SIDECARS REARGUARD_APP REARGUARD_APPS REARGUARD_DIR REARGUARD_RESTART_POLICY \
	REARGUARD_STARTUP_TIMEOUT REARGUARD_SIDECAR_WAIT REARGUARD_READY_TIMEOUT REARGUARD_STOP_TIMEOUT REARGUARD_KILL_AFTER \
	REARGUARD_TERM_GRACE REARGUARD_RESTART_GRACE REARGUARD_TERMINATION_LOG REARGUARD_LOG_FORMAT \
	REARGUARD_VERBOSE REARGUARD_QUIET istio envoy linkerd cloudsql dapr vault consul 'Exit status' \
	'rearguard run' 'rearguard wait' 'rearguard drain' 'rearguard install' \
	--name --timeout --no-wait REARGUARD_NAME REARGUARD_TIMEOUT REARGUARD_NO_WAIT \
	'124 ready did not appear' '127 CMD not found' '1 timed out'; do
	case $help in *"$word"*) ;; *) fail "--help does not mention $word" ;; esac
done
[ "$("$RG" help)" = "$help" ] || fail "'rearguard help' differs from --help"
[ "$("$RG" agent --help)" = "$help" ] || fail "'rearguard agent --help' differs from --help"

version=$("$RG" --version) || fail "--version exit $?"
case $version in "rearguard "[0-9]*.[0-9]*.[0-9]*) ;; *) fail "--version: $version" ;; esac
case $version in *libev*libcurl*) ;; *) fail "--version lacks the libraries: $version" ;; esac
case $version in *"kernel: pidfd yes"*) ;; *) fail "--version lacks the kernel features: $version" ;; esac
[ "$("$RG" version)" = "$version" ] || fail "'rearguard version' differs"

expect_usage_error "sidecar spec is empty" --sidecar ""
expect_usage_error "unknown option --bogus" --bogus
expect_usage_error "unknown option --bogus" agent -s istio --bogus
expect_usage_error "unknown command 'bogus'" bogus
expect_usage_error "sidecar spec is empty" drain --sidecar ""
expect_usage_error "unknown option --apps (rearguard drain takes --sidecar" drain -s istio --apps 1
expect_usage_error "invalid duration \"soon\"" drain -s istio --kill-after soon
REARGUARD_SIDECARS="istio;nope" expect_usage_error "REARGUARD_SIDECARS: sidecar spec \"nope\"" drain
expect_usage_error "stop: \"http://127.0.0.1:0/quit\": the port must be" -s 'match=x,stop=http://127.0.0.1:0/quit'
expect_usage_error "run: no command given" run
expect_usage_error "run: no command given" run --name job --
expect_usage_error "run: unknown option --bogus" run --bogus -- true
expect_usage_error "--timeout: invalid duration \"soon\"" run --timeout soon -- true
expect_usage_error "--name: \"a/b\" cannot name a report" run --name a/b -- true
expect_usage_error "--name: \".hidden\" cannot name a report" run --name .hidden -- true
expect_usage_error "give --name NAME" run -- /usr/bin/
REARGUARD_NO_WAIT=maybe expect_usage_error "REARGUARD_NO_WAIT: \"maybe\" is not a boolean" run -- true
expect_usage_error "wait: which condition?" wait
expect_usage_error "wait: unknown condition \"bogus\"" wait bogus
expect_usage_error "wait: unexpected argument \"done\"" wait ready done
expect_usage_error "wait: option --timeout needs a value" wait ready --timeout
REARGUARD_TIMEOUT=x expect_usage_error "REARGUARD_TIMEOUT: invalid duration" wait ready
expect_usage_error "install: which directory?" install
expect_usage_error "install: unexpected argument \"b\"" install a b
expect_usage_error "install: cannot install into /nonexistent/dir" install /nonexistent/dir
[ "$("$RG" run --help)" = "$help" ] || fail "'rearguard run --help' differs from --help"
[ "$("$RG" wait --help)" = "$help" ] || fail "'rearguard wait --help' differs from --help"
[ "$("$RG" install --help)" = "$help" ] || fail "'rearguard install --help' differs from --help"
expect_usage_error "invalid duration \"soon\"" -s istio --stop-timeout soon
expect_usage_error "--kill-after: duration \"1000h\" is too long" -s istio --kill-after 1000h
expect_usage_error "unknown preset \"istoi\"" -s istoi
expect_usage_error "unknown key \"color\"" -s match=x,color=red
expect_usage_error "option --dir needs a value" -s istio --dir
expect_usage_error "unexpected argument \"later\"" -s istio later
expect_usage_error "not Never, OnFailure or Always" -s istio --restart-policy always
REARGUARD_STOP_TIMEOUT=x expect_usage_error "REARGUARD_STOP_TIMEOUT: invalid duration" -s istio
REARGUARD_SIDECARS="istio;nope" expect_usage_error "REARGUARD_SIDECARS: sidecar spec \"nope\""

# Environment twin accepted, flag overriding it: both get past option parsing to the pod check.
if [ "$(id -u)" = 0 ] && unshare --pid --fork --mount-proc true 2>/dev/null; then
	had_dir=
	[ -e /var/run/rearguard ] && had_dir=yes
	# Without shareProcessNamespace the agent is PID 1 of its own namespace.
	rc=0
	err=$(REARGUARD_SIDECARS=istio timeout -s KILL 20 unshare --pid --fork --kill-child --mount-proc "$RG" 2>&1 \
		>/dev/null) || rc=$?
	[ "$rc" = 2 ] || fail "without a shared PID namespace: exit $rc, want 2"
	case $err in *"shareProcessNamespace: true"*) ;; *) fail "no hint about shareProcessNamespace: $err" ;; esac
	# The same, with the agent started by a shell that is PID 1 of the namespace.
	rc=0
	err=$(timeout -s KILL 20 unshare --pid --fork --kill-child --mount-proc sh -c "\"$RG\" -s istio; exit \$?" \
		2>&1 >/dev/null) || rc=$?
	[ "$rc" = 2 ] || fail "agent under a PID 1 shell: exit $rc, want 2"
	# A configuration error leaves nothing behind: not even the default --dir.
	[ -n "$had_dir" ] || [ ! -e /var/run/rearguard ] || fail "the misconfigured agent created /var/run/rearguard"
else
	echo "# not root: the PID namespace check is skipped"
fi

[ "$fails" = 0 ] || exit 1
echo "# usage: all checks passed"
