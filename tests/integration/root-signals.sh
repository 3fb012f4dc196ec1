#!/bin/bash
# stop=signal:NAME goes to the container's root process alone, as the
# runtime's StopContainer does, and so does the SIGTERM of the escalation;
# the SIGKILL at the end goes to every process left. stop=signal-all:NAME
# sends the stop signal to every process. The sidecar is a root with two
# forked children, all logging the signals they get. Root-only: the root
# ignores QUIT and exits on the SIGTERM after --stop-timeout; its children
# hear of neither and are killed after --kill-after. signal-all: all three
# get QUIT and exit, with no escalation.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin web job

# root_pid: the pid (in the pod) of the sidecar's root; child_events: what its children logged,
# other than their start.
root_pid() { awk '$2 == "web" && $4 == "started" { print $3; exit }' "$EVENTS"; }
child_events() {
	awk -v r="$(root_pid)" '$2 == "web" && $3 != r && $4 != "child" { $1 = ""; print }' "$EVENTS"
}

say "root-only"
pod_start
fake_start web 1002 web --children 2 --on QUIT:ignore
[ "$(ctr_left web | wc -l)" = 3 ] || fail "the sidecar does not run a root and two children"
ctr_start agent 1002 "$BIN/rearguard" -s 'name=web,match=web,stop=signal:QUIT' --apps 1 \
	--stop-timeout 1s --kill-after 1s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"
expect_exit agent 20 0
expect_exit web 1 0
no_process_left web
root=$(root_pid)
[ -n "$(awk -v r="$root" '$3 == r && /got SIGQUIT/' "$EVENTS")" ] || fail "the root got no SIGQUIT"
[ -n "$(awk -v r="$root" '$3 == r && /got SIGTERM/' "$EVENTS")" ] || fail "the root got no SIGTERM"
[ -z "$(child_events)" ] || fail "the children were signalled before the SIGKILL: $(child_events)"
[ "$(agent_lines 'sent SIGQUIT sidecar=web processes=1$')" = 1 ] || fail "SIGQUIT did not go to the root alone"
[ "$(agent_lines 'sent SIGTERM sidecar=web processes=1$')" = 1 ] || fail "SIGTERM did not go to the root alone"
[ "$(agent_lines 'sent SIGKILL sidecar=web processes=2$')" = 1 ] || fail "SIGKILL did not go to the two children"
lat=$(json_get "$RUN/termination-log" sidecars 0 stop_latency_ms)
assert_between "${lat%.*}" 1900 6000 "ms from the stop signal to the last child gone (1s + 1s)"
summary_is killed sidecars 0 outcome
summary_is 0 sidecars 0 exit_code
fails_pod_is "$RUN/termination-log"
grep 'sent SIG' "$T/agent.log" | sed 's/^/# /'

say "signal-all"
new_pod
fake_start web 1002 web --children 2
ctr_start agent 1002 "$BIN/rearguard" -s 'name=web,match=web,stop=signal-all:QUIT' --apps 1 \
	--stop-timeout 5s --kill-after 1s --dir "$EMPTYDIR" --termination-log "$RUN/termination-log"
agent_scanned
ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"
expect_exit agent 20 0
expect_exit web 1 0
no_process_left web
[ "$(events_count web "got SIGQUIT")" = 3 ] || fail "not every process got SIGQUIT: $(grep ' web ' "$EVENTS")"
[ "$(events_count web "exit 0")" = 3 ] || fail "not every process exited 0 on its SIGQUIT"
[ "$(agent_lines 'sent SIGQUIT sidecar=web processes=3$')" = 1 ] || fail "SIGQUIT did not go to all three"
[ "$(agent_lines 'sent SIG(TERM|KILL)')" = 0 ] || fail "an escalation after signal-all"
summary_is stopped sidecars 0 outcome
summary_is signal-all:QUIT sidecars 0 method
summary_is 0 sidecars 0 exit_code
exit 0
