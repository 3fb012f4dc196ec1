#include "config.h"

#include "json.h"
#include "tap.h"

#include <errno.h>
#include <string.h>

/* json_member: the value of a top-level member, found by skipping the others whole. */
static void members(void)
{
	static const char doc[] = " {\"a\": [1, {\"b\": \"x\\\"}\"}], \"s\":\"t,}\" ,\"n\":-1.5e3,"
				  "\"t\":true, \"o\":{\"a\":2},\"z\":null} ";
	size_t off = 99, n = 99;

	is_int(json_member(doc, strlen(doc), "a", &off, &n), 0, "a member");
	ok(n == strlen("[1, {\"b\": \"x\\\"}\"}]") && strncmp(doc + off, "[1, {\"b\": \"x\\\"}\"}]", n) == 0,
	   "its whole value, strings with escapes inside");
	is_int(json_member(doc, strlen(doc), "s", &off, &n), 0, "a string member");
	ok(n == 5 && strncmp(doc + off, "\"t,}\"", n) == 0, "its value with the quotes");
	is_int(json_member(doc, strlen(doc), "n", &off, &n), 0, "a number");
	ok(n == 6 && strncmp(doc + off, "-1.5e3", n) == 0, "-1.5e3");
	is_int(json_member(doc, strlen(doc), "z", &off, &n), 0, "the last member");
	ok(n == 4 && strncmp(doc + off, "null", n) == 0, "null");
	is_int(json_member(doc, strlen(doc), "b", &off, &n), -ENOENT, "a nested key is not a member");
	is_int(json_member("{}", 2, "a", &off, &n), -ENOENT, "nothing in an empty object");
	is_int(json_member("[1]", 3, "a", &off, &n), -EINVAL, "not an object");
	is_int(json_member("{\"a\":", 5, "a", &off, &n), -EINVAL, "cut short");
	is_int(json_member("{\"a\" 1}", 7, "a", &off, &n), -EINVAL, "no colon");
	is_int(json_member("{\"x\":1,\"a\":[1,", 14, "a", &off, &n), -EINVAL, "an array cut short");
}

/* json_skip_string: past the closing quote, escaped quotes and backslashes skipped. */
static void skip_strings(void)
{
	const char *plain = "\"ab\" x", *escaped = "\"a\\\"b\\\\\"}", *open = "\"ab\\\"", *ctrl = "\"a\nb\"";

	is_int((int)json_skip_string(plain, strlen(plain), 0), 4, "a plain string ends after its quote");
	is_int((int)json_skip_string(escaped, strlen(escaped), 0), 8, "an escaped quote and backslash are inside it");
	is_int((int)json_skip_string(open, strlen(open), 0), 0, "no closing quote: 0");
	is_int((int)json_skip_string(ctrl, strlen(ctrl), 0), 0, "a raw newline: 0");
	is_int((int)json_skip_string(plain, 3, 0), 0, "the end within len only");
}

int main(void)
{
	struct jbuf j;
	char small[16];

	jbuf_init(&j);
	jbuf_begin(&j, '{');
	jbuf_key(&j, "a");
	jbuf_int(&j, -3);
	jbuf_key(&j, "s");
	jbuf_str(&j, "q\"b\\n\n\t\x01");
	jbuf_key(&j, "list");
	jbuf_begin(&j, '[');
	jbuf_bool(&j, true);
	jbuf_null(&j);
	jbuf_begin(&j, '{');
	jbuf_end(&j, '}');
	jbuf_end(&j, ']');
	jbuf_key(&j, "ms");
	jbuf_duration(&j, 1234567);
	jbuf_key(&j, "neg");
	jbuf_duration(&j, -1);
	jbuf_key(&j, "raw");
	jbuf_raw_value(&j, "{\"x\":1}");
	jbuf_key(&j, "nul");
	jbuf_str(&j, NULL);
	jbuf_end(&j, '}');
	ok(!j.failed, "no failure");
	is_str(j.buf,
	       "{\"a\":-3,\"s\":\"q\\\"b\\\\n\\n\\t\\u0001\",\"list\":[true,null,{}],\"ms\":1234.567,"
	       "\"neg\":null,\"raw\":{\"x\":1},\"nul\":null}",
	       "object with escapes, nesting and automatic commas");
	jbuf_free(&j);

	jbuf_init(&j);
	jbuf_duration(&j, 5);
	is_str(j.buf, "0.005", "5us is 0.005ms");
	jbuf_free(&j);

	jbuf_init(&j);
	for (int i = 0; i < 1000; i++)
		jbuf_int(&j, i);
	ok(!j.failed && j.len > 3000, "grows past its first allocation");
	jbuf_free(&j);

	/* Process names and paths may hold any byte; JSON text must be UTF-8. */
	jbuf_init(&j);
	jbuf_str(&j, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3");
	is_str(j.buf, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xb3\"", "UTF-8 is written as it is");
	jbuf_free(&j);
	jbuf_init(&j);
	jbuf_str(&j, "a\xff");
	is_str(j.buf, "\"a\\ufffd\"", "a byte that is not UTF-8 becomes U+FFFD");
	jbuf_free(&j);
	jbuf_init(&j);
	jbuf_key(&j, "k\xcc");
	jbuf_str(&j, "\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\xe2\x82");
	is_str(j.buf,
	       "\"k\\ufffd\":\"\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd\\ufffd\"",
	       "overlong forms, surrogates, code points past U+10FFFF and cut sequences: one U+FFFD a byte");
	jbuf_free(&j);

	jbuf_init_fixed(&j, small, sizeof(small));
	jbuf_str(&j, "0123456789abcdefghij");
	ok(j.failed, "fixed buffer too small is reported");
	is_int(strlen(small), sizeof(small) - 1, "fixed buffer keeps what fits, terminated");

	members();
	skip_strings();
	return done_testing();
}
