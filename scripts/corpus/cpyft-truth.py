"""cpyft-truth.py TRUTH [wait|abort] - a free-threaded CPython's heap with
its own truth, for heapwalk's mimalloc walker on CPython 3.13's copy of
mimalloc 2.1.2 (tests/t0493; run by scripts/corpus/cpython-ft.sh's python).

The heap: the main thread and four workers each build N (CPYFT_N, default
2000) objects of each kind -- dicts, lists, str, bytes, big ints, tuples
and instances of a plain class -- and free every third; every worker also
leaves a cycle of lists as garbage.  A fifth thread builds the same and
exits: its objects, handed to the main thread, outlive it in pages its
thread state abandoned (the next thread that needs a page reclaims them),
and the main thread frees every other one (frees into another thread's
pages).  gc.collect() then frees the workers'
cycles from the main thread.  The workers stay alive, blocked on a lock.

The truth, written to TRUTH (one "key value..." line each; CPython's own
figures, never heapwalk's):

  pid P / tid main T / tid worker T / tid exited T     native thread ids
  n N                                                 objects of each kind
  obj ADDR BLOCK KIND TAG SIZE BASIC TID   every object the program
        holds: its id(), the mimalloc block it lives in (id() less the
        two-word pre-header for objects with one), its kind, the tag of
        the heap it should be in (1 object, 2 gc, 3 gc with pre-header),
        its sys.getsizeof (for str, bytes, int and tuple the size
        allocated; a dict's or list's adds its separate table; an
        instance's leaves out its inline values), its type's
        __basicsize__ (with the pre-header: no block of it is smaller)
        and the thread that made it
  gcobj BLOCK TAG                     every object gc.get_objects()
        gives: its block and the tag of the heap its type puts it in
  gc_objects N / gc_objects_tag T N   their count, all and by tag
  debugmallocstats KEY VALUE          sys._debugmallocstats()'s mimalloc
        lines (its stderr output is TRUTH.mallocstats)
  freelist KIND N SIZE                its free-list lines: objects kept
        for reuse (N of SIZE bytes) are blocks in use to mimalloc
  allocated_blocks_warm N             sys.getallocatedblocks(), a first
        time (warms every path the last one takes)
  allocated_blocks N                  sys.getallocatedblocks(), last
  extra_blocks K                      blocks alive while the program
        waits that the last figure does not count (see below)
  end

sys.getallocatedblocks() of a free-threaded build (Objects/obmalloc.c
get_mimalloc_allocated_blocks) stops the world and adds up `used` of every
page of every thread state's four heaps and of the interpreter's
abandoned pool, after mi_heap_visit_blocks has processed each heap's
delayed-free list and _mi_heap_area_init has collected each page's
thread-free list into it: so it is the exact count of blocks in use in
those pages at that moment.  It is taken last.  After it, the program
keeps alive exactly: the int it returned, and (wait) the 1-byte buffer
os.read allocates before it blocks; the bytes written meanwhile are
freed again.  So blocks in use when heapwalk looks = allocated_blocks +
extra_blocks, unless a page belongs to no thread state's heap (mimalloc's
own _mi_heap_main: CPython never allocates from it; _debugmallocstats,
which reports it alone, says 0).

Then "ready" on stdout and, with `wait` (the default), a read of one byte
on stdin (for gcore and heapwalk --pid), after which it counts again and
prints "OK" when the blocks in use are as they were (the count less the
read buffer, freed) or "FAIL ...", lets the workers go and exits 0; with
`abort`, os.abort() (a kernel core).
"""
import gc
import os
import sys
import threading

N = int(os.environ.get("CPYFT_N", "2000"))
WORKERS = 4
TPFLAGS_HAVE_GC = 1 << 14
TPFLAGS_PREHEADER = (1 << 3) | (1 << 4)   # managed weakref, managed dict
PREHEADER = 2 * 8                         # two words before the object


class Thing:
    def __init__(self, i):
        self.i = i
        self.name = "thing"


def build(tag):
    """N objects of each kind, every third freed again; (kind, obj) pairs."""
    kinds = {
        "dict": lambda i: {"k": i, "t": tag},
        "list": lambda i: [i, i + 1, i + 2],
        "str": lambda i: "%s-%08d" % (tag, i) * 3,
        "bytes": lambda i: b"b%07d" % i * 5,
        "int": lambda i: 10 ** 40 + i,
        "tuple": lambda i: (i, tag, None),
        "thing": Thing,
    }
    held = []
    for kind, make in kinds.items():
        objs = [make(i) for i in range(N)]
        del objs[::3]
        held.extend((kind, o) for o in objs)
    return held


def heap_tag(o):
    f = type(o).__flags__
    if not f & TPFLAGS_HAVE_GC:
        return 1
    return 3 if f & TPFLAGS_PREHEADER else 2


held = {}              # tid -> [(kind, obj)]
built = threading.Semaphore(0)
gate = threading.Lock()
gate.acquire()
garbage_made = []


def worker():
    tid = threading.get_native_id()
    mine = build("w%d" % tid)
    held[tid] = mine
    # A cycle nobody holds: gc.collect() in the main thread frees it.
    a = [tid]
    b = [a]
    a.append(b)
    del a, b
    garbage_made.append(tid)
    built.release()
    gate.acquire()       # (allocates nothing while it waits)
    gate.release()


def exiter():
    tid = threading.get_native_id()
    held[tid] = build("x%d" % tid)


def main():
    out = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "wait"
    if mode not in ("wait", "abort"):
        sys.exit("usage: cpyft-truth.py TRUTH [wait|abort]")
    gc.disable()
    main_tid = threading.get_native_id()
    held[main_tid] = build("m")

    x = threading.Thread(target=exiter)
    x.start()
    x.join()
    exited_tid = [t for t in held if t != main_tid][0]
    # The exited thread's objects, freed here: every other one.
    held[exited_tid] = held[exited_tid][::2]

    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for _ in threads:
        built.acquire()
    gc.collect()

    f = open(out, "w")
    f.write("pid %d\n" % os.getpid())
    f.write("tid main %d\n" % main_tid)
    for tid in held:
        if tid not in (main_tid, exited_tid):
            f.write("tid worker %d\n" % tid)
    f.write("tid exited %d\n" % exited_tid)
    f.write("n %d\n" % N)
    for tid, objs in held.items():
        for kind, o in objs:
            tag = heap_tag(o)
            a = id(o)
            f.write("obj 0x%x 0x%x %s %d %d %d %d\n" % (
                a, a - PREHEADER if tag == 3 else a, kind, tag,
                sys.getsizeof(o),
                type(o).__basicsize__ + (PREHEADER if tag == 3 else 0),
                tid))
    # _debugmallocstats writes to C's stderr: into a file of its own.
    stats = out + ".mallocstats"
    fd = os.open(stats, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    saved = os.dup(2)
    sys.stderr.flush()
    os.dup2(fd, 2)
    sys._debugmallocstats()
    os.dup2(saved, 2)
    os.close(saved)
    os.close(fd)
    with open(stats) as s:
        for line in s:
            w = line.split()
            if line.startswith("    ") and ":" in line:
                key, _, val = line.strip().partition(":")
                f.write("debugmallocstats %s %s\n" % (
                    key.replace(" ", "_").replace("/", ""), val.strip()))
            elif len(w) > 3 and w[1] == "free" and "*" in w:
                # "N free [K-sized ]TYPE * SIZE bytes each = TOTAL"
                star = w.index("*")
                f.write("freelist %s %s %s\n" % (
                    "_".join(w[2:star]), w[0], w[star + 1]))
    # gc.get_objects() last of these: the tag-3 objects it gives are then
    # every one in use (nothing with a pre-header is made after it).
    objs = gc.get_objects()
    by_tag = {2: 0, 3: 0}
    for o in objs:
        tag = heap_tag(o)
        by_tag[tag] += 1
        a = id(o)
        f.write("gcobj 0x%x %d\n" % (a - PREHEADER if tag == 3 else a, tag))
    f.write("gc_objects %d\n" % len(objs))
    for tag in sorted(by_tag):
        f.write("gc_objects_tag %d %d\n" % (tag, by_tag[tag]))
    del objs, o
    f.close()

    # The last figures, and nothing allocated after them that stays but
    # what extra_blocks says.  The same code twice: the first warms it.
    fd = os.open(out, os.O_WRONLY | os.O_APPEND)
    warm = sys.getallocatedblocks()
    os.write(fd, b"allocated_blocks_warm %d\n" % warm)
    last = sys.getallocatedblocks()
    os.write(fd, b"allocated_blocks %d\n" % last)
    # The int `last` stays; in wait mode os.read's buffer too.
    os.write(fd, b"extra_blocks 2\nend\n" if mode == "wait"
             else b"extra_blocks 1\nend\n")
    os.close(fd)
    os.write(1, b"ready\n")
    if mode == "abort":
        os.abort()
    os.read(0, 1)
    # Whatever looked at the heap meanwhile left it as it was: the blocks
    # in use are the last count's and the int it gave (os.read's buffer
    # was freed again).
    now = sys.getallocatedblocks()
    os.write(1, b"OK\n" if now == last + 1 else
             b"FAIL blocks in use went from %d to %d\n" % (last + 1, now))
    gate.release()
    for t in threads:
        t.join()


main()
