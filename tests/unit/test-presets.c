#include "config.h"

#include "presets.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <string.h>

static char ev[PRESET_EVIDENCE_MAX];

/* argv from a string of words separated by spaces (test input only). */
static const struct spec_preset *detect(const char *comm, const char *cmdline)
{
	static char buf[512];
	static const char *argv[32];
	size_t argc = 0;
	char *save = NULL, *w;

	str_copy(buf, cmdline, sizeof(buf));
	for (w = strtok_r(buf, " ", &save); w && argc < 32; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	return presets_detect(comm, argc ? argv : NULL, argc, ev, sizeof(ev));
}

static void sidecar(const char *comm, const char *cmdline, const char *preset, const char *evidence)
{
	const struct spec_preset *p = detect(comm, cmdline);

	is_str(p ? p->name : NULL, preset, "\"%s\" (comm %s) is %s", cmdline, comm, preset);
	ok(strstr(ev, evidence) != NULL, "evidence for \"%s\" mentions \"%s\" (%s)", cmdline, evidence, ev);
}

static void app(const char *comm, const char *cmdline, const char *evidence)
{
	const struct spec_preset *p = detect(comm, cmdline);

	is_str(p ? p->name : NULL, NULL, "\"%s\" (comm %s) is an app", cmdline, comm);
	ok(strstr(ev, evidence) != NULL, "evidence for \"%s\" mentions \"%s\" (%s)", cmdline, evidence, ev);
}

/* Every rule of the table: the long-running forms. */
static void sidecars_detected(void)
{
	sidecar("pilot-agent", "/usr/local/bin/pilot-agent proxy sidecar --domain ns.svc.cluster.local", "istio",
		"argv[0]=pilot-agent, argv[1]=proxy");
	sidecar("pilot-agent", "pilot-agent proxy router", "istio", "argv[1]=proxy");
	/* Istio's Envoy belongs to it: its bootstrap lies under etc/istio/proxy/. */
	sidecar("envoy", "/usr/local/bin/envoy -c etc/istio/proxy/envoy-rev.json --drain-time-s 45", "istio",
		"istio/proxy/");
	sidecar("envoy", "envoy -c /etc/envoy/envoy.yaml", "envoy", "argv[0]=envoy");
	sidecar("envoy", "envoy --mode serve -c /etc/envoy.yaml", "envoy", "argv[0]=envoy");
	sidecar("linkerd2-proxy", "/usr/lib/linkerd/linkerd2-proxy", "linkerd", "argv[0]=linkerd2-proxy");
	sidecar("linkerd-proxy", "linkerd-proxy", "linkerd", "linkerd-proxy");
	sidecar("cloud-sql-proxy", "/cloud-sql-proxy --quitquitquit --port=5432 p:r:i", "cloudsql",
		"argv[0]=cloud-sql-proxy");
	sidecar("cloud_sql_proxy", "/cloud_sql_proxy -instances=p:r:i=tcp:5432", "cloudsql-v1", "cloud_sql_proxy");
	sidecar("daprd", "/daprd --app-id batch --dapr-http-port 3500", "dapr", "argv[0]=daprd");
	sidecar("vault", "vault agent -config=/vault/configs/config.hcl", "vault", "argv[0]=vault, argv[1]=agent");
	sidecar("vault", "/bin/vault proxy -config=/etc/proxy.hcl", "vault", "argv[1]=proxy");
	/* The kernel cuts comm to 15 bytes. */
	sidecar("consul-dataplan", "/usr/local/bin/consul-dataplane -addresses consul-server", "consul",
		"argv[0]=consul-dataplane");
	sidecar("consul-dataplan", "", "consul", "comm=consul-dataplan (no command line)");
	sidecar("otelcol-contrib", "/otelcol-contrib --config=env:OTEL_CONFIG", "otel", "argv[0]=otelcol-contrib");
	sidecar("otelcol-k8s", "/otelcol-k8s --config=/conf/collector.yaml", "otel", "argv[0]=otelcol-k8s");
	sidecar("fluent-bit", "/fluent-bit/bin/fluent-bit -c /fluent-bit/etc/fluent-bit.conf", "fluent-bit",
		"argv[0]=fluent-bit");
	sidecar("vector", "/usr/bin/vector --config /etc/vector/vector.yaml", "vector", "argv[0]=vector");
	/* A renamed binary is found by its comm. */
	sidecar("daprd", "/opt/bin/runtime --app-id x", "dapr", "comm=daprd");
}

/* The CLI runs of the same programs that must stay apps. */
static void oneshots_are_apps(void)
{
	app("vault", "vault kv get secret/db", "argv[1]=kv");
	app("vault", "vault login -method=kubernetes", "argv[1]=login");
	app("vault", "vault agent generate-config -type=env-template", "generate-config: a one-shot run");
	app("vault", "vault agent -h", "argv[2]=-h");
	app("vault", "vault", "argv[1]=(none)");
	app("envoy", "envoy --mode validate -c /etc/envoy.yaml", "argv[1]=--mode: a one-shot run");
	app("envoy", "envoy -c /etc/envoy.yaml --mode=validate", "--mode=validate");
	app("envoy", "envoy --mode init_only -c x.yaml", "one-shot");
	app("envoy", "envoy --version", "--version");
	/* Flags are read as Go reads them: a boolean set false asks for nothing. */
	sidecar("daprd", "daprd --version=false --app-id x", "dapr", "argv[0]=daprd");
	app("daprd", "daprd --app-id x -version=true", "-version=true");
	app("cloud-sql-proxy", "cloud-sql-proxy --version", "--version");
	app("cloud-sql-proxy", "cloud-sql-proxy -v", "-v");
	app("cloud-sql-proxy", "cloud-sql-proxy wait --max 30s", "argv[1]=wait");
	app("cloud-sql-proxy", "/cloud-sql-proxy shutdown", "argv[1]=shutdown");
	app("cloud_sql_proxy", "/cloud_sql_proxy -version", "-version");
	app("cloud_sql_proxy", "/cloud_sql_proxy --version", "--version");
	app("pilot-agent", "pilot-agent wait --url http://localhost:15020/healthz/ready", "argv[1]=wait");
	app("pilot-agent", "pilot-agent request GET /quitquitquit", "argv[1]=request");
	app("pilot-agent", "pilot-agent version", "not a long-running istio");
	app("pilot-agent", "pilot-agent proxy --help", "a one-shot run");
	app("daprd", "daprd --version", "--version");
	app("consul-dataplan", "consul-dataplane -version", "-version");
	app("otelcol-contrib", "/otelcol-contrib validate --config=/etc/otel.yaml", "argv[1]=validate");
	app("otelcol", "otelcol components", "argv[1]=components");
	app("fluent-bit", "fluent-bit --dry-run -c /etc/fb.conf", "--dry-run");
	app("fluent-bit", "fluent-bit -V", "-V");
	app("vector", "vector validate /etc/vector/vector.yaml", "argv[1]=validate");
	app("vector", "vector test /etc/vector/tests.yaml", "argv[1]=test");
	/* Without a command line a program that needs a subcommand cannot be told. */
	app("vault", "", "cannot tell");
	app("pilot-agent", "", "cannot tell");
}

static void not_ours(void)
{
	is_str(detect("sh", "sh -c sleep 30") ? "found" : NULL, NULL, "a shell is nothing");
	is_str(ev, "", "no evidence for a process of no known name");
	is_str(detect("vaultwarden", "vaultwarden") ? "found" : NULL, NULL, "names match whole");
	/* A word that is not the subcommand's place is no one-shot. */
	sidecar("cloud-sql-proxy", "cloud-sql-proxy --port 5432 p:r:wait", "cloudsql", "cloud-sql-proxy");
	sidecar("cloud-sql-proxy", "cloud-sql-proxy p:r:i -- --version", "cloudsql", "cloud-sql-proxy");
}

static void container(const char *name, const char *image, const char *cmdline, const char *want)
{
	static char buf[512];
	const char *argv[32];
	size_t argc = 0;
	char *save = NULL, *w;
	const struct spec_preset *p;

	str_copy(buf, cmdline ? cmdline : "", sizeof(buf));
	if (cmdline && cmdline[0] == '+') /* args only: the image's entrypoint runs */
		argv[argc++] = NULL;
	for (w = strtok_r(buf[0] == '+' ? buf + 1 : buf, " ", &save); w && argc < 32; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	p = presets_container(name, image, argv, argc);
	is_str(p ? p->name : NULL, want, "container %s (%s, %s) is %s", name, image, cmdline ? cmdline : "-",
	       want ? want : "an app");
}

/* The program a wrapper runs: the row presets_program finds, where it is, and whether in a script. */
static void wrapped(const char *const *argv, size_t argc, const char *want, size_t at, bool script)
{
	struct preset_program prog;
	char why[PRESET_EVIDENCE_MAX];
	const struct spec_preset *p = NULL;

	if (presets_program(argv, argc, &prog))
		p = presets_detect(NULL, prog.argv, prog.argc, why, sizeof(why));
	is_str(p ? p->name : NULL, want, "%s ... %s: %s", argv[0], argv[argc - 1], want ? want : "no program");
	if (want) {
		is_int(prog.at, at, "  the program's place");
		ok(prog.script == script, "  %s", script ? "in a script" : "in the command line");
	}
}

static void wrappers(void)
{
	const char *watchkiller[] = {"/watchkiller", "/cloud_sql_proxy", "-instances=a:b:c=tcp:5432"};
	const char *dumb[] = {"dumb-init", "--single-child", "/cloud_sql_proxy", "-instances=a:b:c"};
	const char *tini[] = {"/sbin/tini", "-s", "--", "/cloud-sql-proxy", "--port", "5432", "a:b:c"};
	const char *script[] = {"/bin/sh", "-ec", "sleep 1 && exec /cloud-sql-proxy --quitquitquit 'a:b:c'"};
	const char *tini_sh[] = {"tini", "--", "sh", "-c", "cd /x; exec tini -- envoy --mode validate"};
	const char *app[] = {"python3", "app.py", "--backend", "vector"};
	const char *no_exec[] = {"sh", "-c", "echo vector; ./run.sh"};
	const char *vars[] = {"sh", "-c", "GOMAXPROCS=1 exec cloud_sql_proxy -instances=a:b:c"};
	const char *vault[] = {"/bin/sh", "-ec",
			       "echo ${VAULT_CONFIG?} | base64 -d > /home/vault/config.json && vault agent "
			       "-config=/home/vault/config.json"};

	wrapped(watchkiller, ARRAY_SIZE(watchkiller), "cloudsql-v1", 1, false);
	wrapped(dumb, ARRAY_SIZE(dumb), "cloudsql-v1", 2, false);
	wrapped(tini, ARRAY_SIZE(tini), "cloudsql", 3, false);
	wrapped(script, ARRAY_SIZE(script), "cloudsql", 2, true);
	/* A one-shot run behind two wrappers is found, and is no sidecar. */
	wrapped(tini_sh, ARRAY_SIZE(tini_sh), NULL, 0, false);
	/* A word that names a program among an app's arguments is no program it runs. */
	wrapped(app, ARRAY_SIZE(app), NULL, 0, false);
	wrapped(no_exec, ARRAY_SIZE(no_exec), NULL, 0, false);
	wrapped(vars, ARRAY_SIZE(vars), "cloudsql-v1", 2, true);
	/* Vault's injector starts the agent at the end of a pipeline of its script. */
	wrapped(vault, ARRAY_SIZE(vault), "vault", 2, true);
}

/* The version an image's tag tells, and the comparison of versions. */
static void versions(void)
{
	const struct spec_preset *v2 = presets_find("cloudsql");
	char v[64];

	is_int(presets_image_version(v2, "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1-alpine", v, sizeof(v)),
	       VERSION_KNOWN, "a tag with a version");
	is_str(v, "2.14.1-alpine", "  the tag");
	is_int(presets_image_version(v2, "gcr.io/cloud-sql-connectors/cloud-sql-proxy", v, sizeof(v)), VERSION_NEWEST,
	       "no tag: the newest");
	is_int(presets_image_version(v2, "cloud-sql-proxy:latest", v, sizeof(v)), VERSION_NEWEST, ":latest");
	is_int(presets_image_version(v2, "mirror.example/cloud-sql-proxy@sha256:00ff", v, sizeof(v)), VERSION_UNKNOWN,
	       "a digest: any version");
	is_int(presets_image_version(v2, "cloud-sql-proxy:bookworm", v, sizeof(v)), VERSION_UNKNOWN,
	       "a tag without a version");
	is_int(presets_image_version(v2, "registry.acme.example/sql-stub:2.14.1", v, sizeof(v)), VERSION_UNKNOWN,
	       "another image: its tag says nothing of the proxy");
	ok(presets_version_at_least("2.1.0", "2.1.0"), "2.1.0 >= 2.1.0");
	ok(presets_version_at_least("v2.14.1-alpine", "2.6.0"), "v2.14.1-alpine >= 2.6.0");
	ok(!presets_version_at_least("2.0.0", "2.1.0"), "2.0.0 < 2.1.0");
	ok(!presets_version_at_least("2.5.9", "2.6.0"), "2.5.9 < 2.6.0");
	ok(presets_version_at_least("10.0", "2.6.0"), "10.0 >= 2.6.0: numbers, not text");
	ok(presets_version_at_least("2", "2.6.0"), "2: the newest 2.x");
	ok(!presets_version_at_least("1", "2.1.0"), "1 < 2.1.0");
}

/* A flag from the command line, else its environment twin, which the command line beats. */
static const char *env_value;
static const char *one_env(const void *ctr, const char *name)
{
	return strcmp(name, (const char *)ctr) == 0 ? env_value : NULL;
}

static void environment(void)
{
	const struct spec_preset *v2 = presets_find("cloudsql");
	const char *plain[] = {"/cloud-sql-proxy", "a:b:c"}, *off[] = {"/cloud-sql-proxy", "--quitquitquit=false"};
	struct preset_source src = {.argv = plain, .argc = 2, .env = one_env, .ctr = "CSQL_PROXY_QUITQUITQUIT"};
	struct preset_flag_state f;
	char out[PRESET_SPEC_MAX];

	env_value = "true";
	presets_flag(v2, &src, "quitquitquit", true, &f);
	ok(f.on && f.from_env, "CSQL_PROXY_QUITQUITQUIT=true turns --quitquitquit on");
	is_str(f.env_name, "CSQL_PROXY_QUITQUITQUIT", "  its twin's name");
	env_value = "yes";
	presets_flag(v2, &src, "quitquitquit", true, &f);
	ok(f.set && !f.on, "yes is no Go boolean: off");
	src.argv = off;
	env_value = "true";
	presets_flag(v2, &src, "quitquitquit", true, &f);
	ok(f.set && !f.on && !f.from_env, "the command line wins over its twin");
	src.argv = plain;
	src.ctr = "CSQL_PROXY_ADMIN_PORT";
	env_value = "9092";
	ok(presets_spec(v2, &src, false, out, sizeof(out)) == 0, "a spec");
	is_str(out, "cloudsql,ready=,stop=http://127.0.0.1:9092/quitquitquit", "  the admin port from the environment");
	src.ctr = "CSQL_PROXY_HTTP_PORT";
	env_value = "9801";
	presets_spec(v2, &src, false, out, sizeof(out));
	is_str(out, "cloudsql,ready=", "  no readiness URL without the health check, wherever its port is");
	presets_flag(presets_find("istio"), &src, "quitquitquit", true, &f);
	is_str(f.env_name, "", "a row without twins has none");
}

static void templates(void)
{
	container("istio-proxy", "docker.io/istio/proxyv2:1.22.3", "+proxy sidecar", "istio");
	container("proxy", "gcr.io/istio-release/proxyv2:1.20.0@sha256:00ff", "+proxy sidecar", "istio");
	container("istio-debug", "docker.io/istio/proxyv2:1.22.3", "+request GET stats", NULL);
	container("linkerd-proxy", "cr.l5d.io/linkerd/proxy:edge-24.1.1", NULL, "linkerd");
	container("sidecar", "cr.l5d.io/linkerd/proxy:stable-2.14", NULL, "linkerd");
	container("x", "registry.local:5000/proxy:1", NULL, NULL);
	container("sql", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.4", "+--port=5432 p:r:i", "cloudsql");
	container("sql", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.4", "/cloud-sql-proxy p:r:i", "cloudsql");
	container("wait-db", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.4", "+wait --max 30s", NULL);
	container("sql", "gcr.io/cloudsql-docker/gce-proxy:1.33.2", "/cloud_sql_proxy -instances=p:r:i=tcp:5432",
		  "cloudsql-v1");
	/* The v1 proxy under the v2 proxy's container name: its command line and image say v1. */
	container("cloud-sql-proxy", "gcr.io/cloudsql-docker/gce-proxy:1.33.2", "+-instances=p:r:i=tcp:5432",
		  "cloudsql-v1");
	container("cloud-sql-proxy", "example.com/mirror/sqlproxy:1", "/cloud_sql_proxy -instances=p:r:i=tcp:5432",
		  "cloudsql-v1");
	container("cloud-sql-proxy", "example.com/mirror/sqlproxy:2", NULL, "cloudsql");
	container("proxy", "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2", "sh -c exec /cloud-sql-proxy p:r:i",
		  "cloudsql");
	container("vault-agent", "hashicorp/vault:1.16", "+agent -config=/vault/config.hcl", "vault");
	container("secrets", "hashicorp/vault:1.16", "vault kv get secret/x", NULL);
	container("dev", "hashicorp/vault:1.16", NULL, NULL);
	container("daprd", "ghcr.io/dapr/daprd:1.13.0", NULL, "dapr");
	container("consul-dataplane", "hashicorp/consul-dataplane:1.4", NULL, "consul");
	container("envoy", "envoyproxy/envoy:v1.30-latest", "+-c /etc/envoy.yaml", "envoy");
	container("check", "envoyproxy/envoy:v1.30-latest", "envoy --mode validate -c /etc/envoy.yaml", NULL);
	container("app", "busybox:1.36", "sh -c echo", NULL);
	container("otc-container",
		  "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.110.0",
		  "+--config=env:OTEL_CONFIG", "otel");
	container("collector", "otel/opentelemetry-collector-contrib:0.110.0", NULL, "otel");
	container("shipper", "cr.fluentbit.io/fluent/fluent-bit:3.1.9", NULL, "fluent-bit");
	container("vector", "timberio/vector:0.42.0-distroless-libc", "+--config /etc/vector.yaml", "vector");
	container("vector-check", "timberio/vector:0.42.0-distroless-libc", "+validate /etc/vector.yaml", NULL);

	ok(presets_image_is("registry:5000/cloud-sql-proxy", "cloud-sql-proxy"), "a registry port is no tag");
	ok(!presets_image_is("gcr.io/x/not-cloud-sql-proxy:1", "cloud-sql-proxy"), "repository names match whole");
	ok(!presets_image_is("cr.l5d.io/notlinkerd/proxy:1", "linkerd/proxy"), "two components match whole");
	ok(presets_image_is("linkerd/proxy", "linkerd/proxy"), "a bare two-component repository");
	{
		const struct spec_preset *v1 = presets_find("cloudsql-v1"), *fb = presets_find("fluent-bit");

		is_str(presets_image_uid(v1, "gcr.io/cloudsql-docker/gce-proxy:1.16"), "0", "gce-proxy 1.16: root");
		is_str(presets_image_uid(v1, "gcr.io/cloudsql-docker/gce-proxy:v1.9.0"), "0", "gce-proxy v1.9.0: root");
		is_str(presets_image_uid(v1, "gcr.io/cloudsql-docker/gce-proxy:1.17"), "65532", "gce-proxy 1.17: nonroot");
		is_str(presets_image_uid(v1, "gce-proxy:1.33.2-alpine"), "65532", "a variant of 1.33: nonroot");
		is_str(presets_image_uid(v1, "gcr.io/cloudsql-docker/gce-proxy"), "65532", "no tag: the newest");
		is_str(presets_image_uid(v1, "gcr.io/cloudsql-docker/gce-proxy:1"), "65532", "1: the newest 1.x");
		ok(!presets_image_uid(v1, "gcr.io/cloudsql-docker/gce-proxy@sha256:0123"), "a digest: any version");
		ok(!presets_image_uid(v1, "gce-proxy:buster"), "a tag without a version");
		ok(!presets_image_uid(v1, "registry.acme.example/sqlproxy:1.33"), "another image: its own user");
		is_str(presets_image_uid(fb, "cr.fluentbit.io/fluent/fluent-bit:3.1.9"), "0", "fluent-bit: its row's uid");
	}
}

/* The spec of a sidecar: where its flags and the template's annotations put its URLs. */
static const char *ann_value;

static const char *ann(const void *data, const char *key)
{
	return strcmp(key, (const char *)data) == 0 ? ann_value : NULL;
}

/* presets_spec from a command line and the annotations, as the tests write them. */
static int spec(const struct spec_preset *p, const char *const *argv, size_t argc,
		const char *(*a)(const void *meta, const char *key), const void *meta, bool signal_stop, char *out,
		size_t len)
{
	struct preset_source src = {.argv = argv, .argc = argc, .ann = a, .meta = meta};

	return presets_spec(p, &src, signal_stop, out, len);
}

static void specs(void)
{
	char out[PRESET_SPEC_MAX];
	const char *bare[] = {"cloud-sql-proxy", "p:r:i"};

	ok(spec(presets_find("cloudsql"), bare, 2, NULL, NULL, false, out, sizeof(out)) == 0, "cloudsql");
	is_str(out, "cloudsql,ready=", "without --health-check: no readiness URL");
	ok(spec(presets_find("linkerd"), NULL, 0, NULL, NULL, true, out, sizeof(out)) == 0, "linkerd");
	is_str(out, "linkerd,stop=signal:TERM", "a signal stop where the endpoint is off");
	ok(spec(presets_find("cloudsql-v1"), NULL, 0, NULL, NULL, true, out, sizeof(out)) == 0, "v1");
	is_str(out, "cloudsql-v1", "a signal stop already: nothing to add");
	ok(spec(presets_find("cloudsql"), bare, 2, NULL, NULL, false, out, 5) == -ENOSPC, "too small");

	{
		const char *ports[] = {"cloud-sql-proxy",  "--health-check", "--admin-port", "9192",
				       "--http-port=9190", "p:r:i"};
		const char *nohc[] = {"cloud-sql-proxy", "--admin-port=9192", "p:r:i"};

		ok(spec(presets_find("cloudsql"), ports, 6, NULL, NULL, false, out, sizeof(out)) == 0, "ports");
		is_str(out, "cloudsql,ready=http://127.0.0.1:9190/startup,stop=http://127.0.0.1:9192/quitquitquit",
		       "--admin-port moves the stop, --http-port the readiness");
		ok(spec(presets_find("cloudsql"), nohc, 3, NULL, NULL, false, out, sizeof(out)) == 0,
		   "no health");
		is_str(out, "cloudsql,ready=,stop=http://127.0.0.1:9192/quitquitquit",
		       "without --health-check there is no readiness endpoint");
	}
	ann_value = "15030";
	ok(spec(presets_find("istio"), NULL, 0, ann, "status.sidecar.istio.io/port", false, out, sizeof(out)) ==
	       0,
	   "istio");
	is_str(out, "istio,stop=http://127.0.0.1:15030/quitquitquit", "the status port annotation moves the stop");
	ann_value = "0";
	ok(spec(presets_find("istio"), NULL, 0, ann, "status.sidecar.istio.io/port", false, out, sizeof(out)) ==
	       0,
	   "istio");
	is_str(out, "istio,stop=signal:TERM", "status port 0: no endpoint, a signal");
	ann_value = "x80";
	ok(spec(presets_find("istio"), NULL, 0, ann, "status.sidecar.istio.io/port", false, out, sizeof(out)) ==
	       0,
	   "istio");
	is_str(out, "istio", "a port that is no number is not taken");
	ann_value = "4192";
	ok(spec(presets_find("linkerd"), NULL, 0, ann, "config.linkerd.io/admin-port", false, out,
			sizeof(out)) == 0,
	   "linkerd");
	is_str(out, "linkerd,ready=http://127.0.0.1:4192/ready,stop=http://127.0.0.1:4192/shutdown",
	       "Linkerd's admin port moves both");
	ann_value = "8100";
	ok(spec(presets_find("vault"), NULL, 0, ann, "vault.hashicorp.com/agent-cache-listener-port", false,
			out, sizeof(out)) == 0,
	   "vault");
	is_str(out, "vault,stop=http://127.0.0.1:8100/agent/v1/quit", "Vault's listener port");
}

static void words(void)
{
	ok(presets_word_true("{ \"holdApplicationUntilProxyStarts\": true }", "holdApplicationUntilProxyStarts"),
	   "JSON true");
	ok(presets_word_true("holdApplicationUntilProxyStarts: true\n", "holdApplicationUntilProxyStarts"),
	   "YAML true");
	ok(!presets_word_true("{\"holdApplicationUntilProxyStarts\": false}", "holdApplicationUntilProxyStarts"),
	   "false");
	ok(!presets_word_true("{\"concurrency\": 2}", "holdApplicationUntilProxyStarts"), "absent");
}

static void table(void)
{
	size_t i;

	ok(presets_find("cloudsql") == &spec_presets[3], "presets_find");
	ok(presets_find("nope") == NULL, "presets_find: unknown");
	{
		char words[64];

		ok(presets_mesh("istio") == presets_find("istio") && presets_mesh("linkerd") == presets_find("linkerd"),
		   "presets_mesh: the rows --mesh stands for");
		ok(presets_mesh("consul") == NULL && presets_mesh(NULL) == NULL && presets_mesh("") == NULL,
		   "presets_mesh: no other");
		presets_mesh_words("|", words, sizeof(words));
		is_str(words, "istio|linkerd", "presets_mesh_words: the names, in the table's order");
		presets_mesh_words(" or ", words, 8);
		is_str(words, "istio o", "presets_mesh_words: cut to its buffer");
	}
	for (i = 0; i < spec_npresets; i++) {
		ok(spec_presets[i].forms[0].names[0] != NULL, "%s has a process name", spec_presets[i].name);
		ok(spec_presets[i].images[0] != NULL || spec_presets[i].containers[0] != NULL, "%s shows in a template",
		   spec_presets[i].name);
	}
}

int main(void)
{
	sidecars_detected();
	oneshots_are_apps();
	not_ours();
	templates();
	specs();
	wrappers();
	versions();
	environment();
	words();
	table();
	return done_testing();
}
