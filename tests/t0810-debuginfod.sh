#!/bin/bash
# Debug info from a debuginfod server, for real: Debian's `debuginfod`
# started on a local port over a directory holding one file, the debug
# file of the libc of a stripped aarch64 device core
# (corpora/aarch64-kernel/bins1: a kernel core of an arm64 Debian VM, read
# with its committed, stripped libc as --sysroot; the debug file from
# scripts/corpus/sysroot.sh's glibc-2.36-arm64, libc6-dbg).
#  - With DEBUGINFOD_URLS naming the server (and no --debug-dir), libdwfl
#    fetches the debug file: main_arena is found by its symbol, the
#    chunks and summary agree with the program's truth (truthcmp) and
#    are as with --debug-dir on the same file; nothing lacks.
#  - The server stopped, the same run again is served from the client's
#    cache (DEBUGINFOD_CACHE_PATH): the file is not fetched again.
#  - A server that refuses, and one that takes the connection and never
#    answers: heapwalk finishes (the command line gives the client 5 s a
#    file when DEBUGINFOD_TIMEOUT is unset, not its 90 s), walks the heap
#    as without debug info, and `core lacks:` names the server.
#  - `triage --timeout 2` with the mute server given 50 s a file: the
#    core's analysis is stopped, its error record says so, the next
#    input has its record, the run does not wait the 50 s.
# The server is ready when it serves the file (polled, bounded): no sleep
# stands for it.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_heapwalk
need_cmd xz tar readelf curl python3
command -v debuginfod >/dev/null 2>&1 ||
	skip "debuginfod is not installed (make deps installs it)"

kdir=$TOP/corpora/aarch64-kernel/bins1
variant=glibc-2.36-arm64
sysroots=${HEAPWALK_SYSROOTS:-$TOP/build/sysroot}
mkdir -p "$sysroots"
rc=0
"$TOP/scripts/corpus/sysroot.sh" "$variant" "$sysroots/$variant" >"$T/sysroot.log" 2>&1 || rc=$?
case $rc in
0) ;;
77) skip "sysroot.sh cannot make the $variant sysroot here: $(tail -n1 "$T/sysroot.log")" ;;
*)
	cat "$T/sysroot.log" >&2
	fail "sysroot.sh $variant failed"
	;;
esac

sr=$T/sysroot
mkdir -p "$sr/opt/heapwalk" "$T/srv"
xz -dc "$kdir/core.xz" >"$T/core" || fail "cannot unpack bins1's core"
tar -xJf "$kdir/sysroot/sysroot.tar.xz" -C "$sr" || fail "cannot unpack bins1's sysroot"
cp "$kdir/prog" "$sr/opt/heapwalk/prog"
libc=$(find "$sr" -name 'libc.so.6' -type f | sed -n 1p)
id=$(LC_ALL=C readelf -nW "$libc" | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | sed -n 1p)
dbgdir=$sysroots/$variant/usr/lib/debug
debug=$dbgdir/.build-id/${id:0:2}/${id:2}.debug
[ -n "$id" ] && [ -f "$debug" ] ||
	skip "the $variant sysroot has no debug file for the committed libc (build-id ${id:-none}): the mirror's libc6-dbg moved on"
cp "$debug" "$T/srv/libc.debug"

# The reference: the same debug file given as --debug-dir.
hw "$T/ref.chunks" "$T/ref.err" --json --sysroot "$sr" --debug-dir "$dbgdir" "$T/core" chunks
expect_rc 0

# The server, on the first free port of a few.
srv_pid= srv_birth=
trap 'if [ -n "$srv_pid" ]; then kill_same TERM "$srv_pid" "$srv_birth"; fi; if [ "${KEEP:-0}" = 1 ]; then echo "kept $T" >&2; else rm -rf "$T"; fi' EXIT
port=
for p in $((20000 + $$ % 20000)) $((21000 + $$ % 19000)) $((40000 + $$ % 9000)); do
	debuginfod -p "$p" -F "$T/srv" -d "$T/db.sqlite" -t 0 -g 0 >"$T/srv.log" 2>&1 &
	srv_pid=$!
	srv_birth=$(proc_birth "$srv_pid")
	for _ in $(seq 1 600); do
		if curl -sf -o /dev/null "http://127.0.0.1:$p/buildid/$id/debuginfo"; then
			port=$p
			break
		fi
		kill -0 "$srv_pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -z "$port" ] || break
	kill_same TERM "$srv_pid" "$srv_birth" || :
	wait "$srv_pid" 2>/dev/null
	srv_pid=
done
[ -n "$port" ] || {
	tail -n 5 "$T/srv.log" >&2
	fail "debuginfod did not serve libc's debug file on any port tried"
}
url=http://127.0.0.1:$port
say "debuginfod serves build-id $id at $url"

# fetch NAME URL CACHE: chunks and summary with debuginfod alone.
fetch() {
	local n=$1
	DEBUGINFOD_URLS=$2 DEBUGINFOD_CACHE_PATH=$3 \
		hw "$T/$n.chunks" "$T/$n.err" --json --sysroot "$sr" "$T/core" chunks
	expect_rc 0
	DEBUGINFOD_URLS=$2 DEBUGINFOD_CACHE_PATH=$3 \
		hw "$T/$n.summary" "$T/$n.serr" --json --sysroot "$sr" "$T/core" summary
	expect_rc 0
}

fetch up "$url" "$T/cache"
[ -s "$T/cache/$id/debuginfo" ] || fail "the client's cache holds no debug file for $id"
cmp -s "$T/cache/$id/debuginfo" "$debug" || fail "the cached debug file is not the served one"
has '"main_arena_from":"symbol main_arena"' <"$T/up.summary" ||
	fail "with debuginfod, main_arena not found by its symbol: $(json_str "$T/up.summary" main_arena_from)"
has '"target_limits":\[\]' <"$T/up.summary" ||
	fail "with debuginfod, the core still lacks: $(grep -o '"target_limits":\[[^]]*\]' "$T/up.summary")"
"$(tool truthcmp)" "$kdir/truth.txt" "$T/up.chunks" "$T/up.summary" ||
	fail "with debuginfod, heapwalk disagrees with the program's truth"
cmp -s "$T/up.chunks" "$T/ref.chunks" || {
	diff "$T/ref.chunks" "$T/up.chunks" | sed -n 1,10p >&2
	fail "chunks with debuginfod differ from chunks with --debug-dir"
}
say "fetched: main_arena by its symbol, $(grep -c . "$T/up.chunks") chunks as with --debug-dir"

# The server gone: the cache serves.
kill_same TERM "$srv_pid" "$srv_birth" || fail "the debuginfod server had gone by itself"
wait "$srv_pid" 2>/dev/null
srv_pid=
before=$(stat -c %Y.%s "$T/cache/$id/debuginfo")
fetch again "$url" "$T/cache"
[ "$(stat -c %Y.%s "$T/cache/$id/debuginfo")" = "$before" ] ||
	fail "the cached debug file was written again"
has '"main_arena_from":"symbol main_arena"' <"$T/again.summary" ||
	fail "with the server gone, the cache did not serve: $(json_str "$T/again.summary" main_arena_from)"
cmp -s "$T/again.chunks" "$T/ref.chunks" || fail "chunks from the cache differ from chunks with --debug-dir"
say "server stopped: the cache served, nothing fetched"

# dead NAME URL: no debug info from URL: the walk as without debug info,
# and the server named.
hw "$T/bare.chunks" "$T/bare.err" --json --sysroot "$sr" --no-debuginfo "$T/core" chunks
expect_rc 0
dead() {
	fetch "$1" "$2" "$T/cache-$1"
	has '"main_arena_from":"symbol main_arena"' <"$T/$1.summary" &&
		fail "$1: main_arena by its symbol with no server"
	has "\"target_limits\":\\[[^]]*debuginfod at $2" <"$T/$1.summary" ||
		fail "$1: core lacks does not name $2: $(grep -o '"target_limits":\[[^]]*\]' "$T/$1.summary")"
	cmp -s "$T/$1.chunks" "$T/bare.chunks" ||
		fail "$1: chunks differ from chunks without debug info"
}
dead refused "$url"
# (A server that accepts and says nothing: each file waits the client's
# timeout, 5 s by heapwalk's default, well inside hw's 60 s limit.)
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
' >"$T/mute.port" &
srv_pid=$!
srv_birth=$(proc_birth "$srv_pid")
for _ in $(seq 1 600); do
	[ -s "$T/mute.port" ] && break
	sleep 0.1
done
[ -s "$T/mute.port" ] || fail "the mute server did not start"
dead mute "http://127.0.0.1:$(cat "$T/mute.port")"
say "a refusing and a mute server: walked as without debug info, the server named"

# triage --timeout: a core whose analysis waits on the mute server (50 s
# a file) gets an error record after --timeout, and the input after it
# its own record; the run ends long before the server's timeout.
DEBUGINFOD_URLS="http://127.0.0.1:$(cat "$T/mute.port")" DEBUGINFOD_TIMEOUT=50 \
	DEBUGINFOD_CACHE_PATH=$T/cache-timeout \
	hw "$T/timeout.jsonl" "$T/timeout.err" --json --sysroot "$sr" \
	triage --timeout 2 "$T/core" "$T/mute.port"
expect_rc 3
sed -n 1p "$T/timeout.jsonl" | has "\"error\":\"its analysis took longer than --timeout 2 s and was stopped\"" ||
	fail "triage --timeout: the waiting core's record: $(sed -n 1p "$T/timeout.jsonl" | head -c 300)"
sed -n 2p "$T/timeout.jsonl" | has "\"core\":\"$T/mute.port\",\"heapwalk\":\"[^\"]*\",\"error\":\"[^\"]*not an ELF file" ||
	fail "triage --timeout: the next input's record: $(sed -n 2p "$T/timeout.jsonl" | head -c 300)"
say "triage --timeout 2: the core waiting on the mute server stopped, its error record written, the next input's too"
