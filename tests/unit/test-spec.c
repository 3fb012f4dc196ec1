#include "config.h"

#include "spec.h"
#include "tap.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

static char err[512];

static int parse(const char *text, struct sidecar_spec *s)
{
	err[0] = '\0';
	return spec_parse(text, s, err, sizeof(err));
}

static void refused(const char *text, const char *needle)
{
	struct sidecar_spec s;
	int rc = parse(text, &s);

	is_int(rc, -EINVAL, "refused: %s", text);
	ok(strstr(err, needle) != NULL, "error for \"%s\" mentions \"%s\" (%s)", text, needle, err);
	ok(strchr(err, '\n') == NULL, "error is one line");
	spec_free(&s);
}

int main(void)
{
	struct sidecar_spec s;
	char d[256];
	size_t i;

	is_int(parse("istio", &s), 0, "istio preset");
	is_str(s.name, "istio", "named after the preset");
	is_str(s.preset, "istio", "preset recorded");
	is_str(s.ready_url, "http://127.0.0.1:15021/healthz/ready", "istio ready");
	is_str(s.stop_url, "http://127.0.0.1:15020/quitquitquit", "istio stops through pilot-agent, not Envoy");
	ok(spec_matches(&s, "pilot-agent") && spec_matches(&s, "envoy"), "istio matches pilot-agent and envoy");
	ok(!spec_matches(&s, "envoy2") && !spec_matches(&s, "my-envoy"), "match is for whole names");
	spec_describe_stop(&s, d, sizeof(d));
	is_str(d, "POST http://127.0.0.1:15020/quitquitquit", "describe an HTTP stop");
	spec_free(&s);

	is_int(parse("istio,ready=http://127.0.0.1:15020/healthz/ready,name=mesh", &s), 0, "preset overridden");
	is_str(s.ready_url, "http://127.0.0.1:15020/healthz/ready", "ready overridden");
	is_str(s.name, "mesh", "name overridden");
	spec_free(&s);

	is_int(parse("envoy,drain=", &s), 0, "empty drain removes the preset's drain");
	ok(s.drain_url == NULL, "no drain left");
	spec_free(&s);

	is_int(parse("envoy", &s), 0, "envoy preset");
	is_str(s.drain_url, "http://127.0.0.1:15000/healthcheck/fail", "envoy fails its health check first");
	spec_free(&s);

	for (i = 0; i < spec_npresets; i++) {
		is_int(parse(spec_presets[i].name, &s), 0, "preset %s parses", spec_presets[i].name);
		spec_free(&s);
	}
	is_int(parse("consul", &s), 0, "consul");
	ok(spec_matches(&s, "consul-dataplane") && !spec_matches(&s, "consul-dataplan"),
	   "consul matches the full argv[0] name, not the truncated comm");
	spec_free(&s);

	is_int(parse("match=fluent-bit", &s), 0, "custom spec");
	is_int(s.stop_signal, SIGTERM, "default stop is SIGTERM");
	ok(s.stop_url == NULL && s.ready_url == NULL, "no URLs");
	is_str(s.name, "fluent-bit", "named after match");
	spec_describe_stop(&s, d, sizeof(d));
	is_str(d, "signal:TERM", "describe a signal stop");
	spec_free(&s);

	is_int(parse("name=logs,match=fluent-bit|td-agent,stop=signal:INT,drain-time=2s", &s), 0, "full custom spec");
	is_int(s.stop_signal, SIGINT, "stop signal INT");
	is_int(s.drain_time_ms, 2000, "drain-time");
	ok(spec_matches(&s, "td-agent"), "alternation");
	spec_free(&s);

	is_int(parse("match=a{1,3}b,stop=signal:QUIT", &s), 0, "regex with a comma");
	is_str(s.match_src, "a{1,3}b", "comma kept inside the value");
	ok(spec_matches(&s, "aab") && !spec_matches(&s, "aaaab"), "the regex works");
	is_int(s.stop_signal, SIGQUIT, "key after the regex still parsed");
	spec_free(&s);

	is_int(parse("match=x,stop=http://127.0.0.1:9091/quitquitquit,ready=http://localhost:9090/startup", &s), 0,
	       "HTTP stop and ready");
	is_str(s.stop_url, "http://127.0.0.1:9091/quitquitquit", "stop URL");
	spec_free(&s);

	refused("", "empty");
	refused("istoi", "unknown preset \"istoi\"");
	refused("foo=bar", "unknown key \"foo\"");
	refused("match=x,color=red", "unknown key \"color\"");
	refused("stop=signal:TERM", "match=REGEX is required");
	refused("match=x,stop=signal:NOPE", "unknown signal");
	refused("match=x,stop=signal:STOP", "unknown signal");
	refused("match=x,stop=https://127.0.0.1/quit", "only http://");
	refused("match=x,stop=kill", "neither a URL nor signal");
	refused("match=x,ready=ftp://x", "not an http:// URL");
	refused("match=x,ready=http://", "not an http:// URL");
	refused("match=(x", "invalid regex");
	refused("match=x,match=y", "match given twice");
	refused("match=", "match needs a value");
	refused("match=x,drain-time=soon", "drain-time");
	refused("match=x,name=", "name needs a value");
	refused("match=x,name=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "name must be");
	return done_testing();
}
