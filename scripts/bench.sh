#!/usr/bin/env bash
# Benchmark heapwalk on big cores of several heap shapes, not one: a walk
# tuned on one shape can be slow, or wrong, on another.
#
# usage: scripts/bench.sh [BUILD_DIR]        (default BUILD_DIR: build)
#
# The shapes (BENCH_SHAPES, default all of them, in this order):
#   bigheap    scripts/bench/bigheap.c: 4 threads' arenas and the main one,
#              10.9 M chunks, 30% freed at random (1.6 GiB core)
#   manyheaps  scripts/bench/shapes.c: 4 thread arenas of ~ten 64 MiB heaps
#              each, a third of 20 M blocks freed in allocation order:
#              full fastbins, nothing coalesced (~2.7 GiB)
#   churn      shapes.c: blocks freed and malloc'd again, written from
#              offset 8 on, so that in-use chunks keep the fd words of
#              their time in a free list
#   ptrs       shapes.c: linked lists and trees whose nodes' first word is
#              a heap pointer, some nodes freed
#   arenas64   shapes.c: 64 threads, each a small heap in an arena of its own
#   jemalloc   bigheap on Debian bookworm's libjemalloc2 (LD_PRELOAD,
#              scripts/corpus/sysroot.sh jemalloc-5.3.0-amd64)
#   tcmalloc   bigheap on the host's gperftools (libtcmalloc_minimal.so.4)
#   mimalloc   bigheap on the host's mimalloc (Debian's libmimalloc.so.2,
#              2.0.9; make deps installs libmimalloc-dev)
#   mimalloc3  bigheap on Debian sid's libmimalloc.so.3 (3.6.0: its chunk
#              maps; scripts/corpus/mimalloc-libs.sh unpacks it into
#              BUILD_DIR/mimalloc)
#   redis      Debian's redis-server (its jemalloc) with a few million keys,
#              taken with gcore (scripts/bench/redis-core.sh; installs
#              redis-server with apt-get when it is missing)
#   python     Debian's python3 with PYTHONMALLOC=malloc holding a few
#              million objects, most reached through interior pointers
#              (scripts/bench/pyheap.py)
# Each core is made once, into BUILD_DIR/bench (bigheap) or
# BUILD_DIR/bench-SHAPE, and kept while it is newer than what made it and
# was made with the same arguments; `make clean-bench` removes them.  Every
# program reaches its crash by a barrier or a handshake, never a sleep,
# and records its own truth (truth.txt: a sample of live blocks with
# malloc_usable_size, glibc's mallinfo2 or the allocator's statistics).
#
# For each shape, with memprobe (wall time, peak RSS, peak RssAnon):
#   cat core > /dev/null                      (the I/O floor; page cache warmed first)
#   heapwalk core summary
#   heapwalk --json core chunks > /dev/null
#   heapwalk core leaks
# each best of BENCH_RUNS, alternated with as many runs of cat, and the
# ratio to that cat's best (targets: summary 1.3x, chunks --json 3x, leaks
# 4x); leaks' peak anonymous memory (the core's mapped pages count in RSS,
# not in RssAnon; target 64 MiB + 2% of the heap); the --stats proof
# status of each (free-list entries followed, guessed, proven by sums,
# sums that failed, and which); and the checks against the program's
# truth: heapwalk's mallinfo equal to the program's mallinfo2 (glibc), each
# sampled block in use in chunks --json with its malloc_usable_size, no
# block lost where the program keeps every block reachable.  The shapes in
# BENCH_DETAIL also get the other commands' rows (--no-cache summary, a
# mapped core's page-fault floor, chunk ADDR, view, chunks --around, bins,
# maps, refs, why).  At the end one table: a row per shape.
#
# Environment:
#   HEAPWALK       heapwalk to benchmark (default BUILD_DIR/heapwalk)
#   BENCH_SHAPES   the shapes to run, e.g. "manyheaps churn" (default all)
#   BENCH_DETAIL   shapes that get every command's row (default "bigheap
#                  jemalloc tcmalloc"; "all" or "none")
#   BENCH_RUNS     runs per command, the best wall time is reported (default 3)
#   BENCH_SLOW     a command whose run took more seconds than this is not
#                  run again (default 20): its ratio is far from any target
#                  and three runs of it would take the bench's whole hour
#   BENCH_TIMEOUT  seconds one run may take before it is killed (default 600)
#   BENCH_TRACE=1  every run's wall time on stderr
#   BENCH_ARGS_SHAPE  the program's arguments for SHAPE, e.g.
#                  BENCH_ARGS_manyheaps=1000000 (defaults below, in
#                  shape_setup; BIGHEAP_ARGS is bigheap's, as before)
#   BENCH_PYTHON   the python3 of the python shape (default /usr/bin/python3)
#   BENCH_CORE_METHOD=gcore  take the cores with gdb even when the kernel
#                  could write them
#   BENCH_ALLOCATOR=jemalloc|tcmalloc|mimalloc|ptmalloc  (the old
#                  interface) one shape: jemalloc, tcmalloc, mimalloc or
#                  bigheap
#   CC             C compiler (default gcc)
# Exit status: 0; 1 when a measured command failed or heapwalk disagreed
# with a program's truth.
set -euo pipefail

die() { printf 'bench: %s\n' "$*" >&2; exit 1; }
note() { printf 'bench: %s\n' "$*" >&2; }

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-build}
mkdir -p "$build"
build=$(cd "$build" && pwd)
src=$top/scripts/bench
tools=$build/bench        # the helpers, and bigheap's core (gdb-heap.sh reads both)
mkdir -p "$tools"
hw=${HEAPWALK:-$build/heapwalk}
runs=${BENCH_RUNS:-3}
slow=${BENCH_SLOW:-20}
tmo=${BENCH_TIMEOUT:-600}
trace=${BENCH_TRACE:-0}
cc=${CC:-gcc}
cflags=(-std=c11 -O2 -g -pthread -Wall -Wextra -Werror)
python=${BENCH_PYTHON:-/usr/bin/python3}
[[ -x $python ]] || python=$(command -v python3 || echo python3)

all_shapes=(bigheap manyheaps churn ptrs arenas64 jemalloc tcmalloc mimalloc mimalloc3 redis python)
case ${BENCH_ALLOCATOR:-} in
'') default_shapes="${all_shapes[*]}" ;;
ptmalloc) default_shapes=bigheap ;;
jemalloc | tcmalloc | mimalloc) default_shapes=$BENCH_ALLOCATOR ;;
*) die "BENCH_ALLOCATOR must be ptmalloc, jemalloc, tcmalloc or mimalloc" ;;
esac
read -r -a shapes <<<"${BENCH_SHAPES:-$default_shapes}"
((${#shapes[@]} > 0)) || die "BENCH_SHAPES names no shape"
for s in "${shapes[@]}"; do
    [[ " ${all_shapes[*]} " == *" $s "* ]] || die "unknown shape '$s' (shapes: ${all_shapes[*]})"
done
detail=${BENCH_DETAIL:-bigheap jemalloc tcmalloc}
[[ $detail == all ]] && detail="${all_shapes[*]}"

[[ $runs =~ ^[1-9][0-9]*$ ]] || die "BENCH_RUNS must be a positive integer"
[[ $slow =~ ^[0-9]+([.][0-9]+)?$ ]] || die "BENCH_SLOW must be a number of seconds"
[[ $tmo =~ ^[1-9][0-9]*$ ]] || die "BENCH_TIMEOUT must be a positive number of seconds"
# HEAPWALK may be a path or a command name; it must at least be runnable.
command -v "$hw" >/dev/null 2>&1 || die "heapwalk not found: $hw (run make first, or set HEAPWALK)"
command -v timeout >/dev/null || die "no timeout (coreutils)"

# ---- build the helpers (only when the source is newer) ----
for prog in bigheap shapes memprobe pagetouch cpuprobe; do
    if [[ ! -x $tools/$prog || $src/$prog.c -nt $tools/$prog ]]; then
        "$cc" "${cflags[@]}" -o "$tools/$prog.tmp" "$src/$prog.c" || die "cannot build $prog"
        mv -f "$tools/$prog.tmp" "$tools/$prog"
    fi
done
if [[ ! -f $tools/pytruth.so || $src/pytruth.c -nt $tools/pytruth.so ]]; then
    "$cc" "${cflags[@]}" -shared -fPIC -o "$tools/pytruth.so.tmp" "$src/pytruth.c" ||
        die "cannot build pytruth.so"
    mv -f "$tools/pytruth.so.tmp" "$tools/pytruth.so"
fi
memprobe=$tools/memprobe

# ---- the shapes ----
# shape_setup NAME: what makes NAME's core.  Sets s_out (its directory),
# s_desc, s_kind (prog: a program that aborts, or prints "ready" with
# -w; redis: redis-core.sh), s_run and s_wait (the program's command
# lines, aborting and waiting), s_deps (files a newer one of which makes
# the core anew), s_args (for the stamp), s_skip (why it cannot run here).
shape_setup() {
    local name=$1 a preload=
    local name_var=BENCH_ARGS_$1    # the user's arguments for the shape, if any
    s_out=$build/bench-$name s_kind=prog s_skip='' s_deps=() s_run=() s_wait=()
    case $name in
    bigheap | jemalloc | tcmalloc | mimalloc | mimalloc3)
        if [[ $name == bigheap ]]; then
            s_out=$tools
            a=${BENCH_ARGS_bigheap:-${BIGHEAP_ARGS:-4 2850000}}
        else
            a=${!name_var:-4 5000000}
        fi
        if [[ $name == jemalloc ]]; then
            preload=$("$src/jemalloc-preload.sh" "$build") || s_skip="no jemalloc sysroot"
        elif [[ $name == tcmalloc ]]; then
            preload=$("$cc" -print-file-name=libtcmalloc_minimal.so.4)
            [[ -f $preload ]] || s_skip="no libtcmalloc_minimal.so.4 (make deps installs libgoogle-perftools-dev)"
        elif [[ $name == mimalloc ]]; then
            preload=$("$cc" -print-file-name=libmimalloc.so.2)
            [[ -f $preload ]] || s_skip="no libmimalloc.so.2 (make deps installs libmimalloc-dev)"
        elif [[ $name == mimalloc3 ]]; then
            preload=$build/mimalloc/mimalloc-3.6.0-amd64
            if "$top/scripts/corpus/mimalloc-libs.sh" mimalloc-3.6.0-amd64 "$preload"; then
                preload=$preload/usr/lib/x86_64-linux-gnu/libmimalloc.so.3
            else
                s_skip="no Debian sid libmimalloc3 3.6.0 here (scripts/corpus/mimalloc-libs.sh)"
                preload=
            fi
        fi
        read -r -a s_args <<<"$a"
        s_desc="bigheap ${s_args[*]}${preload:+ on $preload}"
        s_run=(env ${preload:+LD_PRELOAD=$preload} "$tools/bigheap" "${s_args[@]}")
        s_wait=(env ${preload:+LD_PRELOAD=$preload} "$tools/bigheap" -w "${s_args[@]}")
        s_deps=("$src/bigheap.c" "$tools/bigheap")
        ;;
    manyheaps | churn | ptrs | arenas64)
        case $name in
        manyheaps) a=5000000 ;;
        churn) a=2500000 ;;
        ptrs) a=2000000 ;;
        arenas64) a=40000 ;;
        esac
        a=${!name_var:-$a}
        read -r -a s_args <<<"$a"
        s_desc="shapes $name ${s_args[*]}"
        s_run=("$tools/shapes" "$name" "${s_args[@]}")
        s_wait=("$tools/shapes" -w "$name" "${s_args[@]}")
        s_deps=("$src/shapes.c" "$tools/shapes")
        ;;
    redis)
        s_kind=redis
        read -r -a s_args <<<"${!name_var:-3000000}"
        s_desc="Debian's redis-server, DEBUG POPULATE ${s_args[*]} and more (redis-core.sh)"
        s_deps=("$src/redis-core.sh")
        if ! command -v redis-server >/dev/null; then
            # The only program of the bench not installed by `make deps`
            # (scripts/setup-deps.sh): installed here, as the brief of the
            # shape says, when apt-get can.
            note "redis-server is missing: apt-get install redis-server"
            if [[ $(id -u) == 0 ]]; then
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null 2>&1 || true
            elif command -v sudo >/dev/null; then
                sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null 2>&1 || true
            fi
        fi
        if command -v redis-server >/dev/null; then
            s_deps+=("$(command -v redis-server)")
        else
            s_skip="no redis-server (apt-get install redis-server)"
        fi
        ;;
    python)
        read -r -a s_args <<<"${!name_var:-1500000}"
        s_desc="$python (PYTHONMALLOC=malloc), pyheap.py ${s_args[*]} records"
        s_run=(env PYTHONMALLOC=malloc PYTHONHASHSEED=0 "$python" "$src/pyheap.py" "$tools/pytruth.so" "${s_args[@]}")
        s_wait=("${s_run[@]}" -w)
        s_deps=("$src/pyheap.py" "$tools/pytruth.so")
        command -v "$python" >/dev/null || s_skip="no python3"
        ;;
    esac
}

# The core's stamp: how it was made; a core is reused only when its stamp
# says the same command (and so the same arguments and allocator).
stamp_line() { printf '%s|' "$s_kind" "${s_args[@]}" "${s_run[@]}"; }

# take_core_gcore RUN: the program in wait mode; its stdout is read from a
# FIFO until it says "ready" (it has built its heap and waits), then gdb
# writes the core.  A program that dies first ends the read (end of file).
take_core_gcore() {
    local run=$1 pid line ready=0
    command -v gdb >/dev/null 2>&1 || die "no kernel core and gdb is missing (scripts/setup-deps.sh)"
    rm -f "$run/out.fifo"
    mkfifo "$run/out.fifo"
    (cd "$run" && exec "${s_wait[@]}") >"$run/out.fifo" 2>"$run/err.txt" &
    pid=$!
    exec 4<"$run/out.fifo"
    while IFS= read -r line <&4; do
        if [[ $line == ready ]]; then
            ready=1
            break
        fi
        printf '%s\n' "$line" >>"$run/truth.txt"
    done
    exec 4<&-
    if ((!ready)); then
        wait "$pid" 2>/dev/null || true
        die "$s_desc exited before it was ready: $(tail -n 2 "$run/err.txt" "$run/truth.txt" 2>/dev/null)"
    fi
    if ! gdb -q -nx -batch -p "$pid" -ex "gcore $run/core" -ex detach >"$run/gdb.log" 2>&1 ||
        [[ ! -s $run/core ]]; then
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        die "gdb gcore failed (see $run/gdb.log; ptrace may be restricted)"
    fi
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# make_core: the shape's core and truth into s_out (core, truth.txt,
# core.stamp: the stamp line, then the seconds it took and how).
make_core() {
    local run=$s_out/run pattern t0 t1 found='' avail_kib st
    local -a cores
    rm -rf "$run" "$s_out/core" "$s_out/truth.txt" "$s_out/core.stamp"
    mkdir -p "$run"
    avail_kib=$(df -Pk "$s_out" | awk 'NR == 2 { print $4 }')
    ((avail_kib > 6 * 1024 * 1024)) || die "need ~6 GiB free under $s_out to make the $shape core"
    t0=$(date +%s.%N)
    if [[ $s_kind == redis ]]; then
        st=0
        "$src/redis-core.sh" "$run" "${s_args[@]}" || st=$?
        ((st == 0)) || die "redis-core.sh failed (exit $st)"
        mv -f "$run/truth.txt" "$s_out/truth.txt"
        mv -f "$run/core" "$s_out/core"
        found=gcore
    else
        pattern=$(cat /proc/sys/kernel/core_pattern 2>/dev/null || echo core)
        # The kernel writes the core into the program's cwd only when
        # core_pattern is a plain file name; a pipe (systemd-coredump,
        # apport) or a path elsewhere is not ours to dig through, so gdb
        # takes the core instead.
        if [[ ${BENCH_CORE_METHOD:-} != gcore && $pattern != \|* && $pattern != */* ]] &&
            (ulimit -c unlimited) 2>/dev/null; then
            # Not exec'd: this subshell waits for the program, so bash's
            # "Aborted (core dumped)" notice goes to its stderr (/dev/null).
            (
                ulimit -c unlimited
                cd "$run"
                "${s_run[@]}" >"$run/truth.txt" 2>"$run/err.txt" || exit $?
            ) 2>/dev/null && die "$s_desc did not abort"
            shopt -s nullglob
            cores=("$run"/core*)
            shopt -u nullglob
            if ((${#cores[@]} == 1)) && [[ -s ${cores[0]} ]]; then
                [[ ${cores[0]} == "$run/core" ]] || mv -f "${cores[0]}" "$run/core"
                found=kernel
            fi
        fi
        if [[ -z $found ]]; then
            rm -f "$run"/core* "$run/truth.txt"
            take_core_gcore "$run"
            found=gcore
        fi
        grep -q '^heap_bytes=' "$run/truth.txt" ||
            die "$s_desc printed no counts (see $run/truth.txt, $run/err.txt)"
        mv -f "$run/truth.txt" "$s_out/truth.txt"
        mv -f "$run/core" "$s_out/core"
    fi
    rm -rf "$run"
    t1=$(date +%s.%N)
    {
        stamp_line
        echo
        awk -v a="$t0" -v b="$t1" -v how="$found" 'BEGIN { printf "%.1f %s\n", b - a, how }'
    } >"$s_out/core.stamp"
}

core_is_current() {
    local d
    [[ -s $s_out/core && -s $s_out/truth.txt && -s $s_out/core.stamp ]] || return 1
    [[ $(sed -n 1,1p "$s_out/core.stamp") == "$(stamp_line)" ]] || return 1
    for d in "${s_deps[@]}"; do
        [[ $s_out/core -nt $d ]] || return 1
    done
}

# ---- measurements ----
# less X Y: X < Y (or Y empty).
less() { [[ -z $2 ]] || awk -v x="$1" -v y="$2" 'BEGIN { exit !(x < y) }'; }
probe_field() { sed -n "s/.*$1=\\([0-9.-]*\\).*/\\1/p" "$probe"; }

# measure OUTFILE CMD...: best wall time over $runs runs, largest memory.
# Sets m_wall m_rss m_anon m_status m_runs.  With alternate=1 each run is
# preceded by a run of cat over the core, and m_cat is cat's best in that
# series: the ratios to cat compare runs made minutes apart no more (this
# VM's speed drifts from minute to minute).  A run over $slow seconds is
# not repeated; one over $tmo is killed (status 124: timeout sends TERM to
# memprobe and the command, both in its process group).
alternate=0
measure() {
    local outfile=$1 rep w r a s
    shift
    m_wall='' m_rss=0 m_anon=0 m_status=0 m_cat='' m_runs=0
    for ((rep = 0; rep < runs; rep++)); do
        if ((alternate)); then
            "$memprobe" -o "$probe" -- cat "$core" >/dev/null 2>&1 || true
            w=$(probe_field wall_s)
            if [[ -n $w ]] && less "$w" "$m_cat"; then m_cat=$w; fi
        fi
        s=0
        rm -f "$probe"
        timeout -k 10 "$tmo" "$memprobe" -o "$probe" -- "$@" >"$outfile" 2>"$errfile" || s=$?
        m_runs=$((m_runs + 1))
        if [[ ! -s $probe ]]; then     # killed: no line from memprobe
            m_status=${s/#0/124}
            m_wall=${m_wall:-$tmo}
            break
        fi
        w=$(probe_field wall_s)
        r=$(probe_field maxrss_kib)
        a=$(probe_field rss_anon_peak_kib)
        if less "$w" "$m_wall"; then m_wall=$w; fi
        ((trace)) && printf 'bench: %s s%s: %s\n' "$w" \
            "${m_cat:+ (cat best $m_cat s)}" "$*" >&2
        ((r > m_rss)) && m_rss=$r
        ((a > m_anon)) && m_anon=$a
        ((s != 0)) && m_status=$s
        awk -v w="$w" -v t="$slow" 'BEGIN { exit !(w > t) }' && break
    done
    rm -f "$probe"
}

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
gib() { awk -v b="$1" 'BEGIN { printf "%.2f GiB", b / 1073741824 }'; }
# short N: 1234567 as 1.2M (for the table's narrow columns).
short() {
    awk -v n="$1" 'BEGIN {
        if (n == "" || n !~ /^[0-9]+$/) { printf "?"; exit }
        if (n >= 1e6) printf "%.1fM", n / 1e6
        else if (n >= 1e4) printf "%dk", n / 1e3
        else printf "%d", n
    }'
}

# row LABEL: the last measured command's row of the shape's table.
row() {
    local st=
    if ((m_status == 124 || m_status == 137)); then
        st="  TIMED OUT (over $tmo s)"
        failed=1
    elif ((m_status != 0)); then
        st="  FAILED (exit $m_status: $(head -c 200 "$errfile" | sed -n 1,1p))"
        failed=1
    fi
    local more=
    ((m_runs < runs && m_status == 0)) && more=" (1 run: over ${slow} s)"
    rows+=("$(printf '%-42s %9s %14s %17s%s%s' "$1" "$m_wall" "$(mib "$m_rss")" "$(mib "$m_anon")" "$st" "$more")")
}

# work LABEL: the --stats lines of the last measured run.  Sets w_list
# w_guessed w_summed w_failed (empty when the run printed none).
work() {
    local line dis
    line=$(grep '^heapwalk: stats: open' "$errfile" | tail -n 1 || true)
    # ("sums that disagreed: ...", or "sums that disagreed, their lists
    # walked instead: ...": the wording has changed; the list follows a colon)
    dis=$(sed -n 's/^heapwalk: stats: sums that disagreed[^:]*: //p' "$errfile" | tail -n 1)
    w_list=$(sed -n 's/.*list entries \([0-9]*\).*/\1/p' <<<"$line")
    w_guessed=$(sed -n 's/.*guessed \([0-9]*\).*/\1/p' <<<"$line")
    w_summed=$(sed -n 's/.*summed \([0-9]*\).*/\1/p' <<<"$line")
    w_failed=$(sed -n 's/.*sums failed \([0-9]*\).*/\1/p' <<<"$line")
    [[ -n $line ]] || return 0
    works+=("$(printf '%-22s  %s' "$1" "$(sed 's/^heapwalk: stats: .*MiB; //' <<<"$line")")")
    [[ -z $dis ]] || printf '%s: %s\n%s: sums that disagreed: %s\n' "$1" "$line" "$1" "$dis" >>"$s_out/stats.txt"
    # The list of sums that disagreed can name every bin of every arena:
    # its start here, the whole of it in stats.txt beside the core.
    # The commands of one core mostly name the same sums: said once.
    if [[ -n $dis && $dis == "$last_dis" ]]; then
        works+=("$(printf '%-22s  sums that disagreed: the same as above' "")")
        return 0
    fi
    last_dis=$dis
    ((${#dis} <= 400)) || dis="${dis:0:400}... (all of it: $s_out/stats.txt)"
    [[ -z $dis ]] || works+=("$(printf '%-22s  sums that disagreed: %s' "" "$dis")")
}

# ratio NAME WALL STATUS TARGET CAT: CAT is cat's best in the same
# alternated series as the command's runs.  Prints the line; sets r_x.
ratio() {
    r_x=
    if (($3 == 0)) && awk -v c="$5" 'BEGIN { exit !(c > 0) }'; then
        r_x=$(awk -v s="$2" -v c="$5" 'BEGIN { printf "%.2f", s / c }')
        awk -v n="$1" -v s="$2" -v c="$5" -v t="$4" -v r="$r_x" 'BEGIN {
            printf "%-22s  %.2fx   target <= %sx   %-7s (%.3f s / cat %.3f s, alternated)\n", n "/cat time ratio", r, t, (r <= t ? "MET" : "NOT MET"), s, c
        }'
        r_x+=x
    else
        r_x=n/a
        printf '%-22s  n/a (failed, or cat took no time)\n' "$1/cat time ratio"
    fi
}

stats=()
hw_help=$("$hw" --help 2>&1 || true)
# --stats: each command's own account of its work; an older heapwalk
# (for a before/after comparison) may have none.
if [[ $hw_help == *--stats* ]]; then stats=(--stats); fi
failed=0
table=()

# bench_shape NAME: make or reuse the core, measure, check, report.
bench_shape() {
    local shape=$1 core_note gen_s gen_how
    shape_setup "$shape"
    echo "== $shape: $s_desc"
    if [[ -n $s_skip ]]; then
        echo "skipped: $s_skip"
        echo
        table+=("$(printf '%-10s %s' "$shape" "skipped: $s_skip")")
        return 0
    fi
    mkdir -p "$s_out"
    if core_is_current; then
        core_note=reused
    else
        make_core
        core_note="made now"
    fi
    core=$s_out/core
    local info=$s_out/truth.txt
    probe=$s_out/probe.txt errfile=$s_out/probe.err
    read -r gen_s gen_how < <(sed -n 2,2p "$s_out/core.stamp")
    field() { sed -n "s/^$1=//p" "$info" | sed -n 1,1p; }
    local core_bytes heap_bytes is_detail=0
    core_bytes=$(stat -c %s "$core")
    heap_bytes=$(field heap_bytes)
    [[ " $detail " == *" $shape "* ]] && is_detail=1

    rows=() works=() last_dis=
    rm -f "$s_out/stats.txt"
    cat "$core" >/dev/null   # warm the page cache
    local load cpu_before cpu_after
    load=$(cut -d' ' -f1-3 /proc/loadavg)

    # The struct layouts heapwalk reads from libc's debug file are kept
    # between runs (~/.cache/heapwalk, here a directory of the shape's
    # own): a user's second run on the same libc reads no DWARF.  The
    # runs below are such runs (the cache made by a first one, not
    # timed); the first run's cost is the "--no-cache" row.
    export HEAPWALK_CACHE_DIR=$s_out/cache
    rm -rf "$HEAPWALK_CACHE_DIR"
    timeout "$tmo" "$hw" "$core" summary >/dev/null 2>&1 || true

    measure /dev/null cat "$core"
    local cat_wall=$m_wall
    rows+=("$(printf '%-42s %9s %14s %17s' "cat core > /dev/null" "$m_wall" "$(mib "$m_rss")" "$(mib "$m_anon")")")
    local touch_wall=
    if ((is_detail)); then
        measure /dev/null "$tools/pagetouch" -t 2 "$core"
        touch_wall=$m_wall
        row "mmap core, read a byte per page (2 threads)"
    fi
    cpu_before=$("$tools/cpuprobe" 2>&1 || true)

    alternate=1
    measure "$s_out/summary.txt" "$hw" "${stats[@]}" "$core" summary
    local sum_wall=$m_wall sum_cat=$m_cat sum_status=$m_status
    row "heapwalk core summary"
    work summary
    alternate=0
    if ((is_detail)) && [[ $hw_help == *--no-cache* ]]; then
        measure /dev/null "$hw" "${stats[@]}" --no-cache "$core" summary
        row "heapwalk --no-cache core summary"
        work "summary --no-cache"
    fi

    alternate=1
    measure /dev/null "$hw" "${stats[@]}" --json "$core" chunks
    alternate=0
    local chunks_wall=$m_wall chunks_cat=$m_cat chunks_status=$m_status
    row "heapwalk --json core chunks > /dev/null"
    work "chunks --json"
    local p_list=$w_list p_guessed=$w_guessed p_summed=$w_summed p_failed=$w_failed

    # An address in the middle of the heap, for the one-chunk commands:
    # the middle one of the program's sample of live blocks.
    local mid nsamp
    nsamp=$(grep -c '^sample ' "$info" || true)
    mid=$(grep '^sample ' "$info" | sed -n "$((nsamp / 2 + 1))p" | sed -n 's/^sample addr=\(0x[0-9a-f]*\).*/\1/p')
    if ((is_detail)) && [[ -n $mid ]]; then
        measure /dev/null "$hw" "$core" chunk "$mid"
        row "heapwalk core chunk ADDR"
        # Both read only the heap around the address (alloc.h's
        # chunks_around), as chunk ADDR does.
        measure /dev/null "$hw" "$core" view "$mid" 8
        row "heapwalk core view ADDR"
        measure /dev/null "$hw" "$core" chunks --around "$mid" 5
        row "heapwalk core chunks --around"
    fi
    if ((is_detail)); then
        measure /dev/null "$hw" "$core" bins
        row "heapwalk core bins"
    fi
    alternate=1
    measure "$s_out/leaks.txt" "$hw" "${stats[@]}" "$core" leaks
    alternate=0
    local leaks_wall=$m_wall leaks_cat=$m_cat leaks_status=$m_status leaks_anon=$m_anon
    row "heapwalk core leaks"
    work leaks
    cpu_after=$("$tools/cpuprobe" 2>&1 || true)
    if ((is_detail)); then
        measure /dev/null "$hw" "$core" maps
        row "heapwalk core maps"
        if [[ -n $mid ]]; then
            # Both run the leaks scan first, then one more pass (refs:
            # every block; why: a breadth-first search until it meets
            # the block).
            measure /dev/null "$hw" "$core" refs "$mid"
            row "heapwalk core refs ADDR"
            measure /dev/null "$hw" "$core" why "$mid"
            row "heapwalk core why ADDR"
        fi
    fi

    # ---- the shape's report ----
    printf '%-22s %s (%d bytes; %s on disk)\n' "core" "$(gib "$core_bytes")" "$core_bytes" \
        "$(gib $(($(stat -c %b "$core") * $(stat -c %B "$core"))))"
    printf '%-22s %s s (%s, %s)\n' "core generation" "$gen_s" "$gen_how" "$core_note"
    printf '%-22s %s (%s bytes, %s)\n' "heap size" "$(gib "$heap_bytes")" "$heap_bytes" "$(field heap_how)"
    [[ -z $(field allocs) ]] ||
        printf '%-22s %s (%s live, %s freed)\n' "blocks allocated" "$(field allocs)" "$(field live)" "$(field freed)"
    [[ -z $(field records) ]] ||
        printf '%-22s %s records kept, %s dropped\n' "python" "$(field records)" "$(field dropped)"
    [[ -z $(field keys) ]] || printf '%-22s %s keys\n' "redis" "$(field keys)"
    printf '%-22s %s (load average before the shape: %s)\n' "heapwalk" "$hw" "$load"
    echo
    printf '%-42s %9s %14s %17s\n' "command" "wall(s)" "peak RSS(MiB)" "peak anon(MiB)"
    printf '%s\n' "${rows[@]}"
    echo
    local x_sum x_chunks x_leaks
    ratio summary "$sum_wall" "$sum_status" 1.3 "$sum_cat"
    x_sum=$r_x
    ratio "chunks --json" "$chunks_wall" "$chunks_status" 3 "$chunks_cat"
    x_chunks=$r_x
    ratio leaks "$leaks_wall" "$leaks_status" 4 "$leaks_cat"
    x_leaks=$r_x
    # What the machine gave (scripts/bench/cpuprobe.c): a ratio measured
    # while cpus is near 1 is a two-thread walk on one CPU.
    printf '%-22s  before: %s\n%-22s  after:  %s\n' "CPU (cpuprobe)" "$cpu_before" "" "$cpu_after"
    # The targets are against cat; a mapped core's page faults are a floor
    # of their own (pagetouch.c says why), shown for judging the ratios.
    [[ -z $touch_wall ]] || awk -v p="$touch_wall" -v c="$cat_wall" -v s="$sum_wall" -v l="$leaks_wall" 'BEGIN {
        if (c > 0 && p > 0)
            printf "%-22s  %.2fx cat; summary %.2fx it, leaks %.2fx it\n", "page-fault floor", p / c, s / p, l / p
    }'
    ((${#works[@]} == 0)) || printf '%s\n' "${works[@]}"
    local goal_mib anon_mib
    goal_mib=$(awk -v h="$heap_bytes" 'BEGIN { printf "%.0f", 64 + 0.02 * h / 1048576 }')
    anon_mib=$(awk -v a="$leaks_anon" 'BEGIN { printf "%.0f", a / 1024 }')
    if ((leaks_status == 0)); then
        awk -v a="$leaks_anon" -v h="$heap_bytes" 'BEGIN {
            t = 64 * 1024 + 0.02 * h / 1024
            printf "%-22s  %.1f MiB   target <= %.1f MiB   %s\n", "leaks anon memory", a / 1024, t / 1024, (a <= t ? "MET" : "NOT MET")
        }'
    else
        printf '%-22s  n/a (leaks failed)\n' "leaks anon memory"
        anon_mib=-
    fi

    # ---- heapwalk against the program's truth ----
    local verdict=ok
    local lost lost_i lost_p libleak=
    lost=$(sed -n 's/^definitely lost: *\([0-9]*\).*/\1/p' "$s_out/leaks.txt")
    lost_i=$(sed -n 's/^indirectly lost: *\([0-9]*\).*/\1/p' "$s_out/leaks.txt")
    lost_p=$(sed -n 's/^possibly lost: *\([0-9]*\).*/\1/p' "$s_out/leaks.txt")
    # gperftools loses one 8-byte MallocExtension of its own (its module
    # initializer's default instance, replaced by tcmalloc's): not bigheap's.
    # (Its loss record: "1 of 1", bytes, blocks, size, kind, ... type.)
    if [[ $shape == tcmalloc && $lost == 1 ]] &&
        grep -qE '^ +1 of 1 +8 +1 +8 +definite .* MallocExtension$' "$s_out/leaks.txt"; then
        lost=0 libleak=" (and gperftools' own lost MallocExtension)"
    fi
    if ((leaks_status != 0)); then
        echo "leaks vs program       n/a (leaks failed)"
        verdict=FAILED
    elif [[ $(field leaks_truth) == unknown ]]; then
        echo "leaks                  ${lost:-?} definitely, ${lost_i:-?} indirectly, ${lost_p:-?} possibly lost (the program's truth says nothing of leaks)"
    elif [[ $lost == 0 && $lost_i == 0 ]]; then
        echo "leaks vs program       none lost (the program keeps every block; ${lost_p:-?} possibly lost)$libleak"
    else
        echo "leaks vs program       WRONG: ${lost:-?} definite, ${lost_i:-?} indirect; the program keeps every block"
        verdict=WRONG
    fi

    # heapwalk's mallinfo must equal the program's own mallinfo2().
    local json mi_line mi_json kv k v got used_n free_n nchunks=
    local -a mismatch=()
    mi_line=$(sed -n 's/^mallinfo //p' "$info")
    if json=$(timeout "$tmo" "$hw" --json "$core" summary 2>/dev/null); then
        used_n=$(grep -o '"used":{"count":[0-9]*' <<<"$json" | sed -n 1,1p | grep -o '[0-9]*$' || true)
        free_n=$(grep -o '"free":{"count":[0-9]*' <<<"$json" | sed -n 1,1p | grep -o '[0-9]*$' || true)
        if [[ -n $used_n && -n $free_n ]]; then
            nchunks=$((used_n + free_n))
            printf 'heapwalk chunks walked  %d (%d used, %d free)\n' "$nchunks" "$used_n" "$free_n"
        fi
        if [[ -n $mi_line && $json == *'"mallinfo"'* ]]; then
            mi_json=$(grep -o '"mallinfo":{[^}]*}' <<<"$json" || true)
            for kv in $mi_line; do
                k=${kv%%=*} v=${kv#*=}
                got=$(grep -o "\"$k\":[0-9]*" <<<"$mi_json" | sed -n 1,1p | cut -d: -f2 || true)
                [[ $got == "$v" ]] || mismatch+=("$k: program $v, heapwalk ${got:-missing}")
            done
            if ((${#mismatch[@]} == 0)); then
                echo "mallinfo vs program     equal"
            else
                printf 'mallinfo vs program     DIFFERENT: %s\n' "$(printf '%s; ' "${mismatch[@]}")"
                verdict=WRONG
            fi
        fi
        # jemalloc's own count of the bytes allocated (redis): beside
        # heapwalk's bytes in use, for information (jemalloc counts the
        # regions its thread caches hold as allocated; heapwalk as free).
        if [[ -n $(field allocated) ]]; then
            local used_b
            used_b=$(grep -o '"used":{"count":[0-9]*,"bytes":[0-9]*' <<<"$json" | sed -n 1,1p | grep -o '[0-9]*$' || true)
            printf 'allocated vs program   program %s, heapwalk in use %s (%s)\n' "$(field allocated)" "${used_b:-?}" "$(field allocated_how)"
        fi
    else
        echo "summary --json         FAILED"
        verdict=FAILED
    fi

    # The program's sample of live blocks: each is a block in use of its
    # malloc_usable_size in `chunks --json`.
    if ((nsamp > 0 && chunks_status != 0)); then
        echo "blocks vs program      n/a (chunks --json failed)"
        verdict=FAILED
    elif ((nsamp > 0)); then
        local bad=() a u r
        sed -n 's/^sample addr=\(0x[0-9a-f]*\) .*/"addr":"\1"/p' "$info" >"$s_out/sample.pat"
        timeout "$tmo" "$hw" --json "$core" chunks 2>/dev/null |
            grep -F -f "$s_out/sample.pat" >"$s_out/sample.rows" || true
        while read -r _ a u; do
            a=${a#addr=} u=${u#usable=}
            r=$(grep -F "\"addr\":\"$a\"" "$s_out/sample.rows" || true)
            [[ $r == *'"state":"used"'* && $r == *"\"size\":$u,"* ]] ||
                bad+=("$a ($u bytes): ${r:-not listed}")
        done < <(grep '^sample ' "$info")
        if ((${#bad[@]} == 0)); then
            echo "blocks vs program      $nsamp sampled: each in use, of its malloc_usable_size"
        else
            printf 'blocks vs program      WRONG: %d of %d: %s\n' "${#bad[@]}" "$nsamp" "$(printf '%s; ' "${bad[@]:0:5}")"
            verdict=WRONG
        fi
        rm -f "$s_out/sample.pat" "$s_out/sample.rows"
    fi
    [[ $verdict == ok ]] || failed=1
    rm -f "$errfile"
    echo

    # The table's row.  proof: chunks --json's free-list entries guessed /
    # proven by sums / sums that failed, and entries followed.
    local proof
    if [[ -n $p_list ]]; then
        proof="$(short "$p_guessed")/$(short "$p_summed")/$(short "$p_failed") L$(short "$p_list")"
        ((p_failed > 0)) && proof+=" FELL BACK"
    else
        proof="(no --stats)"
    fi
    table+=("$(printf '%-10s %8s %7s %6s %8s %8s %8s %12s  %-7s %s' "$shape" \
        "$(awk -v b="$core_bytes" 'BEGIN { printf "%.2fG", b / 1073741824 }')" \
        "$(short "$nchunks")" "$cat_wall" "$x_sum" "$x_chunks" "$x_leaks" \
        "$anon_mib ($goal_mib)" "$verdict" "$proof")")
}

echo "heapwalk bench: $hw, shapes: ${shapes[*]}"
echo "CPU at the start: $("$tools/cpuprobe" 2>&1 || true)"
echo
for shape in "${shapes[@]}"; do
    bench_shape "$shape"
done

echo "== all shapes: $hw"
echo "(x: best of $runs against cat's best in the same alternated series; targets summary 1.3x, chunks --json 3x, leaks 4x;"
echo " anon: leaks' peak RssAnon in MiB, (goal) 64 MiB + 2% of the heap; truth: heapwalk against the program's own record;"
echo " proof: chunks --json's fastbin entries guessed / list entries proven by sums / sums failed, L: list entries followed)"
printf '%-10s %8s %7s %6s %8s %8s %8s %12s  %-7s %s\n' shape core chunks "cat s" summary "chunks" leaks "anon (goal)" truth proof
printf '%s\n' "${table[@]}"
echo
echo "The cores are kept in $build/bench and $build/bench-* for the next run; 'make clean-bench' removes them."
exit "$failed"
