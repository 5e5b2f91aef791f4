/* print.c — text and Graphviz views of what the analyzer built. */
#include "analyzer/analyzer.h"

#include <inttypes.h>

static const char *kind_str(unsigned k)
{
	return k == ACC_R ? "R" : k == ACC_W ? "W" : k == ACC_RW ? "RW" : "?";
}

/* "R8 [rsp+index*scale-0x8]" */
void print_access(FILE *f, const mem_access *m)
{
	bool any = false;
	fprintf(f, "%s%u %s[", kind_str(m->kind), m->size,
		m->seg == SEG_FS ? "fs:" : m->seg == SEG_GS ? "gs:" : "");
	if (m->base != R_NONE) {
		fputs(reg_name(m->base), f);
		any = true;
	}
	if (m->index != R_NONE) {
		fprintf(f, "%s%s*%u", any ? "+" : "", reg_name(m->index), m->scale);
		any = true;
	}
	if (m->flags & MEM_RIPREL)
		fprintf(f, "0x%" PRIx64, (uint64_t)m->disp);
	else if (m->disp || !any)
		fprintf(f, "%s0x%" PRIx64, m->disp < 0 ? "-" : any ? "+" : "",
			m->disp < 0 ? -(uint64_t)m->disp : (uint64_t)m->disp);
	fputc(']', f);
	if (m->flags & MEM_REP)
		fputs(" rep", f);
}

static void block_flags(FILE *f, const block *b)
{
	static const struct { uint32_t bit; const char *s; } names[] = {
		{ BLK_RET, "ret" }, { BLK_TAILCALL, "tailcall" },
		{ BLK_NORETURN, "noreturn-call" }, { BLK_IJUMP, "unresolved-ijump" },
		{ BLK_JUMPTABLE, "jumptable" }, { BLK_HALT, "halt" },
		{ BLK_CALL, "call" },
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (b->flags & names[i].bit)
			fprintf(f, " %s", names[i].s);
}

static void routine_header(FILE *f, const routine *r)
{
	uint32_t irr = 0;
	for (uint32_t i = 0; i < r->nloops; i++)
		irr += r->loops[i].irreducible;
	fprintf(f, "routine %s 0x%" PRIx64 ": %u blocks, %u instructions, %u memory, %u loops",
		r->name, r->start, r->nblocks, r->ninsn, r->nmem, r->nloops);
	if (irr)
		fprintf(f, " (%u irreducible)", irr);
	if (r->partial)
		fputs(", partial", f);
	if (r->noreturn)
		fputs(", noreturn", f);
	fputc('\n', f);
}

static void print_block_text(FILE *f, const program *p, const routine *r, uint32_t bi)
{
	const block *b = &r->blocks[bi];
	fprintf(f, "  block 0x%" PRIx64 "-0x%" PRIx64, b->start, b->end);
	if (b->loop >= 0)
		fprintf(f, " loop L%d", b->loop);
	fputs(" preds:", f);
	for (uint32_t k = 0; k < b->npred; k++)
		fprintf(f, " 0x%" PRIx64, r->blocks[b->pred[k]].start);
	fputs(" succs:", f);
	for (uint32_t k = 0; k < b->nsucc; k++)
		fprintf(f, " 0x%" PRIx64, r->blocks[b->succ[k]].start);
	block_flags(f, b);
	if (b->ntails)
		fputs(" tails:", f);
	for (uint32_t k = 0; k < b->ntails; k++)
		fprintf(f, " 0x%" PRIx64, b->tails[k]);
	fputc('\n', f);
	for (uint32_t i = b->first; i < b->first + b->ninsn; i++) {
		const insn *in = &r->insns[i];
		fprintf(f, "    0x%" PRIx64 "  %-40s", in->addr, in->text);
		for (unsigned k = 0; k < in->nmem; k++) {
			fputs(k ? ", " : " ", f);
			print_access(f, &in->mem[k]);
		}
		if (in->flow == FLOW_CALL || (in->flow == FLOW_JUMP && (b->flags & BLK_TAILCALL))) {
			const char *n = elf_plt_name(&p->bin, in->target);
			if (!n)
				n = elf_func_name(&p->bin, in->target);
			if (n)
				fprintf(f, " <%s%s>", n, elf_plt_name(&p->bin, in->target) ? "@plt" : "");
		}
		fputc('\n', f);
	}
}

static void print_dot(FILE *f, const routine *r)
{
	fprintf(f, "digraph \"%s\" {\n  node [shape=box fontname=monospace];\n", r->name);
	for (uint32_t i = 0; i < r->nblocks; i++) {
		const block *b = &r->blocks[i];
		fprintf(f, "  b%" PRIx64 " [label=\"0x%" PRIx64 "\\l", b->start, b->start);
		for (uint32_t k = b->first; k < b->first + b->ninsn; k++)
			fprintf(f, "%s\\l", r->insns[k].text);
		fprintf(f, "\"];\n");
		for (uint32_t k = 0; k < b->nsucc; k++)
			fprintf(f, "  b%" PRIx64 " -> b%" PRIx64 ";\n", b->start,
				r->blocks[b->succ[k]].start);
	}
	fputs("}\n", f);
}

void print_cfg(FILE *f, const program *p, const routine *r, bool dot)
{
	if (dot) {
		print_dot(f, r);
		return;
	}
	routine_header(f, r);
	for (uint32_t i = 0; i < r->nblocks; i++)
		print_block_text(f, p, r, i);
}

static void print_loop_tree(FILE *f, const routine *r, int32_t parent)
{
	for (uint32_t i = 0; i < r->nloops; i++) {
		const loop *l = &r->loops[i];
		if (l->parent != parent)
			continue;
		fprintf(f, "%*sL%u header 0x%" PRIx64 " depth %u, %u blocks, %u exits%s\n",
			2 * l->depth, "", i, r->blocks[l->header].start, l->depth,
			l->nblocks, l->nexits, l->irreducible ? ", IRREDUCIBLE" : "");
		if (l->irreducible) {
			fprintf(f, "%*sentries:", 2 * l->depth + 2, "");
			for (uint32_t k = 0; k < l->nentries; k++)
				fprintf(f, " 0x%" PRIx64, r->blocks[l->entries[k]].start);
			fputc('\n', f);
		}
		print_loop_tree(f, r, (int32_t)i);
	}
}

void print_loops(FILE *f, const program *p, const routine *r)
{
	(void)p;
	routine_header(f, r);
	print_loop_tree(f, r, -1);
}

void print_summary(FILE *f, const program *p)
{
	uint64_t blocks = 0, insns = 0, mem = 0, loops = 0, irr = 0, ij = 0, jt = 0, part = 0;
	for (uint32_t i = 0; i < p->nroutines; i++) {
		const routine *r = &p->routines[i];
		blocks += r->nblocks;
		insns += r->ninsn;
		mem += r->nmem;
		loops += r->nloops;
		part += r->partial;
		for (uint32_t k = 0; k < r->nloops; k++)
			irr += r->loops[k].irreducible;
		for (uint32_t k = 0; k < r->nblocks; k++) {
			ij += !!(r->blocks[k].flags & BLK_IJUMP);
			jt += !!(r->blocks[k].flags & BLK_JUMPTABLE);
		}
	}
	fprintf(f, "summary: %u routines, %" PRIu64 " blocks, %" PRIu64 " instructions, %" PRIu64
		" memory instructions, %" PRIu64 " loops, %" PRIu64 " irreducible loops, %" PRIu64
		" unresolved indirect jumps, %" PRIu64 " jump tables resolved, %" PRIu64
		" partial routines",
		p->nroutines, blocks, insns, mem, loops, irr, ij, jt, part);
	if (p->unreached)
		fprintf(f, ", %" PRIu64 " code bytes outside every known function (first 0x%"
			PRIx64 ")", p->unreached, p->unreached_first);
	fputc('\n', f);
}
