#!/bin/bash
# Instant apps: an app that ends in its first millisecond (`true`, and
# `false`), with the Cloud SQL proxy listed before it and after it
# (tests/cluster/jobs/instant.yaml): four layouts, RG_INSTANT_RUNS (10) Jobs
# each, all applied at once in the namespace. Each Job must end (Complete
# for `true`, Failed for `false`, backoffLimit 0) within the bound: the
# proxy stopped (exit 0), the agent's exit 0, and the app's code, as the
# kubelet reports it, in the agent's summary (apps[0].exit_code) and, for
# `false`, in its fails_pod. An app that ends before the proxy's container
# exists, or within milliseconds, must be reported like any other.
#
# What no looking can see is an app that lived and died while the agent
# was kept off the processor (docs/decisions.md, "Rescans while a
# container is expected"): such a Job ends at the agent's --startup-timeout
# (60 s here), the proxy stopped, and its summary says why (reason
# startup-timeout, no app seen, the stall in stalled_ms). That Job is
# counted as missed, not failed; one missed without a stall said fails, and
# at least three in four must be seen.
#
# One layout's Jobs are applied at once, and the next layout's once they
# all ended: forty pods started together on a two-core node starve every
# process of them for longer than an instant app lives, and what the agent
# never gets the processor to look at it cannot see (docs/decisions.md,
# "Rescans while a container is expected"). For the same reason the test
# has the node to itself (node_alone): the other cluster tests wait.
. "$RG_SRCDIR/tests/cluster/lib.sh"
# No other test's pods beside these: the node's load is what this is about.
node_alone

runs=${RG_INSTANT_RUNS:-10}
image_agent
image_busybox
image_proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy /cloud-sql-proxy
# wait_ended PREFIX: every Job whose name starts with PREFIX ended, within a
# bound that leaves room for a loaded machine.
wait_ended() {
	local end left
	end=$(($(now_ms) + ${RG_INSTANT_TIMEOUT:-300} * 1000))
	while :; do
		k get jobs -o json >"$T/jobs.json" || fail "kubectl get jobs failed"
		left=$(jq_py "$T/jobs.json" '" ".join(j["metadata"]["name"] for j in d["items"]
			if j["metadata"]["name"].startswith("'"$1"'")
			and not any(c["status"] == "True" and c["type"] in ("Complete", "Failed")
				    for c in j["status"].get("conditions", [])))')
		[ -n "$left" ] || return 0
		if [ "$(now_ms)" -ge "$end" ]; then
			k get pods -o json >"$T/pods.json"
			for JOB in $left; do
				evidence "instant: $JOB did not end" | head -n 12
				# The agent's own account of why it is still waiting.
				k logs "job/$JOB" -c rearguard --tail 40 2>&1 | sed 's/^/#   rearguard log: /' || true
				# In a subshell: summary fails (exits) when the agent is still running.
				(summary) 2>/dev/null && cat "$T/summary.json"
			done
			fail "$(echo "$left" | wc -w) Jobs did not end within ${RG_INSTANT_TIMEOUT:-300} s: $left"
		fi
		sleep 2
	done
}

for app in true false; do
	for layout in before after; do
		case $layout in
		before) order=rearguard,cloud-sql-proxy,app ;;
		after) order=rearguard,app,cloud-sql-proxy ;;
		esac
		: >"$T/batch.yaml"
		for i in $(seq 1 "$runs"); do
			JOB_NAME=$app-$layout-$i job_yaml tests/cluster/jobs/instant.yaml --order "$order" \
				--command "app=[\"$app\"]"
			{ echo ---; cat "$T/$JOB.yaml"; } >>"$T/batch.yaml"
		done
		apply "$T/batch.yaml"
		wait_ended "$app-$layout-"
	done
done
WALL_MS=$(($(now_ms) - START_MS))
k get pods -o json >"$T/pods.json" || fail "kubectl get pods failed"

# Each Job's ending and what its pod reported, against the agent's summary.
/usr/bin/python3 - "$T/jobs.json" "$T/pods.json" >"$T/verdicts" <<'PY' || true
import json, sys
jobs = json.load(open(sys.argv[1]))["items"]
pods = {p["metadata"]["labels"]["job-name"]: p for p in json.load(open(sys.argv[2]))["items"]}
for j in sorted(jobs, key=lambda j: j["metadata"]["name"]):
    name = j["metadata"]["name"]
    app = name.split("-")[0]
    want = "Complete" if app == "true" else "Failed"
    code = 0 if app == "true" else 1
    got = [c["type"] for c in j["status"].get("conditions", []) if c["status"] == "True"]
    bad = []
    if want not in got:
        bad.append("condition %s, want %s" % (got, want))
    p = pods.get(name)
    if p is None:
        print("BAD %s: no pod" % name)
        continue
    st = {c["name"]: c["state"].get("terminated", {}) for c in p["status"].get("containerStatuses", [])}
    kube = {n: s.get("exitCode") for n, s in st.items()}
    if kube.get("app") != code:
        bad.append("app exitCode %s, want %s" % (kube.get("app"), code))
    for n in ("cloud-sql-proxy", "rearguard"):
        if kube.get(n) != 0:
            bad.append("%s exitCode %s" % (n, kube.get(n)))
    try:
        s = json.loads(st.get("rearguard", {}).get("message") or "")
    except ValueError:
        s = None
        bad.append("the agent's terminated message is not JSON: %r" % (st.get("rearguard", {}).get("message") or "")[:200])
    missed = s is not None and s.get("reason") == "startup-timeout" and not s.get("apps") and s.get("stalled_ms")
    if s is not None and missed:
        detail = "missed in a stall of %s ms (reason startup-timeout, no app seen)" % s["stalled_ms"]
        if s.get("fails_pod"):
            bad.append("fails_pod %s" % json.dumps(s.get("fails_pod")))
        sc = s.get("sidecars") or [{}]
        if sc[0].get("outcome") != "stopped":
            bad.append("the proxy's outcome %s" % sc[0].get("outcome"))
    elif s is not None:
        a = s["apps"][0] if s.get("apps") else {}
        if a.get("exit_code") != kube.get("app"):
            bad.append("summary apps[0].exit_code %s, the kubelet's %s" % (a.get("exit_code"), kube.get("app")))
        failing = [f for f in s.get("fails_pod", []) if f.get("role") == "app"]
        if code and [f.get("exit_code") for f in failing] != [code]:
            bad.append("fails_pod %s has not the app's %s" % (json.dumps(s.get("fails_pod")), code))
        if not code and failing:
            bad.append("fails_pod %s lists the app" % json.dumps(s.get("fails_pod")))
        sc = s.get("sidecars") or [{}]
        if sc[0].get("outcome") != "stopped":
            bad.append("the proxy's outcome %s" % sc[0].get("outcome"))
        detail = "reason %s, app exit_code %s, fails_pod %s" % (s.get("reason"), a.get("exit_code"), json.dumps(s.get("fails_pod")))
    else:
        detail = ""
    print("%s %s: %s; kubelet %s; %s" % ("BAD" if bad else "MISSED" if missed else "ok", name, " ".join(got), kube,
                                        "; ".join(bad) or detail))
PY
sed 's/^/# /' "$T/verdicts"
bad=$(grep -c '^BAD' "$T/verdicts" || true)
[ "$bad" = 0 ] || fail "$bad of $((4 * runs)) Jobs went wrong: $(grep '^BAD' "$T/verdicts" | head -n 3)"
missed=$(grep -c '^MISSED' "$T/verdicts" || true)
[ "$missed" -le "$runs" ] || fail "$missed of $((4 * runs)) Jobs' apps were missed, each in a stall: more than one in four"
say "$((4 * runs)) Jobs ended as they should ($missed missed in a stall, as said); the last layout's apply ->" \
	"its last Job ended: $WALL_MS ms"
