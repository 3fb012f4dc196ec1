#!/bin/bash
# An app's root seen in /proc, its pidfd opened, and the process exited and
# reaped before its start time is read back (an LD_PRELOAD interposer holds
# pidfd_open until the app is gone, as a busy node does now and then): the
# pidfd still names it, and the kernel keeps the exit status of a process a
# pidfd was held for, so its exit code is in the summary (3), not unknown;
# the sidecar is stopped as usual.
. "$RG_SRCDIR/tests/integration/lib.sh"

[ -f "$RG_BUILDDIR/tests/helpers/reaped.so" ] || skip "tests/helpers/reaped.so not built"
"$RG_BUILDDIR/rearguard" --version 2>&1 | grep -q '(PIDFD_INFO_EXIT) yes' ||
	skip "the kernel gives no exit codes of other processes (PIDFD_INFO_EXIT, Linux 6.15)"
cp "$RG_BUILDDIR/tests/helpers/reaped.so" "$BIN/"
alias_bin fluent-bit job
pod_start
fake_start proxy 1002 fluent-bit
ctr_start agent 1002 env LD_PRELOAD="$BIN/reaped.so" RG_TEST_REAPED_COMM=runc RG_TEST_REAPED_MARK="$RUN/held" \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$BIN/rearguard" -s 'match=fluent-bit' --apps 1 --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
# Held as the runtime's init until the agent holds its pidfd; then it runs, exits 3 and is reaped.
CTR_HOLD=$RUN/go ctr_start app 1001 "$BIN/job" --exit 3 --run 0s
wait_for 10 test -e "$RUN/held" || fail "the agent never opened a pidfd on the app's root"
touch "$RUN/go"
expect_exit app 5 3
expect_exit agent 10 0
summary_is 3 apps 0 exit_code
summary_is stopped sidecars 0 outcome
[ "$(events_count fluent-bit "got SIGTERM")" = 1 ] || fail "the sidecar got no SIGTERM"
exit 0
