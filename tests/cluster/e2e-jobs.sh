#!/bin/bash
# Kubernetes' own Job specs judge rearguard: "[sig-apps] Job" of test/e2e
# (1.20, tools/cluster e2e) runs in the e2e framework's plain namespaces,
# then in namespaces where a mesh's injector (the stand-in,
# tests/cluster/mesh-webhook.py) adds a plain, never-ending istio-proxy to
# every pod and rearguard's webhook stands beside it (bench/e2e-jobs.sh
# plain rearguard). Every spec the suite passes in the plain namespaces
# must pass in the others, by the suite's own verdicts; without rearguard
# four of the eight wait out the framework's 15 minutes (docs/deploying.md).
set -uo pipefail
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}" "${RG_BUILDDIR:?}"
out=$RG_BUILDDIR/e2e-jobs
rm -rf "$out/plain" "$out/rearguard"
timeout -k 30 3000 "$RG_SRCDIR/bench/e2e-jobs.sh" plain rearguard
rc=$?
# Skipped as the other cluster tests are (no root, no cluster, no webhook in this build).
[ "$rc" = 77 ] && exit 77
[ "$rc" = 0 ] || { echo "FAIL: e2e-jobs: bench/e2e-jobs.sh exited $rc"; exit 1; }
/usr/bin/python3 - "$out" <<'PY'
import os, sys
out = sys.argv[1]
def verdicts(c):
    f = os.path.join(out, c, "verdicts.tsv")
    if not os.path.exists(f):
        return {}
    return {l.split("\t")[2]: l.split("\t")[0] for l in open(f) if l.strip()}
plain, rg = verdicts("plain"), verdicts("rearguard")
bad = []
if len(plain) < 8:
    bad.append("the plain run has %d specs' verdicts, not the eight Job specs" % len(plain))
for name, v in sorted(plain.items()):
    if v == "passed" and rg.get(name) != "passed":
        bad.append("%s: passed plain, %s with the mesh and rearguard" % (name, rg.get(name, "not run")))
for line in bad:
    print("FAIL: e2e-jobs: " + line)
print("# %d of %d specs passed plain; %d of them passed with the mesh and rearguard"
      % (sum(v == "passed" for v in plain.values()), len(plain),
         sum(v == "passed" and rg.get(n) == "passed" for n, v in plain.items())))
sys.exit(1 if bad else 0)
PY
