#!/bin/sh
# Snapshots are invisible to a server that reaps every child (tests/crash/reaper.c): while it
# takes 3 snapshots, whose reports run in processes of their own, it receives one SIGCHLD and
# reaps one pid with waitpid(-1), both for the child it forked itself; its signal mask,
# SIGCHLD disposition and descriptors are unchanged; and the report process (seen through a
# PTREC_TOOL wrapper that lists its descriptors) inherits none of the server's (fds 5, 57).
. "$top_srcdir/tests/common/qemu_user.sh"
skip_under_qemu_user "qemu-user emulates CLONE_VM only for threads: the report runner is a child the application sees"
. "$top_srcdir/tests/crash/snapshot_common.sh"
: "${PTREC_TOOL:?}"
prog="$top_builddir/tests/crash/reaper"
snapshot_setup reap
export PTREC_SNAPSHOT_INTERVAL_MS=0
mkdir "$work/fds"
cat >"$work/tool" <<END
#!/bin/sh
ls /proc/\$\$/fd >"$work/fds/\$\$"
exec "$PTREC_TOOL" "\$@"
END
chmod +x "$work/tool"
export PTREC_TOOL="$work/tool"

"$prog" invisible 3 >"$work/stdout" 2>"$work/stderr"
st=$?
cat "$work/stderr"
[ $st -eq 0 ] || fail "reaper exited with $st"
[ "$(ls "$work"/*.snapshot*.ptrec.txt | wc -l)" -eq 3 ] || fail "not 3 reports"
[ "$(ls "$work/fds" | wc -l)" -eq 3 ] || fail "the tool did not run 3 times"
for f in "$work"/fds/*; do
	grep -qx 5 "$f" && fail "the report process inherited the server's fd 5"
	grep -qx 57 "$f" && fail "the report process inherited the server's fd 57"
done
for r in "$work"/*.snapshot*.ptrec.txt; do
	grep -q "serve_request" "$r" || fail "$r does not name serve_request"
	grep -q "^asked by: thread [0-9]* (reaper), calling ptrec_snapshot" "$r" || fail "$r: who asked"
	grep -q "\[took the snapshot\]" "$r" || fail "$r: the calling thread is not labelled"
	grep -q "\[crashed\]" "$r" && fail "$r labels a thread [crashed]"
done
echo "PASS: snapshot invisible"
