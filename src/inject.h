/*
 * rearguard inject: Kubernetes YAML in, the same YAML out with rearguard
 * added to every Job, CronJob and Pod that has a known sidecar to stop.
 *
 *	rearguard inject [--image IMAGE] [--mesh istio|linkerd] [--gate]
 *	                 [--signal-as-root] [--sidecar CONTAINER[=SPEC]]... [-q]
 *	                 [FILE|DIR|-]...
 *
 * inject_main() (injectcmd.c) is the subcommand (reading, writing); the work is
 * inject_buffer(), which runs in memory with no I/O at all, so that tests
 * and fuzzers can call it:
 *
 *	struct inject_options o = { .image = "registry.example.com/rearguard:0.3.0" };
 *	char *out, err[512];
 *	size_t outlen;
 *	int rc = inject_buffer(text, len, &o, &out, &outlen, err, sizeof(err));
 *	// rc 0: out holds the whole output (free it); -EINVAL: err is
 *	// "LINE:COL: message" (malformed YAML, a bad option); -ENOMEM.
 *
 * Malformed YAML is an error; a document that is valid YAML but not the
 * shape a Kubernetes object has where inject looks (a list that is a
 * string) is passed through unchanged with a warning that names the field
 * and its line and column: the API server refuses it anyway, and the rest
 * of the stream is not lost for it. Notes (a workload changed or left
 * alone, and why; warnings) go to o.note when set, one line each,
 * "LINE:COL: what: message", without a trailing newline.
 */
#ifndef RG_INJECT_H
#define RG_INJECT_H

#include <stdbool.h>
#include <stddef.h>

/* A placeholder the docs explain: the image built from container/Dockerfile. */
#define INJECT_DEFAULT_IMAGE "registry.example.com/rearguard:" PACKAGE_VERSION
#define INJECT_LABEL "rearguard.io/inject" /* enabled: the Kyverno policy's opt-in; disabled: hands off */
/*
 * INJECT_LABEL's value that asks for long-running pods too (restartPolicy
 * Always: a Deployment's, a StatefulSet's...): started after their
 * sidecars, which are held on deletion until the apps have exited.
 */
#define INJECT_SERVICES "services"
/* How long the agent keeps the sidecars for the apps on a pod's deletion: its --term-grace. */
#define INJECT_TERM_GRACE "rearguard.io/term-grace"
/* Sidecars inject cannot know, named on the template: "caddy=signal:TERM,fluentd" (docs/inject.md). */
#define INJECT_SIDECARS "rearguard.io/sidecars"
#define INJECT_MAX_NAMED 16
/* The OpenTelemetry operator's list of the containers it instruments. */
#define INJECT_OTEL_NAMES "instrumentation.opentelemetry.io/container-names"

/* Where an option's value came from: a ResourceList's functionConfig overrides less than a flag. */
enum inject_origin { INJECT_DEFAULT, INJECT_ENV, INJECT_FUNCTION_CONFIG, INJECT_FLAG };

/* What a run did, for the summary line. */
struct inject_counts {
	size_t changed;	  /* workloads rearguard was added to */
	size_t left;	  /* workloads (Jobs, CronJobs, Pods) left as they were */
	size_t warnings;  /* notes a person must act on */
	bool placeholder; /* the agent's image is the placeholder: it must be set */
};

struct inject_options {
	const char *image; /* NULL: INJECT_DEFAULT_IMAGE, with a warning */
	const char *mesh;  /* "istio", "linkerd" or NULL */
	bool gate;
	/* every template asks for INJECT_SERVICES (--services; the webhook's /mutate/services: a namespace's label) */
	bool services;
	/* where a sidecar may not be signalled by uid 65532, the agent runs as root with only CAP_KILL */
	bool signal_as_root;
	/* --sidecar CONTAINER[=SPEC]: containers that are sidecars whatever they run */
	const char *named[INJECT_MAX_NAMED];
	size_t nnamed;
	enum inject_origin image_from, mesh_from, gate_from, signal_as_root_from, services_from;
	void (*note)(const void *data, bool warning, const char *line);
	const void *note_data;
	struct inject_counts *counts; /* added to when set */
};

int inject_buffer(const char *in, size_t len, const struct inject_options *o, char **out, size_t *outlen, char *err,
		  size_t errlen);

/*
 * The node-level entry point, which the webhook calls: plans rearguard
 * for one pod object (a mapping of kind Pod, as the API server sends it)
 * of a stream already parsed, as for each Pod of a stream but without the
 * unrendered-Helm check, and applies the plan. The plan (injectplan.h)
 * holds what was found and the notes, as values. Returns 1 changed, 0 left
 * alone (the notes say why), or -errno with err set (-ENOMEM; -EINVAL for
 * a spec that does not fit).
 */
struct ystream;
struct ynode;
struct inject_plan;
int inject_pod(struct ystream *s, struct ynode *pod, const struct inject_options *o, struct inject_plan *plan,
	       char *err, size_t errlen);
/* Whether a container is rearguard already: by its name, or by its image. */
bool inject_is_agent(const struct ynode *c);

/*
 * Checks one --sidecar CONTAINER[=SPEC] as a user wrote it: 0, or -EINVAL
 * with one line in err.
 */
int inject_check_named(const char *named, char *err, size_t errlen);

#endif
