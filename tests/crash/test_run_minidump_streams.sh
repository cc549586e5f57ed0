#!/bin/sh
# test_run_minidump_streams.sh — the Linux streams of our minidumps (doc/minidump.md), from the
# dump's SYSFILE records (doc/dump-format.md), against the crashed process and this host as
# others see them.  plain_crasher crashes under `ptrec run` with known arguments:
# - crash-time DUMP.dmp (PTREC_MINIDUMP=1), read by Breakpad's minidump_dump:
#   LinuxCmdLine holds the arguments, each NUL-terminated; LinuxProcStatus is the crashed
#   thread's /proc status (its name, pid, tgid and uid); LinuxCpuInfo is this host's
#   /proc/cpuinfo (whole processor entries, the "cpu MHz" lines aside: they move), and the
#   system info counts its processors; LinuxLsbRelease is /etc/lsb-release, else
#   /etc/os-release; the system info's OS version is `uname -srvm` (minidump_stackwalk shows
#   it after the release's numbers); no LinuxEnviron; minidump_stackwalk still reads the file;
# - a second crash with LD_SHOW_AUXV=1, where glibc's dynamic loader prints the process's
#   auxiliary vector at its start: `ptrec minidump DUMP` made later has LinuxAuxv, every
#   entry the loader printed with its value (minidump_dump does not print this stream: it is
#   read from the file at the offset its directory gives).
# The non-dumpable case (no dump, no minidump) is in test_crash_dumpable.sh.
. "${top_srcdir:?}/tests/common/qemu_user.sh"
skip_under_qemu_user "the crashed process's /proc files are qemu's view of the x86-64 host's," \
	"not an aarch64 host's (test_minidump_tools checks an aarch64 crash's minidump)"
. "$top_srcdir/tests/crash/run_common.sh"
mdump=${MINIDUMP_DUMP:-}
walk=${MINIDUMP_STACKWALK:-}
[ -n "$mdump" ] || { echo "SKIP: minidump_dump not found (npm minidump@0.26.0: test oracle)"; exit 77; }
failed=0
check() { echo "FAIL: $*"; failed=$((failed + 1)); }

# stream_text DMP NAME: the text minidump_dump prints for stream NAME (NULs as "\0" ending a
# line), without the blank lines it adds at the end.
stream_text() {
	"$mdump" "$1" 2>/dev/null | awk -v h="Stream $2:" '
		$0 == h { on = 1; next } on && /^Stream MD_/ { exit } on { print }' |
		sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}
# no_blank_end: the input without its trailing blank lines.
no_blank_end() {
	sed -e :a -e '/^\n*$/{$d;N;ba' -e '}'
}

# ---- 1. the crash-time minidump ------------------------------------------------------------
PTREC_MINIDUMP=1 ptrec_run --dir "$work/dumps" -- "$plain" segv "arg one" '' two
pid=$(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err")
[ -n "$pid" ] || fail "no crash line"
dump=$(dumps_of "$pid")
[ -n "$dump" ] && [ -f "$dump.dmp" ] || fail "no dump and minidump of pid $pid"
md=$dump.dmp

printf '%s\\0\n' "$plain" segv "arg one" '' two >"$work/cmdline.want"
stream_text "$md" MD_LINUX_CMD_LINE >"$work/cmdline.got"
cmp -s "$work/cmdline.want" "$work/cmdline.got" ||
	{ check "LinuxCmdLine is not the arguments"; diff "$work/cmdline.want" "$work/cmdline.got"; }

stream_text "$md" MD_LINUX_PROC_STATUS >"$work/status"
grep -qx "Name:	plain_crasher" "$work/status" || check "LinuxProcStatus: no 'Name: plain_crasher'"
grep -qx "Pid:	$pid" "$work/status" || check "LinuxProcStatus: no 'Pid: $pid' (the crashed thread)"
grep -qx "Tgid:	$pid" "$work/status" || check "LinuxProcStatus: no 'Tgid: $pid'"
uid=$(id -u)
grep -q "^Uid:	$uid	$uid	" "$work/status" || check "LinuxProcStatus: no 'Uid: $uid'"

grep -v '^cpu MHz' /proc/cpuinfo | no_blank_end >"$work/cpuinfo.want"
stream_text "$md" MD_LINUX_CPU_INFO | grep -v '^cpu MHz' >"$work/cpuinfo.got"
if [ "$(wc -c </proc/cpuinfo)" -le 65536 ]; then
	cmp -s "$work/cpuinfo.want" "$work/cpuinfo.got" ||
		{ check "LinuxCpuInfo is not this host's /proc/cpuinfo"; diff "$work/cpuinfo.want" "$work/cpuinfo.got" | head; }
	ncpu=$(grep -c '^processor' /proc/cpuinfo)
	if [ -n "$walk" ]; then
		"$walk" "$md" >"$work/walk" 2>"$work/walk.err" || check "minidump_stackwalk failed: $(tail -n 3 "$work/walk.err")"
		grep -q "^Crash reason: *SIGSEGV" "$work/walk" || check "minidump_stackwalk: no SIGSEGV crash reason"
		grep -q "^ *$ncpu CPUs\?$" "$work/walk" || check "minidump_stackwalk does not count $ncpu CPUs: $(grep -A3 '^CPU' "$work/walk")"
	else
		echo "note: minidump_stackwalk not found: its part is not run"
	fi
else # a large machine: whole processor entries, as many as the first 64 KiB hold
	n=$(wc -l <"$work/cpuinfo.got")
	head -n "$n" "$work/cpuinfo.want" | cmp -s - "$work/cpuinfo.got" ||
		check "LinuxCpuInfo is not the start of this host's /proc/cpuinfo"
fi

if [ -f /etc/lsb-release ]; then rel=/etc/lsb-release
elif [ -f /etc/os-release ]; then rel=/etc/os-release
else rel=/usr/lib/os-release; fi
no_blank_end <"$rel" >"$work/release.want"
stream_text "$md" MD_LINUX_LSB_RELEASE >"$work/release.got"
cmp -s "$work/release.want" "$work/release.got" ||
	{ check "LinuxLsbRelease is not $rel"; diff "$work/release.want" "$work/release.got"; }
"$mdump" "$md" 2>/dev/null | grep -q 'MD_LINUX_ENVIRON' && check "the minidump has the environment"
os=$(uname -srvm)
csd=$("$mdump" "$md" 2>/dev/null | sed -n 's/^  (csd_version) *= "\(.*\)"$/\1/p')
[ "$csd" = "$os" ] || check "the system info's OS version is '$csd', uname -srvm says '$os'"
if [ -s "$work/walk" ]; then
	kr=$(uname -r) ver=""
	for k in 1 2 3; do # minidump_stackwalk prints major.minor.build before it
		n=$(printf '%s' "$kr" | sed 's/^\([0-9]*\).*/\1/'); ver="$ver${ver:+.}${n:-0}"
		case "$kr" in [0-9]*.*) kr=${kr#*.} ;; *) kr=x ;; esac
	done
	grep -A1 '^Operating system: Linux$' "$work/walk" | grep -qxF "                  $ver $os" ||
		check "minidump_stackwalk's operating system is not '$ver $os': $(grep -A1 '^Operating system' "$work/walk")"
fi
echo "crash-time minidump: cmdline, status, cpuinfo, $rel, OS version checked"

# ---- 2. the auxiliary vector, in a minidump made later -------------------------------------
LD_SHOW_AUXV=1 ptrec_run --dir "$work/dumps" -- "$plain" segv
pid=$(sed -n 's/^ptrec: SIGSEGV in pid \([0-9]*\) .*/\1/p' "$work/err")
dump=$(dumps_of "$pid")
[ -n "$dump" ] || fail "no dump of pid $pid"
"$PTREC_TOOL" minidump "$dump" -o "$work/auxv.dmp" || fail "ptrec minidump failed"
# The loader's lines of plain_crasher (ptrec run printed its own first): type value, numbers.
awk -v exe="$plain" '
	function done() { if (ours) { for (i = 0; i < n; i++) print line[i]; exit } n = 0 }
	/^AT_SYSINFO_EHDR:/ || !/^AT_/ { done() }
	/^AT_/ { line[n++] = $0 }
	/^AT_EXECFN:/ && $2 == exe { ours = 1 }
	END { done() }' "$work/out" |
while IFS= read -r l; do
	name=${l%%:*} v=$(printf '%s' "${l#*:}" | tr -d ' ')
	case "$name" in
	AT_SYSINFO_EHDR) t=33 ;; AT_MINSIGSTKSZ) t=51 ;; AT_HWCAP) t=16 ;; AT_PAGESZ) t=6 ;;
	AT_CLKTCK) t=17 ;; AT_PHDR) t=3 ;; AT_PHENT) t=4 ;; AT_PHNUM) t=5 ;; AT_BASE) t=7 ;;
	AT_FLAGS) t=8 ;; AT_ENTRY) t=9 ;; AT_UID) t=11 ;; AT_EUID) t=12 ;; AT_GID) t=13 ;;
	AT_EGID) t=14 ;; AT_SECURE) t=23 ;; AT_RANDOM) t=25 ;; AT_HWCAP2) t=26 ;;
	"AT_???"*) t=${name#*(}; t=$((${t%)})); v=${l##*: } ;;
	*) continue ;; # strings (AT_EXECFN, AT_PLATFORM) are printed, not their addresses
	esac
	case "$name:$v" in
	AT_HWCAP:*) v=$((0x$v)) ;;
	*:0x*) v=$(($v)) ;;
	esac
	echo "$t $v"
done >"$work/auxv.want"
[ -s "$work/auxv.want" ] || fail "the loader printed no auxiliary vector for $plain (LD_SHOW_AUXV)"
set -- $("$mdump" "$work/auxv.dmp" 2>/dev/null |
	awk '/stream_type *= 0x47670008/ { on = 1; next } on && /data_size/ { s = $3 } on && /rva/ { print s, $3; exit }')
[ $# -eq 2 ] || fail "no LinuxAuxv stream in the minidump"
size=$1 rva=$(($2))
od -An -v -t u8 -j "$rva" -N "$size" "$work/auxv.dmp" | tr -s ' ' '\n' | sed '/^$/d' |
	paste -d' ' - - >"$work/auxv.got"
tail -n 1 "$work/auxv.got" | grep -qx '0 0' || check "LinuxAuxv does not end with AT_NULL"
while read -r t v; do
	grep -qx "$t $v" "$work/auxv.got" || check "LinuxAuxv has no entry $t = $v (the loader's; got: $(grep "^$t " "$work/auxv.got"))"
done <"$work/auxv.want"
echo "auxv: $(wc -l <"$work/auxv.want") entries the loader printed, all in LinuxAuxv ($(wc -l <"$work/auxv.got") pairs)"

[ "$failed" = 0 ] || exit 1
echo "PASS: the minidump's Linux streams are the crashed process's and this host's"
