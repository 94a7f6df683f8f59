/* benchio.h - what the bench programs (bigheap.c, shapes.c) share: their
 * report, written with write(2) (stdio's buffers come from malloc and
 * could be lost at the abort), and their random numbers (xorshift64*,
 * fixed seeds, so that a heap is the same every run).
 */
#ifndef BENCH_BENCHIO_H
#define BENCH_BENCHIO_H

#include <malloc.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void say(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1;
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(STDOUT_FILENO, p, len);
        if (w <= 0)
            return;
        p += w;
        len -= (size_t)w;
    }
}

/* glibc's own statistics, the bench's truth for heapwalk's mallinfo.  */
static void say_mallinfo(const struct mallinfo2 *mi)
{
    say("mallinfo arena=%zu ordblks=%zu smblks=%zu hblks=%zu hblkhd=%zu "
        "usmblks=%zu fsmblks=%zu uordblks=%zu fordblks=%zu keepcost=%zu\n",
        mi->arena, mi->ordblks, mi->smblks, mi->hblks, mi->hblkhd,
        mi->usmblks, mi->fsmblks, mi->uordblks, mi->fordblks, mi->keepcost);
}

/* A worker's sample of live blocks, each with its malloc_usable_size.  */
static void say_samples(void *const *sample, const size_t *usable, size_t n)
{
    for (size_t k = 0; k < n; k++)
        say("sample addr=%p usable=%zu\n", sample[k], usable[k]);
}

/* The end of a run: wait, alive, for --pid (the bench reads "ready"),
   or abort() for the core. */
static void finish(int wait_mode) __attribute__((noreturn));
static void finish(int wait_mode)
{
    if (wait_mode) {
        say("ready\n");
        for (;;)
            pause();
    }
    say("aborting\n");
    abort();
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

#endif
