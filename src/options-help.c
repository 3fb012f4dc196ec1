/*
 * What the options print rather than parse: each command's --help, the
 * presets (rearguard presets) and the version with the features of this
 * build (rearguard version). The options themselves, their table and
 * their driver are options.c's.
 */
#include "config.h"

#include "options.h"

#include "json.h"
#include "parse.h"
#include "presets.h"
#include "protocol.h"
#include "review.h"
#include "sys.h"
#include "util.h"

#include <curl/curl.h>
#include <errno.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* rearguard inject --help. */
void options_print_inject_help(void)
{
	char meshes[64];

	presets_mesh_words("|", meshes, sizeof(meshes));
	printf("Usage: rearguard inject [OPTIONS] [FILE|DIR|-]...\n"
	       "\n"
	       "Writes the Kubernetes YAML or JSON of each FILE (each .yaml, .yml and .json\n"
	       "file of a DIR, in name order; standard input for - or none) to standard\n"
	       "output with rearguard added to every Job, CronJob and Pod whose template\n"
	       "shows a known sidecar: shareProcessNamespace: true, the emptyDir, the agent\n"
	       "container first (uid 65532, read-only root, no capabilities, the runtime's\n"
	       "seccomp profile, small requests) with REARGUARD_APPS,\n"
	       "REARGUARD_RESTART_POLICY and REARGUARD_SIDECARS from the template, the\n"
	       "fixes its sidecars need, and kubectl's default-container annotations naming\n"
	       "the first app. Everything else passes through; comments in the documents\n"
	       "it changes are not kept. Reads a YAML stream, a v1 List, or a KRM\n"
	       "ResourceList (kustomize and kpt functions).\n"
	       "\n"
	       "  --image IMAGE         the agent's image (default %s)\n"
	       "                                                       [REARGUARD_IMAGE]\n"
	       "  --mesh %-13s  the namespace injects this mesh's proxy into every pod\n"
	       "                                                       [REARGUARD_MESH]\n"
	       "  --gate                start the apps only once the sidecars are ready (a\n"
	       "                        postStart hook on the agent)   [REARGUARD_GATE=true]\n"
	       "  --services            long-running pods too (Deployments, StatefulSets,\n"
	       "                        ReplicaSets, DaemonSets, Pods of restartPolicy Always),\n"
	       "                        as the pod template's label or annotation\n"
	       "                        " INJECT_LABEL ": " INJECT_SERVICES " asks for one: gated,\n"
	       "                        and on deletion each sidecar held by a preStop hook\n"
	       "                        until the apps have exited    [REARGUARD_SERVICES=true]\n"
	       "  --signal-as-root      where a sidecar stopped by a signal may run as root or\n"
	       "                        another uid, run the agent as root with only the KILL\n"
	       "                        capability (Pod Security baseline, not restricted)\n"
	       "                                              [REARGUARD_SIGNAL_AS_ROOT=true]\n"
	       "  --sidecar CONTAINER[=SPEC]\n"
	       "                        the container CONTAINER is a sidecar, whatever it runs:\n"
	       "                        SPEC is a preset, a stop (signal:TERM, the default, or\n"
	       "                        a URL) or a whole spec; repeatable. The pod template's\n"
	       "                        annotation " INJECT_SIDECARS " does the same.\n"
	       "  -q, --quiet           warnings only, no summary      [REARGUARD_QUIET=true]\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Notes on standard error: one line for each Job, CronJob and Pod, changed or\n"
	       "left alone and why, warnings to act on, and a summary line.\n"
	       "\n"
	       "Exit status: 0 written; 2 bad usage or malformed YAML (nothing is written\n"
	       "then); 1 a read or write error. See docs/inject.md.\n",
	       INJECT_DEFAULT_IMAGE, meshes);
}

/* rearguard webhook --help. */
void options_print_webhook_help(void)
{
	printf("Usage: rearguard webhook [OPTIONS]\n"
	       "\n"
	       "Serves a Kubernetes mutating admission webhook over HTTPS (TLS 1.3, and 1.2 with\n"
	       "ECDHE and AES-GCM or ChaCha20-Poly1305 only): each pod the API server sends to\n"
	       "POST /mutate gets what rearguard inject would add to its template, as a JSON\n"
	       "Patch; every review is allowed, and one the webhook cannot use (another kind,\n"
	       "a review of more than %d values) is answered without a patch. The\n"
	       "certificate and key are read again when they change (a Secret volume's update\n"
	       "included); a new pair that is unreadable, does not match or has expired is\n"
	       "refused and the old one keeps serving; one not valid yet is taken at its\n"
	       "notBefore.\n"
	       "SIGTERM or SIGINT: for --shutdown-delay /readyz says 503 while everything else\n"
	       "is served as before (new connections too, each answer with Connection: close);\n"
	       "then new connections are refused, the requests in flight answered, the idle\n"
	       "connections closed, and the process exits 0 (%d s later at most). A second\n"
	       "signal ends the delay. It has no --mesh: it sees each pod after the mesh's\n"
	       "injector put its proxy in (docs/webhook.md).\n"
	       "\n"
	       "  --listen ADDR:PORT    where to listen (default " WEBHOOK_LISTEN "; :PORT is every address,\n"
	       "                        IPv6 and IPv4; 0.0.0.0:PORT, [::]:PORT, 127.0.0.1:PORT;\n"
	       "                        port 0: any free port, logged)  [REARGUARD_LISTEN]\n"
	       "  --probe-listen ADDR:PORT\n"
	       "                        the probes' port, plain HTTP: /healthz, /readyz,\n"
	       "                        /metrics, with limits of its own (default " WEBHOOK_PROBE_LISTEN ")\n"
	       "                                                       [REARGUARD_PROBE_LISTEN]\n"
	       "  --shutdown-delay DUR  after SIGTERM, serve new connections this long with\n"
	       "                        /readyz at 503, while the pod leaves the Service's\n"
	       "                        endpoints (default " WEBHOOK_SHUTDOWN_DELAY "; 0s: none)\n"
	       "                                                     [REARGUARD_SHUTDOWN_DELAY]\n"
	       "  --tls-cert FILE       the serving certificate, PEM, the chain after it\n"
	       "                        (default " WEBHOOK_TLS_CERT ") [REARGUARD_TLS_CERT]\n"
	       "  --tls-key FILE        its private key, PEM\n"
	       "                        (default " WEBHOOK_TLS_KEY ") [REARGUARD_TLS_KEY]\n"
	       "  --image IMAGE         the agent's image (default %s)\n"
	       "                                                       [REARGUARD_IMAGE]\n"
	       "  --gate                start the apps only once the sidecars are ready\n"
	       "                                                       [REARGUARD_GATE=true]\n"
	       "  --signal-as-root      as for rearguard inject   [REARGUARD_SIGNAL_AS_ROOT=true]\n"
	       "  --sidecar CONTAINER[=SPEC]\n"
	       "                        the container CONTAINER is a sidecar, whatever it runs;\n"
	       "                        repeatable (as for rearguard inject)\n"
	       "      --log-format FMT  text (default) or json, one line per event on stderr\n"
	       "                                                       [REARGUARD_LOG_FORMAT]\n"
	       "  -v, --verbose         a line for every review, and TLS and HTTP details\n"
	       "                                                       [REARGUARD_VERBOSE=true]\n"
	       "  -q, --quiet           warnings and errors only       [REARGUARD_QUIET=true]\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Endpoints: POST /mutate (an AdmissionReview, application/json, at most %d MiB;\n"
	       "413 past it, 503 while the bodies and answers held take %zu MiB); POST\n"
	       "/mutate/services, the same for a namespace labelled " INJECT_LABEL "=" INJECT_SERVICES "\n"
	       "(its long-running pods asked for too, as a pod asks with that label itself:\n"
	       "started after their sidecars, which are held on deletion until the apps have\n"
	       "exited); GET /healthz (200 while the process runs); GET /readyz (200 while\n"
	       "serving, 503 from SIGTERM on); GET /metrics (Prometheus text: reviews by\n"
	       "outcome, their duration, answers by status, connections refused and closed,\n"
	       "the certificate's expiry and reloads, requests in flight). The probes' port\n"
	       "serves all but /mutate and /mutate/services.\n"
	       "Connections: %d served at once, %d of them from one address (more from it wait,\n"
	       "%d open at most); a request's headers within %d s of the connection's start or\n"
	       "its last answer, that request answered within %d s; past those, closed.\n"
	       "Log: a line for each patched review and each error (-v: every review), with\n"
	       "the pod, the request's uid and the time taken.\n"
	       "\n"
	       "Exit status: 0 stopped by SIGTERM or SIGINT; 1 the certificate, the key or\n"
	       "an address cannot be used at start; 2 bad usage.\n",
	       REVIEW_MAX_NODES, WEBHOOK_DRAIN_S, INJECT_DEFAULT_IMAGE, WEBHOOK_BODY_MAX >> 20,
	       WEBHOOK_HELD_MAX >> 20, WEBHOOK_CONNECTIONS, WEBHOOK_PER_CLIENT, WEBHOOK_OPEN_PER_CLIENT, WEBHOOK_HEADERS_S,
	       WEBHOOK_REQUEST_S);
}

/* rearguard explain --help (and kubectl rearguard explain --help). */
void options_print_explain_help(void)
{
	char meshes[64];

	presets_mesh_words("|", meshes, sizeof(meshes));
	printf("Usage: rearguard explain [OPTIONS] [FILE|DIR|-]...\n"
	       "       kubectl rearguard explain [OPTIONS] [FILE|DIR|-]...\n"
	       "\n"
	       "Says why a pod is still running, and what fixes it. Reads what kubectl get\n"
	       "-o json or -o yaml prints (standard input for - or none): a Pod, a Job, a\n"
	       "CronJob, a List of them, or a whole cluster's\n"
	       "kubectl get pods,jobs,cronjobs,namespaces -A -o json; a directory's .json,\n"
	       ".yaml and .yml files, in its subdirectories too (a must-gather dump). It\n"
	       "needs no access to a cluster. Each pod gets one verdict with its evidence and its fixes, most\n"
	       "direct first: hung (the apps exited and a plain container runs on),\n"
	       "hung with rearguard (the agent could not stop it), at risk (it will hang, or\n"
	       "a sidecar in initContainers blocks it), failed because of a sidecar, fine.\n"
	       "A Job or CronJob none of whose pods is in the input is judged by its\n"
	       "template. For more than one namespace, a table by namespace follows, with\n"
	       "the label that covers most of them. What the webhook would do is its own\n"
	       "decision, asked on the pod.\n"
	       "\n"
	       "  kubectl get pods -l job-name=JOB -o json | kubectl rearguard explain\n"
	       "\n"
	       "  -o, --output text|json  text for people (default), JSON for tools (every\n"
	       "                        object, the schema of docs/explain.md)\n"
	       "  --all                 the fine ones too\n"
	       "  --audit               the table by namespace only\n"
	       "  --now TIME            judge as of TIME (RFC 3339, as kubectl prints it), for\n"
	       "                        a dump read later (default: now)\n"
	       "  --mesh %-13s  the webhook's --mesh: the cluster injects this mesh\n"
	       "                                                       [REARGUARD_MESH]\n"
	       "  --sidecar CONTAINER[=SPEC]\n"
	       "                        the webhook's --sidecar (as for rearguard inject)\n"
	       "  -h, --help            this text\n"
	       "\n"
	       "Exit status: 0 every pod is fine; 1 a pod is hung or at risk, or a sidecar\n"
	       "failed it; 2 bad usage or bad input (one line on standard error, with the\n"
	       "line and column where it broke, and nothing on standard output).\n"
	       "See docs/explain.md.\n",
	       meshes);
}

void options_print_help(void)
{
	size_t i;

	printf("Usage: rearguard [agent] [OPTIONS]\n"
	       "       rearguard run [--name NAME] [OPTIONS] -- CMD [ARG...]\n"
	       "       rearguard sidecar [--name NAME] [OPTIONS] -- PROGRAM [ARG...]\n"
	       "       rearguard wait ready|apps-done|done|stopped [--timeout DUR] [--dir DIR]\n"
	       "       rearguard drain [--sidecar SPEC]... [--stop-timeout DUR] [--kill-after DUR]\n"
	       "       rearguard install DIR\n"
	       "       rearguard inject [--image IMAGE] [--mesh istio|linkerd] [--gate] [--services] [FILE|-]\n"
	       "       rearguard webhook [--listen ADDR:PORT] [--tls-cert FILE] [--tls-key FILE]\n"
	       "       rearguard explain [-o text|json] [--all] [--audit] [FILE|DIR|-]...\n"
	       "       rearguard presets\n"
	       "       rearguard version | --version | --help\n"
	       "\n"
	       "Gives a pod native-sidecar behaviour: the agent runs as one more container of a\n"
	       "pod with shareProcessNamespace: true, watches the other containers through /proc\n"
	       "and pidfds, and when the apps are done stops the sidecars (in reverse order),\n"
	       "confirms that they are gone, and exits, so that a Job completes.\n"
	       "\n"
	       "Agent options (each has an environment twin; the flag wins):\n"
	       "  -s, --sidecar SPEC         a sidecar to stop when the apps are done; repeatable.\n"
	       "                             Without one, the known sidecars are detected by their\n"
	       "                             processes; 'auto' adds detection to the specs given\n"
	       "                                                      [REARGUARD_SIDECARS, ';'-separated]\n"
	       "      --app REGEX            only containers with a process named like this are\n"
	       "                             apps (default: all but pause, rearguard, sidecars)\n"
	       "                                                      [REARGUARD_APP]\n"
	       "      --apps N               app containers to expect; until N were seen the apps\n"
	       "                             are not done, and after that /proc is not rescanned\n"
	       "                                                      [REARGUARD_APPS]\n"
	       "  -d, --dir DIR              shared volume of the file protocol; 'ready' is written\n"
	       "                             there once every sidecar is ready\n"
	       "                             (default " DEFAULT_DIR ") [REARGUARD_DIR]\n"
	       "      --restart-policy P     the pod's restartPolicy: Never (default), OnFailure, or\n"
	       "                             Always (a long-running pod: only its deletion, the\n"
	       "                             agent's SIGTERM, stops the sidecars)\n"
	       "                                                      [REARGUARD_RESTART_POLICY]\n"
	       "      --startup-timeout DUR  no app by then: log an error and drain (Always: no\n"
	       "                             drain) (default " DEFAULT_STARTUP_TIMEOUT ")\n"
	       "                                                      [REARGUARD_STARTUP_TIMEOUT]\n"
	       "      --sidecar-wait DUR     apps done and a --sidecar not started yet: wait this\n"
	       "                             long for it, to stop it (default " DEFAULT_SIDECAR_WAIT ") [REARGUARD_SIDECAR_WAIT]\n"
	       "      --ready-timeout DUR    sidecars not ready by then: log an error, keep going,\n"
	       "                             never write 'ready' (default " DEFAULT_READY_TIMEOUT ") [REARGUARD_READY_TIMEOUT]\n"
	       "      --stop-timeout DUR     per sidecar: wait this long after the stop request,\n"
	       "                             then SIGTERM (default " DEFAULT_STOP_TIMEOUT ") [REARGUARD_STOP_TIMEOUT]\n"
	       "      --kill-after DUR       after that SIGTERM wait this long, then SIGKILL\n"
	       "                             (default " DEFAULT_KILL_AFTER ")             [REARGUARD_KILL_AFTER]\n"
	       "      --term-grace DUR       after SIGTERM to the agent, keep the sidecars this long\n"
	       "                             for the apps to finish (default " DEFAULT_TERM_GRACE ") [REARGUARD_TERM_GRACE]\n"
	       "      --restart-grace DUR    OnFailure: how long a failed app may take to come back\n"
	       "                             (default " DEFAULT_RESTART_GRACE ")             [REARGUARD_RESTART_GRACE]\n"
	       "      --first                the agent is the pod's first regular container (as inject\n"
	       "                             writes it): containers running before it started are\n"
	       "                             native sidecars, unless a sidecar spec without native\n"
	       "                             matches them                  [REARGUARD_FIRST=true]\n"
	       "      --on-sidecar-exit WHAT a sidecar fails while the apps run, under Never: warn\n"
	       "                             (default: log it; the apps run on without it), or fail:\n"
	       "                             stop the apps as the kubelet would (SIGTERM, SIGKILL\n"
	       "                             after --kill-after) so that the Job fails now and its\n"
	       "                             backoffLimit retries it  [REARGUARD_ON_SIDECAR_EXIT]\n"
	       "      --termination-log PATH where the JSON summary goes, if writable\n"
	       "                             (default " DEFAULT_TERMINATION_LOG ") [REARGUARD_TERMINATION_LOG];\n"
	       "                             a short form when the kubelet would cut it\n"
	       "      --log-format FMT       text (default) or json, one line per event on stderr\n"
	       "                                                      [REARGUARD_LOG_FORMAT]\n"
	       "  -v, --verbose              log debug lines too      [REARGUARD_VERBOSE=true]\n"
	       "  -q, --quiet                log warnings and errors only [REARGUARD_QUIET=true]\n"
	       "  -h, --help                 this text\n"
	       "      --version              version and build features\n"
	       "\n"
	       "rearguard drain stops the sidecars now, once, from any container of the pod (a\n"
	       "preStop hook, or by hand), the way the agent does after the apps: in reverse order,\n"
	       "each confirmed gone before the next. It takes --sidecar, --stop-timeout,\n"
	       "--kill-after, --log-format, -v and -q, with the same environment twins.\n"
	       "\n"
	       "Durations: 250ms, 30s, 5m, 1h, 1.5s; a bare number is seconds.\n"
	       "\n"
	       "Sidecar SPEC: PRESET[,KEY=VALUE...] or KEY=VALUE[,KEY=VALUE...]\n"
	       "  name=NAME        label in logs and the summary (default: the preset or match)\n"
	       "  match=REGEX      POSIX extended regex matched against the whole process name\n"
	       "                   (comm, or the basename of argv[0]); required without a preset\n"
	       "  ready=URL        GET until 2xx; without it, ready once its process is seen\n"
	       "  drain=URL        POSTed first, then drain-time is waited\n"
	       "  drain-time=DUR   wait after drain (default 0)\n"
	       "  stop=URL|signal:NAME|signal-all:NAME\n"
	       "                   POST URL (retried within --stop-timeout), or send the signal\n"
	       "                   (default signal:TERM) to the container's main process, as the\n"
	       "                   runtime does (signal-all: to each of its processes); either way\n"
	       "                   the sidecar counts as stopped only once its processes are gone;\n"
	       "                   SIGTERM, then SIGKILL to every process, if they are not\n"
	       "  native           (no value) a native sidecar, an init container with\n"
	       "                   restartPolicy: Always: never waited for, never stopped\n"
	       "  handles-stop     (no value) its program exits 0 on its stop signal: rearguard\n"
	       "                   inject and the webhook do not run it under rearguard sidecar\n"
	       "Presets:\n");
	for (i = 0; i < spec_npresets; i++)
		printf("  %-9s match=%s stop=%s\n", spec_presets[i].name, spec_presets[i].match, spec_presets[i].stop);
	printf("\n"
	       "Exit status: 0 every sidecar is gone; 1 a sidecar could not be stopped;\n"
	       "2 bad usage or configuration.\n"
	       "\n"
	       "Files in --dir: ready, apps/NAME, drain, apps-done, done, sidecars/NAME and\n"
	       "sidecars/NAME.stop (see docs/protocol.md).\n"
	       "\n"
	       "rearguard run [OPTIONS] -- CMD [ARG...]: waits for ready, runs CMD, forwards\n"
	       "TERM, INT, HUP, QUIT, USR1 and USR2 to it, writes apps/NAME with its exit code\n"
	       "and exits with that code (128+N after signal N).\n"
	       "  -d, --dir DIR              the shared volume (default " DEFAULT_DIR ")\n"
	       "                                                      [REARGUARD_DIR]\n"
	       "      --name NAME            report as apps/NAME (default: the basename of CMD)\n"
	       "                                                      [REARGUARD_NAME]\n"
	       "      --timeout DUR          wait at most this long for ready (default " DEFAULT_WAIT_TIMEOUT ")\n"
	       "                                                      [REARGUARD_TIMEOUT]\n"
	       "      --no-wait              start CMD at once, without waiting for ready\n"
	       "                                                      [REARGUARD_NO_WAIT=true]\n"
	       "      --drain                the wrapper model, when no agent runs: wait for the\n"
	       "                             sidecars' ready URLs (not the ready file), and stop\n"
	       "                             the sidecars after CMD   [REARGUARD_DRAIN=true]\n"
	       "  -s, --sidecar SPEC         with --drain: a sidecar to wait for and stop ('auto':\n"
	       "                             detect the known ones, in a shared PID namespace)\n"
	       "                                                      [REARGUARD_SIDECARS]\n"
	       "      --stop-timeout, --kill-after DUR  with --drain: as for the agent\n"
	       "      --log-format, -v, -q   as for the agent (its own lines on stderr)\n"
	       "  Exit status: CMD's; 124 ready did not appear within --timeout (CMD not started);\n"
	       "  125 run itself failed; 126 CMD cannot be executed; 127 CMD not found.\n"
	       "\n"
	       "rearguard sidecar [OPTIONS] -- PROGRAM [ARG...]: runs a sidecar's PROGRAM as its\n"
	       "child, so that the stop ends the container with 0, as a native sidecar's stop\n"
	       "does not fail the pod: it passes every signal on to PROGRAM, takes the agent's\n"
	       "stop from DIR/sidecars/NAME.stop too (no uid or capability needed), kills\n"
	       "PROGRAM when --stop-timeout has passed since the stop, and exits 0 when PROGRAM\n"
	       "ended of the stop (a signal it was sent, 128 + that signal, SIGKILL), else with\n"
	       "PROGRAM's own status (128+N after signal N); how PROGRAM ended goes to its log\n"
	       "and to DIR/sidecars/NAME, for the agent's summary.\n"
	       "  -d, --dir DIR              the shared volume (default " DEFAULT_DIR ")\n"
	       "                                                      [REARGUARD_DIR]\n"
	       "      --name NAME            its files are sidecars/NAME and sidecars/NAME.stop\n"
	       "                             (default: the basename of PROGRAM) [REARGUARD_NAME]\n"
	       "      --stop-signal SIG      the signal that stops PROGRAM, besides SIGTERM (the\n"
	       "                             kubelet's) (default TERM) [REARGUARD_STOP_SIGNAL]\n"
	       "      --stop-timeout DUR     after the stop, PROGRAM gets this long, then SIGKILL;\n"
	       "                             as the agent's (default " DEFAULT_STOP_TIMEOUT ") [REARGUARD_STOP_TIMEOUT]\n"
	       "      --log-format, -v, -q   as for the agent (its own lines on stderr)\n"
	       "  Exit status: 0 PROGRAM ended of the stop; else PROGRAM's (128+N after signal N);\n"
	       "  125 the wrapper itself failed; 126 PROGRAM cannot be executed; 127 not found.\n"
	       "\n"
	       "rearguard wait ready|apps-done|done: blocks until that file exists in DIR (also as\n"
	       "a postStart or preStop hook). DIR may appear later; its parent must exist.\n"
	       "rearguard wait stopped: a sidecar's preStop hook on a long-running pod's deletion:\n"
	       "blocks until the main process of the container it runs in exits (rearguard\n"
	       "stopped it, after the apps), or done exists in DIR, or a SIGTERM comes.\n"
	       "  -d, --dir DIR              the shared volume (default " DEFAULT_DIR ")\n"
	       "                                                      [REARGUARD_DIR]\n"
	       "      --timeout DUR          give up after DUR (default " DEFAULT_WAIT_TIMEOUT "; 0: look once)\n"
	       "                                                      [REARGUARD_TIMEOUT]\n"
	       "  Exit status: 0 the condition holds; 1 timed out; 2 bad usage.\n"
	       "\n"
	       "rearguard install DIR: copies this binary to DIR/rearguard (atomically, mode\n"
	       "0755), for an init container to hand it to images that lack it.\n"
	       "\n"
	       "rearguard inject [FILE|-]: writes the Kubernetes YAML of FILE (or standard input:\n"
	       "a stream, a v1 List or a KRM ResourceList) with rearguard added to every Job,\n"
	       "CronJob and Pod whose template shows a known sidecar; rearguard inject --help\n"
	       "lists its options (--image, --mesh, --gate) and docs/inject.md explains it.\n"
	       "\n"
	       "rearguard webhook: the same for each pod the API server creates, as a mutating\n"
	       "admission webhook over HTTPS; rearguard webhook --help lists its options.\n"
	       "\n"
	       "rearguard explain [FILE|DIR|-]...: why a pod (of kubectl get -o json or -o yaml)\n"
	       "is still running, and what fixes it; installed as kubectl-rearguard too, it is\n"
	       "kubectl rearguard explain. rearguard explain --help lists its options.\n"
	       "\n"
	       "rearguard presets: the table of known sidecars, one JSON object a line, in its\n"
	       "order (the order of detection, and the reverse of the detected sidecars' stops).\n");
}

/* A NULL-ended list of at most max strings as a JSON array. */
static void json_list(struct jbuf *j, const char *key, const char *const *list, size_t max)
{
	size_t i;

	jbuf_key(j, key);
	jbuf_begin(j, '[');
	for (i = 0; i < max && list[i]; i++)
		jbuf_str(j, list[i]);
	jbuf_end(j, ']');
}

/* A string member, null when absent. */
static void json_member_str(struct jbuf *j, const char *key, const char *value)
{
	jbuf_key(j, key);
	if (value)
		jbuf_str(j, value);
	else
		jbuf_null(j);
}

/*
 * rearguard presets: what the documentation's lists of presets are written
 * from (tools/presets), and what a user may read to see what a preset
 * matches, how it stops and how inject knows it.
 */
int options_print_presets(void)
{
	struct jbuf j;
	size_t i, k;
	int rc = 0;

	for (i = 0; i < spec_npresets && rc == 0; i++) {
		const struct spec_preset *p = &spec_presets[i];

		jbuf_init(&j);
		jbuf_begin(&j, '{');
		json_member_str(&j, "name", p->name);
		json_member_str(&j, "title", p->title);
		json_member_str(&j, "match", p->match);
		json_member_str(&j, "ready", p->ready);
		json_member_str(&j, "drain", p->drain);
		json_member_str(&j, "stop", p->stop);
		jbuf_key(&j, "helper");
		jbuf_bool(&j, p->helper);
		jbuf_key(&j, "processes");
		jbuf_begin(&j, '[');
		for (k = 0; k < ARRAY_SIZE(p->forms) && p->forms[k].names[0]; k++) {
			jbuf_begin(&j, '{');
			json_list(&j, "names", p->forms[k].names, ARRAY_SIZE(p->forms[k].names));
			json_list(&j, "serve", p->forms[k].serve, ARRAY_SIZE(p->forms[k].serve));
			json_member_str(&j, "arg_has", p->forms[k].arg_has);
			jbuf_end(&j, '}');
		}
		jbuf_end(&j, ']');
		json_list(&j, "oneshot", p->oneshot, ARRAY_SIZE(p->oneshot));
		json_list(&j, "containers", p->containers, ARRAY_SIZE(p->containers));
		json_list(&j, "images", p->images, ARRAY_SIZE(p->images));
		json_member_str(&j, "mesh", p->mesh);
		json_member_str(&j, "inject_key", p->inject_key);
		json_member_str(&j, "uid", p->uid);
		jbuf_end(&j, '}');
		if (j.failed || printf("%s\n", j.buf) < 0)
			rc = -ENOMEM;
		jbuf_free(&j);
	}
	return rc;
}

/* Whether this kernel reports the exit status of a reaped process through its pidfd. */
static const char *probe_exit_info(void)
{
	int fd, status = 0;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return "unknown";
	if (pid == 0)
		_exit(3);
	fd = sys_pidfd_open(pid);
	waitpid(pid, NULL, 0);
	if (fd < 0)
		return "no (no pidfd)";
	status = sys_pidfd_exit_status(fd, &status) == 0 && wait_status_code(status) == 3;
	close(fd);
	return status ? "yes" : "no";
}

void options_print_version(void)
{
	curl_version_info_data *cv = curl_version_info(CURLVERSION_NOW);
	int fd = sys_pidfd_open(getpid());

	printf("rearguard %s\n", PACKAGE_VERSION);
	printf("build: %s; libev %d.%d; libcurl %s\n", RG_BUILD_FEATURES, ev_version_major(), ev_version_minor(),
	       cv ? cv->version : "?");
	printf("kernel: pidfd %s; exit codes of other containers (PIDFD_INFO_EXIT) %s\n", fd >= 0 ? "yes" : "no",
	       probe_exit_info());
	if (fd >= 0)
		close(fd);
}
