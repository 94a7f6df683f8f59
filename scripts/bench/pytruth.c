/* pytruth.c - the end of scripts/bench/pyheap.py, in C: a shared library
 * the Python program loads with ctypes and calls last.
 *
 * pt_finish(wait): takes glibc's mallinfo2() and prints it with write(2)
 * (the heap's size and the statistics heapwalk's must equal), then
 * aborts, or with WAIT prints "ready" and waits for a signal (the bench's
 * gcore fallback).  It is C because nothing may malloc or free between
 * the statistics and the crash: every Python statement allocates, and
 * formatting here uses the stack only.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void pt_finish(int wait);

static void put(const char *s)
{
    size_t len = strlen(s);
    while (len > 0) {
        ssize_t w = write(STDOUT_FILENO, s, len);
        if (w <= 0)
            return;
        s += w;
        len -= (size_t)w;
    }
}

void pt_finish(int wait)
{
    struct mallinfo2 mi = mallinfo2();
    char buf[512];
    snprintf(buf, sizeof buf, "heap_bytes=%zu\nheap_how=mallinfo2 arena+hblkhd\n",
             mi.arena + mi.hblkhd);
    put(buf);
    snprintf(buf, sizeof buf,
             "mallinfo arena=%zu ordblks=%zu smblks=%zu hblks=%zu hblkhd=%zu "
             "usmblks=%zu fsmblks=%zu uordblks=%zu fordblks=%zu keepcost=%zu\n",
             mi.arena, mi.ordblks, mi.smblks, mi.hblks, mi.hblkhd, mi.usmblks,
             mi.fsmblks, mi.uordblks, mi.fordblks, mi.keepcost);
    put(buf);
    if (wait) {
        put("ready\n");
        for (;;)
            pause();
    }
    put("aborting\n");
    abort();
}
