#!/bin/bash
# rearguard wait in a pod's container: returns at once when the file is
# there, waits (without polling) until it appears otherwise, also for a
# directory that does not exist yet, and exits 1 at its timeout. The
# volume is read-only for the waiting uid.
. "$RG_SRCDIR/tests/integration/lib.sh"

pod_start
chown 1002:1002 "$EMPTYDIR"
chmod 0755 "$EMPTYDIR"
put_atomic "$EMPTYDIR/ready" ""

t0=$(now_ms)
ctr_start w1 1001 "$BIN/rearguard" wait ready --dir "$EMPTYDIR"
expect_exit w1 5 0
assert_between "$(($(now_ms) - t0))" 0 3000 "ms for wait ready when ready is there"

ctr_start w2 1001 "$BIN/rearguard" wait apps-done --timeout 30s --dir "$EMPTYDIR"
sleep 0.3
pid=$(ctr_pid w2)
before=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
sleep 1
after=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
ctr_running w2 || fail "wait apps-done returned before apps-done existed"
assert_between "$((after - before))" 0 5 "wake-ups of a waiting 'rearguard wait' in 1 s (no polling)"
put_atomic "$EMPTYDIR/apps-done" apps-done
written=$(now_ms)
expect_exit w2 5 0
assert_between "$(($(now_ms) - written))" 0 3000 "ms from apps-done to the end of the wait"

t0=$(now_ms)
ctr_start w3 1001 "$BIN/rearguard" wait done --timeout 300ms --dir "$EMPTYDIR"
expect_exit w3 5 1
assert_between "$(($(now_ms) - t0))" 250 3000 "ms until the 300ms timeout"
grep -q "done did not appear within 300ms" "$T/w3.log" || fail "the timeout is not explained"

# The directory is made later (by the agent, say): its parent is watched meanwhile.
ctr_start w4 1001 "$BIN/rearguard" wait ready --timeout 30s --dir "$EMPTYDIR/later"
sleep 0.3
ctr_running w4 || fail "wait for a missing directory returned early"
mkdir -m 0755 "$EMPTYDIR/later"
sleep 0.2
ctr_running w4 || fail "wait returned when the directory appeared, before ready"
put_atomic "$EMPTYDIR/later/ready" ""
expect_exit w4 5 0
exit 0
