#!/bin/bash
# A pidfd libev cannot watch (epoll_ctl failing with ENOMEM, injected with an
# LD_PRELOAD interposer) is an error, not an exit: the processes are polled,
# the sidecar is stopped only after the app really exited, and the summary
# and the log say that polling was used.
. "$RG_SRCDIR/tests/integration/lib.sh"

[ -f "$RG_BUILDDIR/tests/helpers/epollfail.so" ] || skip "tests/helpers/epollfail.so not built"
cp "$RG_BUILDDIR/tests/helpers/epollfail.so" "$BIN/"
alias_bin fluent-bit job
pod_start
fake_start proxy 1002 fluent-bit
# The sanitizer build's runtime wants to come first; the interposer does not disturb it.
ctr_start agent 1002 env LD_PRELOAD="$BIN/epollfail.so" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
fake_start app 1001 job --run 1500ms
expect_exit agent 10 0
in_order "$(event_ms job "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" "the app's exit -> the sidecar's SIGTERM"
grep -q "watching the process failed: polling it instead" "$T/agent.log" || fail "the fallback is not logged"
polled=$(json_get "$RUN/termination-log" polled_processes)
[ "$polled" -ge 1 ] || fail "the summary does not say that processes were polled ($polled)"
summary_is stopped sidecars 0 outcome
exit 0
