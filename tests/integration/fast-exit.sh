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
# sidecar is gone and the summary says stopped (started before the app, it
# got its SIGTERM; started after, it may be stopped before its handler is
# set up); the container that exited before a rescan saw its program is
# logged as such at least once per layout.
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
	# Stopped as soon as it is seen: it may not have set up its SIGTERM handler yet (no fake_start).
	[ "$layout" = after ] && ctr_start proxy 1002 "$BIN/fluent-bit" --log "$EVENTS"
	# Under the 30 s a pending container may last: the exit was noticed, not waited out.
	expect_exit agent 20 0
	ctr_wait proxy 5
	[ "$RC" != timeout ] || fail "the sidecar still runs"
	summary_is "$code" apps 0 exit_code
	summary_is stopped sidecars 0 outcome
	if [ "$layout" = before ]; then
		[ "$(events_count fluent-bit "got SIGTERM")" = 1 ] || fail "the sidecar got no SIGTERM"
	fi
	if [ "$code" = 1 ]; then
		json_get "$RUN/termination-log" fails_pod | grep -q '"role": "app".*"exit_code": 1' ||
			fail "the app's exit 1 is not in fails_pod: $(json_get "$RUN/termination-log" fails_pod)"
	elif [ "$layout" = before ]; then
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
