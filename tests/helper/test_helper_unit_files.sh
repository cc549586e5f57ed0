#!/bin/sh
# test_helper_unit_files.sh — ptrec-helper's systemd units as built (doc/ptrec-helper.*.in,
# ptrec-helper(8) "Security model"):
#  - the service keeps what the helper needs (DynamicUser, CAP_PERFMON alone, ambient) and
#    none of what breaks it (ProtectProc=invisible, PrivateUsers=); the socket unit is 0666
#    with a trigger limit;
#  - systemd-analyze verifies both and rates the service's exposure 2.0 or lower;
#  - every system call the helper makes while it serves (started as the unit starts it, by
#    test_helper_units under strace) is one the unit's SystemCallFilter allows.
# Parts SKIP, saying why, without systemd-analyze (or its --offline), strace or root.
. "$top_srcdir/tests/tool/tool_common.sh"

service="$top_builddir/libptrec/helper/ptrec-helper.service"
socket="$top_builddir/libptrec/helper/ptrec-helper.socket"
helper="$top_builddir/libptrec/helper/ptrec-helper"
[ -f "$service" ] && [ -f "$socket" ] || { echo "units not built: $service $socket"; exit 99; }

for want in "DynamicUser=yes" "AmbientCapabilities=CAP_PERFMON" \
	"CapabilityBoundingSet=CAP_PERFMON" "NoNewPrivileges=yes" "ProtectSystem=strict" \
	"PrivateDevices=yes" "ProcSubset=pid" "RestrictAddressFamilies=AF_UNIX" "UMask=0077"; do
	checks=$((checks + 1))
	grep -qx "$want" "$service" || fail "the service lacks $want"
done
for unwanted in "ProtectProc=invisible" "PrivateUsers=yes"; do
	checks=$((checks + 1))
	grep -qx "$unwanted" "$service" && fail "the service has $unwanted, which breaks the helper"
done
for want in "SocketMode=0666" "TriggerLimitIntervalSec=10s" "TriggerLimitBurst=20"; do
	checks=$((checks + 1))
	grep -qx "$want" "$socket" || fail "the socket unit lacks $want"
done

sa=$(command -v systemd-analyze || true)
if [ -z "$sa" ]; then
	echo "SKIP (part): systemd-analyze not found: the units are not verified or rated"
else
	# verify wants ExecStart's program to exist: the built helper stands in for the installed one.
	sed "s|^ExecStart=[^ ]*|ExecStart=$helper|" "$service" >"$tmp/ptrec-helper.service"
	cp "$socket" "$tmp/ptrec-helper.socket"
	checks=$((checks + 1))
	"$sa" verify --man=no "$tmp/ptrec-helper.service" "$tmp/ptrec-helper.socket" \
		>"$tmp/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$tmp/verify")"
	if "$sa" security --help 2>/dev/null | grep -q -- '--offline'; then
		checks=$((checks + 1))
		"$sa" security --offline=yes --threshold=20 "$tmp/ptrec-helper.service" \
			>"$tmp/security" 2>&1 ||
			fail "the service's exposure is above 2.0: $(tail -3 "$tmp/security")"
		tail -1 "$tmp/security"
	else
		echo "SKIP (part): this systemd-analyze has no security --offline (systemd < 250)"
	fi
fi

# ---- the system calls it makes, against the unit's filter ----------------------------------
# expand GROUP-OR-CALL...: the system calls systemd names by them, one a line.
expand() {
	for g in "$@"; do
		case "$g" in
		@*) "$sa" syscall-filter "$g" | sed -n 's/^    //p' | grep -v '^#' |
			while read -r x; do expand "$x"; done ;;
		*) echo "$g" ;;
		esac
	done
}
if [ -z "$sa" ] || [ "$(id -u)" != 0 ] || ! command -v strace >/dev/null; then
	echo "SKIP (part): the helper's system calls are not checked against SystemCallFilter" \
		"(needs systemd-analyze, strace and root)"
elif grep -q -a -e __asan_init -e __ubsan_handle -e __tsan_init "$helper"; then
	echo "SKIP (part): a sanitizer build: its runtime makes calls of its own that the" \
		"installed helper does not; its system calls are not held against SystemCallFilter"
else
	allow=$(sed -n 's/^SystemCallFilter=\([^~].*\)/\1/p' "$service")
	deny=$(sed -n 's/^SystemCallFilter=~//p' "$service")
	# shellcheck disable=SC2086
	expand $allow | sort -u >"$tmp/allow"
	# shellcheck disable=SC2086
	expand $deny | sort -u >"$tmp/deny"
	comm -23 "$tmp/allow" "$tmp/deny" >"$tmp/allowed"
	PTREC_TEST_HELPER_STRACE="$tmp/trace" "$top_builddir/tests/helper/test_helper_units" \
		>"$tmp/units.out" 2>&1
	rc=$?
	if [ $rc = 77 ]; then
		echo "SKIP (part): test_helper_units skipped: $(grep SKIP "$tmp/units.out")"
	else
		checks=$((checks + 1))
		[ $rc = 0 ] || fail "test_helper_units under strace: $(tail -5 "$tmp/units.out")"
		# What the helper called, from its execve on (setpriv's own calls come before).
		awk -v h="$helper" 'found { print } index($0, "execve(\"" h "\"") && / = 0$/ { found = 1 }' \
			"$tmp/trace" | sed -E 's/^[0-9]+ +//' | sed -n 's/^\([a-z_0-9]*\)(.*/\1/p' |
			sort -u >"$tmp/called"
		checks=$((checks + 1))
		[ -s "$tmp/called" ] || fail "no system calls of the helper in the trace"
		echo "the helper called: $(tr '\n' ' ' <"$tmp/called")"
		comm -23 "$tmp/called" "$tmp/allowed" >"$tmp/refused"
		checks=$((checks + 1))
		[ -s "$tmp/refused" ] && fail "the unit's SystemCallFilter refuses what the helper" \
			"calls: $(tr '\n' ' ' <"$tmp/refused")"
	fi
fi
finish
