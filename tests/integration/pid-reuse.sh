#!/bin/bash
# A pid reused between two looks at /proc is a new process. Under
# OnFailure the app fails; a helper it forked dies right after; the
# restart's main process is given the helper's pid (ns_last_pid, as a busy
# pod would by chance). The restart must be seen as a container of its own,
# not taken for the dead helper of the failed attempt: the agent then
# drains once it succeeded, instead of waiting out --restart-grace.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
# pod_pid HOSTPID: the pid as the pod's PID namespace numbers it.
pod_pid() {
	awk '/^NSpid:/ { print $NF }' "/proc/$1/status"
}

pod_start
for round in 1 2 3; do
	[ "$round" = 1 ] || new_pod
	fake_start proxy 1002 fluent-bit
	shipper_agent --restart-policy OnFailure --restart-grace 60s
	agent_scanned
	ctr_start app 1001 "$BIN/job" --children 1 --run 400ms --exit 3 --name attempt1 --log "$EVENTS"
	# The helper: the app container's other process (its cgroup lists it, also once the root is gone).
	procs=$(set -- $CGROUP_DIRS; echo "$1")/app/cgroup.procs
	wait_for 5 sh -c "grep -vx '$(ctr_pid app)' '$procs' | grep -q ." || fail "round $round: no helper"
	helper=$(grep -vx "$(ctr_pid app)" "$procs" | head -n 1)
	helper_pid=$(pod_pid "$helper")
	[ -n "$helper_pid" ] || fail "round $round: the helper's pid in the pod is unknown"
	expect_exit app 5 3
	wait_for 5 grep -q "keeping the sidecars for its restart" "$T/agent.log" || fail "round $round: no restart awaited"
	# The helper dies, and its pid goes at once to the restart (the runtime's init, then the app),
	# which lives longer than any gap between two rescans: only the reused pid can hide it.
	kill -KILL "$helper"
	CTR_PID=$helper_pid ctr_start app-restarted 1001 "$BIN/job" --run 1500ms --exit 0 --name attempt2 --log "$EVENTS"
	restarted=$(pod_pid "$(ctr_pid app-restarted)")
	[ "$restarted" = "$helper_pid" ] || say "round $round: the pid was not reused ($restarted, not $helper_pid)"
	expect_exit app-restarted 5 0
	expect_exit agent 10 0
	grep -q "app restarted" "$T/agent.log" || fail "round $round: the restart was not seen"
	summary_is restarted apps 0 state
	# The fork that sets ns_last_pid is a process of the pod for a moment, outside the pod's
	# cgroups, gone without a program: a rescan may see it, but it is no container (probe-init.sh).
	summary_len apps 2
	summary_is 0 apps -1 exit_code
	summary_is job apps -1 name
done
exit 0
