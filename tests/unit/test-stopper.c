/*
 * One sidecar's adapter (stopper.c) on a fake /proc whose pids are real
 * children (tests/unit/fakepod.h): which processes it watches and
 * signals, when it says they are gone, what its requests and its
 * pre-flight look report.
 */
#include "config.h"

#include "decide.h"
#include "http.h"
#include "log.h"
#include "options.h"
#include "pod.h"
#include "spec.h"
#include "stopper.h"
#include "tap.h"

#include "fakepod.h"

#include <ev.h>
#include <fcntl.h>

static struct ev_loop *loop;
static FILE *log_file;
static struct decide_event events[64];
static size_t nevents;
static unsigned empties;

static void on_event(void *data, const struct decide_event *ev)
{
	if (nevents < ARRAY_SIZE(events))
		events[nevents++] = *ev;
}

static void on_empty(void *data, size_t index)
{
	empties++;
}

/* The pod's events are not this test's: the pod only classifies the processes. */
static void ignore(void *data, const struct decide_event *ev, int64_t when)
{
}

static const struct decide_event *find(enum decide_event_kind kind, enum decide_http_purpose purpose)
{
	size_t i;

	for (i = 0; i < nevents; i++)
		if (events[i].kind == kind && (kind != DECIDE_EV_HTTP_RESULT || events[i].purpose == purpose))
			return &events[i];
	return NULL;
}

static bool logged(const char *needle)
{
	char buf[65536];
	ssize_t n;

	fflush(log_file);
	n = pread(fileno(log_file), buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	return strstr(buf, needle) != NULL;
}

/*
 * A sidecar under rearguard sidecar (its root's command line says so) and
 * one that is not: what the stop signal will do to each, read before it
 * goes; the wrapped one's signal as a request on the volume, its root and
 * its program left alone by the agent; its report, read when it is gone.
 */
static void wrapped(void)
{
	static const char wrapper[] = "/opt/rearguard/rearguard\0sidecar\0--name\0web\0--\0busybox\0httpd\0-f";
	static const char none[] = "Name:\ttail\nState:\tS (sleeping)\nSigBlk:\t0000000000000000\n"
				   "SigIgn:\t0000000000000000\nSigCgt:\t0000000000000000\n";
	static const char ignored[] = "Name:\ttail\nState:\tS (sleeping)\nSigBlk:\t0000000000000000\n"
				      "SigIgn:\t0000000000004000\nSigCgt:\t0000000000000000\n";
	char dir[] = "/tmp/rg-stopper-wrap.XXXXXX", path[128], text[32];
	struct sidecar_spec specs[2];
	struct stopper sw, st;
	struct pod_config cfg;
	const struct decide_event *ev;
	struct pod pod;
	int w_rel, p_rel, t_rel, fd;
	pid_t w, prog, t;
	unsigned sent;
	ssize_t n;

	if (!mkdtemp(dir))
		bail_out("mkdtemp");
	fake_spec(&specs[0], "name=web,match=busybox");
	fake_spec(&specs[1], "name=tailer,match=tail");
	fake_pod_base();
	w = fake_child(CHILD_WAITS, &w_rel);
	fake_proc(w, 0, "rearguard", CG("/web"), NULL);
	fake_cmdline(w, wrapper, sizeof(wrapper));
	prog = fake_child(CHILD_WAITS, &p_rel);
	fake_proc(prog, w, "busybox", NULL, "busybox");
	t = fake_child(CHILD_WAITS, &t_rel);
	fake_proc(t, 0, "tail", CG("/tailer"), "/usr/bin/tail");
	fake_pod_config(&cfg, loop, &specs[0]);
	cfg.sidecars = specs;
	cfg.nsidecars = 2;
	cfg.on_event = ignore;
	if (pod_open(&pod, &cfg) < 0)
		bail_out("no pod");
	{
		struct stopper_config wc = { .loop = loop, .ps = pod.ps, .spec = &specs[0], .index = 0, .dir = dir,
					     .sidecar_name = options_sidecar_name,
					     .on_event = on_event, .on_empty = on_empty };
		struct stopper_config tc = { .loop = loop, .ps = pod.ps, .spec = &specs[1], .index = 1, .dir = dir,
					     .sidecar_name = options_sidecar_name,
					     .on_event = on_event, .on_empty = on_empty };

		stopper_init(&sw, &wc);
		stopper_init(&st, &tc);
	}
	stopper_check(&sw, fake_container_of(&pod, w));
	ok(logged("pre-flight: the sidecar runs under rearguard sidecar"), "the wrapper is known by its command line");
	is_int(stopper_fate(&sw, SIGTERM), DECIDE_FATE_WRAPPED, "its stop ends its container with 0");
	is_int(stopper_signal(&sw, SIGTERM, false, &sent), 0, "its stop signal");
	is_int(sent, 1, "one request");
	snprintf(path, sizeof(path), "%s/sidecars/web.stop", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	text[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	is_str(text, "TERM\n", "written to sidecars/web.stop, its --name");
	ok(!fake_dead(w) && !fake_dead(prog), "neither the wrapper nor its program got a signal of ours");
	is_int(stopper_collect(&sw), 2, "the wrapper and its program are watched");
	is_int(stopper_signal(&sw, SIGKILL, true, &sent), 0, "SIGKILL to every process: asked of the wrapper too");
	ok(!fake_dead(w), "the wrapper itself is never killed by the agent");
	FAKE_RUN_UNTIL(loop, fake_dead(prog));
	ok(fake_dead(prog), "its program is (the wrapper says 0 for a SIGKILL during the stop)");
	snprintf(path, sizeof(path), "%s/sidecars/web", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, "0 signal:TERM\n", 14) != 14)
		bail_out("cannot write the report");
	close(fd);
	nevents = 0;
	stopper_reports(&sw);
	ev = find(DECIDE_EV_PROGRAM, 0);
	ok(ev && ev->sidecar == 0 && ev->code == 0 && ev->name && strcmp(ev->name, "signal:TERM") == 0,
	   "its report: how its program ended, for decide");

	/* Not wrapped: its masks say. */
	stopper_check(&st, fake_container_of(&pod, t));
	is_int(stopper_fate(&st, SIGTERM), DECIDE_FATE_HANDLES, "SigCgt has SIGTERM: it handles it");
	fake_put(t, "status", none, sizeof(none) - 1);
	is_int(stopper_fate(&st, SIGTERM), DECIDE_FATE_DIES, "no handler: it will die of it");
	fake_put(t, "status", ignored, sizeof(ignored) - 1);
	is_int(stopper_fate(&st, SIGTERM), DECIDE_FATE_IGNORES, "SigIgn: it will not stop");
	is_int(stopper_signal(&st, SIGTERM, false, &sent), 0, "its stop signal goes as a signal");
	is_int(sent, 1, "to its root");
	snprintf(path, sizeof(path), "%s/sidecars/tailer.stop", dir);
	ok(access(path, F_OK) < 0, "no request on the volume");

	fake_release(w_rel, 0);
	close(t_rel); /* it had its SIGTERM */
	close(p_rel);
	stopper_free(&sw);
	stopper_free(&st);
	pod_close(&pod);
	spec_free(&specs[0]);
	spec_free(&specs[1]);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		bail_out("rm");
}

int main(void)
{
	static const char cloudsql_cmdline[] = "/cloud-sql-proxy\0project:region:db";
	struct sidecar_spec spec, cloudsql;
	struct pod_config cfg;
	const struct podscan_container *c;
	const struct decide_event *ev;
	struct stopper st, sq, late;
	struct http *h = NULL;
	struct pod pod;
	int root_rel, worker_rel, spared_rel, sql_rel;
	pid_t root, worker, spared, sql;
	unsigned sent;

	log_file = fake_start(&loop);
	fake_spec(&spec, "match=fluent-bit,ready=http://127.0.0.1:1/ready,stop=http://127.0.0.1:1/quit");
	fake_spec(&cloudsql, "cloudsql");
	fake_pod_base();
	/* The sidecar's container: its root, a worker it forked, and a shell spared as drain's own. */
	root = fake_child(CHILD_TERM_EXITS, &root_rel);
	worker = fake_child(CHILD_WAITS, &worker_rel);
	spared = fake_child(CHILD_WAITS, &spared_rel);
	fake_proc(root, 0, "fluent-bit", CG("/proxy"), "/usr/bin/fluent-bit");
	fake_proc(worker, root, "fluent-bit", NULL, NULL);
	fake_proc(spared, root, "sh", NULL, "/bin/sh");
	sql = fake_child(CHILD_WAITS, &sql_rel);
	fake_proc(sql, 0, "cloud-sql-proxy", CG("/cloudsql"), NULL);
	fake_cmdline(sql, cloudsql_cmdline, sizeof(cloudsql_cmdline));

	fake_pod_config(&cfg, loop, &spec);
	cfg.on_event = ignore;
	if (pod_open(&pod, &cfg) < 0 || http_new(loop, &h) < 0)
		bail_out("no pod, or no libcurl");
	{
		struct stopper_config sc = {
			.loop = loop, .http = h, .ps = pod.ps, .spec = &spec, .index = 0,
			.spare = &spared, .nspare = 1, .on_event = on_event, .on_empty = on_empty,
		};
		struct stopper_config qc = {
			.loop = loop, .http = h, .ps = pod.ps, .spec = &cloudsql, .index = 1,
			.on_event = on_event, .on_empty = on_empty,
		};

		stopper_init(&st, &sc);
		stopper_init(&sq, &qc);
		stopper_init(&late, &qc);
	}
	is_int(stopper_prepare(&st, NULL, 0), 0, "its requests are built ahead of time");

	/* Collected: every process of its container but the spared one. */
	ok(!stopper_collecting(&st) && !stopper_gone(&st), "nothing collected yet: not gone");
	is_int(stopper_collect(&st), 2, "the root and the worker are watched");
	ok(stopper_collecting(&st) && !stopper_gone(&st), "collecting, and they run");
	is_int(stopper_polled(&st), 0, "each with a pidfd");

	/* The stop signal goes to the root alone, as the runtime's StopContainer sends it. */
	is_int(stopper_signal(&st, SIGTERM, false, &sent), 0, "SIGTERM to the roots");
	is_int(sent, 1, "one root");
	FAKE_RUN_UNTIL(loop, stopper_live(&st) == 1);
	is_int(stopper_live(&st), 1, "the root exited; the worker still runs");
	is_int(empties, 0, "not empty yet");
	ok(!fake_dead(worker) && !fake_dead(spared), "the worker and the spared shell were not signalled");

	/* SIGKILL goes to every process it watches. */
	is_int(stopper_signal(&st, SIGKILL, true, &sent), 0, "SIGKILL to every process");
	is_int(sent, 1, "the worker (the root is gone)");
	FAKE_RUN_UNTIL(loop, empties == 1);
	is_int(empties, 1, "the last watched process is gone: said once");
	fake_gone(root);
	fake_gone(worker);
	pod_refresh(&pod);
	is_int(stopper_collect(&st), 0, "a fresh look finds nothing new");
	ok(stopper_gone(&st), "gone");
	ok(!fake_dead(spared), "the spared shell still runs");

	/* A request's result is an event for decide: nothing listens on port 1. */
	is_int(stopper_request(&st, DECIDE_HTTP_STOP, NULL, US_PER_S, US_PER_S, NULL, 0), 0, "the stop request starts");
	is_int(stopper_request(&st, DECIDE_HTTP_READY, NULL, US_PER_S, US_PER_S, NULL, 0), 0, "so does a readiness poll");
	FAKE_RUN_UNTIL(loop,
		       find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_STOP) && find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_READY));
	ev = find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_STOP);
	ok(ev && ev->result == -ECONNREFUSED, "the stop request: refused");
	ev = find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_READY);
	ok(ev && ev->sidecar == 0, "the poll's result, for sidecar 0");

	/* A request built at its use builds only itself: the one in flight goes on to its result. */
	nevents = 0;
	is_int(stopper_request(&st, DECIDE_HTTP_STOP, NULL, US_PER_S, US_PER_S, NULL, 0), 0, "the stop request starts again");
	ok(!find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_STOP), "and is in flight");
	is_int(stopper_request(&st, DECIDE_HTTP_DRAIN, NULL, US_PER_S, US_PER_S, NULL, 0), -EINVAL, "a drain without a URL is refused");
	FAKE_RUN_UNTIL(loop, find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_STOP));
	ok(find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_STOP) != NULL, "the stop request in flight still ends with its result");

	/* The gone probe connects where decide says: one of the sidecar's own URLs, no other. */
	nevents = 0;
	is_int(stopper_request(&st, DECIDE_HTTP_GONE, "http://127.0.0.1:1/elsewhere", US_PER_S, US_PER_S, NULL, 0), -EINVAL,
	       "a gone probe to a URL not the sidecar's is refused");
	is_int(stopper_request(&st, DECIDE_HTTP_GONE, spec.stop_url, US_PER_S, US_PER_S, NULL, 0), 0,
	       "a gone probe to its stop URL starts");
	FAKE_RUN_UNTIL(loop, find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_GONE));
	ev = find(DECIDE_EV_HTTP_RESULT, DECIDE_HTTP_GONE);
	ok(ev && ev->result == -ECONNREFUSED, "refused: the sign it is gone, for decide to read");

	/* Pre-flight: a Cloud SQL proxy without --quitquitquit has no stop endpoint, said once. */
	nevents = 0;
	c = fake_container_of(&pod, sql);
	stopper_check(&sq, c);
	stopper_check(&sq, c);
	ev = find(DECIDE_EV_NO_ENDPOINT, 0);
	ok(ev && ev->sidecar == 1, "no stop endpoint: decide hears it, for sidecar 1");
	is_int(nevents, 1, "once");

	/*
	 * Seen once the drain has begun (an awaited sidecar): its command line
	 * is not read, as a process stuck in the kernel would hold up the stop.
	 */
	nevents = 0;
	podscan_names_only(pod.ps);
	stopper_check(&late, c);
	ok(!find(DECIDE_EV_NO_ENDPOINT, 0), "after podscan_names_only: no flag judged, for none was read");
	ok(logged("pre-flight: the command line is not read once the drain has begun"), "the log says why");

	wrapped();
	fake_release(spared_rel, 0);
	fake_release(sql_rel, 0);
	close(root_rel);
	close(worker_rel);
	stopper_free(&st);
	stopper_free(&sq);
	stopper_free(&late);
	http_free(h);
	pod_close(&pod);
	spec_free(&spec);
	spec_free(&cloudsql);
	fake_cleanup();
	ev_loop_destroy(loop);
	return done_testing();
}
