/* symbolize.c — addresses to objects (symbolize.h).
 *
 * Static data: each object's symbol table (.symtab, else .dynsym: data,
 * functions and untyped symbols with a size) and, for what no symbol
 * covers, its allocated sections, both sorted for binary search.
 * Heap blocks: every block of the run with its lifetime [alloc, free) in
 * event order (seq), indexed by page (blocks of up to BIG_PAGES pages)
 * or kept in a short list (larger ones).  A thread looks a block up as of
 * its own last event: the block live then, else the next one allocated
 * there (by another thread, after it) — exact for one thread, and for
 * threads that do not reuse each other's freed memory in between. */
#include "replay/symbolize.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BIG_PAGES 64

typedef struct sym_range {
	uint64_t lo, hi;
	uint32_t name;		/* offset in the object's names */
} sym_range;

typedef struct sym_obj {
	char prefix[72];	/* "" for the executable, else "FILE!" */
	uint64_t lo, hi;	/* runtime extent of its loaded segments */
	sym_range *syms, *secs;
	size_t nsyms, nsecs;
	char *names;
} sym_obj;

typedef struct sym_block {
	uint64_t lo, hi, alloc, free;	/* free: UINT64_MAX while live */
	uint64_t site;			/* call site of its allocation */
	uint32_t n;
	uint32_t thread;		/* that allocated it */
} sym_block;

/* A block as a page's list holds it: a copy of its sym_block (free
 * kept equal by block_free), so that a lookup reads one array, not the
 * blocks it names (a tree of 300,000 nodes: 85 a page, each a cache miss
 * in `blocks`). */
typedef struct sym_ent {
	uint64_t lo, hi, alloc, free, site;	/* as its sym_block's */
	uint32_t id, n, thread;
} sym_ent;

/* The blocks of a page that begin at one address, by alloc: a program
 * that allocates and frees at the same place all run long piles up
 * blocks there, which a lookup passes by binary search. */
typedef struct sym_grp {
	uint64_t lo;
	sym_ent *e;
	uint32_t n, cap;
} sym_grp;

typedef struct sym_page {
	uint64_t page;		/* + 1; 0: free slot */
	sym_grp *g;		/* blocks on it, by lo */
	uint32_t ng, capg;
	uint64_t maxlen;	/* the largest's size */
} sym_page;

typedef struct sym_region {
	uint64_t lo, hi;
	uint32_t thread, kind;
} sym_region;

static pthread_mutex_t sym_mu = PTHREAD_MUTEX_INITIALIZER;
static sym_obj *objs;
static size_t nobjs;
static sym_block *blocks;
static size_t nblocks, capblocks;
static sym_page *pages;
static size_t npages, cappages;		/* cappages: a power of two */
static sym_ent *big;			/* blocks of more than BIG_PAGES */
static sym_chg *chg;			/* sym_changes */
static size_t nchg, capchg;
static void chg_add(uint64_t seq, uint64_t lo, uint64_t hi);
static size_t nbig, capbig;
static sym_region *regions;
static size_t nregions;

void *sym_grow(void *p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return p;
	size_t c = *cap ? *cap : 16;
	while (c < need)
		c *= 2;
	void *q = realloc(p, c * size);
	if (!q) {
		fprintf(stderr, "skel: replay: out of memory\n");
		exit(2);
	}
	*cap = c;
	return q;
}

#define grow sym_grow

/* ------------------------------------------------------------ objects */

static int range_cmp(const void *a, const void *b)
{
	const sym_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi > y->hi ? -1 : x->hi < y->hi;	/* larger first */
}

static bool in_file(size_t size, uint64_t off, uint64_t len)
{
	return off <= size && len <= size - off;
}

/* The file's identity as the skeleton names it: build-id in hex, else
 * the FNV-1a hash of its bytes (format.h). */
static void elf_identity(const uint8_t *d, size_t size, const Elf64_Ehdr *eh, char *out)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(d + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE || !in_file(size, ph[i].p_offset, ph[i].p_filesz))
			continue;
		const uint8_t *p = d + ph[i].p_offset, *end = p + ph[i].p_filesz;
		while (p + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *n = (const Elf64_Nhdr *)p;
			const uint8_t *desc = p + sizeof *n + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof *n, "GNU", 4) && n->n_descsz <= SKEL_ID_MAX) {
				for (unsigned k = 0; k < n->n_descsz; k++)
					sprintf(out + 2 * k, "%02x", desc[k]);
				return;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	sprintf(out, "%016" PRIx64, skel_fnv1a64(SKEL_FNV1A64_INIT, d, size));
}

static bool sym_wanted(const Elf64_Sym *s)
{
	unsigned t = ELF64_ST_TYPE(s->st_info);
	return s->st_size && s->st_shndx != SHN_UNDEF && s->st_shndx < SHN_LORESERVE &&
	       (t == STT_OBJECT || t == STT_FUNC || t == STT_NOTYPE || t == STT_COMMON);
}

static int elf_read(sym_obj *o, const uint8_t *d, size_t size, uint64_t bias,
		    const char *id_hex, char err[FMT_ERR_LEN])
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)d;
	if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return snprintf(err, FMT_ERR_LEN, "not a 64-bit ELF file"), -1;
	if (!in_file(size, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)) ||
	    !in_file(size, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
	    (eh->e_shnum && eh->e_shstrndx >= eh->e_shnum))
		return snprintf(err, FMT_ERR_LEN, "damaged ELF headers"), -1;
	if (id_hex) {
		char id[2 * SKEL_ID_MAX + 1];
		elf_identity(d, size, eh, id);
		if (strcmp(id, id_hex))
			return snprintf(err, FMT_ERR_LEN, "identity %s, but the recording is of %s",
					id, id_hex), -1;
	}
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(d + eh->e_phoff);
	o->lo = UINT64_MAX;
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD) {
			if (ph[i].p_vaddr + bias < o->lo)
				o->lo = ph[i].p_vaddr + bias;
			if (ph[i].p_vaddr + ph[i].p_memsz + bias > o->hi)
				o->hi = ph[i].p_vaddr + ph[i].p_memsz + bias;
		}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(d + eh->e_shoff);
	const Elf64_Shdr *symtab = NULL;
	size_t names = 0, namecap = 0;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !symtab))
			symtab = &sh[i];
	}
	/* names: sections' then symbols', copied (the file is unmapped) */
	const Elf64_Shdr *shs = eh->e_shnum ? &sh[eh->e_shstrndx] : NULL;
	for (unsigned i = 0; shs && i < eh->e_shnum; i++) {
		if (!(sh[i].sh_flags & SHF_ALLOC) || !sh[i].sh_size || !sh[i].sh_addr ||
		    !in_file(size, shs->sh_offset, shs->sh_size) || sh[i].sh_name >= shs->sh_size)
			continue;
		const char *nm = (const char *)d + shs->sh_offset + sh[i].sh_name;
		size_t len = strnlen(nm, shs->sh_size - sh[i].sh_name);
		o->names = grow(o->names, &namecap, names + len + 1, 1);
		memcpy(o->names + names, nm, len);
		o->names[names + len] = 0;
		size_t cap = o->nsecs;
		o->secs = grow(o->secs, &cap, o->nsecs + 1, sizeof *o->secs);
		o->secs[o->nsecs++] = (sym_range){ sh[i].sh_addr + bias,
						   sh[i].sh_addr + sh[i].sh_size + bias, (uint32_t)names };
		names += len + 1;
	}
	if (symtab && symtab->sh_link < eh->e_shnum && symtab->sh_entsize == sizeof(Elf64_Sym) &&
	    in_file(size, symtab->sh_offset, symtab->sh_size) &&
	    in_file(size, sh[symtab->sh_link].sh_offset, sh[symtab->sh_link].sh_size)) {
		const Elf64_Sym *s = (const Elf64_Sym *)(d + symtab->sh_offset);
		size_t n = symtab->sh_size / sizeof *s, cap = 0;
		const char *str = (const char *)d + sh[symtab->sh_link].sh_offset;
		size_t strsize = sh[symtab->sh_link].sh_size;
		for (size_t i = 0; i < n; i++) {
			if (!sym_wanted(&s[i]) || s[i].st_name >= strsize)
				continue;
			const char *nm = str + s[i].st_name;
			size_t len = strnlen(nm, strsize - s[i].st_name);
			o->names = grow(o->names, &namecap, names + len + 1, 1);
			memcpy(o->names + names, nm, len);
			o->names[names + len] = 0;
			o->syms = grow(o->syms, &cap, o->nsyms + 1, sizeof *o->syms);
			o->syms[o->nsyms++] = (sym_range){ s[i].st_value + bias,
							   s[i].st_value + s[i].st_size + bias,
							   (uint32_t)names };
			names += len + 1;
		}
	}
	if (o->nsyms)
		qsort(o->syms, o->nsyms, sizeof *o->syms, range_cmp);
	if (o->nsecs)
		qsort(o->secs, o->nsecs, sizeof *o->secs, range_cmp);
	return 0;
}

int sym_object_add(const char *path, uint64_t bias, bool main, const char *id_hex,
		   char err[FMT_ERR_LEN])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0) {
		snprintf(err, FMT_ERR_LEN, "cannot read: %s", fd < 0 ? strerror(errno) : "not a file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *d = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (d == MAP_FAILED)
		return snprintf(err, FMT_ERR_LEN, "cannot map: %s", strerror(errno)), -1;
	sym_obj o = { 0 };
	if (!main) {
		const char *b = strrchr(path, '/');
		snprintf(o.prefix, sizeof o.prefix, "%s!", b ? b + 1 : path);
	}
	int rc = elf_read(&o, d, (size_t)sb.st_size, bias, id_hex, err);
	munmap(d, (size_t)sb.st_size);
	if (rc < 0) {
		free(o.syms);
		free(o.secs);
		free(o.names);
		return -1;
	}
	pthread_mutex_lock(&sym_mu);
	size_t cap = nobjs;
	objs = grow(objs, &cap, nobjs + 1, sizeof *objs);
	objs[nobjs++] = o;
	chg_add(0, o.lo, o.hi);	/* answered "?" there until now */
	pthread_mutex_unlock(&sym_mu);
	return 0;
}

bool sym_have_objects(void)
{
	pthread_mutex_lock(&sym_mu);
	bool any = nobjs > 0;
	pthread_mutex_unlock(&sym_mu);
	return any;
}

/* The last range starting at or below a that holds it (ranges sorted by
 * start, larger first on ties; a few back for nested ones). */
/* The range of r (sorted by lo) holding a: of the 8 last to begin at or
 * before a, the last that holds it.  *from and *to narrow to where the
 * answer, found or not, is the same as a's: from the end of the last of
 * those 8 that ends at or before a (or where the last begins) to where
 * the next begins or the one found ends.  A symbol may lie inside
 * another's extent or a section's; the caches of lookups hold a range
 * for every address in it (a section's extent held libc's
 * _IO_2_1_stdout_ as .data). */
static const sym_range *range_find(const sym_range *r, size_t n, uint64_t a,
				   uint64_t *from, uint64_t *to)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && r[lo].lo < *to)
		*to = r[lo].lo;
	if (lo > 0 && r[lo - 1].lo > *from)
		*from = r[lo - 1].lo;
	for (size_t k = lo, tries = 0; k > 0 && tries < 8; k--, tries++) {
		if (a >= r[k - 1].lo && a < r[k - 1].hi) {
			if (r[k - 1].hi < *to)
				*to = r[k - 1].hi;
			return &r[k - 1];
		}
		if (r[k - 1].hi > *from)
			*from = r[k - 1].hi;
	}
	return NULL;
}

static bool static_find(sym_view *v, uint64_t a)
{
	for (size_t i = 0; i < nobjs; i++) {
		const sym_obj *o = &objs[i];
		if (a < o->lo || a >= o->hi)
			continue;
		uint64_t from = o->lo, to = o->hi;
		const sym_range *r = range_find(o->syms, o->nsyms, a, &from, &to);
		if (!r)
			r = range_find(o->secs, o->nsecs, a, &from, &to);
		if (!r)
			continue;
		snprintf(v->name, sizeof v->name, "%s%s", o->prefix, o->names + r->name);
		v->lo = from;	/* where the answer holds: no other symbol */
		v->hi = to;
		v->base = r->lo;
		return true;
	}
	return false;
}

/* ------------------------------------------------------- heap blocks */

static sym_page *page_slot(uint64_t page)
{
	size_t i = (size_t)(((page + 1) * 0x9e3779b97f4a7c15ull) >> 17) & (cappages - 1);
	while (pages[i].page && pages[i].page != page + 1)
		i = (i + 1) & (cappages - 1);
	return &pages[i];
}

static void pages_grow(void)
{
	if (2 * (npages + 1) <= cappages)
		return;
	sym_page *old = pages;
	size_t oldcap = cappages;
	cappages = cappages ? 2 * cappages : 1024;
	pages = calloc(cappages, sizeof *pages);
	if (!pages) {
		fprintf(stderr, "skel: replay: out of memory (symbolize)\n");
		exit(2);
	}
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].page)
			*page_slot(old[i].page - 1) = old[i];
	free(old);
}

/* ids stay sorted by alloc: events mostly come in seq order */
static void ids_insert(sym_ent **ids, uint32_t *n, uint32_t *cap, uint32_t id)
{
	size_t c = *cap;
	*ids = grow(*ids, &c, (size_t)*n + 1, sizeof **ids);
	*cap = (uint32_t)c;
	uint32_t k = *n;
	while (k > 0 && (*ids)[k - 1].alloc > blocks[id].alloc) {
		(*ids)[k] = (*ids)[k - 1];
		k--;
	}
	const sym_block *b = &blocks[id];
	(*ids)[k] = (sym_ent){ b->lo, b->hi, b->alloc, b->free, b->site, id, b->n, b->thread };
	(*n)++;
}

/* The index of p's last group with lo <= a, + 1 (0: none). */
static uint32_t grp_upto(const sym_page *p, uint64_t a)
{
	uint32_t lo = 0, hi = p->ng;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (p->g[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The index of g's last entry with alloc <= c, + 1 (0: none). */
static uint32_t ent_upto(const sym_grp *g, uint64_t c)
{
	uint32_t lo = 0, hi = g->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (g->e[mid].alloc <= c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A page's groups stay sorted by lo, each group's blocks by alloc: a
 * lookup goes to the address, then to the time. */
static void page_insert(sym_page *p, uint32_t id)
{
	const sym_block *b = &blocks[id];
	uint32_t k = grp_upto(p, b->lo);
	if (!k || p->g[k - 1].lo != b->lo) {
		size_t c = p->capg;
		p->g = grow(p->g, &c, (size_t)p->ng + 1, sizeof *p->g);
		p->capg = (uint32_t)c;
		memmove(&p->g[k + 1], &p->g[k], (p->ng - k) * sizeof *p->g);
		p->g[k] = (sym_grp){ b->lo, NULL, 0, 0 };
		p->ng++;
		k++;
	}
	sym_grp *g = &p->g[k - 1];
	size_t c = g->cap;
	g->e = grow(g->e, &c, (size_t)g->n + 1, sizeof *g->e);
	g->cap = (uint32_t)c;
	uint32_t j = g->n;
	while (j > 0 && g->e[j - 1].alloc > b->alloc) {
		g->e[j] = g->e[j - 1];
		j--;
	}
	g->e[j] = (sym_ent){ b->lo, b->hi, b->alloc, b->free, b->site, id, b->n, b->thread };
	g->n++;
	if (b->hi - b->lo > p->maxlen)
		p->maxlen = b->hi - b->lo;
}

/* The group of p that begins at lo, or NULL. */
static sym_grp *grp_at(const sym_page *p, uint64_t lo)
{
	uint32_t k = grp_upto(p, lo);
	return k && p->g[k - 1].lo == lo ? &p->g[k - 1] : NULL;
}

static void block_add(uint64_t lo, uint64_t size, uint64_t seq, uint32_t n, uint32_t thread,
		      uint64_t site)
{
	blocks = grow(blocks, &capblocks, nblocks + 1, sizeof *blocks);
	uint32_t id = (uint32_t)nblocks++;
	uint64_t hi = lo + (size ? size : 1);	/* malloc(0): one byte */
	blocks[id] = (sym_block){ lo, hi, seq, UINT64_MAX, site, n, thread };
	if (((hi - 1) >> 12) - (lo >> 12) >= BIG_PAGES) {
		size_t c = capbig;
		big = grow(big, &c, nbig + 1, sizeof *big);
		capbig = c;
		uint32_t nb = (uint32_t)nbig, cb = (uint32_t)capbig;
		ids_insert(&big, &nb, &cb, id);
		nbig = nb;
		return;
	}
	for (uint64_t pg = lo >> 12; pg <= (hi - 1) >> 12; pg++) {
		pages_grow();
		sym_page *p = page_slot(pg);
		if (!p->page) {
			p->page = pg + 1;
			npages++;
		}
		page_insert(p, id);
	}
}

/* The block at `lo` live before seq, or NULL. */
static sym_block *block_live_at(uint64_t lo, uint64_t seq)
{
	for (size_t k = nbig; k > 0; k--) {
		sym_block *b = &blocks[big[k - 1].id];
		if (b->lo == lo && b->alloc < seq && b->free == UINT64_MAX)
			return b;
	}
	sym_page *p = cappages ? page_slot(lo >> 12) : NULL;
	sym_grp *g = p && p->page ? grp_at(p, lo) : NULL;
	if (!g || !seq)
		return NULL;
	for (uint32_t k = ent_upto(g, seq - 1); k > 0; k--) {
		sym_block *b = &blocks[g->e[k - 1].id];
		if (b->free == UINT64_MAX)
			return b;
	}
	return NULL;
}

static void chg_add(uint64_t seq, uint64_t lo, uint64_t hi)
{
	chg = grow(chg, &capchg, nchg + 1, sizeof *chg);
	chg[nchg++] = (sym_chg){ seq, lo, hi };
}

size_t sym_changes(size_t from, sym_chg *out, size_t max)
{
	pthread_mutex_lock(&sym_mu);
	size_t n = from < nchg ? nchg - from : 0;
	if (n > max)
		n = max;
	memcpy(out, chg + from, n * sizeof *out);
	pthread_mutex_unlock(&sym_mu);
	return n;
}

/* b ends at seq: in `blocks` and in the lists that hold it. */
static void block_free(sym_block *b, uint64_t seq)
{
	uint32_t id = (uint32_t)(b - blocks);
	b->free = seq;
	chg_add(seq, b->lo, b->hi);
	if (((b->hi - 1) >> 12) - (b->lo >> 12) >= BIG_PAGES) {
		for (size_t k = 0; k < nbig; k++)
			if (big[k].id == id)
				big[k].free = seq;
		return;
	}
	for (uint64_t pg = b->lo >> 12; pg <= (b->hi - 1) >> 12; pg++) {
		sym_page *p = page_slot(pg);
		sym_grp *g = p->page ? grp_at(p, b->lo) : NULL;
		for (uint32_t k = g ? ent_upto(g, b->alloc) : 0; k > 0; k--)
			if (g->e[k - 1].id == id) {
				g->e[k - 1].free = seq;
				break;
			}
	}
}

static void block_end(uint64_t lo, uint64_t seq)
{
	sym_block *b = lo ? block_live_at(lo, seq) : NULL;
	if (b)
		block_free(b, seq);
}

/* munmap: every live block that begins in [lo, lo + n) ends (those of
 * mmap, and any other the range took with it).  The blocks are found on
 * the range's pages, or, for a range of more pages than there are blocks,
 * by a scan of them all. */
static void block_end_if_in(sym_block *b, uint64_t lo, uint64_t n, uint64_t seq)
{
	if (b->lo >= lo && b->lo - lo < n && b->alloc < seq && b->free == UINT64_MAX)
		block_free(b, seq);
}

static void blocks_end_in(uint64_t lo, uint64_t n, uint64_t seq)
{
	uint64_t first = lo >> 12, last = n ? (lo + n - 1) >> 12 : first;
	if (!n)
		return;
	if (last - first >= nblocks || !cappages) {
		for (size_t k = 0; k < nblocks; k++)
			block_end_if_in(&blocks[k], lo, n, seq);
		return;
	}
	for (size_t k = 0; k < nbig; k++)
		block_end_if_in(&blocks[big[k].id], lo, n, seq);
	for (uint64_t pg = first; pg <= last; pg++) {
		sym_page *p = page_slot(pg);
		for (uint32_t k = 0; p && p->page && k < p->ng; k++)
			for (uint32_t j = 0; j < p->g[k].n; j++)
				block_end_if_in(&blocks[p->g[k].e[j].id], lo, n, seq);
	}
}

void sym_events_add(uint32_t thread, const vt_heap_event *e, size_t n)
{
	pthread_mutex_lock(&sym_mu);
	for (size_t i = 0; i < n; i++) {
		switch (e[i].kind) {
		case VT_HEAP_REALLOC:
		case VT_HEAP_MREMAP:
			block_end(e[i].old, e[i].seq);
			/* fall through */
		case VT_HEAP_MALLOC:
		case VT_HEAP_CALLOC:
		case VT_HEAP_MEMALIGN:
		case VT_HEAP_MMAP:
			block_add(e[i].addr, e[i].size, e[i].seq, e[i].block, thread, e[i].site);
			chg_add(e[i].seq, e[i].addr, e[i].addr + (e[i].size ? e[i].size : 1));
			break;
		case VT_HEAP_FREE:
			block_end(e[i].addr, e[i].seq);
			break;
		case VT_HEAP_MUNMAP:
			blocks_end_in(e[i].addr, e[i].size, e[i].seq);
			break;
		case VT_HEAP_STACK:
		case VT_HEAP_TLS: {
			size_t cap = nregions;
			regions = grow(regions, &cap, nregions + 1, sizeof *regions);
			regions[nregions++] = (sym_region){ e[i].addr, e[i].addr + e[i].size,
							    thread, e[i].kind };
			chg_add(0, e[i].addr, e[i].addr + e[i].size);
			break;
		}
		default:
			break;
		}
	}
	pthread_mutex_unlock(&sym_mu);
}

/* Among ids (sorted by alloc), the block holding a live at seq c, else
 * the first allocated there after c by another thread (its event may come
 * later than the access in this thread's order; this thread's own later
 * blocks are not allocated yet: malloc's own work before it returns). */
static const sym_block *ids_find(const sym_ent *ids, size_t n, uint64_t a, uint64_t c,
				 uint32_t thread)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ids[mid].alloc <= c)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = lo; k > 0; k--) {
		if (a - ids[k - 1].lo < ids[k - 1].hi - ids[k - 1].lo) {
			const sym_block *b = &blocks[ids[k - 1].id];
			if (b->free > c)
				return b;
			break;	/* live blocks do not overlap: none older is */
		}
	}
	for (size_t k = lo; k < n; k++) {
		const sym_block *b = &blocks[ids[k].id];
		if (a >= b->lo && a < b->hi && b->thread != thread)
			return b;
	}
	return NULL;
}

/* ids_find on a page's groups: the block holding a live at c is, if
 * any, the newest allocated at or before c of a group that begins at most
 * maxlen before a (live blocks do not overlap: an older one holding a
 * was freed before a newer one there was allocated).  *later: the answer
 * is the rule's second (another thread's block allocated after c). */
static const sym_ent *page_find(const sym_page *p, uint64_t a, uint64_t c,
				uint32_t thread, bool *later)
{
	uint32_t top = grp_upto(p, a);
	*later = false;
	for (uint32_t k = top; k > 0 && a - p->g[k - 1].lo < p->maxlen; k--) {
		const sym_grp *g = &p->g[k - 1];
		uint32_t j = ent_upto(g, c);
		if (j && a < g->e[j - 1].hi && g->e[j - 1].free > c)
			return &g->e[j - 1];
	}
	/* none live at c: the first allocated there after c by another
	 * thread */
	const sym_ent *first = NULL;
	for (uint32_t k = top; k > 0 && a - p->g[k - 1].lo < p->maxlen; k--) {
		const sym_grp *g = &p->g[k - 1];
		for (uint32_t j = ent_upto(g, c); j < g->n; j++) {
			const sym_ent *b = &g->e[j];
			if (a < b->hi && b->thread != thread) {
				if (!first || b->alloc < first->alloc)
					first = b;
				break;
			}
		}
	}
	*later = first != NULL;
	return first;
}

static bool heap_find(sym_view *v, uint64_t a)
{
	const sym_ent *e = NULL;
	bool later = false;
	if (cappages) {
		sym_page *p = page_slot(a >> 12);
		if (p->page)
			e = page_find(p, a, v->seq, v->thread, &later);
	}
	sym_ent be;
	if (!e && nbig) {
		const sym_block *b = ids_find(big, nbig, a, v->seq, v->thread);
		if (b) {
			be = (sym_ent){ b->lo, b->hi, b->alloc, b->free, b->site, 0, b->n, b->thread };
			e = &be;
			later = b->alloc > v->seq;
		}
	}
	if (!e)
		return false;
	const sym_ent *b = e;
	v->heap_n = b->n;
	v->lo = b->lo;
	v->hi = b->hi;
	if (later) {	/* holds for a alone: a block live at the view's
			 * time may hold the addresses around it */
		v->lo = a;
		v->hi = a + 1;
	}
	v->base = b->lo;
	v->heap = true;
	v->site = b->site;
	v->at_seq = v->seq;
	return true;
}

/* thread regions: own (mine true) or another thread's, latest first */
static bool region_find(sym_view *v, uint64_t a, bool mine)
{
	for (size_t k = nregions; k > 0; k--) {
		const sym_region *r = &regions[k - 1];
		if ((r->thread == v->thread) != mine || a < r->lo || a >= r->hi)
			continue;
		/* the TLS block of a thread lies at the top of its stack */
		if (r->kind == VT_HEAP_STACK) {
			bool tls = false;
			for (size_t j = 0; j < nregions && !tls; j++)
				tls = regions[j].kind == VT_HEAP_TLS && regions[j].thread == r->thread &&
				      a >= regions[j].lo && a < regions[j].hi;
			if (tls)
				continue;
		}
		snprintf(v->name, sizeof v->name, "%s#%u", r->kind == VT_HEAP_TLS ? "tls" : "stack",
			 r->thread);
		v->lo = r->lo;
		v->hi = r->hi;
		/* a stack's answer holds up to its thread's TLS block */
		for (size_t j = 0; r->kind == VT_HEAP_STACK && j < nregions; j++) {
			const sym_region *t = &regions[j];
			if (t->kind != VT_HEAP_TLS || t->thread != r->thread ||
			    t->hi <= v->lo || t->lo >= v->hi)
				continue;
			if (t->lo > a)
				v->hi = t->lo;
			else
				v->lo = t->hi;
		}
		v->base = 0;
		return true;
	}
	return false;
}

static char *put_hex(char *p, uint64_t x)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[x & 15];
		x >>= 4;
	} while (x);
	while (n)
		*p++ = tmp[--n];
	return p;
}

bool sym_find(sym_view *v, uint64_t a)
{
	if (v->hi && a >= v->lo && a < v->hi && (!v->heap || v->at_seq == v->seq))
		return true;
	pthread_mutex_lock(&sym_mu);
	v->heap = false;
	v->hi = 0;
	bool found = region_find(v, a, true) || heap_find(v, a) || static_find(v, a) ||
		     region_find(v, a, false);
	pthread_mutex_unlock(&sym_mu);
	return found;
}

void sym_code_name(uint64_t a, char *out, size_t n)
{
	sym_view v = { 0 };
	pthread_mutex_lock(&sym_mu);
	bool found = static_find(&v, a);
	pthread_mutex_unlock(&sym_mu);
	if (found)
		snprintf(out, n, "%s+0x%" PRIx64, v.name, a - v.base);
	else
		snprintf(out, n, "0x%" PRIx64, a);
}

char *sym_put(sym_view *v, uint64_t a, char *p)
{
	if (!sym_find(v, a)) {
		*p++ = '?';
		return p;
	}
	if (v->heap) {
		char tmp[12];
		int k = 0;
		uint32_t x = v->heap_n;
		do
			tmp[k++] = (char)('0' + x % 10);
		while ((x /= 10) != 0);
		memcpy(p, "heap#", 5);
		p += 5;
		while (k)
			*p++ = tmp[--k];
	} else {
		size_t len = strlen(v->name);
		memcpy(p, v->name, len);
		p += len;
	}
	if (v->base) {
		memcpy(p, "+0x", 3);
		p = put_hex(p + 3, a - v->base);
	}
	return p;
}

void sym_free(void)
{
	for (size_t i = 0; i < nobjs; i++) {
		free(objs[i].syms);
		free(objs[i].secs);
		free(objs[i].names);
	}
	free(objs);
	for (size_t i = 0; i < cappages; i++) {
		for (uint32_t k = 0; k < pages[i].ng; k++)
			free(pages[i].g[k].e);
		free(pages[i].g);
	}
	free(pages);
	free(blocks);
	free(big);
	free(regions);
	free(chg);
	chg = NULL;
	nchg = capchg = 0;
	objs = NULL;
	pages = NULL;
	blocks = NULL;
	big = NULL;
	regions = NULL;
	nobjs = nblocks = npages = cappages = nbig = capbig = capblocks = nregions = 0;
}
