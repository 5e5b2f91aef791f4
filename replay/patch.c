/* patch.c — the patch text format: parse, write, hash (format.h). */
#include "replay/format.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int patch_fail(char err[FMT_ERR_LEN], unsigned line, const char *fmt,
		      ...)
{
	va_list ap;
	int n = 0;
	if (line)
		n = snprintf(err, FMT_ERR_LEN, "line %u: ", line);
	va_start(ap, fmt);
	vsnprintf(err + n, FMT_ERR_LEN - n, fmt, ap);
	va_end(ap);
	return -1;
}

int patch_reg_parse(const char *name)
{
	for (unsigned r = 0; r < SKEL_NREGS; r++)
		if (strcmp(name, skel_reg_name(r)) == 0)
			return (int)r;
	return -1;
}

static int patch_hex(const char *s, uint64_t *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -1;
	while (s[0] == '0' && s[1])	/* by hand: the recorder parses
					 * thousands at start-up */
		s++;
	uint64_t x = 0;
	int n = 0;
	for (; *s; s++, n++) {
		unsigned c = (unsigned char)*s, d;
		if (c - '0' < 10)
			d = c - '0';
		else if ((c | 0x20) - 'a' < 6)
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		if (n == 16)
			return -1;	/* more than 64 bits */
		x = x << 4 | d;
	}
	*v = x;
	return 0;
}

/* Room for one more of n elements of `size` bytes in *v. */
int patch_room(void **v, size_t n, size_t *cap, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 16;
	void *m = realloc(*v, c * size);
	if (!m)
		return -1;
	*v = m;
	*cap = c;
	return 0;
}

int patch_add_probe(patch *p, const patch_probe *probe)
{
	if (patch_room((void **)&p->probes, p->nprobes, &p->cap, sizeof *probe))
		return -1;
	p->probes[p->nprobes++] = *probe;
	return 0;
}

int patch_add_enter(patch *p, const patch_enter *en)
{
	if (patch_room((void **)&p->enters, p->nenters, &p->capenters, sizeof *en))
		return -1;
	p->enters[p->nenters++] = *en;
	return 0;
}

int patch_add_link(patch *p, const patch_link *ln)
{
	if (patch_room((void **)&p->links, p->nlinks, &p->caplinks, sizeof *ln))
		return -1;
	p->links[p->nlinks++] = *ln;
	return 0;
}

int patch_add_qret(patch *p, const patch_qret *q)
{
	if (patch_room((void **)&p->qrets, p->nqrets, &p->capqrets, sizeof *q))
		return -1;
	p->qrets[p->nqrets++] = *q;
	return 0;
}

int patch_add_closed(patch *p, uint64_t entry)
{
	if (patch_room((void **)&p->closed, p->nclosed, &p->capclosed, sizeof entry))
		return -1;
	p->closed[p->nclosed++] = entry;
	return 0;
}

int patch_set_id(patch *p, const char *hex, uint32_t kind,
		 char err[FMT_ERR_LEN])
{
	size_t n = strlen(hex);
	if (n == 0 || n % 2 || n / 2 > SKEL_ID_MAX)
		return patch_fail(err, 0, "bad identity '%s'", hex);
	if (kind == SKEL_ID_HASH && n != 16)
		return patch_fail(err, 0, "a content hash has 16 hex digits");
	for (size_t i = 0; i < n / 2; i++) {
		char byte[3] = { hex[2 * i], hex[2 * i + 1], 0 };
		char *end;
		if (!isxdigit((unsigned char)byte[0]) ||
		    !isxdigit((unsigned char)byte[1]))
			return patch_fail(err, 0, "bad identity '%s'", hex);
		p->id[i] = (uint8_t)strtoul(byte, &end, 16);
	}
	p->id_len = (uint32_t)(n / 2);
	p->id_kind = kind;
	return 0;
}

/* Splits a line into at most `max` blank-separated words, in place. */
static int patch_words(char *s, char **w, int max)
{
	int n = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			*s++ = 0;
		if (!*s)
			return n;
		if (n == max)
			return max + 1;
		w[n++] = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r')
			s++;
	}
}

static int patch_dslot_parse(const char *w, uint64_t *slot)
{
	char *end;
	unsigned long v = strtoul(w, &end, 10);
	if (*end || end == w || v >= PATCH_DSLOTS)
		return -1;
	*slot = v;
	return 0;
}

static int patch_what_parse(patch_probe *pr, char **w, int n, unsigned line,
			    char err[FMT_ERR_LEN])
{
	const char *what = w[0];
	int want = 1;
	if (strcmp(what, "reg") == 0 || strcmp(what, "sreg") == 0) {
		pr->what = what[0] == 's' ? PATCH_SREG : PATCH_REG;
		want = 2;
		int r = n == 2 ? patch_reg_parse(w[1]) : -1;
		if (r < 0)
			return patch_fail(err, line,
				"'%s' wants a 64-bit register name (rax..r15)", what);
		pr->reg = (uint8_t)r;
	} else if (strcmp(what, "dreg") == 0) {
		pr->what = PATCH_DREG;
		want = 3;
		int r = n == 3 ? patch_reg_parse(w[1]) : -1;
		if (r < 0 || patch_dslot_parse(w[2], &pr->word))
			return patch_fail(err, line, "'dreg' wants a 64-bit register name "
					  "(rax..r15) and a slot 0..%d", PATCH_DSLOTS - 1);
		pr->reg = (uint8_t)r;
	} else if (strcmp(what, "addr") == 0 || strcmp(what, "daddr") == 0) {
		pr->what = what[0] == 'd' ? PATCH_DADDR : PATCH_ADDR;
		want = pr->what == PATCH_DADDR ? 3 : 2;
		char *end;
		unsigned long k = n == want ? strtoul(w[1], &end, 10) : 99;
		if (n != want || *end || k > 8 ||
		    (want == 3 && patch_dslot_parse(w[2], &pr->word)))
			return patch_fail(err, line, "'%s' wants an operand number 0..8%s",
					  what, want == 3 ? " and a slot 0..15" : "");
		pr->k = (uint32_t)k;
	} else if (strcmp(what, "taken") == 0) {
		pr->what = PATCH_TAKEN;
	} else if (strcmp(what, "tbit") == 0) {
		pr->what = PATCH_TBIT;
	} else if (strcmp(what, "treg") == 0) {
		pr->what = PATCH_TREG;
		want = 3;
		int r = n == 3 ? patch_reg_parse(w[1]) : -1;
		int way = n == 3 ? (!strcmp(w[2], "taken") ? PATCH_ON_TAKEN :
				    !strcmp(w[2], "fallthru") ? PATCH_ON_FALL : -1) : -1;
		if (r < 0 || r == SKEL_RSP || way < 0)
			return patch_fail(err, line, "'treg' wants a 64-bit register name "
					  "(rax..r15, not rsp) and the way its mark is on "
					  "(taken or fallthru)");
		pr->reg = (uint8_t)r;
		pr->word = (uint64_t)way;
	} else if (strcmp(what, "starget") == 0) {
		pr->what = PATCH_STARGET;
	} else if (strcmp(what, "dsp") == 0 || strcmp(what, "edsp") == 0) {
		pr->what = what[0] == 'e' ? PATCH_EDSP : PATCH_DSP;
		pr->reg = SKEL_RSP;
	} else if (strcmp(what, "target") == 0) {
		pr->what = PATCH_TARGET;
	} else if (strcmp(what, "vmmark") == 0) {
		pr->what = PATCH_VMMARK;
		want = 2;
		if (n != 2 || patch_hex(w[1], &pr->word) || (pr->word != 0x38 && pr->word != 0x1b3))
			return patch_fail(err, line, "'vmmark' wants the system call's "
					  "number in hex: 38 (clone) or 1b3 (clone3)");
	} else if (strcmp(what, "word") == 0 || strcmp(what, "sword") == 0) {
		pr->what = what[0] == 's' ? PATCH_SWORD : PATCH_WORD;
		want = 2;
		if (n != 2 || patch_hex(w[1], &pr->word))
			return patch_fail(err, line, "'word' wants a hex value");
	} else {
		return patch_fail(err, line, "unknown probe kind '%s'", what);
	}
	if (n != want)
		return patch_fail(err, line, "extra words after '%s'", what);
	if (pr->after == PATCH_AFTER && pr->what != PATCH_REG && pr->what != PATCH_SREG &&
	    pr->what != PATCH_DSP && pr->what != PATCH_DREG && pr->what != PATCH_VMMARK)
		return patch_fail(err, line, "only 'reg', 'sreg', 'dreg', 'dsp' and 'vmmark' "
				  "probes may be 'after'");
	if ((pr->what == PATCH_EDSP || pr->what == PATCH_TREG) && pr->after != PATCH_BEFORE)
		return patch_fail(err, line, "an '%s' probe is 'before' its instruction", what);
	if (pr->what == PATCH_VMMARK && pr->after != PATCH_AFTER)
		return patch_fail(err, line, "a 'vmmark' probe is 'after' its system call");
	if (pr->after >= PATCH_ON_TAKEN && pr->what != PATCH_REG && pr->what != PATCH_DREG &&
	    pr->what != PATCH_WORD && pr->what != PATCH_SWORD)
		return patch_fail(err, line, "only 'reg', 'dreg', 'word' and 'sword' probes may "
				  "be on a jump's way ('taken', 'fallthru')");
	return 0;
}

/* patch_probe.after, as the text says it (format.h, PATCH_BEFORE...) */
static const char *const patch_pos_name[4] = { "before", "after", "taken", "fallthru" };

static int patch_probe_parse(patch *p, char **w, int n, unsigned line,
			     char err[FMT_ERR_LEN])
{
	patch_probe pr = { .line = line };
	if (n < 6)
		return patch_fail(err, line,
			"probe wants: <pc> <block-start> <block-end> "
			"before|after|taken|fallthru <what>");
	if (patch_hex(w[1], &pr.pc) || patch_hex(w[2], &pr.block_start) ||
	    patch_hex(w[3], &pr.block_end))
		return patch_fail(err, line, "bad hex address");
	if (!(pr.block_start <= pr.pc && pr.pc < pr.block_end))
		return patch_fail(err, line,
			"pc %" PRIx64 " is outside its block [%" PRIx64 ", %" PRIx64 ")",
			pr.pc, pr.block_start, pr.block_end);
	for (pr.after = 0; pr.after < 4 && strcmp(w[4], patch_pos_name[pr.after]); pr.after++)
		;
	if (pr.after == 4)
		return patch_fail(err, line, "want 'before', 'after', 'taken' or "
				  "'fallthru', not '%s'", w[4]);
	if (patch_what_parse(&pr, w + 5, n - 5, line, err))
		return -1;
	if (patch_add_probe(p, &pr))
		return patch_fail(err, line, "out of memory");
	return 0;
}

static int patch_line(patch *p, char *s, unsigned line, int *state,
		      char err[FMT_ERR_LEN])
{
	char *hash = strchr(s, '#');
	if (hash)
		*hash = 0;
	char *w[10];
	int n = patch_words(s, w, 9);
	if (n == 0)
		return 0;
	if (n > 9)
		return patch_fail(err, line, "too many words");
	if (*state == 0) {
		char *end;
		if (n != 2 || strcmp(w[0], PATCH_MAGIC) != 0)
			return patch_fail(err, line, "not a patch: want '%s %d'",
					  PATCH_MAGIC, PATCH_VERSION);
		unsigned long v = strtoul(w[1], &end, 10);
		if (*end || v != PATCH_VERSION)
			return patch_fail(err, line,
					  "unsupported patch version '%s'", w[1]);
		p->version = (uint32_t)v;
		*state = 1;
		return 0;
	}
	if (strcmp(w[0], "binary") == 0) {
		if (*state != 1)
			return patch_fail(err, line, "a second 'binary' line");
		uint32_t kind = 0;
		if (n == 3 && strcmp(w[2], "buildid") == 0)
			kind = SKEL_ID_BUILDID;
		else if (n == 3 && strcmp(w[2], "hash") == 0)
			kind = SKEL_ID_HASH;
		else
			return patch_fail(err, line,
					  "binary wants: <id-hex> buildid|hash");
		char why[FMT_ERR_LEN];
		if (patch_set_id(p, w[1], kind, why))
			return patch_fail(err, line, "%s", why);
		*state = 2;
		return 0;
	}
	if (strcmp(w[0], "probe") == 0) {
		if (*state != 2)
			return patch_fail(err, line,
					  "'probe' before the 'binary' line");
		return patch_probe_parse(p, w, n, line, err);
	}
	if (strcmp(w[0], "enter") == 0) {
		patch_enter en;
		if (*state != 2)
			return patch_fail(err, line,
					  "'enter' before the 'binary' line");
		if (n != 4)
			return patch_fail(err, line,
				"enter wants: <block> <pred-start> <pred-end>");
		if (patch_hex(w[1], &en.block) || patch_hex(w[2], &en.pred_start) ||
		    patch_hex(w[3], &en.pred_end))
			return patch_fail(err, line, "bad hex address");
		if (en.pred_start >= en.pred_end)
			return patch_fail(err, line, "empty block [%" PRIx64 ", %" PRIx64 ")",
					  en.pred_start, en.pred_end);
		if (patch_add_enter(p, &en))
			return patch_fail(err, line, "out of memory");
		return 0;
	}
	if (strcmp(w[0], "link") == 0) {
		patch_link ln;
		if (*state != 2)
			return patch_fail(err, line, "'link' before the 'binary' line");
		if (n != 3)
			return patch_fail(err, line, "link wants: <stub> <got-slot>");
		if (patch_hex(w[1], &ln.stub) || patch_hex(w[2], &ln.slot))
			return patch_fail(err, line, "bad hex address");
		if (ln.slot % 8)
			return patch_fail(err, line, "GOT slot %" PRIx64 " is not 8-byte aligned",
					  ln.slot);
		if (patch_add_link(p, &ln))
			return patch_fail(err, line, "out of memory");
		return 0;
	}
	if (strcmp(w[0], "qret") == 0) {
		patch_qret q = { 0, 0, 0 };
		uint64_t k;
		if (*state != 2)
			return patch_fail(err, line, "'qret' before the 'binary' line");
		if (n != 3)
			return patch_fail(err, line, "qret wants: <return-site> <link-number>");
		if (patch_hex(w[1], &q.ret) || patch_hex(w[2], &k))
			return patch_fail(err, line, "bad hex number");
		if (k >= p->nlinks)
			return patch_fail(err, line, "qret names link %" PRIx64 " of %zu", k,
					  p->nlinks);
		q.link = (uint32_t)k;
		if (patch_add_qret(p, &q))
			return patch_fail(err, line, "out of memory");
		return 0;
	}
	if (strcmp(w[0], "closed") == 0) {
		uint64_t e;
		if (*state != 2)
			return patch_fail(err, line, "'closed' before the 'binary' line");
		if (n != 2)
			return patch_fail(err, line, "closed wants: <routine-entry>");
		if (patch_hex(w[1], &e))
			return patch_fail(err, line, "bad hex address");
		if (patch_add_closed(p, e))
			return patch_fail(err, line, "out of memory");
		return 0;
	}
	return patch_fail(err, line, "unknown directive '%s'", w[0]);
}

static int patch_parse_at(patch *p, const char *text, size_t len,
			  unsigned first_line, char err[FMT_ERR_LEN]);

int patch_parse(patch *p, const char *text, size_t len,
		char err[FMT_ERR_LEN])
{
	return patch_parse_at(p, text, len, 1, err);
}

static int patch_parse_at(patch *p, const char *text, size_t len,
			  unsigned first_line, char err[FMT_ERR_LEN])
{
	memset(p, 0, sizeof *p);
	char *buf = malloc(len + 1);
	if (!buf)
		return patch_fail(err, 0, "out of memory");
	memcpy(buf, text, len);
	buf[len] = 0;
	if (memchr(buf, 0, len))
		return free(buf), patch_fail(err, 0, "NUL byte in patch text");
	int state = 0, rc = 0;
	unsigned line = first_line;
	for (char *s = buf; s && rc == 0; line++) {
		char *nl = strchr(s, '\n');
		if (nl)
			*nl = 0;
		rc = patch_line(p, s, line, &state, err);
		s = nl ? nl + 1 : NULL;
	}
	free(buf);
	if (rc == 0 && state < 2)
		rc = patch_fail(err, 0, state ? "no 'binary' line" : "empty patch");
	if (rc)
		patch_free(p);
	return rc;
}

/* Where the next section starts: a line beginning with the magic after
 * `from` (which starts a line), or len. */
static size_t patch_next_section(const char *text, size_t len, size_t from)
{
	size_t m = strlen(PATCH_MAGIC);
	const char *nl;
	for (size_t i = from; (nl = memchr(text + i, '\n', len - i));) {
		i = (size_t)(nl - text) + 1;
		if (len - i >= m && memcmp(text + i, PATCH_MAGIC, m) == 0)
			return i;
	}
	return len;
}

int patch_set_parse(patch_set *set, const char *text, size_t len,
		    char err[FMT_ERR_LEN])
{
	memset(set, 0, sizeof *set);
	unsigned line = 1;
	/* comments may come before the first magic line, as in one patch */
	size_t m = strlen(PATCH_MAGIC);
	size_t magic = len >= m && !memcmp(text, PATCH_MAGIC, m) ? 0
		       : patch_next_section(text, len, 0);
	for (size_t at = 0; at < len || set->n == 0; magic = at) {
		size_t next = magic < len ? patch_next_section(text, len, magic) : len;
		if (set->n == PATCH_MAX_OBJECTS) {
			patch_set_free(set);
			return patch_fail(err, line, "more than %d objects",
					  PATCH_MAX_OBJECTS);
		}
		patch *n = realloc(set->obj, (set->n + 1) * sizeof *n);
		if (!n) {
			patch_set_free(set);
			return patch_fail(err, 0, "out of memory");
		}
		set->obj = n;
		if (patch_parse_at(&set->obj[set->n], text + at, next - at, line,
				   err)) {
			patch_set_free(set);
			return -1;
		}
		set->n++;
		for (size_t i = at; i < next; i++)
			line += text[i] == '\n';
		at = next;
	}
	return 0;
}

void patch_set_free(patch_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		patch_free(&set->obj[i]);
	free(set->obj);
	memset(set, 0, sizeof *set);
}

static int patch_read(const char *path, char **text, size_t *len,
		      char err[FMT_ERR_LEN]);

int patch_load(patch *p, const char *path, char err[FMT_ERR_LEN])
{
	memset(p, 0, sizeof *p);
	char *text;
	size_t len;
	if (patch_read(path, &text, &len, err))
		return -1;
	int rc = patch_parse(p, text, len, err);
	free(text);
	return rc;
}

int patch_set_load(patch_set *s, const char *path, char err[FMT_ERR_LEN])
{
	memset(s, 0, sizeof *s);
	char *text;
	size_t len;
	if (patch_read(path, &text, &len, err))
		return -1;
	int rc = patch_set_parse(s, text, len, err);
	free(text);
	return rc;
}

static int patch_read(const char *path, char **out, size_t *outlen,
		      char err[FMT_ERR_LEN])
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return patch_fail(err, 0, "%s", strerror(errno));
	char *text = NULL;
	size_t len = 0, cap = 0, got;
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 8192;
			char *n = realloc(text, cap);
			if (!n) {
				free(text);
				fclose(f);
				return patch_fail(err, 0, "out of memory");
			}
			text = n;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
	} while (got);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(text);
		return patch_fail(err, 0, "read error");
	}
	*out = text;
	*outlen = len;
	return 0;
}

static void patch_what_write(FILE *f, const patch_probe *pr)
{
	switch (pr->what) {
	case PATCH_REG:
		fprintf(f, "reg %s", skel_reg_name(pr->reg));
		break;
	case PATCH_ADDR:
		fprintf(f, "addr %u", pr->k);
		break;
	case PATCH_TAKEN:
		fputs("taken", f);
		break;
	case PATCH_TBIT:
		fputs("tbit", f);
		break;
	case PATCH_TREG:
		fprintf(f, "treg %s %s", skel_reg_name(pr->reg),
			pr->word == PATCH_ON_TAKEN ? "taken" : "fallthru");
		break;
	case PATCH_STARGET:
		fputs("starget", f);
		break;
	case PATCH_DSP:
		fputs("dsp", f);
		break;
	case PATCH_EDSP:
		fputs("edsp", f);
		break;
	case PATCH_SREG:
		fprintf(f, "sreg %s", skel_reg_name(pr->reg));
		break;
	case PATCH_DREG:
		fprintf(f, "dreg %s %u", skel_reg_name(pr->reg), (unsigned)pr->word);
		break;
	case PATCH_DADDR:
		fprintf(f, "daddr %u %u", pr->k, (unsigned)pr->word);
		break;
	case PATCH_TARGET:
		fputs("target", f);
		break;
	case PATCH_WORD:
	case PATCH_SWORD:
		fprintf(f, "%s %" PRIx64, pr->what == PATCH_SWORD ? "sword" : "word", pr->word);
		break;
	case PATCH_VMMARK:
		fprintf(f, "vmmark %" PRIx64, pr->word);
		break;
	}
}

int patch_write(FILE *f, const patch *p)
{
	fprintf(f, "%s %d\nbinary ", PATCH_MAGIC, PATCH_VERSION);
	for (uint32_t i = 0; i < p->id_len; i++)
		fprintf(f, "%02x", p->id[i]);
	fprintf(f, " %s\n", p->id_kind == SKEL_ID_HASH ? "hash" : "buildid");
	for (size_t i = 0; i < p->nprobes; i++) {
		const patch_probe *pr = &p->probes[i];
		fprintf(f, "probe %" PRIx64 " %" PRIx64 " %" PRIx64 " %s ",
			pr->pc, pr->block_start, pr->block_end,
			patch_pos_name[pr->after]);
		patch_what_write(f, pr);
		fputc('\n', f);
	}
	for (size_t i = 0; i < p->nenters; i++)
		fprintf(f, "enter %" PRIx64 " %" PRIx64 " %" PRIx64 "\n",
			p->enters[i].block, p->enters[i].pred_start,
			p->enters[i].pred_end);
	for (size_t i = 0; i < p->nlinks; i++)
		fprintf(f, "link %" PRIx64 " %" PRIx64 "\n", p->links[i].stub, p->links[i].slot);
	for (size_t i = 0; i < p->nqrets; i++)
		fprintf(f, "qret %" PRIx64 " %x\n", p->qrets[i].ret, p->qrets[i].link);
	for (size_t i = 0; i < p->nclosed; i++)
		fprintf(f, "closed %" PRIx64 "\n", p->closed[i]);
	return ferror(f) ? -1 : 0;
}

/* Over the fields, little-endian, in a fixed order: the canonical text's
 * content without printing it (the recorder hashes its patch at start-up,
 * where every instruction counts under valgrind). */
static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> 8 * i);
	return skel_fnv1a64(h, b, 8);
}

uint64_t patch_hash(const patch *p)
{
	uint64_t h = skel_fnv1a64(SKEL_FNV1A64_INIT, PATCH_MAGIC, strlen(PATCH_MAGIC));
	h = hash_u64(h, PATCH_VERSION);
	h = hash_u64(h, p->id_kind);
	h = hash_u64(h, p->id_len);
	h = skel_fnv1a64(h, p->id, p->id_len);
	h = hash_u64(h, p->nprobes);
	for (size_t i = 0; i < p->nprobes; i++) {
		const patch_probe *pr = &p->probes[i];
		h = hash_u64(h, pr->pc);
		h = hash_u64(h, pr->block_start);
		h = hash_u64(h, pr->block_end);
		h = hash_u64(h, (uint64_t)pr->after | (uint64_t)pr->what << 8);
		switch (pr->what) {
		case PATCH_REG:
		case PATCH_SREG:
			h = hash_u64(h, pr->reg);
			break;
		case PATCH_ADDR:
			h = hash_u64(h, pr->k);
			break;
		case PATCH_DREG:
		case PATCH_TREG:
			h = hash_u64(h, pr->reg);
			h = hash_u64(h, pr->word);
			break;
		case PATCH_DADDR:
			h = hash_u64(h, pr->k);
			h = hash_u64(h, pr->word);
			break;
		case PATCH_WORD:
		case PATCH_SWORD:
		case PATCH_VMMARK:
			h = hash_u64(h, pr->word);
			break;
		default:
			break;
		}
	}
	if (p->nenters) {	/* patches without them hash as before */
		h = hash_u64(h, p->nenters);
		for (size_t i = 0; i < p->nenters; i++) {
			h = hash_u64(h, p->enters[i].block);
			h = hash_u64(h, p->enters[i].pred_start);
			h = hash_u64(h, p->enters[i].pred_end);
		}
	}
	if (p->nlinks) {	/* likewise */
		h = hash_u64(h, p->nlinks | 1ull << 63);
		for (size_t i = 0; i < p->nlinks; i++) {
			h = hash_u64(h, p->links[i].stub);
			h = hash_u64(h, p->links[i].slot);
		}
	}
	if (p->nqrets || p->nclosed) {	/* likewise */
		h = hash_u64(h, p->nqrets | 1ull << 62);
		for (size_t i = 0; i < p->nqrets; i++) {
			h = hash_u64(h, p->qrets[i].ret);
			h = hash_u64(h, p->qrets[i].link);
		}
		h = hash_u64(h, p->nclosed);
		for (size_t i = 0; i < p->nclosed; i++)
			h = hash_u64(h, p->closed[i]);
	}
	return h;
}

void patch_free(patch *p)
{
	free(p->probes);
	free(p->enters);
	free(p->links);
	free(p->qrets);
	free(p->closed);
	memset(p, 0, sizeof *p);
}
