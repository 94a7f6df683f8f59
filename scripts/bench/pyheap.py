"""pyheap.py - a real program's heap for scripts/bench.sh: CPython (run
with PYTHONMALLOC=malloc, so that every object is a glibc block) holding
a few million objects, then a crash.

usage: PYTHONMALLOC=malloc python3 pyheap.py PYTRUTH_SO RECORDS [-w]

Builds RECORDS records (a dict of five fields: an int, two strings, a
list of two strings, a float) in a list and in a dict indexing them by
name, then drops every fifth record, whose blocks go back to malloc's
lists.  Each record is some ten blocks.  Python's containers point at the
objects they hold, and a dict or list object starts 16 bytes into its
block (the garbage collector's header comes first): most blocks are
reached through interior pointers only, which `leaks` calls "possibly
lost".  Prints (os.write, unbuffered) the counts and a sample of live
blocks -- strings and floats (their object is their block), dicts and
lists (the header 16 bytes before), lists' item arrays -- each with
malloc_usable_size, as bigheap does; then pytruth.so's pt_finish prints
mallinfo2 and aborts (see pytruth.c for why that part is C).
"""
import ctypes
import gc
import os
import sys


def say(text):
    data = text.encode()
    while data:
        data = data[os.write(1, data):]


def main():
    truth = ctypes.CDLL(sys.argv[1])
    count = int(sys.argv[2])
    wait = len(sys.argv) > 3 and sys.argv[3] == "-w"
    libc = ctypes.CDLL(None)
    usable = libc.malloc_usable_size
    usable.restype = ctypes.c_size_t
    usable.argtypes = [ctypes.c_void_p]
    # No collection runs while the heap is built or at the crash: the
    # heap is then the same every time (nothing here is cyclic).
    gc.disable()

    records = []
    index = {}
    for i in range(count):
        name = "user-%08d" % i
        rec = {"id": i + 1000, "name": name, "email": name + "@example.org",
               "tags": ["t%d" % (i % 97), str(i)], "score": i * 0.5}
        records.append(rec)
        index[name] = rec
    dropped = 0
    for i in range(0, count, 5):
        del index[records[i]["name"]]
        records[i] = None
        dropped += 1

    # The sample: 40 live records spread over the list.
    gc_head = 16           # sizeof(PyGC_Head) before a dict's or list's object
    item_array = 24        # offsetof(PyListObject, ob_item)
    sample = []
    step = max(1, count // 40)
    for i in range(1, count, step):
        rec = records[i]
        if rec is None:
            continue
        tags = rec["tags"]
        for addr in (id(rec["name"]), id(rec["email"]), id(rec["score"]),
                     id(rec) - gc_head, id(tags) - gc_head,
                     ctypes.c_void_p.from_address(id(tags) + item_array).value):
            sample.append(addr)
    # The records list's item array: one big block, mmapped.
    sample.append(ctypes.c_void_p.from_address(id(records) + item_array).value)
    lines = ["shape=python\n", "pid=%d\n" % os.getpid(),
             "records=%d\n" % (count - dropped), "dropped=%d\n" % dropped,
             "leaks_truth=unknown\n"]
    for addr in sample:
        lines.append("sample addr=0x%x usable=%d\n" % (addr, usable(addr)))
    say("".join(lines))
    truth.pt_finish(1 if wait else 0)


main()
