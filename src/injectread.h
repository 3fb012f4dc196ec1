/*
 * Reading a pod or a pod template as the API server and the kubelet read
 * it (injectread.c): a field is a value only when it is a scalar, a
 * collection only of the kind asked, an environment variable's last entry
 * wins, and a command under rearguard sidecar is its program's. inject's
 * files and explain read the same way through these.
 */
#ifndef RG_INJECTREAD_H
#define RG_INJECTREAD_H

#include "yamldoc.h"

#include <stdbool.h>
#include <stddef.h>

/* The most words of a command line read. */
#define MAX_ARGV 64

/* Whether n is the scalar value (a missing node is not). */
bool inject_is(const struct ynode *n, const char *value);
/* What a node that should have been a list or a mapping is instead: "a scalar". */
const char *inject_shape(const struct ynode *n);
/* The collection of kind under key; NULL when absent or null, *bad when of another kind. */
struct ynode *inject_want(const struct ynode *parent, const char *key, enum ynode_kind kind, struct ynode **bad);
/* A label or annotation of a template, annotations first. */
const char *inject_meta_value(const struct ynode *meta, const char *key);
/* An annotation of a template (meta is its metadata), for presets_spec. */
const char *inject_annotation(const void *meta, const char *key);
/* A container's command + args as an argv (argv[0] NULL without a command); slots: where each lies. */
size_t inject_argv(const struct ynode *c, const char **argv, struct ynode ***slots);
/* The value of a container's environment variable set by value (not valueFrom), or NULL. */
const char *inject_env(const struct ynode *c, const char *name);
/* A container's environment variable name, for presets_spec (data is the container). */
const char *inject_env_of(const void *c, const char *name);
/* The uid a runAsUser value names, or NULL. */
const char *inject_uid_of(const char *v);
/* A container's name, or NULL. */
const char *inject_name(const struct ynode *c);

#endif
