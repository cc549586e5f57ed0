#!/bin/sh
# test_upload_units.sh — the systemd units `make install` puts beside ptrec-helper's for
# `ptrec upload` (doc/ptrec-upload.8, "SYSTEMD"):
#  - ptrec-upload.service and ptrec-upload.timer are built with this build's bindir, and
#    systemd-analyze verifies them;
#  - the service is hardened: `systemd-analyze security` rates its exposure 2.5 or lower
#    ("OK"), with NoNewPrivileges=, ProtectSystem=strict and the dedicated user;
#  - the command line the service runs is one the tool takes: with a configuration naming a
#    server and an empty report directory it exits 0 ("no dumps found");
#  - the sysusers.d entry creates the user ptrec-upload (systemd-sysusers into a scratch root).
. "$top_srcdir/tests/tool/tool_common.sh"

service="$top_builddir/libptrec/tool/ptrec-upload.service"
timer="$top_builddir/libptrec/tool/ptrec-upload.timer"
sysusers="$top_srcdir/doc/sysusers.d/ptrec-upload.conf"
[ -f "$service" ] && [ -f "$timer" ] || { echo "units not built: $service $timer"; exit 99; }

# ---- what the service runs -------------------------------------------------------------------
exec_line=$(sed -n 's/^ExecStart=//p' "$service")
checks=$((checks + 1))
case "$exec_line" in
/*/ptrec" upload --pending "*) ;;
*) fail "ExecStart is not an absolute ptrec upload --pending: $exec_line" ;;
esac
for want in "NoNewPrivileges=yes" "ProtectSystem=strict" "User=ptrec-upload" \
	"CapabilityBoundingSet=CAP_DAC_READ_SEARCH" "StateDirectory=ptrec-upload"; do
	checks=$((checks + 1))
	grep -qx "$want" "$service" || fail "the service lacks $want"
done
mkdir "$tmp/state" "$tmp/reports"
printf 'url = http://127.0.0.1:9/minidump\ndir = %s\n' "$tmp/reports" >"$tmp/upload.conf"
args=$(printf '%s\n' "${exec_line#* }" | sed "s|%S/ptrec-upload|$tmp/state|g")
checks=$((checks + 1))
# shellcheck disable=SC2086
"$tool" $args --config "$tmp/upload.conf" >"$tmp/out" 2>&1 ||
	fail "the service's command line fails: ptrec $args: $(cat "$tmp/out")"
grep -q "no dumps found" "$tmp/out" || fail "the service's command line: $(cat "$tmp/out")"

# ---- systemd's own checks ----------------------------------------------------------------------
sa=$(command -v systemd-analyze || true)
if [ -z "$sa" ]; then
	echo "SKIP (part): systemd-analyze not found: the units are not verified"
else
	# verify wants ExecStart's program to exist: the built tool stands in for the installed one.
	sed "s|^ExecStart=[^ ]*|ExecStart=$tool|" "$service" >"$tmp/ptrec-upload.service"
	cp "$timer" "$tmp/ptrec-upload.timer"
	checks=$((checks + 1))
	"$sa" verify --man=no "$tmp/ptrec-upload.service" "$tmp/ptrec-upload.timer" >"$tmp/verify" 2>&1 ||
		fail "systemd-analyze verify: $(cat "$tmp/verify")"
	if "$sa" security --help 2>/dev/null | grep -q -- '--offline'; then
		checks=$((checks + 1))
		"$sa" security --offline=yes --threshold=25 "$tmp/ptrec-upload.service" >"$tmp/security" 2>&1 ||
			fail "the service's exposure is above 2.5: $(tail -3 "$tmp/security")"
		tail -1 "$tmp/security"
	else
		echo "SKIP (part): this systemd-analyze has no security --offline (systemd < 250)"
	fi
fi
su=$(command -v systemd-sysusers || true)
if [ -z "$su" ]; then
	echo "SKIP (part): systemd-sysusers not found: the user entry is not tried"
else
	mkdir -p "$tmp/root/etc"
	checks=$((checks + 1))
	"$su" --root="$tmp/root" "$sysusers" >"$tmp/sysusers" 2>&1 || fail "systemd-sysusers: $(cat "$tmp/sysusers")"
	grep -q '^ptrec-upload:x:[0-9]*:[0-9]*:[^:]*:/var/lib/ptrec-upload:' "$tmp/root/etc/passwd" ||
		fail "no user ptrec-upload: $(cat "$tmp/root/etc/passwd" "$tmp/sysusers")"
fi
finish
