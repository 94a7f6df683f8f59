/* memprobe: run a command and report its wall time and memory use.
 *
 * usage: memprobe [-o FILE] [-i MS] [--] COMMAND [ARGS...]
 *
 * While the command runs, /proc/PID/status is sampled every MS milliseconds
 * (default 10) for RssAnon, RssFile and VmHWM; the exit is noticed at once
 * (SIGCHLD), so the wall time is not rounded to the sampling interval.
 * At the end one line is written to FILE (default: stderr):
 *
 *   wall_s=0.412 rss_anon_peak_kib=2048 rss_file_peak_kib=1048576 vmhwm_kib=1050624 maxrss_kib=1050700 samples=41 status=0
 *
 * rss_anon_peak_kib is the memory the command itself allocated (heap, stacks,
 * anonymous mmaps), as opposed to file pages it maps (e.g. a core file), which
 * appear in rss_file_peak_kib.  maxrss_kib comes from wait4's rusage and is
 * exact; the sampled peaks can miss spikes shorter than the interval.
 * memprobe exits with the command's exit status (128+N if killed by signal N,
 * 127 if it could not be started).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct peaks {
    long rss_anon;
    long rss_file;
    long vmhwm;
    long samples;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Value in kB of the status line starting with KEY (e.g. "RssAnon:"), or -1. */
static long status_field(const char *buf, const char *key)
{
    size_t klen = strlen(key);
    const char *p = buf;
    while (p != NULL && *p != '\0') {
        if (strncmp(p, key, klen) == 0)
            return strtol(p + klen, NULL, 10);
        p = strchr(p, '\n');
        if (p != NULL)
            p++;
    }
    return -1;
}

static void sample(pid_t pid, struct peaks *pk)
{
    char path[64];
    char buf[4096];
    snprintf(path, sizeof path, "/proc/%ld/status", (long)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    buf[n] = '\0';
    long v;
    if ((v = status_field(buf, "RssAnon:")) > pk->rss_anon)
        pk->rss_anon = v;
    if ((v = status_field(buf, "RssFile:")) > pk->rss_file)
        pk->rss_file = v;
    if ((v = status_field(buf, "VmHWM:")) > pk->vmhwm)
        pk->vmhwm = v;
    pk->samples++;
}

static void usage(void)
{
    fprintf(stderr, "usage: memprobe [-o FILE] [-i MS] [--] COMMAND [ARGS...]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    long interval_ms = 10;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
            out_path = argv[++i];
        } else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
            interval_ms = strtol(argv[++i], NULL, 10);
            if (interval_ms < 1)
                usage();
        } else if (argv[i][0] == '-') {
            usage();
        } else {
            break;
        }
    }
    if (i >= argc)
        usage();

    /* Block SIGCHLD so that sigtimedwait() below wakes on the child's exit. */
    sigset_t chld, old;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    sigprocmask(SIG_BLOCK, &chld, &old);

    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("memprobe: fork");
        return 127;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(argv[i], &argv[i]);
        fprintf(stderr, "memprobe: %s: %s\n", argv[i], strerror(errno));
        _exit(127);
    }

    struct peaks pk = {0, 0, 0, 0};
    struct timespec tick = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
    int wstatus = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    for (;;) {
        sample(pid, &pk);
        pid_t r = wait4(pid, &wstatus, WNOHANG, &ru);
        if (r == pid)
            break;
        if (r < 0 && errno != EINTR) {
            perror("memprobe: wait4");
            return 127;
        }
        sigtimedwait(&chld, NULL, &tick);
    }
    double wall = now_s() - t0;

    int status;
    if (WIFEXITED(wstatus))
        status = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus))
        status = 128 + WTERMSIG(wstatus);
    else
        status = 127;

    FILE *out = stderr;
    if (out_path != NULL) {
        out = fopen(out_path, "w");
        if (out == NULL) {
            fprintf(stderr, "memprobe: %s: %s\n", out_path, strerror(errno));
            return 127;
        }
    }
    fprintf(out,
            "wall_s=%.3f rss_anon_peak_kib=%ld rss_file_peak_kib=%ld vmhwm_kib=%ld "
            "maxrss_kib=%ld samples=%ld status=%d\n",
            wall, pk.rss_anon, pk.rss_file, pk.vmhwm, ru.ru_maxrss, pk.samples,
            status);
    if (out != stderr && fclose(out) != 0) {
        fprintf(stderr, "memprobe: %s: %s\n", out_path, strerror(errno));
        return 127;
    }
    return status;
}
