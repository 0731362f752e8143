/*
 * mapguard.c — a file that shrinks under its memory map is an error, not a
 * crash.
 *
 * Segments are mapped MAP_SHARED (file.c). When a mapped file is truncated
 * (by a careless tool, a full disk's repair, a user), touching a page past
 * its new end raises SIGBUS, whose default action ends the process: one
 * damaged file would take a daemon down with every client. So the library
 * keeps a table of its live mappings and installs a SIGBUS handler (once,
 * when the first mapping is registered). For a fault inside a registered
 * mapping the handler maps anonymous zero pages over the rest of it (from
 * the faulting page to its end: all of it lies past the file's new end),
 * marks the mapping damaged, and returns; the access is retried and reads
 * zeros. The readers are already hardened against arbitrary bytes
 * (checksums, bounds), so the zeros become at worst a checksum error, and
 * the public entry points check the damaged mark (fa_map_damaged) and fail
 * with FATHOM_ECORRUPT naming the file.
 *
 * A fault anywhere else goes to the handler that was there before ours
 * (the one the program or a sanitizer installed), or, when that was the
 * default action, the default action is restored and the signal raised
 * again, so the process dies exactly as it would have without us.
 *
 * The table is read from the signal handler, so it is a fixed array of
 * slots with atomic fields, no lock: a slot is claimed with a
 * compare-and-swap, its length written, then its start published with a
 * release store; the handler loads the start with acquire, then the
 * length. Everything the handler calls (syscall mmap, sigaction, raise)
 * is async-signal-safe. mmap is called through syscall(2) so that a
 * sanitizer's mmap interceptor is not entered from the handler.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/util.h"

/* More mappings than this are not guarded (they work, unprotected): a
 * process would need thousands of open handles on large indexes. */
#define GUARD_SLOTS 8192

typedef struct guard_slot {
	atomic_int state;          /* 0 free, 1 claimed */
	atomic_uintptr_t start;    /* 0 while not published */
	atomic_size_t len;
	atomic_int damaged;
} guard_slot;

static guard_slot slots[GUARD_SLOTS];
static atomic_size_t slots_used;        /* high-water mark: the handler scans this far */
static struct sigaction previous;       /* the SIGBUS action before ours */
static atomic_int installed;
static uintptr_t page_size;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;

static void chain(int sig, siginfo_t *si, void *uc)
{
	if (previous.sa_flags & SA_SIGINFO) {
		if (previous.sa_sigaction) {
			previous.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	/* The default action (a SIGBUS from a fault cannot be ignored): put it
	 * back and raise the signal again; it is delivered when this handler
	 * returns, and a faulting access faults again anyway. */
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGBUS, &dfl, NULL);
	raise(SIGBUS);
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	/* si_code > 0: raised by the kernel for an access, not sent by kill */
	if (si && si->si_code > 0) {
		uintptr_t a = (uintptr_t)si->si_addr;
		size_t n = atomic_load_explicit(&slots_used, memory_order_acquire);
		for (size_t i = 0; i < n; i++) {
			uintptr_t start = atomic_load_explicit(&slots[i].start, memory_order_acquire);
			if (!start || a < start)
				continue;
			size_t len = atomic_load_explicit(&slots[i].len, memory_order_relaxed);
			if (a - start >= len)
				continue;
			uintptr_t page = a & ~(page_size - 1);
			size_t rest = start + len - page;
			int saved = errno;   /* the interrupted code's */
			long r = syscall(SYS_mmap, (void *)page, rest, PROT_READ,
			                 MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			errno = saved;
			if (r == -1)
				break;   /* cannot repair it: as if we were not there */
			atomic_store_explicit(&slots[i].damaged, 1, memory_order_release);
			return;
		}
	}
	chain(sig, si, uc);
}

static void install(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	page_size = ps > 0 ? (uintptr_t)ps : 4096;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous) == 0)
		atomic_store(&installed, 1);
}

int fa_guard_add(const void *data, size_t len)
{
	if (!data || !len)
		return -1;
	pthread_once(&install_once, install);
	if (!atomic_load(&installed))
		return -1;
	for (size_t i = 0; i < GUARD_SLOTS; i++) {
		int want = 0;
		if (!atomic_compare_exchange_strong(&slots[i].state, &want, 1))
			continue;
		atomic_store_explicit(&slots[i].damaged, 0, memory_order_relaxed);
		atomic_store_explicit(&slots[i].len, len, memory_order_relaxed);
		atomic_store_explicit(&slots[i].start, (uintptr_t)data, memory_order_release);
		/* raise the high-water mark past this slot */
		size_t used = atomic_load(&slots_used);
		while (used < i + 1 && !atomic_compare_exchange_weak(&slots_used, &used, i + 1))
			;
		return (int)i;
	}
	return -1;   /* full: this mapping goes unguarded */
}

void fa_guard_remove(int slot)
{
	if (slot < 0 || slot >= GUARD_SLOTS)
		return;
	atomic_store_explicit(&slots[slot].start, 0, memory_order_release);
	atomic_store_explicit(&slots[slot].len, 0, memory_order_relaxed);
	atomic_store_explicit(&slots[slot].damaged, 0, memory_order_relaxed);
	atomic_store_explicit(&slots[slot].state, 0, memory_order_release);
}

int fa_guard_damaged(int slot)
{
	if (slot < 0 || slot >= GUARD_SLOTS)
		return 0;
	return atomic_load_explicit(&slots[slot].damaged, memory_order_acquire);
}
