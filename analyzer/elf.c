/* elf.c — loading an x86-64 executable: sections, function symbols, PLT
 * stub names, .eh_frame function ranges and the binary's identity.
 *
 * The whole file is read into memory and every offset and size taken from
 * it is checked against the file size here, before libelf or our own
 * readers look at it: libelf trusts a good part of what it reads, and the
 * analyzer must survive any input.  Multi-byte fields are read with memcpy
 * because a corrupt file may place tables at unaligned offsets. */
#include "analyzer/analyzer.h"
#include "replay/format.h"

#include <elf.h>
#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <Zydis/Zydis.h>

/* A data word the loader writes, and what it writes there. */
typedef struct elf_reloc_slot {
	uint64_t slot, value;
} elf_reloc_slot;

/* What the loader needs while it runs; only `b` outlives elf_open. */
typedef struct elf_loader {
	binary *b;
	Elf *e;
	Elf64_Ehdr eh;
	GElf_Shdr *sh;      /* all section headers, by section index */
	size_t shnum;
	GElf_Phdr *ph;      /* program headers */
	size_t phnum;
	Elf64_Dyn *dyn;     /* the dynamic section up to DT_NULL */
	size_t ndyn;
	/* data word -> what the loader writes there, sorted by slot */
	elf_reloc_slot *slots;
	size_t nslots, slots_cap;
	/* IFUNC resolvers named by IRELATIVE relocations */
	uint64_t *resolvers;
	size_t nresolvers, resolvers_cap;
	char *err;
} elf_loader;

static int elf_fail(char *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, ERR_LEN, fmt, ap);
	va_end(ap);
	return -1;
}

static bool elf_in_file(const binary *b, uint64_t off, uint64_t len)
{
	return off <= b->map_size && len <= b->map_size - off;
}

/* qsort that accepts an empty, possibly NULL, array */
static void elf_sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

static const uint8_t *elf_bytes(const binary *b)
{
	return b->map;
}

static uint64_t elf_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* ------------------------------------------------------------ reading */

static const char *elf_file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return " (a directory)";
	if (S_ISFIFO(m))
		return " (a named pipe)";
	if (S_ISSOCK(m))
		return " (a socket)";
	if (S_ISCHR(m) || S_ISBLK(m))
		return " (a device)";
	return "";
}

/* O_NONBLOCK: opening a named pipe for reading would otherwise wait for
 * a writer, forever; it is refused below like any non-regular file. */
static int elf_read_file(binary *b, const char *path, char *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return elf_fail(err, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int saved = errno;
		close(fd);
		return elf_fail(err, "cannot stat: %s", strerror(saved));
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return elf_fail(err, "not a regular file%s", elf_file_kind(st.st_mode));
	}
	size_t size = (size_t)st.st_size;
	/* one spare byte so an empty file still gets a distinct buffer */
	b->map = malloc(size + 1);
	if (!b->map) {
		close(fd);
		return elf_fail(err, "out of memory reading %zu bytes", size);
	}
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, (char *)b->map + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	int saved = errno;
	close(fd);
	if (got < size)
		return elf_fail(err, "cannot read: %s", got ? "file shrank"
				: strerror(saved));
	b->map_size = size;
	return 0;
}

/* -------------------------------------------------------- identification */

static const char *elf_machine_name(unsigned m)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_ARM: return "ARM";
	case EM_AARCH64: return "AArch64";
	case EM_RISCV: return "RISC-V";
	case EM_PPC: return "PowerPC";
	case EM_PPC64: return "PowerPC64";
	case EM_S390: return "S/390";
	case EM_MIPS: return "MIPS";
	case EM_SPARCV9: return "SPARC64";
	case EM_IA_64: return "IA-64";
	case 258: return "LoongArch";
	default: return NULL;
	}
}

/* The checks whose answer tells the user what the file is, made on raw
 * bytes so that each gets its own message. */
static int elf_identify(elf_loader *ld)
{
	const binary *b = ld->b;
	const uint8_t *p = elf_bytes(b);
	if (b->map_size == 0)
		return elf_fail(ld->err, "empty file");
	if (b->map_size < SELFMAG || memcmp(p, ELFMAG, SELFMAG) != 0)
		return elf_fail(ld->err, "not an ELF file");
	if (b->map_size <= EI_VERSION)
		return elf_fail(ld->err, "truncated ELF file (identification)");
	if (p[EI_CLASS] == ELFCLASS32)
		return elf_fail(ld->err, "32-bit ELF (ELFCLASS32); skel handles x86-64 only");
	if (p[EI_CLASS] != ELFCLASS64)
		return elf_fail(ld->err, "ELF file of unknown class %u", p[EI_CLASS]);
	if (p[EI_DATA] == ELFDATA2MSB)
		return elf_fail(ld->err, "big-endian ELF; skel handles x86-64 only");
	if (p[EI_DATA] != ELFDATA2LSB)
		return elf_fail(ld->err, "ELF file of unknown data encoding %u", p[EI_DATA]);
	if (p[EI_VERSION] != EV_CURRENT)
		return elf_fail(ld->err, "corrupt ELF file (identification version %u, want %u)",
				p[EI_VERSION], EV_CURRENT);
	if (b->map_size < sizeof(Elf64_Ehdr))
		return elf_fail(ld->err, "truncated ELF file (header)");
	memcpy(&ld->eh, p, sizeof ld->eh);
	unsigned m = ld->eh.e_machine;
	if (m != EM_X86_64) {
		const char *name = elf_machine_name(m);
		if (name)
			return elf_fail(ld->err, "ELF for %s (machine %u); skel handles x86-64 only", name, m);
		return elf_fail(ld->err, "ELF for machine %u; skel handles x86-64 only", m);
	}
	switch (ld->eh.e_type) {
	case ET_EXEC:
	case ET_DYN:
		return 0;
	case ET_REL:
		return elf_fail(ld->err, "relocatable object file, not an executable");
	case ET_CORE:
		return elf_fail(ld->err, "core file");
	default:
		return elf_fail(ld->err, "ELF file of unknown type %u", ld->eh.e_type);
	}
}

/* Program and section header tables must lie inside the file before libelf
 * is allowed to read them.  Extended numbering (e_shnum == 0, e_shstrndx ==
 * SHN_XINDEX) keeps the real values in section 0. */
static int elf_check_tables(elf_loader *ld)
{
	const binary *b = ld->b;
	const Elf64_Ehdr *eh = &ld->eh;
	if (eh->e_phnum) {
		if (eh->e_phentsize != sizeof(Elf64_Phdr))
			return elf_fail(ld->err, "corrupt ELF file (program header size %u)", eh->e_phentsize);
		if (!elf_in_file(b, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
			return elf_fail(ld->err, "truncated ELF file (program headers past end of file)");
	}
	if (eh->e_shoff == 0)
		return 0;
	if (eh->e_shentsize != sizeof(Elf64_Shdr))
		return elf_fail(ld->err, "corrupt ELF file (section header size %u)", eh->e_shentsize);
	if (!elf_in_file(b, eh->e_shoff, sizeof(Elf64_Shdr)))
		return elf_fail(ld->err, "truncated ELF file (section headers past end of file)");
	Elf64_Shdr sh0;
	memcpy(&sh0, elf_bytes(b) + eh->e_shoff, sizeof sh0);
	uint64_t n = eh->e_shnum ? eh->e_shnum : sh0.sh_size;
	if (n > (b->map_size - eh->e_shoff) / sizeof(Elf64_Shdr))
		return elf_fail(ld->err, "truncated ELF file (section headers past end of file)");
	uint64_t strndx = eh->e_shstrndx == SHN_XINDEX ? sh0.sh_link : eh->e_shstrndx;
	if (strndx != SHN_UNDEF && strndx >= n)
		return elf_fail(ld->err, "corrupt ELF file (section name table index %llu)",
				(unsigned long long)strndx);
	return 0;
}

static bool elf_push(void **v, size_t *cap, size_t n, size_t elsize);

/* Copies the dynamic section, found through PT_DYNAMIC (section headers
 * may be gone), up to its DT_NULL. */
static int elf_read_dynamic(elf_loader *ld, const GElf_Phdr *dyn)
{
	const binary *b = ld->b;
	if (ld->dyn || !elf_in_file(b, dyn->p_offset, dyn->p_filesz))
		return 0;
	size_t max = dyn->p_filesz / sizeof(Elf64_Dyn);
	ld->dyn = malloc((max ? max : 1) * sizeof *ld->dyn);
	if (!ld->dyn)
		return elf_fail(ld->err, "out of memory");
	for (size_t i = 0; i < max; i++) {
		memcpy(&ld->dyn[i], elf_bytes(b) + dyn->p_offset + i * sizeof(Elf64_Dyn),
		       sizeof(Elf64_Dyn));
		if (ld->dyn[i].d_tag == DT_NULL)
			break;
		ld->ndyn++;
	}
	return 0;
}

/* The value of the last `tag` entry (the loader keeps the last one), or
 * false when there is none. */
static bool elf_dyn_value(const elf_loader *ld, int64_t tag, uint64_t *v)
{
	bool found = false;
	for (size_t i = 0; i < ld->ndyn; i++)
		if (ld->dyn[i].d_tag == tag) {
			*v = ld->dyn[i].d_un.d_val;
			found = true;
		}
	return found;
}

/* ET_DYN is a PIE when the linker marked it DF_1_PIE.  Older linkers did
 * not; a PT_INTERP without a DT_SONAME is then the sign.  Any other ET_DYN
 * is a shared object: glibc's libc.so.6 has a PT_INTERP too (it runs), but
 * it has a soname. */
static int elf_check_kind(elf_loader *ld)
{
	if (elf_getphdrnum(ld->e, &ld->phnum) != 0)
		return elf_fail(ld->err, "corrupt ELF file (program headers: %s)", elf_errmsg(-1));
	ld->ph = calloc(ld->phnum ? ld->phnum : 1, sizeof *ld->ph);
	if (!ld->ph)
		return elf_fail(ld->err, "out of memory");
	bool interp = false;
	for (size_t i = 0; i < ld->phnum; i++) {
		GElf_Phdr *ph = &ld->ph[i];
		if (!gelf_getphdr(ld->e, (int)i, ph))
			return elf_fail(ld->err, "corrupt ELF file (program header %zu)", i);
		if (ph->p_type == PT_INTERP)
			interp = true;
		else if (ph->p_type == PT_DYNAMIC && elf_read_dynamic(ld, ph) < 0)
			return -1;
	}
	ld->b->entry = ld->eh.e_entry;
	if (ld->eh.e_type == ET_EXEC)
		return 0;
	uint64_t flags1 = 0, soname;
	elf_dyn_value(ld, DT_FLAGS_1, &flags1);
	if ((flags1 & DF_1_PIE) || (interp && !elf_dyn_value(ld, DT_SONAME, &soname)))
		ld->b->pie = true;
	else
		ld->b->shared = true;
	return 0;
}

/* The file offset of virtual address `addr` with `len` bytes after it in
 * the same loaded segment, or UINT64_MAX. */
static uint64_t elf_vaddr_offset(const elf_loader *ld, uint64_t addr, uint64_t len)
{
	for (size_t i = 0; i < ld->phnum; i++) {
		const GElf_Phdr *ph = &ld->ph[i];
		if (ph->p_type != PT_LOAD || addr < ph->p_vaddr || addr - ph->p_vaddr >= ph->p_filesz)
			continue;
		uint64_t off = addr - ph->p_vaddr;
		if (len > ph->p_filesz - off || !elf_in_file(ld->b, ph->p_offset + off, len))
			return UINT64_MAX;
		return ph->p_offset + off;
	}
	return UINT64_MAX;
}

/* A copy of the string at `off` in DT_STRTAB; NULL when it is not there
 * (a corrupt file), with *bad set, or out of memory. */
static char *elf_dyn_string(const elf_loader *ld, uint64_t off, bool *bad)
{
	uint64_t tab = 0, size = 0;
	if (!elf_dyn_value(ld, DT_STRTAB, &tab) || !elf_dyn_value(ld, DT_STRSZ, &size) ||
	    off >= size) {
		*bad = true;
		return NULL;
	}
	uint64_t at = elf_vaddr_offset(ld, tab + off, 1);
	if (at == UINT64_MAX || tab + off < tab) {
		*bad = true;
		return NULL;
	}
	uint64_t room = size - off;
	if (room > ld->b->map_size - at)
		room = ld->b->map_size - at;
	const char *s = (const char *)elf_bytes(ld->b) + at;
	if (!memchr(s, 0, room)) {
		*bad = true;
		return NULL;
	}
	return strdup(s);
}

static char *elf_interp(const elf_loader *ld, bool *bad)
{
	for (size_t i = 0; i < ld->phnum; i++) {
		const GElf_Phdr *ph = &ld->ph[i];
		if (ph->p_type != PT_INTERP)
			continue;
		const char *s = (const char *)elf_bytes(ld->b) + ph->p_offset;
		if (!elf_in_file(ld->b, ph->p_offset, ph->p_filesz) || !ph->p_filesz ||
		    !memchr(s, 0, ph->p_filesz)) {
			*bad = true;
			return NULL;
		}
		return strdup(s);
	}
	return NULL;
}

/* PT_INTERP, DT_SONAME, DT_NEEDED, DT_RPATH and DT_RUNPATH: what
 * analyzer/deps.c resolves the way the loader does.  A string outside
 * DT_STRTAB fails the load: the loader would refuse the file too. */
static int elf_load_dynamic(elf_loader *ld)
{
	binary *b = ld->b;
	bool bad = false;
	size_t cap = 0;
	uint64_t flags1 = 0;
	b->interp = elf_interp(ld, &bad);
	b->nodeflib = elf_dyn_value(ld, DT_FLAGS_1, &flags1) && (flags1 & DF_1_NODEFLIB);
	for (size_t i = 0; i < ld->ndyn && !bad; i++) {
		char **slot;
		switch (ld->dyn[i].d_tag) {
		case DT_SONAME: slot = &b->soname; break;
		case DT_RPATH: slot = &b->rpath; break;
		case DT_RUNPATH: slot = &b->runpath; break;
		case DT_NEEDED:
			if (!elf_push((void **)&b->needed, &cap, b->nneeded, sizeof *b->needed))
				return elf_fail(ld->err, "out of memory");
			slot = &b->needed[b->nneeded++];
			*slot = NULL;
			break;
		default:
			continue;
		}
		free(*slot);
		*slot = elf_dyn_string(ld, ld->dyn[i].d_un.d_val, &bad);
		if (!*slot && !bad)
			return elf_fail(ld->err, "out of memory");
	}
	if (bad)
		return elf_fail(ld->err, "corrupt ELF file (dynamic section strings)");
	return 0;
}

/* ------------------------------------------------------------ sections */

static const elf_section *elf_section_by_name(const binary *b, const char *name)
{
	for (size_t i = 0; i < b->nsections; i++)
		if (strcmp(b->sections[i].name, name) == 0)
			return &b->sections[i];
	return NULL;
}

/* Section headers are copied into ld->sh by index (symbol tables and
 * relocations refer to sections by index); b->sections lists them all but
 * the null section 0, in file order, so b->sections[i] is section i + 1. */
static int elf_load_sections(elf_loader *ld)
{
	binary *b = ld->b;
	size_t shstrndx;
	if (elf_getshdrnum(ld->e, &ld->shnum) != 0 ||
	    elf_getshdrstrndx(ld->e, &shstrndx) != 0)
		return elf_fail(ld->err, "corrupt ELF file (section headers: %s)", elf_errmsg(-1));
	if (ld->shnum == 0)
		return 0;
	ld->sh = calloc(ld->shnum, sizeof *ld->sh);
	b->sections = calloc(ld->shnum, sizeof *b->sections);
	if (!ld->sh || !b->sections)
		return elf_fail(ld->err, "out of memory");
	for (size_t i = 0; i < ld->shnum; i++) {
		Elf_Scn *scn = elf_getscn(ld->e, i);
		if (!scn || !gelf_getshdr(scn, &ld->sh[i]))
			return elf_fail(ld->err, "corrupt ELF file (section header %zu)", i);
	}
	/* libelf reads names from the name table: it must be in the file */
	if (shstrndx < ld->shnum && ld->sh[shstrndx].sh_type != SHT_NOBITS &&
	    !elf_in_file(b, ld->sh[shstrndx].sh_offset, ld->sh[shstrndx].sh_size))
		return elf_fail(ld->err, "truncated ELF file (section name table past end of file)");
	for (size_t i = 1; i < ld->shnum; i++) {
		const GElf_Shdr *sh = &ld->sh[i];
		const char *name = elf_strptr(ld->e, shstrndx, sh->sh_name);
		elf_section *s = &b->sections[b->nsections++];
		s->name = strdup(name ? name : "");
		if (!s->name)
			return elf_fail(ld->err, "out of memory");
		if (sh->sh_type != SHT_NOBITS && !elf_in_file(b, sh->sh_offset, sh->sh_size))
			return elf_fail(ld->err, "truncated ELF file (section %s past end of file)", s->name);
		if ((sh->sh_flags & SHF_ALLOC) && sh->sh_addr + sh->sh_size < sh->sh_addr)
			return elf_fail(ld->err, "corrupt ELF file (section %s wraps around)", s->name);
		s->addr = sh->sh_addr;
		s->size = sh->sh_size;
		s->data = sh->sh_type == SHT_NOBITS ? NULL : elf_bytes(b) + sh->sh_offset;
		s->exec = sh->sh_flags & SHF_EXECINSTR;
		s->alloc = sh->sh_flags & SHF_ALLOC;
		s->write = sh->sh_flags & SHF_WRITE;
		/* .tbss occupies no address range of its own: it overlaps the
		 * sections after it, so no address lookup should find it */
		if ((sh->sh_flags & SHF_TLS) && sh->sh_type == SHT_NOBITS)
			s->alloc = false;
	}
	return 0;
}

/* The NUL-terminated string at `off` in string table section `idx`, or NULL
 * when the index, the table or the string is bad. */
static const char *elf_string(const elf_loader *ld, size_t idx, uint64_t off)
{
	if (idx == 0 || idx >= ld->shnum || ld->sh[idx].sh_type != SHT_STRTAB)
		return NULL;
	const GElf_Shdr *sh = &ld->sh[idx];
	if (off >= sh->sh_size)
		return NULL;
	const char *s = (const char *)elf_bytes(ld->b) + sh->sh_offset + off;
	if (!memchr(s, 0, sh->sh_size - off))
		return NULL;
	return s;
}

/* Number of Elf64_Sym entries in a symbol table section, 0 if it is not one. */
static size_t elf_nsyms(const elf_loader *ld, size_t idx)
{
	if (idx == 0 || idx >= ld->shnum)
		return 0;
	const GElf_Shdr *sh = &ld->sh[idx];
	if (sh->sh_type != SHT_SYMTAB && sh->sh_type != SHT_DYNSYM)
		return 0;
	if (sh->sh_entsize != sizeof(Elf64_Sym))
		return 0;
	return sh->sh_size / sizeof(Elf64_Sym);
}

static Elf64_Sym elf_sym(const elf_loader *ld, size_t idx, size_t i)
{
	Elf64_Sym s;
	memcpy(&s, elf_bytes(ld->b) + ld->sh[idx].sh_offset + i * sizeof s, sizeof s);
	return s;
}

static const char *elf_sym_name(const elf_loader *ld, size_t idx, const Elf64_Sym *s)
{
	return elf_string(ld, ld->sh[idx].sh_link, s->st_name);
}

/* ------------------------------------------------------- function symbols */

typedef struct elf_cand {
	uint64_t addr, size;
	const char *name;   /* into the map */
	int local;          /* 0 for global/weak: sorts first */
	size_t seq;         /* order found: the first of equals wins */
} elf_cand;

static int elf_cand_cmp(const void *x, const void *y)
{
	const elf_cand *a = x, *c = y;
	if (a->addr != c->addr)
		return a->addr < c->addr ? -1 : 1;
	if (a->local != c->local)
		return a->local - c->local;
	return a->seq < c->seq ? -1 : a->seq > c->seq;
}

static size_t elf_collect_funcs(const elf_loader *ld, size_t idx, elf_cand *out, size_t n)
{
	size_t nsyms = elf_nsyms(ld, idx);
	for (size_t i = 1; i < nsyms; i++) {
		Elf64_Sym s = elf_sym(ld, idx, i);
		/* an IFUNC symbol's value is its resolver, code the loader calls */
		unsigned type = ELF64_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_value == 0)
			continue;
		const char *name = elf_sym_name(ld, idx, &s);
		if (!name || !*name)
			continue;
		out[n] = (elf_cand){ s.st_value, s.st_size, name,
			ELF64_ST_BIND(s.st_info) == STB_LOCAL, n };
		n++;
	}
	return n;
}

static int elf_load_funcs(elf_loader *ld)
{
	binary *b = ld->b;
	size_t total = 0;
	b->stripped = true;
	for (size_t i = 1; i < ld->shnum; i++) {
		total += elf_nsyms(ld, i);
		if (ld->sh[i].sh_type == SHT_SYMTAB)
			b->stripped = false;
	}
	if (total == 0)
		return 0;
	elf_cand *c = malloc(total * sizeof *c);
	if (!c)
		return elf_fail(ld->err, "out of memory");
	size_t n = 0;
	/* .symtab first: its names are the ones a person reading the code
	 * expects, and it lists locals that .dynsym never has */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 1; i < ld->shnum; i++)
			if (ld->sh[i].sh_type == (pass ? SHT_DYNSYM : SHT_SYMTAB))
				n = elf_collect_funcs(ld, i, c, n);
	elf_sort(c, n, sizeof *c, elf_cand_cmp);
	b->funcs = calloc(n ? n : 1, sizeof *b->funcs);
	if (!b->funcs) {
		free(c);
		return elf_fail(ld->err, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		if (i && c[i].addr == c[i - 1].addr)
			continue;
		elf_symbol *f = &b->funcs[b->nfuncs];
		f->name = strdup(c[i].name);
		if (!f->name) {
			free(c);
			return elf_fail(ld->err, "out of memory");
		}
		f->addr = c[i].addr;
		f->size = c[i].size;
		b->nfuncs++;
	}
	free(c);
	return 0;
}

/* Functions .dynsym offers other objects (the loader hands out their
 * addresses), into b->exports, unsorted. */
static int elf_load_exports(elf_loader *ld)
{
	binary *b = ld->b;
	size_t cap = 0;
	for (size_t idx = 1; idx < ld->shnum; idx++) {
		if (ld->sh[idx].sh_type != SHT_DYNSYM)
			continue;
		size_t nsyms = elf_nsyms(ld, idx);
		for (size_t i = 1; i < nsyms; i++) {
			Elf64_Sym s = elf_sym(ld, idx, i);
			unsigned type = ELF64_ST_TYPE(s.st_info), bind = ELF64_ST_BIND(s.st_info);
			unsigned vis = ELF64_ST_VISIBILITY(s.st_other);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
			    s.st_value == 0 || (bind != STB_GLOBAL && bind != STB_WEAK) ||
			    (vis != STV_DEFAULT && vis != STV_PROTECTED))
				continue;
			if (!elf_push((void **)&b->exports, &cap, b->nexports, sizeof *b->exports))
				return elf_fail(ld->err, "out of memory");
			b->exports[b->nexports++] = s.st_value;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- PLT */

typedef struct elf_slot {
	uint64_t addr;      /* GOT slot */
	const char *name;   /* into the map */
	bool jmprel;        /* JUMP_SLOT or IRELATIVE */
} elf_slot;

typedef struct elf_slots {
	elf_slot *v;
	size_t n, cap;
} elf_slots;

static int elf_slot_cmp(const void *x, const void *y)
{
	const elf_slot *a = x, *c = y;
	return a->addr < c->addr ? -1 : a->addr > c->addr;
}

static bool elf_push(void **v, size_t *cap, size_t n, size_t elsize)
{
	if (n < *cap)
		return true;
	size_t nc = *cap ? *cap * 2 : 64;
	void *nv = realloc(*v, nc * elsize);
	if (!nv)
		return false;
	*v = nv;
	*cap = nc;
	return true;
}

/* GOT slot -> imported name, from JUMP_SLOT (lazy or -z now PLT) and
 * GLOB_DAT (.plt.got stubs, -fno-plt calls) relocations.  A library's
 * calls to its own IFUNCs (libc's memcpy, strlen) go through IRELATIVE
 * slots: those stubs take the name of the resolver's symbol. */
static int elf_collect_slots(const elf_loader *ld, elf_slots *gs)
{
	for (size_t i = 1; i < ld->shnum; i++) {
		const GElf_Shdr *sh = &ld->sh[i];
		if (sh->sh_type != SHT_RELA || sh->sh_entsize != sizeof(Elf64_Rela))
			continue;
		size_t symtab = sh->sh_link;
		size_t nsyms = elf_nsyms(ld, symtab);
		for (uint64_t k = 0; k < sh->sh_size / sizeof(Elf64_Rela); k++) {
			Elf64_Rela r;
			memcpy(&r, elf_bytes(ld->b) + sh->sh_offset + k * sizeof r, sizeof r);
			unsigned type = ELF64_R_TYPE(r.r_info);
			size_t si = ELF64_R_SYM(r.r_info);
			const char *name = NULL;
			if (type == R_X86_64_IRELATIVE) {
				name = elf_func_name(ld->b, (uint64_t)r.r_addend);
			} else if ((type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT) &&
				   si != 0 && si < nsyms) {
				Elf64_Sym s = elf_sym(ld, symtab, si);
				name = elf_sym_name(ld, symtab, &s);
			}
			if (!name || !*name)
				continue;
			if (!elf_push((void **)&gs->v, &gs->cap, gs->n, sizeof *gs->v))
				return elf_fail(ld->err, "out of memory");
			gs->v[gs->n++] = (elf_slot){ r.r_offset, name,
						     type != R_X86_64_GLOB_DAT };
		}
	}
	elf_sort(gs->v, gs->n, sizeof *gs->v, elf_slot_cmp);
	return 0;
}

static const elf_slot *elf_slot_at(const elf_slots *gs, uint64_t addr)
{
	elf_slot key = { addr, NULL, false };
	return gs->n ? bsearch(&key, gs->v, gs->n, sizeof key, elf_slot_cmp) : NULL;
}

static int elf_add_plt(binary *b, size_t *cap, uint64_t addr, const elf_slot *s)
{
	if (!elf_push((void **)&b->plts, cap, b->nplts, sizeof *b->plts))
		return -1;
	char *copy = strdup(s->name);
	if (!copy)
		return -1;
	b->plts[b->nplts++] = (elf_plt){ addr, copy, s->addr, s->jmprel };
	return 0;
}

/* The GOT slot a `jmp [rip+X]` reads, or 0 when insn is something else. */
static uint64_t elf_stub_slot(const ZydisDecodedInstruction *in,
			      const ZydisDecodedOperand *op, uint64_t addr)
{
	if (in->mnemonic != ZYDIS_MNEMONIC_JMP || in->operand_count_visible < 1)
		return 0;
	if (op[0].type != ZYDIS_OPERAND_TYPE_MEMORY || op[0].mem.base != ZYDIS_REGISTER_RIP ||
	    op[0].mem.index != ZYDIS_REGISTER_NONE)
		return 0;
	ZyanU64 slot;
	if (!ZYAN_SUCCESS(ZydisCalcAbsoluteAddress(in, &op[0], addr, &slot)))
		return 0;
	return slot;
}

/* Each stub is an indirect jump through its GOT slot, maybe preceded by
 * endbr64 (IBT); the stub starts at the endbr64 then.  PLT0 jumps through
 * GOT[2], which no relocation names, and the IBT lazy .plt entries jump to
 * PLT0 directly: both stay unnamed. */
static int elf_decode_stubs(binary *b, size_t *cap, const elf_section *s,
			    const elf_slots *gs)
{
	ZydisDecoder dec;
	ZydisDecoderInit(&dec, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
	uint64_t endbr = UINT64_MAX;    /* address of an endbr64 just before */
	for (uint64_t off = 0; off < s->size;) {
		ZydisDecodedInstruction in;
		ZydisDecodedOperand op[ZYDIS_MAX_OPERAND_COUNT];
		uint64_t addr = s->addr + off;
		if (!ZYAN_SUCCESS(ZydisDecoderDecodeFull(&dec, s->data + off, s->size - off, &in, op))) {
			off++;
			endbr = UINT64_MAX;
			continue;
		}
		uint64_t slot = elf_stub_slot(&in, op, addr);
		const elf_slot *gsl = slot ? elf_slot_at(gs, slot) : NULL;
		if (gsl && gsl->name && elf_add_plt(b, cap, endbr != UINT64_MAX ? endbr : addr, gsl) < 0)
			return -1;
		endbr = in.mnemonic == ZYDIS_MNEMONIC_ENDBR64 ? addr : UINT64_MAX;
		off += in.length;
	}
	return 0;
}

static int elf_plt_cmp(const void *x, const void *y)
{
	const elf_plt *a = x, *c = y;
	return a->addr < c->addr ? -1 : a->addr > c->addr;
}

static int elf_load_plts(elf_loader *ld)
{
	binary *b = ld->b;
	elf_slots gs = { 0 };
	if (elf_collect_slots(ld, &gs) < 0) {
		free(gs.v);
		return -1;
	}
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got" };
	size_t cap = 0;
	for (size_t i = 0; i < sizeof names / sizeof *names && gs.n; i++) {
		const elf_section *s = elf_section_by_name(b, names[i]);
		if (!s || !s->data || !s->exec)
			continue;
		if (elf_decode_stubs(b, &cap, s, &gs) < 0) {
			free(gs.v);
			return elf_fail(ld->err, "out of memory");
		}
	}
	free(gs.v);
	elf_sort(b->plts, b->nplts, sizeof *b->plts, elf_plt_cmp);
	/* one name per stub address; sections never overlap, so duplicates
	 * only come from a corrupt file */
	size_t n = 0;
	for (size_t i = 0; i < b->nplts; i++) {
		if (n && b->plts[n - 1].addr == b->plts[i].addr) {
			free(b->plts[i].name);
			continue;
		}
		b->plts[n++] = b->plts[i];
	}
	b->nplts = n;
	return 0;
}

/* ------------------------------------------------------------ .eh_frame */

/* A bounded reader over section bytes that knows the virtual address of
 * its position, for pc-relative pointers. */
typedef struct elf_cursor {
	const uint8_t *p, *end;
	uint64_t addr;
} elf_cursor;

static bool elf_take(elf_cursor *c, unsigned n, uint64_t *out)
{
	if ((size_t)(c->end - c->p) < n)
		return false;
	*out = elf_le(c->p, n);
	c->p += n;
	c->addr += n;
	return true;
}

static bool elf_leb(elf_cursor *c, bool sign, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	for (;;) {
		if (c->p >= c->end)
			return false;
		uint8_t byte = *c->p++;
		c->addr++;
		if (shift < 64)
			v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
		if (!(byte & 0x80))
			break;
	}
	if (sign && shift < 64 && (v >> (shift - 1)) & 1)
		v |= ~(uint64_t)0 << shift;
	*out = v;
	return true;
}

/* A DW_EH_PE_* encoded pointer (LSB "Exception Frames" spec).  With
 * `apply`, pc-relative values are made absolute; any other application
 * (textrel, datarel, funcrel, indirect) is refused, as x86-64 GCC and
 * clang never use them for FDE addresses. */
static bool elf_encoded(elf_cursor *c, uint8_t enc, bool apply, uint64_t *out)
{
	uint64_t at = c->addr, v;
	bool ok;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: ok = elf_take(c, 8, &v); break;
	case DW_EH_PE_uleb128: ok = elf_leb(c, false, &v); break;
	case DW_EH_PE_udata2: ok = elf_take(c, 2, &v); break;
	case DW_EH_PE_udata4: ok = elf_take(c, 4, &v); break;
	case DW_EH_PE_udata8: ok = elf_take(c, 8, &v); break;
	case DW_EH_PE_sleb128: ok = elf_leb(c, true, &v); break;
	case DW_EH_PE_sdata2: ok = elf_take(c, 2, &v); v = (uint64_t)(int16_t)v; break;
	case DW_EH_PE_sdata4: ok = elf_take(c, 4, &v); v = (uint64_t)(int32_t)v; break;
	case DW_EH_PE_sdata8: ok = elf_take(c, 8, &v); break;
	default: return false;
	}
	if (!ok)
		return false;
	if (apply) {
		if (enc & DW_EH_PE_indirect)
			return false;
		switch (enc & 0x70) {
		case DW_EH_PE_absptr: break;
		case DW_EH_PE_pcrel: v += at; break;
		default: return false;
		}
	}
	*out = v;
	return true;
}

/* The FDE pointer encoding of the CIE in [p, end) (after its length and
 * id), from the 'R' entry of a "z" augmentation; absptr by default. */
static bool elf_cie_encoding(elf_cursor c, uint8_t *enc, uint8_t *lsda_enc, bool *z)
{
	uint64_t version, v;
	*enc = DW_EH_PE_absptr;
	*lsda_enc = DW_EH_PE_omit;
	*z = false;
	if (!elf_take(&c, 1, &version))
		return false;
	const char *aug = (const char *)c.p;
	const uint8_t *nul = memchr(c.p, 0, (size_t)(c.end - c.p));
	if (!nul)
		return false;
	size_t auglen = (size_t)(nul - c.p) + 1;
	c.p += auglen;
	c.addr += auglen;
	if (aug[0] == 'e' && aug[1] == 'h' && !elf_take(&c, 8, &v))
		return false;
	if (!elf_leb(&c, false, &v) || !elf_leb(&c, true, &v))
		return false;
	if (!(version == 1 ? elf_take(&c, 1, &v) : elf_leb(&c, false, &v)))
		return false;
	if (aug[0] != 'z')
		return true;
	*z = true;
	if (!elf_leb(&c, false, &v))
		return false;
	for (const char *a = aug + 1; *a; a++) {
		uint64_t byte;
		switch (*a) {
		case 'R':
			if (!elf_take(&c, 1, &byte))
				return false;
			*enc = (uint8_t)byte;
			break;
		case 'P':
			if (!elf_take(&c, 1, &byte) || !elf_encoded(&c, (uint8_t)byte, false, &v))
				return false;
			break;
		case 'L':
			if (!elf_take(&c, 1, &byte))
				return false;
			*lsda_enc = (uint8_t)byte;
			break;
		case 'S': case 'B': case 'G':
			break;
		default:
			return true;    /* unknown: the rest cannot be parsed */
		}
	}
	return true;
}

typedef struct elf_fde {
	uint64_t start, end;
} elf_fde;

/* a call-site range [start, end) of an LSDA and its landing pad */
typedef struct elf_lp {
	uint64_t start, end, pad;
} elf_lp;

typedef struct elf_fdes {
	elf_fde *v;
	size_t n, cap;
	elf_lp *pads;
	size_t npads, padcap;
} elf_fdes;

/* The call-site table of the LSDA at `lsda` (.gcc_except_table) of the
 * function starting at `start`: each call site with a landing pad gives
 * (call-site start, landing pad).  A table that cannot be read adds
 * nothing (its landing pads then stay unknown code: a throw caught there
 * stops the replay). */
static int elf_parse_lsda(const binary *b, uint64_t lsda, uint64_t start, elf_fdes *out)
{
	const elf_section *s = elf_section_at(b, lsda);
	if (!s || !s->data)
		return 0;
	elf_cursor c = { s->data + (lsda - s->addr), s->data + s->size, lsda };
	uint64_t enc, lpstart = start, v, tlen, len;
	if (!elf_take(&c, 1, &enc))
		return 0;
	if (enc != DW_EH_PE_omit && !elf_encoded(&c, (uint8_t)enc, true, &lpstart))
		return 0;
	if (!elf_take(&c, 1, &enc))
		return 0;
	if (enc != DW_EH_PE_omit && !elf_leb(&c, false, &v))
		return 0;
	if (!elf_take(&c, 1, &enc) || !elf_leb(&c, false, &tlen) || tlen > (uint64_t)(c.end - c.p))
		return 0;
	c.end = c.p + tlen;
	while (c.p < c.end) {
		uint64_t cs, lp, action;
		if (!elf_encoded(&c, (uint8_t)enc, false, &cs) ||
		    !elf_encoded(&c, (uint8_t)enc, false, &len) ||
		    !elf_encoded(&c, (uint8_t)enc, false, &lp) || !elf_leb(&c, false, &action))
			return 0;
		if (!lp)
			continue;
		if (!elf_push((void **)&out->pads, &out->padcap, out->npads, sizeof *out->pads))
			return -1;
		out->pads[out->npads++] = (elf_lp){ start + cs, start + cs + len, lpstart + lp };
	}
	return 0;
}

/* Function starts are FDEs over code, leaving out PLT stubs, which have
 * FDEs of their own but are not routines. */
static bool elf_fde_wanted(const binary *b, uint64_t start, uint64_t end)
{
	if (end <= start)
		return false;
	const elf_section *s = elf_section_at(b, start);
	return s && s->exec && s->data && strncmp(s->name, ".plt", 4) != 0;
}

/* One FDE: `c` is positioned after its CIE pointer and bounded by the
 * record; cie_off is the CIE's offset in the section. */
static int elf_parse_fde(const binary *b, const elf_section *eh, elf_cursor c,
			 uint64_t cie_off, elf_fdes *out)
{
	if (cie_off >= eh->size)
		return 0;
	/* the CIE: length, id, then the body elf_cie_encoding reads */
	elf_cursor ci = { eh->data + cie_off, eh->data + eh->size, eh->addr + cie_off };
	uint64_t len, id;
	if (!elf_take(&ci, 4, &len) || len == 0xffffffff || len < 4 || len > (uint64_t)(ci.end - ci.p))
		return 0;
	ci.end = ci.p + len;
	if (!elf_take(&ci, 4, &id) || id != 0)
		return 0;
	uint8_t enc, lsda_enc;
	bool z;
	uint64_t start, range, auglen, lsda;
	if (!elf_cie_encoding(ci, &enc, &lsda_enc, &z) || !elf_encoded(&c, enc, true, &start) ||
	    !elf_encoded(&c, enc & 0x0f, false, &range))
		return 0;
	if (start + range < start || !elf_fde_wanted(b, start, start + range))
		return 0;
	if (z && lsda_enc != DW_EH_PE_omit && elf_leb(&c, false, &auglen) &&
	    elf_encoded(&c, lsda_enc, true, &lsda) && lsda &&
	    elf_parse_lsda(b, lsda, start, out) < 0)
		return -1;
	if (!elf_push((void **)&out->v, &out->cap, out->n, sizeof *out->v))
		return -1;
	out->v[out->n++] = (elf_fde){ start, start + range };
	return 0;
}

/* Walks the .eh_frame records (CIEs and FDEs) up to the zero terminator. */
static int elf_walk_eh_frame(const binary *b, const elf_section *eh, elf_fdes *out)
{
	uint64_t off = 0;
	while (off + 4 <= eh->size) {
		elf_cursor c = { eh->data + off, eh->data + eh->size, eh->addr + off };
		uint64_t len = 0, id = 0;
		elf_take(&c, 4, &len);
		if (len == 0)
			break;
		/* 64-bit DWARF records never appear in x86-64 .eh_frame */
		if (len == 0xffffffff || len > (uint64_t)(c.end - c.p) || len < 4)
			break;
		c.end = c.p + len;
		uint64_t idpos = off + 4;
		elf_take(&c, 4, &id);
		if (id != 0 && id <= idpos &&
		    elf_parse_fde(b, eh, c, idpos - id, out) < 0)
			return -1;
		off = idpos + len;
	}
	return 0;
}

static int elf_fde_cmp(const void *x, const void *y)
{
	const elf_fde *a = x, *c = y;
	if (a->start != c->start)
		return a->start < c->start ? -1 : 1;
	return a->end < c->end ? 1 : a->end > c->end ? -1 : 0;
}

static int elf_lp_cmp(const void *x, const void *y)
{
	const elf_lp *a = x, *c = y;
	return a->start < c->start ? -1 : a->start > c->start;
}

static int elf_load_fdes(elf_loader *ld)
{
	binary *b = ld->b;
	const elf_section *eh = elf_section_by_name(b, ".eh_frame");
	if (!eh || !eh->data)
		return 0;
	elf_fdes f = { 0 };
	if (elf_walk_eh_frame(b, eh, &f) < 0) {
		free(f.v);
		return elf_fail(ld->err, "out of memory");
	}
	/* same start twice: keep the longest range (sorted first) */
	elf_sort(f.v, f.n, sizeof *f.v, elf_fde_cmp);
	b->fde_starts = malloc((f.n ? f.n : 1) * sizeof *b->fde_starts);
	b->fde_ends = malloc((f.n ? f.n : 1) * sizeof *b->fde_ends);
	if (!b->fde_starts || !b->fde_ends) {
		free(f.v);
		return elf_fail(ld->err, "out of memory");
	}
	for (size_t i = 0; i < f.n; i++) {
		if (i && f.v[i].start == f.v[i - 1].start)
			continue;
		b->fde_starts[b->nfdes] = f.v[i].start;
		b->fde_ends[b->nfdes] = f.v[i].end;
		b->nfdes++;
	}
	free(f.v);
	elf_sort(f.pads, f.npads, sizeof *f.pads, elf_lp_cmp);
	b->lp_sites = malloc((f.npads ? f.npads : 1) * sizeof *b->lp_sites);
	b->lp_ends = malloc((f.npads ? f.npads : 1) * sizeof *b->lp_ends);
	b->lp_pads = malloc((f.npads ? f.npads : 1) * sizeof *b->lp_pads);
	if (!b->lp_sites || !b->lp_ends || !b->lp_pads) {
		free(f.pads);
		return elf_fail(ld->err, "out of memory");
	}
	for (size_t i = 0; i < f.npads; i++) {
		b->lp_sites[i] = f.pads[i].start;
		b->lp_ends[i] = f.pads[i].end;
		b->lp_pads[i] = f.pads[i].pad;
	}
	b->nlp = f.npads;
	free(f.pads);
	return 0;
}

/* ------------------------------------------------------------- identity */

static void elf_set_hex(binary *b)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < b->id_len; i++) {
		b->id_hex[2 * i] = hex[b->id[i] >> 4];
		b->id_hex[2 * i + 1] = hex[b->id[i] & 15];
	}
	b->id_hex[2 * b->id_len] = 0;
}

/* Looks for an NT_GNU_BUILD_ID note in [p, p + size). */
static bool elf_find_build_id(binary *b, const uint8_t *p, uint64_t size, uint64_t align)
{
	align = align == 8 ? 8 : 4;
	uint64_t off = 0;
	while (off <= size && size - off >= 12) {
		uint64_t namesz = elf_le(p + off, 4), descsz = elf_le(p + off + 4, 4);
		uint64_t type = elf_le(p + off + 8, 4);
		uint64_t name = off + 12;
		uint64_t desc = name + ((namesz + align - 1) & ~(align - 1));
		if (desc > size || descsz > size - desc)
			return false;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(p + name, "GNU", 4) == 0 &&
		    descsz > 0 && descsz <= sizeof b->id) {
			memcpy(b->id, p + desc, descsz);
			b->id_len = descsz;
			return true;
		}
		off = desc + ((descsz + align - 1) & ~(align - 1));
	}
	return false;
}

/* FNV-1a 64 of the whole file, the identity the recorder recomputes from
 * /proc/self/exe (replay/format.h owns the function so both agree). */
static void elf_content_hash(binary *b)
{
	uint32_t len;
	uint64_t h = skel_fnv1a64(SKEL_FNV1A64_INIT, elf_bytes(b), b->map_size);
	skel_id_from_hash(h, b->id, &len);
	b->id_len = len;
}

/* Build-id from the note sections, or from PT_NOTE segments when the
 * section headers are gone (sstrip). */
static void elf_load_identity(elf_loader *ld)
{
	binary *b = ld->b;
	for (size_t i = 1; i < ld->shnum && !b->has_build_id; i++) {
		const GElf_Shdr *sh = &ld->sh[i];
		if (sh->sh_type == SHT_NOTE)
			b->has_build_id = elf_find_build_id(b, elf_bytes(b) + sh->sh_offset,
							    sh->sh_size, sh->sh_addralign);
	}
	size_t phnum = 0;
	if (!b->has_build_id && ld->shnum == 0 && elf_getphdrnum(ld->e, &phnum) == 0) {
		for (size_t i = 0; i < phnum && !b->has_build_id; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(ld->e, (int)i, &ph) && ph.p_type == PT_NOTE &&
			    elf_in_file(b, ph.p_offset, ph.p_filesz))
				b->has_build_id = elf_find_build_id(b, elf_bytes(b) + ph.p_offset,
								    ph.p_filesz, ph.p_align);
		}
	}
	if (!b->has_build_id)
		elf_content_hash(b);
	elf_set_hex(b);
}

/* ----------------------------------------------------------- relocations */

static int elf_reloc_slot_cmp(const void *x, const void *y)
{
	const elf_reloc_slot *a = x, *c = y;
	if (a->slot != c->slot)
		return a->slot < c->slot ? -1 : 1;
	return a->value < c->value ? -1 : a->value > c->value;
}

static int elf_add_slot(elf_loader *ld, uint64_t slot, uint64_t value)
{
	if (!elf_push((void **)&ld->slots, &ld->slots_cap, ld->nslots, sizeof *ld->slots))
		return elf_fail(ld->err, "out of memory");
	ld->slots[ld->nslots++] = (elf_reloc_slot){ slot, value };
	return 0;
}

/* S for a relocation naming symbol `si` of table `symtab`, when the symbol
 * is defined here; false for an import (its value is another object's). */
static bool elf_defined_sym(const elf_loader *ld, size_t symtab, size_t si, uint64_t *v)
{
	if (si == 0 || si >= elf_nsyms(ld, symtab))
		return false;
	Elf64_Sym s = elf_sym(ld, symtab, si);
	if (s.st_shndx == SHN_UNDEF || s.st_shndx == SHN_ABS || s.st_value == 0 ||
	    ELF64_ST_TYPE(s.st_info) == STT_TLS)
		return false;
	*v = s.st_value;
	return true;
}

/* The word a RELA relocation stores, for the types that store an address
 * of this object; false for the rest (imports, TLS, copies). */
static bool elf_rela_value(elf_loader *ld, size_t symtab, const Elf64_Rela *r, uint64_t *v)
{
	uint64_t sym;
	switch (ELF64_R_TYPE(r->r_info)) {
	case R_X86_64_RELATIVE:
		*v = (uint64_t)r->r_addend;
		return true;
	case R_X86_64_IRELATIVE:
		/* the slot gets what the resolver returns; the resolver
		 * itself is code the loader calls */
		if (elf_push((void **)&ld->resolvers, &ld->resolvers_cap, ld->nresolvers,
			     sizeof *ld->resolvers))
			ld->resolvers[ld->nresolvers++] = (uint64_t)r->r_addend;
		*v = (uint64_t)r->r_addend;
		return true;
	case R_X86_64_64:
	case R_X86_64_GLOB_DAT:
	case R_X86_64_JUMP_SLOT:
		if (!elf_defined_sym(ld, symtab, ELF64_R_SYM(r->r_info), &sym))
			return false;
		*v = sym + (ELF64_R_TYPE(r->r_info) == R_X86_64_64 ? (uint64_t)r->r_addend : 0);
		return true;
	default:
		return false;
	}
}

static int elf_rela_slots(elf_loader *ld, const GElf_Shdr *sh)
{
	if (sh->sh_entsize != sizeof(Elf64_Rela))
		return 0;
	for (uint64_t k = 0; k < sh->sh_size / sizeof(Elf64_Rela); k++) {
		Elf64_Rela r;
		uint64_t v;
		memcpy(&r, elf_bytes(ld->b) + sh->sh_offset + k * sizeof r, sizeof r);
		if (elf_rela_value(ld, sh->sh_link, &r, &v) && elf_add_slot(ld, r.r_offset, v) < 0)
			return -1;
	}
	return 0;
}

/* SHT_RELR (packed RELATIVE relocations, as glibc 2.36 is linked): an even
 * word is the address of a slot and starts a run; an odd word is a bitmap
 * of the 63 slots after the run, and moves it on.  The addend is the
 * slot's own content. */
static int elf_relr_slots(elf_loader *ld, const GElf_Shdr *sh)
{
	uint64_t where = 0;
	bool have_where = false;
	for (uint64_t k = 0; k + 8 <= sh->sh_size; k += 8) {
		uint64_t w = elf_le(elf_bytes(ld->b) + sh->sh_offset + k, 8), v;
		if (!(w & 1)) {
			if (elf_read(ld->b, w, 8, &v) == 0 && elf_add_slot(ld, w, v) < 0)
				return -1;
			where = w + 8;
			have_where = true;
			continue;
		}
		if (!have_where)
			continue;   /* a bitmap before any address: corrupt */
		for (unsigned bit = 1; bit < 64; bit++) {
			uint64_t slot = where + 8 * (bit - 1);
			if ((w >> bit) & 1 && elf_read(ld->b, slot, 8, &v) == 0 &&
			    elf_add_slot(ld, slot, v) < 0)
				return -1;
		}
		where += 63 * 8;
	}
	return 0;
}

/* Every data word the loader writes an address of this object into, and
 * the set of those addresses (binary.reloc_values). */
static int elf_load_relocs(elf_loader *ld)
{
	binary *b = ld->b;
	for (size_t i = 1; i < ld->shnum; i++) {
		const GElf_Shdr *sh = &ld->sh[i];
		int rc = sh->sh_type == SHT_RELA ? elf_rela_slots(ld, sh)
			 : sh->sh_type == SHT_RELR ? elf_relr_slots(ld, sh) : 0;
		if (rc < 0)
			return -1;
	}
	elf_sort(ld->slots, ld->nslots, sizeof *ld->slots, elf_reloc_slot_cmp);
	b->reloc_values = malloc((ld->nslots ? ld->nslots : 1) * sizeof *b->reloc_values);
	if (!b->reloc_values)
		return elf_fail(ld->err, "out of memory");
	for (size_t i = 0; i < ld->nslots; i++)
		b->reloc_values[i] = ld->slots[i].value;
	b->nreloc_values = ld->nslots;
	return 0;
}

/* ------------------------------------------------- loader-called code */

static void elf_add_init(binary *b, size_t *cap, uint64_t a)
{
	if (!a || !elf_push((void **)&b->init_funcs, cap, b->ninit_funcs, sizeof *b->init_funcs))
		return;
	b->init_funcs[b->ninit_funcs++] = a;
}

/* The value the loader finds in a pointer slot: what a relocation stores
 * there (a PIE's RELATIVE addend), else the bytes in the file. */
static uint64_t elf_slot_value(const elf_loader *ld, uint64_t slot)
{
	size_t lo = 0, hi = ld->nslots;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ld->slots[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ld->nslots && ld->slots[lo].slot == slot)
		return ld->slots[lo].value;
	uint64_t v = 0;
	return elf_read(ld->b, slot, 8, &v) == 0 ? v : 0;
}

static int elf_cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, c = *(const uint64_t *)y;
	return (a > c) - (a < c);
}

static size_t elf_sort_unique(uint64_t *v, size_t n)
{
	elf_sort(v, n, sizeof *v, elf_cmp_u64);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || v[m - 1] != v[i])
			v[m++] = v[i];
	return m;
}

static void elf_add_init_code(binary *b, size_t *cap, uint64_t a)
{
	size_t avail;
	if (a != UINT64_MAX && elf_code_at(b, a, &avail))
		elf_add_init(b, cap, a);
}

static void elf_load_init_funcs(elf_loader *ld)
{
	binary *b = ld->b;
	size_t cap = 0;
	static const char *const arrays[] = { ".init_array", ".fini_array", ".preinit_array" };
	const elf_section *s;
	uint64_t v = 0;
	if ((s = elf_section_by_name(b, ".init")) && s->exec)
		elf_add_init(b, &cap, s->addr);
	if ((s = elf_section_by_name(b, ".fini")) && s->exec)
		elf_add_init(b, &cap, s->addr);
	/* the loader calls what the dynamic section names, whatever the
	 * sections are called */
	if (elf_dyn_value(ld, DT_INIT, &v))
		elf_add_init_code(b, &cap, v);
	if (elf_dyn_value(ld, DT_FINI, &v))
		elf_add_init_code(b, &cap, v);
	for (size_t k = 0; k < 3; k++) {
		if (!(s = elf_section_by_name(b, arrays[k])))
			continue;
		for (uint64_t off = 0; off + 8 <= s->size && off < 8 * 4096; off += 8)
			elf_add_init_code(b, &cap, elf_slot_value(ld, s->addr + off));
	}
	for (size_t i = 0; i < ld->nresolvers; i++)
		elf_add_init_code(b, &cap, ld->resolvers[i]);
	b->ninit_funcs = elf_sort_unique(b->init_funcs, b->ninit_funcs);
	b->nreloc_values = elf_sort_unique(b->reloc_values, b->nreloc_values);
	b->nexports = elf_sort_unique(b->exports, b->nexports);
}

/* ---------------------------------------------------------------- open */

static int elf_load(elf_loader *ld, const char *path)
{
	binary *b = ld->b;
	if (elf_read_file(b, path, ld->err) < 0 || elf_identify(ld) < 0 ||
	    elf_check_tables(ld) < 0)
		return -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return elf_fail(ld->err, "libelf: %s", elf_errmsg(-1));
	ld->e = elf_memory(b->map, b->map_size);
	if (!ld->e)
		return elf_fail(ld->err, "corrupt ELF file (libelf: %s)", elf_errmsg(-1));
	/* libelf sets no error when it merely does not take the file for ELF */
	if (elf_kind(ld->e) != ELF_K_ELF)
		return elf_fail(ld->err, "corrupt ELF file (libelf does not read it as ELF)");
	if (elf_check_kind(ld) < 0 || elf_load_dynamic(ld) < 0 || elf_load_sections(ld) < 0 ||
	    elf_load_funcs(ld) < 0 || elf_load_exports(ld) < 0 || elf_load_relocs(ld) < 0 ||
	    elf_load_plts(ld) < 0 ||
	    elf_load_fdes(ld) < 0)
		return -1;
	elf_load_identity(ld);
	elf_load_init_funcs(ld);
	return 0;
}

int elf_open(binary *b, const char *path, char err[ERR_LEN])
{
	memset(b, 0, sizeof *b);
	err[0] = 0;
	b->path = strdup(path);
	if (!b->path)
		return elf_fail(err, "out of memory");
	elf_loader ld = { .b = b, .err = err };
	int rc = elf_load(&ld, path);
	if (ld.e)
		elf_end(ld.e);
	free(ld.sh);
	free(ld.ph);
	free(ld.dyn);
	free(ld.slots);
	free(ld.resolvers);
	if (rc < 0)
		elf_close(b);
	return rc;
}

void elf_close(binary *b)
{
	for (size_t i = 0; i < b->nsections; i++)
		free(b->sections[i].name);
	for (size_t i = 0; i < b->nfuncs; i++)
		free(b->funcs[i].name);
	for (size_t i = 0; i < b->nplts; i++)
		free(b->plts[i].name);
	free(b->sections);
	free(b->funcs);
	free(b->plts);
	free(b->fde_starts);
	free(b->fde_ends);
	free(b->lp_sites);
	free(b->lp_ends);
	free(b->lp_pads);
	free(b->init_funcs);
	free(b->reloc_values);
	free(b->exports);
	for (size_t i = 0; i < b->nneeded; i++)
		free(b->needed[i]);
	free(b->needed);
	free(b->interp);
	free(b->soname);
	free(b->rpath);
	free(b->runpath);
	free(b->map);
	free(b->path);
	memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------- queries */

const elf_section *elf_section_at(const binary *b, uint64_t addr)
{
	for (size_t i = 0; i < b->nsections; i++) {
		const elf_section *s = &b->sections[i];
		if (s->alloc && addr >= s->addr && addr - s->addr < s->size)
			return s;
	}
	return NULL;
}

const uint8_t *elf_code_at(const binary *b, uint64_t addr, size_t *avail)
{
	const elf_section *s = elf_section_at(b, addr);
	if (!s || !s->exec || !s->data)
		return NULL;
	if (avail)
		*avail = (size_t)(s->size - (addr - s->addr));
	return s->data + (addr - s->addr);
}

int elf_read(const binary *b, uint64_t addr, unsigned size, uint64_t *out)
{
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return -1;
	const elf_section *s = elf_section_at(b, addr);
	if (!s || !s->data || s->size - (addr - s->addr) < size)
		return -1;
	*out = elf_le(s->data + (addr - s->addr), size);
	return 0;
}

const char *elf_func_name(const binary *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->funcs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nfuncs && b->funcs[lo].addr == addr ? b->funcs[lo].name : NULL;
}

const elf_plt *elf_plt_at(const binary *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nplts;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->plts[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nplts && b->plts[lo].addr == addr ? &b->plts[lo] : NULL;
}

const char *elf_plt_name(const binary *b, uint64_t addr)
{
	const elf_plt *p = elf_plt_at(b, addr);
	return p ? p->name : NULL;
}
