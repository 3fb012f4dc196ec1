#include "config.h"

#include "json.h"
#include "tap.h"

#include <string.h>

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
	jbuf_ms(&j, 1234567);
	jbuf_key(&j, "neg");
	jbuf_ms(&j, -1);
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
	jbuf_ms(&j, 5);
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
	return done_testing();
}
