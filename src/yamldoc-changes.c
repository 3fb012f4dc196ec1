/*
 * What changed in a tree since it was read, walked once for both of its
 * writers: yamldoc-edit.c makes each change a text edit of the document's
 * own bytes, review.c an operation of a JSON Patch (yamldoc.h has the
 * interface).
 *
 * Every collection read keeps its items as read (orig) beside its items
 * now; nodes are told apart by identity, and a node made since (line 0) is
 * new. The walk merges the two lists: an item that is the one read is
 * walked into (a mapping's member whose value is another is a value
 * replaced), a new one is an item added before the item read that follows,
 * or, in a sequence, one put in the place of an item read that is no
 * longer there. Anything else (an item read put elsewhere, one taken out of
 * a mapping) leaves no edit to say it: the collection is rewritten whole.
 * Nothing here allocates; the places live on the walk's stack.
 */
#include "config.h"

#include "yamldoc.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct walk {
	ydoc_change_fn fn;
	void *data;
};

/* Whether item is among items[from..n). */
static bool among(struct ynode *const *items, size_t from, size_t n, const struct ynode *item)
{
	size_t i;

	for (i = from; i < n; i++)
		if (items[i] == item)
			return true;
	return false;
}

static int tell(struct walk *w, enum ydoc_change_kind kind, const struct ynode *coll, const struct ydoc_place *at,
		size_t i, size_t j, const struct ynode *old, const struct ynode *now, bool first)
{
	struct ydoc_change c = {.kind = kind, .coll = coll, .at = at, .i = i, .j = j, .old = old, .now = now,
				.first_added = first};

	return w->fn(w->data, &c);
}

static int walk_node(struct walk *w, const struct ynode *n, const struct ydoc_place *here, int depth);

/*
 * Whether each item of the collection now is the one read or a new one,
 * in the order read: the merge below finds then a change for every
 * difference. Otherwise (an item read put elsewhere, or taken out of a
 * mapping) the first item where it fails is *at, *was_at.
 */
static bool mergeable(const struct ynode *n, size_t *at, size_t *was_at)
{
	bool map = n->kind == YNODE_MAP;
	size_t unit = map ? 2 : 1, i = 0, j = 0;

	while (i < n->n || j < n->orig_n) {
		const struct ynode *now = i < n->n ? n->items[i] : NULL, *was = j < n->orig_n ? n->orig[j] : NULL;

		if (now && now == was) {
			i += unit;
			j += unit;
		} else if (now && now->line == 0) {
			/* A sequence's new item where one read was, which is nowhere now: that one goes with it. */
			j += !map && was && !among(n->items, i + 1, n->n, was);
			i += unit;
		} else {
			*at = i;
			*was_at = j;
			return false;
		}
	}
	return true;
}

/*
 * A collection: its items merged with those read, each change told; a
 * collection that cannot be merged is told rewritten, before anything in
 * it (a writer then says it whole).
 */
static int walk_coll(struct walk *w, const struct ynode *n, const struct ydoc_place *here, int depth)
{
	bool map = n->kind == YNODE_MAP, first = true;
	size_t unit = map ? 2 : 1, i = 0, j = 0;
	struct ydoc_place sub = {.up = here, .coll = n};
	int rc = 0;

	if (!mergeable(n, &i, &j))
		return tell(w, YDOC_REWRITTEN, n, here, i, j, NULL, n, false);
	while (rc == 0 && (i < n->n || j < n->orig_n)) {
		const struct ynode *now = i < n->n ? n->items[i] : NULL, *was = j < n->orig_n ? n->orig[j] : NULL;

		if (now && now == was) {
			sub.key = map ? now : NULL;
			sub.index = i;
			sub.node = map ? n->items[i + 1] : now;
			if (!map || n->items[i + 1] == n->orig[j + 1])
				rc = walk_node(w, sub.node, &sub, depth + 1);
			else
				rc = tell(w, YDOC_REPLACED, n, &sub, i, j, n->orig[j + 1], sub.node, false);
			i += unit;
			j += unit;
		} else if (now && now->line == 0 && !map && was && !among(n->items, i + 1, n->n, was)) {
			/* A new item where one read was, which is nowhere now. */
			sub.key = NULL;
			sub.index = i;
			sub.node = now;
			rc = tell(w, YDOC_REPLACED, n, &sub, i, j, was, now, false);
			i++;
			j++;
		} else if (now && now->line == 0) {
			sub.key = map ? now : NULL;
			sub.index = i;
			sub.node = map ? n->items[i + 1] : now;
			rc = tell(w, YDOC_ADDED, n, &sub, i, j, NULL, sub.node, first);
			first = false;
			i += unit;
		} else {
			break; /* not so: mergeable() said */
		}
	}
	return rc;
}

static int walk_node(struct walk *w, const struct ynode *n, const struct ydoc_place *here, int depth)
{
	if (n->kind != YNODE_MAP && n->kind != YNODE_SEQ)
		return 0;
	if (depth > YDOC_MAX_DEPTH)
		return -ELOOP;
	return walk_coll(w, n, here, depth);
}

int ydoc_changes(const struct ynode *root, ydoc_change_fn fn, void *data)
{
	struct walk w = {.fn = fn, .data = data};

	return root ? walk_node(&w, root, NULL, 0) : 0;
}
