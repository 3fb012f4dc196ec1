#!/bin/bash
# Every file in manifests/ parses as YAML, and every agent container in it
# follows the rules users copy: non-root uid 65532, read-only root, no
# privilege escalation, all capabilities dropped (KILL the only one added
# back), small resource requests; the pod shares its PID namespace unless
# the agent runs as a wrapper; and the binary accepts the agent's options.
set -eu
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "SKIP: python3-yaml not installed"; exit 77; }

exec /usr/bin/python3 - "$RG_SRCDIR/manifests" "$RG_BUILDDIR/rearguard" <<'PY'
import glob, os, subprocess, sys
import yaml

root, binary = sys.argv[1], sys.argv[2]
problems, checked_agents = [], 0
SUBCOMMANDS = ("run", "wait", "drain", "install", "version")

def problem(where, msg):
    problems.append("%s: %s" % (where, msg))

def templates(doc):
    kind = doc.get("kind")
    spec = doc.get("spec") or {}
    if kind == "Job":
        yield spec["template"]["spec"]
    elif kind == "CronJob":
        yield spec["jobTemplate"]["spec"]["template"]["spec"]
    elif kind == "Pod":
        yield spec
    elif kind is None and "template" in spec:  # a strategic-merge patch of a Job
        yield spec["template"]["spec"]

def is_agent_image(c):
    return c.get("image", "").split("@")[0].rsplit(":", 1)[0].endswith("/rearguard")

def command_of(c):
    return list(c.get("command", [])) + list(c.get("args", []))

def check_agent(where, c, shared_pid):
    global checked_agents
    checked_agents += 1
    sc = c.get("securityContext") or {}
    if sc.get("runAsNonRoot") is not True:
        problem(where, "runAsNonRoot is not true")
    if sc.get("runAsUser") != 65532:
        problem(where, "runAsUser is %r, not 65532" % sc.get("runAsUser"))
    if sc.get("readOnlyRootFilesystem") is not True:
        problem(where, "readOnlyRootFilesystem is not true")
    if sc.get("allowPrivilegeEscalation") is not False:
        problem(where, "allowPrivilegeEscalation is not false")
    caps = sc.get("capabilities") or {}
    if caps.get("drop") != ["ALL"]:
        problem(where, "capabilities do not drop ALL")
    if set(caps.get("add", [])) - {"KILL"}:
        problem(where, "adds capabilities other than KILL: %s" % caps["add"])
    req = (c.get("resources") or {}).get("requests") or {}
    if "cpu" not in req or "memory" not in req:
        problem(where, "no cpu and memory requests")
    args = command_of(c)
    if args and args[0].endswith("rearguard"):
        args = args[1:]
    if args and args[0] in SUBCOMMANDS:
        return
    if not shared_pid:
        problem(where, "the agent runs without shareProcessNamespace: true")
    env = {"PATH": "/usr/bin:/bin"}
    for e in c.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
    r = subprocess.run([binary] + args + ["--help"], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        problem(where, "rearguard rejects its options: %s" % r.stderr.strip())

files = sorted(glob.glob(os.path.join(root, "**", "*.yaml"), recursive=True))
if not files:
    problem(root, "no manifests")
for path in files:
    rel = os.path.relpath(path, os.path.dirname(root))
    try:
        docs = [d for d in yaml.safe_load_all(open(path)) if d is not None]
    except yaml.YAMLError as e:
        problem(rel, "does not parse: %s" % str(e).replace("\n", " "))
        continue
    if not docs:
        problem(rel, "empty")
    for doc in docs:
        # A kustomization's JSON 6902 patch: a list of operations, no object.
        if isinstance(doc, list) and doc and all(isinstance(o, dict) and "op" in o and "path" in o for o in doc):
            continue
        if not isinstance(doc, dict) or "kind" not in doc and "apiVersion" not in doc and "spec" not in doc:
            problem(rel, "a document without kind")
            continue
        for pod in templates(doc):
            shared = pod.get("shareProcessNamespace") is True
            for c in pod.get("initContainers", []) + pod.get("containers", []):
                if is_agent_image(c):
                    check_agent("%s: container %s" % (rel, c["name"]), c, shared)
    print("ok: %s" % rel)
if checked_agents == 0:
    problem(root, "no agent container found in any manifest")
for p in problems:
    print("FAIL: %s" % p)
print("%d files, %d agent containers, %d problems" % (len(files), checked_agents, len(problems)))
sys.exit(1 if problems else 0)
PY
