#!/bin/bash
# A Deployment of two pods whose app calls a backend through two plain
# sidecars, Debian's haproxy (edge, its soft stop SIGUSR1) and nginx behind
# it (relay, SIGQUIT), both slower than the app to start, and goes on
# calling for 5 s after its own SIGTERM: a client in the cluster counts the
# calls that fail as the pods start, during `kubectl rollout restart` and
# during `kubectl delete pod`. First without rearguard, where nginx stops
# on the SIGTERM that the app gets, so that the app's calls fail (each
# slowly: haproxy tries relay again), and haproxy, which does not catch
# SIGTERM, goes on as its container's first process until the kubelet's
# SIGKILL at the end of the grace period; then with the pod
# template labelled rearguard.io/inject: services, which rearguard's
# webhook sees on each pod (the entry pod.rearguard.io). With rearguard no
# call fails, every first call goes through, no pod takes longer to delete
# than its app's stop, its sidecars' and a second, and in each deleted pod
# the sidecars stopped in reverse order: edge, named last, gone before
# relay's stop (the agent's summary), and finished no later (the kubelet's).
. "$RG_SRCDIR/tests/cluster/lib.sh"
. "$RG_SRCDIR/tests/cluster/webhook-lib.sh"
. "$RG_SRCDIR/tests/cluster/services-lib.sh"

TWO=yes
services_images
webhook_up shared
backend_up

workload Deployment chain >"$T/plain.yaml"
apply "$T/plain.yaml"
run_phases Deployment chain without
workload_gone Deployment chain

workload Deployment chain services >"$T/labelled.yaml"
apply "$T/labelled.yaml"
settled 180
pods_json
[ "$(wl_py 'all([c["name"] for c in p["spec"]["containers"]] == ["relay", "edge", "rearguard", "app"] for p in live)')" = True ] ||
	fail "the webhook did not give every pod the agent, gated: $(wl_py '[[c["name"] for c in p["spec"]["containers"]] for p in live]')"
run_phases Deployment chain with bound

for f in "$T"/deleted-with/*.json; do
	/usr/bin/python3 - "$f" <<'PY' || fail "$(basename "$f" .json): the sidecars did not stop in reverse order"
import datetime, json, sys
p = json.load(open(sys.argv[1]))
cs = {c["name"]: c["state"]["terminated"] for c in p["status"]["containerStatuses"]}
s = {x["name"]: x for x in json.loads(cs["rearguard"]["message"])["sidecars"]}
fin = {n: datetime.datetime.strptime(c["finishedAt"], "%Y-%m-%dT%H:%M:%SZ") for n, c in cs.items()}
print("# %s: edge gone %.0f ms after the decision, relay's stop sent %.0f ms after it; finished: edge %s, relay %s"
      % (p["metadata"]["name"], s["edge"]["decision_to_exit_ms"], s["relay"]["decision_to_stop_ms"],
         fin["edge"].time(), fin["relay"].time()))
sys.exit(0 if s["edge"]["decision_to_exit_ms"] <= s["relay"]["decision_to_stop_ms"] and fin["edge"] <= fin["relay"] else 1)
PY
done
verdicts without
verdicts with
