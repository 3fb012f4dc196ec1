#!/bin/bash
# Every API the repository ships is served by Kubernetes 1.25 through 1.34:
# each object of every manifest under manifests/ (a kustomization built by
# `kubectl kustomize`; a kustomize component built into each kustomization
# it changes, and failed if it changes none; every other YAML file as it
# is) and of every YAML block of README.md and docs/*.md that holds
# complete objects. An object of Kubernetes' own groups must be of a kind
# and version that 1.25 served and that 1.34 still serves; one that
# Kubernetes stopped serving fails with the release that stopped it and
# what serves it instead. Other groups (cert-manager.io, kyverno.io: their
# own CRDs) are listed, not judged.
#
# The lists below are Kubernetes' own: what each release stopped serving is
# its deprecation guide's "Removed APIs by release" (1.16, 1.22, 1.25,
# 1.26, 1.27, 1.29, 1.32), each entry as the sources have it (the
# APILifecycleRemoved of the type's zz_generated.prerelease-lifecycle.go in
# k8s.io/api, k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator);
# what 1.25 served is the GA kinds its k8s.io/api registers that a manifest
# can hold (register.go of each group's v1 and v2, release-1.25), every one
# of which release-1.34 still registers. A beta or alpha version of Kubernetes' own groups is
# never served by every cluster: a beta API new since 1.24 is off by
# default, and every older one is in the removed list.
#
# The overlay for the 1.20 test cluster, a directory whose name has "1.20"
# or "1-20", is the one place allowed an API that 1.25 no longer serves.
#
# Needs kubectl 1.21 or later (its kustomize builds components) and
# python3-yaml; skipped with the reason without them. Before it judges the
# repository the check is held to objects whose verdict is known, so that a
# check that passes everything fails here.
set -u
: "${RG_SRCDIR:?RG_SRCDIR is set by make check}"
skip() {
	echo "SKIP: apis: $*"
	exit 77
}
command -v kubectl >/dev/null 2>&1 ||
	skip "no kubectl to build the kustomizations (kubectl 1.21 or later: Google's kubectl package, or any release binary)"
minor=$(kubectl version --client -o json 2>/dev/null | /usr/bin/python3 -c \
	'import json, sys; print(json.load(sys.stdin)["clientVersion"]["minor"].rstrip("+"))' 2>/dev/null) ||
	skip "kubectl version --client says no version"
[ "${minor:-0}" -ge 21 ] 2>/dev/null ||
	skip "kubectl 1.$minor: its kustomize (2.0.3 before 1.21) cannot build components; kubectl 1.21 or later needed"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || skip "no python3-yaml (tools/deps installs it)"

exec /usr/bin/python3 - "$RG_SRCDIR" <<'PY'
import glob, os, re, shutil, subprocess, sys, tempfile
import yaml

src = sys.argv[1]
os.chdir(src)

# (group/version, kind): (the release that stopped serving it, what serves it instead).
REMOVED = {}
def removed(release, versions, kinds, instead):
    for v in versions.split():
        for k in kinds.split():
            REMOVED[(v, k)] = (release, instead)

removed("1.16", "extensions/v1beta1", "NetworkPolicy", "networking.k8s.io/v1")
removed("1.16", "extensions/v1beta1", "PodSecurityPolicy", "policy/v1beta1, itself gone in 1.25")
removed("1.16", "extensions/v1beta1 apps/v1beta2", "DaemonSet", "apps/v1")
removed("1.16", "extensions/v1beta1 apps/v1beta1 apps/v1beta2", "Deployment ReplicaSet", "apps/v1")
removed("1.16", "apps/v1beta1 apps/v1beta2", "StatefulSet ControllerRevision", "apps/v1")
removed("1.22", "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration ValidatingWebhookConfiguration", "admissionregistration.k8s.io/v1")
removed("1.22", "apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", "apiextensions.k8s.io/v1")
removed("1.22", "apiregistration.k8s.io/v1beta1", "APIService", "apiregistration.k8s.io/v1")
removed("1.22", "authentication.k8s.io/v1beta1", "TokenReview", "authentication.k8s.io/v1")
removed("1.22", "authorization.k8s.io/v1beta1",
        "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview",
        "authorization.k8s.io/v1")
removed("1.22", "certificates.k8s.io/v1beta1", "CertificateSigningRequest", "certificates.k8s.io/v1")
removed("1.22", "coordination.k8s.io/v1beta1", "Lease", "coordination.k8s.io/v1")
removed("1.22", "extensions/v1beta1 networking.k8s.io/v1beta1", "Ingress", "networking.k8s.io/v1")
removed("1.22", "networking.k8s.io/v1beta1", "IngressClass", "networking.k8s.io/v1")
removed("1.22", "rbac.authorization.k8s.io/v1beta1", "ClusterRole ClusterRoleBinding Role RoleBinding",
        "rbac.authorization.k8s.io/v1")
removed("1.22", "scheduling.k8s.io/v1beta1", "PriorityClass", "scheduling.k8s.io/v1")
removed("1.22", "storage.k8s.io/v1beta1", "CSIDriver CSINode StorageClass VolumeAttachment", "storage.k8s.io/v1")
removed("1.25", "batch/v1beta1", "CronJob", "batch/v1, since 1.21")
removed("1.25", "discovery.k8s.io/v1beta1", "EndpointSlice", "discovery.k8s.io/v1, since 1.21")
removed("1.25", "events.k8s.io/v1beta1", "Event", "events.k8s.io/v1, since 1.19")
removed("1.25", "autoscaling/v2beta1", "HorizontalPodAutoscaler", "autoscaling/v2, since 1.23")
removed("1.25", "policy/v1beta1", "PodDisruptionBudget", "policy/v1, since 1.21")
removed("1.25", "policy/v1beta1", "PodSecurityPolicy", "nothing: Pod Security admission")
removed("1.25", "node.k8s.io/v1beta1", "RuntimeClass", "node.k8s.io/v1, since 1.20")
removed("1.26", "flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema PriorityLevelConfiguration",
        "flowcontrol.apiserver.k8s.io/v1, since 1.29")
removed("1.26", "autoscaling/v2beta2", "HorizontalPodAutoscaler", "autoscaling/v2, since 1.23")
removed("1.27", "storage.k8s.io/v1beta1", "CSIStorageCapacity", "storage.k8s.io/v1, since 1.24")
removed("1.29", "flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema PriorityLevelConfiguration",
        "flowcontrol.apiserver.k8s.io/v1, since 1.29")
removed("1.32", "flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema PriorityLevelConfiguration",
        "flowcontrol.apiserver.k8s.io/v1, since 1.29")

# The GA kinds that 1.25 served and 1.34 still serves, by group/version.
SERVED = {
    "v1": "Binding ComponentStatus ConfigMap Endpoints Event LimitRange Namespace Node PersistentVolume "
          "PersistentVolumeClaim Pod PodTemplate ReplicationController ResourceQuota Secret Service ServiceAccount",
    "admissionregistration.k8s.io/v1": "MutatingWebhookConfiguration ValidatingWebhookConfiguration",
    "apiextensions.k8s.io/v1": "CustomResourceDefinition",
    "apiregistration.k8s.io/v1": "APIService",
    "apps/v1": "ControllerRevision DaemonSet Deployment ReplicaSet StatefulSet",
    "authentication.k8s.io/v1": "TokenRequest TokenReview",
    "authorization.k8s.io/v1":
        "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview SubjectAccessReview",
    "autoscaling/v1": "HorizontalPodAutoscaler Scale",
    "autoscaling/v2": "HorizontalPodAutoscaler",
    "batch/v1": "CronJob Job",
    "certificates.k8s.io/v1": "CertificateSigningRequest",
    "coordination.k8s.io/v1": "Lease",
    "discovery.k8s.io/v1": "EndpointSlice",
    "events.k8s.io/v1": "Event",
    "networking.k8s.io/v1": "Ingress IngressClass NetworkPolicy",
    "node.k8s.io/v1": "RuntimeClass",
    "policy/v1": "Eviction PodDisruptionBudget",
    "rbac.authorization.k8s.io/v1": "ClusterRole ClusterRoleBinding Role RoleBinding",
    "scheduling.k8s.io/v1": "PriorityClass",
    "storage.k8s.io/v1": "CSIDriver CSINode CSIStorageCapacity StorageClass VolumeAttachment",
}
SERVED = {(v, k) for v, kinds in SERVED.items() for k in kinds.split()}

# Kubernetes' own groups ("" is the core group, apiVersion v1), those of
# releases past included; any other group is a CRD's or an aggregated API's.
OWN = set("""admission.k8s.io admissionregistration.k8s.io apidiscovery.k8s.io apiextensions.k8s.io
apiregistration.k8s.io apps auditregistration.k8s.io authentication.k8s.io authorization.k8s.io autoscaling
batch certificates.k8s.io coordination.k8s.io discovery.k8s.io events.k8s.io extensions
flowcontrol.apiserver.k8s.io imagepolicy.k8s.io internal.apiserver.k8s.io lifecycle.k8s.io networking.k8s.io
node.k8s.io policy rbac.authorization.k8s.io resource.k8s.io scheduling.k8s.io settings.k8s.io
storage.k8s.io storagemigration.k8s.io""".split()) | {""}

OLD_CLUSTER = re.compile(r"(^|/)[^/]*1[.-]20[^/]*(/|$)")


def judge(version, kind):
    """None when 1.25 through 1.34 serve version/kind, or why not."""
    group = version.rsplit("/", 1)[0] if "/" in version else ""
    if group not in OWN:
        return None
    if (version, kind) in REMOVED:
        release, instead = REMOVED[(version, kind)]
        return "no longer served from Kubernetes %s (use %s)" % (release, instead)
    if (version, kind) not in SERVED:
        return "not served by every Kubernetes from 1.25 to 1.34 (new since 1.25, or not GA)"
    return None


# The check itself, held to known verdicts first.
known = {
    ("policy/v1beta1", "PodDisruptionBudget"): False, ("policy/v1", "PodDisruptionBudget"): True,
    ("batch/v1beta1", "CronJob"): False, ("batch/v1", "CronJob"): True,
    ("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema"): False,
    ("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration"): False,
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy"): False,  # GA in 1.30
    ("resource.k8s.io/v1alpha3", "ResourceClaim"): False,
    ("v1", "Pod"): True, ("cert-manager.io/v1", "Certificate"): True,
}
for (v, k), ok in known.items():
    if (judge(v, k) is None) != ok:
        print("FAIL: apis: the check judges %s %s %s" % (v, k, "unserved" if ok else "served"))
        sys.exit(1)

problems, checked, foreign = [], 0, set()


def check(source, docs, allowed_old=False):
    global checked
    for d in docs:
        if not isinstance(d, dict) or "apiVersion" not in d or "kind" not in d:
            continue
        version, kind = str(d["apiVersion"]), str(d["kind"])
        if version.startswith("kustomize.config.k8s.io/"):
            continue  # kustomize's own file, never sent to an API server
        checked += 1
        why = judge(version, kind)
        group = version.rsplit("/", 1)[0] if "/" in version else ""
        if group not in OWN:
            foreign.add("%s %s" % (version, kind))
        elif why and allowed_old:
            print("# allowed in the overlay for the 1.20 test cluster: %s: %s %s" % (source, version, kind))
        elif why:
            name = (d.get("metadata") or {}).get("name", "")
            problems.append("%s: %s %s %s: %s" % (source, version, kind, name, why))


def kustomize(path):
    p = subprocess.run(["kubectl", "kustomize", path], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        problems.append("kubectl kustomize %s failed: %s" % (path, p.stderr.strip().splitlines()[-1:]))
        return None
    return p.stdout


kinds, uses = {}, {}
for k in sorted(glob.glob("manifests/**/kustomization.yaml", recursive=True)):
    d = os.path.dirname(k)
    spec = yaml.safe_load(open(k)) or {}
    kinds[d] = spec.get("kind", "Kustomization")
    uses[d] = {os.path.normpath(os.path.join(d, c)) for c in spec.get("components") or []}
kustomizations = [d for d, kind in kinds.items() if kind != "Component"]
components = [d for d, kind in kinds.items() if kind == "Component"]

built = {}
for d in kustomizations:
    out = kustomize(d)
    if out is not None:
        built[d] = out
        check("kubectl kustomize " + d, yaml.safe_load_all(out), bool(OLD_CLUSTER.search(d)))

# A component is built into each kustomization (not the 1.20 overlay's,
# whose kustomize has no components) that it changes.
work = tempfile.mkdtemp()
try:
    for c in components:
        changed = []
        for d in kustomizations:
            if OLD_CLUSTER.search(d) or d not in built:
                continue
            if c in uses[d]:
                changed.append(d)  # built with it already
                continue
            with open(os.path.join(work, "kustomization.yaml"), "w") as f:
                yaml.safe_dump({"resources": [os.path.relpath(os.path.join(src, d), work)],
                                "components": [os.path.relpath(os.path.join(src, c), work)]}, f)
            out = kustomize(work)
            if out is not None and out != built[d]:
                changed.append(d)
                check("kubectl kustomize %s with the component %s" % (d, c), yaml.safe_load_all(out))
        if changed:
            print("# the component %s changes: %s" % (c, ", ".join(changed)))
        else:
            problems.append("the component %s changes no kustomization of manifests/" % c)
finally:
    shutil.rmtree(work)

for f in sorted(glob.glob("manifests/**/*.yaml", recursive=True) + glob.glob("manifests/**/*.yml", recursive=True)):
    if os.path.basename(f) not in ("kustomization.yaml", "kustomization.yml"):
        check(f, yaml.safe_load_all(open(f)), bool(OLD_CLUSTER.search(f)))

for f in ["README.md"] + sorted(glob.glob("docs/*.md")):
    for m in re.finditer(r"```ya?ml\n(.*?)```", open(f).read(), re.S):
        try:
            docs = list(yaml.safe_load_all(m.group(1)))
        except yaml.YAMLError:
            continue  # a fragment to paste into something else
        check("%s (a YAML block)" % f, docs)

print("# %d objects checked; not Kubernetes' own, not judged: %s" % (checked, ", ".join(sorted(foreign)) or "none"))
for p in problems:
    print("FAIL: apis: " + p)
sys.exit(1 if problems else 0)
PY
