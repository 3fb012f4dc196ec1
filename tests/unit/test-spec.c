#include "config.h"

#include "spec.h"
#include "tap.h"
#include "util.h"

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

/* The presets, row by row, as the man page lists them. */
static void presets_as_designed(void)
{
	static const struct {
		const char *name, *match, *ready, *drain, *stop;
	} want[] = {
		{ "istio", "pilot-agent|envoy", "http://127.0.0.1:15021/healthz/ready", NULL,
		  "http://127.0.0.1:15020/quitquitquit" },
		{ "envoy", "envoy", "http://127.0.0.1:15000/ready", "http://127.0.0.1:15000/healthcheck/fail",
		  "http://127.0.0.1:15000/quitquitquit" },
		{ "linkerd", "linkerd2-proxy|linkerd-proxy", "http://127.0.0.1:4191/ready", NULL,
		  "http://127.0.0.1:4191/shutdown" },
		{ "cloudsql", "cloud-sql-proxy|cloud_sql_proxy", "http://127.0.0.1:9090/startup", NULL,
		  "http://127.0.0.1:9091/quitquitquit" },
		{ "cloudsql-v1", "cloud_sql_proxy", NULL, NULL, NULL },
		{ "dapr", "daprd", "http://127.0.0.1:3500/v1.0/healthz", NULL, "http://127.0.0.1:3500/v1.0/shutdown" },
		{ "vault", "vault", NULL, NULL, "http://127.0.0.1:8200/agent/v1/quit" },
		{ "consul", "consul-dataplane", NULL, NULL, "http://127.0.0.1:20600/graceful_shutdown" },
		{ "otel", "otelcol|otelcol-contrib|otelcol-k8s|otelcol-otlp", NULL, NULL, NULL },
		{ "fluent-bit", "fluent-bit|td-agent-bit", NULL, NULL, NULL },
		{ "vector", "vector", NULL, NULL, NULL },
		{ "linkerd-proxy-terminator", "proxy-terminator", NULL, NULL, NULL },
	};
	struct sidecar_spec s;
	size_t i;

	is_int(spec_npresets, ARRAY_SIZE(want), "every preset is listed here");
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		is_int(parse(want[i].name, &s), 0, "%s parses", want[i].name);
		is_str(s.match_src, want[i].match, "%s match", want[i].name);
		is_str(s.ready_url, want[i].ready, "%s ready", want[i].name);
		is_str(s.drain_url, want[i].drain, "%s drain", want[i].name);
		is_str(s.stop_url, want[i].stop, "%s stop", want[i].name);
		is_int(s.drain_time_ms, 0, "%s drain-time 0", want[i].name);
		if (!want[i].stop)
			ok(s.stop_signal == SIGTERM && !s.signal_all, "%s: SIGTERM to the main process", want[i].name);
		spec_free(&s);
	}
}

/* Each key overrides the preset's value and leaves the others alone. */
static void overrides(void)
{
	struct sidecar_spec s;

	is_int(parse("linkerd,stop=signal:TERM", &s), 0, "linkerd stopped by a signal");
	ok(s.stop_url == NULL && s.stop_signal == SIGTERM, "the stop URL is gone, SIGTERM instead");
	is_str(s.ready_url, "http://127.0.0.1:4191/ready", "its ready URL stays");
	spec_free(&s);

	is_int(parse("envoy,drain-time=5s,stop=http://127.0.0.1:9901/quitquitquit", &s), 0, "envoy on another port");
	is_int(s.drain_time_ms, 5000, "drain-time added");
	is_str(s.drain_url, "http://127.0.0.1:15000/healthcheck/fail", "drain kept");
	is_str(s.stop_url, "http://127.0.0.1:9901/quitquitquit", "stop replaced");
	spec_free(&s);

	is_int(parse("dapr,match=my-daprd,name=dapr2", &s), 0, "dapr renamed");
	ok(spec_matches(&s, "my-daprd") && !spec_matches(&s, "daprd"), "match replaced");
	is_str(s.stop_url, "http://127.0.0.1:3500/v1.0/shutdown", "stop kept");
	spec_free(&s);

	is_int(parse("istio,ready=", &s), 0, "istio without a ready URL");
	ok(s.ready_url == NULL, "ready when its process is seen");
	spec_free(&s);
}

/* native: a key without a value, after a preset or among the other keys, even after a regex with commas. */
static void native(void)
{
	struct sidecar_spec s;

	is_int(parse("cloudsql,native", &s), 0, "cloudsql,native");
	ok(s.native && strcmp(s.preset, "cloudsql") == 0, "a native Cloud SQL proxy");
	spec_free(&s);
	is_int(parse("name=x,match=a{1,3},native", &s), 0, "name=x,match=a{1,3},native");
	ok(s.native, "native");
	is_str(s.match_src, "a{1,3}", "native is no part of the regex before it");
	spec_free(&s);
	is_int(parse("native,match=vector,name=logs", &s), 0, "native first");
	ok(s.native && strcmp(s.name, "logs") == 0, "and the keys after it");
	spec_free(&s);
	is_int(parse("match=nativex", &s), 0, "match=nativex");
	ok(!s.native, "a value that starts with native is a value");
	spec_free(&s);
	is_int(parse("istio", &s), 0, "istio");
	ok(!s.native, "not native unless said");
	spec_free(&s);
	is_int(parse("linkerd-proxy-terminator", &s), 0, "a terminator helper's preset");
	ok(s.native, "is native: never waited for, never stopped");
	spec_free(&s);
	refused("istio,native=true", "native takes no value");
	refused("istio,native,native", "native given twice");
	refused("native", "match=REGEX is required");
	/* handles-stop: inject leaves its command alone; the agent parses it and goes on as ever. */
	is_int(parse("name=web,match=nginx,stop=signal:QUIT,handles-stop", &s), 0, "handles-stop last");
	ok(s.handles_stop && s.stop_signal == SIGQUIT && !s.native, "handles its stop signal");
	spec_free(&s);
	is_int(parse("name=web,match=a{1,3},handles-stop,native", &s), 0, "handles-stop among other keys");
	ok(s.handles_stop && s.native, "both words");
	is_str(s.match_src, "a{1,3}", "handles-stop is no part of the regex before it");
	spec_free(&s);
	is_int(parse("match=handles-stopper", &s), 0, "a value that starts with the word");
	ok(!s.handles_stop, "is a value");
	spec_free(&s);
	refused("match=x,handles-stop=yes", "handles-stop takes no value");
	refused("match=x,handles-stop,handles-stop", "handles-stop given twice");
}

static void advice(void)
{
	struct sidecar_spec s;
	const char *a;

	is_int(parse("linkerd", &s), 0, "linkerd");
	a = spec_stop_advice(&s, 404, "shutdown endpoint is not enabled\n");
	ok(a && strstr(a, "config.linkerd.io/proxy-admin-shutdown: enabled"), "Linkerd's 404 names the annotation");
	ok(spec_stop_advice(&s, 404, "not found\n") == NULL, "another 404 says nothing more");
	ok(spec_stop_advice(&s, 500, "") == NULL, "a 500 says nothing more");
	ok(spec_warning(&s) == NULL, "no warning for linkerd");
	spec_free(&s);

	is_int(parse("istio", &s), 0, "istio");
	a = spec_stop_advice(&s, -ECONNREFUSED, "");
	ok(a && strstr(a, "status.sidecar.istio.io/port"), "refused on 15020 names the annotation");
	ok(spec_stop_advice(&s, -ETIMEDOUT, "") == NULL, "a timeout says nothing more");
	ok(spec_warning(&s) == NULL, "the istio preset is fine");
	spec_free(&s);

	is_int(parse("match=pilot-agent|envoy,stop=http://127.0.0.1:15020/quitquitquit", &s), 0, "custom istio");
	ok(spec_stop_advice(&s, -ECONNREFUSED, "") != NULL, "advice follows the port, not the preset");
	spec_free(&s);

	is_int(parse("istio,stop=http://127.0.0.1:15000/quitquitquit", &s), 0, "istio stopped through Envoy");
	a = spec_warning(&s);
	ok(a && strstr(a, "Envoy only") && strstr(a, "15020"), "warned: Envoy's quitquitquit leaves pilot-agent");
	spec_free(&s);

	is_int(parse("envoy", &s), 0, "plain envoy");
	ok(spec_warning(&s) == NULL, "Envoy's own quitquitquit is right for plain Envoy");
	spec_free(&s);

	is_int(parse("cloudsql", &s), 0, "cloudsql");
	a = spec_stop_advice(&s, -ECONNREFUSED, "");
	ok(a && strstr(a, "--quitquitquit") && strstr(a, "--exit-zero-on-sigterm"), "cloudsql refused names the flags");
	spec_free(&s);

	is_int(parse("vault", &s), 0, "vault");
	a = spec_stop_advice(&s, 404, "");
	ok(a && strstr(a, "agent-enable-quit"), "vault 404 names enable_quit");
	ok(spec_stop_advice(&s, 500, "") == NULL, "vault 500: no advice");
	ok(spec_stop_advice(&s, -ECONNREFUSED, "") == NULL, "vault refused: no advice");
	spec_free(&s);

	/* Linkerd's 404 body tells Linkerd by itself, whatever the spec. */
	is_int(parse("match=linkerd2-proxy,stop=http://127.0.0.1:4191/shutdown", &s), 0, "custom linkerd");
	a = spec_stop_advice(&s, 404, "shutdown endpoint is not enabled\n");
	ok(a && strstr(a, "proxy-admin-shutdown"), "the body is enough");
	ok(strstr(spec_exit_fix(&s), "stop over HTTP") != NULL, "no row: the stop's kind says the exit fix");
	spec_free(&s);

	/* A refused stop names the Cloud SQL flags only for a Cloud SQL spec. */
	is_int(parse("dapr", &s), 0, "dapr");
	ok(spec_stop_advice(&s, -ECONNREFUSED, "") == NULL, "dapr refused: no advice");
	spec_free(&s);

	is_int(parse("cloudsql-v1", &s), 0, "cloudsql-v1");
	a = spec_exit_fix(&s);
	ok(a && strstr(a, "-term_timeout"), "the v1 proxy's exit fix is its own");
	ok(s.ready_url == NULL && s.stop_url == NULL, "no endpoints: ready at once, stopped by SIGTERM");
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

	is_int(parse("name=shipper,container=shipper,match=sh,stop=signal:TERM", &s), 0, "container=");
	is_str(s.container, "shipper", "the container it is");
	is_str(s.name, "shipper", "its name");
	spec_free(&s);
	is_int(parse("cloudsql,container=cloud-sql-proxy", &s), 0, "a preset's container");
	is_str(s.container, "cloud-sql-proxy", "the container a preset's sidecar is");
	spec_free(&s);
	is_int(parse("match=fluent-bit", &s), 0, "custom spec");
	is_str(s.container, "", "no container= : none");
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

	is_int(parse("match=nginx,stop=signal:QUIT", &s), 0, "signal:QUIT");
	ok(!s.signal_all, "to the main process only");
	spec_free(&s);
	is_int(parse("match=nginx,stop=signal-all:QUIT", &s), 0, "signal-all:QUIT");
	ok(s.signal_all && s.stop_signal == SIGQUIT, "to every process");
	spec_describe_stop(&s, d, sizeof(d));
	is_str(d, "signal-all:QUIT", "described as such");
	spec_free(&s);
	is_int(parse("match=httpd,stop=signal:WINCH", &s), 0, "signal:WINCH, Apache's graceful stop");
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

	/* Where a list of specs may not be split at a comma (rearguard.io/sidecars). */
	ok(spec_key_at("stop=signal:QUIT") && spec_key_at("drain-time=5s") && spec_key_at("name=x"),
	   "a key starts a spec's next value");
	ok(spec_key_at("native") && spec_key_at("native,match=x"), "so does native");
	ok(!spec_key_at("fluentd") && !spec_key_at("fluentd=signal:INT") && !spec_key_at("native-x") &&
	       !spec_key_at("stop") && !spec_key_at("native=true"),
	   "a container's name, with or without a spec, does not");

	presets_as_designed();
	overrides();
	native();
	advice();

	is_int(spec_parse("match=[a-z]{1,255}(-[0-9]+)?|envoy{1,3},name=x", &s, err, sizeof(err)), 0,
	       "ordinary repetition counts are fine");
	ok(spec_matches(&s, "fluent-12") && spec_matches(&s, "envoyyy") && !spec_matches(&s, "x-"), "and match as before");
	spec_free(&s);

	refused("", "empty");
	refused("istoi", "unknown preset \"istoi\"");
	refused("foo=bar", "unknown key \"foo\"");
	refused("match=x,colour=red", "keys: name, container, match, ready, drain, drain-time, stop, native");
	refused("match=x,color=red", "unknown key \"color\"");
	refused("match=x,container=Bad_Name", "is no container name");
	refused("match=x,container=-x", "is no container name");
	refused("match=x,container=", "container needs a value");
	refused("match=x,container=a,container=b", "container given twice");
	refused("stop=signal:TERM", "match=REGEX is required");
	refused("match=x,stop=signal:NOPE", "unknown signal");
	refused("match=x,stop=signal:STOP", "does not stop a process");
	refused("match=x,stop=signal:CHLD", "does not stop a process");
	refused("match=x,stop=signal:URG", "does not stop a process");
	refused("match=x,stop=signal:CONT", "does not stop a process");
	refused("match=x,stop=signal-all:TSTP", "does not stop a process");
	refused("match=x,stop=signal-all:", "unknown signal");
	refused("match=x,stop=https://127.0.0.1/quit", "only http://");
	refused("match=x,stop=kill", "neither a URL nor signal");
	refused("match=x,ready=ftp://x", "not an http:// URL");
	refused("match=x,ready=http://", "no host");
	refused("match=x,stop=http://127.0.0.1:70000/quit", "port");
	refused("match=x,drain=http://127.0.0.1:1/a b", "spaces");
	refused("match=x,stop=http://admin:pw@127.0.0.1/quit", "credentials");
	refused("match=(x", "invalid regex");
	/*
	 * regcomp writes repetitions out and closes over what matches nothing:
	 * these take 20 MB to seconds and 350 MB each (and a few more
	 * characters, gigabytes); they are refused before regcomp sees them.
	 */
	refused("match=(a{1000}){100}", "repetitions multiply");
	refused("match=a{1,3000}", "repetitions multiply");
	refused("match=((((((((((((((((x+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)+)", "repetitions multiply");
	refused("match=(J*|K*){1,100}", "can match nothing");
	refused("match=g,++++++++++++++++", "two repetitions in a row");
	/* glibc takes a lone ) for a character; in ^(...)$ it would end the group: x)|y would match "xanything". */
	refused("match=x)|y", "unmatched ')'");
	refused("match=x,match=y", "match given twice");
	refused("match=", "match needs a value");
	refused("match=x,drain-time=soon", "drain-time");
	refused("match=x,name=", "name needs a value");
	refused("match=x,name=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "name must be");
	return done_testing();
}
