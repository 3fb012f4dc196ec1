/*
 * What the tests of the webhook's patches share: a JSON tree parsed by
 * yamldoc, an RFC 6902 applier of their own (add and replace, the paths'
 * ~0 and ~1 unescaped), and base64 decoding. Static functions: each test
 * and fuzz target includes it once.
 */
#ifndef RG_JSONPATCH_H
#define RG_JSONPATCH_H

#include "yamldoc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct tree {
	struct ystream s;
	struct ynode *root;
};

static bool parse(const char *text, size_t len, struct tree *t)
{
	char err[256];

	if (ydoc_parse_json(text, len, &t->s, err, sizeof(err)) < 0) {
		printf("# parse: %s\n", err);
		return false;
	}
	t->root = t->s.docs[0].root;
	return true;
}

static bool quoted(const struct ynode *n)
{
	return n->text || (n->style != YAML_ANY_SCALAR_STYLE && n->style != YAML_PLAIN_SCALAR_STYLE);
}

/* A node of another stream, made anew in s (its scalars' bytes are in the other's input). */
static struct ynode *graft(struct ystream *s, const struct ynode *n)
{
	struct ynode *c;
	size_t i;

	if (n->kind == YNODE_SCALAR)
		return ydoc_scalar(s, n->value, quoted(n) ? YDOC_TEXT : YDOC_RAW);
	c = n->kind == YNODE_MAP ? ydoc_new_map(s, true) : ydoc_new_seq(s, true);
	for (i = 0; c && i < n->n; i++)
		if (ydoc_append(s, c, graft(s, n->items[i])) < 0)
			return NULL;
	return c;
}

/* One reference token of a JSON Pointer, unescaped; the rest after it. */
static const char *token(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	for (p++; *p && *p != '/' && n + 1 < cap; p++) {
		if (p[0] == '~' && p[1] == '1')
			out[n++] = '/', p++;
		else if (p[0] == '~' && p[1] == '0')
			out[n++] = '~', p++;
		else
			out[n++] = *p;
	}
	out[n] = '\0';
	return p;
}

/* Applies the patch (JSON text) to t; false with a note when an operation does not apply. */
static bool apply(struct tree *t, const char *patch, size_t len, struct tree *pt)
{
	size_t i;

	if (!parse(patch, len, pt) || pt->root->kind != YNODE_SEQ)
		return false;
	for (i = 0; i < pt->root->n; i++) {
		const struct ynode *o = pt->root->items[i];
		const char *name = ydoc_str(ydoc_get(o, "op")), *path = ydoc_str(ydoc_get(o, "path"));
		struct ynode *value = ydoc_get(o, "value") ? graft(&t->s, ydoc_get(o, "value")) : NULL, *at = t->root;
		char key[512];
		const char *p = path;

		if (!name || !path || *path != '/') {
			printf("# op %zu: no op or path\n", i);
			return false;
		}
		for (;;) {
			p = token(p, key, sizeof(key));
			if (!*p)
				break;
			if (at->kind == YNODE_MAP)
				at = ydoc_get(at, key);
			else if (at->kind == YNODE_SEQ && strtoul(key, NULL, 10) < at->n)
				at = at->items[strtoul(key, NULL, 10)];
			else
				at = NULL;
			if (!at) {
				printf("# op %zu: %s: no such place\n", i, path);
				return false;
			}
		}
		if (at->kind == YNODE_MAP) {
			bool there = ydoc_get(at, key) != NULL;

			if ((strcmp(name, "replace") == 0 && !there) || !value ||
			    ydoc_set(&t->s, at, key, value, false) < 0) {
				printf("# op %zu: %s %s does not apply\n", i, name, path);
				return false;
			}
		} else if (at->kind == YNODE_SEQ) {
			size_t k = strcmp(key, "-") == 0 ? at->n : strtoul(key, NULL, 10);

			if (strcmp(name, "add") == 0 && k <= at->n && value) {
				if (ydoc_insert(&t->s, at, k, value) < 0)
					return false;
			} else if (strcmp(name, "replace") == 0 && k < at->n && value) {
				at->items[k] = value;
			} else {
				printf("# op %zu: %s %s does not apply\n", i, name, path);
				return false;
			}
		} else {
			printf("# op %zu: %s: not in a list or a mapping\n", i, path);
			return false;
		}
	}
	return true;
}

static int b64val(char c)
{
	const char *d = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *p = strchr(d, c);

	return c && p ? (int)(p - d) : -1;
}

static char *unbase64(const char *in, size_t *len)
{
	size_t n = strlen(in), o = 0, i;
	char *out = malloc(n + 1);
	unsigned v = 0;
	int bits = 0;

	for (i = 0; i < n && in[i] != '='; i++) {
		int d = b64val(in[i]);

		if (d < 0) {
			free(out);
			return NULL;
		}
		v = v << 6 | (unsigned)d;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)(v >> bits & 0xff);
		}
	}
	out[o] = '\0';
	*len = o;
	return out;
}

#endif
