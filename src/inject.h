/*
 * rearguard inject: Kubernetes YAML in, the same YAML out with rearguard
 * added to every Job, CronJob and Pod that has a known sidecar to stop.
 *
 *	rearguard inject [--image IMAGE] [--mesh istio|linkerd] [--gate] [FILE|-]
 *
 * inject_main() is the subcommand (options, reading, writing); the work is
 * inject_buffer(), which runs in memory with no I/O at all, so that tests
 * and fuzzers can call it:
 *
 *	struct inject_options o = { .image = "registry.example.com/rearguard:0.2.0" };
 *	char *out, err[512];
 *	size_t outlen;
 *	int rc = inject_buffer(text, len, &o, &out, &outlen, err, sizeof(err));
 *	// rc 0: out holds the whole output (free it); -EINVAL: err is
 *	// "LINE:COL: message" or "LINE: kind \"name\": message"; -ENOMEM.
 *
 * Notes (documents left unchanged, fixes that could not be made) go to
 * o.note when set, one line each, without a trailing newline.
 */
#ifndef RG_INJECT_H
#define RG_INJECT_H

#include <stdbool.h>
#include <stddef.h>

/* A placeholder the docs explain: the image built from container/Dockerfile. */
#define INJECT_DEFAULT_IMAGE "registry.example.com/rearguard:" PACKAGE_VERSION
#define INJECT_LABEL "rearguard.io/inject" /* enabled: the Kyverno policy's opt-in; disabled: hands off */

/* Where an option's value came from: a ResourceList's functionConfig overrides less than a flag. */
enum inject_origin { INJECT_DEFAULT, INJECT_ENV, INJECT_FUNCTION_CONFIG, INJECT_FLAG };

struct inject_options {
	const char *image; /* NULL: INJECT_DEFAULT_IMAGE */
	const char *mesh;  /* "istio", "linkerd" or NULL */
	bool gate;
	enum inject_origin image_from, mesh_from, gate_from;
	void (*note)(const void *data, const char *line);
	const void *note_data;
};

int inject_buffer(const char *in, size_t len, const struct inject_options *o, char **out, size_t *outlen, char *err,
		  size_t errlen);

/* rearguard inject ...: argv[0] is "inject". Returns the exit status. */
int inject_main(int argc, char **argv);

#endif
