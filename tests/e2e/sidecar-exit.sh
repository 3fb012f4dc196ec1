#!/bin/bash
# manifests/job-signal-helper.yaml with a helper that dies of its stop
# signal (stop=signal:TERM; the stand-in does not handle SIGTERM, as many
# programs do not): its container ends with 143, and under restartPolicy:
# Never that fails the pod although the app succeeded. The agent's summary
# predicted exactly that: the helper's exit_code is 143, and fails_pod lists
# exactly the containers that podman reports with a non-zero code. podman
# has no termination message (podman-kube-play(1) lists
# terminationMessagePath as unsupported, and the agent's /dev is not
# writable), so the summary is read where an operator finds it without one:
# the agent's last log line (kubectl logs) and the done file on the volume.
. "$RG_SRCDIR/tests/e2e/lib.sh"

image_agent
image_busybox
image_standin cr.fluentbit.io/fluent/fluent-bit /fluent-bit/bin/fluent-bit --on TERM:die
play manifests/job-signal-helper.yaml \
	--command 'report=["sh", "-c", "echo working; sleep 1; touch /e2e/app-exit; exit 0"]'
pod_wait 60

expect_code report 0
expect_code fluent-bit 143
expect_code rearguard 0
[ -n "$(event_ms fluent-bit "dying of the signal")" ] || fail "the helper did not die of its SIGTERM"
summary_is 143 sidecars 0 exit_code
summary_is stopped sidecars 0 outcome
summary_is 0 exit_code

# What podman says: every container of the pod that exited non-zero, as NAME:CODE.
podman_fails=$(for c in $(kubelet containers); do
	code=$(ctr_code "$c") || fail "no container $c"
	[ "$code" = 0 ] || printf '%s:%s\n' "$c" "$code"
done | LC_ALL=C sort | tr '\n' ' ')
[ "$podman_fails" = "fluent-bit:143 " ] || fail "podman's failed containers: '$podman_fails', want fluent-bit:143"

# What the agent predicted, in its last log line and in done. Sidecars carry the name of
# their spec (the container's, in this manifest), the agent "rearguard".
predicted() {
	/usr/bin/python3 - "$1" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
s = json.loads(text)
if "msg" in s:
    s = s["summary"]
for e in s["fails_pod"]:
    print("%s:%s" % (e["name"], e["exit_code"]))
PY
}
ctr_logs rearguard | tail -n 1 >"$T/last-line.json"
from_log=$(predicted "$T/last-line.json" | LC_ALL=C sort | tr '\n' ' ') || fail "no fails_pod in the agent's last log line"
[ "$from_log" = "$podman_fails" ] || fail "the agent's last log line predicted '$from_log', podman reports '$podman_fails'"
done_file=$(volume_file rearguard "done")
from_done=$(predicted "$done_file" | LC_ALL=C sort | tr '\n' ' ') || fail "no fails_pod in done"
[ "$from_done" = "$podman_fails" ] || fail "done predicted '$from_done', podman reports '$podman_fails'"
ctr_logs rearguard | grep -q 'the pod will be marked Failed' || fail "the agent did not warn"
say "podman: $podman_fails; predicted: $from_log"
