# mi-oracle.py - mimalloc 2.0.9's heap as gdb sees it in a core of
# corpora/mimalloc/mitruth1.c built with mimalloc's src/static.c compiled
# in with debug info (the static variant of tests/t0490): an oracle
# independent of heapwalk, for the corpus and for tests/tools/mitruthcmp.
#
#   gdb -batch -nx -ex 'python TRUTH="truth.txt"' \
#       -ex 'python EMIT="DIR"' -x mi-oracle.py PROG CORE
#
# With the types gdb knows from the program's DWARF (mi_segment_t,
# mi_page_t, mi_heap_t) it finds every segment: from each live thread's
# heap (the truth's thread lines) through its page queues, and from
# mimalloc's lists of abandoned segments (`abandoned`, tagged, and
# `abandoned_visited`: the exited thread's); walks each segment's slices
# (the first span is the segment's own header; then pages and free
# spans), and each page's blocks: on the page's free, local_free or
# xthread_free list, on its heap's thread_delayed_free list, or in use.
# Encoded free lists (MI_SECURE >= 3: the page's keys; the heap's keys
# for the delayed list) are decoded as mi_ptr_decode does.  It checks
# that every page's used count is its capacity less its free and
# local_free blocks and that no block is on two lists, prints a census,
# and writes what heapwalk's walker should print to DIR/chunks (JSON
# Lines: addr, size, state, where as tests/tools/mitruthcmp reads them:
# page, huge, page-free, local-free, thread-free, page-reserved, dirty),
# DIR/summary (allocator mimalloc, findings 0) and DIR/leaks (the
# truth's lost blocks at their blocks' starts: this oracle does no
# marking, the file only lets mitruthcmp run whole).
#
# Prints "mi-oracle: ..." lines; the last says how many problems.
import gdb

inf = gdb.selected_inferior()
M64 = (1 << 64) - 1
SEGMENT_SIZE = 1 << 25        # 32 MiB (MI_SEGMENT_SHIFT 25 on 64-bit)
SLICE_SIZE = 1 << 16          # 64 KiB
HUGE_BLOCK_SIZE = 1 << 31     # xblock_size saturates here
MAX_ALIGN_GUARANTEE = 128     # 8 * MI_MAX_ALIGN_SIZE
SEGMENT_HUGE = 1              # mi_segment_kind_t

problems = 0


def problem(msg):
    global problems
    problems += 1
    if problems <= 30:
        print("mi-oracle: PROBLEM: " + msg)


types = {}


def type_of(name):
    # (gdb.lookup_type does not always find a typedef of a compilation
    # unit not read yet; an expression does.)
    if name not in types:
        types[name] = gdb.parse_and_eval("(%s *)0" % name).type.target()
    return types[name]


def ptr_to(addr, typename):
    return gdb.Value(addr).cast(type_of(typename).pointer()).dereference()


def u64(addr):
    return int.from_bytes(inf.read_memory(addr, 8).tobytes(), "little")


page_fields = [f.name for f in type_of("mi_page_t").strip_typedefs().fields()]
ENCODED = "keys" in page_fields


def keys_of(v):
    return (int(v["keys"][0]) & M64, int(v["keys"][1]) & M64) if ENCODED else None


def decode(x, null, keys):
    """mi_ptr_decode: the next block, 0 at the list's end."""
    if keys is None:
        return x
    k0, k1 = keys
    s = k0 % 64
    v = (x - k0) & M64
    if s:
        v = ((v >> s) | (v << (64 - s))) & M64
    p = v ^ k1
    return 0 if p == null else p


def walk_list(head, null, keys, limit):
    out = []
    b = head
    seen = set()
    while b:
        if b in seen or len(out) > limit:
            problem("list from %#x loops or runs past %d entries" % (head, limit))
            break
        seen.add(b)
        out.append(b)
        b = decode(u64(b), null, keys)
    return out


truth = []
with open(TRUTH) as f:  # noqa: F821 (set by the caller)
    for line in f:
        truth.append(line.split())
heaps = [int(w[4], 16) for w in truth if w[0] == "thread" and len(w) == 5]

# ---- the segments ----------------------------------------------------
segments = set()
for h in heaps:
    heap = ptr_to(h, "mi_heap_t")
    nq = heap["pages"].type.range()[1] + 1
    for q in range(nq):
        page = int(heap["pages"][q]["first"])
        n = 0
        while page and n < 100000:
            segments.add(page & ~(SEGMENT_SIZE - 1))
            page = int(ptr_to(page, "mi_page_t")["next"])
            n += 1
abandoned = []
for name, tagged in (("abandoned", True), ("abandoned_visited", False)):
    s = int(gdb.parse_and_eval("(unsigned long)" + name))
    if tagged:
        s &= ~(SEGMENT_SIZE - 1)
    n = 0
    while s and n < 10000:
        segments.add(s)
        abandoned.append(s)
        s = int(ptr_to(s, "mi_segment_t")["abandoned_next"])
        n += 1
print("mi-oracle: %d heaps, %d segments (%d abandoned), %s free lists"
      % (len(heaps), len(segments), len(abandoned),
         "encoded" if ENCODED else "plain"))

# ---- the pages and their blocks -----------------------------------------
lines = []          # (addr, size, used, where)
pages = []          # (start, bsize, capacity, blocks' list states)
block_page = {}     # block address -> (page index, block index)
census = {"page": 0, "huge": 0, "page-free": 0, "local-free": 0,
          "thread-free": 0, "delayed": 0}
for seg in sorted(segments):
    sv = ptr_to(seg, "mi_segment_t")
    entries = int(sv["slice_entries"])
    kind = int(sv["kind"])
    slice_t = sv["slices"][0].type
    i = 0
    while i < entries:
        sl = sv["slices"][i]
        count = int(sl["slice_count"])
        if count == 0 or int(sl["slice_offset"]) != 0:
            problem("segment %#x slice %d: count %d, offset %d"
                    % (seg, i, count, int(sl["slice_offset"])))
            break
        xbs = int(sl["xblock_size"])
        span = seg + i * SLICE_SIZE
        if i == 0:
            pass                              # the segment's own header
        elif xbs == 0:
            lines.append((span, count * SLICE_SIZE, False, "dirty"))
        else:
            page = sv["slices"][i].address
            pg = page.dereference()
            off = 3 * MAX_ALIGN_GUARANTEE if 8 <= xbs <= 1024 else 0
            start = span + off
            psize = count * SLICE_SIZE - off
            bsize = xbs if xbs < HUGE_BLOCK_SIZE else psize
            cap, res = int(pg["capacity"]), int(pg["reserved"])
            keys = keys_of(pg)
            null = int(page)
            state = ["used"] * cap
            for where, head in (("page-free", int(pg["free"])),
                                ("local-free", int(pg["local_free"])),
                                ("thread-free", int(pg["xthread_free"]) & ~3)):
                for b in walk_list(head, null, keys, cap):
                    k, r = divmod(b - start, bsize)
                    if r or not 0 <= k < cap:
                        problem("page %#x: %s entry %#x is no block of it"
                                % (start, where, b))
                    elif state[k] != "used":
                        problem("block %#x on %s and %s" % (b, state[k], where))
                    else:
                        state[k] = where
            nfree = state.count("page-free") + state.count("local-free")
            if int(pg["used"]) != cap - nfree:
                problem("page %#x: used %d, capacity %d, %d free or local"
                        % (start, int(pg["used"]), cap, nfree))
            for k in range(cap):
                block_page[start + k * bsize] = (len(pages), k)
            pages.append([start, bsize, cap, res, state,
                          "huge" if kind == SEGMENT_HUGE else "page"])
        i += count

# The heaps' thread_delayed_free lists (the heap's keys, null the heap).
for h in heaps:
    heap = ptr_to(h, "mi_heap_t")
    keys = keys_of(heap)
    for b in walk_list(int(heap["thread_delayed_free"]), h, keys, 1 << 20):
        if b not in block_page:
            problem("heap %#x: delayed entry %#x is no block" % (h, b))
            continue
        p, k = block_page[b]
        if pages[p][4][k] != "used":
            problem("block %#x on %s and the delayed list" % (b, pages[p][4][k]))
        pages[p][4][k] = "thread-free"
        census["delayed"] += 1

for start, bsize, cap, res, state, inuse in pages:
    for k in range(cap):
        w = inuse if state[k] == "used" else state[k]
        census[w] += 1
        lines.append((start + k * bsize, bsize, state[k] == "used", w))
    if res > cap:
        lines.append((start + cap * bsize, (res - cap) * bsize, False,
                      "page-reserved"))
lines.sort()
print("mi-oracle: %d pages; blocks: %s" % (
    len(pages), ", ".join("%s %d" % kv for kv in census.items())))

if "EMIT" in globals():
    d = EMIT  # noqa: F821
    with open(d + "/chunks", "w") as f:
        for a, s, used, w in lines:
            f.write('{"addr":"%#x","size":%d,"state":"%s","where":"%s"}\n'
                    % (a, s, "used" if used else "free", w))
    with open(d + "/summary", "w") as f:
        f.write('{"allocator":"mimalloc","findings":0}\n')
    starts = sorted(block_page)
    import bisect
    with open(d + "/leaks", "w") as f:
        for w in truth:
            if w[0] != "lost":
                continue
            u = int(w[1], 16)
            j = bisect.bisect_right(starts, u) - 1
            if j >= 0:
                f.write('{"addr":"%#x","size":0,"kind":"definite"}\n'
                        % starts[j])

print("mi-oracle: %d problems" % problems)
