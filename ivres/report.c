/* report.c — `skel analyze`: what the analysis found, as text and JSON. */
#include "ivres/ivres.h"

#include <inttypes.h>

static const char *kind_str(unsigned k)
{
	return k == ACC_R ? "R" : k == ACC_W ? "W" : "RW";
}

static const char *probe_kind_str(unsigned k)
{
	static const char *const s[] = { "reg-after", "reg-before", "addr", "branch", "target" };
	return k < 5 ? s[k] : "?";
}

static void print_probe(FILE *f, const analysis *a, const probe *p)
{
	const insn *in = &a->r->insns[p->insn];
	char buf[32];
	fprintf(f, "    0x%" PRIx64 " %-10s", in->addr, probe_kind_str(p->kind));
	if (p->kind == PR_REG_AFTER || p->kind == PR_REG_BEFORE)
		fprintf(f, " %s (%s)", reg_name(p->reg), ssa_value_name(&a->s, p->val, buf, sizeof buf));
	else if (p->kind == PR_ADDR)
		fprintf(f, " access %u", p->k);
	fprintf(f, "  depth %u\n", p->depth);
}

static double ratio(uint32_t n, uint32_t d)
{
	return d ? (double)n / d : 0.0;
}

void iv_print(FILE *f, const analysis *a)
{
	const routine *r = a->r;
	fprintf(f, "routine %s 0x%" PRIx64 "%s\n", r->name, r->start,
		a->modeled ? "" : " (not modeled: direct probes)");
	for (uint32_t l = 0; l < r->nloops; l++) {
		const loop *lp = &r->loops[l];
		fprintf(f, "  loop L%u header 0x%" PRIx64 " depth %u: counter I%u, %u IVs%s",
			l, r->blocks[lp->header].start, lp->depth, l, a->loops[l].niv,
			lp->irreducible ? ", irreducible" : "");
		if (a->loops[l].trip)
			fprintf(f, ", trip count %s", a->loops[l].trip);
		fputc('\n', f);
	}
	for (uint32_t i = 0; i < a->nivs; i++) {
		const iv *v = &a->ivs[i];
		char buf[32];
		fprintf(f, "  iv %s in L%u = ", ssa_value_name(&a->s, v->phi, buf, sizeof buf), v->loop);
		expr_print(f, &a->s, v->init);
		fputs(" + (", f);
		expr_print(f, &a->s, v->step);
		fprintf(f, ")*I%u%s\n", v->loop, v->bits == 32 ? "  [32-bit]" : "");
	}
	for (uint32_t i = 0; i < a->nacc; i++) {
		const access_info *x = &a->acc[i];
		fprintf(f, "  access 0x%" PRIx64 " %s%u ", r->insns[x->insn].addr,
			kind_str(x->kind), x->size);
		if (x->addr) {
			fprintf(f, "class %d: ", x->cls);
			expr_print(f, &a->s, x->addr);
		} else {
			fputs("direct", f);
		}
		fputc('\n', f);
	}
	for (uint32_t i = 0; i < a->nbr; i++) {
		const branch_info *b = &a->br[i];
		fprintf(f, "  branch 0x%" PRIx64 " j%s %s", r->insns[b->insn].addr,
			cond_name(b->cc), b->how == BR_COMPUTED ? "computed: " : "recorded");
		if (b->how == BR_COMPUTED) {
			expr_print(f, &a->s, b->lhs);
			fprintf(f, " vs ");
			expr_print(f, &a->s, b->rhs);
			fprintf(f, " (%u-bit)", b->bits);
		}
		fputc('\n', f);
	}
	fprintf(f, "  probes (%u):\n", a->nprobes);
	for (uint32_t i = 0; i < a->nprobes; i++)
		print_probe(f, a, &a->probes[i]);
	fprintf(f, "  totals: %u memory instructions, %u accesses, %u classes, %u direct, "
		"%u probes (%u in innermost loops), static ratio %.3f\n",
		a->nmem_insns, a->nacc, a->ncls, a->ndirect, a->nprobes, a->ninner_probes,
		ratio(a->nprobes, a->nmem_insns));
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

void iv_print_json(FILE *f, const analysis *a, bool first)
{
	const routine *r = a->r;
	fprintf(f, "%s{\"name\":", first ? "" : ",\n");
	json_str(f, r->name);
	fprintf(f, ",\"start\":\"0x%" PRIx64 "\",\"modeled\":%s,\"loops\":[", r->start,
		a->modeled ? "true" : "false");
	for (uint32_t l = 0; l < r->nloops; l++) {
		fprintf(f, "%s{\"header\":\"0x%" PRIx64 "\",\"depth\":%u,\"parent\":%d,"
			"\"irreducible\":%s,\"ivs\":%u,\"trip\":", l ? "," : "",
			r->blocks[r->loops[l].header].start, r->loops[l].depth,
			r->loops[l].parent, r->loops[l].irreducible ? "true" : "false",
			a->loops[l].niv);
		if (a->loops[l].trip)
			json_str(f, a->loops[l].trip);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("],\"accesses\":[", f);
	for (uint32_t i = 0; i < a->nacc; i++) {
		const access_info *x = &a->acc[i];
		const block *b = &r->blocks[cfg_block_of(r, r->insns[x->insn].addr)];
		fprintf(f, "%s{\"pc\":\"0x%" PRIx64 "\",\"kind\":\"%s\",\"size\":%u,"
			"\"class\":%d,\"computed\":%s,\"depth\":%u}", i ? "," : "",
			r->insns[x->insn].addr, kind_str(x->kind), x->size, x->cls,
			x->addr ? "true" : "false",
			b->loop < 0 ? 0 : r->loops[b->loop].depth);
	}
	fputs("],\"branches\":[", f);
	for (uint32_t i = 0; i < a->nbr; i++)
		fprintf(f, "%s{\"pc\":\"0x%" PRIx64 "\",\"computed\":%s}", i ? "," : "",
			r->insns[a->br[i].insn].addr,
			a->br[i].how == BR_COMPUTED ? "true" : "false");
	fputs("],\"probes\":[", f);
	for (uint32_t i = 0; i < a->nprobes; i++) {
		const probe *p = &a->probes[i];
		fprintf(f, "%s{\"pc\":\"0x%" PRIx64 "\",\"kind\":\"%s\",\"reg\":\"%s\",\"depth\":%u}",
			i ? "," : "", r->insns[p->insn].addr, probe_kind_str(p->kind),
			(p->kind == PR_REG_AFTER || p->kind == PR_REG_BEFORE) ? reg_name(p->reg) : "",
			p->depth);
	}
	fprintf(f, "],\"totals\":{\"memory_instructions\":%u,\"accesses\":%u,\"classes\":%u,"
		"\"direct\":%u,\"probes\":%u,\"inner_probes\":%u}",
		a->nmem_insns, a->nacc, a->ncls, a->ndirect, a->nprobes, a->ninner_probes);
}
