/*
 * Command lines: the kernel's NUL-separated form split once, and Go's
 * flags read the way Go reads them, for detection, pre-flight and inject
 * alike.
 */
#include "config.h"

#include "argv.h"
#include "tap.h"
#include "util.h"

#include <string.h>

static void split(void)
{
	char buf[64], *argv[4];
	size_t n;

	memcpy(buf, "a\0bc\0\0d\0", 9);
	n = argv_split(buf, 8, argv, ARRAY_SIZE(argv));
	is_int(n, 3, "at most max - 1 arguments");
	ok(argv[3] == NULL, "and a NULL after them");
	is_str(argv[0], "a", "first");
	is_str(argv[1], "bc", "second");
	is_str(argv[2], "", "an empty argument stays one");

	/* Cut short: the last argument has no NUL of its own within len. */
	memcpy(buf, "envoy\0-c\0/etc/env", 18);
	n = argv_split(buf, 17, argv, ARRAY_SIZE(argv));
	is_int(n, 3, "a command line cut short");
	is_str(argv[2], "/etc/env", "its last argument ends at len");

	n = argv_split(buf, 0, argv, ARRAY_SIZE(argv));
	ok(n == 0 && argv[0] == NULL, "an empty command line: no arguments");
	ok(argv_split(buf, 5, argv, 0) == 0, "no room at all");
}

/* Reads flag from a command line of words separated by spaces (test input only). */
static struct goflag flag(const char *cmdline, const char *name, bool boolean)
{
	static char buf[256];
	const char *argv[16];
	size_t argc = 0;
	char *save = NULL, *w;
	struct goflag f;

	str_copy(buf, cmdline, sizeof(buf));
	for (w = strtok_r(buf, " ", &save); w && argc < 16; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv_goflag(argv, argc, name, boolean, &f);
	return f;
}

static void booleans(void)
{
	struct goflag f;

	ok(flag("cloud-sql-proxy --quitquitquit p:r:i", "quitquitquit", true).on, "--flag");
	ok(flag("cloud-sql-proxy -quitquitquit p:r:i", "quitquitquit", true).on, "-flag");
	ok(flag("p --quitquitquit=true", "quitquitquit", true).on, "--flag=true");
	ok(flag("p --quitquitquit=1", "quitquitquit", true).on, "--flag=1");
	ok(flag("p --quitquitquit=T", "quitquitquit", true).on, "--flag=T");
	f = flag("p --quitquitquit=false", "quitquitquit", true);
	ok(f.set && !f.on, "--flag=false is given, and off");
	is_int(f.at, 1, "where it was given");
	is_str(f.value, "false", "with its value");
	f = flag("p --quitquitquit=0", "quitquitquit", true);
	ok(f.set && !f.on, "--flag=0 is off");
	f = flag("p --quitquitquit=yes", "quitquitquit", true);
	ok(f.set && !f.on, "--flag=yes is no Go boolean: not on");
	ok(flag("p --quitquitquit=false --quitquitquit", "quitquitquit", true).on, "the last one wins: on");
	ok(!flag("p --quitquitquit --quitquitquit=false", "quitquitquit", true).on, "the last one wins: off");
	ok(!flag("p --quitquitquitx", "quitquitquit", true).set, "a longer flag is another flag");
	ok(!flag("p --quitquit", "quitquitquit", true).set, "a prefix is no flag");
	ok(!flag("quitquitquit", "quitquitquit", true).set, "argv[0] is no flag");
	ok(!flag("p quitquitquit", "quitquitquit", true).set, "a word without dashes is no flag");
	ok(!flag("p -- --quitquitquit", "quitquitquit", true).set, "flags end at --");
	ok(!flag("p ---quitquitquit", "quitquitquit", true).set, "three dashes are not Go's");
	f = flag("p --quitquitquit p:r:i", "quitquitquit", true);
	ok(f.on && f.value == NULL, "a boolean takes no next argument as its value");
}

static void values(void)
{
	struct goflag f;

	f = flag("cloud-sql-proxy --admin-port 9192 p:r:i", "admin-port", false);
	ok(f.set, "--flag VALUE");
	is_str(f.value, "9192", "its value is the next argument");
	is_int(f.at, 1, "given by the flag's argument");
	f = flag("cloud-sql-proxy --admin-port=9193", "admin-port", false);
	is_str(f.value, "9193", "--flag=VALUE");
	f = flag("cloud_sql_proxy -term_timeout 10s -instances=p:r:i=tcp:5432", "term_timeout", false);
	is_str(f.value, "10s", "-flag VALUE");
	f = flag("p --http-port", "http-port", false);
	ok(f.set && f.value == NULL, "a value flag at the end: no value");
	/* The value is skipped: a value that looks like the flag is not read as it. */
	f = flag("p --admin-port --admin-port", "admin-port", false);
	ok(f.set && f.at == 1, "a value that looks like a flag is a value");
	is_str(f.value, "--admin-port", "taken whole");
	f = flag("p --admin-port=1 --admin-port 2", "admin-port", false);
	is_str(f.value, "2", "the last one wins");
}

static void gobool(void)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };
	static const char *const neither[] = { "", "yes", "on", "tRUE", "2", "truee" };
	size_t i;
	bool v;

	for (i = 0; i < ARRAY_SIZE(yes); i++)
		ok(argv_gobool(yes[i], &v) == 0 && v, "\"%s\" is true", yes[i]);
	for (i = 0; i < ARRAY_SIZE(no); i++)
		ok(argv_gobool(no[i], &v) == 0 && !v, "\"%s\" is false", no[i]);
	for (i = 0; i < ARRAY_SIZE(neither); i++)
		ok(argv_gobool(neither[i], &v) < 0, "\"%s\" is neither", neither[i]);
}

/* inject's argv[0] is NULL where the image's entrypoint runs. */
static void null_entries(void)
{
	const char *argv[] = { NULL, "--quitquitquit", NULL, "x" };
	struct goflag f;

	argv_goflag(argv, 4, "quitquitquit", true, &f);
	ok(f.on, "a NULL argv[0] and a NULL argument are skipped");
}

int main(void)
{
	split();
	booleans();
	values();
	gobool();
	null_entries();
	return done_testing();
}
