/*
 * rearguard explain: why is this pod still running, and what fixes it.
 *
 *	rearguard explain [-o text|json] [--all] [--audit] [--now TIME]
 *	                  [--mesh istio|linkerd] [--sidecar CONTAINER[=SPEC]]... [FILE|-]...
 *
 * It reads what `kubectl get -o json` or `-o yaml` prints (a Pod, a Job, a
 * CronJob, a List of them, a whole cluster's `kubectl get
 * pods,jobs,cronjobs,namespaces -A -o json`) and gives each pod one
 * verdict with its evidence and its fixes; a Job or CronJob none of whose
 * pods is in the input is judged by its template. No access to a cluster:
 * the input is all it knows.
 *
 * explain_buffer() does the work in memory, without I/O, so that tests and
 * fuzzers call it as the command does:
 *
 *	struct explain_report rep;
 *	char err[512];
 *	explain_report_init(&rep, &opts);
 *	rc = explain_buffer(&rep, text, len, err, sizeof(err));
 *	// rc 0: every object of the input judged (explain_finish once all inputs are in);
 *	// -EINVAL: err is "LINE:COL: message" (not Kubernetes JSON or YAML); -ENOMEM
 *	explain_finish(&rep);
 *	explain_text(&rep, &out); or explain_json(&rep, &j);
 *	explain_report_free(&rep);
 *
 * What the webhook would do with a pod is asked of the webhook's own
 * decision (inject_plan, which review_answer applies), in one place:
 * explain_webhook_would().
 * The agent's termination message is read by explain_summary_read()
 * (explain-summary.c), which reads what summary.c writes.
 */
#ifndef RG_EXPLAIN_H
#define RG_EXPLAIN_H

#include "inject.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jbuf;
struct ybuf;
struct ystream;
struct ynode;
struct spec_preset;

/* The verdicts, worst last but for fine. Their words are the JSON's "verdict". */
enum explain_verdict {
	EXPLAIN_FINE,		/* fine: said only with --all */
	EXPLAIN_AT_RISK,	/* at-risk: it will hang, or blocks before the apps start */
	EXPLAIN_SIDECAR_FAILED, /* sidecar-failed: a sidecar's or the agent's exit code failed the pod */
	EXPLAIN_HUNG_AGENT,	/* hung-with-agent: the agent is there and the pod still does not end */
	EXPLAIN_HUNG,		/* hung: the apps exited and a plain container runs on */
	EXPLAIN_VERDICTS
};

/* Why: the JSON's "reason"; each belongs to the verdicts docs/explain.md names. */
enum explain_reason {
	/* fine */
	EXPLAIN_COMPLETED,	  /* the pod succeeded, or the Job ended */
	EXPLAIN_NOT_A_JOB,	  /* restartPolicy Always: a pod that is not meant to end */
	EXPLAIN_NO_SIDECAR,	  /* nothing in it runs on after the apps */
	EXPLAIN_NATIVE,		  /* its sidecars are native: the kubelet stops them */
	EXPLAIN_COVERED,	  /* rearguard is there (or the webhook adds it), nothing went wrong */
	EXPLAIN_STOPPING,	  /* the agent is stopping the sidecars, within its limits */
	EXPLAIN_APP_FAILED,	  /* it failed, and not because of a sidecar */
	EXPLAIN_NATIVE_TEARDOWN,  /* a native sidecar's 137 or 143 at the end: Kubernetes' normal */
	/* hung */
	EXPLAIN_RUNS_ON,	  /* a plain container runs on after the apps, no agent */
	/* hung with the agent (or at risk, while the apps still run) */
	EXPLAIN_NOT_PERMITTED,	  /* the agent may not signal the sidecar (its uid) */
	EXPLAIN_STOP_REFUSED,	  /* the stop endpoint said no (a 4xx: Linkerd's 404), and no signal could follow */
	EXPLAIN_IGNORED_STOP,	  /* the sidecar outlived its stop, SIGTERM and SIGKILL */
	EXPLAIN_APPS_NEVER_SEEN,  /* the agent gave up waiting for the apps (--startup-timeout) */
	EXPLAIN_GATE_TIMEOUT,	  /* the start gate's hook timed out: the kubelet killed the agent */
	EXPLAIN_AGENT_ENDED,	  /* the agent ended without stopping the sidecar, for another reason */
	EXPLAIN_NOT_KNOWN,	  /* the agent ran, but did not know the container for a sidecar */
	EXPLAIN_AGENT_WAITING,	  /* the agent runs, past its own limits */
	/* at risk */
	EXPLAIN_NO_AGENT,	  /* a plain sidecar beside apps still running, no agent */
	EXPLAIN_WEBHOOK_MISSED,	  /* asked for the webhook's agent, arrived without it */
	EXPLAIN_INIT_SIDECAR,	  /* a plain sidecar in initContainers: the apps never start */
	/* sidecar-failed */
	EXPLAIN_SIDECAR_EXIT,	  /* a sidecar's exit code failed the pod */
	EXPLAIN_AGENT_EXIT,	  /* the agent's exit code failed the pod */
	EXPLAIN_REASONS
};

/* The fixes, most direct first; their words are the JSON's "fix". */
enum explain_fix_kind {
	EXPLAIN_FIX_LABEL,	   /* kubectl label namespace NS rearguard.io/inject=enabled */
	EXPLAIN_FIX_WEBHOOK_DOWN,  /* the namespace is labelled: bring the webhook back */
	EXPLAIN_FIX_INJECT,	   /* rearguard inject the workload's manifest */
	EXPLAIN_FIX_MESH_NATIVE,   /* the mesh's own native-sidecar switch (an annotation) */
	EXPLAIN_FIX_NATIVE,	   /* the container into initContainers with restartPolicy: Always */
	EXPLAIN_FIX_NAME_SIDECAR,  /* rearguard.io/sidecars: NAME=signal:TERM for a sidecar no preset knows */
	EXPLAIN_FIX_ANNOTATION,	   /* an annotation the sidecar's stop endpoint needs */
	EXPLAIN_FIX_UID,	   /* the agent as the sidecar's uid, or as root with KILL */
	EXPLAIN_FIX_STOP,	   /* another stop for it: a signal or an endpoint it honours */
	EXPLAIN_FIX_EXIT,	   /* what its program needs to exit 0 when stopped */
	EXPLAIN_FIX_READY,	   /* why the sidecar was never ready: its readiness, or a longer gate */
	EXPLAIN_FIX_APPS,	   /* REARGUARD_APPS against the pod's app containers */
	EXPLAIN_FIX_SHARE,	   /* shareProcessNamespace: true */
	EXPLAIN_FIX_INIT_RESTART,  /* restartPolicy: Always on the init container (1.28+) */
	EXPLAIN_FIX_KIND
};

enum explain_object { EXPLAIN_POD, EXPLAIN_JOB, EXPLAIN_CRONJOB };

/* What the webhook would do with a pod created from this one's spec. */
enum explain_webhook { EXPLAIN_WEBHOOK_NOT_ASKED, EXPLAIN_WEBHOOK_ADD, EXPLAIN_WEBHOOK_LEAVE };

#define EXPLAIN_MAX_EVIDENCE 8
#define EXPLAIN_MAX_FIXES 6
#define EXPLAIN_MAX_SAYS 4

struct explain_fix {
	enum explain_fix_kind kind;
	char *text; /* in the user's words, with the command or the YAML to write */
};

/* One object's verdict: a pod, or a Job or CronJob judged by its template. */
struct explain_item {
	enum explain_object kind;
	char *ns, *name;
	char *job;	  /* a pod's Job (its ownerReference), a Job's CronJob; NULL: none */
	enum explain_verdict verdict;
	enum explain_reason reason;
	char *container;  /* the container the verdict is about, NULL: none */
	const struct spec_preset *preset; /* what it is, when a preset knows it */
	bool unknown;	  /* a container no preset knows */
	char *since;	  /* when the apps finished (or it started running), RFC 3339; NULL: unknown */
	int exit_code;	  /* the exit code that failed the pod; -1: none */
	char *evidence[EXPLAIN_MAX_EVIDENCE];
	size_t nevidence;
	struct explain_fix fixes[EXPLAIN_MAX_FIXES];
	size_t nfixes;
	enum explain_webhook webhook;
	char *says[EXPLAIN_MAX_SAYS]; /* the webhook's warnings, as kubectl would print them */
	size_t nsays;
	/* What the audit counts. */
	bool agent;	   /* rearguard is in it */
	bool native;	   /* it has native sidecars */
	bool plain;	   /* it has a plain sidecar (known, named, or seen running on) */
	bool ns_labelled;  /* its namespace opted in (a Namespace of the input, or the pod's label) */
};

/* One namespace's line of the audit. */
struct explain_ns {
	char *name;
	bool seen;	/* a Namespace object of the input */
	bool labelled;	/* rearguard.io/inject=enabled */
	bool disabled;	/* rearguard.io/inject=disabled */
	size_t judged, verdicts[EXPLAIN_VERDICTS], covered, native, by_label;
};

struct explain_options {
	struct inject_options inject; /* the webhook's: --mesh, --sidecar */
	bool all;		      /* fine ones too */
	bool audit;		      /* the table only */
	bool json;		      /* -o json */
	int64_t now_us;		      /* real time the verdicts are judged at */
};

struct explain_report {
	struct explain_options o;
	struct explain_item *items;
	size_t n, cap;
	struct explain_ns *nss;
	size_t nns, nscap;
	/* The best single fix: the namespace whose label covers most, after explain_finish. */
	const struct explain_ns *best;
	size_t objects; /* Kubernetes objects read, of every kind */
};

void explain_report_init(struct explain_report *r, const struct explain_options *o);
/* Judges every object of one input (JSON or YAML). 0, -EINVAL with err "LINE:COL: message", or -ENOMEM. */
int explain_buffer(struct explain_report *r, const char *in, size_t len, char *err, size_t errlen);
/* Once every input is in: what depends on the whole (namespaces' labels, Jobs whose pods were read). */
int explain_finish(struct explain_report *r);
/* 0 when every object is fine, else 1: the command's exit status. */
int explain_status(const struct explain_report *r);
void explain_report_free(struct explain_report *r);

/* explain-out.c: the report for people, and for tools (docs/explain.md has the schema). */
int explain_text(const struct explain_report *r, struct ybuf *out);
void explain_json(const struct explain_report *r, struct jbuf *j);
const char *explain_verdict_word(enum explain_verdict v);
const char *explain_reason_word(enum explain_reason why);
const char *explain_fix_word(enum explain_fix_kind k);

/*
 * What the webhook would do with a pod of this metadata and spec in
 * namespace ns: the webhook's own decision (inject_plan on the pod, which
 * changes nothing) and its words (inject_plan_words). Sets it->webhook and
 * it->says. 0 or -ENOMEM.
 */
int explain_webhook_would(struct ystream *s, const struct ynode *meta, const struct ynode *spec, const char *ns,
			  const struct inject_options *o, struct explain_item *it);

/* explain-summary.c: the agent's termination message, as summary.c writes it (whole or short). */
#define EXPLAIN_SUMMARY_SIDECARS 16
struct explain_sidecar {
	char name[64];
	char outcome[24];   /* "stopped", "not-permitted", ... (docs/proxies.md) */
	int exit_code;	    /* -1: null */
	int status;	    /* the first HTTP status its requests got, 0: none */
	char method[160];
};
struct explain_summary {
	bool read;	  /* a summary was there and parsed */
	bool truncated;	  /* the termination log's short form */
	int exit_code;	  /* the agent's */
	char reason[32];  /* "apps-done", "startup-timeout", ... */
	char error[256];  /* "sidecar fb not stopped: ...", "" when none */
	struct explain_sidecar sidecars[EXPLAIN_SUMMARY_SIDECARS];
	size_t nsidecars;
	/* fails_pod: who failed the pod, by role */
	char failed_role[16], failed_name[64];
	int failed_code;
};
/* Parses a termination message; 0, or -EINVAL when it is no summary (s->read false). */
int explain_summary_read(const char *msg, size_t len, struct explain_summary *s);

#endif
