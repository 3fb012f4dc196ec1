/*
 * The webhook's certificate and key: loading and checking a pair with
 * GnuTLS, the one that serves, the ones replaced and still held, and the
 * watch that reloads (webhook-cert.h says how to use it).
 */
#include "config.h"

#include "webhook-cert.h"

#include "log.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/x509.h>

#define CHAIN_MAX 8             /* the certificate and its intermediates */
#define FILE_MAX (1u << 20)     /* a PEM file, at most */
#define SETTLE_S 0.2            /* after the last change seen: the files are looked at then */
#define POLL_S 60.0             /* the look that does not wait for an event */
#define ERR_MAX 512

struct wcert_pair {
	gnutls_pcert_st certs[CHAIN_MAX];
	unsigned ncerts;
	gnutls_privkey_t key;
	int64_t not_before, not_after; /* Unix seconds */
	char subject[256], serial[80];
	unsigned users;                /* open connections begun while it served */
	struct wcert_pair *next;       /* replaced: the next newer one replaced */
};

/* What a path resolves to: a change in any of these is a file to read again. */
struct file_id {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	off_t size;
	int err; /* stat's errno: a file that is gone is a state too */
};

static struct {
	const char *paths[2]; /* the certificate, the key */
	struct wcert_pair *current;
	struct wcert_pair *replaced, **replaced_tail; /* oldest first */
	struct file_id loaded[2], refused[2];
	bool have_refused;
	bool retry; /* the pair refused is tried again at its notBefore, files unchanged */
	unsigned long reloads_ok, reloads_failed;
	int64_t not_before;	  /* of the pair refused last as not valid yet (load: -EAGAIN) */
	struct ev_loop *loop;
	int inotify;
	ev_io io;
	ev_timer settle, poll, valid; /* valid: at the notBefore of a pair refused as not valid yet */
} c = { .inotify = -1 };

static void pair_free(struct wcert_pair *p)
{
	unsigned i;

	for (i = 0; i < p->ncerts; i++)
		gnutls_pcert_deinit(&p->certs[i]);
	if (p->key)
		gnutls_privkey_deinit(p->key);
	free(p);
}

static void format_time(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(out, 32, "%lld", (long long)t);
}

/* A whole file, at most FILE_MAX bytes, in a buffer of the caller's to free. */
static int read_file(const char *path, gnutls_datum_t *d)
{
	size_t len = 0;
	char *buf = malloc(FILE_MAX + 1);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = read_small_at(AT_FDCWD, path, 0, buf, FILE_MAX + 1, &len);
	if (rc == 0 && len >= FILE_MAX)
		rc = -EFBIG;
	if (rc < 0) {
		free(buf);
		return rc;
	}
	d->data = (unsigned char *)buf;
	d->size = (unsigned)len;
	return 0;
}

/* The subject, serial and validity of the first certificate, for the log and the checks. */
static int describe(struct wcert_pair *p, char *err, size_t errlen)
{
	gnutls_x509_crt_t crt;
	gnutls_datum_t dn = { NULL, 0 };
	unsigned char serial[40];
	size_t n = sizeof(serial), i;
	int rc;

	if ((rc = gnutls_x509_crt_init(&crt)) < 0)
		return failf(err, errlen, -EINVAL, "%s", gnutls_strerror(rc));
	rc = gnutls_x509_crt_import(crt, &p->certs[0].cert, GNUTLS_X509_FMT_DER);
	if (rc >= 0) {
		p->not_before = (int64_t)gnutls_x509_crt_get_activation_time(crt);
		p->not_after = (int64_t)gnutls_x509_crt_get_expiration_time(crt);
		if (gnutls_x509_crt_get_dn3(crt, &dn, 0) >= 0)
			snprintf(p->subject, sizeof(p->subject), "%.*s", (int)dn.size, (const char *)dn.data);
		gnutls_free(dn.data);
		if (gnutls_x509_crt_get_serial(crt, serial, &n) >= 0)
			for (i = 0; i < n && 2 * i + 2 < sizeof(p->serial); i++)
				snprintf(p->serial + 2 * i, 3, "%02x", serial[i]);
	}
	gnutls_x509_crt_deinit(crt);
	if (rc < 0)
		return failf(err, errlen, -EINVAL, "%s", gnutls_strerror(rc));
	if (p->not_before == -1 || p->not_after == -1)
		return failf(err, errlen, -EINVAL, "its validity cannot be read");
	return 0;
}

/* The key's public half is the certificate's: compared by their SHA-256 key ids. */
static int key_matches(struct wcert_pair *p, char *err, size_t errlen)
{
	unsigned char a[64], b[64];
	size_t na = sizeof(a), nb = sizeof(b);
	gnutls_pubkey_t pub;
	int rc;

	if ((rc = gnutls_pubkey_init(&pub)) < 0)
		return failf(err, errlen, -EINVAL, "%s", gnutls_strerror(rc));
	rc = gnutls_pubkey_import_privkey(pub, p->key, 0, 0);
	if (rc >= 0)
		rc = gnutls_pubkey_get_key_id(pub, GNUTLS_KEYID_USE_SHA256, b, &nb);
	gnutls_pubkey_deinit(pub);
	if (rc >= 0)
		rc = gnutls_pubkey_get_key_id(p->certs[0].pubkey, GNUTLS_KEYID_USE_SHA256, a, &na);
	if (rc < 0)
		return failf(err, errlen, -EINVAL, "cannot compare the key with the certificate: %s", gnutls_strerror(rc));
	if (na != nb || memcmp(a, b, na) != 0)
		return failf(err, errlen, -EINVAL, "the key %s does not match the certificate %s", c.paths[1], c.paths[0]);
	return 0;
}

/*
 * Valid now: a pair not yet valid or expired would fail every handshake
 * the API server makes. -EAGAIN for one not valid yet, c.not_before saying
 * when it will be.
 */
static int valid_now(const struct wcert_pair *p, char *err, size_t errlen)
{
	int64_t now = real_us() / US_PER_S;
	char when[32];

	if (now < p->not_before) {
		format_time(p->not_before, when);
		c.not_before = p->not_before;
		failf(err, errlen, -EINVAL, "the certificate %s is not valid before %s", c.paths[0], when);
		return -EAGAIN;
	}
	if (now >= p->not_after) {
		format_time(p->not_after, when);
		return failf(err, errlen, -EINVAL, "the certificate %s expired on %s", c.paths[0], when);
	}
	return 0;
}

static int import_certs(struct wcert_pair *p, const gnutls_datum_t *pem, char *err, size_t errlen)
{
	int rc;

	p->ncerts = CHAIN_MAX;
	rc = gnutls_pcert_list_import_x509_raw(p->certs, &p->ncerts, pem, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0) {
		p->ncerts = 0;
		if (rc == GNUTLS_E_SHORT_MEMORY_BUFFER)
			return failf(err, errlen, -EINVAL, "cannot use the certificate %s: more than %d certificates in it",
				     c.paths[0], CHAIN_MAX);
		return failf(err, errlen, -EINVAL, "cannot use the certificate %s: not a PEM certificate (%s)", c.paths[0],
			     gnutls_strerror(rc));
	}
	if (p->ncerts == 0)
		return failf(err, errlen, -EINVAL, "cannot use the certificate %s: no certificate in it", c.paths[0]);
	return 0;
}

static int import_key(struct wcert_pair *p, const gnutls_datum_t *pem, char *err, size_t errlen)
{
	int rc = gnutls_privkey_init(&p->key);

	if (rc >= 0)
		rc = gnutls_privkey_import_x509_raw(p->key, pem, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0)
		return failf(err, errlen, -EINVAL, "cannot use the key %s: not a PEM private key without a password (%s)",
			     c.paths[1], gnutls_strerror(rc));
	return 0;
}

/* Reads and checks a pair: a new one, or -errno with one line in err. */
static int load(struct wcert_pair **out, char *err, size_t errlen)
{
	gnutls_datum_t pem[2] = { { NULL, 0 }, { NULL, 0 } };
	struct wcert_pair *p = calloc(1, sizeof(*p));
	int rc = p ? 0 : -ENOMEM, i;
	char inner[ERR_MAX];

	for (i = 0; i < 2 && rc == 0; i++) {
		rc = read_file(c.paths[i], &pem[i]);
		if (rc < 0)
			failf(err, errlen, -EINVAL, "cannot read %s %s: %s", i ? "the key" : "the certificate", c.paths[i],
			      rc == -EFBIG ? "larger than 1 MiB" : strerror(-rc));
	}
	if (rc == 0)
		rc = import_certs(p, &pem[0], err, errlen);
	if (rc == 0)
		rc = import_key(p, &pem[1], err, errlen);
	if (rc == 0 && (rc = describe(p, inner, sizeof(inner))) < 0)
		failf(err, errlen, -EINVAL, "cannot use the certificate %s: %s", c.paths[0], inner);
	if (rc == 0)
		rc = key_matches(p, err, errlen);
	if (rc == 0)
		rc = valid_now(p, err, errlen);
	for (i = 0; i < 2; i++) {
		if (pem[i].data)
			gnutls_memset(pem[i].data, 0, pem[i].size); /* the key's bytes do not linger in the heap */
		free(pem[i].data);
	}
	if (rc == -ENOMEM || !p)
		failf(err, errlen, -EINVAL, "out of memory");
	if (rc < 0) {
		if (p)
			pair_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

static void identify(struct file_id id[2])
{
	struct stat st;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&id[i], 0, sizeof(id[i]));
		if (stat(c.paths[i], &st) < 0) {
			id[i].err = errno;
			continue;
		}
		id[i].dev = st.st_dev;
		id[i].ino = st.st_ino;
		id[i].mtime = st.st_mtim;
		id[i].size = st.st_size;
	}
}

static bool same(const struct file_id a[2], const struct file_id b[2])
{
	int i;

	for (i = 0; i < 2; i++)
		if (a[i].dev != b[i].dev || a[i].ino != b[i].ino || a[i].mtime.tv_sec != b[i].mtime.tv_sec ||
		    a[i].mtime.tv_nsec != b[i].mtime.tv_nsec || a[i].size != b[i].size || a[i].err != b[i].err)
			return false;
	return true;
}

/*
 * Frees the replaced pairs no connection may use any more, oldest first. A
 * connection holds the pair that served when it opened, but its handshake
 * may come after a reload and take a newer one: a pair goes only when it
 * and every older one are held by no one.
 */
static void reap(void)
{
	while (c.replaced && c.replaced->users == 0) {
		struct wcert_pair *p = c.replaced;

		c.replaced = p->next;
		if (!c.replaced)
			c.replaced_tail = &c.replaced;
		pair_free(p);
	}
}

static void log_pair(const struct wcert_pair *p, const char *msg)
{
	char until[32];

	format_time(p->not_after, until);
	log_msg(LOG_INFO,
		FIELDS(LF_STR("subject", p->subject), LF_STR("serial", p->serial), LF_STR("not_after", until),
		       LF_INT("chain", p->ncerts)),
		"%s", msg);
}

int wcert_load(const char *cert_path, const char *key_path, char *err, size_t errlen)
{
	int rc;

	c.paths[0] = cert_path;
	c.paths[1] = key_path;
	c.replaced_tail = &c.replaced;
	identify(c.loaded);
	rc = load(&c.current, err, errlen);
	if (rc == 0)
		log_pair(c.current, "certificate loaded");
	return rc;
}

/*
 * A pair refused as not valid yet is tried again at its notBefore: its
 * files do not change by then, so no event would say it. The timer runs on
 * the monotonic clock; should the wall clock be behind it then, the try
 * finds the pair not valid yet and sets the timer again.
 */
static void try_at_not_before(void)
{
	double in = (double)(c.not_before * US_PER_S - real_us()) / 1e6;

	if (!c.loop)
		return;
	ev_timer_stop(c.loop, &c.valid);
	ev_timer_set(&c.valid, in > 0 ? in + 0.001 : 0., 0.);
	ev_timer_start(c.loop, &c.valid);
}

/* Loads the pair again if its files are not the ones loaded (nor the ones refused last). */
static void check(void)
{
	struct wcert_pair *p = NULL;
	struct file_id now[2];
	char err[ERR_MAX];
	bool again;
	int rc;

	identify(now);
	again = c.retry && c.have_refused && same(now, c.refused);
	c.retry = false;
	if (same(now, c.loaded) || (c.have_refused && same(now, c.refused) && !again))
		return;
	if (c.loop)
		ev_timer_stop(c.loop, &c.valid);
	rc = load(&p, err, sizeof(err));
	if (rc < 0) {
		/* Once per state of the files: neither the periodic look nor a try again counts it again. */
		if (!again)
			c.reloads_failed++;
		memcpy(c.refused, now, sizeof(now));
		c.have_refused = true;
		log_msg(LOG_ERROR, FIELDS(LF_STR("error", err)),
			"certificate reload refused: the old certificate keeps serving%s",
			rc == -EAGAIN ? "; the new one is tried again once valid" : "");
		if (rc == -EAGAIN)
			try_at_not_before();
		return;
	}
	memcpy(c.loaded, now, sizeof(now));
	c.have_refused = false;
	c.reloads_ok++;
	*c.replaced_tail = c.current;
	c.replaced_tail = &c.current->next;
	c.current = p;
	log_pair(p, "certificate reloaded");
	reap();
}

/* The notBefore of the pair refused as not valid yet: the same files are tried again. */
static void on_valid(struct ev_loop *loop, ev_timer *t, int revents)
{
	c.retry = true;
	check();
}

/* Something changed in a watched directory: the files are looked at once the changes settle. */
static void on_inotify(struct ev_loop *loop, ev_io *w, int revents)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	while (read(c.inotify, buf, sizeof(buf)) > 0)
		;
	ev_timer_again(loop, &c.settle);
}

static void on_settle(struct ev_loop *loop, ev_timer *t, int revents)
{
	ev_timer_stop(loop, t);
	check();
}

static void on_poll(struct ev_loop *loop, ev_timer *t, int revents)
{
	check();
}

/* The directory a path names its file in: where a Secret volume's ..data is renamed. */
static void watch_dir_of(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	str_copy(dir, path, sizeof(dir));
	slash = strrchr(dir, '/');
	if (!slash)
		str_copy(dir, ".", sizeof(dir));
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (inotify_add_watch(c.inotify, dir,
			      IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_CLOSE_WRITE | IN_ATTRIB |
				      IN_DELETE_SELF | IN_MOVE_SELF) < 0)
		log_msg(LOG_WARN, FIELDS(LF_STR("dir", dir), LF_STR("error", strerror(errno))),
			"cannot watch the certificate's directory: changes are seen within %.0f s", POLL_S);
}

void wcert_watch(struct ev_loop *loop)
{
	c.loop = loop;
	ev_init(&c.settle, on_settle);
	c.settle.repeat = SETTLE_S;
	ev_timer_init(&c.poll, on_poll, POLL_S, POLL_S);
	ev_timer_start(loop, &c.poll);
	ev_init(&c.valid, on_valid);
	c.inotify = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (c.inotify < 0) {
		log_msg(LOG_WARN, FIELDS(LF_STR("error", strerror(errno))),
			"no inotify: certificate changes are seen within %.0f s", POLL_S);
		return;
	}
	watch_dir_of(c.paths[0]);
	watch_dir_of(c.paths[1]);
	ev_io_init(&c.io, on_inotify, c.inotify, EV_READ);
	ev_io_start(loop, &c.io);
}

void wcert_stop(void)
{
	if (c.loop) {
		ev_timer_stop(c.loop, &c.settle);
		ev_timer_stop(c.loop, &c.poll);
		ev_timer_stop(c.loop, &c.valid);
		if (c.inotify >= 0)
			ev_io_stop(c.loop, &c.io);
	}
	if (c.inotify >= 0)
		close(c.inotify);
	c.inotify = -1;
	c.loop = NULL;
	while (c.replaced) {
		struct wcert_pair *p = c.replaced;

		c.replaced = p->next;
		pair_free(p);
	}
	c.replaced_tail = &c.replaced;
	if (c.current)
		pair_free(c.current);
	c.current = NULL;
}

int wcert_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
		   const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
		   unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
	if (!c.current)
		return -1;
	*pcert = c.current->certs;
	*pcert_length = c.current->ncerts;
	*privkey = c.current->key;
	return 0;
}

struct wcert_pair *wcert_hold(void)
{
	if (c.current)
		c.current->users++;
	return c.current;
}

void wcert_release(struct wcert_pair *p)
{
	if (!p)
		return;
	p->users--;
	reap();
}

int64_t wcert_not_after(void)
{
	return c.current ? c.current->not_after : 0;
}

void wcert_reloads(unsigned long *ok, unsigned long *failed)
{
	*ok = c.reloads_ok;
	*failed = c.reloads_failed;
}
