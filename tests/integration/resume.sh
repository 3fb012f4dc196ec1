#!/bin/bash
# A restarted agent resumes from the files. The agent is killed (SIGKILL)
# after it wrote apps-done, while the sidecar is still draining; the new
# agent (the kubelet's restart: a new container) finds apps-done and drains
# at once. Restarted once more, it finds done: it exits 0 at once and leaves
# the summary in its own termination log.
. "$RG_SRCDIR/tests/integration/lib.sh"

shipper_pod --on TERM:delay:2s:0
ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"
wait_for 10 test -e "$EMPTYDIR/apps-done" || fail "no apps-done"
kill -KILL "$(ctr_pid agent)"
expect_exit agent 5 137
ctr_running proxy || fail "the sidecar should still be draining"
[ ! -e "$EMPTYDIR/done" ] || fail "done written before the drain ended"

AGENT_NAME=agent2 shipper_agent
expect_exit agent2 10 0
expect_exit proxy 2 0
grep -q "apps-done found: an earlier run of rearguard had decided the apps are done" "$T/agent2.log" ||
	fail "the resume is not explained"
[ "$(json_get "$RUN/termination-log2" reason)" = resume ] || fail "the summary's reason is not resume"
[ "$(json_get "$RUN/termination-log2" sidecars 0 outcome)" = stopped ] || fail "the sidecar was not stopped"
[ -s "$EMPTYDIR/done" ] || fail "no done after the resumed drain"

t0=$(now_ms)
AGENT_NAME=agent3 shipper_agent
expect_exit agent3 5 0
assert_between "$(($(now_ms) - t0))" 0 5000 "ms for an agent that finds done"
grep -q "done found: an earlier run of rearguard finished the drain" "$T/agent3.log" || fail "not explained"
grep -q "role=sidecar" "$T/agent3.log" && fail "it should not act on the pod"
cmp -s "$RUN/termination-log2" "$RUN/termination-log3" || fail "the summary is not in the new termination log"
exit 0
