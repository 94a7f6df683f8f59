#!/usr/bin/env bash
# Benchmark heapwalk on a big core (>= 1 GiB heap, >= 10 million chunks).
#
# usage: scripts/bench.sh [BUILD_DIR]        (default BUILD_DIR: build)
#
# Builds scripts/bench/bigheap.c and memprobe.c into BUILD_DIR/bench/, makes the
# core BUILD_DIR/bench/core once (kept while it is newer than bigheap's source
# and binary), then times, with memprobe (wall time, peak RSS, peak RssAnon):
#   cat core > /dev/null                      (the I/O floor; page cache warmed first)
#   heapwalk core summary                     (and --no-cache: reading libc's DWARF)
#   heapwalk --json core chunks > /dev/null
#   heapwalk core chunk ADDR                  (one chunk from the middle of the heap)
#   heapwalk core bins
#   heapwalk core leaks
#   heapwalk core maps, refs ADDR, why ADDR   (ADDR: the chunk above)
# and reports summary/cat (target <= 1.3x), chunks --json/cat (target <= 3x),
# leaks/cat (target <= 4x) and leaks' peak anonymous memory (target <= 64 MiB
# + 2% of the heap); bigheap keeps every block reachable, so leaks must find
# none lost; heapwalk's mallinfo must be bigheap's, and each block of the
# sample bigheap prints (sample addr=... usable=...) must be in use in
# chunks --json with its malloc_usable_size.  Each ratio is best of
# BENCH_RUNS against cat's best of as many runs alternated with the
# command's.
#
# Environment:
#   HEAPWALK     command to benchmark (default BUILD_DIR/heapwalk); may be a stand-in
#   BENCH_RUNS   runs per command, best wall time is reported (default 3)
#   BENCH_TRACE=1 every run's wall time on stderr
#   BIGHEAP_ARGS arguments for bigheap (default: "4 2850000", 4 threads x 2.85M allocations)
#   CC           C compiler (default gcc)
#   BENCH_CORE_METHOD=gcore  take the core with gdb even when the kernel could write it
#   BENCH_ALLOCATOR=jemalloc run bigheap with Debian bookworm's libjemalloc2
#                (LD_PRELOAD from scripts/corpus/sysroot.sh jemalloc-5.3.0-amd64);
#                the core then goes to BUILD_DIR/bench-jemalloc/
#   BENCH_ALLOCATOR=tcmalloc the same with the host's gperftools
#                (libtcmalloc_minimal.so.4, libgoogle-perftools-dev), into
#                BUILD_DIR/bench-tcmalloc/
set -euo pipefail

die() { printf 'bench: %s\n' "$*" >&2; exit 1; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
allocator=${BENCH_ALLOCATOR:-ptmalloc}
preload=
case $allocator in
ptmalloc) out=$build/bench ;;
jemalloc)
    out=$build/bench-jemalloc
    preload=$("$top/scripts/bench/jemalloc-preload.sh" "$build") || exit 1
    ;;
tcmalloc)
    out=$build/bench-tcmalloc
    preload=$(gcc -print-file-name=libtcmalloc_minimal.so.4)
    [ -f "$preload" ] || die "no libtcmalloc_minimal.so.4 (make deps installs libgoogle-perftools-dev)"
    ;;
*) die "BENCH_ALLOCATOR must be ptmalloc, jemalloc or tcmalloc" ;;
esac
mkdir -p "$out"
src=$top/scripts/bench
hw=${HEAPWALK:-$build/heapwalk}
runs=${BENCH_RUNS:-3}
read -r -a bigheap_args <<<"${BIGHEAP_ARGS:-4 2850000}"
cc=${CC:-gcc}
cflags=(-std=c11 -O2 -g -pthread -Wall -Wextra -Werror)

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer"
# HEAPWALK may be a path or a command name; it must at least be runnable.
command -v "$hw" >/dev/null 2>&1 || die "heapwalk not found: $hw (run make first, or set HEAPWALK)"

# ---- build the helpers (only when the source is newer) ----
for prog in bigheap memprobe pagetouch cpuprobe; do
    if [[ ! -x $out/$prog || $src/$prog.c -nt $out/$prog ]]; then
        "$cc" "${cflags[@]}" -o "$out/$prog.tmp" "$src/$prog.c" || die "cannot build $prog"
        mv -f "$out/$prog.tmp" "$out/$prog"
    fi
done

# ---- make the core (once) ----
core=$out/core
info=$out/bigheap.out        # bigheap's own counts
gen_time_file=$out/core.gen-time

# gcore_fallback: run bigheap in wait mode and take the core with gdb.
gcore_fallback() {
    command -v gdb >/dev/null 2>&1 || die "no kernel core and gdb is missing (scripts/setup-deps.sh)"
    local run=$1 pid i
    (cd "$run" && exec env ${preload:+LD_PRELOAD=$preload} "$out/bigheap" -w "${bigheap_args[@]}") >"$run/bigheap.out" 2>&1 &
    pid=$!
    for ((i = 0; i < 6000; i++)); do    # up to 10 minutes to build the heap
        grep -qx ready "$run/bigheap.out" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || die "bigheap exited early: $(tail -n 1 "$run/bigheap.out")"
        sleep 0.1
    done
    grep -qx ready "$run/bigheap.out" || { kill -KILL "$pid"; die "bigheap did not get ready"; }
    if ! gdb -q -nx -batch -p "$pid" -ex "gcore $run/core" -ex detach >"$run/gdb.log" 2>&1 ||
        [[ ! -s $run/core ]]; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        die "gdb gcore failed (see $run/gdb.log; ptrace may be restricted)"
    fi
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

make_core() {
    local run=$out/run pattern t0 t1 found=
    local -a cores
    rm -rf "$run" "$core" "$info" "$gen_time_file"
    mkdir -p "$run"
    local avail_kib
    avail_kib=$(df -Pk "$out" | awk 'NR == 2 { print $4 }')
    ((avail_kib > 6 * 1024 * 1024)) || die "need ~6 GiB free under $out to make the core"

    pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo core)
    t0=$(date +%s.%N)
    # The kernel writes the core into bigheap's cwd only when core_pattern is a
    # plain file name; a pipe (systemd-coredump, apport) or a path elsewhere
    # is not ours to dig through, so gdb takes the core instead.
    if [[ ${BENCH_CORE_METHOD:-} != gcore && $pattern != \|* && $pattern != */* ]] &&
        (ulimit -c unlimited) 2>/dev/null; then
        # bigheap is not exec'd: this subshell waits for it, so bash's
        # "Aborted (core dumped)" notice goes to the subshell's stderr (/dev/null).
        (
            ulimit -c unlimited
            cd "$run"
            env ${preload:+LD_PRELOAD=$preload} "$out/bigheap" "${bigheap_args[@]}" >"$run/bigheap.out" 2>&1 || exit $?
        ) 2>/dev/null && die "bigheap did not abort"
        shopt -s nullglob
        cores=("$run"/core*)
        shopt -u nullglob
        if ((${#cores[@]} == 1)) && [[ -s ${cores[0]} ]]; then
            [[ ${cores[0]} == "$run/core" ]] || mv -f "${cores[0]}" "$run/core"
            found=kernel
        fi
    fi
    if [[ -z $found ]]; then
        rm -f "$run"/core*
        gcore_fallback "$run"
        found=gcore
    fi
    t1=$(date +%s.%N)
    grep -q '^allocs=' "$run/bigheap.out" || die "bigheap printed no counts (see $run/bigheap.out)"
    mv -f "$run/bigheap.out" "$info"
    mv -f "$run/core" "$core"
    rm -rf "$run"
    awk -v a="$t0" -v b="$t1" -v how="$found" 'BEGIN { printf "%.1f %s\n", b - a, how }' >"$gen_time_file"
}

if [[ -s $core && -s $info && -s $gen_time_file && $core -nt $src/bigheap.c && $core -nt $out/bigheap ]]; then
    core_note="reused"
else
    make_core
    core_note="made now"
fi

# ---- measurements ----
core_bytes=$(stat -c %s "$core")
core_alloc_bytes=$(($(stat -c %b "$core") * $(stat -c %B "$core")))
field() { sed -n "s/^$1=//p" "$info" | sed -n 1,1p; }
allocs=$(field allocs)
live=$(field live)
freed=$(field freed)
heap_bytes=$(field heap_bytes)
read -r gen_s gen_how <"$gen_time_file"

cat "$core" >/dev/null   # warm the page cache

# wall_of: the wall time memprobe wrote for the last run.
wall_of() { sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' "$out/probe.txt"; }
# less X Y: X < Y (or Y empty).
less() { [[ -z $2 ]] || awk -v x="$1" -v y="$2" 'BEGIN { exit !(x < y) }'; }

# measure OUTFILE CMD...: best wall time over $runs runs, largest memory.
# Sets m_wall m_rss m_anon m_status.  With alternate=1 each run is preceded
# by a run of cat over the core, and m_cat is cat's best in that series:
# the ratios to cat compare runs made minutes apart no more (this VM's
# speed drifts from minute to minute).
alternate=0
trace=${BENCH_TRACE:-0}
measure() {
    local outfile=$1 rep line w r a s
    shift
    m_wall='' m_rss=0 m_anon=0 m_status=0 m_cat=''
    for ((rep = 0; rep < runs; rep++)); do
        if ((alternate)); then
            "$out/memprobe" -o "$out/probe.txt" -- cat "$core" >/dev/null 2>&1 || true
            w=$(wall_of)
            if [[ -n $w ]] && less "$w" "$m_cat"; then m_cat=$w; fi
        fi
        s=0
        "$out/memprobe" -o "$out/probe.txt" -- "$@" >"$outfile" 2>"$out/probe.err" || s=$?
        line=$(cat "$out/probe.txt")
        w=$(sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' <<<"$line")
        r=$(sed -n 's/.*maxrss_kib=\([0-9-]*\).*/\1/p' <<<"$line")
        a=$(sed -n 's/.*rss_anon_peak_kib=\([0-9-]*\).*/\1/p' <<<"$line")
        if less "$w" "$m_wall"; then m_wall=$w; fi
        ((trace)) && printf 'bench: %s s%s: %s\n' "$w" \
            "${m_cat:+ (cat best $m_cat s)}" "$*" >&2
        ((r > m_rss)) && m_rss=$r
        ((a > m_anon)) && m_anon=$a
        ((s != 0)) && m_status=$s
    done
    rm -f "$out/probe.txt"
}

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
gib() { awk -v b="$1" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'; }

failed=0
rows=()
row() {  # row LABEL
    local st=
    if ((m_status != 0)); then
        st="  FAILED (exit $m_status: $(head -c 200 "$out/probe.err" | sed -n 1,1p))"
        failed=1
    fi
    rows+=("$(printf '%-42s %9s %14s %17s%s' "$1" "$m_wall" "$(mib "$m_rss")" "$(mib "$m_anon")" "$st")")
}

measure /dev/null cat "$core"
cat_wall=$m_wall
row "cat core > /dev/null"
measure /dev/null "$out/pagetouch" -t 2 "$core"
touch_wall=$m_wall
row "mmap core, read a byte per page (2 threads)"

# --stats: each command's own account of its work (walks, list entries
# followed, entries guessed or summed instead), kept for the report; an
# older heapwalk (for a before/after comparison) has no --stats.
stats=()
hw_help=$("$hw" --help 2>&1 || true)
if [[ $hw_help == *--stats* ]]; then stats=(--stats); fi
works=()
work() {  # work LABEL: the --stats line of the last measured run
    local w
    w=$(sed -n 's/^heapwalk: stats: .*MiB; //p' "$out/probe.err" | tail -n 1)
    [[ -n $w ]] && works+=("$(printf '%-22s  %s' "$1" "$w")")
    return 0
}

# The struct layouts heapwalk reads from libc's debug file are kept
# between runs (~/.cache/heapwalk, here a directory of the bench's own):
# a user's second run on the same libc reads no DWARF.  The runs below
# are such runs (the cache made by a first one, not timed); the first
# run's cost is the "--no-cache" row.
export HEAPWALK_CACHE_DIR=$out/cache
rm -rf "$HEAPWALK_CACHE_DIR"
"$hw" "$core" summary >/dev/null 2>&1 || true
cpu_before=$("$out/cpuprobe" 2>&1 || true)
alternate=1
measure "$out/summary.txt" "$hw" "${stats[@]}" "$core" summary
sum_wall=$m_wall sum_cat=$m_cat
sum_status=$m_status
row "heapwalk core summary"
work summary
alternate=0
if [[ $hw_help == *--no-cache* ]]; then
    measure /dev/null "$hw" "${stats[@]}" --no-cache "$core" summary
    row "heapwalk --no-cache core summary"
    work "summary --no-cache"
fi
alternate=1

measure /dev/null "$hw" "${stats[@]}" --json "$core" chunks
chunks_wall=$m_wall chunks_cat=$m_cat
alternate=0
chunks_status=$m_status
row "heapwalk --json core chunks > /dev/null"
work "chunks --json"

# An address in the middle of the heap (the mallinfo arena's middle
# chunk), for the one-chunk lookup.
mid=$("$hw" --json "$core" chunks 2>/dev/null | awk -v n="$live" 'NR == int(n / 2) { print; exit }' |
      sed -n 's/.*"addr":"\(0x[0-9a-f]*\)".*/\1/p')
if [[ -n $mid ]]; then
    measure /dev/null "$hw" "$core" chunk "$mid"
    row "heapwalk core chunk ADDR"
    # Both read only the heap around the address (alloc.h's
    # chunks_around), as chunk ADDR does.
    measure /dev/null "$hw" "$core" view "$mid" 8
    row "heapwalk core view ADDR"
    measure /dev/null "$hw" "$core" chunks --around "$mid" 5
    row "heapwalk core chunks --around"
fi
measure /dev/null "$hw" "$core" bins
row "heapwalk core bins"
alternate=1
measure "$out/leaks.txt" "$hw" "${stats[@]}" "$core" leaks
alternate=0
leaks_wall=$m_wall leaks_cat=$m_cat
cpu_after=$("$out/cpuprobe" 2>&1 || true)
leaks_status=$m_status
leaks_anon=$m_anon
row "heapwalk core leaks"
work leaks
measure /dev/null "$hw" "$core" maps
row "heapwalk core maps"
if [[ -n $mid ]]; then
    # Both run the leaks scan first, then one more pass (refs: every
    # block; why: a breadth-first search until it meets the block).
    measure /dev/null "$hw" "$core" refs "$mid"
    row "heapwalk core refs ADDR"
    measure /dev/null "$hw" "$core" why "$mid"
    row "heapwalk core why ADDR"
fi
rm -f "$out/probe.err"

# ---- report ----
echo "heapwalk bench: $hw (bigheap on $allocator${preload:+, $preload})"
printf '%-22s %s (%d bytes; %s on disk)\n' "core" "$(gib "$core_bytes")" "$core_bytes" "$(gib "$core_alloc_bytes")"
printf '%-22s %s s (%s, %s)\n' "core generation" "$gen_s" "$gen_how" "$core_note"
printf '%-22s %s (%d bytes, %s)\n' "heap size" "$(gib "$heap_bytes")" "$heap_bytes" "$(field heap_how)"
printf '%-22s %d (%d live, %d freed; bigheap %s)\n' "chunks allocated" "$allocs" "$live" "$freed" "${bigheap_args[*]}"
echo
printf '%-42s %9s %14s %17s\n' "command" "wall(s)" "peak RSS(MiB)" "peak anon(MiB)"
printf '%s\n' "${rows[@]}"
echo
# ratio NAME WALL STATUS TARGET CAT: CAT is cat's best in the same
# alternated series as the command's runs.
ratio() {
    if (($3 == 0)) && awk -v c="$5" 'BEGIN { exit !(c > 0) }'; then
        awk -v n="$1" -v s="$2" -v c="$5" -v t="$4" 'BEGIN {
            r = s / c
            printf "%-22s  %.2fx   target <= %sx   %-7s (%.3f s / cat %.3f s, alternated)\n", n "/cat time ratio", r, t, (r <= t ? "MET" : "NOT MET"), s, c
        }'
    else
        printf '%-22s  n/a (failed, or cat took no time)\n' "$1/cat time ratio"
    fi
}
ratio summary "$sum_wall" "$sum_status" 1.3 "$sum_cat"
ratio "chunks --json" "$chunks_wall" "$chunks_status" 3 "$chunks_cat"
ratio leaks "$leaks_wall" "$leaks_status" 4 "$leaks_cat"
# What the machine gave (scripts/bench/cpuprobe.c): a ratio measured
# while cpus is near 1 is a two-thread walk on one CPU.
printf '%-22s  before: %s\n%-22s  after:  %s\n' "CPU (cpuprobe)" "$cpu_before" "" "$cpu_after"
# The targets are against cat; a mapped core's page faults are a floor
# of their own (pagetouch.c says why), shown for judging the ratios.
awk -v p="$touch_wall" -v c="$cat_wall" -v s="$sum_wall" -v l="$leaks_wall" 'BEGIN {
    if (c > 0 && p > 0)
        printf "%-22s  %.2fx cat; summary %.2fx it, leaks %.2fx it\n", "page-fault floor", p / c, s / p, l / p
}'
((${#works[@]} == 0)) || printf '%s\n' "${works[@]}"
awk -v a="$leaks_anon" -v h="$heap_bytes" 'BEGIN {
    t = 64 * 1024 + 0.02 * h / 1024
    printf "%-22s  %.1f MiB   target <= %.1f MiB   %s\n", "leaks anon memory", a / 1024, t / 1024, (a <= t ? "MET" : "NOT MET")
}'
lost=$(sed -n 's/^definitely lost: *\([0-9]*\).*/\1/p' "$out/leaks.txt")
lost_i=$(sed -n 's/^indirectly lost: *\([0-9]*\).*/\1/p' "$out/leaks.txt")
# gperftools loses one 8-byte MallocExtension of its own (its module
# initializer's default instance, replaced by tcmalloc's): not bigheap's.
# (Its loss record: "1 of 1", bytes, blocks, size, kind, ... type.)
libleak=
if [[ $allocator == tcmalloc && $lost == 1 ]] &&
    grep -qE '^ +1 of 1 +8 +1 +8 +definite .* MallocExtension$' "$out/leaks.txt"; then
    lost=0 libleak=" (and gperftools' own lost MallocExtension)"
fi
if [[ $lost == 0 && $lost_i == 0 ]]; then
    echo "leaks vs program       none lost (bigheap keeps every block)$libleak"
else
    echo "leaks vs program       WRONG: ${lost:-?} definite, ${lost_i:-?} indirect; bigheap keeps every block"
fi

# Cross-check: heapwalk's mallinfo must equal the program's own mallinfo2().
mi_line=$(sed -n 's/^mallinfo //p' "$info")
if json=$("$hw" --json "$core" summary 2>/dev/null) && [[ $json == *'"mallinfo"'* ]]; then
    mi_json=$(grep -o '"mallinfo":{[^}]*}' <<<"$json" || true)
    mismatch=()
    for kv in $mi_line; do
        k=${kv%%=*} v=${kv#*=}
        got=$(grep -o "\"$k\":[0-9]*" <<<"$mi_json" | sed -n 1,1p | cut -d: -f2 || true)
        [[ $got == "$v" ]] || mismatch+=("$k: program $v, heapwalk ${got:-missing}")
    done
    used_n=$(grep -o '"used":{"count":[0-9]*' <<<"$json" | sed -n 1,1p | grep -o '[0-9]*$' || true)
    free_n=$(grep -o '"free":{"count":[0-9]*' <<<"$json" | sed -n 1,1p | grep -o '[0-9]*$' || true)
    if [[ -n $used_n && -n $free_n ]]; then
        printf 'heapwalk chunks walked  %d (%d used, %d free)\n' $((used_n + free_n)) "$used_n" "$free_n"
    fi
    if ((${#mismatch[@]} == 0)); then
        echo "mallinfo vs program     equal"
    else
        printf 'mallinfo vs program     DIFFERENT: %s\n' "$(printf '%s; ' "${mismatch[@]}")"
    fi
fi
# A sample of bigheap's live blocks (in each arena, mmapped ones too):
# each is a block in use of its malloc_usable_size in `chunks --json`.
if grep -q '^sample ' "$info"; then
    sed -n 's/^sample addr=\(0x[0-9a-f]*\) .*/"addr":"\1"/p' "$info" >"$out/sample.pat"
    "$hw" --json "$core" chunks 2>/dev/null | grep -F -f "$out/sample.pat" >"$out/sample.rows" || true
    bad=()
    while read -r _ a u; do
        a=${a#addr=} u=${u#usable=}
        row=$(grep -F "\"addr\":\"$a\"" "$out/sample.rows" || true)
        [[ $row == *'"state":"used"'* && $row == *"\"size\":$u,"* ]] ||
            bad+=("$a ($u bytes): ${row:-not listed}")
    done < <(grep '^sample ' "$info")
    n=$(grep -c '^sample ' "$info")
    if ((${#bad[@]} == 0)); then
        echo "blocks vs program      $n sampled: each in use, of its malloc_usable_size"
    else
        printf 'blocks vs program      WRONG: %s\n' "$(printf '%s; ' "${bad[@]:0:5}")"
    fi
    rm -f "$out/sample.pat" "$out/sample.rows"
fi
echo
echo "The cores and programs are kept in $out ($(du -sh "$out" 2>/dev/null | cut -f1)) for the next run; 'make clean-bench' removes them."
exit "$failed"
