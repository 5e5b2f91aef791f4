/* format.h — the two formats that tie the analysis to the runtime:
 *
 *   the patch       (text)   which values the recorder must record, where;
 *   the value trace (binary) what it recorded, one stream per thread.
 *
 * The analysis side generates patches (patch_add_probe, patch_write), the
 * recorder reads them (patch_load) and writes value traces, the replayer
 * reads value traces (vtrace_open, vtrace_next).  docs/formats.md is the
 * prose version of this header.  No Zydis, no libelf: anything may
 * include it.
 *
 * Error convention (as in analyzer.h): functions that can fail return 0 on
 * success, -1 on failure, and put a one-line message without file name into
 * the caller's `err` buffer of FMT_ERR_LEN bytes. */
#ifndef SKEL_REPLAY_FORMAT_H
#define SKEL_REPLAY_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define FMT_ERR_LEN 256

/* ------------------------------------------------------------ identity */

/* FNV-1a, 64-bit (Fowler, Noll, Vo): the content hash that identifies an
 * executable without a GNU build-id.  Computed over the whole file's bytes;
 * printed as 16 lower-case hex digits ("%016" PRIx64).  analyzer/elf.c and
 * the recorder must compute it the same way, hence it lives here.  Chain
 * calls to hash a file piece by piece, starting from SKEL_FNV1A64_INIT. */
#define SKEL_FNV1A64_INIT 0xcbf29ce484222325ull
#define SKEL_FNV1A64_PRIME 0x100000001b3ull

static inline uint64_t skel_fnv1a64(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= SKEL_FNV1A64_PRIME;
	}
	return h;
}

/* Four independent lanes of 8-byte words: each byte is read once, in
 * 8-byte loads (under valgrind a byte loop over libc's 3 MB patch would
 * log 3 M accesses), and the lanes' multiplies overlap.  The recorder
 * names a patch text by it (its plan cache's index), and the driver
 * passes it along (SKEL_PATCH_HASH, with the file's inode, size and
 * mtime, which the recorder compares with the file it maps) so that a
 * run under lackey need not hash megabytes of text again. */
static inline uint64_t skel_hash4(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t l[4] = { h, h ^ 0x9e3779b97f4a7c15ull, h + n, ~h };
	size_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int k = 0; k < 4; k++) {
			uint64_t w;
			memcpy(&w, b + i + 8 * k, 8);
			l[k] = (l[k] ^ w) * 0x100000001b3ull;
			l[k] ^= l[k] >> 29;
		}
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		l[0] = (l[0] ^ w) * 0x100000001b3ull;
		l[0] ^= l[0] >> 29;
	}
	uint64_t t = n;
	for (; i < n; i++)
		t = t << 8 | b[i];
	h = l[0];
	for (int k = 1; k < 4; k++)
		h = (h ^ l[k]) * 0x100000001b3ull;
	h = (h ^ t) * 0x100000001b3ull;
	return h ^ h >> 31;
}

/* How a binary is identified: its NT_GNU_BUILD_ID note, or the FNV-1a hash
 * of the file.  For a hash, the id bytes are the 8 bytes of the hash, most
 * significant first, so that hex(id) == "%016" PRIx64 of the hash. */
enum {
	SKEL_ID_BUILDID = 1,
	SKEL_ID_HASH = 2,
};
#define SKEL_ID_MAX 64

static inline void skel_id_from_hash(uint64_t h, uint8_t id[SKEL_ID_MAX],
				     uint32_t *len)
{
	for (int i = 0; i < 8; i++)
		id[i] = (uint8_t)(h >> (56 - 8 * i));
	*len = 8;
}

/* ------------------------------------------------------------ registers */

/* The 16 GPRs in x86 encoding order (ModRM numbering), which is also the
 * order the recorder's code generator wants. */
enum {
	SKEL_RAX, SKEL_RCX, SKEL_RDX, SKEL_RBX, SKEL_RSP, SKEL_RBP, SKEL_RSI,
	SKEL_RDI, SKEL_R8, SKEL_R9, SKEL_R10, SKEL_R11, SKEL_R12, SKEL_R13,
	SKEL_R14, SKEL_R15, SKEL_NREGS
};

static inline const char *skel_reg_name(unsigned r)
{
	static const char *const names[SKEL_NREGS] = {
		"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	};
	return r < SKEL_NREGS ? names[r] : "?";
}

/* ------------------------------------------------------------ the patch */

/* Text, one directive per line, '#' starts a comment:
 *   skel-patch 1
 *   binary <id-hex> buildid|hash
 *   probe <pc> <block-start> <block-end> before|after|taken|fallthru <what>
 *   enter <block> <pred-start> <pred-end>
 * Numbers are hex, "0x" optional; addresses are link-time (the recorder
 * adds the load bias).  <what>: reg <name> | addr <k> | taken | tbit |
 * treg <name> taken|fallthru | target | word <hex>.  See docs/formats.md
 * for the meaning of each. */
#define PATCH_MAGIC "skel-patch"
#define PATCH_VERSION 1

typedef enum patch_what {
	PATCH_REG,	/* a GPR, before or after the instruction */
	PATCH_ADDR,	/* (before) effective address of memory operand k */
	PATCH_TAKEN,	/* (before) 1 if the conditional branch is taken */
	PATCH_TARGET,	/* (before) destination of an indirect jmp/call */
	PATCH_WORD,	/* (before) a constant word, e.g. a routine id */
	PATCH_TBIT,	/* (before) as PATCH_TAKEN (once a bit of a group) */
	PATCH_SREG,	/* as PATCH_REG (once a short field) */
	PATCH_STARGET,	/* (before) PATCH_TARGET minus the jump's own pc */
	PATCH_DSP,	/* rsp minus the thread's rsp at its previous PATCH_DSP
			   (0 at its first) */
	PATCH_SWORD,	/* PATCH_WORD minus PATCH_CTL_BASE */
	PATCH_DREG,	/* a GPR minus the thread's delta slot `word` (below);
			   the slot then holds the GPR */
	PATCH_DADDR,	/* (before) PATCH_ADDR, the same way */
	PATCH_VMMARK,	/* (after) a clone (`word` 56) or clone3 (435)
			   system call: records nothing; in a child that
			   shares the memory but not the thread pointer,
			   its parent waiting (CLONE_VM | CLONE_VFORK
			   without CLONE_THREAD, CLONE_SETTLS),
			   the thread's words go nowhere until its parent
			   resumes (rec_proc.c, rec_vm_mark) */
	PATCH_EDSP,	/* (before) as PATCH_DSP, at a routine's first
			   instruction right after its entry word: a call
			   through a linked PLT slot (patch_link) enters
			   past both, recording neither */
	PATCH_TREG,	/* (before) at a conditional jump (a jcc): GPR reg,
			   which holds a value below PATCH_TREG_MARK (a
			   byte or 16-bit word loaded and zero-extended),
			   plus PATCH_TREG_MARK when the jump goes the way
			   `word` names (PATCH_ON_TAKEN or PATCH_ON_FALL):
			   the value and the outcome it decides in one
			   word (skelgen.c, tbyte_plan) */
} patch_what;
#define PATCH_TREG_MARK 0x10000u
/* Every probe but VMMARK records one word; the differences (STARGET, DSP, SWORD,
 * DREG, DADDR) make small words of pointers, pcs and control words,
 * which the flush packs into few bytes (vt_pack), as branch outcomes. */

/* Delta slots (PATCH_DREG, PATCH_DADDR): each thread has PATCH_DSLOTS
 * words, 0 when its stream starts; a probe records its value less the
 * slot's and leaves its value in the slot.  skel gen picks a probe's slot
 * from its pc and operand, so a pointer walk (a list's next, a direct
 * address striding through an array) records small differences.  Slots
 * are shared: a slot's sequence of values is the thread's stream order,
 * the same for recorder and skeleton. */
#define PATCH_DSLOTS 16

/* Control words (routine entries, returns) are small above this. */
#define PATCH_CTL_BASE 0xe7e6ffffffffffffull

/* The routine the recorder replaces in a covered libc: glibc installs
 * its own handlers (SIGCANCEL for pthread_cancel, SIGSETXID) through
 * __libc_sigaction, out of sight of the interposed sigaction; the
 * recorder sends that entry point to its own sigaction, which wraps the
 * handler so its run is marked in the stream.  skel gen leaves the
 * routine unanalyzed (a call to it is a call out of the analyzed code). */
#define SKEL_REPLACED_ROUTINE "__libc_sigaction"

/* Where a probe records (patch_probe.after).  On a way of a conditional
 * jump (a jcc, not jrcxz or loop): after the jump, when it is taken or
 * falls through; 'reg', 'dreg' and 'word' probes only.  skel gen puts a
 * loop's exit value there (skelgen.c, plan_exits) when it cannot be
 * recorded where the exit leads: the loop's other iterations pass the
 * jump in the trampoline and record nothing. */
enum { PATCH_BEFORE, PATCH_AFTER, PATCH_ON_TAKEN, PATCH_ON_FALL };

typedef struct patch_probe {
	uint64_t pc;		/* instruction, link-time address */
	uint64_t block_start;	/* its basic block [start, end) */
	uint64_t block_end;
	uint8_t after;		/* PATCH_BEFORE, PATCH_AFTER, or one way of a
				   conditional jump (PATCH_ON_TAKEN,
				   PATCH_ON_FALL): recorded when it goes so */
	patch_what what;
	uint8_t reg;		/* PATCH_REG: SKEL_RAX..SKEL_R15 */
	uint32_t k;		/* PATCH_ADDR: memory operand number */
	uint64_t word;		/* PATCH_WORD */
	uint32_t line;		/* line in the patch text (0 if built) */
} patch_probe;

/* An `enter` line: the basic block [pred_start, pred_end), no jump
 * landing inside it, reaches probed block `block` by its last instruction
 * (a direct jmp or jcc to it) or by falling through.  A hint for the
 * recorder, recording nothing: where `block` is too short for a jmp rel32
 * (an int3 site), the predecessor's end may jump to the block's
 * trampoline instead, so the int3 is only taken from other ways in. */
typedef struct patch_enter {
	uint64_t block, pred_start, pred_end;
} patch_enter;

/* A `link` line: the PLT stub at `stub` jumps through the GOT slot at
 * `slot` (a JUMP_SLOT or IRELATIVE relocation's, which nothing else
 * reads), and the skeleton replays every way into the stub by
 * sk_plt(t, n, ...), n the line's number among the links.  The recorder,
 * once the loader has bound the slot (LD_BIND_NOW), may point it past
 * the callee's entry word and edsp probe (its "quiet entry") when the
 * callee is a covered routine with both; it says which slots it linked
 * so (VT_LINKS): their calls record neither word. */
typedef struct patch_link {
	uint64_t stub, slot;
} patch_link;

/* A `qret` line: the call whose return site is `ret` goes through link
 * number `link`, and the skeleton reads the RETURNED word recorded at
 * `ret` (its first probe, a `word`/`sword`) only when that link does not
 * return quietly: the recorder, linking the slot to a `closed` routine,
 * may point the site at a copy of its trampoline without that word, and
 * says so in the link's LINKS word (VT_LINK_QRET). */
typedef struct patch_qret {
	uint64_t ret;
	uint32_t link, pad;
} patch_qret;

typedef struct patch {
	uint32_t version;
	uint32_t id_kind;	/* SKEL_ID_BUILDID or SKEL_ID_HASH */
	uint8_t id[SKEL_ID_MAX];
	uint32_t id_len;
	patch_probe *probes;	/* in file order */
	size_t nprobes;
	size_t cap;
	patch_enter *enters;	/* in file order, after the probes */
	size_t nenters, capenters;
	patch_link *links;	/* in file order, after the enters */
	size_t nlinks, caplinks;
	patch_qret *qrets;	/* after the links */
	size_t nqrets, capqrets;
	/* `closed` lines, after the qrets: routine entries (link-time) whose
	 * skeleton returns to its caller only by its own ret (no tail jump
	 * out of the object nor indirect one): a linked call to one needs
	 * no RETURNED word at its return site */
	uint64_t *closed;
	size_t nclosed, capclosed;
} patch;

/* Parses patch text.  On failure `p` is left empty and err says which line
 * is wrong and why. */
int patch_parse(patch *p, const char *text, size_t len,
		char err[FMT_ERR_LEN]);
int patch_load(patch *p, const char *path, char err[FMT_ERR_LEN]);
/* Writes the canonical text of `p` (what patch_parse reads back). */
int patch_write(FILE *f, const patch *p);
/* FNV-1a of the patch's content (identity and probes, whatever the
 * comments and spacing): the value trace's patch_hash, checked by the
 * replayer against the skeleton's sk_patch_hash. */
uint64_t patch_hash(const patch *p);
/* For generators: sets the identity from hex text, appends a probe. */
int patch_set_id(patch *p, const char *hex, uint32_t kind,
		 char err[FMT_ERR_LEN]);
int patch_add_probe(patch *p, const patch_probe *probe);
int patch_add_enter(patch *p, const patch_enter *en);
int patch_add_link(patch *p, const patch_link *ln);
/* Room for one more of n elements of `size` bytes in *v (capacity *cap,
 * doubled when full): 0, or -1 out of memory. */
int patch_room(void **v, size_t n, size_t *cap, size_t size);
int patch_add_qret(patch *p, const patch_qret *q);
int patch_add_closed(patch *p, uint64_t entry);
void patch_free(patch *p);

/* A whole-process patch: the patches of several objects one after the
 * other, each a complete patch text starting with its own "skel-patch"
 * line.  Section k is object k: object 0 is the executable, the others are
 * shared objects, found at run time by identity.  A `word` probe of object
 * k whose value is an entry word (SK_ENTRY_BASE..., skel_rt.h) is recorded
 * with k added in bits 32..47 (PATCH_ENTRY_OBJECT), so that the replay
 * knows which object's skeleton to enter.  A text with one section is an
 * ordinary patch. */
#define PATCH_MAX_OBJECTS 256
/* in a LINKS word (bit 31 of the routine number): the link's calls
 * listed by qret lines return quietly (patch_qret) */
#define VT_LINK_QRET (1ull << 31)
#define PATCH_ENTRY_TOP 0xe7e7000000000000ull	/* = SK_ENTRY_BASE */
#define PATCH_ENTRY_MASK 0xffff000000000000ull
static inline uint64_t patch_entry_word(uint64_t w, uint32_t object)
{
	return (w & PATCH_ENTRY_MASK) == PATCH_ENTRY_TOP
		? w + ((uint64_t)object << 32) : w;
}

typedef struct patch_set {
	patch *obj;
	size_t n;
} patch_set;

/* Errors name the line in the whole text. */
int patch_set_parse(patch_set *s, const char *text, size_t len,
		    char err[FMT_ERR_LEN]);
int patch_set_load(patch_set *s, const char *path, char err[FMT_ERR_LEN]);
void patch_set_free(patch_set *s);
/* Parses "rax".."r15"; -1 if not a 64-bit GPR name. */
int patch_reg_parse(const char *name);

/* ------------------------------------------------------ the value trace */

/* Little-endian throughout.  A 104-byte header, then chunks; each chunk is
 * a 24-byte header and payload_bytes of payload.  Chunks of different
 * threads interleave; within one thread they are in program order.
 * Version 2: the header and every chunk carry a check (vt_check), a VALUES
 * payload starts with the index of its first word in the thread's stream,
 * and THREAD_END's count is checked against the words received.
 * Version 3: a VALUES payload holds its words packed (vt_pack below).
 * Version 4: a code per word (vt_pack), none for a run of outcomes. */
#define VT_MAGIC "SKELVAL"	/* 8 bytes with its NUL */
#define VT_VERSION 4
#define VT_CHUNK_MAGIC 0x4b48434bu	/* "KCHK" */
#define VT_HEADER_SIZE 104
#define VT_CHUNK_HEADER_SIZE 24

typedef struct vt_header {
	char magic[8];		/* "SKELVAL\0" */
	uint32_t version;	/* VT_VERSION */
	uint32_t check;		/* vt_check of the header with check = 0 */
	uint8_t id[SKEL_ID_MAX];	/* identity of the recorded executable */
	uint32_t id_len;
	uint32_t id_kind;	/* SKEL_ID_BUILDID or SKEL_ID_HASH */
	uint64_t patch_hash;	/* patch_hash() of the patch applied */
	uint64_t image_base;	/* load bias: runtime = link-time + bias */
} vt_header;

typedef struct vt_chunk_header {
	uint32_t magic;		/* VT_CHUNK_MAGIC */
	uint32_t type;		/* VT_* below */
	uint32_t thread;	/* thread index, 0 = the main thread */
	uint32_t check;		/* vt_check of this header (check = 0)
				   and of the payload */
	uint64_t payload_bytes;
} vt_chunk_header;

_Static_assert(sizeof(vt_header) == VT_HEADER_SIZE, "vt_header layout");
_Static_assert(sizeof(vt_chunk_header) == VT_CHUNK_HEADER_SIZE,
	       "vt_chunk_header layout");

/* The check: a word-at-a-time hash (every step a bijection of the state,
 * so any one changed word changes it), folded to 32 bits.  Sizes are
 * multiples of 8 throughout the format. */
static inline uint64_t vt_mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	return h;
}

static inline uint32_t vt_fold(uint64_t h)
{
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return (uint32_t)h;
}

/* Sets h->check over the header, `pre` (np bytes, the VALUES index) and
 * the payload. */
static inline void vt_chunk_seal(vt_chunk_header *h, const void *pre, size_t np,
				 const void *payload, size_t n)
{
	h->check = 0;
	uint64_t x = vt_mix(0x736b656c76616c32ull, h, sizeof *h);
	x = vt_mix(x, pre, np);
	h->check = vt_fold(vt_mix(x, payload, n));
}

static inline void vt_header_seal(vt_header *h)
{
	h->check = 0;
	h->check = vt_fold(vt_mix(0x736b656c68647232ull, h, sizeof *h));
}

/* Packed words (VALUES payloads).  The recorder's probes store whole
 * words, the cheapest thing a trampoline can do; its flush packs them,
 * and a reader unpacks them before the skeleton sees them.  Branch
 * outcomes are words 0 and 1, and most other words are small (the
 * probes record differences: PATCH_DREG, PATCH_DSP, PATCH_SWORD).
 *
 * A packed VALUES payload (version 4): vt_packed (first word's index,
 * words, tokens = twice the code bytes, data bytes), the code bytes, the
 * data bytes, zero bytes to a multiple of 8.  A code byte is either
 * VT_CODE_RUN (0xff): the next eight words are outcomes (0 or 1), bit j
 * of one data byte the j-th; or two 4-bit codes, a word each, the first
 * in the low half (an odd last word leaves the high half 0):
 *   0..8  the word w by its zigzag z = w << 1 ^ -(w >> 63): `code` data
 *         bytes, little-endian (z < 2^(8 code)); 0: the word 0
 *   9     the word 1 (a taken branch), no data
 * The packer takes the words eight at a time: a run when all eight are
 * 0 or 1 (one OR of the eight), else four pairs, each word with its
 * code (vt_pack; vpack.h does the same with vector instructions, without
 * a branch that depends on the data).  A reader takes runs anywhere
 * (before 2026-11-29 the packer looked for them at every pair).  Version 3 gathered any run of outcomes into one token, and
 * its packer, on the recorder's flusher thread, took 3-4 ns a word on
 * streams that mix outcomes and values, mostly mispredicted branches.
 * Codes and data are apart so that a reader finds where each word's data
 * starts by a running sum of lengths it knows from the codes. */
typedef struct vt_packed {
	uint64_t first;		/* the index of its first word in the stream */
	uint64_t words;
	uint32_t tokens;	/* twice the code bytes */
	uint32_t data;		/* bytes */
} vt_packed;
/* tokens of a payload whose words are not packed: `words` whole words
 * (8 bytes, as recorded) right after vt_packed, data 0, nothing else.
 * The recorder writes them under valgrind (skel check), where every
 * instruction of a packer would run under lackey, logged: a check of a
 * few million words took ten times as long. */
#define VT_TOKENS_RAW 0xffffffffu
/* The same, but the chunk's check covers its header and this vt_packed,
 * not the words: what the recorder writes in skel check's run under
 * lackey (SKEL_UNSUMMED=1), where summing every word cost about ten
 * logged instructions a word, a quarter of a value-heavy program's log.
 * A reader takes such a chunk only when vt_unsummed_ok is set (skel
 * check's own reading and replay of the file it made), and refuses the
 * file otherwise: nothing unchecked is replayed as if it were checked. */
#define VT_TOKENS_RAW_UNSUMMED 0xfffffffeu
extern int vt_unsummed_ok;
extern int vt_unsummed_seen;	/* such a chunk was refused */
#define VT_PACK_MAX 8		/* data bytes of one word at most */
#define VT_CODE_ONE 9
#define VT_CODE_RUN 0xff	/* a code byte: eight outcomes, a data byte */

/* The code of zigzag z (vt_pack). */
static inline unsigned vt_pack_code(uint64_t z)
{
	/* its bytes: (bits + 7) / 8, bits = 64 - clz (a table lookup was
	 * 40 % slower: the recorder's flusher packs every word) */
	unsigned c = (unsigned)(71 - __builtin_clzll(z | 1)) >> 3;
	c = z ? c : 0;
	return z == 2 ? VT_CODE_ONE : c;
}

static inline uint64_t vt_zigzag(uint64_t w)
{
	return w << 1 ^ (0 - (w >> 63));
}

static inline uint64_t vt_unzigzag(uint64_t z)
{
	return z >> 1 ^ (0 - (z & 1));
}

/* Two words by their zigzags z0, z1: their data at data + *d (whole
 * 8-byte stores), *d moved past it; their code byte. */
static inline uint8_t vt_pack_pair(uint64_t z0, uint64_t z1, uint8_t *data, size_t *d)
{
	unsigned c0 = vt_pack_code(z0), c1 = vt_pack_code(z1);
	__builtin_memcpy(data + *d, &z0, 8);
	*d += c0 > 8 ? 0 : c0;
	__builtin_memcpy(data + *d, &z1, 8);
	*d += c1 > 8 ? 0 : c1;
	return (uint8_t)(c0 | c1 << 4);
}

/* Packs words w[0..n): codes into ctl (n / 2 + 1 bytes at most), data
 * into data, `room` bytes at most for both; returns the words packed,
 * *tokens and *ndata set.  No library call (the recorder's flush runs
 * it); data is stored as whole 8-byte words, so it needs 8 bytes past
 * `room`.  Words go by groups of eight from w[0] (runs are looked for
 * there only), while a group's worst case fits, then by pairs: the
 * choices vt_pack_fast (vpack.h) makes eight words at a time with
 * vector instructions, so both give the same bytes. */
static inline size_t vt_pack(const uint64_t *w, size_t n, uint8_t *ctl, uint8_t *data,
			     size_t room, uint32_t *tokens, uint32_t *ndata)
{
	size_t i = 0, d = 0, t = 0;
	while (i + 8 <= n && t + 4 + d + 8 * VT_PACK_MAX <= room) {
		/* words another core wrote (the recorder's flusher), or not
		 * in cache: asked for early, they come in time (wc's stream
		 * from memory: 3.3 -> 1.9 ns a word) */
		__builtin_prefetch(w + i + 128);
		const uint64_t *p = w + i;
		i += 8;
		if ((p[0] | p[1]) <= 1 &&
		    (p[0] | p[1] | p[2] | p[3] | p[4] | p[5] | p[6] | p[7]) <= 1) {
			/* eight outcomes: a byte of bits */
			data[d++] = (uint8_t)(p[0] | p[1] << 1 | p[2] << 2 | p[3] << 3 |
					      p[4] << 4 | p[5] << 5 | p[6] << 6 | p[7] << 7);
			ctl[t++] = VT_CODE_RUN;
			continue;
		}
		for (unsigned j = 0; j < 8; j += 2)
			ctl[t++] = vt_pack_pair(vt_zigzag(p[j]), vt_zigzag(p[j + 1]), data, &d);
	}
	while (i < n && t + 1 + d + (i + 1 < n ? 2 : 1) * VT_PACK_MAX <= room) {
		ctl[t++] = vt_pack_pair(vt_zigzag(w[i]), i + 1 < n ? vt_zigzag(w[i + 1]) : 0, data, &d);
		i += 2;
	}
	if (i > n)
		i = n;	/* an odd last word: its pair's code is 0, no data */
	*tokens = (uint32_t)(2 * t);
	*ndata = (uint32_t)d;
	return i;
}

#define VT_UNPACK_SLACK 16

/* The bytes of a packed payload before its data: vt_packed, the codes. */
static inline size_t vt_packed_head(uint32_t tokens)
{
	return sizeof(vt_packed) + (tokens + 1) / 2;
}

/* The 8 bytes of data at d (fewer, zero-filled, within the last 8 of
 * the payload: `fast` is its end less 8), for vt_values_unpack. */
static inline uint64_t vt_data8(const uint8_t *d, const uint8_t *fast, const uint8_t *dend)
{
	uint64_t v = 0;
	if (__builtin_expect(d <= fast, 1))
		__builtin_memcpy(&v, d, 8);
	else
		for (unsigned j = 0; j < 8 && d + j < dend; j++)
			v |= (uint64_t)d[j] << 8 * j;
	return v;
}

/* The word of 4-bit code c (0..VT_CODE_ONE) whose data starts v. */
static inline uint64_t vt_code_word(unsigned c, uint64_t v)
{
	static const uint64_t mask[16] = {
		0, 0xff, 0xffff, 0xffffff, 0xffffffff, 0xffffffffffull,
		0xffffffffffffull, 0xffffffffffffffull, ~0ull, 0,
	};
	return vt_unzigzag(v & mask[c]) | (c == VT_CODE_ONE);
}

/* A payload's head checked (sizes that add up, zero padding): 1 when its
 * words are stored unpacked (copied to w, or -1), else 0 with its codes
 * [*ctl, *cend) and data [*d, *dend), or -1. */
static inline int vt_unpack_head(const uint8_t *p, size_t nbytes, uint64_t *w, uint64_t n,
				 const uint8_t **ctl, const uint8_t **cend, const uint8_t **d,
				 const uint8_t **dend)
{
	vt_packed h;
	if (nbytes < sizeof h)
		return -1;
	__builtin_memcpy(&h, p, sizeof h);
	if (h.tokens == VT_TOKENS_RAW || h.tokens == VT_TOKENS_RAW_UNSUMMED) {
		if (h.words != n || h.data || (nbytes - sizeof h) / 8 != n ||
		    (nbytes - sizeof h) % 8)
			return -1;
		__builtin_memcpy(w, p + sizeof h, 8 * n);
		return 1;
	}
	size_t head = vt_packed_head(h.tokens);
	if (h.words != n || h.tokens % 2 || h.tokens > 2 * n + 1 || head > nbytes ||
	    h.data > nbytes - head || nbytes - head - h.data >= 8)
		return -1;
	for (size_t i = head + h.data; i < nbytes; i++)
		if (p[i])
			return -1;
	*ctl = p + sizeof h;
	*cend = *ctl + h.tokens / 2;
	*d = p + head;
	*dend = *d + h.data;
	return 0;
}

/* Code byte b's words at w + *o (n in all), its data from *d (vt_data8's
 * fast and dend), both moved past them; *bad set by a code 10..15 or an
 * odd last word's half not 0.  -1 when they do not fit. */
static inline int vt_unpack_byte(unsigned b, const uint8_t **dp, const uint8_t *fast,
				 const uint8_t *dend, uint64_t *w, uint64_t *op, uint64_t n,
				 unsigned *bad)
{
	static const uint8_t dlen[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 0 };
	const uint8_t *d = *dp;
	uint64_t o = *op;
	uint64_t v = vt_data8(d, fast, dend);
	if (b == VT_CODE_RUN) {
		if (n - o < 8 || d >= dend)
			return -1;
		for (unsigned j = 0; j < 8; j++)
			w[o + j] = v >> j & 1;
		*op = o + 8;
		*dp = d + 1;
		return 0;
	}
	if (o == n)
		return -1;
	unsigned c0 = b & 15, c1 = b >> 4;
	*bad |= c0 > VT_CODE_ONE;
	w[o++] = vt_code_word(c0, v);
	d += dlen[c0];
	if (o < n) {
		*bad |= c1 > VT_CODE_ONE;
		w[o++] = vt_code_word(c1, vt_data8(d, fast, dend));
		d += dlen[c1];
	} else {
		*bad |= c1 != 0;	/* an odd last word */
	}
	*op = o;
	*dp = d;
	return d > dend ? -1 : 0;
}

/* A packed VALUES payload's n words into w, which has room for
 * VT_UNPACK_SLACK more: 0, or -1 when the payload is not what vt_pack
 * makes (sizes that do not add up, a code 10..15 but a run's, the half
 * byte after an odd last word not 0, a run past the words or without
 * its data byte, data left over or missing, padding not zero). */
static inline int vt_values_unpack(const uint8_t *p, size_t nbytes, uint64_t *w, uint64_t n)
{
	const uint8_t *ctl, *cend, *d, *dend;
	int k = vt_unpack_head(p, nbytes, w, n, &ctl, &cend, &d, &dend);
	if (k)
		return k < 0 ? -1 : 0;
	/* data loads of 8 bytes while 8 are left in the payload: all but
	 * the last few words */
	const uint8_t *fast = p + nbytes - 8;
	unsigned bad = 0;
	uint64_t o = 0;
	while (ctl < cend)
		if (vt_unpack_byte(*ctl++, &d, fast, dend, w, &o, n, &bad))
			return -1;
	return bad || o != n || d != dend ? -1 : 0;
}

/* THREAD_END's flags (a payload of 8 bytes has none): the stream ended
 * in the recorder's pthread key destructor, where the thread could not
 * be followed to its exit system call: what libc ran after that (its
 * thread exit code, later key destructors) is not in the trace. */
#define VT_ENDED_IN_DESTRUCTOR 1u
/* the stream ended at the process's exit, at the probe whose word would
 * come next: the thread stopped there for the exit (rec_park_others), so
 * its trace is whole up to that probe */
#define VT_ENDED_AT_EXIT 2u
/* vt_crash's flags: the thread was stopped by the process's exit while
 * it waited in the system call at pc (signal 0): its replay ends there */
#define VT_CRASH_EXIT_SYSCALL 1u

enum vt_chunk_type {
	VT_THREAD_START = 1,	/* payload: vt_thread_start; a thread's first */
	VT_VALUES = 2,		/* payload: u64 index of the first word in the
				 * thread's stream, u64 number of words, then
				 * the words in firing order, packed
				 * (vt_pack), zero bytes to a multiple of 8 */
	VT_THREAD_END = 3,	/* payload: u64 number of words recorded,
				 * optionally u64 VT_ENDED_* flags */
	VT_TRAMPOLINE_MAP = 4,	/* payload: vt_map_entry[] */
	VT_END = 5,		/* payload: vt_end; last chunk of a clean exit */
	VT_CRASH = 6,		/* payload: vt_crash; a fatal signal in `thread` */
	VT_SIGNAL = 7,		/* payload: vt_signal; a program handler ran */
	VT_EXEC = 8,		/* payload: vt_exec; execve called (thread 0) */
	VT_FORK = 9,		/* payload: vt_fork; fork() made a child */
	VT_OBJECTS = 10,	/* payload: u64 marker, then vt_object[]
				 * (thread 0): the objects of the process */
	VT_HEAP = 11,		/* payload: vt_heap_event[] of `thread`, in
				 * its program order (below) */
	VT_TIME = 12,		/* payload: vt_time; when `thread` had
				 * recorded `word` words (below) */
	VT_PROCESS = 13,	/* payload: vt_process (thread 0), right
				 * after the header: the process that wrote
				 * the file and, for a forked child, where
				 * its stream begins in its parent's */
	VT_HANDLER = 14,	/* payload: vt_handler; a handler of the
				 * program starts or returns (below) */
	VT_LINKS = 17,		/* payload: u32 object, u32 n, u64 word[n]
				 * (thread 0, after OBJECTS): the object's
				 * patch_link slots the recorder linked,
				 * word[k] the entry word of link k's callee
				 * (object bits included), 0: not linked;
				 * with VT_LINK_QRET, link k's qret return
				 * sites record no RETURNED word */
	VT_TP_MOVED = 16,	/* payload: vt_time, ns = the new thread
				 * pointer: the thread's fs base moved
				 * (arch_prctl) before its `word`-th word;
				 * readers stop there, loud */
	VT_ZVALUES = 15,	/* payload: vt_zvalues, then zstd bytes, zero
				 * bytes to a multiple of 8: a VALUES payload
				 * compressed (below) */
	VT_MAP_REF = 18,	/* payload: vt_map_ref, then its path, zero
				 * bytes to a multiple of 8: a TRAMPOLINE_MAP
				 * that is in a file of the recorder's cache
				 * (below) */
};

/* Compressed VALUES (files only; a pipe to skel run stays raw).  Each
 * thread's VALUES payloads, in order, form one zstd stream (one frame
 * per stream; a forked child starts its own): the recorder compresses a
 * payload and flushes, so each ZVALUES chunk decompresses, given the
 * thread's chunks before it, to exactly the VALUES payload (vt_packed
 * and all) of `raw` bytes it stands for.  A stream's matches reach back
 * up to VT_ZWINDOW_LOG bits of history: values repeated in a later pass
 * over the same data cost a few bytes.  `first` and `words` repeat the
 * packed payload's, so that a reader checks the order and counts words
 * without decompressing. */
typedef struct vt_zvalues {
	uint64_t first;
	uint64_t words;
	uint64_t raw;		/* bytes of the VALUES payload */
	uint64_t zbytes;	/* zstd bytes after this header */
} vt_zvalues;
#define VT_ZWINDOW_LOG 27
#define VT_ZRAW_MAX (64ull << 20)	/* a payload's bytes at most */

/* Coarse time (TIME chunks): the recorder reads CLOCK_MONOTONIC (a raw
 * system call: its flush path runs no libc code, which may be patched)
 * when a thread's stream opens (word 0) and at each flush of its words,
 * never per access.  `word`: the thread's words written by then; the
 * word after them was recorded later.  A replay places the stamp where
 * the skeleton asks for word `word` (the end of the stream for the last
 * one) and interpolates by access count in between.  Files from before
 * (no TIME chunks) replay the same, without times. */
typedef struct vt_time {
	uint64_t word;
	uint64_t ns;		/* CLOCK_MONOTONIC, nanoseconds */
} vt_time;

/* The objects of the process (whole-process recording).  One OBJECTS chunk
 * comes right after the trampoline map and names every object mapped when
 * the recorder started, covered (patched) or not; objects mapped later
 * (dlopen) come in further OBJECTS chunks, in the stream order of thread 0,
 * with VT_OBJ_LATE.  The payload starts with `marker`: the runtime pc of
 * the recorder's start marker (skel check drops the oracle's accesses
 * before the first instruction there; 0 in later chunks). */
#define VT_NO_OBJECT 0xffffffffu
enum {
	VT_OBJ_COVERED = 1,	/* patched: its skeleton replays its code */
	VT_OBJ_LATE = 2,	/* mapped after the recorder started */
	VT_OBJ_MAIN = 4,	/* the executable */
	VT_OBJ_RECORDER = 8,	/* the recorder itself: none of its accesses
				 * are the program's */
	VT_OBJ_LOADER = 16,	/* the dynamic loader: covered (a later chunk
				 * names it again, COVERED and LATE) from the
				 * program's start (__libc_start_main) on, its
				 * frames being live before */
};

typedef struct vt_object {
	uint64_t bias;		/* runtime = link-time + bias */
	uint64_t lo, hi;	/* runtime extent of its loaded segments */
	uint64_t patch_hash;	/* patch_hash() of its section, 0 if none */
	uint8_t id[SKEL_ID_MAX];	/* identity (build-id or content hash) */
	uint32_t id_len;
	uint32_t id_kind;	/* SKEL_ID_*, 0 if unknown */
	uint32_t index;		/* its section of the patch, the object
				 * number in entry words; VT_NO_OBJECT */
	uint32_t flags;		/* VT_OBJ_* */
	char path[144];		/* as the loader names it, cut, NUL-ended */
} vt_object;

/* Events the skeleton does not model yet; each is in the stream of the
 * thread it happened in, after the words recorded before it. */
typedef struct vt_signal {
	uint64_t word;		/* words of the thread before the handler */
	uint64_t pc;		/* interrupted pc, link-time if in a covered
				 * object (the executable, before), else 0 */
	uint32_t signal;
	uint32_t object;	/* the object of pc (0: the executable) */
} vt_signal;

/* A handler of the program in the thread's stream: its words follow
 * `word` up to the matching VT_HANDLER_RETURN (none: it left by longjmp,
 * or the thread ended in it).  Where the replay runs it:
 * DEFERRED: the signal came in analyzed code and the recorder held it
 * until the thread's next probe, whose word is word `word`: the handler
 * runs where the skeleton reads that word.  AT_PC: it ran at `pc` (a
 * fault, or a signal the thread sent itself), before the access of `pc`
 * the skeleton makes after reading `word` words (with ADDR: the one
 * whose bytes hold `addr`, the faulting address).  Neither (pc 0): it
 * ran in code outside the covered objects, which the skeleton passes as
 * an external call: where it reads word `word`.  UNPLACED: it came in
 * the recorder's trampolines, where neither holds: the replay stops
 * there, loud. */
enum {
	VT_HANDLER_RETURN = 1,	/* the handler returned (word: its end) */
	VT_HANDLER_DEFERRED = 2,
	VT_HANDLER_AT_PC = 4,
	VT_HANDLER_ADDR = 8,
	VT_HANDLER_UNPLACED = 16,
	/* not a handler: the thread switched to another context (stack and
	 * pc) by swapcontext (addr 1) or setcontext (addr 2), called from pc;
	 * the replay does not follow such switches and stops there, loud */
	VT_HANDLER_SWITCH = 32,
	/* held for the thread's next probe, which did not come in
	 * REC_HELD_WAIT_MS (a loop that records nothing until the handler
	 * has run, `while (!flag)`): it ran where the thread was, which the
	 * replay cannot place; it stops there, loud */
	VT_HANDLER_STUCK = 64,
};
typedef struct vt_handler {
	uint64_t word;		/* words of the thread before it */
	uint64_t pc;		/* interrupted pc, link-time in `object`;
				 * 0 outside the covered objects */
	uint64_t addr;		/* VT_HANDLER_ADDR: the faulting address */
	uint64_t handler;	/* the program's handler (runtime) */
	uint32_t signal;	/* 0 for a return */
	uint32_t object;	/* the object of pc */
	uint32_t flags;		/* VT_HANDLER_* */
	uint32_t reserved;
} vt_handler;

/* SPAWNED: posix_spawn, posix_spawnp, system or popen started `path`
 * (glibc's child runs none of the program's code before it execs) */
enum { VT_EXEC_CALLED = 1, VT_EXEC_FAILED = 2, VT_EXEC_SPAWNED = 3 };
typedef struct vt_exec {
	uint32_t stage;		/* VT_EXEC_*: about to exec, or it returned */
	uint32_t reserved;
	char path[248];		/* the file, cut to fit, NUL-terminated */
} vt_exec;

/* `word`: the words of the thread before fork(); the child's stream
 * (the file VALUES.<pid>) goes on from there (vt_process). */
typedef struct vt_fork {
	uint64_t word;		/* words of the thread before fork() */
	uint32_t pid;		/* the child */
	uint32_t reserved;
} vt_fork;

/* Which process image wrote the file.  The first one recorded writes
 * VALUES; a process it forks (at any depth) VALUES.<pid>; the image an
 * exec of the same program starts VALUES.<pid>.exec<n>, n its image
 * number (flags >> 16): the images before it in its line, counted
 * through execs and inherited by fork.
 * A forked child's thread 0 is the forking thread: the child's skeleton
 * state at the fork is the parent's after `word` words of thread
 * `thread` of the parent's file (VT_PROC_FORKED), and the child's thread
 * 0 stream continues from there.  The parent's file is VALUES.<parent>
 * .exec<n> if VT_PROC_PARENT_EXECED, else VALUES.<parent> or VALUES. */
enum {
	VT_PROC_FORKED = 1,	/* forked by `parent` */
	VT_PROC_EXECED = 2,	/* started by an exec in process `pid` */
	VT_PROC_PARENT_EXECED = 4,	/* forked by an exec'd image */
};
#define VT_PROC_IMAGE(flags) ((flags) >> 16)
typedef struct vt_process {
	uint32_t pid;		/* the process that wrote this file */
	uint32_t parent;	/* its parent's pid (VT_PROC_FORKED), else 0 */
	uint64_t word;		/* VT_PROC_FORKED: words of the parent's */
	uint32_t thread;	/* forking thread before the fork */
	uint32_t flags;		/* VT_PROC_*, image number in bits 16..31 */
} vt_process;

/* Where a thread died of a signal: a replay of its stream stops at the
 * first access of `pc` after the stream's last word whose bytes hold
 * `addr`, when known (the faulting access did not happen).  The address
 * tells which execution of pc faulted when no word comes between them
 * (an affine loop, an exit-value loop). */
typedef struct vt_crash {
	uint64_t pc;		/* link-time pc when in a covered object,
				 * else 0 */
	uint32_t signal;
	uint32_t object;	/* the object of pc (0: the executable) */
	uint64_t addr;		/* the faulting address (si_addr) */
	uint32_t has_addr;	/* 1: SIGSEGV or SIGBUS with an address */
	uint32_t flags;		/* VT_CRASH_* */
} vt_crash;

/* Heap tracking (HEAP chunks): the recorder interposes malloc and its
 * family; each call that allocates or frees is an event of the calling
 * thread, and each thread's stack and static TLS block are events of
 *  * that thread at its start.  `word`: the thread's words recorded before
 * the event, so the first value recorded after the event is word `word`
 * (a replay that reads that word has passed the event).  A thread's HEAP chunks precede
 * the VALUES chunk that holds word `word`.  `seq` orders the events of
 * all threads (from 1); `block` numbers the allocations of the whole run
 * in that order (from 1): heap#N. */
enum vt_heap_kind {
	VT_HEAP_MALLOC = 1,	/* addr = malloc(size) */
	VT_HEAP_CALLOC = 2,	/* addr = calloc(): size = n * m */
	VT_HEAP_REALLOC = 3,	/* addr = realloc(old, size): old ends, a new
				 * block begins (even at the same address) */
	VT_HEAP_MEMALIGN = 4,	/* posix_memalign, aligned_alloc, memalign */
	VT_HEAP_FREE = 5,	/* free(addr), addr != 0 */
	VT_HEAP_STACK = 6,	/* the thread's stack: [addr, addr + size) */
	VT_HEAP_TLS = 7,	/* its static TLS block and thread control
				 * block: [addr, addr + size) */
	VT_HEAP_MMAP = 8,	/* addr = mmap(size) of anonymous memory, by
				 * the program (libc's own, for a big malloc,
				 * is that malloc) */
	VT_HEAP_MUNMAP = 9,	/* munmap(addr, size): the blocks that begin
				 * in the range end (a part unmapped from a
				 * block's middle is not followed) */
	VT_HEAP_MREMAP = 10,	/* addr = mremap(old, ..., size): as REALLOC */
};

typedef struct vt_heap_event {
	uint64_t word;		/* words of the thread before the event */
	uint64_t seq;		/* order among all threads' events, from 1 */
	uint64_t addr;		/* the block (runtime), or region start */
	uint64_t size;		/* bytes asked for, or region size */
	uint64_t old;		/* REALLOC: the block it replaces (0: none) */
	uint64_t site;		/* return address of the call (runtime) */
	uint32_t kind;		/* VT_HEAP_* */
	uint32_t block;		/* allocations: N of heap#N, else 0 */
} vt_heap_event;

#define VT_NO_PARENT 0xffffffffu
enum {
	VT_START_IN_IMAGE = 1,	/* start routine lies in a covered object,
				 * whose number is flags >> 16 (0: the
				 * executable) */
	VT_START_UNKNOWN = 2,	/* stream opened lazily: start not seen */
	VT_START_FORKED = 4,	/* a forked child's thread 0: its stream
				 * goes on from its parent's (vt_process) */
};

typedef struct vt_thread_start {
	uint64_t start;		/* start routine, link-time address if
				 * VT_START_IN_IMAGE, else runtime; 0 main */
	uint64_t start_runtime;	/* the same, as a runtime address */
	uint32_t parent;	/* creating thread's index, or VT_NO_PARENT */
	uint32_t flags;		/* VT_START_* */
	/* the thread pointer (fs base, fs:0) when its stream opened: the
	 * skeleton computes fs-relative addresses from it (t->fsbase).
	 * Files before it have a 24-byte START payload (fsbase 0); their
	 * skeletons do not use it. */
	uint64_t fsbase;
} vt_thread_start;
#define VT_THREAD_START_OLD 24	/* the payload before fsbase */

/* One piece of trampoline code that stands for an original instruction.
 * Accesses that an oracle (valgrind) reports at [tramp, tramp + len) are
 * the original instruction's accesses at `pc`, as `kind` says. */
enum vt_map_kind {
	VT_MAP_DISPLACED = 0,	/* the instruction itself, relocated: same
				 * accesses in the same order */
	VT_MAP_CALL_PUSH = 1,	/* `push [rip+lit]` standing for a call's
				 * return-address store; its load of the
				 * literal is the recorder's own */
	VT_MAP_CALL_JMP = 2,	/* the jmp that ends an emulated call: its
				 * load (indirect call [mem]) is the call's */
	VT_MAP_PROBE = 3,	/* recorder code for probes at pc: none of
				 * its accesses are the program's */
};

typedef struct vt_map_entry {
	uint64_t tramp;		/* runtime address of the trampoline code */
	uint64_t pc;		/* original instruction, link-time address */
	uint32_t len;		/* bytes of trampoline code */
	uint32_t kind;		/* vt_map_kind in bits 0..15, the object of
				 * pc in bits 16..31 (0: the executable) */
} vt_map_entry;
#define VT_MAP_KIND(k) ((k) & 0xffffu)
#define VT_MAP_OBJECT(k) ((k) >> 16)

/* A TRAMPOLINE_MAP by reference: the recorder read the object's
 * trampolines from its plan cache (rec_cache.c), whose file holds the
 * entries relative to the trampolines' start and without the object;
 * copying and summing them into the value file was most of the
 * recorder's start-up under skel check's lackey.  Entry i is at
 * `offset + 24 i` of the file at the path that follows; its tramp plus
 * `base`, its kind with `object` in bits 16..31, is the TRAMPOLINE_MAP
 * entry.  `sum` is vt_map_sum of the n entries as the file held them
 * when it was written (the plan's header keeps it): a reader refuses
 * entries that do not sum to it (vt_maps_resolve).  Not the file's
 * identity: a plan another process made at the same time may have
 * replaced it since, with the same map. */
typedef struct vt_map_ref {
	uint64_t base;		/* runtime address of the trampolines */
	uint64_t offset;	/* of the first entry in the file */
	uint64_t n;		/* entries */
	uint64_t sum;
	uint32_t object;
	uint32_t path_len;	/* bytes of path after this (no NUL) */
} vt_map_ref;

static inline uint64_t vt_map_sum(const vt_map_entry *m, uint64_t n)
{
	return vt_mix(0x736b656c6d617073ull ^ n, m, n * sizeof *m);
}

enum {
	VT_END_EXIT = 1,	/* exit() or return from main */
	VT_END_UNDERSCORE_EXIT = 2,	/* _exit / _Exit called by the program */
	/* a flag: a thread the recorder did not see start (one libc started
	 * itself: aio's, a SIGEV_THREAD notification's) ran covered code
	 * before it had a stream; those words are lost */
	VT_END_STRAY = 0x100,
};

typedef struct vt_end {
	uint64_t threads;	/* streams opened */
	uint64_t values;	/* words written, all threads */
	uint32_t how;		/* VT_END_* */
	uint32_t int3_sites;	/* sites patched with int3 (slow) */
} vt_end;

_Static_assert(sizeof(vt_thread_start) == 32, "vt_thread_start layout");
_Static_assert(sizeof(vt_signal) == 24, "vt_signal layout");
_Static_assert(sizeof(vt_handler) == 48, "vt_handler layout");
_Static_assert(sizeof(vt_exec) == 256, "vt_exec layout");
_Static_assert(sizeof(vt_fork) == 16, "vt_fork layout");
_Static_assert(sizeof(vt_process) == 24, "vt_process layout");
_Static_assert(sizeof(vt_map_entry) == 24, "vt_map_entry layout");
_Static_assert(sizeof(vt_map_ref) == 40, "vt_map_ref layout");
_Static_assert(sizeof(vt_end) == 24, "vt_end layout");
_Static_assert(sizeof(vt_object) == 256, "vt_object layout");
_Static_assert(sizeof(vt_heap_event) == 56, "vt_heap_event layout");
_Static_assert(sizeof(vt_time) == 16, "vt_time layout");

/* ------------------------------------------------ reading a value trace */

typedef struct vt_chunk {
	uint64_t offset;	/* of the chunk header in the file */
	vt_chunk_header h;
	const uint8_t *payload;	/* points into the reader's copy */
} vt_chunk;

typedef struct vtrace {
	uint8_t *data;		/* the whole file */
	size_t size;
	bool mapped;		/* data is an mmap of the file, else malloc'd */
	vt_header header;
	size_t pos;		/* next chunk */
	bool ended;		/* an END chunk was read */
	bool failed;		/* a corrupt chunk stopped the iteration */
	bool cut;		/* ... the file ending inside a chunk */
	size_t released;	/* pages before this given back (vt_release) */
} vtrace;

/* Gives back the whole pages of [p, p + n) of a mapped value file, read
 * already: memory stays flat whatever the file's size. */
#define VT_RELEASE_PAGE 4096u
#define VT_RELEASE_EVERY (8u << 20)
void vt_release(const void *p, size_t n);

/* Reads the file and checks the header ("bad magic", "unsupported
 * version", "truncated header"). */
int vtrace_open(vtrace *t, const char *path, char err[FMT_ERR_LEN]);
int vtrace_open_mem(vtrace *t, const void *data, size_t size,
		    char err[FMT_ERR_LEN]);
/* Next chunk: 1 and *c filled, 0 at the end of the file, -1 on a corrupt
 * or truncated chunk ("truncated chunk at offset N", "bad chunk magic at
 * offset N", ...); chunks already returned stay valid.  The payload sizes
 * of the fixed-size types are checked here. */
int vtrace_next(vtrace *t, vt_chunk *c, char err[FMT_ERR_LEN]);
void vtrace_close(vtrace *t);
/* A chunk read at file offset `off`: magic, type, payload size and check.
 * 0, or -1 with err naming the offset (vtrace_next and the replayer's
 * stream reader both use it). */
int vt_chunk_verify(const vt_chunk_header *h, const uint8_t *payload,
		    uint64_t off, char err[FMT_ERR_LEN]);
/* What a thread's chunks must say in order: START first and once, VALUES
 * numbered from 0 without gaps or repeats, THREAD_END's count equal to
 * the words received, nothing after THREAD_END or CRASH.  `seen` is the
 * state (zero it per thread): 0 or -1 with err. */
typedef struct vt_order {
	bool started, ended;
	uint64_t words;
} vt_order;
int vt_order_check(vt_order *o, const vt_chunk_header *h, const uint8_t *payload,
		   uint64_t off, char err[FMT_ERR_LEN]);

/* One thread's stream gathered from the whole file. */
typedef struct vt_stream {
	uint32_t thread;
	vt_order order;		/* its chunks so far (vt_order_check) */
	bool started;		/* a THREAD_START chunk was seen */
	bool ended;		/* a THREAD_END chunk was seen */
	uint64_t end_flags;	/* its VT_ENDED_* */
	bool crashed;		/* a CRASH chunk names this thread */
	vt_crash crash;
	bool signalled;		/* a SIGNAL chunk: the first one, and no word
				 * after it is kept */
	vt_signal sig;
	vt_handler *hand;	/* HANDLER events, in the thread's order */
	size_t nhand, handcap;
	uint32_t forks;		/* FORK chunks */
	vt_fork fork;		/* the first */
	vt_thread_start start;
	vt_heap_event *heap;	/* HEAP events, in the thread's order */
	size_t nheap, heapcap;
	vt_time *times;		/* TIME stamps, in the thread's order */
	size_t ntimes, timecap;
	uint64_t *values;	/* the words, copied (vtrace_streams_from) */
	size_t nvalues;		/* words in all, copied or not */
	size_t cap;
	struct vt_run {		/* or the VALUES payloads in file order, in */
		const uint8_t *p;	/* place (vtrace_streams_ref), packed: */
		size_t nbytes;		/* vt_run_words unpacks them */
		uint64_t n;
		struct vt_unz *z;	/* ZVALUES: the stream's decompressor */
		size_t i;		/* ZVALUES: its index among them */
	} *runs;
	size_t nruns, runcap;
	struct vt_unz *unz;	/* its ZVALUES' decompressor, or NULL */
	size_t nz;		/* its ZVALUES chunks */
} vt_stream;

/* OBJECTS chunks gathered. */
typedef struct vt_objects {
	vt_object *v;
	size_t n;
	uint64_t marker;	/* of the first chunk */
	uint64_t late_marker;	/* of the later ones (rec_late_patched) */
	uint32_t *batch;	/* per object: 0 at start-up, k: mapped by
				 * the k-th dlopen that mapped new objects */
	uint32_t nbatch;
	uint64_t *links;	/* LINKS payloads one after the other */
	size_t nlinks;		/* their words */
} vt_objects;
int vt_objects_add(vt_objects *o, const uint8_t *payload, size_t n);
int vt_links_add(vt_objects *o, const uint8_t *payload, size_t n);
/* The covered object with this number (entry words, map kinds), or NULL. */
const vt_object *vt_objects_find(const vt_objects *o, uint32_t index);

/* Chunks that belong to no thread's order. */
static inline bool vt_chunk_global(uint32_t type)
{
	return type == VT_TRAMPOLINE_MAP || type == VT_MAP_REF || type == VT_END ||
	       type == VT_EXEC || type == VT_OBJECTS || type == VT_PROCESS ||
	       type == VT_LINKS;
}

typedef struct vt_streams {
	vt_stream *s;		/* by order of first appearance */
	size_t n;
	vt_map_entry *map;
	size_t nmap;
	uint8_t *refs;		/* MAP_REF payloads, one after another */
	size_t nrefs, caprefs;	/* bytes */
	bool complete;		/* END chunk present: the run exited cleanly */
	vt_end end;
	vt_exec exec;		/* the last EXEC chunk but SPAWNED ones
				   (stage 0: none) */
	vt_exec spawn;		/* the first SPAWNED one */
	uint32_t nspawns;
	vt_objects objects;	/* OBJECTS chunks (none: main-only) */
	vt_process process;	/* its PROCESS chunk (pid 0: none, an older
				   recorder) */
	struct vt_fork_at {	/* every FORK chunk, in file order */
		uint32_t thread;
		vt_fork f;
	} *forks;
	size_t nforks;
	char error[FMT_ERR_LEN];	/* "" or why reading stopped early */
	bool cut;		/* error: the file ends inside a chunk (cut short;
				   what came before is whole), not damage */
} vt_streams;

/* Reads every chunk it can.  Returns -1 only when the header is unusable
 * (err says why).  A corrupt chunk stops the reading: what came before is
 * kept and out->error says what is wrong; a missing END chunk is reported
 * by out->complete == false, not as an error. */
int vtrace_load_streams(const char *path, vt_streams *out,
			char err[FMT_ERR_LEN]);
int vtrace_streams_from(vtrace *t, vt_streams *out);
/* Adds the entries of out's MAP_REF chunks to its map, read from the
 * files they name: -1 (err says which) when one is gone or changed. */
int vt_maps_resolve(vt_streams *s, char err[FMT_ERR_LEN]);
/* The same without copying the words: each stream's `runs` point into t's
 * data, which must stay open while they are used. */
int vtrace_streams_ref(vtrace *t, vt_streams *out);
vt_stream *vtrace_stream(vt_streams *s, uint32_t thread);
/* A run's n words into w (room for n + VT_UNPACK_SLACK): 0, or -1 when
 * they do not unpack (vt_pack).  A compressed run is decompressed after
 * the stream's earlier ones (in order, as a replay asks for them; out of
 * order, from the stream's first again). */
int vt_run_words(const struct vt_run *r, uint64_t *w);
/* A fork made inside libc (daemon, forkpty: FORK with pid 0): the pid of
 * the child whose file beside `root` (ROOT.<pid>) says it was forked by
 * `parent`'s thread `thread` after `word` words; 0 if there is none. */
uint32_t vt_find_child(const char *root, uint32_t parent, uint32_t thread, uint64_t word);
void vtrace_streams_free(vt_streams *s);
/* A stream's ZVALUES payloads as they come, in order (*z: its
 * decompressor, made at the first): the VALUES payload one stands for
 * (*nraw bytes, valid until the next call), or NULL when it does not
 * decompress. */
struct vt_unz;
const uint8_t *vt_unz_payload(struct vt_unz **z, const uint8_t *p, size_t *nraw);
void vt_unz_free(struct vt_unz *z);

#endif
