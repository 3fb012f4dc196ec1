#!/bin/bash
# rearguard explain on a synthetic whole cluster: kubectl get
# pods,jobs,cronjobs,namespaces -A -o json of PODS pods (default 5000) in
# NS namespaces (default 500), each a Job's pod as kubectl prints it (its
# metadata, spec and status; a plain proxy beside the app in half of them,
# hung or still running, the agent in a quarter, native sidecars in the
# rest), one Job each, a CronJob and a Namespace per namespace (a tenth
# labelled). Prints the dump's size, then explain's time and peak memory
# (GNU time's elapsed and maximum resident set), best of three runs.
#
#   bench/explain.sh [--pods N] [--namespaces N] [--keep FILE]
#   RG_BUILDDIR=build bench/explain.sh
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${RG_BUILDDIR:-$top/build}
pods=5000 nss=500 keep=
while [ "$#" -gt 0 ]; do
	case $1 in
	--pods) pods=$2; shift 2 ;;
	--namespaces) nss=$2; shift 2 ;;
	--keep) keep=$2; shift 2 ;;
	*) echo "usage: bench/explain.sh [--pods N] [--namespaces N] [--keep FILE]" >&2; exit 2 ;;
	esac
done
[ -x /usr/bin/time ] || { echo "bench/explain.sh: needs GNU time (tools/deps time)" >&2; exit 1; }
dump=${keep:-$(mktemp /tmp/rg-explain-bench.XXXXXX)}
[ -n "$keep" ] || trap 'rm -f "$dump"' EXIT

/usr/bin/python3 - "$pods" "$nss" "$dump" <<'PY'
import json, sys
pods, nss, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
T0, T1 = "2026-11-29T01:00:00Z", "2026-11-29T01:05:00Z"
def meta(name, ns, job):
    return {"creationTimestamp": T0, "generateName": job + "-", "name": name, "namespace": ns,
            "labels": {"controller-uid": "6f1d8a52-0c55-4a0b-9a3e-%012d" % hash(name) if False else "6f1d8a52-0c55-4a0b-9a3e-5a1c3f0b2d11",
                       "job-name": job, "app.kubernetes.io/name": "batch", "app.kubernetes.io/part-of": "nightly"},
            "annotations": {"kubernetes.io/psp": "restricted"},
            "ownerReferences": [{"apiVersion": "batch/v1", "blockOwnerDeletion": True, "controller": True,
                                 "kind": "Job", "name": job, "uid": "6f1d8a52-0c55-4a0b-9a3e-5a1c3f0b2d11"}],
            "resourceVersion": "123456", "uid": "0b7c6a1e-7f0a-4a5d-9a0e-3c2b1a0f9e8d"}
def ctr(name, image, args=None, extra=None):
    c = {"name": name, "image": image, "imagePullPolicy": "IfNotPresent",
         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
         "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
         "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "default-token-x2x7q", "readOnly": True}]}
    if args: c["args"] = args
    if extra: c.update(extra)
    return c
def status(name, image, state):
    return {"name": name, "image": image, "imageID": "docker-pullable://" + image + "@sha256:" + "ab" * 32,
            "containerID": "containerd://" + "cd" * 32, "ready": "running" in state, "restartCount": 0,
            "started": "running" in state, "lastState": {}, "state": state}
running = {"running": {"startedAt": T0}}
done = {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": T0, "finishedAt": T1,
                       "containerID": "containerd://" + "ef" * 32}}
items, per = [], pods // nss
for n in range(nss):
    ns = "team-%03d" % n
    for k in range(per):
        job = "nightly-%d" % k
        name = "%s-%05x" % (job, n * per + k)
        kind = k % 4
        app = ctr("app", "registry.example.com/batch/app:1.4", ["--run", "report"])
        proxy = ctr("cloud-sql-proxy", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0", ["--port=5432", "p:r:i"])
        spec = {"restartPolicy": "Never", "serviceAccountName": "default", "nodeName": "node-%d" % (n % 40),
                "schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
                "securityContext": {}, "priority": 0, "enableServiceLinks": True,
                "tolerations": [{"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}],
                "volumes": [{"name": "default-token-x2x7q", "secret": {"defaultMode": 420, "secretName": "default-token-x2x7q"}}]}
        st = {"phase": "Running", "hostIP": "10.0.0.%d" % (n % 250), "podIP": "10.1.%d.%d" % (n % 250, k),
              "qosClass": "Burstable", "startTime": T0,
              "conditions": [{"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": T0}
                             for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")]}
        if kind == 0:      # hung: the app ended, the proxy runs on
            spec["containers"] = [app, proxy]
            st["containerStatuses"] = [status("app", app["image"], done), status("cloud-sql-proxy", proxy["image"], running)]
        elif kind == 1:    # at risk: both run
            spec["containers"] = [app, proxy]
            st["containerStatuses"] = [status("app", app["image"], running), status("cloud-sql-proxy", proxy["image"], running)]
        elif kind == 2:    # covered: the agent is there
            agent = ctr("rearguard", "registry.example.com/rearguard:0.5.0", None,
                        {"env": [{"name": "REARGUARD_APPS", "value": "1"}, {"name": "REARGUARD_SIDECARS", "value": "cloudsql"}]})
            spec["shareProcessNamespace"] = True
            spec["containers"] = [agent, app, proxy]
            st["containerStatuses"] = [status(c["name"], c["image"], running) for c in spec["containers"]]
        else:              # native: the proxy in initContainers with restartPolicy Always
            proxy["restartPolicy"] = "Always"
            spec["initContainers"] = [proxy]
            spec["containers"] = [app]
            st["initContainerStatuses"] = [status("cloud-sql-proxy", proxy["image"], running)]
            st["containerStatuses"] = [status("app", app["image"], running)]
        items.append({"apiVersion": "v1", "kind": "Pod", "metadata": meta(name, ns, job), "spec": spec, "status": st})
for n in range(nss):
    ns = "team-%03d" % n
    for k in range(per):
        job = "nightly-%d" % k
        items.append({"apiVersion": "batch/v1", "kind": "Job",
                      "metadata": {"name": job, "namespace": ns, "uid": "6f1d8a52-0c55-4a0b-9a3e-5a1c3f0b2d11"},
                      "spec": {"backoffLimit": 6, "completions": 1, "parallelism": 1,
                               "template": {"metadata": {"labels": {"job-name": job}},
                                            "spec": {"restartPolicy": "Never", "containers": [
                                                {"name": "app", "image": "registry.example.com/batch/app:1.4"},
                                                {"name": "cloud-sql-proxy", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0"}]}}},
                      "status": {"active": 1, "startTime": T0}})
    items.append({"apiVersion": "batch/v1beta1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": ns},
                  "spec": {"schedule": "0 1 * * *", "jobTemplate": {"spec": {"template": {"spec": {
                      "restartPolicy": "OnFailure", "containers": [
                          {"name": "app", "image": "registry.example.com/batch/app:1.4"},
                          {"name": "cloud-sql-proxy", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0"}]}}}}}})
for n in range(nss):
    labels = {"kubernetes.io/metadata.name": "team-%03d" % n}
    if n % 10 == 0:
        labels["rearguard.io/inject"] = "enabled"
    items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-%03d" % n, "labels": labels},
                  "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
json.dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": "", "selfLink": ""}},
          open(out, "w"), indent=4)
PY
echo "dump: $pods pods, $pods Jobs, $nss CronJobs, $nss Namespaces: $(stat -c %s "$dump") bytes"
best=
for run in 1 2 3; do
	/usr/bin/time -f '%e %M' -o "$dump.time" "$build/rearguard" explain --audit --now 2026-11-29T02:00:00Z "$dump" \
		>"$dump.out" || [ $? = 1 ]
	read -r secs kib < <(tail -n 1 "$dump.time")
	echo "run $run: $secs s, peak RSS $kib KiB"
	if [ -z "$best" ] || awk -v a="$secs" -v b="${best% *}" 'BEGIN { exit !(a < b) }'; then best="$secs $kib"; fi
done
rm -f "$dump.time"
tail -n 3 "$dump.out"
rm -f "$dump.out"
echo "best: ${best% *} s, peak RSS ${best#* } KiB ($(awk -v k="${best#* }" 'BEGIN { printf "%.1f", k / 1024 }') MiB)"
