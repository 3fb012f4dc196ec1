/*
 * The agent's termination message, read back: what summary.c writes there
 * (summary_build's whole summary, or summary_termination's short form when
 * the kubelet would not keep it whole), parsed with the webhook's JSON
 * reader. Only the members explain judges by are read: the agent's exit
 * code, its reason and error, who failed the pod, and each sidecar's
 * outcome, exit code and first answer. test-explain runs summary.c's writer
 * and this reader on the same data, so that the two cannot drift.
 */
#include "config.h"

#include "explain.h"

#include "util.h"
#include "yamldoc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Whether member key is the literal true. */
static bool is_true(const struct ynode *map, const char *key)
{
	const char *v = ydoc_value(ydoc_get(map, key));

	return v && strcmp(v, "true") == 0;
}

static bool is_role(const struct ynode *f, const char *role)
{
	const char *v = ydoc_value(ydoc_get(f, "role"));

	return v && strcmp(v, role) == 0;
}

/* A member that is an integer, or -1 (null, absent, or not an integer). */
static int int_of(const struct ynode *map, const char *key)
{
	const char *v = ydoc_value(ydoc_get(map, key));
	char *end;
	long n;

	if (!v || !*v)
		return -1;
	n = strtol(v, &end, 10);
	return *end || n < 0 || n > 65535 ? -1 : (int)n;
}

static void str_of(const struct ynode *map, const char *key, char *out, size_t len)
{
	const char *v = ydoc_value(ydoc_get(map, key));

	str_copy(out, v ? v : "", len);
}

int explain_summary_read(const char *msg, size_t len, struct explain_summary *s)
{
	const struct ynode *root, *list, *first;
	struct ystream st;
	char err[128];
	size_t i;

	memset(s, 0, sizeof(*s));
	s->exit_code = -1;
	s->failed_code = -1;
	if (!msg || len == 0 || ydoc_parse_json(msg, len, &st, err, sizeof(err)) < 0)
		return -EINVAL;
	root = st.docs[0].root;
	/* Ours: an object that says which rearguard wrote it. */
	if (root->kind != YNODE_MAP || !ydoc_str(ydoc_get(root, "rearguard"))) {
		ydoc_free(&st);
		return -EINVAL;
	}
	s->read = true;
	s->exit_code = int_of(root, "exit_code");
	str_of(root, "reason", s->reason, sizeof(s->reason));
	str_of(root, "error", s->error, sizeof(s->error));
	s->truncated = is_true(root, "truncated") || ydoc_get(root, "sidecars_not_shown");
	list = ydoc_get(root, "fails_pod");
	/* The first one that is not an app: an app's failure is the app's. */
	for (i = 0; list && list->kind == YNODE_SEQ && i < list->n; i++) {
		const struct ynode *f = list->items[i];

		if (is_role(f, "app"))
			continue;
		str_of(f, "role", s->failed_role, sizeof(s->failed_role));
		str_of(f, "name", s->failed_name, sizeof(s->failed_name));
		s->failed_code = int_of(f, "exit_code");
		break;
	}
	list = ydoc_get(root, "sidecars");
	for (i = 0; list && list->kind == YNODE_SEQ && i < list->n && s->nsidecars < EXPLAIN_SUMMARY_SIDECARS; i++) {
		const struct ynode *sc = list->items[i], *statuses = ydoc_get(sc, "statuses");
		struct explain_sidecar *o = &s->sidecars[s->nsidecars];

		if (sc->kind != YNODE_MAP)
			continue;
		str_of(sc, "name", o->name, sizeof(o->name));
		str_of(sc, "outcome", o->outcome, sizeof(o->outcome));
		str_of(sc, "method", o->method, sizeof(o->method));
		o->exit_code = int_of(sc, "exit_code");
		first = statuses && statuses->kind == YNODE_SEQ && statuses->n > 0 ? statuses->items[0] : NULL;
		if (first && ydoc_value(first)) {
			char *end;
			long v = strtol(ydoc_value(first), &end, 10);

			o->status = *end == '\0' && v > 0 && v < 1000 ? (int)v : 0;
		}
		s->nsidecars++;
	}
	ydoc_free(&st);
	return 0;
}
