#include "config.h"

#include "inject.h"
#include "tap.h"
#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static char err[1024];
static int notes;
static char last_note[1024];
static char all_notes[16384];
static int warnings;

static void count_note(const void *data, bool warning, const char *line)
{
	size_t n = strlen(all_notes);

	(void)data;
	notes++;
	warnings += warning;
	str_copy(last_note, line, sizeof(last_note));
	snprintf(all_notes + n, sizeof(all_notes) - n, "%s\n", line);
}

/* inject_buffer on a string; returns the output (static until the next call) or NULL. */
static const char *run_opts(const char *in, const struct inject_options *o, int *rc)
{
	static char *out;
	size_t outlen = 0;
	struct inject_options opt = *o;

	free(out);
	out = NULL;
	err[0] = '\0';
	last_note[0] = '\0';
	all_notes[0] = '\0';
	notes = warnings = 0;
	opt.note = count_note;
	*rc = inject_buffer(in, strlen(in), &opt, &out, &outlen, err, sizeof(err));
	if (*rc == 0 && strlen(out) != outlen)
		return NULL;
	return out;
}

static const char *run(const char *in, int *rc)
{
	struct inject_options o = {0};

	return run_opts(in, &o, rc);
}

static void bad(const char *in, const char *where, const char *what)
{
	int rc;
	const char *out = run(in, &rc);

	is_int(rc, -EINVAL, "malformed input refused (%s)", what);
	ok(out == NULL, "no output for it");
	ok(strncmp(err, where, strlen(where)) == 0, "error at %s: %s", where, err);
	ok(strchr(err, '\n') == NULL, "one line");
}

static void malformed(void)
{
	bad("a: [1, 2\nb: 3\n", "2:2: ", "an open flow sequence");
	bad("apiVersion: v1\nkind: Pod\n  spec: x\n", "3:7: ", "a key indented under a scalar");
	bad("a: 1\n\tb: 2\n", "2:1: ", "a tab as indentation");
	bad("kind: Job\n---\na: \"open\n", "4:1: ", "an unterminated quoted scalar in the second document");
	bad("a: *nowhere\n", "1:4: ", "an undefined alias");
	bad("\xFF\xFE"
	    "a\0:\0 \0"
	    "1\0",
	    "1:1: UTF-16", "UTF-16");
	{
		char deep[1024];
		size_t i;

		for (i = 0; i < 300; i++)
			deep[i] = '[';
		deep[i] = '\0';
		bad(deep, "1:201: nested deeper", "nesting past the limit");
	}
}

/*
 * Valid YAML in a shape no Kubernetes object has where inject looks: the
 * document comes out as it went in, with a warning naming the field by its
 * own line and column, and the rest of the stream goes on.
 */
static void left_alone(const char *in, const char *where, const char *what)
{
	int rc;
	const char *out = run(in, &rc);

	is_int(rc, 0, "%s: no error", what);
	is_str(out, in, "%s: the document as it was", what);
	ok(warnings == 1 && strncmp(last_note, where, strlen(where)) == 0, "%s: a warning at %s (%s)", what, where,
	   last_note);
}

static void misshapen(void)
{
	static const char two[] = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  template:\n"
				  "    spec:\n      restartPolicy: Never\n      volumes: data\n"
				  "      containers: [{name: linkerd-proxy, image: cr.l5d.io/linkerd/proxy}, {name: app, image: x}]\n"
				  "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: b}\nspec:\n  template:\n"
				  "    spec:\n      restartPolicy: Never\n"
				  "      containers: [{name: linkerd-proxy, image: cr.l5d.io/linkerd/proxy}, {name: app, image: x}]\n";
	const char *out;
	int rc;

	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec: {template: {spec: {restartPolicy: "
		   "Never}}}\n",
		   "4:25: warning: Job \"x\": spec.template.spec.containers is missing", "a template without containers");
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
		   "      containers: []\n",
		   "7:19: warning: Job \"x\": spec.template.spec.containers is empty", "an empty container list");
	left_alone("apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec: {schedule: x}\n",
		   "1:1: warning: CronJob \"c\": spec.jobTemplate.spec.template is missing", "a CronJob without a template");
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template: [a]\n",
		   "5:13: warning: Job \"x\": spec.template is a list, not a mapping", "a template that is a list");
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
		   "      restartPolicy: Never\n      containers: [{name: cloud-sql-proxy, image: i, args: x}]\n",
		   "8:60: warning: Job \"x\": spec.template.spec.containers[0]: args is a scalar",
		   "args that are a string");
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    metadata:\n"
		   "      annotations: [a]\n    spec: {}\n",
		   "7:20: warning: Job \"x\": spec.template.metadata.annotations is a list",
		   "annotations that are a list");
	/* A native sidecar without a name beside a plain one: its spec would be built from no name. */
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
		   "      restartPolicy: Never\n      initContainers: [{image: busybox, restartPolicy: Always}]\n"
		   "      containers: [{name: linkerd-proxy, image: cr.l5d.io/linkerd/proxy}, {name: app, image: x}]\n",
		   "8:24: warning: Job \"x\": spec.template.spec.initContainers[0].name is missing",
		   "a native sidecar without a name");
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
		   "      restartPolicy: Never\n      containers: [{name: linkerd-proxy, image: cr.l5d.io/linkerd/proxy},"
		   " {name: [app], image: x}]\n",
		   "8:82: warning: Job \"x\": spec.template.spec.containers[1].name is a list, not a string",
		   "a container whose name is a list");
	/* An unrendered chart that happens to be YAML: {{ .Values.x }} reads as a mapping. */
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
		   "      restartPolicy: Never\n      containers:\n      - name: app\n        image: {{ .Values.image }}\n",
		   "10:17: warning: Job \"x\": an unrendered Helm template", "a {{ }} that is YAML");
	left_alone("apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n"
		   "      restartPolicy: Never\n      containers:\n      - name: app\n        image: \"{{ .Values.image }}\"\n",
		   "10:16: warning: Job \"x\": an unrendered Helm template", "a quoted {{ }}");
	/* One misshapen document does not cost the others. */
	out = run(two, &rc);
	is_int(rc, 0, "a stream with a misshapen Job");
	ok(out && strncmp(out, two, strstr(two, "---") - two) == 0, "the misshapen one as it was");
	ok(out && strstr(out, "name: rearguard") && strstr(out, "name: b"), "the next one injected");
	ok(strstr(all_notes, "8:16: warning: Job \"a\": spec.template.spec.volumes is a scalar, not a list") != NULL,
	   "the warning names the field where it is");
}

/* Streams with no workload come out exactly as they went in. */
static void passthrough(void)
{
	static const char *const streams[] = {
	    "",
	    "# only a comment\n",
	    "---\n---\n...\n",
	    "%YAML 1.1\n---\napiVersion: v1\nkind: ConfigMap   # c\ndata: {a: 'x', b: \"y\\n\"}\n...\n",
	    /* One element in two literals: in one, \xBF would take the "a" into its hex digits. */
	    ("\xEF\xBB\xBF"
	     "apiVersion: v1\nkind: Service\nmetadata: {name: bom}\n"),
	    "apiVersion: v1\r\nkind: ConfigMap\r\ndata:\r\n  k: v\r\n",
	    "a: &x {k: [1, 2]}\nb: *x\nc: !!str 3\nd: |+\n  keep\n\n",
	    "kind: Deployment\nmetadata: {name: d}\n# trailing\n",
	    "apiVersion: v1\nkind: Secret\nstringData:\n  \xC3\xA9t\xC3\xA9: \"\xE2\x82\xAC\"\n",
	};
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(streams); i++) {
		const char *out = run(streams[i], &rc);

		is_int(rc, 0, "stream %zu parses", i);
		is_str(out, streams[i], "stream %zu comes out byte for byte", i);
	}
}

static const char job[] = "apiVersion: batch/v1\n"
			  "kind: Job\n"
			  "metadata: {name: j}\n"
			  "spec:\n"
			  "  template:\n"
			  "    metadata:\n"
			  "      labels: {sidecar.istio.io/inject: \"true\"}\n"
			  "    spec:\n"
			  "      restartPolicy: Never\n"
			  "      containers:\n"
			  "      - name: app   # the app\n"
			  "        image: busybox\n";

/* Reads back what inject wrote, the way kubectl would. */
static void check_template(const char *out, const char *path, const char *apps, const char *sidecars, const char *what)
{
	struct ystream s;
	char perr[256];
	struct ynode *t, *ctrs, *env, *vols;
	size_t i, found = 0;

	if (ydoc_parse(out, strlen(out), &s, perr, sizeof(perr)) < 0 || s.ndocs == 0) {
		ok(0, "%s: the output parses (%s)", what, perr);
		return;
	}
	t = *path ? ydoc_path(s.docs[0].root, path) : s.docs[0].root;
	ctrs = ydoc_path(t, "spec.containers");
	ok(ctrs && ctrs->n >= 2, "%s: a container was added", what);
	if (!ctrs || ctrs->n < 2) {
		ydoc_free(&s);
		return;
	}
	is_str(ydoc_str(ydoc_get(ctrs->items[0], "name")), "rearguard", "%s: the agent comes first", what);
	is_str(ydoc_str(ydoc_path(t, "spec.shareProcessNamespace")), "true", "%s: shareProcessNamespace", what);
	is_str(ydoc_str(ydoc_path(ctrs->items[0], "securityContext.runAsUser")), "65532", "%s: uid 65532", what);
	is_str(ydoc_str(ydoc_path(ctrs->items[0], "securityContext.readOnlyRootFilesystem")), "true",
	       "%s: read-only root", what);
	is_str(ydoc_str(ydoc_path(ctrs->items[0], "securityContext.allowPrivilegeEscalation")), "false",
	       "%s: no privilege escalation", what);
	env = ydoc_get(ctrs->items[0], "env");
	for (i = 0; env && i < env->n; i++) {
		const char *name = ydoc_str(ydoc_get(env->items[i], "name")),
			   *v = ydoc_str(ydoc_get(env->items[i], "value"));

		if (strcmp(name, "REARGUARD_APPS") == 0)
			found += strcmp(v, apps) == 0;
		if (strcmp(name, "REARGUARD_SIDECARS") == 0)
			found += strcmp(v, sidecars) == 0;
	}
	is_int(found, 2, "%s: REARGUARD_APPS=%s, REARGUARD_SIDECARS=%s", what, apps, sidecars);
	vols = ydoc_path(t, "spec.volumes");
	ok(vols && vols->n >= 1 && ydoc_str(ydoc_get(vols->items[vols->n - 1], "name")) &&
	       strcmp(ydoc_str(ydoc_get(vols->items[vols->n - 1], "name")), "rearguard") == 0 &&
	       ydoc_path(vols->items[vols->n - 1], "emptyDir.medium"),
	   "%s: the emptyDir", what);
	ydoc_free(&s);
}

static void every_kind(void)
{
	static const char pod[] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
				  "    dapr.io/enabled: \"true\"\nspec:\n  restartPolicy: OnFailure\n  containers:\n"
				  "  - {name: a, image: busybox}\n  - {name: b, image: busybox}\n";
	static const char cron[] =
	    "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: c}\nspec:\n"
	    "  schedule: '@hourly'\n  jobTemplate:\n    spec:\n      template:\n"
	    "        spec:\n          restartPolicy: Never\n          containers:\n"
	    "          - name: proxy\n            image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2\n"
	    "            args: [p:r:i]\n          - name: app\n            image: busybox\n";
	const char *out;
	int rc;

	out = run(job, &rc);
	is_int(rc, 0, "Job");
	check_template(out, "spec.template", "1", "istio", "Job");
	ok(out && strncmp(out, job, 40) == 0, "the Job's first lines are as they were");
	out = run(pod, &rc);
	is_int(rc, 0, "Pod");
	check_template(out, "", "2", "dapr", "Pod");
	ok(out && strstr(out, "value: OnFailure"), "Pod: the restart policy from the template");
	out = run(cron, &rc);
	is_int(rc, 0, "CronJob");
	check_template(out, "spec.jobTemplate.spec.template", "1", "cloudsql", "CronJob");
	ok(out && strstr(out, "args: [--quitquitquit, --health-check, --exit-zero-on-sigterm, p:r:i]"),
	   "CronJob: the Cloud SQL proxy's flags, first and in order");
}

/*
 * The flags the Cloud SQL proxy's stop needs, read as Go reads them: one
 * set false (--quitquitquit=false) is off, and is turned on where it
 * stands; one set true in Go's other spellings is left alone.
 */
static void go_flags(void)
{
	static const char off[] =
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n  template:\n    spec:\n"
	    "      restartPolicy: Never\n      containers:\n"
	    "      - name: sql\n        image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2\n"
	    "        args: [-exit-zero-on-sigterm=True, --health-check, --quitquitquit=false, p:r:i]\n"
	    "      - {name: app, image: busybox}\n";
	const char *out;
	int rc;

	out = run(off, &rc);
	is_int(rc, 0, "a Cloud SQL proxy with --quitquitquit=false");
	ok(out && strstr(out, "args: [-exit-zero-on-sigterm=True, --health-check, --quitquitquit, p:r:i]"),
	   "--quitquitquit=false is turned on in place; the flags set true stay as written");
	ok(strstr(all_notes, "--quitquitquit=false turned off") && strstr(all_notes, "set to --quitquitquit"), "  (%s)",
	   all_notes);
}

/* The agent's REARGUARD_SIDECARS in inject's output, or "" (static until the next call). */
static const char *sidecars_of(const char *out)
{
	static char v[1024];
	const char *p = out ? strstr(out, "REARGUARD_SIDECARS, value: ") : NULL;
	size_t n;

	v[0] = '\0';
	if (!p)
		return v;
	p += strlen("REARGUARD_SIDECARS, value: ");
	if (*p == '\'')
		p++;
	n = strcspn(p, "'}");
	snprintf(v, sizeof(v), "%.*s", (int)n, p);
	return v;
}

/*
 * Native sidecars are neither apps nor the agent's to stop: a template
 * whose known sidecars are all native is left alone; beside plain ones
 * they go to the agent marked native; an annotation that asks the
 * injector for a native sidecar counts, also over --mesh.
 */
static void native_sidecars(void)
{
	static const char native_only[] =
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: n}\nspec:\n  template:\n    spec:\n"
	    "      restartPolicy: Never\n      initContainers:\n"
	    "      - {name: cloud-sql-proxy, image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2, restartPolicy: Always,"
	    " args: [p:r:i]}\n      - {name: init-db, image: busybox}\n"
	    "      containers:\n      - {name: app, image: busybox}\n";
	static const char mixed[] =
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: m}\nspec:\n  template:\n"
	    "    metadata: {annotations: {linkerd.io/inject: enabled}}\n    spec:\n"
	    "      restartPolicy: Never\n      initContainers:\n"
	    "      - {name: sql, image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2, restartPolicy: Always,"
	    " args: [p:r:i]}\n      - {name: web, image: nginx, restartPolicy: Always, command: [/usr/sbin/nginx]}\n"
	    "      containers:\n      - {name: app, image: busybox}\n";
	static const char asked[] = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  template:\n"
				    "    metadata: {annotations: {sidecar.istio.io/nativeSidecar: \"true\"}}\n"
				    "    spec:\n      restartPolicy: Never\n      containers: [{name: app, image: busybox}]\n";
	static const char linkerd_order[] =
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: l}\nspec:\n  template:\n"
	    "    metadata: {annotations: {linkerd.io/inject: enabled, config.linkerd.io/proxy-enable-native-sidecar: "
	    "\"false\", config.alpha.linkerd.io/proxy-enable-native-sidecar: \"true\"}}\n"
	    "    spec:\n      restartPolicy: Never\n      containers: [{name: app, image: busybox}]\n";
	struct inject_options o = {.mesh = "istio"};
	const char *out;
	int rc;

	out = run(native_only, &rc);
	is_str(out, native_only, "a native Cloud SQL proxy alone: left as it was");
	ok(strstr(last_note, "its sidecars are native (cloudsql)") != NULL, "  said so (%s)", last_note);
	out = run(mixed, &rc);
	is_str(sidecars_of(out), "linkerd;cloudsql,native;name=web,match=nginx,container=web,native",
	       "mixed: the plain one stopped, the native ones told to the agent by their programs");
	ok(out && !strstr(out, "--quitquitquit"), "a native Cloud SQL proxy gets no stop flags");
	ok(out && strstr(out, "REARGUARD_APPS, value: \"1\""), "native sidecars are no apps");
	out = run_opts(asked, &o, &rc);
	is_str(out, asked, "--mesh istio, but the template asks for a native proxy: no agent beside it");
	out = run(linkerd_order, &rc);
	is_str(sidecars_of(out), "linkerd",
	       "Linkerd's current annotation (false) wins over its alpha one (true): a plain proxy, stopped");
}

/*
 * The annotation rearguard.io/sidecars: a comma separates two entries, not
 * two keys of one entry's spec.
 */
static void named_annotation(void)
{
	static const char keys[] =
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: k}\nspec:\n  template:\n"
	    "    metadata: {annotations: {rearguard.io/sidecars: \"web=match=nginx,stop=signal:QUIT\"}}\n"
	    "    spec:\n      restartPolicy: Never\n      securityContext: {runAsUser: 65532}\n"
	    "      containers: [{name: app, image: busybox}, {name: web, image: nginx}]\n";
	static const char native[] =
	    "apiVersion: batch/v1\nkind: Job\nmetadata: {name: n}\nspec:\n  template:\n"
	    "    metadata: {annotations: {linkerd.io/inject: enabled,"
	    " rearguard.io/sidecars: \"metrics=match=statsd_exporter,native\"}}\n"
	    "    spec:\n      restartPolicy: Never\n"
	    "      initContainers: [{name: metrics, image: prom/statsd-exporter, restartPolicy: Always}]\n"
	    "      containers: [{name: app, image: busybox}]\n";
	const char *out;
	int rc;

	out = run(keys, &rc);
	is_str(sidecars_of(out), "name=web,match=nginx,stop=signal:QUIT,container=web", "NAME=KEY=VALUE,KEY=VALUE is one entry");
	is_int(warnings, 0, "  no warning (%s)", last_note);
	out = run(native, &rc);
	is_str(sidecars_of(out), "linkerd;name=metrics,match=statsd_exporter,native,container=metrics",
	       "NAME=match=PROGRAM,native, as inject's warning suggests it, is one entry");
	is_int(warnings, 0, "  no warning (%s)", last_note);
}

/* --sidecar CONTAINER=PRESET,KEY=VALUE: the preset's spec, overridden, named after the container. */
static void named_preset(void)
{
	static const char stub[] = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: s}\nspec:\n  template:\n"
				   "    spec:\n      restartPolicy: Never\n      securityContext: {runAsUser: 65532}\n"
				   "      containers: [{name: app, image: busybox}, {name: stub, image: sql-stub}]\n";
	struct inject_options o = {.named = {"stub=cloudsql,stop=signal:QUIT"}, .nnamed = 1};
	const char *out;
	char e[512];
	int rc;

	out = run_opts(stub, &o, &rc);
	is_str(sidecars_of(out), "cloudsql,stop=signal:QUIT,name=stub,container=stub",
	       "the preset first: its match and ready URL stay, the stop is the one given");
	o.named[0] = "stub=cloudsql,name=db";
	out = run_opts(stub, &o, &rc);
	is_str(sidecars_of(out), "cloudsql,name=db,container=stub", "a name given is kept");
	is_int(inject_check_named("stub=cloudsql,stop=signal:QUIT", e, sizeof(e)), 0, "--sidecar takes it");
	is_int(inject_check_named("stub=cloudsq,stop=signal:QUIT", e, sizeof(e)), -EINVAL,
	       "a misspelt preset is refused");
	ok(strstr(e, "unknown preset \"cloudsq\"") != NULL, "  naming it (%s)", e);
}

/* A native sidecar's spec ends in native, or inject fails: the word is never left out. */
static void long_native(void)
{
	char in[2048], match[600];
	const char *out;
	size_t k;
	int rc;

	/* "name=metrics,match=", k letters and ",container=metrics": 504 characters, and ",native" fill the 512 a spec has. */
	for (k = 467; k <= 468; k++) {
		memset(match, 'a', k);
		match[k] = '\0';
		snprintf(in, sizeof(in),
			 "apiVersion: batch/v1\nkind: Job\nmetadata: {name: l}\nspec:\n  template:\n"
			 "    metadata: {annotations: {linkerd.io/inject: enabled,"
			 " rearguard.io/sidecars: \"metrics=match=%s\"}}\n"
			 "    spec:\n      restartPolicy: Never\n"
			 "      initContainers: [{name: metrics, image: prom/statsd-exporter, restartPolicy: Always}]\n"
			 "      containers: [{name: app, image: busybox}]\n",
			 match);
		out = run(in, &rc);
		if (k == 467) {
			const char *s = sidecars_of(out);

			ok(s && strlen(s) == strlen("linkerd;name=metrics,match=,container=metrics,native") + k &&
			       strcmp(s + strlen(s) - 7, ",native") == 0,
			   "a native spec of 511 characters ends in native");
		} else {
			is_int(rc, -EINVAL, "one that does not fit with native is an error, not a spec without it");
			ok(strstr(err, "too long") != NULL, "  saying so (%s)", err);
		}
	}
}

static void idempotent(void)
{
	static const char *const inputs[] = {
	    job,
	    "apiVersion: v1\nkind: List\nitems:\n- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: x}\n"
	    "  spec:\n    template:\n      metadata: {annotations: {linkerd.io/inject: enabled}}\n"
	    "      spec: {restartPolicy: Never, containers: [{name: a, image: b}]}\n",
	};
	size_t i;
	int rc;

	for (i = 0; i < ARRAY_SIZE(inputs); i++) {
		char *once;
		const char *twice;

		once = strdup(run(inputs[i], &rc));
		twice = run(once, &rc);
		is_str(twice, once, "input %zu: injecting twice equals injecting once", i);
		is_int(notes, 1, "input %zu: the second pass says it left the template alone", i);
		ok(strstr(last_note, "already has rearguard") != NULL, "  (%s)", last_note);
		free(once);
	}
}

/* A changed document between untouched ones: their bytes stay, multibyte characters included. */
static void neighbours(void)
{
	static const char before[] = "# caf\xC3\xA9 \xE2\x82\xAC\napiVersion: v1\nkind: ConfigMap\n"
				     "data: {k: \"\xC3\xA9\xC3\xA9\xC3\xA9\"}   # \xC3\xA9\n";
	static const char after[] = "---\n# last\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n";
	char in[2048];
	const char *out;
	int rc;

	snprintf(in, sizeof(in), "%s---\n# the Job's own comment\n%s%s", before, job, after);
	out = run(in, &rc);
	is_int(rc, 0, "a mixed stream");
	ok(out && strncmp(out, before, strlen(before)) == 0, "the document before the Job is copied byte for byte");
	ok(out && strlen(out) > strlen(after) && strcmp(out + strlen(out) - strlen(after), after) == 0,
	   "the document after it too");
	ok(out && strstr(out, "---\n# the Job's own comment\napiVersion: batch/v1\n"),
	   "the Job keeps the comment before it");
	ok(out && strstr(out, "# the app"), "comments inside a changed document are kept");
	is_int(notes, 1, "one note: the Job's, none for a ConfigMap or a Service");
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	while ((hay = strstr(hay, needle)) != NULL) {
		n++;
		hay++;
	}
	return n;
}

static void options_and_function_config(void)
{
	static const char rl[] = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
				 "- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: j}\n  spec:\n    template:\n"
				 "      spec: {restartPolicy: Never, containers: [{name: a, image: b}]}\n"
				 "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n"
				 "  data: {image: 'example.com/rg:fc', mesh: istio}\n";
	struct inject_options o = {0};
	const char *out;
	int rc;

	out = run(rl, &rc);
	is_int(rc, 0, "a ResourceList");
	ok(out && strstr(out, "image: 'example.com/rg:fc'") && strstr(out, "value: istio"),
	   "its functionConfig's data sets the image and the mesh");
	o.image = "example.com/rg:flag";
	o.image_from = INJECT_FLAG;
	out = run_opts(rl, &o, &rc);
	ok(out && strstr(out, "image: 'example.com/rg:flag'") && count(out, "rg:fc") == 1,
	   "a flag beats the functionConfig (which keeps its own data)");
	o.image_from = INJECT_ENV;
	out = run_opts(rl, &o, &rc);
	ok(out && count(out, "rg:fc") == 2 && !strstr(out, "rg:flag"), "the functionConfig beats the environment");
	out = run("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
		  "  spec: {imgae: x}\n",
		  &rc);
	is_int(rc, -EINVAL, "an unknown functionConfig option is refused");
	ok(strstr(err, "unknown option \"imgae\"") != NULL, "  naming it (%s)", err);
	/* gate and mesh read as the flags and the environment read them. */
	out = run("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n"
		  "- apiVersion: batch/v1\n  kind: Job\n  metadata: {name: j}\n  spec:\n    template:\n"
		  "      spec: {restartPolicy: Never, containers: [{name: a, image: b},"
		  " {name: sql, image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2, args: [p:r:i]}]}\n"
		  "functionConfig:\n  data: {gate: \"1\"}\n",
		  &rc);
	ok(out && strstr(out, "postStart"), "a functionConfig's gate \"1\" is on, as REARGUARD_GATE=1 is (%s)", err);
	out = run("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n"
		  "  data: {mesh: consul}\n",
		  &rc);
	is_int(rc, -EINVAL, "a mesh --mesh does not take is refused");
	ok(strstr(err, "mesh \"consul\" is not istio or linkerd") != NULL, "  naming the ones it takes (%s)", err);
	o.image = NULL;
	o.mesh = "linkerd";
	out = run_opts("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: Never\n"
		       "  containers: [{name: a, image: b}]\n",
		       &o, &rc);
	ok(out && strstr(out, "config.linkerd.io/proxy-admin-shutdown: enabled") && strstr(out, "value: linkerd"),
	   "--mesh linkerd: the spec and Linkerd's shutdown annotation (%s)", err);
}

/* A kind or name with a newline in it (a YAML escape) must not split a note or an error in two. */
static void control_characters(void)
{
	int rc;

	run("apiVersion: v1\nkind: \"Config\\nMap\\r\\x1b[2J\"\nmetadata: {name: \"a\\nb\"}\n", &rc);
	is_int(rc, 0, "a kind with a newline in it is left alone");
	is_int(notes, 0, "without a note: it is no workload");
	run("apiVersion: batch/v1\nkind: Job\nmetadata: {name: \"x\\ny\\r\\x1b[2J\"}\nspec: {}\n", &rc);
	is_int(rc, 0, "a Job without a template is left alone");
	ok(!strchr(last_note, '\n') && !strchr(last_note, '\r') && !strchr(last_note, '\x1b'),
	   "the note is one line without control characters: %s", last_note);
	ok(strstr(last_note, "x?y") != NULL, "the name's newline shows as '?'");
}

int __real_yaml_emitter_emit(yaml_emitter_t *em, yaml_event_t *e);
int __wrap_yaml_emitter_emit(yaml_emitter_t *em, yaml_event_t *e);
static bool requote;

/*
 * libyaml's emitter (the link wraps it), which writes the token of a kept
 * scalar in other quotes when asked to: libyaml 0.2.5 writes each as asked,
 * so no input takes yamldoc's way back to libyaml's own quoting.
 */
int __wrap_yaml_emitter_emit(yaml_emitter_t *em, yaml_event_t *e)
{
	if (requote && e->type == YAML_SCALAR_EVENT && e->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE &&
	    strncmp((const char *)e->data.scalar.value, "rgkeep", 6) == 0)
		e->data.scalar.style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	return __real_yaml_emitter_emit(em, e);
}

/*
 * When the emitter writes a kept scalar otherwise than asked, the document
 * is libyaml's own, and nothing of the first try is left over (a leak
 * under the sanitizers).
 */
static void requoted(void)
{
	static const char in[] = "kind: ConfigMap\n---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: 'j'}\n"
				 "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
				 "      containers: [{name: app, image: 'busybox'}, {name: linkerd-proxy, image: x}]\n";
	const char *out;
	int rc;

	requote = true;
	out = run(in, &rc);
	requote = false;
	is_int(rc, 0, "a token written otherwise than asked");
	ok(out && strncmp(out, "kind: ConfigMap\n---\n", 20) == 0, "the document before it is kept");
	ok(out && strstr(out, "{name: 'j'}") && strstr(out, "image: 'busybox'") && !strstr(out, "rgkeep"),
	   "libyaml's own quoting in the Job");
}

int main(void)
{
	malformed();
	misshapen();
	passthrough();
	every_kind();
	go_flags();
	native_sidecars();
	named_annotation();
	named_preset();
	long_native();
	idempotent();
	neighbours();
	options_and_function_config();
	control_characters();
	requoted();
	return done_testing();
}
