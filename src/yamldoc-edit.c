/*
 * A changed document written as its own bytes with the tree's changes made
 * as text edits: each change the change walk finds (yamldoc-changes.c:
 * the tree against each collection's items as read) becomes an insertion
 * at a byte offset or the replacement of a node's bytes. A new item of a block collection goes on lines of its own in the
 * document's indentation (read from the document: its step, and whether
 * its block sequences under a key are indented); one of a flow collection
 * goes between the others with ", ". What inject adds is written as
 * libyaml writes a flow node, so it is quoted as it would have been.
 *
 * A difference with no place (items reordered or taken out, a block
 * collection in a flow one's place) makes ydoc_write_edits return 1, and
 * ydoc_write writes the whole document from the tree as before.
 */
#include "yamldoc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct edit {
	size_t at, end;	  /* the bytes replaced: none when end == at */
	size_t text, len; /* in texts */
	size_t order;	  /* edits at one offset are made in the order they were found */
	bool lines;	  /* whole lines: a line break goes before them where the input lacks one */
};

struct edits {
	const char *in;
	const struct ydoc *d;
	struct edit *e;
	size_t n, cap;
	struct ybuf texts;
	size_t step, seqoff; /* the document's indentation step, and its block sequences' under a key */
	bool have_step, have_seqoff;
	size_t fail_line;
};

/* Why an edit has no place: 1, remembering the line of what stands there. */
static int no_place(struct edits *x, const struct ynode *n)
{
	if (!x->fail_line)
		x->fail_line = n && n->line ? n->line : x->d->root->line;
	return 1;
}

static int add_edit(struct edits *x, size_t at, size_t end, const struct ybuf *t, bool lines)
{
	struct edit *e;

	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 16;
		struct edit *p = realloc(x->e, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		x->e = p;
		x->cap = cap;
	}
	e = &x->e[x->n];
	e->at = at;
	e->end = end;
	e->text = x->texts.len;
	e->len = t->len;
	e->order = x->n++;
	e->lines = lines;
	return ybuf_add(&x->texts, t->p ? t->p : "", t->len);
}

static bool is_flow(const struct ynode *n)
{
	return (n->kind == YNODE_SEQ && n->style == YAML_FLOW_SEQUENCE_STYLE) ||
	       (n->kind == YNODE_MAP && n->style == YAML_FLOW_MAPPING_STYLE);
}

/* A non-empty block collection: written on lines of its own. */
static bool is_block(const struct ynode *n)
{
	return (n->kind == YNODE_SEQ || n->kind == YNODE_MAP) && !is_flow(n) && n->n > 0;
}

static size_t line_start(const struct edits *x, size_t p)
{
	while (p > x->d->start && x->in[p - 1] != '\n')
		p--;
	return p;
}

static size_t column(const struct edits *x, size_t p)
{
	return p - line_start(x, p);
}

/* Where the text of a node read ends: a block collection's end mark lies past comments and blank lines. */
static size_t deep_end(const struct ynode *n, int depth)
{
	if ((n->kind == YNODE_SEQ || n->kind == YNODE_MAP) && !is_flow(n) && n->orig_n > 0 && depth < YDOC_MAX_DEPTH)
		return deep_end(n->orig[n->orig_n - 1], depth + 1);
	return n->end;
}

/* The start of the line after the one p stands on (p itself at a line's start). */
static size_t next_line(const struct edits *x, size_t p)
{
	if (p > x->d->start && x->in[p - 1] == '\n')
		return p;
	while (p < x->d->end && x->in[p] != '\n')
		p++;
	return p < x->d->end ? p + 1 : p;
}

/* Whether only spaces (and for a sequence's item one "-") stand before p on its line. */
static bool own_line(const struct edits *x, size_t p, bool dash)
{
	size_t i = line_start(x, p);

	for (; i < p; i++) {
		if (dash && x->in[i] == '-') {
			dash = false;
			continue;
		}
		if (x->in[i] != ' ')
			return false;
	}
	return true;
}

/*
 * Whether a block collection read is laid out as new lines for it would
 * be: each item (of a mapping, each key but a first one after a "- ") on
 * a line of its own, all at one column, a sequence's dashes at its own
 * column. YAML takes others too ("key:   - a" on one line, items at two
 * indentations), where lines written at one column would be read as
 * another structure.
 */
static bool block_regular(const struct edits *x, const struct ynode *n)
{
	bool map = n->kind == YNODE_MAP;
	size_t step = map ? 2 : 1, col = column(x, n->orig[0]->start), i;

	for (i = 0; i < n->orig_n; i += step) {
		const struct ynode *it = n->orig[i];

		if (column(x, it->start) != col)
			return false;
		if (map ? i > 0 && !own_line(x, it->start, false) : !own_line(x, it->start, true))
			return false;
		if (!map && (it->start < 2 || x->in[it->start - 2] != '-' || column(x, it->start - 2) != column(x, n->start)))
			return false;
	}
	return true;
}

/* Before the comment lines right above p, which speak of what follows them. */
static size_t above_comments(const struct edits *x, size_t p)
{
	while (p > x->d->start) {
		size_t q = line_start(x, p - 1), i = q;

		while (i < p && (x->in[i] == ' ' || x->in[i] == '\t'))
			i++;
		if (i >= p || x->in[i] != '#')
			break;
		p = q;
	}
	return p;
}

/* The document's indentation, from the first block mapping or sequence under a key. */
static void read_style(struct edits *x, const struct ynode *n, int depth)
{
	size_t i;

	if ((n->kind != YNODE_SEQ && n->kind != YNODE_MAP) || depth > YDOC_MAX_DEPTH)
		return;
	for (i = 0; i < n->orig_n; i++) {
		const struct ynode *k = n->orig[i], *v = n->kind == YNODE_MAP && i + 1 < n->orig_n ? n->orig[++i] : k;

		if (n->kind == YNODE_MAP && !is_flow(n) && is_block(v) && v->orig_n > 0) {
			size_t kc = column(x, k->start);
			size_t vc = column(x, v->kind == YNODE_MAP ? v->orig[0]->start : v->start);

			if (v->kind == YNODE_MAP && !x->have_step && vc > kc) {
				x->step = vc - kc;
				x->have_step = true;
			} else if (v->kind == YNODE_SEQ && !x->have_seqoff && vc >= kc) {
				x->seqoff = vc - kc;
				x->have_seqoff = true;
			}
		}
		read_style(x, v, depth + 1);
	}
}

static int spaces(struct ybuf *t, size_t n)
{
	static const char blanks[] = "                                ";
	int rc = 0;

	while (rc == 0 && n > 0) {
		size_t k = n < sizeof(blanks) - 1 ? n : sizeof(blanks) - 1;

		rc = ybuf_add(t, blanks, k);
		n -= k;
	}
	return rc;
}

/* A new node's text on one line; 1 when libyaml cannot write it so. */
static int leaf(const struct ynode *n, bool in_block, struct ybuf *t)
{
	int rc = ydoc_flow_text(n, in_block, t);

	return rc == -EINVAL ? 1 : rc;
}

static int render_coll(struct edits *x, const struct ynode *v, size_t indent, struct ybuf *t, int depth);

/* "key: value" at indent (or after prefix, a sequence's "- "), a block value on the lines after. */
static int render_pair(struct edits *x, const struct ynode *k, const struct ynode *v, size_t indent,
		       const char *prefix, struct ybuf *t, int depth)
{
	int rc = prefix ? ybuf_add(t, prefix, strlen(prefix)) : spaces(t, indent);

	if (rc == 0)
		rc = leaf(k, true, t);
	if (rc == 0 && is_block(v)) {
		rc = ybuf_add(t, ":\n", 2);
		return rc ? rc : render_coll(x, v, indent, t, depth + 1);
	}
	if (rc == 0)
		rc = ybuf_add(t, ": ", 2);
	if (rc == 0)
		rc = leaf(v, true, t);
	return rc ? rc : ybuf_add(t, "\n", 1);
}

/* One item of a block sequence: its "-" at dash, its text at at. */
static int render_item(struct edits *x, const struct ynode *item, size_t dash, size_t at, struct ybuf *t, int depth)
{
	char prefix[256];
	size_t i;
	int rc;

	if (at <= dash || at >= sizeof(prefix))
		return 1;
	memset(prefix, ' ', at);
	prefix[dash] = '-';
	prefix[at] = '\0';
	if (item->kind == YNODE_MAP && is_block(item)) {
		for (i = 0, rc = 0; rc == 0 && i + 1 < item->n; i += 2)
			rc = render_pair(x, item->items[i], item->items[i + 1], at, i ? NULL : prefix, t, depth);
		return rc;
	}
	rc = ybuf_add(t, prefix, at);
	if (rc == 0)
		rc = leaf(item, true, t);
	return rc ? rc : ybuf_add(t, "\n", 1);
}

/* A new block collection under a key at indent. */
static int render_coll(struct edits *x, const struct ynode *v, size_t indent, struct ybuf *t, int depth)
{
	size_t i, dash = indent + x->seqoff;
	int rc = 0;

	if (depth > YDOC_MAX_DEPTH)
		return 1;
	for (i = 0; rc == 0 && i < v->n; i += v->kind == YNODE_MAP ? 2 : 1)
		rc = v->kind == YNODE_MAP ? render_pair(x, v->items[i], v->items[i + 1], indent + x->step, NULL, t, depth)
					  : render_item(x, v->items[i], dash, dash + 2, t, depth);
	return rc;
}

/* A node read, replaced by a new one: its bytes are the new one's flow text. */
static int replace(struct edits *x, const struct ynode *old, const struct ynode *now, bool in_block)
{
	struct ybuf t = {0};
	int rc;

	if (is_block(old) || old->start == old->end)
		return no_place(x, old);
	rc = leaf(now, in_block, &t);
	if (rc == 0)
		rc = add_edit(x, old->start, old->end, &t, false);
	ybuf_free(&t);
	return rc == 1 ? no_place(x, old) : rc;
}

/* A mapping's value read, replaced: in place, or (a null made a block collection) on the lines after its key. */
static int replace_value(struct edits *x, const struct ynode *map, const struct ynode *key, const struct ynode *old,
			 const struct ynode *now)
{
	struct ybuf t = {0};
	size_t colon = key->end, eol;
	int rc;

	if (old->start < old->end && (!is_block(now) || is_flow(map)))
		return replace(x, old, now, !is_flow(map));
	while (colon < x->d->end && (x->in[colon] == ' ' || x->in[colon] == '\t'))
		colon++;
	if (colon >= x->d->end || x->in[colon] != ':' || old->kind != YNODE_SCALAR)
		return no_place(x, key);
	colon++;
	if (!is_block(now) || is_flow(map)) {
		rc = ybuf_add(&t, " ", 1);
		if (rc == 0)
			rc = leaf(now, !is_flow(map), &t);
		if (rc == 0)
			rc = add_edit(x, colon, colon, &t, false);
		ybuf_free(&t);
		return rc == 1 ? no_place(x, key) : rc;
	}
	/* A null on the key's line ("volumes: ~", "volumes:"): taken out, the collection on the lines after. */
	eol = next_line(x, colon);
	if (old->start < old->end && (old->start < colon || old->end > eol))
		return no_place(x, key);
	rc = old->start < old->end ? add_edit(x, colon, old->end, &t, false) : 0;
	if (rc == 0)
		rc = render_coll(x, now, column(x, key->start), &t, 0);
	if (rc == 0)
		rc = add_edit(x, eol, eol, &t, true);
	ybuf_free(&t);
	return rc == 1 ? no_place(x, key) : rc;
}

/*
 * New items i (a key and value in a mapping) before the item read j, or
 * after the last one: between a flow collection's items, or on lines of
 * their own in a block one.
 */
static int insert(struct edits *x, const struct ynode *n, size_t i, size_t j, bool *first_in_empty)
{
	bool map = n->kind == YNODE_MAP;
	const struct ynode *item = n->items[i], *last = n->orig_n ? n->orig[n->orig_n - 1] : NULL;
	struct ybuf t = {0};
	size_t at;
	int rc = 0;

	if (is_flow(n)) {
		bool before = j < n->orig_n;

		if (!before && last)
			rc = ybuf_add(&t, ", ", 2);
		else if (!before && !*first_in_empty)
			rc = ybuf_add(&t, ", ", 2);
		if (rc == 0)
			rc = leaf(item, false, &t);
		if (rc == 0 && map)
			rc = ybuf_add(&t, ": ", 2);
		if (rc == 0 && map)
			rc = leaf(n->items[i + 1], false, &t);
		if (rc == 0 && before)
			rc = ybuf_add(&t, ", ", 2);
		at = before ? n->orig[j]->start : last ? last->end : n->start + 1;
		*first_in_empty = false;
	} else {
		size_t col, dash;

		if (!n->orig_n || !block_regular(x, n))
			return no_place(x, n);
		col = column(x, n->orig[0]->start);
		dash = column(x, n->start);
		if (j < n->orig_n && own_line(x, n->orig[j]->start, !map))
			at = above_comments(x, line_start(x, n->orig[j]->start));
		else if (j < n->orig_n)
			/* "- name: x": after the first item (or pair) instead, its place not mattering. */
			at = next_line(x, deep_end(n->orig[j ? j - 1 : j + map], 0));
		else
			at = next_line(x, deep_end(last, 0));
		rc = map ? render_pair(x, item, n->items[i + 1], col, NULL, &t, 0)
			 : render_item(x, item, dash, col, &t, 0);
	}
	if (rc == 0)
		rc = add_edit(x, at, at, &t, !is_flow(n));
	ybuf_free(&t);
	return rc == 1 ? no_place(x, item) : rc;
}

/* One change of the tree as a text edit (the change walk, yamldoc-changes.c, finds them). */
static int edit_change(void *data, const struct ydoc_change *c)
{
	struct edits *x = data;
	bool first = c->first_added;

	switch (c->kind) {
	case YDOC_ADDED:
		return insert(x, c->coll, c->i, c->j, &first);
	case YDOC_REPLACED:
		if (c->coll->kind == YNODE_MAP)
			return replace_value(x, c->coll, c->at->key, c->old, c->now);
		return replace(x, c->old, c->now, !is_flow(c->coll));
	case YDOC_REWRITTEN:
		/* Reordered, or taken out: where the first difference stands. */
		return no_place(x, c->i < c->coll->n ? c->coll->items[c->i] : c->coll->orig[c->j]);
	}
	return 0;
}

static int by_offset(const void *a, const void *b)
{
	const struct edit *p = a, *q = b;

	if (p->at != q->at)
		return p->at < q->at ? -1 : 1;
	return p->order < q->order ? -1 : p->order > q->order;
}

/* A text added, its line breaks made CR LF in a CR LF document. */
static int put(struct ybuf *out, const char *p, size_t n, bool crlf)
{
	size_t i, from = 0;
	int rc = 0;

	for (i = 0; crlf && rc == 0 && i < n; i++)
		if (p[i] == '\n') {
			rc = ybuf_add(out, p + from, i - from);
			if (rc == 0)
				rc = ybuf_add(out, "\r\n", 2);
			from = i + 1;
		}
	return rc ? rc : ybuf_add(out, p + from, n - from);
}

/*
 * Whether the document breaks a line otherwise than by LF or CR LF: a CR
 * alone, or NEL, LS or PS, which YAML 1.1 also breaks lines at. The edits
 * find lines and columns by LF alone.
 */
static bool other_break(const char *in, size_t start, size_t end)
{
	size_t i;

	for (i = start; i < end; i++) {
		const unsigned char *c = (const unsigned char *)in + i;

		if ((c[0] == '\r' && (i + 1 == end || c[1] != '\n')) ||
			 (c[0] == 0xc2 && i + 1 < end && c[1] == 0x85) ||
			 (c[0] == 0xe2 && i + 2 < end && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9)))
			return true;
	}
	return false;
}

int ydoc_write_edits(const struct ystream *s, struct ydoc *d, struct ybuf *out)
{
	struct edits x = {.in = s->input, .d = d, .step = 2};
	size_t i, from = d->start, mark = out->len;
	int rc;

	if (!d->root)
		return 1;
	if (other_break(s->input, d->start, d->end)) {
		d->rewritten_line = d->root->line;
		return 1;
	}
	read_style(&x, d->root, 0);
	rc = ydoc_changes(d->root, edit_change, &x);
	if (rc == -ELOOP)
		rc = no_place(&x, d->root);
	if (rc == 0)
		qsort(x.e, x.n, sizeof(x.e[0]), by_offset);
	for (i = 0; rc == 0 && i < x.n; i++) {
		const struct edit *e = &x.e[i];

		if (e->at < from || e->end > d->end) {
			rc = no_place(&x, d->root);
			break;
		}
		rc = ybuf_add(out, s->input + from, e->at - from);
		if (rc == 0 && e->lines && e->at > d->start && s->input[e->at - 1] != '\n')
			rc = put(out, "\n", 1, d->crlf);
		if (rc == 0)
			rc = put(out, x.texts.p + e->text, e->len, d->crlf);
		from = e->end;
	}
	if (rc == 0)
		rc = ybuf_add(out, s->input + from, d->end - from);
	if (rc != 0)
		out->len = mark;
	if (rc == 1)
		d->rewritten_line = x.fail_line;
	free(x.e);
	ybuf_free(&x.texts);
	return rc;
}

/*
 * The stream written: a document left alone as its bytes, a changed one
 * as its bytes with the edits, and one whose edits have no place (or
 * JSON, written as JSON) whole from its tree (yamldoc.c's emitter).
 */
int ydoc_write(struct ystream *s, struct ybuf *out)
{
	size_t i;
	int rc;

	for (i = 0; i < s->ndocs; i++) {
		struct ydoc *d = &s->docs[i];
		struct ybuf body = {0};
		size_t pre;

		if (!d->changed || !d->root) {
			rc = ybuf_add(out, s->input + d->start, d->end - d->start);
			if (rc < 0)
				return rc;
			continue;
		}
		if (!d->json) {
			/* Its own bytes with the changes made as edits, where each has a place. */
			rc = ydoc_write_edits(s, d, out);
			if (rc < 0)
				return rc;
			if (rc == 0)
				continue;
			d->rewritten = true;
		}
		/* What precedes the root (comments, directives, "---") stays as it was. */
		pre = d->body - d->start;
		while (pre > 0 && (s->input[d->start + pre - 1] == ' ' || s->input[d->start + pre - 1] == '\t'))
			pre--;
		rc = ybuf_add(out, s->input + d->start, pre);
		if (rc == 0 && pre > 0 && s->input[d->start + pre - 1] != '\n')
			rc = ybuf_add(out, d->crlf ? "\r\n" : "\n", d->crlf ? 2 : 1);
		if (rc == 0)
			rc = ydoc_emit_whole(s, d, &body);
		/* libyaml ends a stream that may continue with "..."; the next document's "---" follows here. */
		if (rc == 0 && !d->json) {
			const char *dots = d->crlf ? "...\r\n" : "...\n";
			size_t n = strlen(dots);

			if (body.len >= n && memcmp(body.p + body.len - n, dots, n) == 0)
				body.len -= n;
		}
		if (rc == 0)
			rc = ybuf_add(out, body.p ? body.p : "", body.len);
		/* Whatever followed the root (an explicit "...") stays too. */
		if (rc == 0 && d->end > d->body_end) {
			const char *t = s->input + d->body_end;
			size_t n = d->end - d->body_end, k = 0;

			/* Only an explicit end marker: comments after the root went with the tree. */
			while (k < n && !((k == 0 || t[k - 1] == '\n') && n - k >= 3 && memcmp(t + k, "...", 3) == 0))
				k++;
			if (k < n)
				rc = ybuf_add(out, t + k, n - k);
		}
		ybuf_free(&body);
		if (rc == -EINVAL)
			s->failed_line = d->root->line;
		if (rc < 0)
			return rc;
	}
	return ybuf_add(out, s->input + s->tail, s->len - s->tail);
}
