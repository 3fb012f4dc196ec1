/*
 * Reading a pod template, for the inject files: its fields as the API
 * server reads them (a null is absent, a list of another shape is said),
 * its containers' command lines and environment. Nothing here changes the
 * tree.
 */
#include "config.h"

#include "injectint.h"

#include "util.h"

#include <string.h>

bool inject_is(const struct ynode *n, const char *value)
{
	const char *v = ydoc_str(n);

	return v && strcmp(v, value) == 0;
}

const char *inject_shape(const struct ynode *n)
{
	switch (n->kind) {
	case YNODE_SCALAR:
		return "a scalar";
	case YNODE_SEQ:
		return "a list";
	case YNODE_MAP:
		return "a mapping";
	case YNODE_ALIAS:
		return "an alias";
	}
	return "an alias";
}

/*
 * The collection of kind under key: NULL when it is absent or null (Helm
 * renders an empty list as null), else the node; *bad when it is something
 * else.
 */
struct ynode *inject_want(const struct ynode *parent, const char *key, enum ynode_kind kind, struct ynode **bad)
{
	struct ynode *n = ydoc_get(parent, key);

	*bad = NULL;
	if (!n || ydoc_is_null(n))
		return NULL;
	if (n->kind != kind) {
		*bad = n;
		return NULL;
	}
	return n;
}

/* Annotations first: where injectors look first. */
const char *inject_meta_value(const struct ynode *meta, const char *key)
{
	const char *v = ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));

	return v ? v : ydoc_str(ydoc_get(ydoc_get(meta, "labels"), key));
}

const char *inject_annotation(const void *meta, const char *key)
{
	return ydoc_str(ydoc_get(ydoc_get(meta, "annotations"), key));
}

/* rearguard sidecar's options that take a value (as options.c has them), for reading a command it wraps. */
static bool takes_value(const char *word)
{
	static const char *const with[] = {"--name", "--dir", "-d", "--stop-signal", "--stop-timeout", "--log-format"};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(with); i++)
		if (strcmp(word, with[i]) == 0)
			return true;
	return false;
}

size_t inject_wrapped_at(const char *const *argv, size_t argc)
{
	size_t i;

	if (argc < 3 || !argv[0] || strcmp(base_name(argv[0]), "rearguard") != 0 || strcmp(argv[1], "sidecar") != 0)
		return 0;
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			return i + 1 < argc ? i + 1 : 0;
		if (argv[i][0] != '-')
			return i;
		if (takes_value(argv[i]))
			i++;
	}
	return 0;
}

/*
 * command + args of a container as an argv; argv[0] NULL when there is no
 * command (the image's entrypoint runs). slots, when given, gets where
 * each argument lies in the tree (NULL for argv[0] then), for a fix in place.
 */
size_t inject_argv(const struct ynode *c, const char **argv, struct ynode ***slots)
{
	const struct ynode *cmd = ydoc_get(c, "command"), *args = ydoc_get(c, "args");
	size_t n = 0, i, skip;

	if (cmd && cmd->kind == YNODE_SEQ && cmd->n > 0) {
		for (i = 0; i < cmd->n && n < MAX_ARGV; i++) {
			if (slots)
				slots[n] = &cmd->items[i];
			argv[n++] = ydoc_str(cmd->items[i]) ? ydoc_str(cmd->items[i]) : "";
		}
	} else {
		if (slots)
			slots[n] = NULL;
		argv[n++] = NULL;
	}
	if (args && args->kind == YNODE_SEQ)
		for (i = 0; i < args->n && n < MAX_ARGV; i++) {
			if (slots)
				slots[n] = &args->items[i];
			argv[n++] = ydoc_str(args->items[i]) ? ydoc_str(args->items[i]) : "";
		}
	if (n == 1 && !argv[0])
		return 0;
	/* Under rearguard sidecar: the command line its program sees. */
	skip = inject_wrapped_at(argv, n);
	if (skip) {
		memmove(argv, argv + skip, (n - skip) * sizeof(argv[0]));
		if (slots)
			memmove(slots, slots + skip, (n - skip) * sizeof(slots[0]));
		n -= skip;
	}
	return n;
}

/*
 * The last entry of that name wins, as in the kubelet (a later entry
 * overrides an earlier one); one set by valueFrom has no value here.
 */
const char *inject_env(const struct ynode *c, const char *name)
{
	const struct ynode *env = ydoc_get(c, "env");
	const char *v = NULL;
	size_t i;

	for (i = 0; env && env->kind == YNODE_SEQ && i < env->n; i++)
		if (inject_is(ydoc_get(env->items[i], "name"), name))
			v = ydoc_value(ydoc_get(env->items[i], "value"));
	return v;
}

const char *inject_env_of(const void *c, const char *name)
{
	return inject_env(c, name);
}

const char *inject_uid_of(const char *v)
{
	const char *p = v;

	if (!v || !*v || strlen(v) > 10)
		return NULL;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return NULL;
	return v;
}

const char *inject_name(const struct ynode *c)
{
	return ydoc_str(ydoc_get(c, "name"));
}

bool inject_is_agent(const struct ynode *c)
{
	const char *image = ydoc_str(ydoc_get(c, "image"));

	return inject_is(ydoc_get(c, "name"), AGENT_NAME) || (image && presets_image_is(image, AGENT_NAME));
}
