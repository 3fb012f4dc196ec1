#include "config.h"

#include "parse.h"
#include "tap.h"

#include <errno.h>
#include <signal.h>

static void duration(const char *s, int rc, int64_t want)
{
	int64_t ms = -7;
	int got = parse_duration_ms(s, &ms);

	is_int(got, rc, "duration \"%s\" returns %d", s, rc);
	is_int(ms, rc == 0 ? want : -7, "duration \"%s\" gives %lld (output untouched on error)", s, (long long)want);
}

/* The size parse_regex_check finds, or -1 when it refuses the pattern (with a reason). */
static long regex_size(const char *re)
{
	const char *why = NULL;
	unsigned long size = 0;

	if (parse_regex_check(re, &size, &why) < 0)
		return why && *why ? -1 : -2;
	return (long)size;
}

int main(void)
{
	unsigned long u = 99;
	char buf[32];
	bool b = false;
	int sig = -1;

	duration("250ms", 0, 250);
	duration("30s", 0, 30000);
	duration("5m", 0, 300000);
	duration("1h", 0, 3600000);
	duration("2", 0, 2000);
	duration("0", 0, 0);
	duration("0ms", 0, 0);
	duration("1.5s", 0, 1500);
	duration(".5s", 0, 500);
	duration("0.001", 0, 1);
	duration("1.0001s", 0, 1000);
	duration("720h", 0, INT64_C(720) * 3600000);
	duration("", -EINVAL, 0);
	duration("abc", -EINVAL, 0);
	duration("-1s", -EINVAL, 0);
	duration("1x", -EINVAL, 0);
	duration("1.s", -EINVAL, 0);
	duration("s", -EINVAL, 0);
	duration("1 s", -EINVAL, 0);
	duration(" 1s", -EINVAL, 0);
	duration("1s ", -EINVAL, 0);
	duration("1e3", -EINVAL, 0);
	duration("1sm", -EINVAL, 0);
	duration("1m30s", -EINVAL, 0);
	duration("721h", -ERANGE, 0);
	duration("99999999999999999999999", -ERANGE, 0);

	is_int(parse_uint("12", 1, 100, &u), 0, "uint 12");
	is_int(u, 12, "uint value");
	is_int(parse_uint("0", 1, 100, &u), -ERANGE, "uint below min");
	is_int(parse_uint("101", 1, 100, &u), -ERANGE, "uint above max");
	is_int(parse_uint("-1", 0, 100, &u), -EINVAL, "uint negative");
	is_int(parse_uint("+1", 0, 100, &u), -EINVAL, "uint plus sign");
	is_int(parse_uint("1a", 0, 100, &u), -EINVAL, "uint garbage");
	is_int(parse_uint("", 0, 100, &u), -EINVAL, "uint empty");
	is_int(parse_uint("99999999999999999999999", 0, 100, &u), -ERANGE, "uint overflow");
	is_int(u, 12, "uint output untouched by errors");

	is_int(parse_bool("TRUE", &b), 0, "bool TRUE");
	ok(b, "TRUE is true");
	is_int(parse_bool("off", &b), 0, "bool off");
	ok(!b, "off is false");
	is_int(parse_bool("maybe", &b), -EINVAL, "bool maybe refused");
	is_int(parse_bool("", &b), -EINVAL, "bool empty refused");

	is_int(parse_signal("TERM", &sig), 0, "signal TERM");
	is_int(sig, SIGTERM, "TERM is SIGTERM");
	is_int(parse_signal("sigint", &sig), 0, "signal sigint");
	is_int(sig, SIGINT, "sigint is SIGINT");
	is_int(parse_signal("SIGQUIT", &sig), 0, "signal SIGQUIT");
	is_int(sig, SIGQUIT, "SIGQUIT");
	is_int(parse_signal("9", &sig), 0, "signal 9");
	is_int(sig, 9, "9 is 9");
	is_int(parse_signal("0", &sig), -EINVAL, "signal 0 refused");
	is_int(parse_signal("32", &sig), -EINVAL, "signal 32 refused");
	is_int(parse_signal("FOO", &sig), -EINVAL, "signal FOO refused");
	is_int(parse_signal("", &sig), -EINVAL, "empty signal refused");
	is_str(signal_name(SIGTERM), "TERM", "name of SIGTERM");
	is_str(signal_name(SIGKILL), "KILL", "name of SIGKILL");
	is_str(signal_name(99), "?", "name of an unknown signal");

	/* What regcomp writes out: one node an atom, repetitions copied, nested ones multiplied. */
	is_int(regex_size("envoy"), 5, "regex size: five characters");
	is_int(regex_size("pilot-agent|envoy"), 16, "regex size: alternatives add up");
	is_int(regex_size("a{100}"), 100, "regex size: a{100} is 100 copies");
	is_int(regex_size("a{2,100}"), 100, "regex size: a{2,100} is 100 copies");
	is_int(regex_size("a{3,}"), 4, "regex size: a{3,} is three copies and a star");
	is_int(regex_size("(ab){10}"), 30, "regex size: a group is its content and one more");
	is_int(regex_size("a+"), 2, "regex size: a+ is a a*");
	is_int(regex_size("[]{}+)]x"), 2, "regex size: a bracket expression is one atom");
	is_int(regex_size("[[:alpha:]]{4}"), 4, "regex size: classes inside a bracket expression");
	is_int(regex_size("\\.{9}"), 9, "regex size: an escape is one atom");
	is_int(regex_size("a{x}"), 4, "regex size: a brace that is no interval is a character");
	is_int(regex_size("^[a-z]{1,255}(-[0-9]+)?$"), 261, "regex size: a name's worth");
	is_int(regex_size("(a|b?c)+"), 8, "regex: a repeated group that cannot match nothing");
	is_int(regex_size("(a?|b)?"), 3, "regex: an optional group that can");
	is_int(regex_size("a{1000}{100}"), -1, "regex: nested counts multiply");
	is_int(regex_size("(ab|cd){1,1000}"), -1, "regex: a group's copies count its size");
	is_int(regex_size("((((a{99999999999999999999}))))"), -1, "regex: counts saturate");
	is_int(regex_size("(a*)+"), -1, "regex: repeating what can match nothing is refused");
	is_int(regex_size("(a|b*){1,9}"), -1, "regex: also when one branch can");
	is_int(regex_size("(^)+"), -1, "regex: an anchor matches nothing");
	is_int(regex_size("a+*"), -1, "regex: two repetitions in a row are refused");
	is_int(regex_size("a{2}{3}"), -1, "regex: two intervals in a row too");
	is_int(regex_size("a)b"), -1, "regex: an unmatched ) is refused");
	is_int(regex_size("\\)b"), 2, "regex: an escaped ) is a character");
	is_int(regex_size("a(b"), 2, "regex: an unmatched ( is left to regcomp");

	format_duration(250, buf);
	is_str(buf, "250ms", "format 250ms");
	format_duration(30000, buf);
	is_str(buf, "30s", "format 30s");
	format_duration(300000, buf);
	is_str(buf, "5m", "format 5m");
	format_duration(7200000, buf);
	is_str(buf, "2h", "format 2h");
	format_duration(0, buf);
	is_str(buf, "0s", "format 0");
	format_duration(1500, buf);
	is_str(buf, "1500ms", "format 1500ms");
	return done_testing();
}
