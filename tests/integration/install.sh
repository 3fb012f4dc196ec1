#!/bin/bash
# rearguard install DIR: an identical copy, mode 0755 whatever the umask,
# written atomically (no temporary file left, a running copy replaced, a
# planted symlink replaced rather than written through); a directory the
# uid may not write is one line and exit 2.
. "$RG_SRCDIR/tests/integration/lib.sh"

inst=$T/inst
mkdir -m 0777 "$inst"
out=$(umask 077 && "$BIN/rearguard" install "$inst") || fail "install exited $?"
[ "$out" = "installed $inst/rearguard ($(stat -c %s "$BIN/rearguard") bytes)" ] || fail "said: $out"
cmp -s "$BIN/rearguard" "$inst/rearguard" || fail "not an identical copy"
[ "$(stat -c %a "$inst/rearguard")" = 755 ] || fail "mode $(stat -c %a "$inst/rearguard"), want 755"
"$inst/rearguard" --version | grep -q '^rearguard ' || fail "the copy does not run"
[ "$(ls -A "$inst")" = rearguard ] || fail "leftovers: $(ls -A "$inst")"

# Replacing a copy that is running (an earlier init container's, say).
"$inst/rearguard" wait done --timeout 20s --dir "$EMPTYDIR" &
waiter=$!
LAUNCHERS="$LAUNCHERS $waiter"
# Running from the copy, not still being started.
wait_for 5 sh -c "[ \"\$(readlink /proc/$waiter/exe)\" = '$inst/rearguard' ]" || fail "the copy did not start"
"$BIN/rearguard" install "$inst" >/dev/null || fail "a running copy could not be replaced"
kill_ours "$waiter"
wait "$waiter" 2>/dev/null || true

rm "$inst/rearguard"
echo original >"$RUN/victim"
ln -s "$RUN/victim" "$inst/rearguard"
"$BIN/rearguard" install "$inst" >/dev/null || fail "install over a symlink failed"
[ -f "$inst/rearguard" ] && [ ! -L "$inst/rearguard" ] || fail "the symlink was not replaced"
[ "$(cat "$RUN/victim")" = original ] || fail "the symlink's target was written"

chmod 0755 "$inst"
rc=0
err=$(setpriv --reuid 1001 --regid 1001 --clear-groups "$BIN/rearguard" install "$inst" 2>&1 >/dev/null) || rc=$?
[ "$rc" = 2 ] || fail "install into a read-only directory: exit $rc, want 2"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "not one line: $err"
case $err in *"cannot install into $inst: Permission denied"*) ;; *) fail "unclear: $err" ;; esac
exit 0
