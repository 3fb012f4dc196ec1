/*
 * decide's notes in words: the log lines users read (and the integration
 * tests grep), each from a note decide gives.
 */
#include "config.h"

#include "decide.h"
#include "log.h"
#include "notes.h"
#include "tap.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S US_PER_S
#define MS US_PER_MS

static FILE *log_file;
static struct notes ctx = { .dir = "/var/run/rearguard" };

/* The line a note gives, without its time stamp and level. */
static const char *line(const struct decide_note *n)
{
	static char buf[4096];
	char *p;
	size_t len;

	rewind(log_file);
	if (ftruncate(fileno(log_file), 0) < 0)
		abort();
	notes_log(&ctx, n);
	fflush(log_file);
	len = (size_t)pread(fileno(log_file), buf, sizeof(buf) - 1, 0);
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	/* 2026-01-02T03:04:05.678Z info  text... */
	p = strchr(buf, ' ');
	if (!p)
		return buf;
	while (*p == ' ')
		p++;
	p = strchr(p, ' ');
	while (p && *p == ' ')
		p++;
	return p ? p : "";
}

#define SAYS(expected, ...) is_str(line(&(const struct decide_note){ __VA_ARGS__ }), expected, "%s", expected)

int main(void)
{
	int kind;
	bool all = true;

	log_file = tmpfile();
	log_setup(LOG_DEBUG, LOG_TEXT, fileno(log_file));

	SAYS("app failed under restartPolicy OnFailure: keeping the sidecars for its restart (at most 5m) app=job "
	     "container=3",
	     .kind = NOTE_RESTART_WAIT, .app = "job", .container = 3, .code = 1, .us = 300 * S);
	SAYS("app exit code unknown under restartPolicy OnFailure: keeping the sidecars for its restart (at most 4m) "
	     "app=job container=3",
	     .kind = NOTE_RESTART_WAIT, .app = "job", .container = 3, .code = DECIDE_CODE_UNKNOWN, .us = 240 * S);
	SAYS("app exited under restartPolicy Always: the kubelet restarts it; the sidecars stay (only the pod's deletion "
	     "stops them) app=web container=3 exit_code=137",
	     .kind = NOTE_RESTART_WAIT, .app = "web", .container = 3, .code = 137, .always = true);
	SAYS("apps done 5200ms after the termination request, the sidecars held for them: draining the sidecars "
	     "reason=apps-done apps=2 held=5200.000ms",
	     .kind = NOTE_DRAIN, .reason = REASON_APPS_DONE, .count = 2, .limit_us = 5200 * MS);
	SAYS("drain file ignored: under restartPolicy Always only the pod's deletion stops the sidecars (the kubelet "
	     "would restart them, and rearguard, at once) dir=/var/run/rearguard reason=drain-file",
	     .kind = NOTE_ALWAYS_KEPT, .reason = REASON_DRAIN_FILE);
	SAYS("no app container appeared within --startup-timeout 10m: under restartPolicy Always the sidecars stay "
	     "(only the pod's deletion stops them) reason=startup-timeout apps_seen=0",
	     .kind = NOTE_ALWAYS_KEPT, .reason = REASON_STARTUP_TIMEOUT, .us = 600 * S);
	SAYS("an earlier run of rearguard drained, but under restartPolicy Always the kubelet restarted this one, so "
	     "the pod is not being deleted: its files are stale, and the sidecars are watched afresh "
	     "dir=/var/run/rearguard reason=resume",
	     .kind = NOTE_ALWAYS_KEPT, .reason = REASON_RESUME);
	SAYS("the app's report and its container's exit code differ: acting on the container's app=sh container=3 "
	     "report=job reported=3 exit_code=0",
	     .kind = NOTE_CODES_DIFFER, .app = "sh", .container = 3, .report = "job", .reported = 3, .code = 0);
	SAYS("app reported that it finished app=sh container=3 report=job exit_code=0 running=yes",
	     .kind = NOTE_REPORTED, .app = "sh", .container = 3, .report = "job", .code = 0, .flag = true);
	SAYS("app reported that it finished app=job container=3 report=job exit_code=0",
	     .kind = NOTE_REPORTED, .app = "job", .container = 3, .report = "job", .code = 0);
	SAYS("apps-done found: an earlier run of rearguard had decided the apps are done; draining now "
	     "dir=/var/run/rearguard",
	     .kind = NOTE_RESUME_APPS_DONE);
	SAYS("done found: an earlier run of rearguard finished the drain; exiting dir=/var/run/rearguard",
	     .kind = NOTE_RESUME_DONE);
	SAYS("apps done, but sidecar logs has not started yet: waiting for it up to --sidecar-wait 2m, to stop it "
	     "(the kubelet starts a sidecar listed after the apps after them) sidecars=logs",
	     .kind = NOTE_SIDECAR_WAIT, .text = "logs", .us = 120 * S);
	SAYS("no app container appeared within --startup-timeout 10m: draining the sidecars reason=startup-timeout "
	     "apps_seen=0",
	     .kind = NOTE_DRAIN, .reason = REASON_STARTUP_TIMEOUT, .us = 600 * S);
	SAYS("fewer app containers than --apps appeared within --startup-timeout 10m: draining the sidecars "
	     "reason=startup-timeout apps_seen=1",
	     .kind = NOTE_DRAIN, .reason = REASON_STARTUP_TIMEOUT, .count = 1, .us = 600 * S);
	SAYS("apps done: draining the sidecars reason=apps-done apps=2",
	     .kind = NOTE_DRAIN, .reason = REASON_APPS_DONE, .count = 2);
	SAYS("drain requested: draining the sidecars reason=drain-file apps=1",
	     .kind = NOTE_DRAIN, .reason = REASON_DRAIN_FILE, .count = 1);
	SAYS("sidecar ready (no ready URL: its process is running) sidecar=fb after=1.500ms polls=0",
	     .kind = NOTE_READY, .sidecar = "fb", .us = 1500, .flag = true);
	SAYS("sidecar ready sidecar=istio after=320.000ms polls=7",
	     .kind = NOTE_READY, .sidecar = "istio", .us = 320 * MS, .count = 7);
	SAYS("every sidecar is ready: starting the command", .kind = NOTE_ALL_READY_COMMAND);
	SAYS("sidecars not ready within --ready-timeout 5m: the ready file will not be written; still watching the apps "
	     "not_ready=\"mesh (answered 503), logs (no process seen)\"",
	     .kind = NOTE_NOT_READY, .text = "mesh (answered 503), logs (no process seen)", .us = 300 * S);
	SAYS("stop request answered 200: waiting for its processes to exit (--stop-timeout 20s) sidecar=mesh",
	     .kind = NOTE_STOP_ACCEPTED, .sidecar = "mesh", .result = 200, .us = 20 * S);
	SAYS("stop request answered 200: waiting for it to stop accepting connections (--stop-timeout 20s) sidecar=db",
	     .kind = NOTE_STOP_ACCEPTED, .sidecar = "db", .result = 200, .us = 20 * S, .blind = true);
	SAYS("stop request connection refused: trying again in 200ms sidecar=mesh attempt=2",
	     .kind = NOTE_STOP_RETRY, .sidecar = "mesh", .result = -ECONNREFUSED, .count = 2, .us = 200 * MS);
	SAYS("stop endpoint answered 404: falling back to SIGTERM sidecar=linkerd",
	     .kind = NOTE_STOP_REFUSED, .sidecar = "linkerd", .result = 404);
	SAYS("still running 20s after SIGTERM: SIGKILL in 5s sidecar=proxy",
	     .kind = NOTE_SIGTERM_WAS_STOP, .sidecar = "proxy", .us = 20 * S, .limit_us = 5 * S);
	SAYS("not permitted to signal the sidecar: run rearguard with the sidecar's uid (securityContext.runAsUser), "
	     "or as root with the KILL capability sidecar=logs signal=INT",
	     .kind = NOTE_SIGNAL_NOT_PERMITTED, .sidecar = "logs", .signo = SIGINT);
	SAYS("fb is ready for SIGTERM: stopping sidecar=fb signal=TERM waited=40.000ms",
	     .kind = NOTE_CATCHES, .sidecar = "fb", .signo = SIGTERM, .us = 40 * MS);
	SAYS("waiting for fb to catch SIGTERM (started only just now; at most 1980ms more) sidecar=fb signal=TERM "
	     "started_ago=20.000ms",
	     .kind = NOTE_CATCHES_WAIT, .sidecar = "fb", .signo = SIGTERM, .us = 1980 * MS, .limit_us = 20 * MS);
	SAYS("fb does not catch SIGTERM 2s after its start: stopping anyway (it may die of the signal) sidecar=fb "
	     "signal=TERM waited=300.000ms",
	     .kind = NOTE_CATCHES_NOT, .sidecar = "fb", .signo = SIGTERM, .us = 2 * S, .limit_us = 300 * MS);
	SAYS("sidecar container exited before the apps were done container=4 sidecar=proxy pid=17",
	     .kind = NOTE_SIDECAR_EXITED_EARLY, .sidecar = "proxy", .container = 4, .pid = 17);
	SAYS("the sidecar exited 143: under restartPolicy Never the pod will be marked Failed although the apps "
	     "succeeded sidecar=nginx exit_code=143 fix=\"use its graceful signal\"",
	     .kind = NOTE_SIDECAR_CODE, .sidecar = "nginx", .code = 143, .text = "use its graceful signal", .flag = true);
	/* A sidecar's death while the apps ran: what its code says happened, and what that means. */
	SAYS("sidecar envoy was killed by SIGKILL (exit code 137) while the apps ran, with no stop from rearguard: "
	     "most likely by the out-of-memory killer (see its memory limit), or by a person. The apps have lost it, "
	     "under restartPolicy Never nothing restarts it, and its exit code will mark the pod Failed: the apps run "
	     "on without it until they end, or until the Job's activeDeadlineSeconds (--on-sidecar-exit=fail stops "
	     "them instead, so that the Job fails now and its backoffLimit can retry it) sidecar=envoy exit_code=137 "
	     "signal=KILL",
	     .kind = NOTE_SIDECAR_DIED, .sidecar = "envoy", .code = 137, .flag = true, .hint = true);
	ok(strstr(line(&(const struct decide_note){ .kind = NOTE_SIDECAR_DIED, .sidecar = "envoy", .code = 143,
						    .flag = true }),
		  "was ended by SIGTERM (exit code 143) while the apps ran, with no stop from rearguard: by a person "
		  "or another program. The apps have lost it") != NULL,
	   "143: ended by SIGTERM, not by rearguard");
	ok(strstr(line(&(const struct decide_note){ .kind = NOTE_SIDECAR_DIED, .sidecar = "envoy", .code = 139 }),
		  "crashed (SIGSEGV, exit code 139) while the apps ran. Under restartPolicy OnFailure the kubelet "
		  "restarts a container that exited non-zero") != NULL,
	   "139: a crash, and under OnFailure its restart");
	ok(strstr(line(&(const struct decide_note){ .kind = NOTE_SIDECAR_DIED, .sidecar = "envoy", .code = 2,
						    .flag = true }),
		  "exited 2 on its own while the apps ran: it failed (its own log says why)") != NULL,
	   "2: it failed");
	ok(strstr(line(&(const struct decide_note){ .kind = NOTE_SIDECAR_DIED, .sidecar = "envoy",
						    .code = DECIDE_CODE_UNKNOWN, .flag = true }),
		  "(its exit code is unknown)") != NULL,
	   "unknown: said so");
	SAYS("sidecar envoy exited 0 while the apps ran, with no stop from rearguard. Under restartPolicy OnFailure "
	     "the kubelet restarts only a container that failed: this one stays gone, and the apps have lost it "
	     "sidecar=envoy exit_code=0",
	     .kind = NOTE_SIDECAR_DIED, .sidecar = "envoy", .code = 0);
	SAYS("--on-sidecar-exit=fail: stopping the apps as the kubelet would (SIGTERM to each main process, SIGKILL to "
	     "every process --kill-after 5s later), so that the Job fails now and its backoffLimit can retry it "
	     "sidecar=envoy reason=sidecar-exited",
	     .kind = NOTE_APPS_STOP, .sidecar = "envoy", .us = 5 * S);
	SAYS("--on-sidecar-exit=fail: the apps are not stopped: it exited 0, which a sidecar does by its own choice: "
	     "only a failure stops the apps sidecar=envoy",
	     .kind = NOTE_APPS_STOP_NOT, .sidecar = "envoy", .kept = APPS_KEPT_EXIT_0);
	SAYS("--on-sidecar-exit=fail: the apps are not stopped: under restartPolicy OnFailure the kubelet restarts a "
	     "failed sidecar itself, and would restart apps stopped now sidecar=envoy",
	     .kind = NOTE_APPS_STOP_NOT, .sidecar = "envoy", .kept = APPS_KEPT_ON_FAILURE);
	SAYS("--on-sidecar-exit=fail: the apps are not stopped: the pod is being deleted: the kubelet stops the apps "
	     "itself sidecar=envoy",
	     .kind = NOTE_APPS_STOP_NOT, .sidecar = "envoy", .kept = APPS_KEPT_DELETED);
	SAYS("apps stopped after their sidecar failed: draining the other sidecars reason=sidecar-exited apps=2 "
	     "sidecar=envoy",
	     .kind = NOTE_DRAIN, .reason = REASON_SIDECAR_EXITED, .count = 2, .sidecar = "envoy");
	SAYS("not permitted to signal the app: it runs on without its sidecar; for --on-sidecar-exit=fail, run "
	     "rearguard under the apps' uid (securityContext.runAsUser), or as root with the KILL capability app=job "
	     "container=4",
	     .kind = NOTE_APP_SIGNAL_NOT_PERMITTED, .app = "job", .container = 4);
	{
		/* The C library's words for the error (glibc's and musl's differ). */
		char want[160];

		snprintf(want, sizeof(want), "cannot signal the app now: trying again shortly app=job container=4 error=\"%s\"",
			 strerror(EMFILE));
		SAYS(want, .kind = NOTE_APP_SIGNAL_RETRY, .app = "job", .container = 4, .result = -EMFILE);
	}
	/* Native sidecars. */
	SAYS("native sidecar: never waited for nor stopped (the kubelet restarts it, and stops it after the apps) "
	     "native=vector container=2 known_by=first",
	     .kind = NOTE_NATIVE_SEEN, .text = "vector", .container = 2, .by = NATIVE_BY_START);
	SAYS("native sidecar restarted by the kubelet: never waited for nor stopped (the kubelet restarts it, and "
	     "stops it after the apps) native=vector container=7 known_by=restart",
	     .kind = NOTE_NATIVE_SEEN, .text = "vector", .container = 7, .by = NATIVE_BY_RESTART, .flag = true);
	SAYS("native sidecar exited: the kubelet restarts it while the pod runs; its new container is known by its "
	     "name native=vector container=2",
	     .kind = NOTE_NATIVE_EXITED, .text = "vector", .container = 2);
	SAYS("cannot write the file: trying again in 50ms file=ready error=\"No space left on device\" attempts=1",
	     .kind = NOTE_WRITE_FAILED, .file = PROTOCOL_READY, .result = -ENOSPC, .count = 1, .us = 50 * MS);
	SAYS("not every sidecar could be stopped drain_exit_code=1", .kind = NOTE_STOP_FAILED, .code = 1);
	SAYS("event changes nothing: ignored event=signal-result", .kind = NOTE_IGNORED,
	     .event = DECIDE_EV_SIGNAL_RESULT);

	/* What the stop signal will do, said before its code says it. */
	SAYS("web's main process has no handler for SIGTERM: it dies of it and its container exits 143, which fails "
	     "the pod under restartPolicy Never sidecar=web signal=TERM exit_code=143 fix=\"run its command under "
	     "rearguard sidecar (rearguard inject and the webhook do where the pod spec gives the command), make its "
	     "program exit 0 on the signal, or stop it with a signal it handles (stop=signal:NAME)\"",
	     .kind = NOTE_STOP_FATE, .sidecar = "web", .signo = SIGTERM, .result = DECIDE_FATE_DIES, .code = 143,
	     .flag = true);
	ok(strstr(line(&(const struct decide_note){ .kind = NOTE_STOP_FATE, .sidecar = "deaf", .signo = SIGTERM,
						    .result = DECIDE_FATE_IGNORES, .code = 137 }),
		  "deaf's main process ignores SIGTERM: it ends only at SIGKILL, once --stop-timeout and --kill-after "
		  "have passed, and its container exits 137, on which the kubelet restarts it under OnFailure") != NULL,
	   "ignores: 137 after both timeouts, and OnFailure's meaning");
	SAYS("web runs under rearguard sidecar: its container exits 0 when its program ends of the stop sidecar=web "
	     "signal=TERM",
	     .kind = NOTE_STOP_FATE, .sidecar = "web", .signo = SIGTERM, .result = DECIDE_FATE_WRAPPED);
	SAYS("web's program under rearguard sidecar ended (signal:TERM): its container exits 0 sidecar=web "
	     "program=signal:TERM exit_code=0",
	     .kind = NOTE_PROGRAM_ENDED, .sidecar = "web", .text = "signal:TERM", .code = 0);
	ok(notes_fate_fix(DECIDE_FATE_DIES) && notes_fate_fix(DECIDE_FATE_IGNORES) && !notes_fate_fix(DECIDE_FATE_HANDLES) &&
		   !notes_fate_fix(DECIDE_FATE_WRAPPED) && !notes_fate_fix(DECIDE_FATE_NONE),
	   "a fix where the signal fails the pod, none elsewhere");

	/* Every kind is a line of its own words. */
	for (kind = 0; kind <= NOTE_IGNORED; kind++) {
		const char *text = line(&(const struct decide_note){ .kind = kind, .reason = REASON_APPS_DONE });

		if (!*text || strstr(text, "without words")) {
			printf("# note kind %d has no words: %s\n", kind, text);
			all = false;
		}
	}
	ok(all, "every note kind has its line");
	return done_testing();
}
