#!/usr/bin/python3
"""The Kyverno policy of manifests/kyverno/ against `rearguard inject`.

    kyverno.py POLICY REARGUARD CORPUS.yaml...

No Kyverno runs here. This script applies the policy's rules to pods the
way Kyverno documents it: match (kinds, operations, selector,
namespaceSelector), context variables (JMESPath with Kyverno's split and
regex_match, {{ }} substituted first), preconditions, and the mutations
(patchStrategicMerge with +() anchors and lists merged by name,
patchesJson6902 where add also replaces, foreach (either patch) with element and
elementIndex). Rules apply in order, each to the pod the previous ones
made.

For every Job and CronJob in the corpus it builds the pod the Job
controller would create (template labels and annotations, the job-name and
controller-uid labels, an ownerReference to the Job), in a namespace
labelled rearguard.io/inject=enabled, and checks that the policy's pod has
the spec and annotations that `rearguard inject` gives the Job's template,
or is left alone where inject leaves the template alone. Then the cases
only a pod has: no opt-in, a pod of no Job, a mesh that injected its proxy
before Kyverno ran. And every image and container name by which a row of
the preset table (`rearguard presets`) is known to inject, in a Job of
its own: a row that inject knows and the policy does not fails, unless
NOT_IN_POLICY says why the policy leaves it to inject. Prints TAP.
"""
import copy
import json
import re
import subprocess
import sys

import jmespath
import yaml
from jmespath import functions

OPT_IN = {"rearguard.io/inject": "enabled"}


class KyvernoFunctions(functions.Functions):
    """The Kyverno JMESPath functions the policy uses, as Kyverno documents them."""

    @functions.signature({"types": ["string"]}, {"types": ["string"]})
    def _func_split(self, s, sep):
        return s.split(sep)

    @functions.signature({"types": ["string"]}, {"types": ["string", "number"]})
    def _func_regex_match(self, pattern, value):
        return re.search(pattern, str(value)) is not None


OPTIONS = jmespath.Options(custom_functions=KyvernoFunctions())
VAR = re.compile(r"\{\{\s*(.*?)\s*\}\}")


def search(expr, ctx):
    return jmespath.search(expr, ctx, options=OPTIONS)


def substitute_text(text, ctx):
    """{{ EXPR }} inside a string: the value's text (JSON for non-strings)."""
    def one(m):
        v = search(m.group(1), ctx)
        return v if isinstance(v, str) else json.dumps(v)
    return VAR.sub(one, text)


def substitute(value, ctx):
    """Variables in a patch or a precondition: a string that is one variable keeps its type."""
    if isinstance(value, str):
        m = VAR.fullmatch(value.strip())
        if m:
            return search(m.group(1), ctx)
        return substitute_text(value, ctx)
    if isinstance(value, list):
        return [substitute(v, ctx) for v in value]
    if isinstance(value, dict):
        return {substitute(k, ctx): substitute(v, ctx) for k, v in value.items()}
    return value


def labels_match(selector, labels):
    return all((labels or {}).get(k) == v for k, v in (selector.get("matchLabels") or {}).items())


def matches(match, pod, ns_labels):
    for block in match.get("any", []):
        r = block["resources"]
        if pod["kind"] not in r.get("kinds", []) or "CREATE" not in r.get("operations", ["CREATE"]):
            continue
        if "selector" in r and not labels_match(r["selector"], pod["metadata"].get("labels")):
            continue
        if "namespaceSelector" in r and not labels_match(r["namespaceSelector"], ns_labels):
            continue
        return True
    return False


def as_number(v):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else float(str(v))


def condition(c, ctx):
    key = substitute(c["key"], ctx)
    value = substitute(c.get("value"), ctx)
    op = c["operator"]
    if op in ("Equals", "NotEquals"):
        same = key == value or (not isinstance(key, (list, dict)) and not isinstance(value, (list, dict))
                                and str(key).lower() == str(value).lower() and isinstance(key, bool) != isinstance(value, str))
        if isinstance(key, str) and isinstance(value, str):
            same = key == value
        return same if op == "Equals" else not same
    if op == "GreaterThan":
        return as_number(key) > as_number(value)
    if op == "LessThan":
        return as_number(key) < as_number(value)
    if op == "AnyIn":
        return (key if isinstance(key, list) else [key])[0] in value or any(k in value for k in (key if isinstance(key, list) else [key]))
    raise SystemExit("kyverno.py: operator %s is not simulated" % op)


def preconditions(pre, ctx):
    if not pre:
        return True
    if "all" in pre and not all(condition(c, ctx) for c in pre["all"]):
        return False
    if "any" in pre and not any(condition(c, ctx) for c in pre["any"]):
        return False
    return True


def smp(target, patch):
    """Strategic merge: maps merge; +(key) adds only when absent; lists of named maps merge by name."""
    for k, v in patch.items():
        if k.startswith("+(") and k.endswith(")"):
            k = k[2:-1]
            if k not in target:
                target[k] = copy.deepcopy(v)
            continue
        if isinstance(v, dict) and isinstance(target.get(k), dict):
            smp(target[k], v)
        elif isinstance(v, list) and isinstance(target.get(k), list) and all(isinstance(i, dict) and "name" in i for i in v):
            for item in v:
                same = [t for t in target[k] if isinstance(t, dict) and t.get("name") == item["name"]]
                if same:
                    smp(same[0], item)
                else:
                    target[k].append(copy.deepcopy(item))
        elif isinstance(v, dict) and target.get(k) is None:
            target[k] = {}
            smp(target[k], v)
        else:
            target[k] = copy.deepcopy(v)


def json_patch(doc, ops):
    for op in ops:
        if op["op"] not in ("add", "replace"):
            raise SystemExit("kyverno.py: op %s is not simulated" % op["op"])
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent = doc
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        if isinstance(parent, list):
            if last == "-":
                parent.append(copy.deepcopy(op["value"]))
            else:
                parent.insert(int(last), copy.deepcopy(op["value"]))
        else:
            parent[last] = copy.deepcopy(op["value"])


def context_for(rule, pod, ns):
    ctx = {"request": {"object": pod, "operation": "CREATE", "namespace": ns}}
    for entry in rule.get("context", []):
        expr = substitute_text(entry["variable"]["jmesPath"], ctx)
        ctx[entry["name"]] = search(expr, ctx)
    return ctx


def apply_policy(policy, pod, ns_labels, ns="default"):
    pod = copy.deepcopy(pod)
    for rule in policy["spec"]["rules"]:
        if not matches(rule["match"], pod, ns_labels):
            continue
        ctx = context_for(rule, pod, ns)
        if not preconditions(rule.get("preconditions"), ctx):
            continue
        m = rule["mutate"]
        if "patchStrategicMerge" in m:
            smp(pod, substitute(m["patchStrategicMerge"], ctx))
        if "patchesJson6902" in m:
            json_patch(pod, yaml.safe_load(substitute_text(m["patchesJson6902"], ctx)))
        for fe in m.get("foreach", []):
            ctx = context_for(rule, pod, ns)
            for i, element in enumerate(search(fe["list"], ctx) or []):
                ctx["element"], ctx["elementIndex"] = element, i
                if not preconditions(fe.get("preconditions"), ctx):
                    continue
                if "patchStrategicMerge" in fe:
                    smp(pod, substitute(fe["patchStrategicMerge"], ctx))
                if "patchesJson6902" in fe:
                    json_patch(pod, yaml.safe_load(substitute_text(fe["patchesJson6902"], ctx)))
    return pod


def template_of(obj):
    if obj.get("kind") == "Job":
        return obj["spec"]["template"]
    return obj["spec"]["jobTemplate"]["spec"]["template"]


def no_nulls(v):
    """What the API server keeps of a value: a null field is no field (Helm renders empty lists as null)."""
    if isinstance(v, dict):
        return {k: no_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [no_nulls(x) for x in v]
    return v


def pod_of(job, template):
    """The pod the Job controller creates from the template."""
    template = no_nulls(template)
    name = job["metadata"].get("name", "job")
    meta = copy.deepcopy(template.get("metadata") or {})
    labels = dict(meta.get("labels") or {})
    labels.update({"batch.kubernetes.io/job-name": name, "job-name": name,
                   "batch.kubernetes.io/controller-uid": "0000-1111", "controller-uid": "0000-1111"})
    pod_meta = {"generateName": name + "-", "namespace": "default", "labels": labels,
                "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": name, "uid": "0000-1111",
                                     "controller": True, "blockOwnerDeletion": True}]}
    if meta.get("annotations") is not None:
        pod_meta["annotations"] = meta["annotations"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": copy.deepcopy(template["spec"])}


class Tap:
    def __init__(self):
        self.n = self.failed = 0

    def ok(self, cond, what, detail=None):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, what))
        if not cond:
            self.failed += 1
            if detail:
                for line in detail.splitlines()[:40]:
                    print("#   " + line)


def inject(binary, obj):
    r = subprocess.run([binary, "inject", "-"], input=yaml.safe_dump(obj, sort_keys=False), capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None, r.stderr
    return yaml.safe_load(r.stdout), r.stderr


def diff(a, b):
    return "policy:\n%s\ninject:\n%s" % (yaml.safe_dump(a, sort_keys=True), yaml.safe_dump(b, sort_keys=True))


def main():
    policy_path, binary, corpus = sys.argv[1], sys.argv[2], sys.argv[3:]
    policy = yaml.safe_load(open(policy_path))
    tap = Tap()
    tap.ok(policy["kind"] == "ClusterPolicy" and all("mutate" in r for r in policy["spec"]["rules"]),
           "the policy is a ClusterPolicy of mutate rules")
    jobs = []
    for path in corpus:
        for doc in yaml.safe_load_all(open(path)):
            items = doc.get("items", []) if isinstance(doc, dict) and doc.get("kind") == "List" else [doc]
            for obj in items:
                if isinstance(obj, dict) and obj.get("kind") in ("Job", "CronJob") and \
                        str(obj.get("apiVersion", "")).startswith("batch/"):
                    try:
                        template_of(obj)["spec"]["containers"]
                    except (KeyError, TypeError):
                        continue
                    jobs.append((path, obj))
    changed = 0
    for path, job in jobs:
        what = "%s: %s %s" % (path.split("/")[-1], job["kind"], job["metadata"].get("name"))
        injected, err = inject(binary, job)
        if injected is None:
            tap.ok(False, what + ": inject runs", err)
            continue
        want = no_nulls(template_of(injected))
        got = apply_policy(policy, pod_of(job, template_of(job)), OPT_IN)
        tap.ok(got["spec"] == want["spec"], what + ": the policy's pod spec is inject's", diff(got["spec"], want["spec"]))
        want_ann = (want.get("metadata") or {}).get("annotations") or {}
        tap.ok((got["metadata"].get("annotations") or {}) == want_ann, what + ": and so are its annotations",
               diff(got["metadata"].get("annotations"), want_ann))
        if want["spec"] != no_nulls(template_of(job)["spec"]):
            changed += 1
    tap.ok(changed >= 5, "the corpus has Jobs both policies change (%d of %d)" % (changed, len(jobs)))

    # What only a pod has.
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "m"},
           "spec": {"template": {"metadata": {"labels": {"sidecar.istio.io/inject": "true"}},
                                 "spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "migrate", "image": "example.com/m:1"}]}}}}
    injected, _ = inject(binary, job)
    want = template_of(injected)["spec"]
    pod = pod_of(job, template_of(job))
    tap.ok(apply_policy(policy, pod, {}) == pod, "no opt-in on the namespace or the pod: left alone")
    labelled = copy.deepcopy(pod)
    labelled["metadata"]["labels"].update(OPT_IN)
    tap.ok(apply_policy(policy, labelled, {})["spec"] == want, "the pod template's label opts in")
    orphan = copy.deepcopy(pod)
    del orphan["metadata"]["ownerReferences"]
    tap.ok(apply_policy(policy, orphan, OPT_IN) == orphan, "a pod of no Job: left alone")
    opted_out = copy.deepcopy(pod)
    opted_out["metadata"]["labels"]["rearguard.io/inject"] = "disabled"
    tap.ok(apply_policy(policy, opted_out, OPT_IN) == opted_out, "rearguard.io/inject=disabled: left alone")
    once = apply_policy(policy, pod, OPT_IN)
    tap.ok(apply_policy(policy, once, OPT_IN) == once, "a pod that has the agent: left alone")
    # Istio's webhook may run first: its proxy is then in the pod, and is no app.
    meshed = copy.deepcopy(pod)
    meshed["spec"]["containers"].append({"name": "istio-proxy", "image": "docker.io/istio/proxyv2:1.22.3",
                                         "args": ["proxy", "sidecar"]})
    got = apply_policy(policy, meshed, OPT_IN)
    tap.ok(got["spec"]["containers"][0] == want["containers"][0],
           "the mesh's proxy already in the pod: the same agent (REARGUARD_SIDECARS=istio, REARGUARD_APPS=1)",
           diff(got["spec"]["containers"][0], want["containers"][0]))
    presets(policy, binary, tap)
    print("1..%d" % tap.n)
    sys.exit(1 if tap.failed else 0)


# What the policy leaves to inject among the ways inject knows a preset's
# container (docs/inject.md, Kyverno), each with why.
NOT_IN_POLICY = {
    ("vault", "image", "vault"): "the policy reads no command line, and the Vault image runs one-shots "
                                 "(vault kv get) as often as the agent",
}


def preset_jobs(table):
    """For each preset row, each of its images and container names as a Job's container beside an app."""
    plain = next(r for r in table if r["containers"] and not r["helper"])
    for row in table:
        serve = row["processes"][0]["serve"] if row["processes"] else []
        ways = [("image", i, {"name": "sidecar", "image": "registry.example.com/%s:1" % i}) for i in row["images"]]
        ways += [("name", n, {"name": n, "image": "registry.example.com/in-house:1"}) for n in row["containers"]]
        for how, what, ctr in ways:
            if how == "image" and serve:
                ctr["args"] = [serve[0]]  # the subcommand that runs long: no args is a one-shot
            ctrs = [{"name": "app", "image": "registry.example.com/app:1", "command": ["/app"]}, ctr]
            if row["helper"]:
                # A helper alone is nothing to stop: inject leaves such a template unchanged.
                ctrs.append({"name": plain["containers"][0], "image": "registry.example.com/in-house:1"})
            job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "preset-%s" % row["name"]},
                   "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": ctrs}}}}
            yield row, how, what, job


def presets(policy, binary, tap):
    """Every preset row inject knows by an image or a container name, the policy knows alike."""
    out = subprocess.run([binary, "presets"], capture_output=True, text=True, check=True).stdout
    table = [json.loads(line) for line in out.splitlines()]
    used = set()
    for row, how, what, job in preset_jobs(table):
        name = "the preset table: %s's %s %s" % (row["name"], how, what)
        injected, err = inject(binary, job)
        if injected is None:
            tap.ok(False, name + ": inject runs", err)
            continue
        want = no_nulls(template_of(injected))
        env = {e["name"]: e.get("value") for c in want["spec"]["containers"] if c["name"] == "rearguard"
               for e in c.get("env", [])}
        specs = (env.get("REARGUARD_SIDECARS") or "").split(";")
        tap.ok(any(s.split(",")[0] == row["name"] for s in specs),
               name + ": inject takes it for the preset", yaml.safe_dump(want["spec"], sort_keys=True))
        why = NOT_IN_POLICY.get((row["name"], how, what))
        if why:
            used.add((row["name"], how, what))
            print("# %s: not the policy's: %s" % (name, why))
            continue
        got = apply_policy(policy, pod_of(job, template_of(job)), OPT_IN)
        tap.ok(got["spec"] == want["spec"], name + ": the policy's pod spec is inject's",
               diff(got["spec"], want["spec"]))
        want_ann = (want.get("metadata") or {}).get("annotations") or {}
        tap.ok((got["metadata"].get("annotations") or {}) == want_ann, name + ": and so are its annotations",
               diff(got["metadata"].get("annotations"), want_ann))
    # A helper beside apps only: nothing to stop, left alone by both.
    for row in (r for r in table if r["helper"] and r["containers"]):
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "helper-%s" % row["name"]},
               "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                   {"name": "app", "image": "registry.example.com/app:1", "command": ["/app"]},
                   {"name": row["containers"][0], "image": "registry.example.com/in-house:1"}]}}}}
        injected, err = inject(binary, job)
        pod = pod_of(job, template_of(job))
        tap.ok(injected is not None and template_of(injected) == template_of(job) and
               apply_policy(policy, pod, OPT_IN) == pod,
               "the preset table: %s beside an app only: left alone by inject and the policy" % row["name"], err)
    stale = sorted(set(NOT_IN_POLICY) - used)
    tap.ok(not stale, "every exception of NOT_IN_POLICY is a row's image or name", repr(stale))


if __name__ == "__main__":
    main()
