/*
 * Sidecar specs: what the user writes after --sidecar, parsed and checked.
 *
 *	PRESET[,KEY=VALUE...]   or   KEY=VALUE[,KEY=VALUE...]
 *
 * Keys: name, match, ready, drain, drain-time, stop (URL, signal:NAME to the
 * container's main process, signal-all:NAME to each of its processes), and
 * the word native (no value). A value runs to the next comma that is
 * followed by "word=" or by "native", so a regex may contain other commas
 * (match=a{1,3}) while a misspelt key is still caught.
 * Keys override the preset's values. match is a POSIX extended regex that
 * must match a whole process name (comm, or the basename of argv[0]).
 */
#ifndef RG_SPEC_H
#define RG_SPEC_H

#include "presets.h"
#include "url.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SPEC_NAME_MAX 64
#define SPEC_CONTAINER_MAX 64 /* a DNS label and its NUL */
#define SPEC_URL_MAX 1024

struct sidecar_spec {
	char name[SPEC_NAME_MAX];
	/*
	 * container=: the pod's container this sidecar is, by the name the
	 * kubelet gives it. Where the containers' names can be seen
	 * (podscan's kname), that container is this sidecar whatever it runs,
	 * and no other container is, whatever it runs; match= is then only a
	 * cross-check. "" when not given: match= alone says.
	 */
	char container[SPEC_CONTAINER_MAX];
	const char *preset; /* static preset name, or NULL */
	char *match_src;
	regex_t match;
	bool match_compiled;
	char *ready_url;    /* NULL: ready as soon as its process is seen */
	char *drain_url;    /* NULL: no drain step */
	int64_t drain_time_ms;
	char *stop_url;     /* NULL: stop with stop_signal */
	int stop_signal;
	bool signal_all;    /* signal-all: the stop signal goes to every process, not the root alone */
	bool detected;      /* a preset found by detection (--sidecar auto): it counts once a process of it
			       is seen, and its processes are told by presets_detect, not by match */
	/*
	 * native: the container runs as a native sidecar (an init container
	 * with restartPolicy Always, which the kubelet starts first, restarts,
	 * and stops after the apps), or is a helper that ends by itself once
	 * the others did (a preset row's helper). Its processes are recognised
	 * by match as this sidecar's, so that they are no app; it is never
	 * waited for and never stopped. rearguard inject writes it for each
	 * native sidecar of a template.
	 */
	bool native;
	/*
	 * handles-stop: its program exits 0 on its stop signal (it handles it),
	 * so rearguard inject and the webhook leave its command as it is rather
	 * than run it under rearguard sidecar. The agent does not act on it: it
	 * still looks at what the signal will do, and says so.
	 */
	bool handles_stop;
	/* The URLs taken apart once, here: their paths point into the strings above. */
	struct url ready_at, drain_at, stop_at;
};

/* The presets (spec_presets[], spec_npresets) are the table in presets.h. */

/*
 * Parses text into spec. On error returns -EINVAL and writes one line
 * naming the problem into err; spec is then empty (safe to spec_free).
 */
int spec_parse(const char *text, struct sidecar_spec *spec, char *err, size_t errlen);

/*
 * The same without compiling its match regex (match is then unusable):
 * for a reader of a spec known to be good that wants only its URLs and
 * its stop (inject's pre-flight of signals, once per sidecar of every pod).
 */
int spec_read(const char *text, struct sidecar_spec *spec, char *err, size_t errlen);

/* Whether s can name a container of a pod (a DNS label, as Kubernetes requires). */
bool spec_container_name(const char *s);
void spec_free(struct sidecar_spec *spec);

/*
 * Whether s starts with a key of a spec: "KEY=" for a key above, or the
 * word native. Where a list of specs separated by commas (the annotation
 * rearguard.io/sidecars) may not be split: the comma is inside a spec.
 */
bool spec_key_at(const char *s);

/* Whether name (a comm or an argv[0] basename) matches the spec's regex. */
bool spec_matches(const struct sidecar_spec *spec, const char *name);

/* "signal:TERM" or "POST http://..." for logs and the summary. */
void spec_describe_stop(const struct sidecar_spec *spec, char *out, size_t len);

/*
 * What an operator needs to know when the sidecar's stop endpoint answered
 * result (an HTTP status, or -errno when no answer came) with body: the
 * proxies' own ways of failing, and the fix. NULL when there is nothing
 * to add to the answer itself.
 */
const char *spec_stop_advice(const struct sidecar_spec *spec, int result, const char *body);

/*
 * What to change when the sidecar exits non-zero (which fails a pod under
 * restartPolicy Never), for its kind of stop: one sentence for the warning.
 */
const char *spec_exit_fix(const struct sidecar_spec *spec);

/* A spec that cannot work as written (Envoy's own quitquitquit for Istio), or NULL. */
const char *spec_warning(const struct sidecar_spec *spec);

/*
 * Compiles a user regex so that it must match a whole name. Returns 0, or
 * -EINVAL with regerror's words in err.
 */
int regex_compile_whole(regex_t *re, const char *src, char *err, size_t errlen);

#endif
