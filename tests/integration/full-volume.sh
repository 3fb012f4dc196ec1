#!/bin/bash
# The shared volume is full when the agent wants to write ready: the write
# fails (ENOSPC), is tried again with a backoff, and succeeds once there is
# room; the app gated on ready (rearguard run) starts then.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin job
# A tiny emptyDir of its own, mounted before the pod's mount namespace is made.
mount -t tmpfs -o size=64k,mode=0777 rg-full "$EMPTYDIR" 2>/dev/null || skip "cannot mount a tmpfs here"
at_exit 'umount -l "$EMPTYDIR"'
dd if=/dev/zero of="$EMPTYDIR/filler" bs=4k count=64 2>/dev/null || true
[ "$(df --output=avail -k "$EMPTYDIR" | tail -n 1 | tr -d ' ')" = 0 ] || fail "the volume is not full"
pod_start
standin_start proxy 1337 pilot-agent
ctr_start agent 1337 "$BIN/rearguard" --sidecar istio --apps 1 --dir "$EMPTYDIR" \
	--termination-log "$RUN/termination-log"
ctr_start app 1001 "$BIN/rearguard" run --dir "$EMPTYDIR" --timeout 60s -- "$BIN/job" --run 200ms --log "$EVENTS"
wait_for 10 grep -q "every sidecar is ready" "$T/agent.log" || fail "the sidecar did not turn ready"
sleep 1
[ -z "$(event_ms job started)" ] || fail "the app started without ready"
freed=$(now_ms)
rm -f "$EMPTYDIR/filler"
job_started() { [ -n "$(event_ms job started)" ]; }
wait_for 10 job_started || fail "the app did not start once there was room"
started=$(event_ms job started)
assert_between "$((started - freed))" 0 5000 "ms from the room made to the app's start"
expect_exit app 10 0
expect_exit agent 10 0
grep -q "cannot write the file: trying again" "$T/agent.log" || fail "the failed write is not logged"
grep -q "file=ready" "$T/agent.log" || fail "it is not the ready file that failed"
grep -q "wrote the file after all" "$T/agent.log" || fail "the late write is not logged"
[ -s "$EMPTYDIR/done" ] || fail "no done file"
exit 0
