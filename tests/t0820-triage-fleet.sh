#!/bin/bash
# triage over a small fleet made from the corpus, each record held to
# what the programs recorded, never to heapwalk's own earlier output:
#  - the fleet: x86_64 cores of ptmalloc (glibc 2.36 and 2.31), jemalloc,
#    tcmalloc, musl's mallocng (gcore) and mimalloc (a committed 3.4.3
#    core, xz), a static musl program that never mallocs (no allocator:
#    a record with its death and why), aarch64 ones of ptmalloc (qemu-user, and the committed
#    kernel core), jemalloc, tcmalloc, mallocng (static ngtruth1) and
#    mimalloc (3.6.0, mitruth1) under qemu-user (each aarch64 set read
#    with its sysroot or program, as a device fleet's cores are); a
#    member this machine cannot make is left out and said; two cores of one process
#    stored as systemd-coredump stores them (core.COMM.UID.BOOTID.PID.USEC,
#    one zstd), a core cut in half, one cut before its notes, a text file;
#  - one record per input, in the inputs' order, every one valid against
#    doc/triage.schema.json (python3-jsonschema), error records for the
#    two inputs no core can be read from and exit status 3;
#  - signatures: doublefree1's bug built three ways (glibc 2.36 x86_64,
#    glibc 2.31 x86_64, glibc 2.36 aarch64) has one signature; overflow1,
#    segv1 and leaks1 one each, all different; segv2 (segv1 whose crash
#    reporter raised the signal again from its handler) segv1's; leaks1
#    on every allocator and machine one (the same program);
#  - identity: the pid, command line and build-id of the program, what
#    systemd-coredump's name says (uid, boot id, pid, time, zstd) and
#    its user.coredump.* attributes (host, time, exe);
#  - scripts/triage-sql.sh's answers equal the truth: `leakers` the lost
#    blocks each leaks1 build recorded, `growth` between the two stored
#    cores grow1's recorded growth per size class, `errors` the bad
#    inputs, `signatures` the doublefree group of three builds;
#  - the same records from GNU parallel (one heapwalk per core), from
#    -j 1 and -j 3, from paths on standard input; the text form one line
#    per input; in gdb, `heap --json triage` on a core gives the tool's
#    signature and figures (when gdb and the plugin are here).
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
# shellcheck source=tests/gdb-lib.sh
. "$(dirname "$0")/gdb-lib.sh"
# shellcheck source=tests/musl-lib.sh
. "$(dirname "$0")/musl-lib.sh"
# shellcheck source=tests/mimalloc-lib.sh
. "$(dirname "$0")/mimalloc-lib.sh"
need_heapwalk
need_cmd sqlite3 parallel python3 zstd xz
python3 -c 'import jsonschema' 2>/dev/null ||
	skip "python3-jsonschema is not installed (make deps)"
schema=$TOP/doc/triage.schema.json
sql=$TOP/scripts/triage-sql.sh
F=$T/fleet
mkdir -p "$F"

# optional_core VARIANT CASE: the variant's core directory in VARIANT_DIR,
# or "" when this machine cannot make it (that member is left out, said).
optional_core() {
	variant_core_or_none "$1" "$2"
	[ -n "$VARIANT_DIR" ] || say "no $1 core of $2 here: left out of the fleet"
}

# ---- the fleet -----------------------------------------------------------
# Run A: this machine's programs (and glibc 2.31's, its debug files
# beside them), as one `heapwalk triage` reads a server's cores.
hostA=()
for c in doublefree1 overflow1 segv1 segv2 leaks1; do
	d=$(corpus_core "$c")
	mkdir -p "$F/$c"
	corpus_copy "$d" "$F/$c"
	cp "$d/prog" "$F/$c/prog"    # (the same build-id; the core names $d/prog)
	hostA+=("$F/$c/core")
done
# grow1's two cores of one process, stored as systemd-coredump names them:
# the base a month before the grown one, which is compressed.
gr=$(corpus_core grow1)
[ -f "$gr/base/core" ] || skip "grow1 made no base core here"
boot=0123456789abcdef0123456789abcdef
early=1764547200000000 late=1767225600000000   # 2025-12-01, 2026-01-01
mkdir -p "$F/coredump"
cp "$gr/base/core" "$F/coredump/core.prog.1000.$boot.4242.$early"
zstd -q -c "$gr/core" >"$F/coredump/core.prog.1000.$boot.4343.$late.zst"
hostA+=("$F/coredump/core.prog.1000.$boot.4242.$early"
	"$F/coredump/core.prog.1000.$boot.4343.$late.zst")
debug=()
optional_core glibc-2.31-amd64 doublefree1
d31=$VARIANT_DIR
if [ -n "$d31" ]; then
	hostA+=("$d31/core")
	debug=(--debug-dir "$(readlink -f "$d31/sysroot")/usr/lib/debug")
fi
optional_core jemalloc-5.3.0-amd64 leaks1
jeA=$VARIANT_DIR
optional_core tcmalloc-2.16-amd64 leaks1
tcA=$VARIANT_DIR
for d in "$jeA" "$tcA"; do
	[ -z "$d" ] || hostA+=("$d/core")
done
# musl: a gcore of ngtruth1 (static) at its abort.
if command -v musl-gcc >/dev/null 2>&1 && command -v gdb >/dev/null 2>&1; then
	musl-gcc -std=c11 -O1 -g -static -DNG_STATIC -o "$T/ngs" \
		"$TOP/corpora/musl/ngtruth1.c" || fail "musl-gcc -static failed"
	mkdir -p "$F/musl"
	(cd "$F/musl" && gdb -batch -nx -ex run -ex "gcore $F/musl/core" \
		--args "$T/ngs" 2 abort) >"$T/musl-gdb.out" 2>&1 || true
	[ -s "$F/musl/core" ] && grep -q '^end$' "$F/musl/truth.txt" ||
		fail "musl: no core or no truth (see $T/musl-gdb.out)"
	hostA+=("$F/musl/core")
	# A program with no allocator heapwalk walks (static musl, no
	# malloc): a record still, its death and no allocator, and why.
	printf '#include <stdlib.h>\nint main(void) { abort(); }\n' >"$T/nomalloc.c"
	musl-gcc -static -o "$T/nomalloc" "$T/nomalloc.c" || fail "musl-gcc nomalloc failed"
	mkdir -p "$F/nomalloc"
	(cd "$F/nomalloc" && gdb -batch -nx -ex run -ex "gcore $F/nomalloc/core" \
		--args "$T/nomalloc") >"$T/nomalloc-gdb.out" 2>&1 || true
	[ -s "$F/nomalloc/core" ] || fail "nomalloc: no core (see $T/nomalloc-gdb.out)"
	hostA+=("$F/nomalloc/core")
else
	say "no musl-gcc or gdb: musl left out of the fleet"
fi
# The bad inputs: a core cut in half (still a core: its record says
# truncated), one cut before its notes, a text file.
head -c "$(($(stat -c %s "$F/leaks1/core") / 2))" "$F/leaks1/core" >"$F/half.core"
head -c 200 "$F/leaks1/core" >"$F/stub.core"
echo "not a core" >"$F/notes.txt"
hostA+=("$F/half.core" "$F/stub.core" "$F/notes.txt")

hw "$T/a.jsonl" "$T/a.err" --json "${debug[@]}" triage -j 2 --top 1000 "${hostA[@]}"
expect_rc 3
[ ! -s "$T/a.err" ] || fail "triage wrote to stderr: $(head -c 400 "$T/a.err")"

# Run M: mimalloc 3.4.3, committed (its program given with --exe).
mdir=$TOP/corpora/mimalloc/cores-v3/v3.4.3-release
xz -dc "$mdir/mitruth1.xz" >"$T/mitruth1"
chmod +x "$T/mitruth1"
hw "$T/m.jsonl" "$T/m.err" --json --exe "$T/mitruth1" triage "$mdir/core.xz"
expect_rc 0

# Runs B: aarch64 cores, each set with its sysroot (a board's).
: >"$T/b.jsonl"
arm=()
for v in glibc-2.36-arm64:doublefree1 glibc-2.36-arm64:leaks1 \
	jemalloc-5.3.0-arm64:leaks1 tcmalloc-2.10-arm64:leaks1; do
	optional_core "${v%%:*}" "${v#*:}"
	d=$VARIANT_DIR
	[ -n "$d" ] || continue
	s=$(readlink -f "$d/sysroot")
	hw "$T/b1.jsonl" "$T/b1.err" --json --sysroot "$s" \
		--debug-dir "$s/usr/lib/debug" triage "$d/core"
	expect_rc 0 1
	cat "$T/b1.jsonl" >>"$T/b.jsonl"
	arm+=("$d")
done
# mallocng and mimalloc on aarch64: their programs run under qemu-aarch64
# (qemu's cores name no files: each is read with its program, --exe).
marm=
if musl_arm64_setup; then
	"${MUSL_ARM64_CC[@]}" -static -DNG_STATIC -o "$T/nga" \
		"$TOP/corpora/musl/ngtruth1.c" || fail "aarch64 musl build failed"
	qemu_guest_core "$F/musl-arm64" "$T/nga" 2 abort
	hw "$T/b1.jsonl" "$T/b1.err" --json --exe "$T/nga" triage "$F/musl-arm64/core"
	expect_rc 0
	cat "$T/b1.jsonl" >>"$T/b.jsonl"
	marm=$F/musl-arm64
fi
miarm=
s36=$CORPUS/glibc-2.36-arm64/doublefree1/sysroot
rc=0
if [ -e "$s36" ]; then
	s36=$(readlink -f "$s36")
	"$TOP/scripts/corpus/mimalloc-libs.sh" mimalloc-3.6.0-arm64 \
		"$MI_CACHE/mimalloc-3.6.0-arm64" >&2 || rc=$?
	[ $rc = 0 ] || [ $rc = 77 ] || fail "mimalloc-libs.sh mimalloc-3.6.0-arm64 failed"
else
	rc=77
fi
if [ $rc = 0 ]; then
	mi_cross_build "$T/mia" "$MI_CACHE/mimalloc-3.6.0-arm64" "$s36"
	qemu_guest_core "$F/mimalloc-arm64" -L "$s36" "$T/mia" 2 visit
	hw "$T/b1.jsonl" "$T/b1.err" --json --exe "$T/mia" --sysroot "$s36" \
		triage "$F/mimalloc-arm64/core"
	expect_rc 0
	cat "$T/b1.jsonl" >>"$T/b.jsonl"
	miarm=$F/mimalloc-arm64
else
	say "no arm64 mimalloc 3.6.0 here: left out of the fleet"
fi
kd=$TOP/corpora/aarch64-kernel/bins1
xz -dc "$kd/core.xz" >"$F/kernel-arm64.core"
hw "$T/k.jsonl" "$T/k.err" --json --sysroot "$kd/sysroot" --exe "$kd/prog" \
	triage "$F/kernel-arm64.core"
expect_rc 0
cat "$T/a.jsonl" "$T/m.jsonl" "$T/b.jsonl" "$T/k.jsonl" >"$T/fleet.jsonl"

# ---- the records ---------------------------------------------------------
printf '%s\n' "${hostA[@]}" >"$T/a.inputs"
{
	echo "doublefree1=$F/doublefree1"
	echo "overflow1=$F/overflow1"
	echo "segv1=$F/segv1"
	echo "segv2=$F/segv2"
	echo "leaks1=$F/leaks1"
	echo "grow1=$gr"
	echo "d31=$d31"
	echo "jeA=$jeA"
	echo "tcA=$tcA"
	echo "boot=$boot"
	echo "early=$early"
	echo "late=$late"
	echo "coredump=$F/coredump"
	echo "mimalloc=$mdir"
	echo "F=$F"
	echo "marm=$marm"
	echo "miarm=$miarm"
	for d in "${arm[@]}"; do echo "arm=$d"; done
} >"$T/facts"
python3 - "$schema" "$T/a.jsonl" "$T/a.inputs" "$T/fleet.jsonl" "$T/facts" <<'EOF' || fail "the records are not what the programs recorded (above)"
import json, subprocess, sys
from datetime import datetime, timezone
import jsonschema

schema_path, a_path, inputs_path, fleet_path, facts_path = sys.argv[1:]
v = jsonschema.Draft202012Validator(json.load(open(schema_path)))
facts = {}
arm = []
for line in open(facts_path):
    k, _, val = line.rstrip("\n").partition("=")
    if k == "arm":
        arm.append(val)
    else:
        facts[k] = val
bad = []
def want(cond, what):
    if not cond:
        bad.append(what)

fleet = [json.loads(l) for l in open(fleet_path)]
for r in fleet:
    for e in v.iter_errors(r):
        bad.append("%s: not valid against the schema: %s" % (r.get("core"), e.message[:300]))
    want(r["schema"] == 1, "%s: schema %r" % (r.get("core"), r.get("schema")))

# One record per input, in the inputs' order.
inputs = [l.rstrip("\n") for l in open(inputs_path)]
a = [json.loads(l) for l in open(a_path)]
want([r["core"] for r in a] == inputs, "run A: records %r for inputs %r" % ([r["core"] for r in a], inputs))
by = {r["core"]: r for r in fleet}
F = facts["F"]
errors = [r["core"] for r in a if "error" in r]
want(errors == [F + "/stub.core", F + "/notes.txt"], "error records for %r" % errors)
half = by.get(F + "/half.core")
want(half is not None and "error" not in half and half["truncated"] is True,
     "the core cut in half: %r" % (half and {k: half.get(k) for k in ("error", "truncated", "partial")}))

def rec(path):
    r = by.get(path)
    want(r is not None and "error" not in r, "%s: no record (%s)" % (path, r and r.get("error")))
    return r or {}

def truth(d):
    return [l.split() for l in open(d + "/truth.txt")]

# Signatures: one bug, three builds; other bugs apart.
sig = lambda d: rec(d + "/core").get("signature")
df = [facts["doublefree1"]] + [d for d in (facts["d31"],) if d] + [d for d in arm if d.endswith("glibc-2.36-arm64/doublefree1")]
df_sigs = {sig(d) for d in df}
want(len(df_sigs) == 1, "doublefree1's builds have signatures %r" % df_sigs)
dtext = rec(facts["doublefree1"] + "/core").get("signature_text", "")
want(dtext.startswith("SIGABRT; free(): double free detected in tcache") and "double_free < main" in dtext,
     "doublefree1's signature text: %r" % dtext)
others = [sig(facts[k]) for k in ("overflow1", "segv1", "leaks1")]
want(len(set(others + [df_sigs.pop() if df_sigs else None])) == 4,
     "overflow1, segv1, leaks1 and doublefree1 share signatures: %r" % others)
want(sig(facts["segv2"]) == sig(facts["segv1"]),
     "segv2 (a reporter raised the signal again) is not segv1's signature: %r" % rec(facts["segv2"] + "/core").get("signature_text"))
seg = rec(facts["segv1"] + "/core")
want(seg.get("death", {}).get("signal_name") == "SIGSEGV" and seg.get("signature_frames", [None])[0] == "sum_list",
     "segv1: %r %r" % (seg.get("death", {}).get("signal_name"), seg.get("signature_frames")))
ov = rec(facts["overflow1"] + "/core")
want(any(k["kind"].startswith("invalid chunk size") for k in ov.get("findings", {}).get("kinds", [])),
     "overflow1: no 'invalid chunk size' kind: %r" % ov.get("findings"))
want("heap: invalid chunk size" in ov.get("signature_text", ""), "overflow1's signature names no damage: %r" % ov.get("signature_text"))
leak_dirs = [facts["leaks1"]] + [facts[k] for k in ("jeA", "tcA") if facts[k]] + [d for d in arm if d.endswith("/leaks1")]
leak_sigs = {sig(d) for d in leak_dirs}
want(len(leak_sigs) == 1, "leaks1 on each allocator and machine: signatures %r" % leak_sigs)

# Leaks: each leaks1 build's lost blocks, as the program recorded them.
for d in leak_dirs:
    t = truth(d)
    # (tcmalloc up to 2.13 loses a block of its own: "libleak".)
    lost = sum(1 for f in t if (f[0] == "block" and f[3] in ("definite", "indirect", "cycle")) or f[0] == "libleak")
    r = rec(d + "/core")
    got = r["leaks"]["definite"]["count"] + r["leaks"]["indirect"]["count"]
    want(got == lost, "%s: %d blocks lost in the record, %d in the truth" % (d, got, lost))
    # Identity: the process is the one that wrote the truth.
    main_tid = [f[2] for f in t if f[0] == "thread" and f[1] == "0"]
    if main_tid and "-arm64" not in d:
        want(str(r["process"]["pid"]) == main_tid[0], "%s: pid %r, truth's main thread %s" % (d, r["process"]["pid"], main_tid[0]))
    want(r["process"]["args"].split()[0].endswith("prog"), "%s: args %r" % (d, r["process"]["args"]))
    bid = subprocess.run(["readelf", "-n", d + "/prog"], capture_output=True, text=True).stdout
    bid = [l.split()[-1] for l in bid.splitlines() if "Build ID" in l]
    want(bid and r["process"]["build_id"] == bid[0], "%s: build_id %r, readelf says %r" % (d, r["process"]["build_id"], bid))
if facts.get("F") and (F + "/musl/core") in by:
    r = rec(F + "/musl/core")
    lost = sum(1 for f in truth(F + "/musl") if f[0] == "lost")
    got = r["leaks"]["definite"]["count"] + r["leaks"]["indirect"]["count"] + r["leaks"]["possible"]["count"]
    want(r["allocator"]["name"] == "mallocng" and got == lost, "musl: %r lost, truth %d" % (got, lost))
if (F + "/nomalloc/core") in by:
    r = rec(F + "/nomalloc/core")
    want(r.get("allocator") is None and r.get("allocator_absent") and r.get("used") is None
         and (r.get("death") or {}).get("signal_name") == "SIGABRT",
         "nomalloc: %r" % {k: r.get(k) for k in ("allocator", "allocator_absent", "used", "death")})
m = rec(facts["mimalloc"] + "/core.xz")
want(m.get("allocator", {}).get("name") == "mimalloc" and m.get("file", {}).get("packed") == "xz",
     "mimalloc: %r %r" % (m.get("allocator", {}).get("name"), m.get("file")))
if facts["marm"]:
    r = rec(facts["marm"] + "/core")
    lost = sum(1 for f in truth(facts["marm"]) if f[0] == "lost")
    got = r["leaks"]["definite"]["count"] + r["leaks"]["indirect"]["count"] + r["leaks"]["possible"]["count"]
    want(r["allocator"]["name"] == "mallocng" and r["arch"] == "aarch64" and got == lost,
         "musl on aarch64: %r %r, %r lost, truth %d" % (r["allocator"]["name"], r["arch"], got, lost))
if facts["miarm"]:
    r = rec(facts["miarm"] + "/core")
    want(r["allocator"]["name"] == "mimalloc" and r["allocator"]["version"] == "3.6.0" and r["arch"] == "aarch64",
         "mimalloc on aarch64: %r" % r["allocator"])
k = rec(F + "/kernel-arm64.core")
want(k.get("arch") == "aarch64" and k.get("allocator", {}).get("name") == "ptmalloc", "kernel core: %r" % k.get("arch"))
for d in arm:
    want(rec(d + "/core").get("arch") == "aarch64", "%s: not aarch64" % d)

# systemd-coredump's names.
cd = facts["coredump"]
for pid, usec, packed in (("4242", facts["early"], None), ("4343", facts["late"], "zstd")):
    name = "%s/core.prog.1000.%s.%s.%s%s" % (cd, facts["boot"], pid, usec, ".zst" if packed else "")
    r = rec(name)
    c = r.get("coredump") or {}
    when = datetime.fromtimestamp(int(usec) // 1000000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000000Z")
    want(c.get("comm") == "prog" and c.get("uid") == 1000 and c.get("boot_id") == facts["boot"]
         and str(c.get("pid")) == pid and c.get("time") == when, "%s: coredump %r" % (name, c))
    want(r.get("time") == when and r.get("time_from") == "systemd-coredump", "%s: time %r from %r" % (name, r.get("time"), r.get("time_from")))
    want(r.get("file", {}).get("packed") == packed, "%s: packed %r" % (name, r.get("file", {}).get("packed")))

for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
EOF

# ---- the queries ---------------------------------------------------------
"$sql" --db "$T/fleet.db" errors -- "$T/fleet.jsonl" >"$T/q.errors" ||
	fail "triage-sql.sh errors failed"
"$sql" --db "$T/fleet.db" --csv errors >"$T/q.errors.csv"
printf 'core\n%s\n%s\n' "$F/stub.core" "$F/notes.txt" >"$T/q.errors.want"
cut -d, -f1 "$T/q.errors.csv" >"$T/q.errors.got"
cmp -s "$T/q.errors.got" "$T/q.errors.want" ||
	fail "errors: $(cat "$T/q.errors.csv")"

# leakers: each leaks1 build's lost blocks (definite + indirect), and no
# program leaking that leaks nothing (doublefree1, overflow1, segv1).
"$sql" --db "$T/fleet.db" --csv leakers 100 >"$T/q.leakers"
for d in "$F/leaks1" "$jeA" "$tcA" "${arm[@]}"; do
	case $d in "" | */doublefree1) continue ;; esac
	prog=$(readlink -f "$d/prog")
	[ "$d" != "$F/leaks1" ] || prog=$(readlink -f "$CORPUS/leaks1/prog")
	want=$(awk '($1 == "block" && ($4 == "definite" || $4 == "indirect" || $4 == "cycle")) || $1 == "libleak"' "$d/truth.txt" | wc -l)
	got=$(awk -F, -v p="$prog" '$1 == p { print $4 }' "$T/q.leakers")
	[ "$got" = "$want" ] || fail "leakers: $prog lost ${got:-nothing}, its truth $want: $(cat "$T/q.leakers")"
done
for c in doublefree1 overflow1 segv1 segv2; do
	! grep -q "/$c/prog," "$T/q.leakers" || fail "leakers lists $c: $(cat "$T/q.leakers")"
done

# growth between the two stored cores of grow1 (2025-12-01 and
# 2026-01-01): per size class, the bytes in use grown, as the program
# recorded its blocks (grow USABLE ARENA COUNT); the classes it shrank
# (COUNT < 0) are not listed.
"$sql" --db "$T/fleet.db" --csv growth 2025-12-15 2025-12-15 >"$T/q.growth"
gprog=$(readlink -f "$gr/prog")
awk -F, -v p="$gprog" 'NR > 1 && $1 == p { print $2, $3, $6 }' "$T/q.growth" >"$T/growth.got"
[ -s "$T/growth.got" ] || fail "growth lists nothing for $gprog: $(cat "$T/q.growth")"
awk '
	NR == FNR { if ($1 == "grow") { size[++n] = $2; count[n] = $4 }; next }
	{
		want = 0
		for (i = 1; i <= n; i++)
			if (size[i] >= $1 && size[i] <= $2)
				want += size[i] * count[i]
		if (want != $3) {
			printf "class %s-%s grew %s bytes, the truth says %s\n", $1, $2, $3, want
			bad = 1
		}
		listed[$1 " " $2] = 1
	}
	END { exit bad }
' "$gr/truth.txt" "$T/growth.got" || fail "growth is not grow1's: $(cat "$T/q.growth")"
# Every class the truth grew is listed.
while read -r kw size arena count; do
	[ "$kw" = grow ] && [ "$count" -gt 0 ] || continue
	awk -v s="$size" '$1 <= s && s <= $2 { f = 1 } END { exit !f }' "$T/growth.got" ||
		fail "growth misses the class of $size bytes (+$count): $(cat "$T/q.growth")"
done <"$gr/truth.txt"

# signatures: the doublefree group holds each build that crashed of it.
"$sql" --db "$T/fleet.db" --csv signatures 50 >"$T/q.sigs"
ndf=1
[ -z "$d31" ] || ndf=$((ndf + 1))
for d in "${arm[@]}"; do case $d in */doublefree1) ndf=$((ndf + 1)) ;; esac; done
awk -F, -v n="$ndf" '$7 ~ /double free detected in tcache/ && $2 == n && $3 == n && $4 == n { f = 1 } END { exit !f }' "$T/q.sigs" ||
	fail "signatures: no doublefree group of $ndf cores, programs and builds: $(cat "$T/q.sigs")"
"$sql" --db "$T/fleet.db" damage >"$T/q.damage" || fail "triage-sql.sh damage failed"
"$sql" --db "$T/fleet.db" programs >"$T/q.programs" || fail "triage-sql.sh programs failed"
has "invalid chunk size" <"$T/q.damage" || fail "damage: $(cat "$T/q.damage")"

# ---- the same records, however they are run -----------------------------
# (Only when the record was made differs.)
strip_times() {
	python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    r.pop("analysed_at", None); r.pop("seconds", None)
    print(json.dumps(r, sort_keys=True))'
}
strip_times <"$T/a.jsonl" >"$T/a.norm"
hw "$T/j1.jsonl" "$T/j1.err" --json "${debug[@]}" triage -j 1 --top 1000 "${hostA[@]}"
expect_rc 3
strip_times <"$T/j1.jsonl" >"$T/j1.norm"
cmp -s "$T/a.norm" "$T/j1.norm" || fail "-j 1 and -j 2 differ: $(diff "$T/a.norm" "$T/j1.norm" | head -c 600)"
printf '%s\n' "${hostA[@]}" >"$T/paths"
hw "$T/in.jsonl" "$T/in.err" --json "${debug[@]}" triage -j 3 --top 1000 - <"$T/paths"
expect_rc 3
strip_times <"$T/in.jsonl" >"$T/in.norm"
cmp -s "$T/a.norm" "$T/in.norm" || fail "paths on stdin give other records: $(diff "$T/a.norm" "$T/in.norm" | head -c 600)"
# GNU parallel, one heapwalk per core (doc/triage.md's recipe, on this
# machine: --sshlogin : is this one).
parallel --will-cite --keep-order -j 2 --sshlogin : \
	"$HEAPWALK" --json "${debug[@]}" triage -j 1 --top 1000 {} \
	<"$T/paths" >"$T/par.jsonl" 2>"$T/par.err" || :
! grep -qE 'AddressSanitizer|runtime error:' "$T/par.err" ||
	fail "heapwalk under parallel tripped a sanitizer: $(head -c 600 "$T/par.err")"
strip_times <"$T/par.jsonl" >"$T/par.norm"
cmp -s "$T/a.norm" "$T/par.norm" || fail "GNU parallel's records differ: $(diff "$T/a.norm" "$T/par.norm" | head -c 600)"
# Text: one line per input, naming it.
hw "$T/text" "$T/text.err" "${debug[@]}" triage "${hostA[@]}"
expect_rc 3
[ "$(wc -l <"$T/text")" = "${#hostA[@]}" ] || fail "text: $(wc -l <"$T/text") lines for ${#hostA[@]} inputs"
i=0
while IFS= read -r line; do
	case $line in "${hostA[i]}: "*) ;; *) fail "text line $((i + 1)) is not of ${hostA[i]}: $line" ;; esac
	i=$((i + 1))
done <"$T/text"
# systemd-coredump's extended attributes (where the file system keeps
# user.* ones): the host and time it recorded, on a core of any name.
cp "$F/segv1/core" "$F/xattr.core"
if python3 -c '
import os, sys
f = sys.argv[1]
os.setxattr(f, "user.coredump.hostname", b"board-7")
os.setxattr(f, "user.coredump.timestamp", b"1764547200123456")
os.setxattr(f, "user.coredump.exe", b"/usr/bin/segv1")' "$F/xattr.core" 2>/dev/null; then
	hw "$T/x.jsonl" "$T/x.err" --json triage "$F/xattr.core"
	expect_rc 0
	has '"coredump":{"comm":null,"uid":null,"boot_id":null,"pid":null,"time":"2025-12-01T00:00:00.123456Z","hostname":"board-7","exe":"/usr/bin/segv1"},"time":"2025-12-01T00:00:00.123456Z","time_from":"systemd-coredump"' <"$T/x.jsonl" ||
		fail "user.coredump.* attributes not in the record: $(grep -o '"coredump":[^}]*}' "$T/x.jsonl")"
else
	say "this file system keeps no user.* attributes: systemd-coredump's not tried"
fi
# In gdb: the record of what gdb debugs, its signature and figures the
# tool's (its identity is gdb's view: no core file of its own to stat).
if [ -f "$GDB_SCRIPT" ] && command -v gdb >/dev/null 2>&1; then
	gdb_heap "$T/g" gdb "$CORPUS/segv2/prog" "$F/segv2/core" -- "--json triage"
	[ "$(cat "$T/g.1.rc")" = 0 ] || fail "gdb: heap --json triage: status $(cat "$T/g.1.rc"): $(head -c 300 "$T/g.1")"
	python3 - "$T/g.1" "$T/a.jsonl" "$F/segv2/core" <<'PYEOF' || fail "gdb's triage record is not the tool's (above)"
import json, sys
g = json.loads(open(sys.argv[1]).read())
t = [json.loads(l) for l in open(sys.argv[2])]
t = [r for r in t if r["core"] == sys.argv[3]][0]
for k in ("signature", "signature_text", "used", "free", "leaks", "findings", "arch", "threads"):
    if g.get(k) != t.get(k):
        print("  %s: gdb %r, the tool %r" % (k, g.get(k), t.get(k)))
        sys.exit(1)
PYEOF
else
	say "no gdb or no plugin: heap triage not run"
fi
# A run with no bad input exits 0.
hw "$T/ok.jsonl" "$T/ok.err" --json triage --no-leaks "$F/segv1/core" "$F/leaks1/core"
expect_rc 0
grep -q '"leaks":null' "$T/ok.jsonl" || fail "--no-leaks: leaks is not null"
exit 0
