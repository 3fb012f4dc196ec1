#include "config.h"

#include "log.h"
#include "protocol.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static FILE *log_file;

static bool logged(const char *needle, int *count)
{
	char buf[65536], *p;
	size_t n;
	int c = 0;

	fflush(log_file);
	n = (size_t)pread(fileno(log_file), buf, sizeof(buf) - 1, 0);
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, needle)) != NULL; p++)
		c++;
	if (count)
		*count = c;
	return c > 0;
}

/* ---- parsing ------------------------------------------------------------ */

static void code_ok(const char *what, const char *text, size_t len, int want)
{
	const char *why = NULL;
	int code = -1;

	is_int(protocol_parse_code(text, len, &code, &why), 0, "%s parses", what);
	is_int(code, want, "%s is %d", what, want);
}

static void code_bad(const char *what, const char *text, size_t len, const char *why_want)
{
	const char *why = NULL;
	int code = 77;

	is_int(protocol_parse_code(text, len, &code, &why), -EINVAL, "%s is refused", what);
	ok(why && strstr(why, why_want), "%s: says \"%s\" (%s)", what, why_want, why ? why : "nothing");
	is_int(code, 77, "%s: the code is left alone", what);
}

static void parsing(void)
{
	char huge[PROTOCOL_READ_MAX];

	code_ok("0 and a newline", "0\n", 2, 0);
	code_ok("0 without a newline", "0", 1, 0);
	code_ok("3", "3\n", 2, 3);
	code_ok("143 (SIGTERM)", "143\n", 4, 143);
	code_ok("255 without a newline", "255", 3, 255);
	code_ok("leading zeros", "007\n", 4, 7);

	code_bad("empty", "", 0, "empty");
	code_bad("a newline alone", "\n", 1, "not a decimal");
	code_bad("leading space", " 0\n", 3, "not a decimal");
	code_bad("trailing space", "0 \n", 3, "not a decimal");
	code_bad("two newlines", "0\n\n", 3, "not a decimal");
	code_bad("CRLF", "0\r\n", 3, "not a decimal");
	code_bad("trailing garbage", "0 done\n", 7, "not a decimal");
	code_bad("a word", "ok\n", 3, "not a decimal");
	code_bad("a sign", "-1\n", 3, "not a decimal");
	code_bad("a plus", "+1\n", 3, "not a decimal");
	code_bad("hex", "0x10\n", 5, "not a decimal");
	code_bad("a fraction", "1.0\n", 4, "not a decimal");
	code_bad("256", "256\n", 4, "out of range");
	code_bad("a huge number", "99999999999999999999999\n", 24, "out of range");
	code_bad("NUL bytes", "0\n\0", 3, "binary");
	code_bad("control bytes", "\x01\x02", 2, "binary");
	code_bad("high bytes", "\xff\xfe", 2, "binary");
	memset(huge, '1', sizeof(huge));
	code_bad("4 KiB of digits (a longer file was cut)", huge, sizeof(huge), "larger than 4 KiB");
}

static void names(void)
{
	char n63[64], n64[65];

	memset(n63, 'a', 63);
	n63[63] = '\0';
	memset(n64, 'a', 64);
	n64[64] = '\0';
	ok(protocol_name_ok("job"), "job is a name");
	ok(protocol_name_ok("my-job_2.py"), "punctuation is fine");
	ok(protocol_name_ok(n63), "63 characters");
	ok(!protocol_name_ok(n64), "64 characters are too many");
	ok(!protocol_name_ok(""), "empty");
	ok(!protocol_name_ok(".job"), "a leading dot (temporary files)");
	ok(!protocol_name_ok(".."), "..");
	ok(!protocol_name_ok("a/b"), "a slash");
	ok(!protocol_name_ok("a b"), "a space");
	ok(!protocol_name_ok("a\nb"), "a newline");
	ok(!protocol_name_ok("caf\xc3\xa9"), "non-ASCII");
}

/* ---- inotify events ----------------------------------------------------- */

/* Appends one event as the kernel lays it out: the name NUL-padded to pad bytes. */
static size_t put(char *buf, size_t off, int wd, uint32_t mask, const char *name, size_t pad)
{
	struct inotify_event h;

	memset(&h, 0, sizeof(h));
	h.wd = wd;
	h.mask = mask;
	h.len = name ? (uint32_t)pad : 0;
	memcpy(buf + off, &h, sizeof(h));
	if (name) {
		memset(buf + off + sizeof(h), 0, pad);
		memcpy(buf + off + sizeof(h), name, strlen(name));
	}
	return off + sizeof(h) + h.len;
}

/*
 * Decodes one event for the watches 1 (the directory), 2 (apps/) and 3 (the
 * parent, while the directory "rg" is awaited). Its kind; -1 when the event
 * was not taken whole, or its file does not go with its kind.
 */
static int decode_kind(int wd, uint32_t mask, const char *name, struct protocol_event *ev)
{
	char buf[512];
	size_t len = put(buf, 0, wd, mask, name, 16);

	if (protocol_decode(buf, len, 1, 2, 3, "rg", ev) != len)
		return -1;
	if ((ev->kind == PROTOCOL_EV_FILE) != (ev->file != PROTOCOL_NFILES))
		return -1;
	return ev->kind;
}

/* The file one event names; -1 when it names none. */
static int decode_file(int wd, uint32_t mask, const char *name)
{
	struct protocol_event ev;

	return decode_kind(wd, mask, name, &ev) == PROTOCOL_EV_FILE ? (int)ev.file : -1;
}

/* sidecars/: the wrapper's report and the agent's stop request. */
static void sidecar_files(void)
{
	char dir[] = "/tmp/rg-protocol-sc.XXXXXX", how[PROTOCOL_HOW_MAX], path[128], buf[64];
	const char *why = NULL;
	struct stat st;
	int code = -1, fd;
	ssize_t n;

	is_int(protocol_parse_end("0 signal:TERM\n", 14, &code, how, sizeof(how), &why), 0, "0 signal:TERM");
	is_int(code, 0, "its code");
	is_str(how, "signal:TERM", "how");
	is_int(protocol_parse_end("143 exited:143", 14, &code, how, sizeof(how), &why), 0, "no newline");
	is_str(how, "exited:143", "exited:N");
	is_int(protocol_parse_end("0 timeout\n", 10, &code, how, sizeof(how), &why), 0, "timeout");
	is_int(protocol_parse_end("0 signal:BOGUS\n", 15, &code, how, sizeof(how), &why), -EINVAL, "no such signal");
	is_int(protocol_parse_end("0 exited:256\n", 13, &code, how, sizeof(how), &why), -EINVAL, "no such code");
	is_int(protocol_parse_end("256 timeout\n", 12, &code, how, sizeof(how), &why), -EINVAL, "no such exit code");
	is_int(protocol_parse_end("0\n", 2, &code, how, sizeof(how), &why), -EINVAL, "no how");
	is_int(protocol_parse_end("", 0, &code, how, sizeof(how), &why), -EINVAL, "empty");
	is_int(protocol_parse_end("0 signal:TERM\0x", 15, &code, how, sizeof(how), &why), -EINVAL, "binary");

	if (!mkdtemp(dir))
		abort();
	is_int(protocol_read_end(dir, "web", &code, how, sizeof(how)), -ENOENT, "no sidecars/ yet");
	is_int(protocol_write_stop(dir, "web", SIGTERM), 0, "the stop request written");
	snprintf(path, sizeof(path), "%s/sidecars", dir);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == 01777, "sidecars/ made 1777, whatever the umask");
	snprintf(path, sizeof(path), "%s/sidecars/web.stop", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	is_str(buf, "TERM\n", "it names the signal");
	is_int(protocol_write_stop(dir, ".x", SIGTERM), -EINVAL, "no hidden names");
	is_int(protocol_read_end(dir, "web", &code, how, sizeof(how)), -ENOENT, "no report yet");
	snprintf(path, sizeof(path), "%s/sidecars/web", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "0 timeout\n", 10) != 10)
		abort();
	close(fd);
	is_int(protocol_read_end(dir, "web", &code, how, sizeof(how)), 0, "the wrapper's report");
	is_str(how, "timeout", "read");
	unlink(path);
	snprintf(path, sizeof(path), "%s/sidecars/web.stop", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/sidecars", dir);
	rmdir(path);
	rmdir(dir);
}

static void decoding(void)
{
	struct protocol_event ev;
	enum protocol_file f;
	char buf[1024];
	size_t len, off, used;
	int n;

	is_int(decode_file(1, IN_MOVED_TO, "ready"), PROTOCOL_READY, "ready renamed into place");
	is_int(decode_file(1, IN_CLOSE_WRITE, "ready"), PROTOCOL_READY, "ready written");
	is_int(decode_file(1, IN_CREATE, "drain"), PROTOCOL_DRAIN, "drain created (touch)");
	is_int(decode_file(1, IN_MOVED_TO, "apps-done"), PROTOCOL_APPS_DONE, "apps-done");
	is_int(decode_file(1, IN_CLOSE_WRITE, "done"), PROTOCOL_DONE, "done");
	is_int(decode_kind(1, IN_CREATE | IN_ISDIR, "apps", &ev), PROTOCOL_EV_APPS_DIR, "apps/ created");
	is_int(decode_kind(1, IN_MOVED_TO | IN_ISDIR, "apps", &ev), PROTOCOL_EV_APPS_DIR, "apps/ moved in");
	is_int(decode_kind(1, IN_CREATE | IN_ISDIR, "ready", &ev), PROTOCOL_EV_NOTHING, "a directory named ready");
	is_int(decode_kind(1, IN_CLOSE_WRITE, ".ready.tmp.12", &ev), PROTOCOL_EV_NOTHING, "a temporary file");
	is_int(decode_kind(1, IN_CLOSE_WRITE, "notes.txt", &ev), PROTOCOL_EV_NOTHING, "an unknown name");
	is_int(decode_kind(1, IN_CLOSE_WRITE, "job", &ev), PROTOCOL_EV_NOTHING, "a report in the wrong place");
	ok(decode_kind(2, IN_CLOSE_WRITE, "job", &ev) == PROTOCOL_EV_FILE && ev.file == PROTOCOL_REPORT,
	   "apps/job written");
	is_str(ev.name, "job", "with its name");
	is_int(decode_file(2, IN_MOVED_TO, "job"), PROTOCOL_REPORT, "apps/job renamed into place");
	is_int(decode_kind(2, IN_CREATE, "job", &ev), PROTOCOL_EV_NOTHING, "apps/job created: its content follows");
	is_int(decode_kind(2, IN_CLOSE_WRITE, ".job.tmp.5", &ev), PROTOCOL_EV_NOTHING, "a temporary report");
	is_int(decode_kind(2, IN_CLOSE_WRITE | IN_ISDIR, "sub", &ev), PROTOCOL_EV_NOTHING, "a directory in apps/");
	is_int(decode_kind(-1, IN_Q_OVERFLOW, NULL, &ev), PROTOCOL_EV_REREAD, "overflow: read everything");
	is_int(decode_kind(1, IN_IGNORED, NULL, &ev), PROTOCOL_EV_REREAD, "the directory's watch went away");
	is_int(decode_kind(2, IN_IGNORED, NULL, &ev), PROTOCOL_EV_REREAD, "apps/'s watch went away");
	is_int(decode_kind(7, IN_IGNORED, NULL, &ev), PROTOCOL_EV_NOTHING, "a watch removed earlier");
	is_int(decode_kind(7, IN_CLOSE_WRITE, "ready", &ev), PROTOCOL_EV_NOTHING, "an unknown watch");
	is_int(decode_kind(3, IN_CREATE | IN_ISDIR, "rg", &ev), PROTOCOL_EV_DIR, "the awaited directory appeared");
	is_int(decode_kind(3, IN_MOVED_TO | IN_ISDIR, "rg", &ev), PROTOCOL_EV_DIR, "or was moved into place");
	is_int(decode_kind(3, IN_CREATE | IN_ISDIR, "other", &ev), PROTOCOL_EV_NOTHING, "another directory");
	is_int(decode_kind(3, IN_CREATE, "rg", &ev), PROTOCOL_EV_NOTHING, "a file of that name");
	/* The names the agent writes and logs are the ones the watcher knows. */
	for (f = PROTOCOL_READY; f < PROTOCOL_REPORT; f++)
		is_int(decode_file(1, IN_CLOSE_WRITE, protocol_file_name(f)), f, "%s is its own name",
		       protocol_file_name(f));
	is_str(protocol_file_name(PROTOCOL_NFILES), "?", "no name beyond the files");

	/* Several events in one read, with the kernel's padding. */
	off = put(buf, 0, 2, IN_CLOSE_WRITE, "a", 16);
	off = put(buf, off, 1, IN_MOVED_TO, "drain", 32);
	off = put(buf, off, -1, IN_Q_OVERFLOW, NULL, 0);
	len = off;
	n = 0;
	for (off = 0; (used = protocol_decode(buf + off, len - off, 1, 2, -1, "rg", &ev)) > 0; off += used) {
		n++;
		if (n == 1)
			ok(ev.kind == PROTOCOL_EV_FILE && ev.file == PROTOCOL_REPORT && strcmp(ev.name, "a") == 0,
			   "first: apps/a");
		if (n == 2)
			ok(ev.kind == PROTOCOL_EV_FILE && ev.file == PROTOCOL_DRAIN && strcmp(ev.name, "drain") == 0,
			   "second: drain");
		if (n == 3)
			is_int(ev.kind, PROTOCOL_EV_REREAD, "third: overflow");
	}
	is_int(n, 3, "three events");
	is_int(off, len, "the whole buffer");

	/* A buffer that ends inside an event: nothing is made up. */
	len = put(buf, 0, 2, IN_CLOSE_WRITE, "job", 16);
	is_int(protocol_decode(buf, len - 1, 1, 2, -1, "rg", &ev), 0, "an event cut short");
	is_int(protocol_decode(buf, sizeof(struct inotify_event) - 1, 1, 2, -1, "rg", &ev), 0, "a header cut short");
	is_int(protocol_decode(buf, 0, 1, 2, -1, "rg", &ev), 0, "nothing");
	((struct inotify_event *)buf)->len = 0xfffffff0u;
	is_int(protocol_decode(buf, len, 1, 2, -1, "rg", &ev), 0, "a length beyond the buffer");
	/* A name without its NUL padding stays a bounded string. */
	len = put(buf, 0, 2, IN_CLOSE_WRITE, "abcdefgh", 8);
	ok(protocol_decode(buf, len, 1, 2, -1, "rg", &ev) == len && strcmp(ev.name, "abcdefgh") == 0,
	   "an unpadded name is terminated");
}

/* ---- the watcher on a real directory ------------------------------------- */

struct seen {
	int reports, ready, drain, apps_done, done;
	char last[64];
	int last_code;
};

static struct seen seen;
static struct ev_loop *loop;

static void on_file(struct protocol *p, enum protocol_file file, const char *name, int code)
{
	switch (file) {
	case PROTOCOL_REPORT:
		seen.reports++;
		str_copy(seen.last, name, sizeof(seen.last));
		seen.last_code = code;
		break;
	case PROTOCOL_READY:
		seen.ready++;
		break;
	case PROTOCOL_DRAIN:
		seen.drain++;
		break;
	case PROTOCOL_APPS_DONE:
		seen.apps_done++;
		break;
	case PROTOCOL_DONE:
		seen.done++;
		break;
	default:
		break;
	}
	ev_break(loop, EVBREAK_ALL);
}

static void on_timeout(struct ev_loop *l, ev_timer *t, int revents)
{
	ev_break(l, EVBREAK_ALL);
}

/* Runs the loop until a callback comes, or 100 ms pass. */
static void spin(void)
{
	ev_timer t;

	ev_timer_init(&t, on_timeout, 0.1, 0.);
	ev_timer_start(loop, &t);
	ev_run(loop, 0);
	ev_timer_stop(loop, &t);
}

/* Runs the loop until cond holds, for at most 3 s. */
#define SPIN_UNTIL(cond)                                             \
	do {                                                         \
		int spins_;                                          \
		for (spins_ = 0; spins_ < 30 && !(cond); spins_++)   \
			spin();                                      \
	} while (0)

static bool reported(const char *name, int code)
{
	return strcmp(seen.last, name) == 0 && seen.last_code == code;
}

static void put_file(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, len) < 0)
		abort();
	close(fd);
}

static void watching(void)
{
	char dir[] = "/tmp/rg-watcher.XXXXXX", path[512], big[10000], buf[64];
	struct protocol p;
	struct stat st;
	size_t len;
	int count, rc, dfd;

	if (!mkdtemp(dir))
		abort();
	umask(077); /* modes must not depend on it */
	snprintf(path, sizeof(path), "%s/apps", dir);
	mkdir(path, 0755);
	put_file(dir, "apps/good", "0\n", 2);
	put_file(dir, "apps/bad", "x\n", 2);
	put_file(dir, "target", "0\n", 2);
	snprintf(path, sizeof(path), "%s/apps/link", dir);
	if (symlink("../target", path) < 0)
		abort();
	snprintf(path, sizeof(path), "%s/apps/fifo", dir);
	if (mkfifo(path, 0644) < 0)
		abort();
	memset(big, '7', sizeof(big));
	put_file(dir, "apps/big", big, sizeof(big));
	put_file(dir, "apps/.good.tmp.1", "0\n", 2);
	put_file(dir, "drain", "", 0);
	snprintf(path, sizeof(path), "%s/ready", dir);
	if (symlink("target", path) < 0)
		abort();

	/* What was there before the watch started. */
	alarm(20); /* a FIFO opened for reading would block here */
	rc = protocol_open(&p, loop, dir, PROTOCOL_OPEN_AGENT, on_file, NULL, NULL);
	is_int(rc, 0, "the watcher opens");
	is_int(seen.reports, 1, "one valid report found at start");
	is_str(seen.last, "good", "apps/good");
	is_int(seen.last_code, 0, "its code");
	is_int(seen.drain, 1, "drain found at start");
	is_int(seen.ready, 0, "a symlink at ready is not ready");
	ok(logged("file=apps/bad reason=\"not a decimal", NULL), "apps/bad is logged as malformed");
	ok(logged("file=apps/link reason=\"a symbolic link", NULL), "apps/link is not followed");
	ok(logged("file=apps/fifo reason=\"not a regular file", NULL), "apps/fifo is not read");
	ok(logged("file=apps/big reason=\"larger than 4 KiB", NULL), "apps/big is too big");
	ok(!logged("good.tmp", NULL), "temporary names are skipped");

	/* Files that come later. */
	memset(&seen, 0, sizeof(seen));
	snprintf(path, sizeof(path), "%s/apps", dir);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ok(write_atomic_at(dfd, "late", "3\n", 2, 0644, NULL) == 0, "apps/late written atomically");
	SPIN_UNTIL(seen.reports);
	ok(seen.reports == 1 && strcmp(seen.last, "late") == 0 && seen.last_code == 3, "apps/late reported: 3");
	memset(&seen, 0, sizeof(seen));
	put_file(dir, "apps/plain", "42\n", 3);
	SPIN_UNTIL(seen.reports);
	ok(seen.reports == 1 && strcmp(seen.last, "plain") == 0 && seen.last_code == 42,
	   "apps/plain written in place: 42");
	/* The same malformed file closed again without a change: not logged twice. */
	snprintf(path, sizeof(path), "%s/apps/bad", dir);
	close(open(path, O_WRONLY | O_CLOEXEC));
	put_file(dir, "apps/plain", "1\n", 2); /* something to wait for after it */
	SPIN_UNTIL(reported("plain", 1));
	logged("file=apps/bad", &count);
	is_int(count, 1, "a malformed file is logged once");
	/* A malformed file rewritten is a new version: logged again. */
	usleep(20000); /* a later mtime, whatever the file system's granularity */
	put_file(dir, "apps/bad", "still bad\n", 10);
	put_file(dir, "apps/plain", "2\n", 2);
	SPIN_UNTIL(reported("plain", 2));
	logged("file=apps/bad", &count);
	is_int(count, 2, "a new version of it is logged again");
	/* A symlink renamed into apps/ (an event that reads it) is not followed either. */
	snprintf(path, sizeof(path), "%s/apps/.l", dir);
	if (symlink("../target", path) < 0)
		abort();
	if (renameat(dfd, ".l", dfd, "moved-link") < 0)
		abort();
	put_file(dir, "apps/plain", "4\n", 2);
	memset(&seen, 0, sizeof(seen));
	SPIN_UNTIL(reported("plain", 4));
	ok(logged("file=apps/moved-link reason=\"a symbolic link", NULL), "a symlink moved into apps/ is not followed");
	ok(strcmp(seen.last, "moved-link") != 0, "and not reported");
	close(dfd);

	/* The agent's own files: a planted symlink is replaced, never written through. */
	snprintf(path, sizeof(path), "%s/done", dir);
	if (symlink("target", path) < 0)
		abort();
	ok(protocol_write(&p, "done", "{}\n", 3) == 0, "done written over a planted symlink");
	ok(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "done is a regular file now");
	is_int(st.st_mode & 07777, PROTOCOL_FILE_MODE, "mode 0644 whatever the umask");
	ok(read_small_at(AT_FDCWD, path, 0, buf, sizeof(buf), &len) == 0 && strcmp(buf, "{}\n") == 0, "with its text");
	snprintf(path, sizeof(path), "%s/target", dir);
	ok(read_small_at(AT_FDCWD, path, 0, buf, sizeof(buf), &len) == 0 && strcmp(buf, "0\n") == 0,
	   "the symlink's target is untouched");
	protocol_close(&p);

	/* rearguard run's report, into a directory without apps/. */
	snprintf(path, sizeof(path), "%s/fresh", dir);
	mkdir(path, 0755);
	ok(protocol_write_report(path, "job", 143) == 0, "a report written");
	snprintf(path, sizeof(path), "%s/fresh/apps", dir);
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == PROTOCOL_APPS_MODE, "apps/ created with mode 1777");
	snprintf(path, sizeof(path), "%s/fresh/apps/job", dir);
	ok(read_small_at(AT_FDCWD, path, 0, buf, sizeof(buf), &len) == 0 && strcmp(buf, "143\n") == 0,
	   "apps/job says 143");
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == PROTOCOL_FILE_MODE, "readable by every uid");
	snprintf(path, sizeof(path), "%s/fresh", dir);
	is_int(protocol_remove_report(path, "job"), 0, "the report removed");
	is_int(protocol_remove_report(path, "job"), 0, "removing it again is fine");
	snprintf(path, sizeof(path), "%s/fresh/apps/job", dir);
	ok(access(path, F_OK) < 0, "it is gone");

	/* A directory that does not exist yet: its parent is watched. */
	snprintf(path, sizeof(path), "%s/later", dir);
	memset(&seen, 0, sizeof(seen));
	is_int(protocol_open(&p, loop, path, 0, on_file, NULL, NULL), 0, "a missing directory is awaited");
	is_int(p.dirfd, -1, "not open yet");
	mkdir(path, 0755);
	put_file(path, "ready", "", 0);
	SPIN_UNTIL(seen.ready);
	is_int(seen.ready, 1, "ready in the directory that appeared later");
	protocol_close(&p);
	snprintf(path, sizeof(path), "%s/nope/later", dir);
	is_int(protocol_open(&p, loop, path, 0, on_file, NULL, NULL), -ENOENT, "without its parent: ENOENT");

	/* The agent creates a missing directory, as the kubelet would: 0777. */
	snprintf(path, sizeof(path), "%s/made", dir);
	is_int(protocol_open(&p, loop, path, PROTOCOL_OPEN_AGENT, on_file, NULL, NULL), 0,
	       "the agent's directory is created");
	ok(stat(path, &st) == 0 && (st.st_mode & 07777) == PROTOCOL_DIR_MODE, "mode 0777");
	protocol_close(&p);
	alarm(0);

	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		abort();
	umask(022);
}

/*
 * Every descriptor RLIMIT_NOFILE allows taken, as the agent's pidfds take
 * them: the files the agent writes and a report it reads get the reserve's
 * number, and the reserve is held again after each.
 */
static void reserve(void)
{
	char dir[] = "/tmp/rg-reserve.XXXXXX", cmd[512], buf[64];
	struct rlimit old, low;
	struct fd_reserve spare;
	struct protocol p;
	size_t len;
	int lowest;

	if (!mkdtemp(dir) || getrlimit(RLIMIT_NOFILE, &old) < 0)
		abort();
	is_int(fd_reserve_take(&spare), 0, "the reserve is taken");
	memset(&seen, 0, sizeof(seen));
	is_int(protocol_open(&p, loop, dir, PROTOCOL_OPEN_AGENT, on_file, NULL, &spare), 0,
	       "the protocol opens with it");
	put_file(dir, "apps/job", "3\n", 2);
	/* The limit at the lowest free number: every number below it is taken. */
	lowest = fcntl(0, F_DUPFD_CLOEXEC, 0);
	if (lowest < 0)
		abort();
	close(lowest);
	low = old;
	low.rlim_cur = (rlim_t)lowest;
	if (setrlimit(RLIMIT_NOFILE, &low) < 0)
		abort();
	is_int(fd_reserve_openat(NULL, AT_FDCWD, "/", O_PATH | O_CLOEXEC, 0), -EMFILE, "no descriptor left");
	SPIN_UNTIL(seen.reports);
	/* Read once or more: apps/, which the open made, is read again at its event. */
	ok(seen.reports >= 1, "a report read with the reserve's number");
	is_int(seen.last_code, 3, "its code");
	ok(spare.fd >= 0, "the reserve is held again after the read");
	is_int(protocol_write(&p, "ready", "\n", 1), 0, "ready written with the reserve's number");
	ok(spare.fd >= 0, "the reserve is held again after the write");
	is_int(protocol_write(&p, "done", "{}\n", 3), 0, "and done, after it");
	if (setrlimit(RLIMIT_NOFILE, &old) < 0)
		abort();
	ok(read_small_at(p.dirfd, "ready", 0, buf, sizeof(buf), &len) == 0 && strcmp(buf, "\n") == 0,
	   "ready holds its text");
	protocol_close(&p);
	fd_reserve_drop(&spare);
	is_int(spare.fd, -1, "the reserve dropped");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		abort();
}

int main(void)
{
	log_file = tmpfile();
	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));
	loop = ev_loop_new(EVFLAG_AUTO);
	parsing();
	names();
	decoding();
	sidecar_files();
	watching();
	reserve();
	ev_loop_destroy(loop);
	return done_testing();
}
