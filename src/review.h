/*
 * An AdmissionReview in, its answer out: the webhook's decision, in memory
 * and without I/O, so that tests and fuzzers call it as the server does.
 *
 *	struct review_answer a;
 *	int status = review_answer(body, len, &opts, &a);
 *	// status 200: a.body is the AdmissionReview to send back (free it
 *	// with review_answer_free); 400: a.body is one line saying why the
 *	// request is no review (plain text); -ENOMEM: nothing to send.
 *
 * The request's object is a pod (pods CREATE); what inject decides for a
 * pod template it decides for it (inject_pod), and the changes go back as
 * an RFC 6902 JSON Patch of a few operations on the object as sent: items
 * added to lists, members added to mappings (the annotations made when
 * absent), values replaced, nothing else. The answer is always allowed:
 * a review the webhook cannot use (another kind, a malformed pod) is
 * answered without a patch and with a warning. inject's notes go out as
 * the response's warnings, each at most REVIEW_WARNING_MAX bytes. The
 * answer's apiVersion is the request's (admission.k8s.io/v1 or v1beta1).
 * A review of more than REVIEW_MAX_NODES values is read only for what it
 * is and allowed unchanged; nothing here grows faster than the review.
 */
#ifndef RG_REVIEW_H
#define RG_REVIEW_H

#include "inject.h"

#include <stddef.h>

/* The API server keeps a warning whole up to 256 characters (and asks for 120 where it can be). */
#define REVIEW_WARNING_MAX 256
#define REVIEW_MAX_WARNINGS 16
/*
 * The values (scalars, mappings, lists) of a review read into a tree at
 * most: a review with more is allowed unchanged, with a warning. A real
 * pod's review has a few thousand (docs/decisions.md); this bounds what one
 * review costs, whatever its shape.
 */
#define REVIEW_MAX_NODES 100000
/* The annotation that marks a pod the webhook injected: its value is the version that did. */
#define REVIEW_INJECTED "rearguard.io/injected"

/* What became of a review, for the metrics and the log line. */
enum review_outcome {
	REVIEW_PATCHED,	  /* rearguard added (or, reinvoked, brought up to date) */
	REVIEW_UNCHANGED, /* a pod inject left alone: no patch */
	REVIEW_SKIPPED,	  /* not a pod, not CREATE, or a pod of a shape inject cannot read: no patch */
	REVIEW_INVALID,	  /* no AdmissionReview at all: answered 400 */
	REVIEW_OUTCOMES
};

struct review_answer {
	char *body;
	size_t len;
	enum review_outcome outcome;
	char uid[128];	   /* the request's uid, "" when none was read */
	char what[256];	   /* for the log: the pod ("default/job-x-abcde") or why it is no review */
	size_t npatch;	   /* the patch's operations */
};

/* The words of the outcomes, for metrics labels: "patched", "unchanged", "skipped", "invalid". */
const char *review_outcome_word(enum review_outcome o);

int review_answer(const char *body, size_t len, const struct inject_options *o, struct review_answer *a);
void review_answer_free(struct review_answer *a);

#endif
