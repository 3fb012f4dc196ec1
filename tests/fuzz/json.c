/*
 * The JSON rearguard writes: the summary (termination log, done file, last
 * log line) and every log line in --log-format json. Strings in it come
 * from other containers (process names, cgroup paths, report names) and may
 * hold any byte. The input describes a document (nested arrays and objects,
 * strings, numbers, booleans, nulls, raw values); it is written through
 * jbuf, read back by the strict parser below, and must come back equal:
 * the same structure, the same numbers, the same strings, where bytes that
 * are not UTF-8 become U+FFFD. Written into a fixed buffer that is too
 * small, the result is the start of the same text and the buffer says it
 * failed. A log line made of the same strings must parse too.
 */
#include "config.h"

#include "fuzz.h"
#include "json.h"
#include "log.h"

#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- what the input asks to write ------------------------------------- */

enum gen_kind { G_STR, G_STRN, G_NULLSTR, G_INT, G_BOOL, G_NULL, G_MS, G_ARR, G_OBJ, G_RAW, G_KINDS };

struct gen {
	enum gen_kind kind;
	char *s; /* G_STR (terminated), G_STRN (n bytes, NULs included) */
	size_t n;
	long long v;
	struct gen *kids;
	char **keys; /* G_OBJ: one key per kid */
	size_t nkids;
};

#define MAX_DEPTH 6
#define MAX_NODES 400

static size_t nodes;

static void gen_make(struct fuzz_in *in, struct gen *g, int depth)
{
	uint8_t b = fuzz_byte(in);
	size_t i;

	memset(g, 0, sizeof(*g));
	g->kind = (enum gen_kind)(b % G_KINDS);
	if (++nodes > MAX_NODES || (depth >= MAX_DEPTH && (g->kind == G_ARR || g->kind == G_OBJ || g->kind == G_RAW)))
		g->kind = G_NULL;
	switch (g->kind) {
	case G_STR:
		g->s = fuzz_str(in);
		g->n = strlen(g->s);
		break;
	case G_STRN:
		g->n = fuzz_byte(in) % 32;
		if (g->n > in->n)
			g->n = in->n;
		g->s = fuzz_copy(in->p, g->n);
		in->p += g->n;
		in->n -= g->n;
		break;
	case G_INT:
	case G_MS:
		g->v = (long long)fuzz_u64(in);
		if (b & 0x80) /* also small numbers, where the milliseconds' decimals matter */
			g->v %= 100000;
		break;
	case G_BOOL:
		g->v = b >> 7;
		break;
	case G_ARR:
	case G_OBJ:
		g->nkids = fuzz_byte(in) % 6;
		g->kids = calloc(g->nkids ? g->nkids : 1, sizeof(*g->kids));
		g->keys = calloc(g->nkids ? g->nkids : 1, sizeof(*g->keys));
		for (i = 0; i < g->nkids; i++) {
			if (g->kind == G_OBJ)
				g->keys[i] = fuzz_str(in);
			gen_make(in, &g->kids[i], depth + 1);
		}
		break;
	case G_RAW:
		g->nkids = 1;
		g->kids = calloc(1, sizeof(*g->kids));
		gen_make(in, &g->kids[0], depth + 1);
		break;
	default:
		break;
	}
}

static void gen_free(struct gen *g)
{
	size_t i;

	for (i = 0; i < g->nkids; i++) {
		gen_free(&g->kids[i]);
		if (g->keys)
			free(g->keys[i]);
	}
	free(g->kids);
	free(g->keys);
	free(g->s);
}

static void gen_write(const struct gen *g, struct jbuf *j)
{
	struct jbuf sub;
	size_t i;

	switch (g->kind) {
	case G_STR:
		jbuf_str(j, g->s);
		break;
	case G_STRN:
		jbuf_strn(j, g->s, g->n);
		break;
	case G_NULLSTR:
		jbuf_str(j, NULL);
		break;
	case G_INT:
		jbuf_int(j, g->v);
		break;
	case G_BOOL:
		jbuf_bool(j, g->v != 0);
		break;
	case G_NULL:
		jbuf_null(j);
		break;
	case G_MS:
		jbuf_duration(j, g->v);
		break;
	case G_ARR:
	case G_OBJ:
		jbuf_begin(j, g->kind == G_ARR ? '[' : '{');
		for (i = 0; i < g->nkids; i++) {
			if (g->kind == G_OBJ)
				jbuf_key(j, g->keys[i]);
			gen_write(&g->kids[i], j);
		}
		jbuf_end(j, g->kind == G_ARR ? ']' : '}');
		break;
	case G_RAW:
		jbuf_init(&sub);
		gen_write(&g->kids[0], &sub);
		FUZZ_CHECK(!sub.failed && sub.buf);
		jbuf_raw_value(j, sub.buf);
		jbuf_free(&sub);
		break;
	default:
		abort();
	}
}

/* ---- what comes back ---------------------------------------------------- */

enum val_kind { V_NULL, V_TRUE, V_FALSE, V_NUM, V_STR, V_ARR, V_OBJ };

struct val {
	enum val_kind kind;
	char *s; /* V_STR: the decoded bytes; V_NUM: the number's text */
	size_t n;
	struct val *kids; /* V_OBJ: key, value, key, value... */
	size_t nkids;
};

static void val_free(struct val *v)
{
	size_t i;

	for (i = 0; i < v->nkids; i++)
		val_free(&v->kids[i]);
	free(v->kids);
	free(v->s);
}

struct text {
	char *s;
	size_t n;
};

static void text_add(struct text *t, const void *p, size_t n)
{
	t->s = realloc(t->s, t->n + n + 1);
	FUZZ_CHECK(t->s);
	memcpy(t->s + t->n, p, n);
	t->n += n;
	t->s[t->n] = '\0';
}

static void utf8_put(struct text *t, uint32_t cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	text_add(t, b, n);
}

/*
 * The code point of the UTF-8 sequence at p (at most n bytes) and its
 * length, or 0 when it is not one: decoded, then checked for the shortest
 * form, surrogates and the Unicode range, as RFC 3629 asks.
 */
static size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t v;

	if (n == 0)
		return 0;
	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2;
		v = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3;
		v = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4;
		v = p[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && v < 0x80) || (len == 3 && v < 0x800) || (len == 4 && v < 0x10000))
		return 0;
	if ((v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff)
		return 0;
	*cp = v;
	return len;
}

/* The string the reader must get back: UTF-8 kept, every other byte U+FFFD. */
static void sanitize(const char *s, size_t n, struct text *out)
{
	size_t i = 0, len;
	uint32_t cp;

	text_add(out, "", 0);
	while (i < n) {
		len = utf8_decode((const unsigned char *)s + i, n - i, &cp);
		if (len) {
			text_add(out, s + i, len);
			i += len;
		} else {
			utf8_put(out, 0xfffd);
			i++;
		}
	}
}

/* A strict RFC 8259 reader: no leniency, so that anything off is caught. */
struct reader {
	const char *p, *end;
	int depth;
};

static bool read_value(struct reader *r, struct val *v);

static int hex4(const char *p)
{
	int v = 0, i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static bool read_string(struct reader *r, struct val *v)
{
	struct text t = {NULL, 0};
	uint32_t cp;
	size_t len;

	text_add(&t, "", 0);
	r->p++; /* the opening quote */
	for (;;) {
		unsigned char c;

		if (r->p >= r->end)
			goto bad;
		c = (unsigned char)*r->p;
		if (c == '"')
			break;
		if (c < 0x20)
			goto bad;
		if (c != '\\') {
			len = utf8_decode((const unsigned char *)r->p, (size_t)(r->end - r->p), &cp);
			if (!len)
				goto bad;
			text_add(&t, r->p, len);
			r->p += len;
			continue;
		}
		if (r->end - r->p < 2)
			goto bad;
		switch (r->p[1]) {
		case '"':
			text_add(&t, "\"", 1);
			break;
		case '\\':
			text_add(&t, "\\", 1);
			break;
		case '/':
			text_add(&t, "/", 1);
			break;
		case 'b':
			text_add(&t, "\b", 1);
			break;
		case 'f':
			text_add(&t, "\f", 1);
			break;
		case 'n':
			text_add(&t, "\n", 1);
			break;
		case 'r':
			text_add(&t, "\r", 1);
			break;
		case 't':
			text_add(&t, "\t", 1);
			break;
		case 'u': {
			int hi, lo;

			if (r->end - r->p < 6 || (hi = hex4(r->p + 2)) < 0)
				goto bad;
			if (hi >= 0xdc00 && hi <= 0xdfff)
				goto bad;
			if (hi >= 0xd800 && hi <= 0xdbff) {
				if (r->end - r->p < 12 || r->p[6] != '\\' || r->p[7] != 'u' ||
				    (lo = hex4(r->p + 8)) < 0 || lo < 0xdc00 || lo > 0xdfff)
					goto bad;
				utf8_put(&t, 0x10000 + ((uint32_t)(hi - 0xd800) << 10) + (uint32_t)(lo - 0xdc00));
				r->p += 6;
			} else {
				utf8_put(&t, (uint32_t)hi);
			}
			r->p += 4;
			break;
		}
		default:
			goto bad;
		}
		r->p += 2;
	}
	r->p++;
	v->kind = V_STR;
	v->s = t.s;
	v->n = t.n;
	return true;
bad:
	free(t.s);
	return false;
}

static bool digits(struct reader *r)
{
	const char *start = r->p;

	while (r->p < r->end && *r->p >= '0' && *r->p <= '9')
		r->p++;
	return r->p > start;
}

static bool read_number(struct reader *r, struct val *v)
{
	const char *start = r->p;

	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p < r->end && *r->p == '0')
		r->p++;
	else if (!(r->p < r->end && *r->p >= '1' && *r->p <= '9') || !digits(r))
		return false;
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		if (!digits(r))
			return false;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (!digits(r))
			return false;
	}
	v->kind = V_NUM;
	v->n = (size_t)(r->p - start);
	v->s = fuzz_buf(v->n + 1);
	memcpy(v->s, start, v->n);
	v->s[v->n] = '\0';
	return true;
}

static void skip_ws(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static bool word(struct reader *r, const char *w, struct val *v, enum val_kind kind)
{
	size_t n = strlen(w);

	if ((size_t)(r->end - r->p) < n || memcmp(r->p, w, n) != 0)
		return false;
	r->p += n;
	v->kind = kind;
	return true;
}

static bool read_container(struct reader *r, struct val *v, char close)
{
	bool object = close == '}';

	v->kind = object ? V_OBJ : V_ARR;
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return true;
	}
	for (;;) {
		v->kids = realloc(v->kids, (v->nkids + 2) * sizeof(*v->kids));
		FUZZ_CHECK(v->kids);
		memset(&v->kids[v->nkids], 0, 2 * sizeof(*v->kids));
		skip_ws(r);
		if (object) {
			if (r->p >= r->end || *r->p != '"' || !read_string(r, &v->kids[v->nkids]))
				return false;
			v->nkids++;
			skip_ws(r);
			if (r->p >= r->end || *r->p != ':')
				return false;
			r->p++;
		}
		if (!read_value(r, &v->kids[v->nkids]))
			return false;
		v->nkids++;
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return true;
		}
		return false;
	}
}

static bool read_value(struct reader *r, struct val *v)
{
	bool ok = false;

	memset(v, 0, sizeof(*v));
	skip_ws(r);
	if (r->p >= r->end || ++r->depth > 64)
		return false;
	switch (*r->p) {
	case '{':
		ok = read_container(r, v, '}');
		break;
	case '[':
		ok = read_container(r, v, ']');
		break;
	case '"':
		ok = read_string(r, v);
		break;
	case 't':
		ok = word(r, "true", v, V_TRUE);
		break;
	case 'f':
		ok = word(r, "false", v, V_FALSE);
		break;
	case 'n':
		ok = word(r, "null", v, V_NULL);
		break;
	default:
		ok = read_number(r, v);
		break;
	}
	r->depth--;
	return ok;
}

/* Parses the whole of s (n bytes) as one JSON text. */
static bool parse_json(const char *s, size_t n, struct val *v)
{
	struct reader r = {s, s + n, 0};

	if (!read_value(&r, v))
		return false;
	skip_ws(&r);
	return r.p == r.end;
}

/* ---- comparing ----------------------------------------------------------- */

static void same_string(const struct val *v, const char *s, size_t n)
{
	struct text want = {NULL, 0};

	FUZZ_CHECK(v->kind == V_STR);
	sanitize(s, n, &want);
	FUZZ_CHECK(v->n == want.n && memcmp(v->s, want.s, want.n) == 0);
	free(want.s);
}

static void same_number(const struct val *v, const char *text)
{
	FUZZ_CHECK(v->kind == V_NUM && strcmp(v->s, text) == 0);
}

static void same(const struct gen *g, const struct val *v)
{
	char num[64];
	size_t i;

	switch (g->kind) {
	case G_STR:
		same_string(v, g->s, g->n);
		break;
	case G_STRN:
		same_string(v, g->s, g->n);
		break;
	case G_NULLSTR:
	case G_NULL:
		FUZZ_CHECK(v->kind == V_NULL);
		break;
	case G_BOOL:
		FUZZ_CHECK(v->kind == (g->v ? V_TRUE : V_FALSE));
		break;
	case G_INT:
		snprintf(num, sizeof(num), "%lld", g->v);
		same_number(v, num);
		break;
	case G_MS:
		if (g->v < 0) {
			FUZZ_CHECK(v->kind == V_NULL);
			break;
		}
		/* Microseconds as milliseconds with three decimals. */
		snprintf(num, sizeof(num), "%lld.%03lld", g->v / 1000, g->v % 1000);
		same_number(v, num);
		break;
	case G_ARR:
		FUZZ_CHECK(v->kind == V_ARR && v->nkids == g->nkids);
		for (i = 0; i < g->nkids; i++)
			same(&g->kids[i], &v->kids[i]);
		break;
	case G_OBJ:
		FUZZ_CHECK(v->kind == V_OBJ && v->nkids == 2 * g->nkids);
		for (i = 0; i < g->nkids; i++) {
			same_string(&v->kids[2 * i], g->keys[i], strlen(g->keys[i]));
			same(&g->kids[i], &v->kids[2 * i + 1]);
		}
		break;
	case G_RAW:
		same(&g->kids[0], v);
		break;
	default:
		abort();
	}
}

/* ---- the log ------------------------------------------------------------- */

static int memlog_fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	memlog_fd = memfd_create("fuzz-log", MFD_CLOEXEC);
	FUZZ_CHECK(memlog_fd >= 0);
	return 0;
}

/* The line log_msg wrote since the last call, without its newline. */
static char *log_line(size_t *len)
{
	off_t end = lseek(memlog_fd, 0, SEEK_CUR);
	char *line = fuzz_buf((size_t)end + 1);

	FUZZ_CHECK(end > 0 && pread(memlog_fd, line, (size_t)end, 0) == end);
	FUZZ_CHECK(line[end - 1] == '\n');
	FUZZ_CHECK(ftruncate(memlog_fd, 0) == 0 && lseek(memlog_fd, 0, SEEK_SET) == 0);
	line[end - 1] = '\0';
	*len = (size_t)end - 1;
	return line;
}

/*
 * One log line with the first strings of the document as message and
 * field values, and the document itself as a JSON field: in JSON it must
 * parse with every field intact; in text it must stay one line.
 */
static void log_check(const struct gen *g, const char *msg, const char *key, bool json)
{
	char *raw = NULL, *line, num[32];
	struct val v;
	struct jbuf j;
	size_t len;

	jbuf_init(&j);
	gen_write(g, &j);
	raw = j.buf;
	log_setup(LOG_DEBUG, json ? LOG_JSON : LOG_TEXT, memlog_fd);
	log_msg(LOG_WARN,
		FIELDS(LF_STR(key, msg), LF_INT("n", (long long)strlen(msg)), LF_DURATION("t", -(long long)strlen(key)),
		       LF_JSON("doc", raw)),
		"%s", msg);
	line = log_line(&len);
	if (!json) {
		/* Keys and the message are the program's own; values are escaped. */
		if (!strchr(msg, '\n') && !strchr(key, '\n') && !strchr(raw, '\n'))
			FUZZ_CHECK(!strchr(line, '\n'));
	} else if (len < 65534) { /* a longer line was cut, as documented */
		FUZZ_CHECK(parse_json(line, len, &v));
		FUZZ_CHECK(v.kind == V_OBJ && v.nkids == 14);
		same_string(&v.kids[0], "ts", 2);
		same_string(&v.kids[3], "warn", 4);
		/* vsnprintf cuts the message at 2047 bytes. */
		same_string(&v.kids[5], msg, strnlen(msg, 2047));
		same_string(&v.kids[6], key, strlen(key));
		same_string(&v.kids[7], msg, strlen(msg));
		snprintf(num, sizeof(num), "%zu", strlen(msg));
		same_number(&v.kids[9], num);
		FUZZ_CHECK(v.kids[11].kind == V_NULL);
		same_string(&v.kids[12], "doc", 3);
		same(g, &v.kids[13]);
		val_free(&v);
	}
	free(line);
	jbuf_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	size_t cap = 1 + fuzz_byte(&in) * 4u;
	char *msg = fuzz_str(&in), *key = fuzz_str(&in), *fixed_buf;
	struct jbuf full, fixed;
	struct gen g;
	struct val v;

	nodes = 0;
	gen_make(&in, &g, 0);

	jbuf_init(&full);
	gen_write(&g, &full);
	FUZZ_CHECK(!full.failed && full.buf && strlen(full.buf) == full.len);
	FUZZ_CHECK(parse_json(full.buf, full.len, &v));
	same(&g, &v);
	val_free(&v);

	/* The same document into a fixed buffer: all of it, or its start and failed. */
	fixed_buf = fuzz_buf(cap);
	jbuf_init_fixed(&fixed, fixed_buf, cap);
	gen_write(&g, &fixed);
	FUZZ_CHECK(fixed.len < cap && fixed_buf[fixed.len] == '\0' && strlen(fixed_buf) == fixed.len);
	if (full.len < cap) {
		FUZZ_CHECK(!fixed.failed && fixed.len == full.len && memcmp(fixed_buf, full.buf, full.len) == 0);
	} else {
		FUZZ_CHECK(fixed.failed && fixed.len == cap - 1 && memcmp(fixed_buf, full.buf, cap - 1) == 0);
	}
	jbuf_free(&fixed);
	free(fixed_buf);
	jbuf_free(&full);

	if (*key) {
		log_check(&g, msg, key, true);
		log_check(&g, msg, key, false);
	}
	gen_free(&g);
	free(msg);
	free(key);
	return 0;
}
