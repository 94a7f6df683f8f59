#!/usr/bin/env bash
# redis-core.sh OUT_DIR [KEYS] - a real program's jemalloc heap for
# scripts/bench.sh: Debian's redis-server (linked with Debian's
# libjemalloc2) holding a few million keys, taken with gdb's gcore.
#
# Starts redis-server on a Unix socket of its own (no TCP port, no
# persistence), fills it with
#   DEBUG POPULATE KEYS key          strings key:N = "value:N" (embstr:
#                                    robj and sds in one block)
#   DEBUG POPULATE KEYS/3 blob 120   120-byte values (raw: robj, sds apart)
#   KEYS/15 hashes h:N of three fields (listpack), from a Lua script
# and deletes every seventh key:N (Lua), so that jemalloc's slabs have
# free regions among the used ones.  Then it records its own truth, as
# scripts/bench/bigheap.c does, into OUT_DIR/truth.txt:
#   heap_bytes (jemalloc's stats.mapped, from MEMORY MALLOC-STATS),
#   allocated (jemalloc's stats.allocated: INFO's allocator_allocated),
#   sample addr=0x... usable=N   robj's from DEBUG OBJECT ("Value at"),
#                                each of the jemalloc size class its
#                                request falls in (see below)
# and writes OUT_DIR/core with gcore (redis stays alive and idle while gdb
# stops it).  Every step waits for the one before by a handshake (the
# server's "ready to accept connections" line, each redis-cli reply),
# never by sleeping.  Exit 77 when redis-server cannot be had.
set -euo pipefail

die() { printf 'redis-core: %s\n' "$*" >&2; exit 1; }

out=${1:?usage: redis-core.sh OUT_DIR [KEYS]}
keys=${2:-3000000}
[[ $keys =~ ^[1-9][0-9]*$ ]] && ((keys >= 1000)) || die "KEYS must be a number >= 1000"
server=$(command -v redis-server || true)
cli=$(command -v redis-cli || true)
[[ -n $server && -n $cli ]] || { echo "redis-core: no redis-server (apt-get install redis-server)" >&2; exit 77; }
command -v gdb >/dev/null || { echo "redis-core: no gdb" >&2; exit 77; }

run=$out/run
rm -rf "$run"
mkdir -p "$run"
sock=$run/redis.sock
fifo=$run/log.fifo
mkfifo "$fifo"

pid=
drain=
cleanup() {
    # The server first (its log's reader then sees the end), by its pid.
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    [[ -z $drain ]] || wait "$drain" 2>/dev/null || true
}
trap cleanup EXIT

# --logfile "" with --daemonize no: the log goes to stdout, here a FIFO
# that this script reads until the server says it is ready.
"$server" --port 0 --unixsocket "$sock" --unixsocketperm 700 \
    --save "" --appendonly no --dir "$run" --daemonize no --logfile "" \
    --enable-debug-command yes --maxmemory 0 >"$fifo" 2>&1 &
pid=$!
exec 3<"$fifo"
ready=0
while IFS= read -r line <&3; do
    printf '%s\n' "$line" >>"$run/redis.log"
    if [[ $line == *[Rr]"eady to accept connections"* ]]; then
        ready=1
        break
    fi
done
((ready)) || die "redis-server did not start: $(tail -n 3 "$run/redis.log" 2>/dev/null)"
# The rest of the log, read so that the server never blocks on a full FIFO.
cat <&3 >>"$run/redis.log" &
drain=$!
exec 3<&-

rc() { "$cli" -s "$sock" "$@"; }
[[ $(rc DEBUG POPULATE "$keys" key) == OK ]] || die "DEBUG POPULATE failed"
[[ $(rc DEBUG POPULATE $((keys / 3)) blob 120) == OK ]] || die "DEBUG POPULATE blob failed"
rc EVAL "for i = 0, tonumber(ARGV[1]) - 1 do
           redis.call('HSET', 'h:' .. i, 'name', 'n' .. i, 'count', i, 'flag', 'x')
         end return 1" 0 $((keys / 15)) >/dev/null || die "HSET script failed"
rc EVAL "for i = 0, tonumber(ARGV[1]) - 1, 7 do redis.call('DEL', 'key:' .. i) end return 1" \
    0 "$keys" >/dev/null || die "DEL script failed"
dbsize=$(rc DBSIZE)

# jemalloc's size classes up to 128 bytes step by 16 (8 below 16); a
# request above 128 is not sampled.
class() { local n=$1; ((n <= 8)) && { echo 8; return; }; echo $(((n + 15) / 16 * 16)); }

# The sample: the robj of 20 keys of each kind.  DEBUG OBJECT says where
# the value's robj is ("Value at:0x...") and its encoding.  An embstr is
# one block of the robj (16 bytes), the sds header (3: sdshdr8), the
# string and its NUL; a raw string's robj (and a listpack hash's) is a
# block of 16 alone.
sample=()
for kind in key blob h; do
    case $kind in
    key) n=$keys ;;
    blob) n=$((keys / 3)) ;;
    h) n=$((keys / 15)) ;;
    esac
    for ((k = 1; k <= 20; k++)); do
        i=$((n * k / 21))
        # key:N with N a multiple of 7 was deleted.
        if [[ $kind == key ]] && ((i % 7 == 0)); then i=$((i + 1)); fi
        line=$(rc DEBUG OBJECT "$kind:$i") || die "DEBUG OBJECT $kind:$i failed"
        addr=$(sed -n 's/.*Value at:\(0x[0-9a-f]*\).*/\1/p' <<<"$line")
        enc=$(sed -n 's/.* encoding:\([a-z]*\).*/\1/p' <<<"$line")
        [[ -n $addr ]] || die "DEBUG OBJECT $kind:$i: $line"
        case $enc in
        embstr) val="value:$i"; usable=$(class $((16 + 3 + ${#val} + 1))) ;;
        *) usable=16 ;;
        esac
        sample+=("sample addr=$addr usable=$usable")
    done
done

mstats=$(rc MEMORY MALLOC-STATS)
mapped=$(sed -n 's/^Allocated: [0-9]*, active: [0-9]*, metadata: [0-9]*.*, mapped: \([0-9]*\).*/\1/p' <<<"$mstats" | sed -n 1,1p)
[[ -n $mapped ]] || die "no 'mapped:' in MEMORY MALLOC-STATS"
allocated=$(rc INFO memory | tr -d '\r' | sed -n 's/^allocator_allocated://p')
used=$(rc INFO memory | tr -d '\r' | sed -n 's/^used_memory://p')

{
    echo "shape=redis"
    echo "pid=$pid"
    echo "keys=$dbsize"
    echo "heap_bytes=$mapped"
    echo "heap_how=jemalloc stats.mapped (MEMORY MALLOC-STATS)"
    echo "allocated=$allocated"
    echo "allocated_how=jemalloc stats.allocated (INFO allocator_allocated; counts the regions in thread caches as allocated)"
    echo "used_memory=$used"
    echo "leaks_truth=unknown"
    printf '%s\n' "${sample[@]}"
} >"$run/truth.txt"

# The core: gdb stops every thread, writes the memory and lets go.
if ! gdb -q -nx -batch -p "$pid" -ex "gcore $run/core" -ex detach >"$run/gdb.log" 2>&1 ||
    [[ ! -s $run/core ]]; then
    die "gdb gcore failed (see $run/gdb.log)"
fi
rc SHUTDOWN NOSAVE >/dev/null 2>&1 || true
wait "$pid" 2>/dev/null || true
pid=
wait "$drain" 2>/dev/null || true
drain=
mv -f "$run/truth.txt" "$out/truth.txt"
mv -f "$run/core" "$out/core"
mv -f "$run/redis.log" "$out/redis.log"
rm -rf "$run"
