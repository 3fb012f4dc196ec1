#!/bin/bash
# Symlinks planted in the volume are never followed: not at ready (wait and
# run do not take it for ready), not in apps/ (the target says 0; reading it
# would end the running app early), and not at ready, apps-done or done,
# which the agent replaces without writing through them.
. "$RG_SRCDIR/tests/integration/lib.sh"

alias_bin fluent-bit job
pod_start
echo 0 >"$RUN/zero"
echo original >"$RUN/victim1"
echo original >"$RUN/victim2"
echo original >"$RUN/victim3"
chown 1002 "$RUN/victim1" "$RUN/victim2" "$RUN/victim3"
ln -s "$RUN/victim3" "$EMPTYDIR/ready"
ln -s "$RUN/victim1" "$EMPTYDIR/apps-done"
ln -s "$RUN/victim2" "$EMPTYDIR/done"
mkdir -m 1777 "$EMPTYDIR/apps"
ln -s "$RUN/zero" "$EMPTYDIR/apps/x"

ctr_start w 1001 "$BIN/rearguard" wait ready --timeout 500ms --dir "$EMPTYDIR"
expect_exit w 5 1
ctr_start r 1001 "$BIN/rearguard" run --timeout 500ms --dir "$EMPTYDIR" --name r -- "$BIN/job" --log "$EVENTS"
expect_exit r 5 124
rm "$EMPTYDIR/apps/r" # its report (124): not what this test is about

fake_start proxy 1002 fluent-bit
shipper_agent
agent_scanned
fake_start app 1001 job --run 2500ms
# One more, renamed into place while the agent runs: an event that makes it look.
ln -s "$RUN/zero" "$EMPTYDIR/apps/.y"
mv "$EMPTYDIR/apps/.y" "$EMPTYDIR/apps/y"
wait_for 5 grep -q "file=apps/y reason=\"a symbolic link" "$T/agent.log" || fail "apps/y not refused"
grep -q "file=apps/x reason=\"a symbolic link" "$T/agent.log" || fail "apps/x not refused"
grep -q "app reported" "$T/agent.log" && fail "a symlink was read as a report"
sleep 0.5
[ -z "$(event_ms fluent-bit "got SIGTERM")" ] || fail "the sidecar was stopped while the app ran"

expect_exit agent 10 0
in_order "$(event_ms job "exit 0")" "$(event_ms fluent-bit "got SIGTERM")" "the app's exit -> the drain's SIGTERM"
[ -f "$EMPTYDIR/ready" ] && [ ! -L "$EMPTYDIR/ready" ] || fail "ready is not a regular file"
[ -f "$EMPTYDIR/apps-done" ] && [ ! -L "$EMPTYDIR/apps-done" ] || fail "apps-done is not a regular file"
[ -f "$EMPTYDIR/done" ] && [ ! -L "$EMPTYDIR/done" ] || fail "done is not a regular file"
[ "$(cat "$RUN/victim1")" = original ] && [ "$(cat "$RUN/victim2")" = original ] &&
	[ "$(cat "$RUN/victim3")" = original ] || fail "a symlink's target was written"
exit 0
