# gdb-oracle.py - check a corpus truth file against gdb's view of the core.
#
# An independent oracle for the corpus (not part of heapwalk): with glibc's
# debug info (libc6-dbg) gdb knows main_arena, mp_ and every thread's tcache,
# so this walks the heaps and free lists the way glibc 2.36 lays them out
# and checks that every recorded allocation is where truth.txt says, and
# that mallinfo2 recomputed from the core equals the recorded one.
#
#   gdb -batch -nx -ex 'python TRUTH="truth.txt"' -x gdb-oracle.py PROG CORE
#
# Prints mismatches and "oracle: N allocations, M mismatches"; also prints
# a per-list census.  Used by scripts/corpus/verify-gdb.sh.
#
# Other glibc versions and targets (scripts/corpus/verify-gdb-variant.sh):
# `python SAFE_LINKING=False` for glibc < 2.32 (default True).  When gdb
# cannot read the `tcache` TLS variable (qemu-user cores have no TLS
# register; gdb 13 cannot load a newer glibc's libthread_db), the tcaches
# are taken to be the first chunk of each arena (the corpus programs give
# every thread its own arena, and a thread's first malloc allocates its
# tcache there), confirmed by that chunk's size.
#
# With `python EMIT="DIR"` it also writes what heapwalk should print, as
# gdb sees it, to DIR/chunks.jsonl, DIR/summary.json and DIR/sizes.json
# (mmapped chunks: only those the truth file names).  That is a reference
# for comparing heapwalk's output and for testing tests/tools/truthcmp.
import gdb

inf = gdb.selected_inferior()
ulong = gdb.lookup_type("unsigned long")
HEAP_MAX = 64 << 20
SAFE = globals().get("SAFE_LINKING", True)


def reveal(pos, v):
    return (pos >> 12) ^ v if SAFE else v


def rd(addr):
    return int.from_bytes(bytes(inf.read_memory(addr, 8)), "little")


def csize(c):
    return rd(c + 8) & ~7


def addr_of(expr):
    return int(gdb.parse_and_eval("(unsigned long)&(%s)" % expr))


def val(expr):
    return int(gdb.parse_and_eval("(unsigned long)(%s)" % expr))


main_arena = addr_of("main_arena")
SZ_STATE = int(gdb.parse_and_eval("sizeof(struct malloc_state)"))
SZ_HINFO = int(gdb.parse_and_eval("sizeof(heap_info)"))
OFF_FASTBINS = addr_of("main_arena.fastbinsY") - main_arena
OFF_TOP = addr_of("main_arena.top") - main_arena
OFF_BINS = addr_of("main_arena.bins") - main_arena
OFF_NEXT = addr_of("main_arena.next") - main_arena
OFF_SYSMEM = addr_of("main_arena.system_mem") - main_arena

arenas = [main_arena]
a = rd(main_arena + OFF_NEXT)
while a != main_arena and len(arenas) < 1000:
    arenas.append(a)
    a = rd(a + OFF_NEXT)

where = {}   # user address -> (list name, arena index)
census = {}
mi = dict(arena=0, ordblks=0, smblks=0, hblks=0, hblkhd=0, usmblks=0,
          fsmblks=0, uordblks=0, fordblks=0, keepcost=0)
problems = []


def put(user, name, ai):
    if user in where:
        problems.append("0x%x in two lists: %s and %s" % (user, where[user][0], name))
    where[user] = (name, ai)
    census[name] = census.get(name, 0) + 1


for ai, ar in enumerate(arenas):
    top = rd(ar + OFF_TOP)
    avail = csize(top)
    nblocks = 1
    nfast = fastavail = 0
    for i in range(10):
        slot = ar + OFF_FASTBINS + 8 * i
        p = rd(slot)
        n = 0
        while p and n < 100000:
            put(p + 16, "fastbin", ai)
            nfast += 1
            fastavail += csize(p)
            p = reveal(p + 16, rd(p + 16))     # safe-linking reveal
            n += 1
    avail += fastavail
    for i in range(1, 128):
        b = ar + OFF_BINS + 16 * (i - 1) - 16   # bin_at(i)
        name = "unsorted" if i == 1 else ("smallbin" if i < 64 else "largebin")
        p = rd(b + 16)                           # fd
        n = 0
        while p != b and n < 100000:
            put(p + 16, name, ai)
            nblocks += 1
            avail += csize(p)
            p = rd(p + 16)
            n += 1
    sysmem = rd(ar + OFF_SYSMEM)
    mi["smblks"] += nfast
    mi["ordblks"] += nblocks
    mi["fordblks"] += avail
    mi["uordblks"] += sysmem - avail
    mi["arena"] += sysmem
    mi["fsmblks"] += fastavail
    if ar == main_arena:
        mi["hblks"] = val("mp_.n_mmaps")
        mi["hblkhd"] = val("mp_.mmapped_mem")
        mi["keepcost"] = csize(top)

def first_chunk(ar):
    if ar == main_arena:
        return val("mp_.sbrk_base")
    return ((ar + SZ_STATE + 16 + 15) & ~15) - 16


# Per-thread tcache.
tids = {}
tcaches = []   # (whose, address of the tcache_perthread_struct)
tls_ok = True
for th in inf.threads():
    th.switch()
    tids[th.ptid[1]] = th.num
    if not tls_ok:
        continue
    try:
        tc = val("tcache")
    except gdb.error:
        tls_ok = False
        continue
    if tc:
        tcaches.append(("LWP %d" % th.ptid[1], tc))
if not tls_ok:
    TC_CHUNK = (int(gdb.parse_and_eval("sizeof(tcache_perthread_struct)")) + 8 + 15) & ~15
    tcaches = [("arena %d" % ai, first_chunk(ar) + 16)
               for ai, ar in enumerate(arenas) if csize(first_chunk(ar)) == TC_CHUNK]
    print("oracle: no TLS: %d tcaches taken from the arenas' first chunks" % len(tcaches))
for whose, tc in tcaches:
    for i in range(64):
        cnt = val("((tcache_perthread_struct *)%d)->counts[%d]" % (tc, i))
        e = val("((tcache_perthread_struct *)%d)->entries[%d]" % (tc, i))
        n = 0
        while e and n < 1000:
            c = e - 16
            ai = arenas.index(rd(c & ~(HEAP_MAX - 1))) if rd(c + 8) & 4 else 0
            put(e, "tcache", ai)
            e = reveal(e, rd(e))
            n += 1
        if n != cnt:
            problems.append("tcache bin %d of %s: %d entries, count %d"
                            % (i, whose, n, cnt))

# Heap walks: every chunk start with its size, and in-use state.
chunks = {}   # chunk address -> (size, inuse, arena index)


def walk(start, end, ai, top):
    c = start
    while c < end:
        sz = csize(c)
        if c == top:
            chunks[c] = (sz, False, ai)
            return
        if sz < 32:            # fencepost
            return
        nxt = c + sz
        chunks[c] = (sz, bool(rd(nxt + 8) & 1), ai)
        c = nxt
    problems.append("heap walk of arena %d ran off at 0x%x" % (ai, c))


for ai, ar in enumerate(arenas):
    top = rd(ar + OFF_TOP)
    if ar == main_arena:
        sbrk_base = val("mp_.sbrk_base")
        walk(sbrk_base, top + csize(top), ai, top)
    else:
        h = top & ~(HEAP_MAX - 1)
        while h:
            first = h + SZ_HINFO
            if rd(h) == ar and first == ar:          # the arena's first heap
                first = ((ar + SZ_STATE + 16 + 15) & ~15) - 16
            walk(first, h + rd(h + 16), ai, top)
            h = rd(h + 8)                            # prev

# Compare with the truth.
thread_arena = {}
nalloc = 0
mmapped = []
for line in open(TRUTH):  # noqa: F821 (set by the caller)
    f = line.split()
    if not f or f[0].startswith("#"):
        continue
    if f[0] == "thread":
        # "none": a thread that never called malloc (no chunk to check)
        if f[3] != "none":
            thread_arena[f[1]] = main_arena if f[3] == "main" else int(f[3], 16)
    elif f[0] == "alloc":
        nalloc += 1
        user, usable, w, t = int(f[1], 16), int(f[3]), f[4], f[5]
        c = user - 16
        if w == "merged":
            tops = [rd(a + OFF_TOP) for a in arenas]
            if c in chunks and c not in tops:
                problems.append("0x%x merged but still a chunk" % user)
            continue
        if w == "mmapped":
            sw = rd(c + 8)
            mmapped.append((c, sw & ~7))
            if not sw & 2 or (sw & ~7) - 16 != usable:
                problems.append("0x%x: mmapped header 0x%x, usable %d" % (user, sw, usable))
            continue
        if c not in chunks:
            problems.append("0x%x (%s): not a chunk in any heap walk" % (user, w))
            continue
        sz, inuse, ai = chunks[c]
        if sz - 8 != usable:
            problems.append("0x%x: chunk size 0x%x, usable %d" % (user, sz, usable))
        if arenas[ai] != thread_arena.get(t):
            problems.append("0x%x: in arena %d, thread %s's arena is 0x%x"
                            % (user, ai, t, thread_arena.get(t, 0)))
        got = where.get(user, ("heap",))[0]
        if got != w:
            problems.append("0x%x: truth says %s, core says %s" % (user, w, got))
        if w == "heap" and not inuse:
            problems.append("0x%x: live but next chunk has PREV_INUSE clear" % user)
        if w in ("unsorted", "smallbin", "largebin") and inuse:
            problems.append("0x%x: binned but next chunk has PREV_INUSE set" % user)
    elif f[0] == "mallinfo2":
        if mi[f[1]] != int(f[2]):
            problems.append("mallinfo2 %s: truth %s, core %d" % (f[1], f[2], mi[f[1]]))

for p in problems[:40]:
    print("oracle: " + p)
print("oracle: arenas %d, threads %d, lists %s" % (
    len(arenas), len(tids), " ".join("%s=%d" % kv for kv in sorted(census.items()))))
print("oracle: %d allocations, %d mismatches" % (nalloc, len(problems)))

if "EMIT" in globals():
    import json
    tops = set(rd(a + OFF_TOP) for a in arenas)
    used = [0, 0]
    free = [0, 0]
    classes = {}
    rows = []
    for c, (sz, inuse, ai) in chunks.items():
        w = where.get(c + 16, (None,))[0]
        if c in tops:
            w = "top"
        elif w is None:
            w = "heap" if inuse else "free?"
        rows.append((c, sz - 8, w, ai, sz))
    for c, sz in mmapped:
        rows.append((c, sz - 16, "mmapped", 0, sz))
    with open(EMIT + "/chunks.jsonl", "w") as out:  # noqa: F821
        for c, usable, w, ai, sz in sorted(rows):
            st = "used" if w in ("heap", "mmapped") else "free"
            tot = used if st == "used" else free
            tot[0] += 1
            tot[1] += usable
            k = classes.setdefault(usable, [0, 0])
            k[0 if st == "used" else 1] += 1
            out.write(json.dumps(dict(addr="0x%x" % (c + 16), size=usable, state=st,
                                      where=w, arena=ai, chunk="0x%x" % c,
                                      chunk_size=sz), separators=(",", ":")) + "\n")
    with open(EMIT + "/summary.json", "w") as out:  # noqa: F821
        json.dump(dict(allocator="ptmalloc", version=globals().get("VERSION", "2.36"),
                       arch=globals().get("ARCH", "x86_64"),
                       arenas=len(arenas), threads=len(tids),
                       used=dict(count=used[0], bytes=used[1]),
                       free=dict(count=free[0], bytes=free[1]), mallinfo=mi), out)
    with open(EMIT + "/sizes.json", "w") as out:  # noqa: F821
        json.dump(dict(classes=[dict(size=k, used=v[0], used_bytes=k * v[0], free=v[1],
                                     free_bytes=k * v[1]) for k, v in sorted(classes.items())]),
                  out)
