#!/bin/bash
# Every exit code told as the kernel has it, and the ones that will fail the
# pod under restartPolicy Never named before it happens. A log shipper that
# does not handle SIGTERM dies of it (stop=signal:TERM): its container
# exits 143, and the summary says so (sidecars[].exit_code), lists it in
# fails_pod with the app that failed (exit 3), and the agent warns once, with
# the consequence and the fix. A second sidecar exits 0 on its SIGTERM: its
# exit_code is 0, and it is neither listed nor warned about. The same pod
# with the kernel's exit codes switched off (tests/helpers/enosys
# --pidfd-info): every sidecar's exit_code is null, not a guess.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin log-shipper metrics job

# scenario [ENOSYS-ARG]: the pod, run to its end.
scenario() {
	local pre=()
	[ $# = 0 ] || pre=("$BIN/enosys" "$@" --)
	fake_start shipper 1002 log-shipper --on TERM:die
	fake_start metrics 1002 metrics
	ctr_start agent 1002 "${pre[@]}" "$BIN/rearguard" -s 'name=shipper,match=log-shipper,stop=signal:TERM' \
		-s 'name=metrics,match=metrics' --apps 1 --stop-timeout 5s --dir "$EMPTYDIR" \
		--termination-log "$RUN/termination-log"
	agent_scanned
	ctr_start app 1001 "$BIN/job" --run 300ms --exit 3 --log "$EVENTS"
	expect_exit agent 20 0
	expect_exit app 1 3
	expect_exit shipper 5 143
	expect_exit metrics 5 0
	[ -n "$(event_ms log-shipper "dying of the signal")" ] || fail "the shipper did not die of its SIGTERM"
}

pod_start
scenario
summary_is stopped sidecars 0 outcome
summary_is 143 sidecars 0 exit_code
summary_is stopped sidecars 1 outcome
summary_is 0 sidecars 1 exit_code
summary_is 3 apps 0 exit_code
summary_is 0 exit_code
fails_pod_is "$RUN/termination-log" sidecar:shipper:143 app:job:3
# A summary this short is whole in the termination log, as in done and the last log line.
/usr/bin/python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
sys.exit(a != b or "truncated" in a)' "$RUN/termination-log" "$EMPTYDIR/done" ||
	fail "the termination log does not hold the whole summary that done holds"
fails_pod_is "$EMPTYDIR/done" sidecar:shipper:143 app:job:3
grep ' finished ' "$T/agent.log" | tail -n 1 | sed 's/.* summary=//' >"$RUN/last-line.json"
fails_pod_is "$RUN/last-line.json" sidecar:shipper:143 app:job:3

warned=$(grep -E '^[^ ]+ warn .*sidecar=shipper' "$T/agent.log" | grep 'exit_code=143' | grep 'the pod will be marked Failed' || true)
[ "$(printf '%s' "$warned" | grep -c .)" = 1 ] ||
	fail "want one warning that shipper's exit code 143 will fail the pod, got: '$warned'"
printf '%s\n' "$warned" | grep -qiE 'graceful|wrapper' || fail "the warning names no fix: $warned"
[ "$(agent_lines 'sidecar=metrics.*marked Failed|marked Failed.*sidecar=metrics')" = 0 ] ||
	fail "a warning for metrics, which exited 0"
say "warning: ${warned#* warn }"

new_pod
scenario --pidfd-info
summary_is null sidecars 0 exit_code
summary_is null sidecars 1 exit_code
summary_is stopped sidecars 0 outcome
[ "$(agent_lines 'marked Failed')" = 0 ] || fail "a warning for an exit code the agent could not know"
exit 0
