#!/bin/bash
# "app exit -> stop request received" for Istio: in each of N pods (default
# 20), an app exits after --run and the stand-in pilot-agent logs the moment
# rearguard's POST /quitquitquit reaches it; both times are wall-clock with
# microseconds (RG_EVENTS_US=1). Prints each run, then the median, p90 and
# max. Build first (tools/check, or make in build/); run as root.
#
# Each run waits on three processes waking up (the exiting app, the agent,
# the proxy): on a busy or virtual machine every wake-up adds up to
# milliseconds, so take the figure on an idle node. The agent's own share
# (from its summary) is printed next to each run.
#
#   bench/istio-stop-latency.sh [N] [BUILDDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-20}
export RG_BUILDDIR=${2:-$top/build} RG_SRCDIR=$top RG_SKIP_STATUS=1 RG_EVENTS_US=1
for f in rearguard tests/helpers/standin tests/helpers/fake tests/helpers/pause tests/helpers/enter; do
	[ -x "$RG_BUILDDIR/$f" ] || { echo "bench: $RG_BUILDDIR/$f missing: build first" >&2; exit 1; }
done
# shellcheck source=../tests/integration/lib.sh
. "$top/tests/integration/lib.sh"

alias_bin job
results=$T/latencies
for i in $(seq "$runs"); do
	if [ -n "$PAUSE" ]; then new_pod; else pod_start; fi
	standin_start proxy 1337 pilot-agent
	ctr_start agent 1337 "$BIN/rearguard" --sidecar istio --apps 1 --dir "$EMPTYDIR" \
		--termination-log "$RUN/termination-log"
	wait_for 10 test -e "$EMPTYDIR/ready" || fail "run $i: no ready file"
	ctr_start app 1001 "$BIN/job" --run 300ms --log "$EVENTS"
	expect_exit agent 15 0
	expect_exit proxy 5 0
	app_exit=$(event_ms job "exit 0")
	stop=$(event_ms pilot-agent "stop request received")
	[ -n "$app_exit" ] && [ -n "$stop" ] || fail "run $i: missing events"
	# Inside the agent (its monotonic clock): the app's exit seen -> decided -> stop request issued.
	seen=$(json_get "$RUN/termination-log" apps 0 exited_after_ms)
	decided=$(json_get "$RUN/termination-log" decided_after_ms)
	issue=$(json_get "$RUN/termination-log" sidecars 0 decision_to_stop_ms)
	awk -v a="$app_exit" -v s="$stop" -v i="$i" -v d="$(awk -v x="$decided" -v y="$seen" 'BEGIN { print x - y }')" \
		-v q="$issue" 'BEGIN { printf "run %2d: %.3f ms (in the agent: exit seen -> decided %.3f ms, -> stop request issued %.3f ms)\n", i, s - a, d, q }'
	echo "$app_exit $stop" >>"$results"
done
sort -n -k1 "$results" | awk '{ print $2 - $1 }' | sort -g | awk '
	{ v[NR] = $1 }
	END {
		med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		p90 = v[int(NR * 0.9 + 0.999)]
		printf "app exit -> stop request received (%d runs): median %.3f ms, p90 %.3f ms, max %.3f ms\n",
			NR, med, p90, v[NR]
	}'
