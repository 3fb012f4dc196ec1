#!/bin/bash
# What users apply, checked by the real apiserver of Kubernetes 1.20
# (kubectl apply --dry-run=server, nothing is created): every file under
# manifests/ (a kustomization through `kubectl kustomize`), every complete
# object (apiVersion and kind) in a YAML block of README.md and docs/*.md,
# and `rearguard inject`'s output for every case of tests/inject/cases that
# succeeds. inject must keep each object's apiVersion (a batch/v1beta1
# CronJob stays one).
#
# What 1.20 rejects is listed below with the reason it must give (a regular
# expression for each error line): anything else rejected, an expected
# rejection that does not come, or another reason, fails the test. The
# manifests are for 1.25 and later (tests/docs/apis.sh holds them to that);
# here, what 1.20 lacks is rejected for that reason and no other, and
# manifests/webhook/kubernetes-1.20, the webhook's server for 1.20, is
# accepted whole.
. "$RG_SRCDIR/tests/cluster/lib.sh"

cluster_up
/usr/bin/python3 - "$RG_SRCDIR" "$RG_BUILDDIR/rearguard" "$CLUSTER" "$NS" "$T" <<'PY' || fail "see above"
import glob, os, re, subprocess, sys
import yaml

src, binary, cluster, ns, tmp = sys.argv[1:]
os.chdir(src)

def no_kind(kind, version):
    return r'unable to recognize .*: no matches for kind "%s" in version "%s"' % (kind, version)

# Rejected by 1.20, each for the reason given.
CRONJOB_V1 = no_kind("CronJob", "batch/v1")  # batch/v1 CronJob: 1.21 and later
NATIVE = r'unknown field "restartPolicy" in io\.k8s\.api\.core\.v1\.Container'  # native sidecars: 1.28
CERT_MANAGER = [no_kind("Issuer", "cert-manager.io/v1"), no_kind("Certificate", "cert-manager.io/v1")]
POLICY_V1 = no_kind("PodDisruptionBudget", "policy/v1")  # policy/v1: 1.21 and later
# kustomize 2.0.3 (kubectl 1.20) reads patches: as patchesStrategicMerge and
# takes no directory in resources:.
KUSTOMIZE_PATCHES = r'cannot unmarshal object into Go struct field Kustomization\.patchesStrategicMerge'
EXPECTED = {
    "manifests/cronjob-istio.yaml": [CRONJOB_V1],
    "manifests/kyverno/rearguard-inject.yaml": [no_kind("ClusterPolicy", "kyverno.io/v1")],  # Kyverno's CRD
    # cert-manager's CRDs.
    "manifests/webhook/cert-manager/certificates.yaml": CERT_MANAGER,
    "manifests/webhook/base/webhook.yaml": [POLICY_V1],
    "kubectl kustomize manifests/webhook/base": [POLICY_V1],
    "kubectl kustomize manifests/webhook": [r"Load from path base failed: 'base' must be a file"],
    "kubectl kustomize manifests/webhook/cert-manager": [KUSTOMIZE_PATCHES],
    "kubectl kustomize manifests/webhook/components/match-conditions": [KUSTOMIZE_PATCHES],
    "kubectl kustomize manifests/webhook/components/host-network": [KUSTOMIZE_PATCHES],
    # A JSON patch of the 1.20 overlay, a list of operations, not an object.
    "manifests/webhook/kubernetes-1.20/pdb-v1beta1.yaml": [r'error validating data: invalid object to validate'],
    # The component's patches are not objects of their own: a Job patch has
    # no restartPolicy (the Job's own manifest has it).
    "manifests/kustomize/rearguard/job.yaml": [r'spec\.template\.spec\.restartPolicy: Required value'],
    "manifests/kustomize/rearguard/cronjob.yaml": [CRONJOB_V1],
    # kubectl 1.20 has kustomize 2.0.3, which has no components (3.7) and
    # reads patches: as patchesStrategicMerge.
    "kubectl kustomize manifests/kustomize/example": [r'json: unknown field "components"'],
    "kubectl kustomize manifests/kustomize/rearguard": [KUSTOMIZE_PATCHES],
    # A kustomize function's configuration, not an object of the apiserver.
    "docs/inject.md: Inject/rearguard": [no_kind("Inject", "rearguard.io/v1")],
    "inject tests/inject/cases/cronjob-linkerd.yaml": [CRONJOB_V1],
    "inject tests/inject/cases/cronjob-v1-uid.yaml": [CRONJOB_V1],
    "inject tests/inject/cases/helm-nulls.yaml": [CRONJOB_V1],
    "inject tests/inject/cases/job-log-shippers.yaml": [CRONJOB_V1],
    # Native sidecars (an init container's restartPolicy) came with 1.28.
    "inject tests/inject/cases/job-native-istio.yaml": [NATIVE],
    # (kubectl's validation of the stream stops there, before the CronJob's version.)
    "inject tests/inject/cases/job-native-cloudsql.yaml": [NATIVE],
    # A nameless container: inject leaves the template alone, with a warning; the apiserver refuses it.
    "inject tests/inject/cases/job-native-nameless.yaml":
        [NATIVE, r'missing required field "name" in io\.k8s\.api\.core\.v1\.Container'],
    # A null restartPolicy is none: inject leaves that Job alone, with a note, as the apiserver refuses it.
    "inject tests/inject/cases/job-scalar-nulls.yaml":
        [r'Job "policy-null" is invalid: spec\.template\.spec\.restartPolicy: Required value'],
    # inject passes a template without containers through, with a warning; the apiserver refuses it.
    "inject tests/inject/cases/no-containers.yaml":
        [r'missing required field "containers" in io\.k8s\.api\.core\.v1\.PodSpec'],
    "inject tests/inject/cases/volcano.yaml": [no_kind("Job", "batch.volcano.sh/v1alpha1")],
    # inject leaves it alone (a native proxy); 1.20 knows no batch/v1 CronJob, so no schema to check it with.
    "inject tests/inject/cases/cronjob-mesh-native.yaml": [CRONJOB_V1],
    "inject tests/inject/cases/job-native-unknown.yaml": [NATIVE],
    # A Job without an apiVersion: inject leaves it alone, with a warning; kubectl refuses it.
    "inject tests/inject/cases/job-no-apiversion.yaml": [r'error validating data: apiVersion not set'],
    "inject tests/inject/cases/workflows.yaml": [
        no_kind("CronWorkflow", "argoproj.io/v1alpha1"), no_kind("TaskRun", "tekton.dev/v1")],
    # Kinds inject passes through, a document that is a list, and a Job
    # without a restartPolicy (inject leaves it alone, with a note).
    "inject tests/inject/cases/notes.yaml": [
        no_kind("Workflow", "argoproj.io/v1alpha1"), no_kind("TaskRun", "tekton.dev/v1"),
        r'error validating data: invalid object to validate',
        r'Job.batch "no-policy" is invalid: spec\.template\.spec\.restartPolicy: Required value'],
    # kubectl's own reader, as with the input: it does not take a %YAML
    # directive, and it reads a stream whose first document is JSON as JSON.
    "inject tests/inject/cases/passthrough.yaml": [r'yaml: line 1: did not find expected <document start>'],
    # inject keeps the JSON document JSON: kubectl then reads the whole stream as JSON.
    "inject tests/inject/cases/styles.yaml": [r"json: line 1: invalid character '-' in numeric literal"],
    "inject tests/inject/cases/resourcelist.yaml": [no_kind("ResourceList", "config.kubernetes.io/v1")],
    # A mirror pod is the kubelet's to create (with spec.nodeName): inject leaves it alone, the apiserver refuses it.
    "inject tests/inject/cases/pod-left-alone.yaml":
        [r'Pod "etcd-node-1" is invalid: .*must set spec\.nodeName if mirror pod annotation is set'],
}

def kubectl(*args, stdin=None):
    p = subprocess.run([cluster, "kubectl", "--namespace", ns] + list(args), input=stdin,
                       capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout + p.stderr

def dry_run(text):
    return kubectl("apply", "--dry-run=server", "-f", "-", stdin=text)

checked, problems = [], []

def judge(label, rc, out):
    expected = EXPECTED.get(label, [])
    # kubectl puts several errors of one stream on a line, as a list.
    errors = [e.strip() for l in out.splitlines() if re.search(r'error|invalid|unable|unknown|forbidden', l, re.I)
              for e in re.split(r'^\[|\]$|, (?=unable to recognize|error validating)', l.strip()) if e.strip()]
    checked.append(label)
    if not expected:
        if rc != 0 or errors:
            problems.append("%s: rejected by 1.20: %s" % (label, "; ".join(errors or out.splitlines()[-3:])))
        else:
            print("# accepted: %s" % label)
        return
    if rc == 0 and not errors:
        problems.append("%s: accepted, but listed as rejected by 1.20" % label)
        return
    for line in errors:
        if not any(re.search(e, line) for e in expected):
            problems.append("%s: rejected for an unlisted reason: %s" % (label, line))
    for e in expected:
        if not any(re.search(e, line) for line in errors):
            problems.append("%s: not rejected for %r: %s" % (label, e, "; ".join(errors)))
    print("# rejected as expected: %s: %s" % (label, "; ".join(errors)))

# manifests/: kustomizations through kubectl kustomize, the other files as they are.
kustomized = set()
for k in sorted(glob.glob("manifests/**/kustomization.yaml", recursive=True)):
    d = os.path.dirname(k)
    kustomized.add(k)
    rc, out = kubectl("kustomize", d)
    label = "kubectl kustomize " + d
    if rc == 0:
        # Checked in the test's namespace: the one the kustomization sets
        # (rearguard-system) is taken out, as kubectl refuses a mismatch.
        docs = [x for x in yaml.safe_load_all(out) if isinstance(x, dict)]
        for x in docs:
            (x.get("metadata") or {}).pop("namespace", None)
        rc, out = dry_run(yaml.safe_dump_all(docs))
    judge(label, rc, out)
for f in sorted(glob.glob("manifests/**/*.yaml", recursive=True)):
    if f not in kustomized:
        judge(f, *dry_run(open(f).read()))

# The docs' YAML blocks that are complete objects.
for f in ["README.md"] + sorted(glob.glob("docs/*.md")):
    text = open(f).read()
    for m in re.finditer(r"```ya?ml\n(.*?)```", text, re.S):
        docs = [d for d in yaml.safe_load_all(m.group(1)) if isinstance(d, dict)]
        if docs and all("apiVersion" in d and "kind" in d for d in docs):
            # Named by what they hold, not by their line, which moves as the text is edited.
            judge("%s: %s" % (f, " ".join("%s/%s" % (d["kind"], (d.get("metadata") or {}).get("name", ""))
                                          for d in docs)), *dry_run(m.group(1)))

# inject's output for each case it accepts, and the apiVersions it kept.
def versions(docs):
    out = []
    for d in docs:
        if isinstance(d, dict):
            out.append((d.get("apiVersion"), d.get("kind")))
            out += [(i.get("apiVersion"), i.get("kind")) for i in d.get("items") or [] if isinstance(i, dict)]
    return out

for case in sorted(glob.glob("tests/inject/cases/*.yaml")):
    base = case[:-5]
    if os.path.exists(base + ".rc") and open(base + ".rc").read().strip() != "0":
        continue
    args = open(base + ".args").read().split("\n") if os.path.exists(base + ".args") else []
    p = subprocess.run([binary, "inject"] + [a for a in args if a] + [case], capture_output=True, text=True)
    if p.returncode != 0:
        problems.append("%s: inject failed: %s" % (case, p.stderr.strip()))
        continue
    before, after = versions(yaml.safe_load_all(open(case))), versions(yaml.safe_load_all(p.stdout))
    if before != after:
        problems.append("%s: inject changed the apiVersions or kinds: %s -> %s" % (case, before, after))
    judge("inject " + case, *dry_run(p.stdout))

missing = set(EXPECTED) - set(checked)
if missing:
    problems.append("listed but not checked (renamed or moved?): %s" % ", ".join(sorted(missing)))
print("# %d inputs checked by the apiserver" % len(checked))
for p in problems:
    print("not ok: " + p)
sys.exit(1 if problems else 0)
PY
say "every input was accepted, or rejected as listed"
