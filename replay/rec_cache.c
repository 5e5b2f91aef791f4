/* rec_cache.c — start-up work kept between runs.  Planning an object's
 * sites and emitting its trampolines depends on the object and its patch
 * section, not on the process; for libc it is most of the start-up (and
 * under valgrind, where every access the recorder makes is logged, nearly
 * all of it).  So the first process that patches an object keeps the
 * result in the cache ($XDG_CACHE_HOME/skel, else ~/.cache/skel):
 *
 *   set-<hash of the patch file>.bin   the sections of a patch set that
 *        parsed: identity, patch_hash, where in the text; the text is then
 *        parsed only for a section that has no plan
 *   plan-<identity>-<patch_hash>.bin   one object's plan: the trampoline
 *        code as emitted in that process, the offsets of its fields that
 *        depend on the process (rec.h, REC_REL32...), the text writes, the
 *        int3 sites and the map, link-time or code-relative
 *
 * A later process reads the code straight into its trampoline pages (the
 * kernel copies it), adds one amount per kind of field, and rebases the
 * text writes and the map.  Every file has a header (magic, version, sizes)
 * and a checksum over all its bytes; a plan also names the conditions it
 * was made under (the recorder's build, SKEL_INT3, RTM, FSGSBASE, where
 * the signal return trampoline is).  A file that does not match in every
 * respect is ignored and made again, never trusted.  Files are written to
 * a temporary name and renamed: two processes racing write the same bytes
 * and the last rename wins.  A cache that cannot be written only costs the
 * planning each time. */
#include "replay/rec.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REC_PLAN_MAGIC "skelplan"
#define REC_SET_MAGIC "skelsets"
#define REC_CACHE_VERSION 10	/* 3: probes store whole words (vt_pack);
				 * 4: sites' quiet entries (patch_link);
				 * 5: return sites' quiet copies (patch_qret);
				 * 6: set index: where a section's tail is,
				 * the map's sum in a plan (vt_map_ref);
				 * 7: patch_hash covers treg probes (an
				 * index of a patch with them, written
				 * before, holds other hashes);
				 * 8: a plan's text writes as the writer
				 * had them (rec_write), read as they are
				 * where the layout is the writer's;
				 * 9: and the patched text;
				 * 10: int3 blocks name their site, the
				 * header the sites in order */

/* ------------------------------------------------------------ hashing */

#define rec_hash skel_hash4	/* format.h: the driver computes it too */

/* The files' checksum: Fletcher-like sums in four lanes, additions only
 * (damage and truncation are what it must catch; the hash above names
 * the patch text). */
static uint64_t rec_sum(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t s[4] = { h, 0, 0, 0 }, t[4] = { n, 0, 0, 0 };
	size_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, b + i + 8 * k, 8);
			s[k] += w;
			t[k] += s[k];
		}
	for (; i < n; i++) {
		s[0] += b[i];
		t[0] += s[0];
	}
	uint64_t x = 0;
	for (int k = 0; k < 4; k++)
		x = (x ^ s[k] ^ t[k] << 1) * 0x100000001b3ull;
	return x ^ x >> 31;
}

/* ------------------------------------------------------------ the cache */

static char rec_dir[PATH_MAX];
static int rec_dir_state;	/* 0 not looked up, 1 usable, -1 off */

int rec_cache_on(void)
{
	if (rec_dir_state)
		return rec_dir_state > 0;
	rec_dir_state = -1;
	const char *off = getenv("SKEL_PLAN_CACHE");
	if (off && !strcmp(off, "0"))
		return 0;
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (x && *x == '/')
		n = snprintf(rec_dir, sizeof rec_dir, "%s/skel", x);
	else if (home && *home)
		n = snprintf(rec_dir, sizeof rec_dir, "%s/.cache/skel", home);
	else
		return 0;
	if (n <= 0 || (size_t)n >= sizeof rec_dir - 64)
		return 0;
	/* the parents as well: the recorder may run before any skel command
	 * made the cache */
	for (char *s = rec_dir + 1; *s; s++)
		if (*s == '/') {
			*s = 0;
			mkdir(rec_dir, 0755);
			*s = '/';
		}
	mkdir(rec_dir, 0755);
	rec_dir_state = 1;
	return 1;
}

/* Reads exactly n bytes at off. */
static int rec_pread(int fd, void *to, size_t n, uint64_t off)
{
	for (size_t got = 0; got < n;) {
		ssize_t k = pread(fd, (char *)to + got, n - got, (off_t)(off + got));
		if (k <= 0)
			return -1;
		got += (size_t)k;
	}
	return 0;
}

/* Writes the pieces to name via a temporary file and a rename. */
static void rec_file_put(const char *name, const struct iovec *v, int nv)
{
	char tmp[PATH_MAX + 64], path[PATH_MAX + 64];
	snprintf(path, sizeof path, "%s/%s", rec_dir, name);
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int bad = fd < 0;
	for (int i = 0; !bad && i < nv; i++)
		for (size_t done = 0; !bad && done < v[i].iov_len;) {
			ssize_t k = write(fd, (const char *)v[i].iov_base + done,
					  v[i].iov_len - done);
			bad = k <= 0;
			done += bad ? 0 : (size_t)k;
		}
	if (fd >= 0 && close(fd))
		bad = 1;
	if (!bad && rename(tmp, path))
		bad = 1;
	if (bad) {
		if (R.verbose)
			rec_say("%s: cannot keep it (%s); planning again next "
				"time", path, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		return;
	}
	R.plans_written++;
}

/* ------------------------------------------------------------ patch set */

typedef struct rec_set_hdr {
	char magic[8];
	uint32_t version, hdr_size;
	uint64_t n;		/* sections */
	uint64_t text_len, text_hash;
	uint64_t sum;		/* rec_hash of header (sum 0) and entries */
} rec_set_hdr;

typedef struct rec_set_ent {
	uint8_t id[SKEL_ID_MAX];
	uint32_t id_len, id_kind;
	uint64_t patch_hash;
	uint64_t off, len;	/* the section's text */
	uint64_t tail;		/* where its link, qret and closed lines
				   start in it; REC_NO_TAIL: none to read
				   (rec_tail_start) */
} rec_set_ent;
#define REC_NO_TAIL UINT64_MAX
static uint64_t rec_tail_start(const char *b, const char *e);

static const char *rec_text;	/* the patch file, mapped for good */
static size_t rec_text_len;

/* The patch text's skel_hash4: the driver's (SKEL_PATCH_HASH: 16 hex
 * digits, then the file's inode, size and mtime when it hashed it),
 * if the file `st` is still that one; else computed. */
static uint64_t rec_text_hash(const struct stat *st)
{
	const char *e = getenv("SKEL_PATCH_HASH");
	char want[128];
	if (e && strlen(e) > 17 && e[16] == ':') {
		snprintf(want, sizeof want, ":%ju:%jd:%jd.%09ld", (uintmax_t)st->st_ino,
			 (intmax_t)st->st_size, (intmax_t)st->st_mtim.tv_sec,
			 (long)st->st_mtim.tv_nsec);
		char *end;
		uint64_t h = strtoull(e, &end, 16);
		if (end == e + 16 && !strcmp(end, want))
			return h;
	}
	return rec_hash(0, rec_text, rec_text_len);
}

/* Under lackey, after the driver's run under valgrind's lightest tool has
 * read (and so checked) the plans of the objects present at the start,
 * the loader's included (driver/run.c, plan_under_valgrind):
 * SKEL_PLANS_CHECKED=1 spares those reads their checksum, and relocations
 * that move nothing (valgrind lays a process out the same each time)
 * their walk: tens of millions of instructions, each logged by lackey.
 * Plans read later (dlopen) are checked as always. */
static int rec_plans_trusted(void)
{
	const char *e = getenv("SKEL_PLANS_CHECKED");
	return (!R.active || R.cur->loader) && e && !strcmp(e, "1");
}
static rec_set_ent rec_sec[PATCH_MAX_OBJECTS];
static uint8_t rec_parsed[PATCH_MAX_OBJECTS];
static uint64_t rec_set_th;	/* the patch text's hash (cache on), or 0 */

static uint64_t rec_set_sum(rec_set_hdr h, const rec_set_ent *v)
{
	h.sum = 0;
	return rec_sum(rec_sum(0, &h, sizeof h), v, h.n * sizeof *v);
}

/* Where the next section starts (patch.c's rule: a line starting with
 * the magic), or len. */
static size_t rec_next_section(const char *t, size_t len, size_t from)
{
	size_t m = strlen(PATCH_MAGIC);
	for (size_t i = from; i < len; i++)
		if (t[i] == '\n' && len - (i + 1) >= m &&
		    !memcmp(t + i + 1, PATCH_MAGIC, m))
			return i + 1;
	return len;
}

static int rec_set_from_index(uint64_t th)
{
	char path[PATH_MAX + 64];
	rec_set_hdr h;
	snprintf(path, sizeof path, "%s/set-%016" PRIx64 ".bin", rec_dir, th);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	int ok = !fstat(fd, &st) && !rec_pread(fd, &h, sizeof h, 0) &&
		 !memcmp(h.magic, REC_SET_MAGIC, 8) &&
		 h.version == REC_CACHE_VERSION && h.hdr_size == sizeof h &&
		 h.n >= 1 && h.n <= PATCH_MAX_OBJECTS &&
		 (uint64_t)st.st_size == sizeof h + h.n * sizeof(rec_set_ent) &&
		 h.text_len == rec_text_len && h.text_hash == th &&
		 !rec_pread(fd, rec_sec, h.n * sizeof *rec_sec, sizeof h) &&
		 rec_set_sum(h, rec_sec) == h.sum;
	close(fd);
	for (uint64_t k = 0; ok && k < h.n; k++)
		ok = rec_sec[k].id_len <= SKEL_ID_MAX &&
		     rec_sec[k].off <= rec_text_len &&
		     rec_sec[k].len <= rec_text_len - rec_sec[k].off &&
		     (rec_sec[k].tail == REC_NO_TAIL || rec_sec[k].tail <= rec_sec[k].len);
	if (!ok)
		return -1;
	R.set.obj = calloc(h.n, sizeof *R.set.obj);
	if (!R.set.obj)
		return -1;
	R.set.n = h.n;
	for (size_t k = 0; k < R.set.n; k++) {
		patch *p = &R.set.obj[k];
		p->version = PATCH_VERSION;
		p->id_kind = rec_sec[k].id_kind;
		p->id_len = rec_sec[k].id_len;
		memcpy(p->id, rec_sec[k].id, p->id_len);
		R.phash[k] = rec_sec[k].patch_hash;
	}
	return 0;
}

static void rec_set_index_write(uint64_t th)
{
	rec_set_hdr h = { .version = REC_CACHE_VERSION, .hdr_size = sizeof h,
			  .n = R.set.n, .text_len = rec_text_len,
			  .text_hash = th };
	memcpy(h.magic, REC_SET_MAGIC, 8);
	size_t at = 0;
	for (size_t k = 0; k < R.set.n; k++) {
		const patch *p = &R.set.obj[k];
		rec_set_ent *x = &rec_sec[k];
		size_t next = rec_next_section(rec_text, rec_text_len, at);
		memset(x, 0, sizeof *x);
		memcpy(x->id, p->id, p->id_len);
		x->id_len = p->id_len;
		x->id_kind = p->id_kind;
		x->patch_hash = R.phash[k];
		x->off = at;
		x->len = next - at;
		x->tail = rec_tail_start(rec_text + at, rec_text + next);
		at = next;
	}
	h.sum = rec_set_sum(h, rec_sec);
	char name[64];
	snprintf(name, sizeof name, "set-%016" PRIx64 ".bin", th);
	struct iovec v[2] = { { &h, sizeof h },
			      { rec_sec, R.set.n * sizeof *rec_sec } };
	rec_file_put(name, v, 2);
}

int rec_set_load(const char *path, char err[FMT_ERR_LEN])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		/* patch.c says what is wrong with it */
		if (fd >= 0)
			close(fd);
		if (patch_set_load(&R.set, path, err))
			return -1;
		for (size_t k = 0; k < R.set.n; k++)
			R.phash[k] = patch_hash(&R.set.obj[k]);
		return 0;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(err, FMT_ERR_LEN, "%s", strerror(errno));
		return -1;
	}
	rec_text = m;
	rec_text_len = (size_t)st.st_size;
	int cache = rec_cache_on();
	uint64_t th = cache ? rec_text_hash(&st) : 0;
	rec_set_th = th;
	if (cache && rec_set_from_index(th) == 0)
		return 0;
	if (patch_set_parse(&R.set, rec_text, rec_text_len, err))
		return -1;
	for (size_t k = 0; k < R.set.n; k++) {
		R.phash[k] = patch_hash(&R.set.obj[k]);
		rec_parsed[k] = 1;
	}
	if (cache)
		rec_set_index_write(th);
	return 0;
}

const patch *rec_section_probes(uint32_t k)
{
	patch *p = &R.set.obj[k];
	if (rec_parsed[k] || !rec_text)
		return p;
	char err[FMT_ERR_LEN];
	if (patch_parse(p, rec_text + rec_sec[k].off, rec_sec[k].len, err))
		rec_die("section %u of the patch: %s", k, err);
	if (patch_hash(p) != R.phash[k])
		rec_die("section %u of the patch is not what its index says", k);
	rec_parsed[k] = 1;
	return p;
}

/* Up to two blank-separated hex numbers (no 0x) ending a line: how many
 * (-1: anything else).  sscanf cost thousands of instructions a line,
 * which skel check's lackey logs one by one. */
static int rec_hex2(const char *s, unsigned long long *a, unsigned long long *b)
{
	unsigned long long *v[2] = { a, b };
	int n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\n' || !*s)
			return n;
		if (n == 2)
			return -1;
		unsigned long long x = 0;
		int d = 0;
		for (;; s++, d++) {
			int c = *s, k = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
				c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
			if (k < 0)
				break;
			if (d == 16)
				return -1;
			x = x << 4 | (unsigned)k;
		}
		if (!d || (*s != ' ' && *s != '\t' && *s != '\n' && *s))
			return -1;
		*v[n++] = x;
	}
}

/* What a line of a section's tail is: 'l' link, 'q' qret, 'c' closed
 * (with its numbers in *a, *c), ' ' blank, 0 none of them. */
static int rec_tail_line(const char *ls, size_t len, unsigned long long *a,
			 unsigned long long *c)
{
	char line[96];
	if (len <= 1)
		return ' ';
	if (len >= sizeof line)
		return 0;
	memcpy(line, ls, len);
	line[len] = 0;
	if (!strncmp(line, "link ", 5) && rec_hex2(line + 5, a, c) == 2)
		return 'l';
	if (!strncmp(line, "qret ", 5) && rec_hex2(line + 5, a, c) == 2 && *c < UINT32_MAX)
		return 'q';
	if (!strncmp(line, "closed ", 7) && rec_hex2(line + 7, a, c) == 1)
		return 'c';
	return 0;
}

/* Where the lines that end section [b, e) start: its `link` lines, then
 * `qret` lines, then `closed` lines (patch.c writes them so).  REC_NO_TAIL
 * when a `link` line comes before them (a hand-made patch): links read
 * from the end would be numbered wrong, so none are.  Run once per patch
 * text, when its set index is written. */
static uint64_t rec_tail_start(const char *b, const char *e)
{
	int seen = 0;	/* the kinds met so far, from the end: 1 l, 2 q, 4 c */
	while (e > b) {
		const char *ls = e - 1;
		while (ls > b && ls[-1] != '\n')
			ls--;
		unsigned long long a, c;
		int k = rec_tail_line(ls, (size_t)(e - ls), &a, &c);
		if (!k || (k == 'q' && seen & 1) || (k == 'c' && seen & 3))
			break;
		seen |= k == 'l' ? 1 : k == 'q' ? 2 : k == 'c' ? 4 : 0;
		e = ls;
	}
	/* and no `link` line before it */
	for (const char *x = b; x && x < e; x = memchr(x, '\n', (size_t)(e - x)), x = x ? x + 1 : x)
		if ((size_t)(e - x) >= 5 && !strncmp(x, "link", 4))
			return REC_NO_TAIL;
	return (uint64_t)(e - b);
}

/* The lines of [b, e), which rec_tail_start found to be a tail, into t. */
static size_t rec_tail_read(const char *b, const char *e, rec_tail *t)
{
	size_t capl = 0, capq = 0, capc = 0;
	while (b < e) {
		const char *le = memchr(b, '\n', (size_t)(e - b));
		le = le ? le + 1 : e;
		unsigned long long a, c;
		int k = rec_tail_line(b, (size_t)(le - b), &a, &c), bad = 0;
		b = le;
		if (k == 'l') {
			bad = patch_room((void **)&t->links, t->nlinks, &capl, sizeof *t->links);
			if (!bad)
				t->links[t->nlinks++] = (patch_link){ a, c };
		} else if (k == 'q') {
			bad = patch_room((void **)&t->qrets, t->nqrets, &capq, sizeof *t->qrets);
			if (!bad)
				t->qrets[t->nqrets++] = (patch_qret){ a, (uint32_t)c, 0 };
		} else if (k == 'c') {
			bad = patch_room((void **)&t->closed, t->nclosed, &capc, sizeof *t->closed);
			if (!bad)
				t->closed[t->nclosed++] = a;
		} else if (k != ' ') {
			bad = 1;
		}
		if (bad) {
			rec_tail_free(t);
			return 0;
		}
	}
	for (size_t i = 0; i < t->nqrets; i++)	/* a link number it does not have */
		if (t->qrets[i].link >= t->nlinks) {
			rec_tail_free(t);
			return 0;
		}
	return t->nlinks;
}

/* A section's tail as read from its lines, kept in the cache beside the
 * set index (tail-TEXTHASH-K.bin: this header, the links, qrets and
 * closed entries): libc's 8 thousand lines took a million instructions
 * to read at every start, each logged by lackey under skel check. */
#define REC_TAIL_MAGIC "skeltail"
typedef struct rec_tail_hdr {
	char magic[8];
	uint32_t version, k;
	uint64_t text_hash, nlinks, nqrets, nclosed, sum;
} rec_tail_hdr;

static void rec_tail_name(uint32_t k, char *name, size_t n)
{
	snprintf(name, n, "tail-%016" PRIx64 "-%u.bin", rec_set_th, k);
}

static uint64_t rec_tail_sum(rec_tail_hdr h, const rec_tail *t)
{
	h.sum = 0;
	uint64_t x = rec_sum(0, &h, sizeof h);
	x = rec_sum(x, t->links, t->nlinks * sizeof *t->links);
	x = rec_sum(x, t->qrets, t->nqrets * sizeof *t->qrets);
	return rec_sum(x, t->closed, t->nclosed * sizeof *t->closed);
}

static void rec_tail_keep(uint32_t k, const rec_tail *t)
{
	rec_tail_hdr h = { .version = REC_CACHE_VERSION, .k = k, .text_hash = rec_set_th,
			   .nlinks = t->nlinks, .nqrets = t->nqrets, .nclosed = t->nclosed };
	memcpy(h.magic, REC_TAIL_MAGIC, 8);
	h.sum = rec_tail_sum(h, t);
	char name[64];
	rec_tail_name(k, name, sizeof name);
	struct iovec v[4] = { { &h, sizeof h },
			      { t->links, t->nlinks * sizeof *t->links },
			      { t->qrets, t->nqrets * sizeof *t->qrets },
			      { t->closed, t->nclosed * sizeof *t->closed } };
	rec_file_put(name, v, 4);
}

/* Section k's tail from the cache: 0, or -1 (t empty) when it is not
 * there or not whole.  Under lackey after the planning run read it
 * (SKEL_PLANS_CHECKED) its sum and link numbers are not checked again. */
static int rec_tail_kept(uint32_t k, rec_tail *t)
{
	char name[64], path[PATH_MAX + 64];
	rec_tail_name(k, name, sizeof name);
	snprintf(path, sizeof path, "%s/%s", rec_dir, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rec_tail_hdr h;
	struct stat st;
	int ok = !fstat(fd, &st) && !rec_pread(fd, &h, sizeof h, 0) &&
		 !memcmp(h.magic, REC_TAIL_MAGIC, 8) && h.version == REC_CACHE_VERSION &&
		 h.k == k && h.text_hash == rec_set_th && h.nlinks && h.nlinks < (1u << 24) &&
		 h.nqrets < (1u << 24) && h.nclosed < (1u << 24) &&
		 (uint64_t)st.st_size == sizeof h + h.nlinks * sizeof *t->links +
					 h.nqrets * sizeof *t->qrets + h.nclosed * sizeof *t->closed;
	if (ok) {
		t->links = malloc(h.nlinks * sizeof *t->links);
		t->qrets = malloc((h.nqrets ? h.nqrets : 1) * sizeof *t->qrets);
		t->closed = malloc((h.nclosed ? h.nclosed : 1) * sizeof *t->closed);
		t->nlinks = h.nlinks;
		t->nqrets = h.nqrets;
		t->nclosed = h.nclosed;
		uint64_t at = sizeof h;
		ok = t->links && t->qrets && t->closed &&
		     !rec_pread(fd, t->links, t->nlinks * sizeof *t->links, at) &&
		     !rec_pread(fd, t->qrets, t->nqrets * sizeof *t->qrets,
				at += t->nlinks * sizeof *t->links) &&
		     !rec_pread(fd, t->closed, t->nclosed * sizeof *t->closed,
				at + t->nqrets * sizeof *t->qrets);
	}
	close(fd);
	if (ok && !rec_plans_trusted()) {
		ok = rec_tail_sum(h, t) == h.sum;
		for (size_t i = 0; ok && i < t->nqrets; i++)
			ok = t->qrets[i].link < t->nlinks;
	}
	if (!ok) {
		rec_tail_free(t);
		return -1;
	}
	return 0;
}

/* Section k's links (format.h, patch_link), qret and closed lines, in
 * file order, malloc'd: its parsed patch's, or read from the lines that
 * end its text (an index-read set parses no section it does not need
 * to).  None at all (0) rather than renumbered links when a `link`
 * line comes before the lines read (a hand-made patch). */
size_t rec_section_tail(uint32_t k, rec_tail *t)
{
	memset(t, 0, sizeof *t);
	if (rec_parsed[k] || !rec_text) {
		const patch *p = &R.set.obj[k];
		t->links = malloc((p->nlinks ? p->nlinks : 1) * sizeof *t->links);
		t->qrets = malloc((p->nqrets ? p->nqrets : 1) * sizeof *t->qrets);
		t->closed = malloc((p->nclosed ? p->nclosed : 1) * sizeof *t->closed);
		if (!t->links || !t->qrets || !t->closed) {
			rec_tail_free(t);
			return 0;
		}
		memcpy(t->links, p->links, p->nlinks * sizeof *t->links);
		memcpy(t->qrets, p->qrets, p->nqrets * sizeof *t->qrets);
		memcpy(t->closed, p->closed, p->nclosed * sizeof *t->closed);
		t->nqrets = p->nqrets;
		t->nclosed = p->nclosed;
		return t->nlinks = p->nlinks;
	}
	if (rec_sec[k].tail == REC_NO_TAIL)
		return 0;
	if (rec_set_th && rec_tail_kept(k, t) == 0)
		return t->nlinks;
	const char *b = rec_text + rec_sec[k].off;
	size_t n = rec_tail_read(b + rec_sec[k].tail, b + rec_sec[k].len, t);
	if (rec_set_th && n)
		rec_tail_keep(k, t);
	return n;
}

void rec_tail_free(rec_tail *t)
{
	free(t->links);
	free(t->qrets);
	free(t->closed);
	memset(t, 0, sizeof *t);
}

/* ----------------------------------------------------------------- plans */

typedef struct rec_plan_hdr {
	char magic[8];
	uint32_t version, hdr_size;
	uint64_t patch_hash;
	uint8_t id[SKEL_ID_MAX];
	uint32_t id_len, id_kind;
	uint64_t config;	/* rec_config() */
	uint64_t bias, code, cursor;	/* where it was emitted */
	uint32_t index, pad;
	uint64_t code_len, code_size;
	uint64_t nwrite, nint3, nmap, nrel[REC_NRELOC];
	uint64_t nsites, nprobes, nneighbour, nunreachable, nredirect;
	uint64_t nfinal;	/* 0, or nwrite: the rec_writes, absolute */
	uint64_t text_lo, text_len;	/* the patched text (lo from bias) */
	uint64_t nsorted;	/* the first writes in order of start */
	uint64_t map_sum;	/* vt_map_sum of the map (vt_map_ref) */
	uint64_t payload;	/* bytes after the header */
	uint64_t sum;		/* rec_hash of header (sum 0) and payload */
} rec_plan_hdr;

/* A site: link-time start, offset of its trampoline; of its quiet copy
 * (1 + offset, 0: none) and the routine's entry word (rec_write). */
typedef struct rec_plan_site {
	uint64_t start;
	uint32_t tramp;
	uint16_t len;
	uint16_t int3;
	uint32_t quiet, pad;
	uint64_t word;
} rec_plan_site;

/* An int3 site's block, for SKEL_VERBOSE (link-time). */
typedef struct rec_plan_int3 {
	uint64_t bstart, bend;
	uint64_t site;		/* its index among the text writes */
} rec_plan_int3;

/* What the plan of R.cur depends on besides its patch section. */
static uint64_t rec_config(void)
{
	const rec_image *img = &R.cur->img;
	uint64_t v[8 + 2 * REC_MAX_SEGS] = {
		REC_CACHE_VERSION, R.self_id,
		(uint64_t)R.force_int3 | (uint64_t)R.have_rtm << 1 |
			(uint64_t)R.have_gsbase << 2,
		R.restorer >= img->lo && R.restorer < img->hi
			? R.restorer - img->bias + 1 : 0,
		img->lo - img->bias, img->hi - img->bias, (uint64_t)img->nx,
		/* the object's number, which its entry and returned words
		 * carry (libc is object 1 under gzip, 2 under grep) */
		sizeof(vt_map_entry) | (uint64_t)R.cur->index << 32,
	};
	for (int i = 0; i < img->nx; i++) {
		v[8 + 2 * i] = img->xlo[i] - img->bias;
		v[9 + 2 * i] = img->xhi[i] - img->bias;
	}
	return rec_hash(0, v, sizeof v);
}

static void rec_plan_name(char *buf, size_t n)
{
	const patch *p = &R.set.obj[R.cur->index];
	char id[2 * SKEL_ID_MAX + 1];
	for (uint32_t i = 0; i < p->id_len; i++)
		snprintf(id + 2 * i, 3, "%02x", p->id[i]);
	id[2 * p->id_len] = 0;
	/* the conditions in the name too: a native run and one under
	 * valgrind (no RTM, another signal trampoline) keep a plan each
	 * instead of making each other's again */
	int k = snprintf(buf, n, "plan-%s-%016" PRIx64 "-%08" PRIx32, id,
			 R.phash[R.cur->index], (uint32_t)rec_config());
	/* under valgrind, which lays out every run of a program alike, the
	 * object's place as well: each layout keeps the plan made there,
	 * read as it is (rec_plan_read, as_is).  One plan for all would be
	 * another program's, whose libc lay elsewhere: its relocations
	 * walked, eight million instructions each logged by lackey, and its
	 * text written site by site (a whole-process check of qsort_cb: 19
	 * s instead of 7) */
	if (k > 0 && (size_t)k < n && rec_under_valgrind())
		k += snprintf(buf + k, n - (size_t)k, "-vg%" PRIx64, R.cur->img.bias);
	if (k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, ".bin");
}

static size_t rec_pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

void rec_plan_write(const rec_emit *e, const rec_pending *pd,
		    const rec_site *sv, const size_t counts[5])
{
	const rec_object *o = R.cur;
	const patch *p = &R.set.obj[o->index];
	size_t nw = pd->nw, ni = 0;
	uint8_t *text = NULL;
	rec_plan_site *w = calloc(nw + 1, sizeof *w);
	rec_plan_int3 *i3 = calloc(nw + 1, sizeof *i3);
	vt_map_entry *map = malloc((pd->nmap + 1) * sizeof *map);
	if (!w || !i3 || !map || e->len > UINT32_MAX)
		goto out;
	for (size_t i = 0; i < nw; i++) {
		const rec_write *x = &pd->w[i];
		w[i] = (rec_plan_site){ x->start - o->img.bias,
					 (uint32_t)(x->tramp - (uint64_t)e->p),
					 (uint16_t)(x->end - x->start),
					 (uint16_t)x->int3,
					 x->quiet ? (uint32_t)(x->quiet - (uint64_t)e->p) + 1 : 0,
					 0, x->word };
		if (x->end - x->start > UINT16_MAX)
			goto out;
		if (x->int3)
			i3[ni++] = (rec_plan_int3){ sv[i].bstart - o->img.bias,
						    sv[i].bend - o->img.bias, i };
	}
	for (size_t i = 0; i < pd->nmap; i++) {
		map[i] = pd->map[i];
		map[i].tramp -= (uint64_t)e->p;
		map[i].kind &= 0xffff;
	}
	/* a reader takes the map as it is (rec_map_keep) */
	if (!rec_map_in_order(map, pd->nmap))
		goto out;
	rec_plan_hdr h = { .version = REC_CACHE_VERSION, .hdr_size = sizeof h,
			   .patch_hash = R.phash[o->index],
			   .id_len = p->id_len, .id_kind = p->id_kind,
			   .config = rec_config(), .bias = o->img.bias,
			   .code = (uint64_t)e->p, .cursor = (uint64_t)R.cursor_off,
			   .index = o->index, .code_len = e->len,
			   .code_size = rec_pad8(e->len), .nwrite = nw,
			   .nint3 = ni, .nmap = pd->nmap,
			   .map_sum = vt_map_sum(map, pd->nmap),
			   .nsites = counts[0], .nprobes = counts[1],
			   .nneighbour = counts[2], .nunreachable = counts[3],
			   .nredirect = counts[4] };
	memcpy(h.magic, REC_PLAN_MAGIC, 8);
	memcpy(h.id, p->id, p->id_len);
	struct iovec v[6 + REC_NRELOC];
	int nv = 0;
	v[nv++] = (struct iovec){ w, nw * sizeof *w };
	v[nv++] = (struct iovec){ i3, ni * sizeof *i3 };
	v[nv++] = (struct iovec){ map, pd->nmap * sizeof *map };
	for (int k = 0; k < REC_NRELOC; k++) {
		h.nrel[k] = e->rel[k].n;
		v[nv++] = (struct iovec){ e->rel[k].off, e->rel[k].n * 4 };
	}
	h.nsorted = rec_sites_sorted(pd->w, nw);
	/* under valgrind, the writes themselves: a process laid out as this
	 * one (valgrind lays out each run alike) reads them into place (the
	 * kernel copies: under skel check, building them was lackey's log's
	 * biggest part).  Not natively, where each run has another bias:
	 * 4 MB more of libc's plan to map and sum at every start for nothing */
	if (!rec_under_valgrind() || !nw)
		goto put;
	h.nfinal = nw;
	v[nv++] = (struct iovec){ pd->w, nw * sizeof *pd->w };
	/* and the text as they make it, from the first site's start to the
	 * last one's end (the text is as the object was loaded yet) */
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < nw; i++) {
		lo = pd->w[i].start < lo ? pd->w[i].start : lo;
		hi = pd->w[i].end > hi ? pd->w[i].end : hi;
	}
	if (hi - lo <= o->img.hi - o->img.lo && (text = malloc(hi - lo))) {
		memcpy(text, (const void *)lo, hi - lo);
		for (size_t i = 0; i < nw; i++)
			rec_site_write(text + (pd->w[i].start - lo), &pd->w[i]);
		h.text_lo = lo - o->img.bias;
		h.text_len = hi - lo;
		v[nv++] = (struct iovec){ text, h.text_len };
	}
put:
	/* up to 8 bytes: the int3 fill after the last trampoline */
	v[nv++] = (struct iovec){ e->p, h.code_size };
	uint64_t sum = 0;
	h.payload = 0;
	for (int i = 0; i < nv; i++)
		h.payload += v[i].iov_len;
	for (int i = 0; i < nv; i++)
		sum = rec_sum(sum, v[i].iov_base, v[i].iov_len);
	h.sum = rec_sum(sum, &h, sizeof h);
	struct iovec all[7 + REC_NRELOC];
	all[0] = (struct iovec){ &h, sizeof h };
	memcpy(all + 1, v, nv * sizeof *v);
	char name[2 * SKEL_ID_MAX + 64];
	rec_plan_name(name, sizeof name);
	rec_file_put(name, all, nv + 1);
out:
	free(w), free(i3), free(map), free(text);
}

/* The header says what this process needs, and its sizes add up to the
 * file's. */
static int rec_plan_fits(const rec_plan_hdr *h, uint64_t file)
{
	const rec_object *o = R.cur;
	const patch *p = &R.set.obj[o->index];
	if (memcmp(h->magic, REC_PLAN_MAGIC, 8) || h->version != REC_CACHE_VERSION ||
	    h->hdr_size != sizeof *h || h->patch_hash != R.phash[o->index] ||
	    h->id_len != p->id_len || h->id_kind != p->id_kind ||
	    memcmp(h->id, p->id, p->id_len) || h->config != rec_config() ||
	    h->payload != file - sizeof *h || file < sizeof *h ||
	    h->code_size != rec_pad8(h->code_len) || h->code_len > UINT32_MAX)
		return 0;
	uint64_t limit = h->payload, sum = h->code_size;
	const uint64_t n[3] = { h->nwrite, h->nint3, h->nmap };
	const uint64_t sz[3] = { sizeof(rec_plan_site), sizeof(rec_plan_int3),
				 sizeof(vt_map_entry) };
	for (int i = 0; i < 3; i++) {
		if (n[i] > limit / sz[i])
			return 0;
		sum += n[i] * sz[i];
	}
	for (int k = 0; k < REC_NRELOC; k++) {
		if (h->nrel[k] > limit / 4)
			return 0;
		sum += h->nrel[k] * 4;
	}
	if (h->nfinal && h->nfinal != h->nwrite)
		return 0;
	sum += h->nfinal * sizeof(rec_write);
	if (h->text_len > limit)
		return 0;
	sum += h->text_len;
	return sum == h->payload && h->nint3 <= h->nwrite;
}

/* Moves the code (at `code` now, to run at `base`) from where the plan
 * was emitted, for this process's bias, TLS offset and object number.  -1
 * if a field does not fit (then this process plans afresh). */
static int rec_plan_relocate(const rec_plan_hdr *h, uint8_t *code,
			     uint64_t base, const uint32_t *off)
{
	const rec_object *o = R.cur;
	int64_t drel = (int64_t)((o->img.bias - base) - (h->bias - h->code));
	uint64_t dabs = o->img.bias - h->bias;
	uint64_t dent = ((uint64_t)o->index << 32) - ((uint64_t)h->index << 32);
	int32_t cur = (int32_t)R.cursor_off;
	if (!drel && !dabs && !dent && cur == (int32_t)h->cursor && rec_plans_trusted())
		return 0;
	const uint32_t *x = off;
	for (int k = 0; k < REC_NRELOC; k++) {
		size_t wide = k == REC_ABS64 || k == REC_ENTRY64 ? 8 : 4;
		for (uint64_t i = 0; i < h->nrel[k]; i++, x++) {
			if (*x > h->code_len || h->code_len - *x < wide)
				return -1;
			uint8_t *f = code + *x;
			int32_t v32;
			uint64_t v64;
			switch (k) {
			case REC_REL32:
				memcpy(&v32, f, 4);
				if (!rec_fits32(v32 + drel))
					return -1;
				v32 = (int32_t)(v32 + drel);
				memcpy(f, &v32, 4);
				break;
			case REC_CURSOR32:	/* rec_t's offset plus a field's */
				memcpy(&v32, f, 4);
				v32 = (int32_t)(v32 - (int32_t)h->cursor + cur);
				memcpy(f, &v32, 4);
				break;
			default:
				memcpy(&v64, f, 8);
				v64 += k == REC_ABS64 ? dabs : dent;
				memcpy(f, &v64, 8);
			}
		}
	}
	return 0;
}

/* A plan file read and checked, its code not moved yet. */
typedef struct rec_plan_file {
	rec_plan_hdr h;
	const uint8_t *file;	/* mapped, read-only */
	size_t file_len;
	const rec_plan_site *w;	/* in file */
	const rec_plan_int3 *ib;
	const vt_map_entry *map;
	const uint32_t *off;
	uint64_t final_at;	/* file offset of the rec_writes (h.nfinal) */
	uint64_t text_at;	/* and of the patched text (h.text_len) */
	uint8_t *code;
	size_t size;		/* of code */
	int pages;		/* code is trampoline pages (else malloc'd) */
} rec_plan_file;

static void rec_plan_file_free(rec_plan_file *f)
{
	if (f->code && f->pages)
		munmap(f->code, f->size);
	else
		free(f->code);
	if (f->file)
		munmap((void *)f->file, f->file_len);
	memset(f, 0, sizeof *f);
}

/* R.cur's plan file, if it is one for this process: the code straight
 * into trampoline pages (`pages`: the kernel copies it) or into memory. */
static int rec_plan_file_read(const char *path, rec_plan_file *f, int pages)
{
	memset(f, 0, sizeof *f);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rec_plan_hdr *h = &f->h;
	struct stat st;
	uint64_t nrel = 0;
	f->pages = pages;
	if (fstat(fd, &st) || rec_pread(fd, h, sizeof *h, 0) ||
	    !rec_plan_fits(h, (uint64_t)st.st_size))
		goto bad;
	for (int k = 0; k < REC_NRELOC; k++)
		nrel += h->nrel[k];
	f->size = (h->code_size + REC_PAGE - 1) & ~(REC_PAGE - 1);
	/* the tables are read where they are (the page cache's pages) */
	f->file_len = (size_t)st.st_size;
	void *m = mmap(NULL, f->file_len, PROT_READ, MAP_PRIVATE | MAP_POPULATE,
		       fd, 0);
	if (m == MAP_FAILED)
		goto bad;
	f->file = m;
	f->w = (const void *)(f->file + sizeof *h);
	f->ib = (const void *)(f->w + h->nwrite);
	f->map = (const void *)(f->ib + h->nint3);
	f->off = (const void *)(f->map + h->nmap);
	f->final_at = (uint64_t)((const uint8_t *)(f->off + nrel) - f->file);
	f->text_at = f->final_at + h->nfinal * sizeof(rec_write);
	/* where the plan's code was, relative to its object, if free: its
	 * relative jumps then need no relocation */
	f->code = !f->size ? NULL : pages ? rec_code_map_near(f->size, h->code + (R.cur->img.bias - h->bias))
		: malloc(f->size);
	if (f->size && !f->code)
		goto bad;
	/* all its pages at once: one fault per page costs more (and more so
	 * in a virtual machine); an old kernel says EINVAL, no harm */
	if (pages)
		madvise(f->code, f->size, 23 /* MADV_POPULATE_WRITE */);
	/* the code straight into its pages: the kernel copies it (and
	 * valgrind does not see the copy) */
	uint64_t len[3] = { h->nwrite * sizeof *f->w, h->nint3 * sizeof *f->ib,
			    h->nmap * sizeof *f->map }, sum = 0;
	if (rec_pread(fd, f->code, h->code_size, h->payload + sizeof *h -
		      h->code_size))
		goto bad;
	if (rec_plans_trusted()) {
		close(fd);
		return 0;
	}
	/* as the writer hashed them: each reloc table apart */
	sum = rec_sum(sum, f->w, len[0]);
	sum = rec_sum(sum, f->ib, len[1]);
	sum = rec_sum(sum, f->map, len[2]);
	for (int k = 0, first = 0; k < REC_NRELOC; first += (int)h->nrel[k++])
		sum = rec_sum(sum, f->off + first, h->nrel[k] * 4);
	/* as the writer summed them: only when there (a sum of 0 bytes is
	 * not the sum it was given) */
	if (h->nfinal)
		sum = rec_sum(sum, f->file + f->final_at, h->nfinal * sizeof(rec_write));
	if (h->text_len)
		sum = rec_sum(sum, f->file + f->text_at, h->text_len);
	sum = rec_sum(sum, f->code, h->code_size);
	uint64_t want = h->sum;
	h->sum = 0;
	if (rec_sum(sum, h, sizeof *h) != want)
		goto bad;
	close(fd);
	return 0;
bad:
	close(fd);
	rec_plan_file_free(f);
	if (R.verbose)
		rec_say("%s: not a plan for this process; planning again", path);
	return -1;
}

static void rec_plan_path(char *path, size_t n)
{
	char name[2 * SKEL_ID_MAX + 64];
	rec_plan_name(name, sizeof name);
	snprintf(path, n, "%s/%s", rec_dir, name);
}

int rec_plan_text(const rec_pending *pd)
{
	int fd = pd->text_fd - 1;
	uint8_t *to = (uint8_t *)pd->text_lo;
	int r = 0;
	for (uint64_t got = 0; got < pd->text_len && !r;) {
		long k = rec_syscall6(SYS_pread64, fd, (long)(to + got), (long)(pd->text_len - got),
				      (long)(pd->text_at + got), 0, 0);
		if (k <= 0)
			r = -1;
		else
			got += (uint64_t)k;
	}
	rec_syscall3(SYS_close, fd, 0, 0);
	return r;
}

/* n rec_writes at offset at of the plan file path into w, by the kernel;
 * -1 if the file does not have them. */
static int rec_plan_finals(const char *path, rec_write *w, uint64_t n, uint64_t at)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int r = rec_pread(fd, w, n * sizeof *w, at);
	close(fd);
	return r;
}

int rec_plan_read(rec_pending *pd, rec_int3_list *i3)
{
	rec_object *o = R.cur;
	char path[PATH_MAX + 2 * SKEL_ID_MAX + 64];
	rec_plan_file f;
	rec_plan_path(path, sizeof path);
	if (rec_plan_file_read(path, &f, 1))
		return -1;
	const rec_plan_hdr *h = &f.h;
	uint64_t bias = o->img.bias, base = (uint64_t)f.code;
	rec_int3 *iv = realloc(i3->v, (i3->n + h->nint3 + 1) * sizeof *iv);
	if (!iv)
		rec_die("out of memory");
	i3->v = iv;
	if (rec_plan_relocate(h, f.code, base, f.off)) {
		if (R.verbose)
			rec_say("%s: out of reach here; planning again", path);
		rec_plan_file_free(&f);
		return -1;
	}
	if (f.size && mprotect(f.code, f.size, PROT_READ | PROT_EXEC))
		rec_die("cannot protect the trampolines: %s", strerror(errno));
	pd->nw = h->nwrite;
	pd->w = rec_mmap_raw((h->nwrite ? h->nwrite : 1) * sizeof *pd->w);
	if (!pd->w)
		rec_die("out of memory");
	/* laid out as the writer was: its writes as they are */
	int as_is = h->nfinal && bias == h->bias && base == h->code &&
		    rec_plan_finals(path, pd->w, h->nwrite, f.final_at) == 0;
	R.plans_as_is += as_is;
	/* and its text, read into place by rec_text_write */
	uint64_t tlo = h->text_lo + bias;
	if (as_is && h->text_len && tlo >= o->img.lo && tlo <= o->img.hi &&
	    h->text_len <= o->img.hi - tlo) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			pd->text_lo = tlo;
			pd->text_len = h->text_len;
			pd->text_at = f.text_at;
			pd->text_fd = fd + 1;
		}
	}
	for (size_t i = 0; i < h->nwrite && !as_is; i++) {
		const rec_plan_site *w = &f.w[i];
		uint64_t s = w->start + bias;
		pd->w[i] = (rec_write){ s, s + w->len, base + w->tramp, w->int3,
					w->quiet ? base + w->quiet - 1 : 0, w->word };
	}
	if (as_is && h->nsorted <= h->nwrite) {
		pd->nsorted = h->nsorted;
		pd->nsorted_known = 1;
	}
	/* the int3 sites: by their blocks' indices (a plan read as is: a
	 * scan of every site was most of what remained of its reading) */
	int by_block = as_is;
	for (size_t k = 0; k < h->nint3 && by_block; k++)
		by_block = f.ib[k].site < h->nwrite && pd->w[f.ib[k].site].int3;
	for (size_t i = 0, k = 0; by_block ? k < h->nint3 : i < h->nwrite; i++) {
		if (by_block)
			i = f.ib[k].site;
		else if (!pd->w[i].int3)
			continue;
		const rec_plan_site *w = &f.w[i];
		uint64_t s = w->start + bias;
		i3->v[i3->n++] = (rec_int3){ s, base + w->tramp, 0 };
		if (R.verbose && k < h->nint3)
			rec_say("int3 site at pc 0x%" PRIx64 " (block [0x%" PRIx64
				", 0x%" PRIx64 ")) of object %u: no 5-byte span",
				w->start, f.ib[k].bstart, f.ib[k].bend, o->index);
		k++;
	}
	/* the map where it is, in the file (which stays mapped), and for
	 * skel check named by reference in the value file (format.h,
	 * vt_map_ref) */
	pd->map = f.map;
	pd->nmap = h->nmap;
	pd->map_base = base;
	if (R.write_maps) {
		size_t plen = strlen(path);
		pd->nref = sizeof(vt_map_ref) + ((plen + 7) & ~(size_t)7);
		vt_map_ref *ref = pd->ref = calloc(1, pd->nref);
		if (!ref)
			rec_die("out of memory");
		*ref = (vt_map_ref){ base, (uint64_t)((const uint8_t *)f.map - f.file), h->nmap,
				     h->map_sum, o->index, (uint32_t)plen };
		memcpy(ref + 1, path, plen);
	}
	o->code_lo = base;
	o->code_hi = base + f.size;
	R.code_size += f.size;
	R.nsites += h->nsites;
	R.nprobes += h->nprobes;
	R.nneighbour += h->nneighbour;
	R.nunreachable += h->nunreachable;
	R.nredirect += h->nredirect;
	R.plans_read++;
	f.code = NULL;	/* in use, as is the file (the map) */
	f.file = NULL;
	rec_plan_file_free(&f);
	return 0;
}

/* SKEL_PLAN_CHECK=1 (tests): R.cur was just planned afresh into e and pd;
 * its plan file, moved to the same place, must give the same code, text
 * writes and map, byte for byte. */
void rec_plan_check(const rec_emit *e, const rec_pending *pd)
{
	char path[PATH_MAX + 2 * SKEL_ID_MAX + 64];
	rec_plan_file f;
	rec_plan_path(path, sizeof path);
	if (rec_plan_file_read(path, &f, 0)) {
		rec_say("plan check: %s: no plan to compare", path);
		return;
	}
	const rec_plan_hdr *h = &f.h;
	uint64_t base = (uint64_t)e->p, bias = R.cur->img.bias;
	int bad = rec_plan_relocate(h, f.code, base, f.off) ||
		  h->code_len != e->len || h->nwrite != pd->nw ||
		  h->nmap != pd->nmap ||
		  memcmp(f.code, e->p, e->len);
	for (size_t i = 0; !bad && i < pd->nw; i++) {
		const rec_plan_site *w = &f.w[i];
		const rec_write *x = &pd->w[i];
		bad = w->start + bias != x->start || w->start + bias + w->len != x->end ||
		      base + w->tramp != x->tramp || w->int3 != x->int3 ||
		      (w->quiet ? base + w->quiet - 1 : 0) != x->quiet || w->word != x->word;
	}
	for (size_t i = 0; !bad && i < pd->nmap; i++) {
		vt_map_entry m = f.map[i];
		m.tramp += base;
		m.kind = (m.kind & 0xffff) | R.cur->index << 16;
		bad = memcmp(&m, &pd->map[i], sizeof m) != 0;
	}
	rec_say("plan check: object %u: %s", R.cur->index,
		bad ? "DIFFERS from a fresh plan" : "same as a fresh plan");
	rec_plan_file_free(&f);
}
