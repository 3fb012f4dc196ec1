#include "config.h"

#include "presets.h"

#include "argv.h"
#include "log.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The proxies' documented defaults and command lines (docs/proxies.md); where the
 * facts come from:
 * - pilot-agent's subcommands are proxy (the sidecar), wait, request,
 *   version, istio-iptables, istio-clean-iptables; only "proxy" runs long.
 *   It starts Envoy with its bootstrap under etc/istio/proxy/.
 * - envoy --mode is serve (the default), validate or init_only.
 * - cloud-sql-proxy (v2) has the subcommands wait and shutdown, and -v for
 *   --version. v1 (cloud_sql_proxy, image gce-proxy; Go's flag package)
 *   has no stop endpoint: on SIGTERM or SIGINT it waits up to
 *   -term_timeout (default 0) for its connections to close, then exits 0,
 *   or 2 when some are still open (cmd/cloud_sql_proxy/cloud_sql_proxy.go
 *   at v1.38.3). -use_http_health_check serves /startup on
 *   -health_check_port (default 8090).
 * - daprd has --version and --build-info; vault runs long as "vault agent"
 *   or "vault proxy", while "vault agent generate-config" is a one-shot.
 * - The OpenTelemetry Collector (otelcol/collector.go) shuts down on SIGTERM
 *   or SIGINT and exits 0, 1 when a component fails to shut down; its
 *   subcommands validate, components, featuregate and print-config are
 *   one-shots. Its images run as uid 10001 (opentelemetry-collector-
 *   releases' Dockerfiles); the operator injects it as otc-container.
 * - Fluent Bit (src/fluent-bit.c) ends its loop on SIGTERM, stops its
 *   engine within [SERVICE] Grace (default 5 s) and exits with the engine's
 *   status: 0, unless the engine failed or a plugin set it (the expect
 *   filter, the exec input); its image has no USER: root.
 * - Vector (src/signal.rs, src/app.rs) drains its topology on SIGTERM or
 *   SIGINT, at most --graceful-shutdown-limit-secs (default 60), and exits
 *   0; SIGQUIT, or a second signal meanwhile, quits at once, also 0. Its
 *   subcommands (validate, test, generate, ...) are one-shots; its images
 *   have no USER: root.
 */
const struct spec_preset spec_presets[] = {
    {
	.name = "istio",
	.title = "Istio's proxy",
	.match = "pilot-agent|envoy",
	.ready = "http://127.0.0.1:15021/healthz/ready",
	.stop = "http://127.0.0.1:15020/quitquitquit",
	.forms = {{.names = {"pilot-agent"}, .serve = {"proxy"}}, {.names = {"envoy"}, .arg_has = "istio/proxy/"}},
	/* pilot-agent's status port, which serves quitquitquit; "0" turns it off. */
	.ports = {{.annotation = "status.sidecar.istio.io/port", .urls = PRESET_STOP}},
	.oneshot = {"--help", "-h"},
	.advice = {{.result = -ECONNREFUSED,
		    .port = 15020,
		    .text = "nothing listens on pilot-agent's status port 15020: the pod annotation "
			    "status.sidecar.istio.io/port: \"0\" turns it off; remove that annotation, or stop Istio "
			    "with stop=signal:TERM (rearguard then needs uid 1337 or the KILL capability)"}},
	.wrong_stop = {.port = 15000,
		       .path = "/quitquitquit",
		       .why = "stop= posts to Envoy's admin port 15000, which stops Envoy only: pilot-agent keeps the "
			      "container running; use pilot-agent's http://127.0.0.1:15020/quitquitquit (the istio "
			      "preset)"},
	.containers = {"istio-proxy"},
	.images = {"proxyv2"},
	.uid = "1337",
	.mesh = "istio",
	.inject_key = "sidecar.istio.io/inject",
	.inject_on = {"true"},
	.inject_off = "false",
	/* Istio 1.27 and later inject a native sidecar with it, or where every node's kubelet is 1.33 or newer. */
	.native_keys = {"sidecar.istio.io/nativeSidecar"},
	.first_key = "proxy.istio.io/config",
	.first_word = "holdApplicationUntilProxyStarts",
    },
    {
	.name = "envoy",
	.title = "Envoy",
	.match = "envoy",
	.ready = "http://127.0.0.1:15000/ready",
	.drain = "http://127.0.0.1:15000/healthcheck/fail",
	.stop = "http://127.0.0.1:15000/quitquitquit",
	.forms = {{.names = {"envoy"}}},
	.oneshot = {"--mode validate", "--mode init_only", "--version", "--help", "-h"},
	.containers = {"envoy"},
	.images = {"envoy", "envoy-distroless"},
    },
    {
	.name = "linkerd",
	.title = "Linkerd's proxy",
	.match = "linkerd2-proxy|linkerd-proxy",
	.ready = "http://127.0.0.1:4191/ready",
	.stop = "http://127.0.0.1:4191/shutdown",
	.forms = {{.names = {"linkerd2-proxy", "linkerd-proxy"}}},
	.ports = {{.annotation = "config.linkerd.io/admin-port", .urls = PRESET_READY | PRESET_STOP}},
	.advice = {{.result = 404,
		    .body = "shutdown endpoint is not enabled",
		    .text = "Linkerd's shutdown endpoint is off (the default since 2.16): enable it with the pod "
			    "annotation config.linkerd.io/proxy-admin-shutdown: enabled "
			    "(or LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true in the proxy)"}},
	.containers = {"linkerd-proxy"},
	.images = {"linkerd/proxy"},
	.uid = "2102",
	.mesh = "linkerd",
	.inject_key = "linkerd.io/inject",
	.inject_on = {"enabled", "ingress"},
	.inject_off = "disabled",
	/* The first present wins (pkg/inject/inject.go); native by default since 2.20. */
	.native_keys = {"config.linkerd.io/proxy-enable-native-sidecar",
			"config.beta.linkerd.io/proxy-enable-native-sidecar",
			"config.alpha.linkerd.io/proxy-enable-native-sidecar"},
	.fix_key = "config.linkerd.io/proxy-admin-shutdown",
	.fix_value = "enabled",
	/* The injector turns the annotation into this variable of the proxy's (charts/partials/templates/_proxy.tpl). */
	.fix_env = "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED",
	.fix_env_value = "true",
	.first_key = "config.linkerd.io/proxy-await",
	.first_off = "disabled",
	.first_default = true,
    },
    {
	.name = "cloudsql",
	.title = "the Cloud SQL Auth Proxy",
	.match = "cloud-sql-proxy|cloud_sql_proxy",
	.ready = "http://127.0.0.1:9090/startup",
	.stop = "http://127.0.0.1:9091/quitquitquit",
	.ready_flag = "health-check",
	.forms = {{.names = {"cloud-sql-proxy"}}},
	.oneshot = {"wait", "shutdown", "completion", "help", "--version", "-v", "--help", "-h"},
	/*
	 * --health-check is in every v2 release, --quitquitquit came with
	 * 2.1.0 and --exit-zero-on-sigterm with 2.6.0 (cmd/root.go's history);
	 * a flag an older release lacks ends it at once ("unknown flag", exit 1).
	 */
	.flags = {{.name = "quitquitquit",
		   .why = "nothing listens on its stop endpoint, so it will be stopped by SIGTERM",
		   .stop_endpoint = true,
		   .since = "2.1.0"},
		  {.name = "health-check"},
		  {.name = "exit-zero-on-sigterm",
		   .why = "a SIGTERM ends it with 143, which fails the pod under restartPolicy Never",
		   .since = "2.6.0"}},
	/* viper's prefix (cmd/root.go, initViper): each flag not given reads CSQL_PROXY_NAME. */
	.env_prefix = "CSQL_PROXY_",
	.ports = {{.flag = "admin-port", .urls = PRESET_STOP}, {.flag = "http-port", .urls = PRESET_READY}},
	.advice = {{.result = -ECONNREFUSED,
		    .text = "nothing listens on the Cloud SQL Auth Proxy's admin port: start it with --quitquitquit "
			    "(and --exit-zero-on-sigterm, so that a SIGTERM does not end it with 143 and fail the "
			    "Job)"}},
	.exit_fix = "start the Cloud SQL Auth Proxy with --exit-zero-on-sigterm, and with --quitquitquit so that "
		    "its stop endpoint is used at all",
	.containers = {"cloud-sql-proxy", "cloudsql-proxy"},
	.images = {"cloud-sql-proxy"},
	.uid = "65532",
    },
    {
	.name = "cloudsql-v1",
	.title = "the Cloud SQL Auth Proxy v1 (cloud_sql_proxy)",
	.match = "cloud_sql_proxy",
	.stop = "signal:TERM",
	.forms = {{.names = {"cloud_sql_proxy"}}},
	.oneshot = {"-version", "-help", "-h"},
	.exit_fix = "the v1 proxy exits 2 when connections are still open once -term_timeout (default 0) has "
		    "passed: give it -term_timeout=10s, or move to v2 with --exit-zero-on-sigterm",
	.instead_of = "cloudsql",
	.note = "has no stop endpoint: rearguard stops it with SIGTERM (--sidecar cloudsql-v1), after which it exits 0 "
		"once no connection is open, or 2 if one still is when -term_timeout (default 0) ends; v2 (gcr.io/cloud-sql-connectors/cloud-sql-proxy, see the proxy's "
		"migration guide) has one, --quitquitquit",
	.note_short = "has no stop endpoint: it gets SIGTERM, and exits 2 if a connection is open past -term_timeout",
	.images = {"gce-proxy"},
	/* 1.17 moved the image to distroless's nonroot (its release notes); earlier ones ran as root. */
	.uid = "65532",
	.root_before = "1.17",
    },
    {
	.name = "dapr",
	.title = "Dapr's sidecar (daprd)",
	.match = "daprd",
	.ready = "http://127.0.0.1:3500/v1.0/healthz",
	.stop = "http://127.0.0.1:3500/v1.0/shutdown",
	.forms = {{.names = {"daprd"}}},
	.oneshot = {"--version", "--build-info", "--help", "-h"},
	.containers = {"daprd"},
	.images = {"daprd"},
	.uid = "65532",
	.inject_key = "dapr.io/enabled",
	.inject_on = {"true"},
	.inject_off = "false",
	.native_keys = {"dapr.io/enable-native-sidecar"},
    },
    {
	.name = "vault",
	.title = "Vault Agent",
	.match = "vault",
	.stop = "http://127.0.0.1:8200/agent/v1/quit",
	/* With agent-enable-quit the injector opens the agent's listener on this port (vault-k8s agent.go). */
	.ports = {{.annotation = "vault.hashicorp.com/agent-cache-listener-port", .urls = PRESET_STOP}},
	.forms = {{.names = {"vault"}, .serve = {"agent", "proxy"}}},
	.oneshot = {"generate-config", "--help", "-h"},
	.advice = {{.result = PRESET_ANY_4XX,
		    .text = "Vault Agent answers its quit endpoint only with enable_quit = true in its listener "
			    "(injector annotation vault.hashicorp.com/agent-enable-quit: \"true\")"}},
	.containers = {"vault-agent"},
	.images = {"vault"},
	.uid = "100",
	.uid_key = "vault.hashicorp.com/agent-run-as-user",
	.inject_key = "vault.hashicorp.com/agent-inject",
	.inject_on = {"true"},
	.inject_off = "false",
	.none_key = "vault.hashicorp.com/agent-pre-populate-only",
	/* With it the injector (vault-k8s 0.16 and later) opens the agent's listener itself. */
	.fix_key = "vault.hashicorp.com/agent-enable-quit",
	.fix_value = "true",
    },
    {
	.name = "consul",
	.title = "consul-dataplane",
	.match = "consul-dataplane",
	.stop = "http://127.0.0.1:20600/graceful_shutdown",
	/* The injector passes the port as -graceful-port, from the annotation or the chart's default (20600). */
	.ports = {{.annotation = "consul.hashicorp.com/sidecar-proxy-lifecycle-graceful-port",
		   .flag = "graceful-port",
		   .urls = PRESET_STOP}},
	.forms = {{.names = {"consul-dataplane"}}},
	.oneshot = {"-version", "--help", "-h"},
	.containers = {"consul-dataplane"},
	.images = {"consul-dataplane"},
	.uid = "5995",
	.inject_key = "consul.hashicorp.com/connect-inject",
	.inject_on = {"true"},
	.inject_off = "false",
	.native_keys = {"consul.hashicorp.com/enable-consul-dataplane-as-sidecar"},
    },
    {
	.name = "otel",
	.title = "the OpenTelemetry Collector",
	.match = "otelcol|otelcol-contrib|otelcol-k8s|otelcol-otlp",
	.stop = "signal:TERM",
	.forms = {{.names = {"otelcol", "otelcol-contrib", "otelcol-k8s", "otelcol-otlp"}}},
	.oneshot = {"validate", "components", "featuregate", "print-config", "--version", "-v", "--help", "-h"},
	.exit_fix = "the collector exits 0 on SIGTERM unless one of its components fails to shut down (then 1, "
		    "with the error in its log): see which one",
	/* The operator's sidecar container (internal/naming), its default images, and their uid. */
	.containers = {"otc-container"},
	.images = {"opentelemetry-collector", "opentelemetry-collector-contrib", "opentelemetry-collector-k8s"},
	.uid = "10001",
	.inject_key = "sidecar.opentelemetry.io/inject",
	.inject_any = true, /* "true", or the name of an OpenTelemetryCollector */
	.inject_off = "false",
    },
    {
	.name = "fluent-bit",
	.title = "Fluent Bit",
	.match = "fluent-bit|td-agent-bit",
	.stop = "signal:TERM",
	.forms = {{.names = {"fluent-bit", "td-agent-bit"}}},
	.oneshot = {"--version", "-V", "--help", "-h", "--help-json", "-J", "--dry-run", "-D", "--sosreport", "-S"},
	.exit_fix = "Fluent Bit exits with its engine's status after SIGTERM, 0 unless the engine failed or an "
		    "expect filter or exec input set another (see its log)",
	.containers = {"fluent-bit", "fluentbit"},
	.images = {"fluent-bit"},
	.uid = "0",
    },
    {
	.name = "vector",
	.title = "Vector",
	.match = "vector",
	.stop = "signal:TERM",
	.forms = {{.names = {"vector"}}},
	.oneshot = {"validate", "convert-config", "generate", "generate-schema", "completion", "list", "test", "graph",
		    "top", "tap", "config", "vrl", "--version", "-V", "--help", "-h"},
	.exit_fix = "Vector exits 0 on SIGTERM once its components drained (at most --graceful-shutdown-limit-secs, "
		    "default 60, after which it stops anyway): a non-zero code is a crash, see its log",
	.containers = {"vector"},
	.images = {"vector"},
	.uid = "0",
    },
    {
	/*
	 * A terminator helper: it watches the pod's other containers through the
	 * API and shuts Linkerd's proxy down once they all ended, our agent among
	 * them (channyein87/linkerd-proxy-terminator, cmd/main.go). Waited for as
	 * an app, it would wait for the agent while the agent waits for it.
	 */
	.name = "linkerd-proxy-terminator",
	.title = "linkerd-proxy-terminator",
	.match = "proxy-terminator",
	.stop = "signal:TERM",
	.forms = {{.names = {"proxy-terminator"}}},
	.containers = {"linkerd-proxy-terminator"},
	.images = {"linkerd-proxy-terminator"},
	.helper = true,
    },
};
const size_t spec_npresets = ARRAY_SIZE(spec_presets);

const struct spec_preset *presets_find(const char *name)
{
	size_t i;

	for (i = 0; i < spec_npresets; i++)
		if (strcmp(spec_presets[i].name, name) == 0)
			return &spec_presets[i];
	return NULL;
}

const struct spec_preset *presets_mesh(const char *name)
{
	size_t i;

	for (i = 0; name && i < spec_npresets; i++)
		if (spec_presets[i].mesh && strcmp(spec_presets[i].mesh, name) == 0)
			return &spec_presets[i];
	return NULL;
}

void presets_mesh_words(const char *sep, char *out, size_t len)
{
	size_t i, used = 0;

	if (len > 0)
		out[0] = '\0';
	for (i = 0; i < spec_npresets && used < len; i++)
		if (spec_presets[i].mesh)
			used += (size_t)snprintf(out + used, len - used, "%s%s", used ? sep : "", spec_presets[i].mesh);
}

/* Writes the evidence, when the caller wants it. */
static void say(char *out, size_t len, const char *fmt, ...) RG_PRINTF(3, 4);

static void say(char *out, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!out || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

/* comm is cut to 15 bytes by the kernel: "consul-dataplan" is consul-dataplane. */
static bool comm_is(const char *comm, const char *name)
{
	size_t n = strlen(comm);

	if (n == 15)
		return strncmp(comm, name, 15) == 0;
	return strcmp(comm, name) == 0;
}

/* Whether s is in a NULL-ended list of at most max entries. */
static bool listed(const char *const *list, size_t max, const char *s)
{
	size_t i;

	for (i = 0; i < max && list[i]; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* Which of form's names this process has; NULL when none. */
static const char *named(const struct preset_form *f, const char *comm, const char *argv0)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f->names) && f->names[i]; i++)
		if ((argv0 && strcmp(argv0, f->names[i]) == 0) || (comm && comm_is(comm, f->names[i])))
			return f->names[i];
	return NULL;
}

/*
 * The one-shot entry that argv shows, or NULL; *at is the argument that
 * shows it. first is the index of the argument that would be a subcommand.
 * Flags are read as Go reads them (argv.h): --version=false runs long.
 */
static const char *oneshot_of(const struct spec_preset *p, const char *const *argv, size_t argc, size_t first,
			      size_t *at)
{
	size_t i, k;

	for (k = 0; k < ARRAY_SIZE(p->oneshot) && p->oneshot[k]; k++) {
		const char *e = p->oneshot[k], *space = strchr(e, ' ');
		char name[32];
		struct goflag f;

		if (e[0] != '-') {
			for (i = 1; i < argc && i <= first; i++) {
				if (argv[i] && strcmp(argv[i], "--") == 0)
					break;
				if (i == first && argv[i] && strcmp(argv[i], e) == 0) {
					*at = i;
					return e;
				}
			}
			continue;
		}
		e += e[1] == '-' ? 2 : 1;
		str_copy(name, e, sizeof(name));
		if (space && (size_t)(space - e) < sizeof(name))
			name[space - e] = '\0';
		argv_goflag(argv, argc, name, !space, &f);
		if (space ? f.set && f.value && strcmp(f.value, space + 1) == 0 : f.on) {
			*at = f.at;
			return p->oneshot[k];
		}
	}
	return NULL;
}

/* Whether an argument (not argv[0]) contains needle. */
static bool has_arg_with(const char *const *argv, size_t argc, const char *needle)
{
	size_t i;

	for (i = 1; i < argc; i++)
		if (strstr(argv[i], needle))
			return true;
	return false;
}

/*
 * Whether the process is form f of preset p. Returns 1 (it is), 0 (not
 * this form), -1 (the program, but a one-shot run or no telling: an app);
 * the evidence says which.
 */
static int form_is(const struct spec_preset *p, const struct preset_form *f, const char *comm, const char *const *argv,
		   size_t argc, char *ev, size_t len)
{
	const char *argv0 = argc > 0 && argv[0] ? base_name(argv[0]) : NULL;
	const char *name = named(f, comm, argv0);
	const char *shot;
	size_t first = 1, at = 0;

	if (!name)
		return 0;
	if (argc == 0) {
		if (f->serve[0] || f->arg_has) {
			say(ev, len, "comm=%s without a command line: cannot tell a sidecar from a one-shot run", comm);
			return -1;
		}
		say(ev, len, "comm=%s (no command line)", comm);
		return 1;
	}
	if (f->arg_has && !has_arg_with(argv, argc, f->arg_has))
		return 0;
	if (f->serve[0]) {
		if (argc < 2 || !listed(f->serve, ARRAY_SIZE(f->serve), argv[1])) {
			say(ev, len, "argv[0]=%s, argv[1]=%.48s: not a long-running %s", argv0 ? argv0 : name,
			    argc < 2 ? "(none)" : argv[1], p->name);
			return -1;
		}
		first = 2;
	}
	shot = oneshot_of(p, argv, argc, first, &at);
	if (shot) {
		say(ev, len, "argv[0]=%s, argv[%zu]=%.48s: a one-shot run", argv0 ? argv0 : name, at, argv[at]);
		return -1;
	}
	if (f->serve[0])
		say(ev, len, "argv[0]=%s, argv[1]=%s", argv0 ? argv0 : name, argv[1]);
	else if (f->arg_has)
		say(ev, len, "argv[0]=%s with an argument under %s", argv0 ? argv0 : name, f->arg_has);
	else if (argv0 && strcmp(argv0, name) == 0)
		say(ev, len, "argv[0]=%s", argv0);
	else
		say(ev, len, "comm=%s", comm);
	return 1;
}

const struct spec_preset *presets_detect(const char *comm, const char *const *argv, size_t argc, char *evidence,
					 size_t len)
{
	char why[PRESET_EVIDENCE_MAX] = "";
	size_t i, k;

	say(evidence, len, "%s", "");
	for (i = 0; i < spec_npresets; i++) {
		const struct spec_preset *p = &spec_presets[i];

		for (k = 0; k < ARRAY_SIZE(p->forms); k++) {
			char ev[PRESET_EVIDENCE_MAX];
			int rc = form_is(p, &p->forms[k], comm, argv, argc, ev, sizeof(ev));

			if (rc > 0) {
				say(evidence, len, "%s", ev);
				return p;
			}
			/* Keep the first reason to call it an app; a later row may still claim it. */
			if (rc < 0 && why[0] == '\0')
				str_copy(why, ev, sizeof(why));
		}
	}
	say(evidence, len, "%s", why);
	return NULL;
}

bool presets_image_is(const char *image, const char *pattern)
{
	char repo[512];
	const char *slash, *colon, *at = strchr(image, '@');
	size_t n = at ? (size_t)(at - image) : strlen(image), plen = strlen(pattern);

	if (n >= sizeof(repo))
		return false;
	memcpy(repo, image, n);
	repo[n] = '\0';
	/* A tag follows the last ':' after the last '/' (a registry may have a port). */
	slash = strrchr(repo, '/');
	colon = strrchr(repo, ':');
	if (colon && (!slash || colon > slash))
		repo[colon - repo] = '\0';
	n = strlen(repo);
	if (!strchr(pattern, '/')) {
		slash = strrchr(repo, '/');
		return strcmp(slash ? slash + 1 : repo, pattern) == 0;
	}
	return n >= plen && strcmp(repo + n - plen, pattern) == 0 && (n == plen || repo[n - plen - 1] == '/');
}

/* The leading MAJOR[.MINOR] of a version ("v1.16.0-alpine"); minor -1 when absent. false: no version. */
static bool version_of(const char *v, long *major, long *minor)
{
	char *end;

	v += *v == 'v';
	if (*v < '0' || *v > '9')
		return false;
	*major = strtol(v, &end, 10);
	*minor = -1;
	if (*end == '.' && end[1] >= '0' && end[1] <= '9')
		*minor = strtol(end + 1, &end, 10);
	return true;
}

enum preset_version presets_image_version(const struct spec_preset *p, const char *image, char *out, size_t len)
{
	const char *slash, *colon, *at;
	long major, minor;
	size_t k, n;

	if (len > 0)
		out[0] = '\0';
	for (k = 0; image && k < ARRAY_SIZE(p->images) && p->images[k]; k++)
		if (presets_image_is(image, p->images[k]))
			break;
	if (!image || k == ARRAY_SIZE(p->images) || !p->images[k])
		return VERSION_UNKNOWN;
	at = strchr(image, '@');
	n = at ? (size_t)(at - image) : strlen(image);
	slash = memrchr(image, '/', n);
	colon = memrchr(image, ':', n);
	if (!colon || (slash && colon < slash))
		return at ? VERSION_UNKNOWN : VERSION_NEWEST; /* a digest may be any version; no tag is latest */
	snprintf(out, len, "%.*s", (int)(n - (size_t)(colon + 1 - image)), colon + 1);
	if (strcmp(out, "latest") == 0)
		return VERSION_NEWEST;
	return version_of(out, &major, &minor) ? VERSION_KNOWN : VERSION_UNKNOWN;
}

bool presets_version_at_least(const char *v, const char *since)
{
	long a, b;
	char *end;

	v += *v == 'v';
	since += *since == 'v';
	/* MAJOR.MINOR.PATCH, part by part; a part left out ("2") is the newest of its kind. */
	while (*since) {
		if (*v < '0' || *v > '9')
			return *v == '\0';
		a = strtol(v, &end, 10);
		v = end;
		b = strtol(since, &end, 10);
		since = end;
		if (a != b)
			return a > b;
		v += *v == '.';
		since += *since == '.';
	}
	return true;
}

const char *presets_image_uid(const struct spec_preset *p, const char *image)
{
	const char *slash, *colon, *at;
	char tag[128];
	long major, minor, old_major, old_minor;
	size_t k, n;

	for (k = 0; image && k < ARRAY_SIZE(p->images) && p->images[k]; k++)
		if (presets_image_is(image, p->images[k]))
			break;
	if (!image || k == ARRAY_SIZE(p->images) || !p->images[k])
		return NULL;
	if (!p->root_before)
		return p->uid;
	at = strchr(image, '@');
	n = at ? (size_t)(at - image) : strlen(image);
	slash = memrchr(image, '/', n);
	colon = memrchr(image, ':', n);
	if (!colon || (slash && colon < slash))
		return at ? NULL : p->uid; /* a digest may be any version; no tag is latest */
	snprintf(tag, sizeof(tag), "%.*s", (int)(n - (size_t)(colon + 1 - image)), colon + 1);
	if (strcmp(tag, "latest") == 0)
		return p->uid;
	if (!version_of(tag, &major, &minor) || !version_of(p->root_before, &old_major, &old_minor))
		return NULL;
	/* "1" is the newest 1.x. */
	if (major < old_major || (major == old_major && minor >= 0 && minor < old_minor))
		return "0";
	return p->uid;
}

/* Whether a program's name (argv[0]'s basename) is one of a row's forms. */
static bool known_program(const char *word)
{
	const char *name = word ? base_name(word) : NULL;
	size_t i, k, j;

	for (i = 0; name && i < spec_npresets; i++)
		for (k = 0; k < ARRAY_SIZE(spec_presets[i].forms); k++)
			for (j = 0; j < ARRAY_SIZE(spec_presets[i].forms[k].names) && spec_presets[i].forms[k].names[j]; j++)
				if (strcmp(name, spec_presets[i].forms[k].names[j]) == 0)
					return true;
	return false;
}

/* Whether a word is a shell's option cluster with -c in it (-c, -ec, -xc). */
static bool shell_c(const char *word)
{
	return word && word[0] == '-' && word[1] && word[strspn(word + 1, "abefhmnuvxc") + 1] == '\0' &&
	       strchr(word, 'c');
}

static bool is_shell(const char *word)
{
	static const char *const shells[] = {"sh", "bash", "ash", "dash", "zsh"};
	size_t i;

	for (i = 0; word && i < ARRAY_SIZE(shells); i++)
		if (strcmp(base_name(word), shells[i]) == 0)
			return true;
	return false;
}

/* Programs that exec the rest of their command line, their options first. */
static bool known_wrapper(const char *word)
{
	static const char *const wrappers[] = {"dumb-init", "tini", "tini-static", "catatonit", "kubexit",
					       "scuttle", "env", "nice", "ionice", "su-exec", "gosu", "setpriv",
					       "chpst", "watchkiller"};
	size_t i;

	for (i = 0; word && i < ARRAY_SIZE(wrappers); i++)
		if (strcmp(base_name(word), wrappers[i]) == 0)
			return true;
	return false;
}

/*
 * The program after the wrapper argv[from - 1] and its options, in
 * argv[from..n): its index, or n. After a wrapper rearguard does not know,
 * the program must be named by its path (/watchkiller /cloud_sql_proxy):
 * a bare word after an unknown program is an argument (echo vector).
 */
static size_t wrapped_at(const char *const *argv, size_t from, size_t n)
{
	bool known = from > 0 && known_wrapper(argv[from - 1]);
	size_t i;

	for (i = from; i < n && argv[i]; i++) {
		if (known_program(argv[i]) && (known || strchr(argv[i], '/')))
			return i;
		if (argv[i][0] != '-')
			break;
	}
	return n;
}

/* One simple command of a script's words: the program where it or a wrapper in it runs one. */
static bool script_command(const char **words, size_t n, struct preset_program *out)
{
	size_t i = 0, at;

	while (i < n && (strcmp(words[i], "exec") == 0 || (strchr(words[i], '=') && words[i][0] != '=')))
		i++;
	if (i == n)
		return false;
	at = known_program(words[i]) ? i : wrapped_at(words, i + 1, n);
	if (at == n)
		return false;
	for (out->argc = 0; at < n && out->argc < PRESET_ARGV_MAX; at++)
		out->argv[out->argc++] = words[at];
	return true;
}

int presets_program(const char *const *argv, size_t argc, struct preset_program *out)
{
	const char *words[PRESET_ARGV_MAX + 1];
	size_t at, n, i, start, end;

	memset(out, 0, sizeof(*out));
	if (argc == 0 || !argv[0])
		return 0;
	at = wrapped_at(argv, 1, argc);
	if (at < argc) {
		out->at = at;
		for (; at < argc && out->argc < PRESET_ARGV_MAX; at++)
			out->argv[out->argc++] = argv[at] ? argv[at] : "";
		return 1;
	}
	/* sh -c SCRIPT, also after a wrapper: tini -- sh -c '...' */
	for (i = 0; i + 2 < argc && argv[i]; i++) {
		if (!is_shell(argv[i]) || !shell_c(argv[i + 1]) || !argv[i + 2])
			continue;
		n = argv_script(argv[i + 2], out->buf, sizeof(out->buf), words, ARRAY_SIZE(words));
		for (start = 0; start < n; start = end + 1) {
			for (end = start; end < n && !argv_script_operator(words[end]); end++)
				;
			if (script_command(words + start, end - start, out)) {
				out->at = i + 2;
				out->script = true;
				return 1;
			}
		}
		return 0;
	}
	return 0;
}

/*
 * What a command line says of its program, also where a wrapper runs it:
 * 1 a row's sidecar (*found), -1 the program run once (an app), 0 no
 * program rearguard knows.
 */
static int command_says(const char *const *argv, size_t argc, const struct spec_preset **found)
{
	struct preset_program prog;
	char ev[PRESET_EVIDENCE_MAX];

	*found = presets_detect(NULL, argv, argc, ev, sizeof(ev));
	if (*found)
		return 1;
	if (ev[0])
		return -1;
	if (!presets_program(argv, argc, &prog))
		return 0;
	*found = presets_detect(NULL, prog.argv, prog.argc, ev, sizeof(ev));
	return *found ? 1 : ev[0] ? -1 : 0;
}

/*
 * Whether a container of image is row p's sidecar: the image is one of
 * p's, and its command line (with the image's entrypoint, the program
 * itself, where the template gives none) is no one-shot run. Another row
 * may claim it by its command line: *found says which.
 */
static bool image_of(const struct spec_preset *p, const char *image, const char *const *argv, size_t argc,
		     const struct spec_preset **found)
{
	const char *full[64];
	char ev[PRESET_EVIDENCE_MAX];
	size_t k, j, n;

	for (k = 0; k < ARRAY_SIZE(p->images) && p->images[k]; k++) {
		if (!presets_image_is(image, p->images[k]))
			continue;
		/* No command: the image's entrypoint, which is the program itself. */
		if (argc == 0 || !argv[0]) {
			full[0] = p->forms[0].names[0];
			for (j = 1; j < argc && j < ARRAY_SIZE(full); j++)
				full[j] = argv[j];
			n = argc == 0 ? 1 : j;
			*found = presets_detect(NULL, full, n, ev, sizeof(ev));
			if (!*found && !ev[0])
				*found = p;
			return true; /* NULL: a one-shot run of the sidecar's program, an app */
		}
		/* A wrapper (sh -c 'start.sh') around a program it does not name: the image says. */
		if (command_says(argv, argc, found) == 0)
			*found = p;
		return true;
	}
	return false;
}

const struct spec_preset *presets_container(const char *name, const char *image, const char *const *argv, size_t argc)
{
	const struct spec_preset *found = NULL;
	size_t i;

	/* The command line first: the program it runs says more than an image or a name. */
	if (argc > 0 && argv[0] && command_says(argv, argc, &found) > 0)
		return found;
	for (i = 0; image && i < spec_npresets; i++)
		if (image_of(&spec_presets[i], image, argv, argc, &found))
			return found;
	for (i = 0; name && i < spec_npresets; i++)
		if (listed(spec_presets[i].containers, ARRAY_SIZE(spec_presets[i].containers), name))
			return &spec_presets[i];
	return NULL;
}

/* The digits of a port, 0 to 65535; -1 when value is no port. */
static long port_value(const char *value)
{
	long port = 0;
	const char *p = value;

	if (!value || !*value)
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || p - value > 5)
			return -1;
		port = port * 10 + (*p - '0');
	}
	return port <= 65535 ? port : -1;
}

/* url with its port replaced: "http://127.0.0.1:9091/quitquitquit" on 9192. */
static int url_with_port(const char *url, long port, char *out, size_t len)
{
	const char *host = strstr(url, "://"), *colon, *path;
	int n;

	if (!host)
		return -EINVAL;
	host += 3;
	path = strchr(host, '/');
	if (!path)
		path = host + strlen(host);
	colon = memchr(host, ':', (size_t)(path - host));
	if (!colon)
		colon = path;
	n = snprintf(out, len, "%.*s:%ld%s", (int)(colon - url), url, port, path);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

/* Appends ",key=value" (",key" without a value) to the spec being written. */
static int spec_add(char *out, size_t len, const char *key, const char *value)
{
	size_t used = strlen(out);
	int n = snprintf(out + used, len - used, ",%s%s%s", key, value ? "=" : "", value ? value : "");

	return n < 0 || (size_t)n >= len - used ? -ENOSPC : 0;
}

void presets_flag(const struct spec_preset *p, const struct preset_source *src, const char *name, bool boolean,
		  struct preset_flag_state *out)
{
	struct goflag g;
	const char *v;
	size_t i, n;
	bool on;

	memset(out, 0, sizeof(*out));
	argv_goflag(src->argv, src->argc, name, boolean, &g);
	out->at = g.at;
	if (p->env_prefix) {
		n = (size_t)snprintf(out->env_name, sizeof(out->env_name), "%s%s", p->env_prefix, name);
		for (i = strlen(p->env_prefix); i < n && i < sizeof(out->env_name); i++)
			out->env_name[i] = out->env_name[i] == '-' ? '_' : (char)toupper((unsigned char)out->env_name[i]);
	}
	if (g.set || !*out->env_name || !src->env || !(v = src->env(src->ctr, out->env_name))) {
		out->set = g.set;
		out->on = g.on;
		out->value = g.value;
		return;
	}
	/* viper reads a boolean as Go's strconv.ParseBool does. */
	out->set = out->from_env = true;
	out->on = boolean && argv_gobool(v, &on) == 0 && on;
	out->value = v;
}

int presets_spec(const struct spec_preset *p, const struct preset_source *src, bool signal_stop, char *out, size_t len)
{
	char url[256];
	long ready = -1, stop = -1;
	bool no_ready = false;
	size_t i;
	int rc = 0;

	if (str_copy(out, p->name, len) >= len)
		return -ENOSPC;
	for (i = 0; i < ARRAY_SIZE(p->ports); i++) {
		const struct preset_port *pp = &p->ports[i];
		struct preset_flag_state f;
		const char *v = NULL;
		long port;

		if (pp->annotation && src->ann)
			v = src->ann(src->meta, pp->annotation);
		if (!v && pp->flag) {
			presets_flag(p, src, pp->flag, false, &f);
			v = f.value;
		}
		port = port_value(v);
		if (port < 0)
			continue;
		if (pp->urls & PRESET_READY)
			ready = port;
		if (pp->urls & PRESET_STOP)
			stop = port;
	}
	if (p->ready && p->ready_flag && (src->argc > 0 || src->env)) {
		struct preset_flag_state f;

		presets_flag(p, src, p->ready_flag, true, &f);
		no_ready = !f.on;
	}
	if (p->ready && (no_ready || ready == 0 || src->no_ports))
		rc = spec_add(out, len, "ready", "");
	else if (p->ready && ready > 0 && (rc = url_with_port(p->ready, ready, url, sizeof(url))) == 0)
		rc = spec_add(out, len, "ready", url);
	if (p->helper)
		return spec_add(out, len, "native", NULL);
	if (rc == 0 && strncmp(p->stop, "signal:", 7) != 0) {
		if (signal_stop || stop == 0 || src->no_ports)
			rc = spec_add(out, len, "stop", "signal:TERM");
		else if (stop > 0 && (rc = url_with_port(p->stop, stop, url, sizeof(url))) == 0)
			rc = spec_add(out, len, "stop", url);
	}
	return rc;
}

bool presets_word_true(const char *value, const char *word)
{
	size_t n = strlen(word);
	const char *p = value;

	while ((p = strstr(p, word)) != NULL) {
		p += n;
		if (*p == '"' || *p == '\'')
			p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':')
			continue;
		p++;
		while (*p == ' ' || *p == '\t' || *p == '"' || *p == '\'')
			p++;
		if (strncmp(p, "true", 4) == 0)
			return true;
	}
	return false;
}
