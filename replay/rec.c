/* rec.c — the recorder: a library preloaded into the program that applies a
 * patch (format.h) before main and writes the value trace.
 *
 *   SKEL_PATCH=app.patch SKEL_VALUES=app.vals LD_PRELOAD=libskelrec.so app
 *
 * Order of business (rec_init, a constructor, so it runs before the
 * executable's own initialisers and _start):
 *   1. both variables set, the patch readable, and the running executable
 *      the one the patch names (build-id from the loaded program headers, or
 *      FNV-1a of /proc/self/exe) — otherwise do nothing at all: the library
 *      is inherited by every process the program starts, valgrind's launcher
 *      included (PLATFORM-NOTES.md, "Runtime patching");
 *   2. plan: each probed pc gets a span of whole instructions of its block,
 *      >= 5 bytes, for a jmp rel32; int3 where no such span exists;
 *   3. emit trampolines into pages mapped within +-2 GiB of the text;
 *   4. open the value trace, install signal handlers, then rewrite the text.
 * Any failure after step 1 is reported ("skel-rec: ...") and ends the
 * program with status 125: a half-recorded run is worse than none.
 *
 * Hot path (per recorded value, no system call, no flags touched):
 *     mov rdx, fs:[rec_cursor]; mov [rdx], rax; lea rdx, [rdx+8];
 *     mov fs:[rec_cursor], rdx
 * rec_cursor is an initial-exec TLS variable, so its fs offset is fixed.
 * Each thread's buffer is followed by a PROT_NONE guard page; the store
 * that hits it faults, and the SIGSEGV handler flushes the buffer, resets
 * the cursor (TLS and rdx in the ucontext) and lets the store retry.
 *
 * Trampolines are flag-free: `lea rsp, [rsp-128]` steps over the red zone
 * (pushf would cost 5x, PLATFORM-NOTES), rax and rdx are saved by push and
 * restored by pop; every other register and the flags are never written. */
#include "replay/rec.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

rec_state R = { .fd = -1 };

/* ------------------------------------------------------------- messages */

void rec_say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof buf, "skel-rec: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 2)
		n = sizeof buf - 2;
	buf[n++] = '\n';
	ssize_t w = write(2, buf, n);
	(void)w;
}

__attribute__((noreturn)) void rec_die(const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	rec_say("%s; not running the program half-recorded", buf);
	_exit(125);
}
/* ---------------------------------------------------------- the image */

static int rec_image_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	rec_image *img = data;
	img->bias = info->dlpi_addr;
	img->lo = UINT64_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = img->bias + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			if (lo < img->lo)
				img->lo = lo;
			if (lo + ph->p_memsz > img->hi)
				img->hi = lo + ph->p_memsz;
			if ((ph->p_flags & PF_X) && img->nx < REC_MAX_SEGS) {
				img->xlo[img->nx] = lo;
				img->xhi[img->nx] = lo + ph->p_memsz;
				img->xprot[img->nx++] =
					(ph->p_flags & PF_R ? PROT_READ : 0) |
					PROT_EXEC;
			}
		} else if (ph->p_type == PT_NOTE && !img->build_id) {
			size_t align = ph->p_align == 8 ? 8 : 4;
			const uint8_t *p = (const uint8_t *)lo;
			const uint8_t *end = p + ph->p_memsz;
			while (end - p >= 12) {
				const ElfW(Nhdr) *nh = (const void *)p;
				const uint8_t *name = p + 12;
				const uint8_t *desc = name +
					((nh->n_namesz + align - 1) & -align);
				if (nh->n_type == NT_GNU_BUILD_ID &&
				    nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
				    desc + nh->n_descsz <= end) {
					img->build_id = desc;
					img->build_id_len = nh->n_descsz;
					break;
				}
				p = desc + ((nh->n_descsz + align - 1) & -align);
			}
		}
	}
	return 1;	/* the first entry is the executable */
}

static int rec_exe_hash(uint64_t *h)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	static uint8_t buf[1 << 16];
	uint64_t x = SKEL_FNV1A64_INIT;
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		x = skel_fnv1a64(x, buf, (size_t)n);
	close(fd);
	*h = x;
	return n < 0 ? -1 : 0;
}

/* The identity the patch names, if it is this executable's. */
static int rec_identity(const patch *p, uint8_t id[SKEL_ID_MAX],
			uint32_t *len)
{
	if (p->id_kind == SKEL_ID_BUILDID) {
		if (!R.img.build_id || R.img.build_id_len != p->id_len ||
		    memcmp(R.img.build_id, p->id, p->id_len))
			return -1;
		memcpy(id, p->id, p->id_len);
		*len = p->id_len;
		return 0;
	}
	uint64_t h;
	if (rec_exe_hash(&h))
		return -1;
	skel_id_from_hash(h, id, len);
	return *len == p->id_len && !memcmp(id, p->id, *len) ? 0 : -1;
}

static int rec_in_text(uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < R.img.nx; i++)
		if (lo >= R.img.xlo[i] && hi <= R.img.xhi[i])
			return 1;
	return 0;
}
/* ------------------------------------------------------------- set-up */

static void rec_text_write(const rec_site *sv, size_t ns, const uint64_t *tramp)
{
	for (int i = 0; i < R.img.nx; i++) {
		uint64_t lo = R.img.xlo[i] & ~(REC_PAGE - 1);
		if (mprotect((void *)lo, R.img.xhi[i] - lo,
			     PROT_READ | PROT_WRITE))
			rec_die("cannot make the text writable: %s",
				strerror(errno));
	}
	for (size_t i = 0; i < ns; i++) {
		uint8_t *p = (uint8_t *)sv[i].start;
		if (sv[i].int3) {
			p[0] = 0xcc;
			continue;
		}
		int32_t d = (int32_t)(tramp[i] - (sv[i].start + 5));
		p[0] = 0xe9;
		memcpy(p + 1, &d, 4);
		memset(p + 5, 0xcc, sv[i].end - sv[i].start - 5);
	}
	for (int i = 0; i < R.img.nx; i++) {
		uint64_t lo = R.img.xlo[i] & ~(REC_PAGE - 1);
		if (mprotect((void *)lo, R.img.xhi[i] - lo, R.img.xprot[i]))
			rec_die("cannot restore the text protection: %s",
				strerror(errno));
	}
}
static rec_probe *rec_probes_load(void)
{
	size_t n = R.patch.nprobes;
	rec_probe *pv = calloc(n ? n : 1, sizeof *pv);
	if (!pv)
		rec_die("out of memory");
	for (size_t i = 0; i < n; i++) {
		patch_probe p = R.patch.probes[i];
		p.pc += R.img.bias;
		p.block_start += R.img.bias;
		p.block_end += R.img.bias;
		if (!rec_in_text(p.block_start, p.block_end))
			rec_die("patch line %u: block [%" PRIx64 ", %" PRIx64
				") is not in the executable's text", p.line,
				R.patch.probes[i].block_start,
				R.patch.probes[i].block_end);
		pv[i] = (rec_probe){ p, (uint32_t)i };
	}
	size_t sorted = 1;	/* skel gen writes them in order mostly */
	while (sorted < n && rec_probe_cmp(&pv[sorted - 1], &pv[sorted]) <= 0)
		sorted++;
	if (sorted < n)
		qsort(pv, n, sizeof *pv, rec_probe_cmp);
	return pv;
}
static void rec_header_write(const uint8_t *id, uint32_t id_len)
{
	vt_header h = { .version = VT_VERSION, .id_len = id_len,
			.id_kind = R.patch.id_kind,
			.patch_hash = patch_hash(&R.patch),
			.image_base = R.img.bias };
	memcpy(h.magic, VT_MAGIC, 8);
	memcpy(h.id, id, id_len);
	vt_header_seal(&h);
	if (write(R.fd, &h, sizeof h) != (ssize_t)sizeof h)
		rec_die("cannot write the value trace: %s", strerror(errno));
}

/* The value file, locked: a second process that inherits the environment
 * (fork+exec of the same program) finds it taken and records nothing. */
static int rec_file_open(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		rec_say("%s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (R.verbose)
			rec_say("%s: in use by another recorder; not recording",
				path);
		close(fd);
		return -1;
	}
	struct stat st;	/* a pipe or /dev/null is fine too */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ftruncate(fd, 0))
		rec_die("%s: %s", path, strerror(errno));
	R.pipe = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
	return fd;
}

static void rec_tls_offset(void)
{
	uint64_t tp;
	__asm__("mov %%fs:0, %0" : "=r"(tp));
	R.cursor_off = (long)((uint64_t)&rec_cursor - tp);
	if (!rec_fits32(R.cursor_off))
		rec_die("TLS offset out of reach");
}

__attribute__((constructor)) static void rec_init(void)
{
	const char *ppath = getenv("SKEL_PATCH");
	const char *vpath = getenv("SKEL_VALUES");
	const char *verb = getenv("SKEL_VERBOSE");
	R.verbose = verb && !strcmp(verb, "1");
	/* testing: every site an int3 (tests/transparency.sh) */
	const char *i3 = getenv("SKEL_INT3");
	R.force_int3 = i3 && !strcmp(i3, "1");
	if (!ppath || !vpath || !*ppath || !*vpath)
		return;
	dl_iterate_phdr(rec_image_cb, &R.img);
	char err[FMT_ERR_LEN];
	if (patch_load(&R.patch, ppath, err)) {
		rec_say("%s: %s", ppath, err);
		return;
	}
	uint8_t id[SKEL_ID_MAX];
	uint32_t id_len;
	if (rec_identity(&R.patch, id, &id_len)) {
		if (R.verbose)
			rec_say("not the patched executable; not recording");
		patch_free(&R.patch);
		return;
	}
	ZydisDecoderInit(&rec_dec, ZYDIS_MACHINE_MODE_LONG_64,
			 ZYDIS_STACK_WIDTH_64);
	R.have_gsbase = (getauxval(AT_HWCAP2) & 2) != 0; /* HWCAP2_FSGSBASE */
	rec_tls_offset();
	rec_probe *pv = rec_probes_load();
	rec_site *sv;
	size_t ns;
	rec_plan(pv, R.patch.nprobes, &sv, &ns);
	R.nsites = ns;
	uint64_t *tramp = calloc(ns ? ns : 1, sizeof *tramp);
	rec_emit e;
	if (!tramp)
		rec_die("out of memory");
	rec_emit_all(pv, sv, ns, &e, tramp);

	R.fd = rec_file_open(vpath);
	if (R.fd < 0) {
		/* the trampolines stay mapped but unused: nothing patched */
		free(tramp), free(sv), free(pv), free(e.map);
		R.fd = -1;
		return;
	}
	R.pid = getpid();
	if (rec_buffer_map(&R.sink) || pthread_key_create(&R.key,
							  rec_on_thread_exit))
		rec_die("out of memory");
	rec_header_write(id, id_len);
	rec_chunk(VT_TRAMPOLINE_MAP, 0, e.map, e.nmap * sizeof *e.map);
	rec_thread_open(0, VT_NO_PARENT, 0);
	pthread_atfork(NULL, NULL, rec_atfork_child);
	R.active = 1;
	rec_signals_install();
	rec_text_write(sv, ns, tramp);
	if (R.pipe)
		rec_flusher_start();
	rec_stats("start");
	free(tramp), free(sv), free(pv), free(e.map);
}
