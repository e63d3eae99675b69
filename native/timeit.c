/* fsarena-timeit: run one command and report its rusage, as GNU time does.
 *
 * Usage: fsarena-timeit REPORT_FD COMMAND [ARG...]
 *
 * Why: a child forked from fsarena's large Python process inherits its memory
 * high-water mark (Linux keeps the pre-exec mm's hiwater_rss in ru_maxrss), so
 * wait4 in Python reports fsarena's RSS, not the command's. This launcher is
 * tiny (built static): the command is forked from it, so its ru_maxrss is its
 * own. The command's stdin, stdout, stderr, signal mask, process group and
 * session are the launcher's, unchanged; killing the process group kills both.
 *
 * When the command has finished, one JSON line is written to REPORT_FD (which
 * the command never sees: it is close-on-exec):
 *   {"exit_code":N,"signal":S,"wall_s":W,"user_s":U,"sys_s":S,"minor_faults":F,
 *    "major_faults":F,"max_rss_kib":K,"exec_errno":E}
 * wall_s is CLOCK_MONOTONIC from just before fork to just after wait4, as GNU
 * time measures it: fsarena's own start-up of the launcher is not in it.
 * exit_code is the command's exit status, or -S if a signal S ended it;
 * exec_errno is 0, or why the command could not be executed (then nothing ran).
 * The launcher exits with the command's status (128+S after a signal).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv) { return tv.tv_sec + tv.tv_usec / 1e6; }

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The child: execute the command, or tell the parent why not through the pipe. */
static void child(int errpipe, char **argv) {
    execvp(argv[0], argv);
    int err = errno;
    ssize_t n = write(errpipe, &err, sizeof err);
    (void)n;
    _exit(127);
}

static int exec_error(int errpipe) {
    int err = 0;
    ssize_t n;
    do {
        n = read(errpipe, &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    close(errpipe);
    return n == (ssize_t)sizeof err ? err : 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: fsarena-timeit REPORT_FD COMMAND [ARG...]\n");
        return 125;
    }
    char *end;
    long report = strtol(argv[1], &end, 10);
    if (*end != '\0' || report < 0 || fcntl((int)report, F_SETFD, FD_CLOEXEC) != 0) {
        fprintf(stderr, "fsarena-timeit: bad report fd %s\n", argv[1]);
        return 125;
    }
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        perror("fsarena-timeit: pipe2");
        return 125;
    }
    double start = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fsarena-timeit: fork");
        return 125;
    }
    if (pid == 0)
        child(pipefd[1], argv + 2);
    close(pipefd[1]);
    int err = exec_error(pipefd[0]);
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("fsarena-timeit: wait4");
            return 125;
        }
    }
    double wall = now() - start;
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    int code = sig ? -sig : WEXITSTATUS(status);
    dprintf((int)report,
            "{\"exit_code\":%d,\"signal\":%d,\"wall_s\":%.6f,\"user_s\":%.6f,\"sys_s\":%.6f,"
            "\"minor_faults\":%ld,\"major_faults\":%ld,\"max_rss_kib\":%ld,\"exec_errno\":%d}\n",
            code, sig, wall, seconds(ru.ru_utime), seconds(ru.ru_stime), ru.ru_minflt, ru.ru_majflt,
            ru.ru_maxrss, err);
    return sig ? 128 + sig : code;
}
