/*
 * fsarena-umlxstate.so: lets Debian 12's User-Mode Linux (6.1) boot on CPUs whose XSAVE
 * area is larger than the one it saves (AMX: Sapphire Rapids and later Xeons).
 *
 * The cause, read from both kernels' sources: UML saves each guest process's extended
 * register state with PTRACE_GETREGSET(NT_X86_XSTATE) into a buffer sized for the
 * features it knows (2,696 bytes here: x87/SSE, AVX, AVX-512, PKRU) and restores it with
 * PTRACE_SETREGSET from the same buffer. Since Linux 5.16 the host accepts a SETREGSET
 * only of exactly the size of its whole user XSAVE area (fpu_user_cfg.max_size, which
 * with AMX's tile configuration and tile data is 11,008 bytes), and fails any other size
 * with EFAULT (arch/x86/kernel/fpu/regset.c, xstateregs_set). UML's first return to user
 * space then prints "ptrace set fp regs failed, errno = 14" and init is killed. UML reads
 * the host's size at run time only from Linux 6.13 ("um: switch to regset API and depend
 * on XSTATE").
 *
 * What this does, loaded with LD_PRELOAD into linux.uml only: a SETREGSET of the XSAVE
 * set whose buffer is shorter than the host's area is passed on as a buffer of the host's
 * size: UML's bytes first, zeros after, and every state component that does not lie
 * whole inside UML's bytes marked as in its initial state (its XSTATE_BV bit cleared),
 * which is what it is: a guest process cannot enable AMX (arch_prctl(ARCH_REQ_XCOMP_PERM)
 * is one of the guest's own system calls, which UML emulates, so the host never grants
 * it), and UML never saved such a component. Every other call, and every call on a host
 * whose area fits UML's buffer, goes to libc's ptrace unchanged.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/uio.h>

#define XSTATE_BV_OFFSET 512 /* the XSAVE header's first word (standard format) */
#define PROBE_BYTES (1 << 16)

typedef long (*ptrace_fn)(int, pid_t, void *, void *);

static ptrace_fn real_ptrace;
static size_t host_bytes;     /* the host's whole user XSAVE area: what SETREGSET needs */
static size_t kept_for_bytes; /* the UML buffer size `kept` was computed for */
static uint64_t kept;         /* components that lie whole inside kept_for_bytes */
static __thread unsigned char *full;

/* Which state components (2..62) lie whole inside the first `bytes` of the standard
 * format; CPUID leaf 0xD gives each one's offset and size. Asked once per buffer size:
 * CPUID traps to the hypervisor in a virtual machine. */
static uint64_t components_within(size_t bytes) {
    uint64_t mask = 3; /* x87 and SSE: inside the legacy area, always kept */
    for (unsigned i = 2; i < 63; i++) {
        unsigned size, offset, ecx, edx;
        __cpuid_count(0xd, i, size, offset, ecx, edx);
        if (size != 0 && (size_t)offset + size <= bytes) mask |= 1ULL << i;
    }
    return mask;
}

/* The host's area size: a GETREGSET into a large buffer reports how much it filled. */
static size_t host_area(pid_t pid) {
    void *probe = malloc(PROBE_BYTES);
    if (probe == NULL) return 0;
    struct iovec iov = {probe, PROBE_BYTES};
    size_t found = real_ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &iov) == 0
                       ? iov.iov_len
                       : 0;
    free(probe);
    return found;
}

static long widened_setregset(pid_t pid, void *addr, const struct iovec *iov) {
    if (full == NULL && (full = calloc(1, host_bytes)) == NULL) {
        errno = ENOMEM;
        return -1;
    }
    if (kept_for_bytes != iov->iov_len) {
        kept = components_within(iov->iov_len);
        kept_for_bytes = iov->iov_len;
    }
    memcpy(full, iov->iov_base, iov->iov_len); /* the tail beyond stays zero */
    uint64_t bv;
    memcpy(&bv, full + XSTATE_BV_OFFSET, sizeof bv);
    bv &= kept;
    memcpy(full + XSTATE_BV_OFFSET, &bv, sizeof bv);
    struct iovec whole = {full, host_bytes};
    return real_ptrace(PTRACE_SETREGSET, pid, addr, &whole);
}

long ptrace(enum __ptrace_request request, ...) {
    va_list ap;
    va_start(ap, request);
    pid_t pid = va_arg(ap, pid_t);
    void *addr = va_arg(ap, void *);
    void *data = va_arg(ap, void *);
    va_end(ap);
    if (real_ptrace == NULL) real_ptrace = (ptrace_fn)dlsym(RTLD_NEXT, "ptrace");
    if (request == PTRACE_SETREGSET && (uintptr_t)addr == NT_X86_XSTATE && data != NULL) {
        const struct iovec *iov = data;
        if (host_bytes == 0) host_bytes = host_area(pid);
        if (iov->iov_len > XSTATE_BV_OFFSET + sizeof(uint64_t) && iov->iov_len < host_bytes)
            return widened_setregset(pid, addr, iov);
    }
    return real_ptrace(request, pid, addr, data);
}
