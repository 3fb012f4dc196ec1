#!/usr/bin/python3
"""The golden pods of tests/review/pods/: each AdmissionReview answered by
the webhook's decision (tests/helpers/review), its JSON Patch applied, and
every line of its verdict checked (tests/review/pods/README says what each
line means). TAP on standard output."""
import base64
import copy
import json
import os
import subprocess
import sys

HELPER, DIR = sys.argv[1], sys.argv[2]
IMAGE = "registry.example.com/rearguard:0.5.0"
# What a preset's entry means where it does not give a key.
DEFAULTS = {("linkerd", "stop"): "http://127.0.0.1:4191/shutdown",
            ("cloudsql", "stop"): "http://127.0.0.1:9091/quitquitquit",
            ("cloudsql", "ready"): "http://127.0.0.1:9090/startup",
            ("cloudsql-v1", "stop"): "signal:TERM",
            ("consul", "stop"): "http://127.0.0.1:20600/graceful_shutdown",
            ("istio", "stop"): "http://127.0.0.1:15020/quitquitquit",
            ("vault", "stop"): "http://127.0.0.1:8200/agent/v1/quit"}


def apply(doc, ops):
    """RFC 6902 add and replace: all the webhook writes."""
    for op in ops:
        if op["op"] not in ("add", "replace"):
            raise ValueError("op %s" % op["op"])
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        target = doc
        for p in parts[:-1]:
            target = target[int(p)] if isinstance(target, list) else target[p]
        last = parts[-1]
        if isinstance(target, list):
            if op["op"] == "add":
                target.insert(len(target) if last == "-" else int(last), op["value"])
            else:
                target[int(last)] = op["value"]
        else:
            target[last] = op["value"]
    return doc


def container(pod, name):
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") == name:
            return c
    return None


def env_of(c):
    return {e["name"]: e.get("value") for e in (c or {}).get("env") or [] if "name" in e}


def argv_of(c):
    return list((c or {}).get("command") or []) + list((c or {}).get("args") or [])


def flag_in(word, flag):
    name = flag.lstrip("-")
    w = word.split("=", 1)
    return w[0] in ("-" + name, "--" + name) and (len(w) == 1 or w[1] in ("true", "1", "t", "T", "TRUE", "True"))


def has_flag(argv, flag):
    return any(flag_in(w, flag) for w in argv)


def flag_after_program(c, flag):
    """The flag follows the program's own word (the first that is no wrapper's); without a
    command the image's entrypoint is the program, and every argument is its."""
    if c is None:
        return False
    argv = argv_of(c)
    if not c.get("command"):
        return any(flag_in(w, flag) for w in argv)
    programs = ("cloud-sql-proxy", "cloud_sql_proxy")
    at = next((i for i, w in enumerate(argv) if os.path.basename(w) in programs), None)
    return at is not None and any(flag_in(w, flag) for w in argv[at + 1:])


def specs_of(pod):
    agent = container(pod, "rearguard")
    if agent is None:
        return None, {}, {}
    env = env_of(agent)
    order, specs = [], {}
    for entry in (env.get("REARGUARD_SIDECARS") or "").split(";"):
        if not entry:
            continue
        words = entry.split(",")
        order.append(words[0])
        specs[words[0]] = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    return order, specs, env


def main():
    names = sorted(f[:-len(".verdict")] for f in os.listdir(DIR) if f.endswith(".verdict"))
    n = failed = 0
    for name in names:
        path = os.path.join(DIR, name + ".json")
        verdict = open(os.path.join(DIR, name + ".verdict")).read().splitlines()
        route = ["--services"] if "route: services" in verdict else []
        out = subprocess.run([HELPER, "--image", IMAGE] + route + [path], capture_output=True, text=True, check=False)
        if out.returncode != 0:
            n += 1
            failed += 1
            print("not ok %d - %s: answered (%s)" % (n, name, out.stderr.strip()))
            continue
        resp = json.loads(out.stdout)["response"]
        sent = json.load(open(path))["request"]["object"]
        pod = copy.deepcopy(sent)
        if resp.get("patch"):
            apply(pod, json.loads(base64.b64decode(resp["patch"])))
        outcome = "patched" if resp.get("patch") else "unchanged"
        warnings = resp.get("warnings") or []
        order, specs, env = specs_of(pod)
        for line in verdict:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            kind, _, rest = line.partition(" ")
            if kind == "route:":
                good = rest == "services"
            elif kind == "outcome:":
                good = outcome == rest
            elif kind == "agent:":
                good = (order is not None) == (rest == "yes")
            elif kind == "sidecars:":
                good = order == rest.split()
            elif kind == "apps:":
                good = env.get("REARGUARD_APPS") == rest
            elif kind == "spec":
                preset, kv = rest.split(" ", 1)
                k, v = kv.split("=", 1)
                got = specs.get(preset, {}).get(k)
                if got is None and preset in specs:
                    got = DEFAULTS.get((preset, k))
                good = got == v
            elif kind == "env":
                c, kv = rest.split(" ", 1)
                k, v = kv.split("=", 1)
                good = container(pod, c) is not None and env_of(container(pod, c)).get(k) == v
            elif kind == "no-env":
                c, k = rest.split(" ", 1)
                good = container(pod, c) is not None and k not in env_of(container(pod, c))
            elif kind == "flag":
                c, f = rest.split(" ", 1)
                good = flag_after_program(container(pod, c), f)
            elif kind == "no-flag":
                c, f = rest.split(" ", 1)
                good = container(pod, c) is not None and (has_flag(argv_of(container(sent, c)), f) or
                                                          not has_flag(argv_of(container(pod, c)), f))
            elif kind == "argv-unchanged":
                good = container(pod, rest) is not None and \
                    (container(pod, rest).get("command"), container(pod, rest).get("args")) == \
                    (container(sent, rest).get("command"), container(sent, rest).get("args"))
            elif kind == "annotation":
                k, v = rest.split("=", 1)
                good = ((pod.get("metadata") or {}).get("annotations") or {}).get(k) == v
            elif kind == "before":
                a, b = rest.split()
                names_after = [c.get("name") for c in pod["spec"]["containers"]]
                good = a in names_after and b in names_after and names_after.index(a) < names_after.index(b)
            elif kind == "prestop":
                c, words = rest.split(" ", 1)
                hook = ((container(pod, c) or {}).get("lifecycle") or {}).get("preStop") or {}
                good = " ".join((hook.get("exec") or {}).get("command") or []).startswith(words)
            elif kind == "init-container":
                good = rest in [c.get("name") for c in pod["spec"].get("initContainers") or []]
            elif kind == "warning-has":
                good = any(rest.lower() in w.lower() for w in warnings)
            elif kind == "no-warning":
                good = not warnings
            else:
                good = False
            n += 1
            print("%s %d - %s: %s" % ("ok" if good else "not ok", n, name, line))
            if not good:
                failed += 1
                print("#   outcome %s, sidecars %s, warnings %s" % (outcome, order, warnings))
        for w in warnings:
            n += 1
            failed += len(w.encode()) > 256
            print("%s %d - %s: a warning of at most 256 bytes (%d)" % ("ok" if len(w.encode()) <= 256 else "not ok",
                                                                        n, name, len(w.encode())))
    print("1..%d" % n)
    sys.exit(1 if failed or not names else 0)


main()
