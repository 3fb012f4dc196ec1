#!/bin/bash
# An app that exits in its first milliseconds: its container is seen while
# it is still the runtime's init (pending), and its program runs and exits
# between two rescans. The pidfd taken on the pending root follows it
# through the exec: the exit is noticed at once, with its code, and the
# sidecar is stopped without waiting out the 30 s a container may stay
# pending. The app is `true`, then `false`, with the sidecar started
# before it, then after it (once it has exited: the agent waits for the
# named sidecar). Each once with the agent stopped (SIGSTOP) from before
# the exec until after the exit, so that no rescan can see the program,
# then three times free, where the rescans fall at random against the exec.
# Checked each time: the agent exits 0 well within the 30 s pending limit;
# the app's exit code is in the summary (and `false` fails the pod); the
# sidecar got its SIGTERM, is gone, and the summary says stopped with exit
# code 0 (started after the app, it is seen right after its exec: the
# agent waits until it handles SIGTERM); the container that exited before
# a rescan saw its program is logged as such at least once per layout.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit
ROUNDS=3

# round LAYOUT PROGRAM CODE FROZEN: one pod; with FROZEN=yes the agent is stopped (SIGSTOP) from
# before the exec until after the exit.
round() {
	local layout=$1 prog=$2 code=$3 frozen=$4
	new_pod
	[ "$layout" = before ] && fake_start proxy 1002 fluent-bit
	ctr_start agent 1002 "$BIN/rearguard" -s 'name=fb,match=fluent-bit' --dir "$EMPTYDIR" \
		--termination-log "$RUN/termination-log"
	agent_scanned
	CTR_HOLD=$RUN/go ctr_start app 1001 "/bin/$prog"
	# Seen as the runtime's init first, then let go: the program runs and exits at once.
	wait_for 10 grep -q "role=pending" "$T/agent.log" || fail "the app's container was never seen pending"
	if [ "$frozen" = yes ]; then
		# No rescan can fall between the exec and the exit: the agent is stopped meanwhile.
		kill -STOP "$(ctr_pid agent)"
		touch "$RUN/go"
		ctr_wait app 5
		kill -CONT "$(ctr_pid agent)"
		[ "$RC" = "$code" ] || fail "app exited $RC, want $code"
	else
		touch "$RUN/go"
		expect_exit app 5 "$code"
	fi
	# Seen right after its exec, before it handles SIGTERM: no fake_start, which waits for that.
	[ "$layout" = after ] && ctr_start proxy 1002 "$BIN/fluent-bit" --log "$EVENTS"
	# Under the 30 s a pending container may last: the exit was noticed, not waited out.
	expect_exit agent 20 0
	ctr_wait proxy 5
	[ "$RC" != timeout ] || fail "the sidecar still runs"
	summary_is "$code" apps 0 exit_code
	summary_is stopped sidecars 0 outcome
	summary_is 0 sidecars 0 exit_code
	[ "$(events_count fluent-bit "got SIGTERM")" = 1 ] || fail "the sidecar got no SIGTERM"
	if [ "$code" = 1 ]; then
		# The app alone: named after its program, or after the runtime's init (see below).
		json_get "$RUN/termination-log" fails_pod | grep -q '"role": "app".*"exit_code": 1' ||
			fail "the app's exit 1 is not in fails_pod: $(json_get "$RUN/termination-log" fails_pod)"
		json_get "$RUN/termination-log" fails_pod | grep -q '"role": "sidecar"' &&
			fail "the sidecar fails the pod: $(json_get "$RUN/termination-log" fails_pod)"
	else
		fails_pod_is "$RUN/termination-log"
	fi
	if [ "$frozen" = yes ] && [ "$(agent_lines "container exited before a rescan saw its program run")" != 1 ]; then
		fail "the exit between two rescans is not logged as such"
	fi
	if grep -q "container exited before a rescan saw its program run" "$T/agent.log"; then
		# Named after the zombie's program if it was not reaped yet, else after the runtime's init.
		name=$(json_get "$RUN/termination-log" apps 0 name)
		[ "$name" = "$prog" ] || [ "$name" = runc ] || fail "the app is named '$name', want $prog or runc"
		unseen=$((unseen + 1))
	else
		summary_is "$prog" apps 0 name
	fi
}

for layout in before after; do
	unseen=0
	for prog in true false; do
		code=0
		[ "$prog" = false ] && code=1
		round "$layout" "$prog" "$code" yes
		for _ in $(seq "$ROUNDS"); do round "$layout" "$prog" "$code" no; done
	done
	say "sidecar $layout the app: $unseen of $((2 * ROUNDS + 2)) exits came before a rescan saw the program"
done
exit 0
