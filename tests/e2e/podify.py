#!/usr/bin/python3
"""Turns a manifest from manifests/ into a Pod that `podman kube play` runs,
or (--job) into a Job for a real cluster (tests/cluster).

    podify.py MANIFEST --name POD --image REPO=LOCAL... [options] > pod.yaml
    podify.py MANIFEST --job --name JOB --image REPO=LOCAL... [options] > job.yaml

The pod template of the first Job, CronJob or Pod in MANIFEST becomes a Pod
named POD, as the Job controller would create it. Every image is replaced by
a local one, matched by repository (the image without tag or digest); an
image left without a replacement is an error, so a manifest cannot silently
pull from a registry. emptyDir volumes are renamed POD-NAME, because podman
makes named volumes of them and parallel tests must not share one.

Options (CTR is a container name; JSON values are JSON):
  --command CTR=JSON      replace the container's command (and drop its args)
  --args CTR=JSON         replace the container's args
  --tail CTR=JSON         replace what follows the first "--" of the container's
                          command and args (the app that `rearguard run` runs)
  --env CTR=NAME=VALUE    set an environment variable
  --inject JSON           add a container, first in the list or, with
                          "position": "last", last (what a mesh's injector does)
  --scratch PATH          mount one more emptyDir at PATH in every container:
                          the test's own shared space (markers, events)
  --kubelet FILE          write what podman does not do itself to FILE (JSON):
                          the start order ("init", "containers") and the
                          lifecycle hooks' commands ("postStart", "preStop")
  --job                   write a batch/v1 Job named NAME instead of a Pod: the
                          Job's own spec is kept (a CronJob's jobTemplate
                          becomes the Job), the volumes keep their names (each
                          test has its own namespace)
  --spec KEY=JSON         with --job, set a field of the Job's spec
                          (backoffLimit=0)
  --restart-policy POLICY set the pod template's restartPolicy
  --order CTR,CTR...      put the containers in this order (every one named)
"""
import argparse
import copy
import json
import sys

import yaml


def fail(msg):
    sys.stderr.write("podify: %s\n" % msg)
    sys.exit(2)


def repository(image):
    image = image.split("@", 1)[0]
    slash = image.rfind("/")
    colon = image.rfind(":")
    return image[:colon] if colon > slash else image


def pod_template(docs, path):
    """The first Job, CronJob or Pod: its pod template's metadata and spec,
    and the Job spec around it (None for a Pod)."""
    for doc in docs:
        kind = (doc or {}).get("kind")
        if kind == "Pod":
            return doc.get("metadata", {}), doc["spec"], None
        if kind == "Job":
            t = doc["spec"]["template"]
            return t.get("metadata", {}), t["spec"], doc["spec"]
        if kind == "CronJob":
            t = doc["spec"]["jobTemplate"]["spec"]["template"]
            return t.get("metadata", {}), t["spec"], doc["spec"]["jobTemplate"]["spec"]
    fail("%s has no Job, CronJob or Pod" % path)


def split_pair(text, what):
    if "=" not in text:
        fail("%s: want NAME=VALUE, got %r" % (what, text))
    return text.split("=", 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--name", required=True)
    ap.add_argument("--image", action="append", default=[])
    ap.add_argument("--command", action="append", default=[])
    ap.add_argument("--args", action="append", default=[])
    ap.add_argument("--tail", action="append", default=[])
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--inject", action="append", default=[])
    ap.add_argument("--scratch")
    ap.add_argument("--kubelet")
    ap.add_argument("--job", action="store_true")
    ap.add_argument("--spec", action="append", default=[])
    ap.add_argument("--restart-policy")
    ap.add_argument("--order")
    o = ap.parse_args()

    with open(o.manifest) as f:
        meta, spec, job_spec = pod_template(list(yaml.safe_load_all(f)), o.manifest)
    spec = copy.deepcopy(spec)
    if o.restart_policy:
        spec["restartPolicy"] = o.restart_policy

    for text in o.inject:
        c = json.loads(text)
        last = c.pop("position", "first") == "last"
        spec["containers"] = spec["containers"] + [c] if last else [c] + spec["containers"]

    if o.order:
        names = o.order.split(",")
        by = {c["name"]: c for c in spec["containers"]}
        if sorted(names) != sorted(by):
            fail("--order %s: name each of %s once" % (o.order, ", ".join(by)))
        spec["containers"] = [by[n] for n in names]

    all_ctrs = spec.get("initContainers", []) + spec["containers"]
    by_name = {c["name"]: c for c in all_ctrs}

    def ctr(name, what):
        if name not in by_name:
            fail("%s: no container %r (have %s)" % (what, name, ", ".join(by_name)))
        return by_name[name]

    images = dict(split_pair(t, "--image") for t in o.image)
    for c in all_ctrs:
        repo = repository(c["image"])
        if repo not in images:
            fail("container %r: no local image for %s" % (c["name"], c["image"]))
        c["image"] = images[repo]
        c["imagePullPolicy"] = "Never"
    for t in o.command:
        name, value = split_pair(t, "--command")
        c = ctr(name, "--command")
        c["command"] = json.loads(value)
        c.pop("args", None)
    for t in o.args:
        name, value = split_pair(t, "--args")
        ctr(name, "--args")["args"] = json.loads(value)
    for t in o.tail:
        name, value = split_pair(t, "--tail")
        c = ctr(name, "--tail")
        argv = list(c.get("command", [])) + list(c.get("args", []))
        if "--" not in argv:
            fail("--tail: container %r has no \"--\" in its command" % name)
        c["command"] = argv[:argv.index("--") + 1] + json.loads(value)
        c.pop("args", None)
    for t in o.env:
        name, value = split_pair(t, "--env")
        key, value = split_pair(value, "--env")
        env = ctr(name, "--env").setdefault("env", [])
        env[:] = [e for e in env if e["name"] != key] + [{"name": key, "value": value}]

    renamed = {}
    for v in spec.get("volumes", []):
        if "emptyDir" in v and not o.job:
            renamed[v["name"]] = "%s-%s" % (o.name, v["name"])
            v["name"] = renamed[v["name"]]
    if o.scratch:
        scratch = "e2e" if o.job else "%s-e2e" % o.name
        spec.setdefault("volumes", []).append({"name": scratch, "emptyDir": {}})
    for c in all_ctrs:
        for m in c.get("volumeMounts", []):
            m["name"] = renamed.get(m["name"], m["name"])
        if o.scratch:
            c.setdefault("volumeMounts", []).append({"name": scratch, "mountPath": o.scratch})

    if o.kubelet:
        def hooks(kind):
            return {c["name"]: c["lifecycle"][kind]["exec"]["command"] for c in spec["containers"]
                    if "exec" in c.get("lifecycle", {}).get(kind, {})}
        with open(o.kubelet, "w") as f:
            json.dump({"init": [c["name"] for c in spec.get("initContainers", [])],
                       "containers": [c["name"] for c in spec["containers"]],
                       "postStart": hooks("postStart"), "preStop": hooks("preStop")}, f)

    if o.job:
        job_spec = copy.deepcopy(job_spec or {})
        for t in o.spec:
            key, value = split_pair(t, "--spec")
            job_spec[key] = json.loads(value)
        job_spec["template"] = {"metadata": {k: v for k, v in meta.items() if k in ("labels", "annotations")},
                                "spec": spec}
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": o.name}, "spec": job_spec}
        yaml.safe_dump(job, sys.stdout, sort_keys=False)
        return

    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": o.name, "labels": meta.get("labels", {}), "annotations": meta.get("annotations", {})},
        "spec": spec,
    }
    yaml.safe_dump(pod, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
