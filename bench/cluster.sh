#!/bin/bash
# On the one-node Kubernetes 1.20 of tools/cluster: the time from an app's
# exit to its Job's Complete condition, with rearguard stopping the Cloud
# SQL proxy stand-in, and with the common workaround instead, a shell
# companion that polls every second for a file the app leaves, then asks the
# proxy to quit. Both Jobs run the same app (the fake of tests/helpers,
# which logs its exit with a millisecond clock, then touches the file); the
# Complete condition's time is when a poll of the Job first saw it. The
# kubelet notices exited containers at its PLEG relist (every second), which
# bounds both from below.
#
#   RG_BUILDDIR=build RG_SRCDIR=. bench/cluster.sh [TRIALS]   (default 5 of each)
#
# Reuses tests/cluster/lib.sh: it brings up the cluster and builds the
# images the cluster tests use; prints one line per Job and the medians.
set -euo pipefail
RG_BUILDDIR=$(cd "${RG_BUILDDIR:?RG_BUILDDIR: the build tree}" && pwd)
RG_SRCDIR=$(cd "${RG_SRCDIR:?RG_SRCDIR: the source tree}" && pwd)
export RG_BUILDDIR RG_SRCDIR
trials=${1:-5}
. "$RG_SRCDIR/tests/cluster/lib.sh"

image_agent
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy
image_busybox
d=$T/img/app
cp -a "$T/img/busybox" "$d"
cp "$STATIC/standins/fake" "$d/bin/job"
# The apps' image: busybox with the fake as job.
image busybox app "$d" 'ENV PATH=/bin'
app='["sh", "-c", "job --run 2s --log /dev/stdout && touch /e2e/app-done"]'
companion='{"name": "companion", "image": "busybox:1.36", "command": ["sh", "-c",
	"until [ -e /e2e/app-done ]; do sleep 1; done; wget -q -O /dev/null --post-data= http://127.0.0.1:9091/quitquitquit"]}'

# complete_ms JOB: when a poll of JOB first saw its Complete condition (ms;
# a poll is one kubectl call, about 0.1 s apart).
complete_ms() {
	local end st
	end=$(($(now_ms) + 180000))
	while [ "$(now_ms)" -lt "$end" ]; do
		st=$(k get job "$1" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}' 2>/dev/null) || true
		if [ "$st" = True ]; then
			now_ms
			return
		fi
		sleep 0.05
	done
}

: >"$T/results"
for i in $(seq 1 "$trials"); do
	for how in rearguard workaround; do
		if [ "$how" = rearguard ]; then
			JOB_NAME=rg-$i job_yaml tests/cluster/jobs/instant.yaml \
				--command "app=$app"
		else
			AGENT='' JOB_NAME=wa-$i job_yaml tests/e2e/jobs/cloudsql.yaml \
				--command "batch=$app" --args 'cloud-sql-proxy=["--quitquitquit", "--port=5432", "p:r:i"]' \
				--inject "$companion"
		fi
		apply "$T/$JOB.yaml"
		done_ms=$(complete_ms "$JOB")
		[ -n "$done_ms" ] || fail "job $JOB did not complete within 180 s"
		pod_json
		c='batch'
		[ "$how" = workaround ] || c=app
		exit_ms=$(event_ms "$c" "exit 0")
		[ -n "$exit_ms" ] || fail "no exit line from the app of $JOB"
		echo "$how $((done_ms - exit_ms))" >>"$T/results"
		say "$how $i: app exit -> Job Complete $((done_ms - exit_ms)) ms"
		k delete job "$JOB" --wait=false >/dev/null
	done
done
/usr/bin/python3 - "$T/results" <<'PY'
import statistics, sys
r = {}
for line in open(sys.argv[1]):
    how, ms = line.split()
    r.setdefault(how, []).append(int(ms))
for how, v in r.items():
    print("%-10s app exit -> Job Complete: median %d ms, min %d, max %d (%d Jobs)"
          % (how, statistics.median(v), min(v), max(v), len(v)))
PY
