/* SPDX-License-Identifier: MIT
 *
 * A disk failing under one folder, at the system-call level: loaded first (LD_PRELOAD) into a
 * ccsim command and every process it starts, it counts each write-side call of the C library
 * on a path under CCSIM_FAULT_DIR (open for writing, write, writev, pwrite, rename, mkdir,
 * fsync, unlink, rmdir, and the copies, links and truncations shutil and the Rust core make)
 * and fails the CCSIM_FAULT_AT-th call of kind CCSIM_FAULT_KIND ("any" for every kind) with
 * errno CCSIM_FAULT_ERRNO, once; with CCSIM_FAULT_SUFFIX, the k-th of those on a path ending
 * so (a hidden folder's name is random: a file is found by its end). These are the calls under Python's os and io, under pyarrow's
 * writers and the Rust core's capture files: what test_disk_faults.py's Python-level faults
 * cannot reach (campaigns 52 and 53, issue 32). test_disk_syscall_faults.py builds it.
 *
 * The count is shared by every process of the command (a sweep's workers, forked or spawned):
 * CCSIM_FAULT_COUNTER is a file of one counter per kind, mapped shared by each. Each call
 * counted is noted, one line "kind<TAB>path" (and "FAIL" before the failed one's), in
 * CCSIM_FAULT_LOG when it is set. Its own calls go through syscall(): not counted.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

enum { K_OPEN, K_WRITE, K_RENAME, K_MKDIR, K_FSYNC, K_UNLINK, K_RMDIR, K_COPY, K_LINK,
       K_TRUNCATE, K_KINDS };
static const char *KIND_NAMES[K_KINDS] = {"open", "write", "rename", "mkdir", "fsync",
                                          "unlink", "rmdir", "copy", "link", "truncate"};

static int ready;
static const char *dir;
static size_t dir_len;
static long fail_at;
static int fail_kind = -1; /* -1: any kind */
static int fail_errno = EIO;
static const char *log_path;
static const char *fail_suffix;
static long *counters; /* K_KINDS + 2: each kind, every kind, those ending with fail_suffix */

static void init(void) {
    if (ready) return;
    ready = 1;
    dir = getenv("CCSIM_FAULT_DIR");
    if (dir == NULL || dir[0] != '/') { dir = NULL; return; }
    dir_len = strlen(dir);
    while (dir_len > 1 && dir[dir_len - 1] == '/') dir_len--;
    const char *at = getenv("CCSIM_FAULT_AT");
    fail_at = at ? atol(at) : 0;
    const char *kind = getenv("CCSIM_FAULT_KIND");
    if (kind != NULL)
        for (int k = 0; k < K_KINDS; k++)
            if (strcmp(kind, KIND_NAMES[k]) == 0) fail_kind = k;
    const char *code = getenv("CCSIM_FAULT_ERRNO");
    if (code != NULL) fail_errno = atoi(code);
    log_path = getenv("CCSIM_FAULT_LOG");
    fail_suffix = getenv("CCSIM_FAULT_SUFFIX");
    const char *counter = getenv("CCSIM_FAULT_COUNTER");
    if (counter != NULL) {
        int fd = (int)syscall(SYS_openat, AT_FDCWD, counter, O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            void *m = mmap(NULL, sizeof(long) * (K_KINDS + 2), PROT_READ | PROT_WRITE,
                           MAP_SHARED, fd, 0);
            syscall(SYS_close, fd);
            if (m != MAP_FAILED) counters = (long *)m;
        }
    }
    if (counters == NULL) { /* a count of this process alone */
        static long own[K_KINDS + 2];
        counters = own;
    }
}

__attribute__((constructor)) static void start(void) { init(); }

static int under(const char *path) {
    return strncmp(path, dir, dir_len) == 0 && (path[dir_len] == '/' || path[dir_len] == 0);
}

/* The absolute path of `path` as seen from `dirfd` (AT_FDCWD: the working folder), or of the
 * file `fd` is open on when `path` is NULL. */
static int resolve(int dirfd, const char *path, char *out, size_t size) {
    char link[64];
    ssize_t n;
    if (path != NULL && path[0] == '/') {
        snprintf(out, size, "%s", path);
        return 0;
    }
    if (path != NULL && dirfd == AT_FDCWD) {
        if (syscall(SYS_getcwd, out, size) < 0) return -1;
    } else {
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        n = syscall(SYS_readlinkat, AT_FDCWD, link, out, size - 1);
        if (n < 0) return -1;
        out[n] = 0;
    }
    if (path != NULL && path[0] != 0) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "/%s", path);
    }
    return 0;
}

static void note(const char *what, const char *path) {
    if (log_path == NULL) return;
    char line[PATH_MAX + 64];
    int n = snprintf(line, sizeof line, "%s\t%s\n", what, path);
    if (n <= 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, log_path,
                          O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return;
    syscall(SYS_write, fd, line, (size_t)n);
    syscall(SYS_close, fd);
}

/* Counts a call of `kind` on a path (dirfd, path; or the file fd is open on when path is
 * NULL); nonzero when it is the one to fail, errno set. */
static int hit(int kind, int dirfd, const char *path) {
    int saved = errno;
    init();
    if (dir == NULL) return 0;
    char where[PATH_MAX + 8];
    if (resolve(dirfd, path, where, sizeof where) != 0 || !under(where)) {
        errno = saved;
        return 0;
    }
    long mine = __atomic_add_fetch(&counters[kind], 1, __ATOMIC_SEQ_CST);
    long every = __atomic_add_fetch(&counters[K_KINDS], 1, __ATOMIC_SEQ_CST);
    long n = fail_kind < 0 ? every : (fail_kind == kind ? mine : 0);
    if (fail_suffix != NULL) {
        size_t len = strlen(where), end = strlen(fail_suffix);
        int ends = len >= end && strcmp(where + len - end, fail_suffix) == 0;
        n = n && ends ? __atomic_add_fetch(&counters[K_KINDS + 1], 1, __ATOMIC_SEQ_CST) : 0;
    }
    int fails = fail_at > 0 && n == fail_at;
    if (fails) note("FAIL", where);
    note(KIND_NAMES[kind], where);
    errno = fails ? fail_errno : saved;
    return fails;
}

#define REAL(ret, name, ...)                                   \
    static ret (*real_##name)(__VA_ARGS__);                    \
    if (real_##name == NULL) real_##name = dlsym(RTLD_NEXT, #name)

static int writes(int flags) {
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0;
}

static mode_t mode_of(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    REAL(int, open, const char *, int, ...);
    if (writes(flags) && hit(K_OPEN, AT_FDCWD, path)) return -1;
    return real_open(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    REAL(int, open64, const char *, int, ...);
    if (writes(flags) && hit(K_OPEN, AT_FDCWD, path)) return -1;
    return real_open64(path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    REAL(int, openat, int, const char *, int, ...);
    if (writes(flags) && hit(K_OPEN, dirfd, path)) return -1;
    return real_openat(dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_of(flags, ap);
    va_end(ap);
    REAL(int, openat64, int, const char *, int, ...);
    if (writes(flags) && hit(K_OPEN, dirfd, path)) return -1;
    return real_openat64(dirfd, path, flags, mode);
}

int creat(const char *path, mode_t mode) {
    REAL(int, creat, const char *, mode_t);
    if (hit(K_OPEN, AT_FDCWD, path)) return -1;
    return real_creat(path, mode);
}

int creat64(const char *path, mode_t mode) {
    REAL(int, creat64, const char *, mode_t);
    if (hit(K_OPEN, AT_FDCWD, path)) return -1;
    return real_creat64(path, mode);
}

static int fopen_writes(const char *mode) { return strpbrk(mode, "wax+") != NULL; }

FILE *fopen(const char *path, const char *mode) {
    REAL(FILE *, fopen, const char *, const char *);
    if (fopen_writes(mode) && hit(K_OPEN, AT_FDCWD, path)) return NULL;
    return real_fopen(path, mode);
}

FILE *fopen64(const char *path, const char *mode) {
    REAL(FILE *, fopen64, const char *, const char *);
    if (fopen_writes(mode) && hit(K_OPEN, AT_FDCWD, path)) return NULL;
    return real_fopen64(path, mode);
}

ssize_t write(int fd, const void *buf, size_t count) {
    REAL(ssize_t, write, int, const void *, size_t);
    if (hit(K_WRITE, fd, NULL)) return -1;
    return real_write(fd, buf, count);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt) {
    REAL(ssize_t, writev, int, const struct iovec *, int);
    if (hit(K_WRITE, fd, NULL)) return -1;
    return real_writev(fd, iov, iovcnt);
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
    if (hit(K_WRITE, fd, NULL)) return -1;
    return real_pwrite(fd, buf, count, offset);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off_t offset) {
    REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
    if (hit(K_WRITE, fd, NULL)) return -1;
    return real_pwrite64(fd, buf, count, offset);
}

ssize_t pwritev(int fd, const struct iovec *iov, int iovcnt, off_t offset) {
    REAL(ssize_t, pwritev, int, const struct iovec *, int, off_t);
    if (hit(K_WRITE, fd, NULL)) return -1;
    return real_pwritev(fd, iov, iovcnt, offset);
}

ssize_t pwritev2(int fd, const struct iovec *iov, int iovcnt, off_t offset, int flags) {
    REAL(ssize_t, pwritev2, int, const struct iovec *, int, off_t, int);
    if (hit(K_WRITE, fd, NULL)) return -1;
    return real_pwritev2(fd, iov, iovcnt, offset, flags);
}

ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count) {
    REAL(ssize_t, sendfile, int, int, off_t *, size_t);
    if (hit(K_COPY, out_fd, NULL)) return -1;
    return real_sendfile(out_fd, in_fd, offset, count);
}

ssize_t sendfile64(int out_fd, int in_fd, off_t *offset, size_t count) {
    REAL(ssize_t, sendfile64, int, int, off_t *, size_t);
    if (hit(K_COPY, out_fd, NULL)) return -1;
    return real_sendfile64(out_fd, in_fd, offset, count);
}

ssize_t copy_file_range(int in_fd, off_t *in_off, int out_fd, off_t *out_off, size_t len,
                        unsigned int flags) {
    REAL(ssize_t, copy_file_range, int, off_t *, int, off_t *, size_t, unsigned int);
    if (hit(K_COPY, out_fd, NULL)) return -1;
    return real_copy_file_range(in_fd, in_off, out_fd, out_off, len, flags);
}

int ftruncate(int fd, off_t length) {
    REAL(int, ftruncate, int, off_t);
    if (hit(K_TRUNCATE, fd, NULL)) return -1;
    return real_ftruncate(fd, length);
}

int ftruncate64(int fd, off_t length) {
    REAL(int, ftruncate64, int, off_t);
    if (hit(K_TRUNCATE, fd, NULL)) return -1;
    return real_ftruncate64(fd, length);
}

int fsync(int fd) {
    REAL(int, fsync, int);
    if (hit(K_FSYNC, fd, NULL)) return -1;
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(int, fdatasync, int);
    if (hit(K_FSYNC, fd, NULL)) return -1;
    return real_fdatasync(fd);
}

/* A rename's fault is counted on its destination, and on its source when only that is under
 * the folder (a file renamed out of it). */
static int rename_hits(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    char where[PATH_MAX + 8];
    init();
    if (dir != NULL && resolve(newdirfd, newpath, where, sizeof where) == 0 && under(where))
        return hit(K_RENAME, newdirfd, newpath);
    return hit(K_RENAME, olddirfd, oldpath);
}

int rename(const char *oldpath, const char *newpath) {
    REAL(int, rename, const char *, const char *);
    if (rename_hits(AT_FDCWD, oldpath, AT_FDCWD, newpath)) return -1;
    return real_rename(oldpath, newpath);
}

int renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    REAL(int, renameat, int, const char *, int, const char *);
    if (rename_hits(olddirfd, oldpath, newdirfd, newpath)) return -1;
    return real_renameat(olddirfd, oldpath, newdirfd, newpath);
}

int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath,
              unsigned int flags) {
    REAL(int, renameat2, int, const char *, int, const char *, unsigned int);
    if (rename_hits(olddirfd, oldpath, newdirfd, newpath)) return -1;
    return real_renameat2(olddirfd, oldpath, newdirfd, newpath, flags);
}

/* A folder made where one is, or a file removed that is not there, fails anyway: not a call a
 * disk fault reaches first (Path.mkdir(exist_ok=True), a removal of what may be gone). */
static int exists(int dirfd, const char *path) {
    struct stat st;
    return syscall(SYS_newfstatat, dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int mkdir(const char *path, mode_t mode) {
    REAL(int, mkdir, const char *, mode_t);
    if (!exists(AT_FDCWD, path) && hit(K_MKDIR, AT_FDCWD, path)) return -1;
    return real_mkdir(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
    REAL(int, mkdirat, int, const char *, mode_t);
    if (!exists(dirfd, path) && hit(K_MKDIR, dirfd, path)) return -1;
    return real_mkdirat(dirfd, path, mode);
}

int unlink(const char *path) {
    REAL(int, unlink, const char *);
    if (exists(AT_FDCWD, path) && hit(K_UNLINK, AT_FDCWD, path)) return -1;
    return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
    REAL(int, unlinkat, int, const char *, int);
    int kind = (flags & AT_REMOVEDIR) ? K_RMDIR : K_UNLINK;
    if (exists(dirfd, path) && hit(kind, dirfd, path)) return -1;
    return real_unlinkat(dirfd, path, flags);
}

int rmdir(const char *path) {
    REAL(int, rmdir, const char *);
    if (exists(AT_FDCWD, path) && hit(K_RMDIR, AT_FDCWD, path)) return -1;
    return real_rmdir(path);
}

int link(const char *oldpath, const char *newpath) {
    REAL(int, link, const char *, const char *);
    if (hit(K_LINK, AT_FDCWD, newpath)) return -1;
    return real_link(oldpath, newpath);
}

int linkat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, int flags) {
    REAL(int, linkat, int, const char *, int, const char *, int);
    if (hit(K_LINK, newdirfd, newpath)) return -1;
    return real_linkat(olddirfd, oldpath, newdirfd, newpath, flags);
}

int symlink(const char *target, const char *path) {
    REAL(int, symlink, const char *, const char *);
    if (hit(K_LINK, AT_FDCWD, path)) return -1;
    return real_symlink(target, path);
}

int symlinkat(const char *target, int dirfd, const char *path) {
    REAL(int, symlinkat, const char *, int, const char *);
    if (hit(K_LINK, dirfd, path)) return -1;
    return real_symlinkat(target, dirfd, path);
}
