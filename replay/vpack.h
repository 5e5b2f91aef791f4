/* vpack.h — vt_pack (format.h) with AVX-512 instructions: the same bytes,
 * four to five times faster (0.45-0.55 ns a word against 1.7-2.9 on the
 * recordings of grep, hash, csr and libcheavy, in cache, on the 2.6 GHz
 * Xeon of the dev machine).  The recorder's flusher packs every word a
 * program records, and on value-heavy programs it is what the program
 * waits for: vt_pack_fast is what it calls.
 *
 * Eight words in one register: their zigzags, their byte counts from the
 * leading zeros, the data bytes of all eight gathered by one compress
 * under a mask of the bytes each word keeps, the eight 4-bit codes by one
 * bit extract, and a run chosen by selects, not by a branch.  Used when
 * the processor and the kernel have AVX-512 F, BW, CD, VL and VBMI2 and
 * BMI2 (Ice Lake and later, Zen 4); otherwise, and under valgrind (whose
 * processor has none), vt_pack.  vt_values_unpack_fast reads so too
 * (the replay: vtrace.c, replayer.c).  Only those and the tests include
 * this header: the skeletons' compiles do not parse immintrin.h. */
#ifndef SKEL_REPLAY_VPACK_H
#define SKEL_REPLAY_VPACK_H

#include "format.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define VT_PACK_SIMD 1

#define VT_PACK_TARGET \
	__attribute__((target("avx512f,avx512bw,avx512vl,avx512cd,avx512vbmi2,bmi2,popcnt")))

/* vt_pack's contract, but ctl needs 3 bytes past its n / 2 + 1 (a group's
 * four codes are stored as one word, a run's too). */
VT_PACK_TARGET
static inline size_t vt_pack_avx512(const uint64_t *w, size_t n, uint8_t *ctl, uint8_t *data,
				    size_t room, uint32_t *tokens, uint32_t *ndata)
{
	size_t i = 0, d = 0, t = 0;
	const __m512i one = _mm512_set1_epi64(1), two = _mm512_set1_epi64(2);
	const __m512i c71 = _mm512_set1_epi64(71), nine = _mm512_set1_epi64(VT_CODE_ONE);
	/* each byte's index in its word; a word's byte 0 to all its bytes */
	const __m512i bidx = _mm512_set1_epi64(0x0706050403020100ll);
	const __m512i bcast = _mm512_set_epi64(0x0808080808080808ll, 0, 0x0808080808080808ll, 0,
					       0x0808080808080808ll, 0, 0x0808080808080808ll, 0);
	while (i + 8 <= n && t + 4 + d + 8 * VT_PACK_MAX <= room) {
		__builtin_prefetch(w + i + 128);
		__m512i x = _mm512_loadu_si512(w + i);
		__m512i z = _mm512_xor_si512(_mm512_slli_epi64(x, 1), _mm512_srai_epi64(x, 63));
		/* (71 - clz) / 8: bytes of z, 0 for z = 0 (vplzcntq gives 64) */
		__m512i len = _mm512_srli_epi64(_mm512_sub_epi64(c71, _mm512_lzcnt_epi64(z)), 3);
		__mmask8 isone = _mm512_cmpeq_epi64_mask(z, two);	/* the word 1 */
		__mmask8 isbit = _mm512_cmple_epu64_mask(x, one);
		__m512i code = _mm512_mask_blend_epi64(isone, len, nine);
		__m512i dlen = _mm512_maskz_mov_epi64((__mmask8)~isone, len);
		__mmask64 keep = _mm512_cmplt_epu8_mask(bidx, _mm512_shuffle_epi8(dlen, bcast));
		_mm512_storeu_si512(data + d, _mm512_maskz_compress_epi8(keep, z));
		size_t nb = (size_t)_mm_popcnt_u64(keep);
		uint64_t cb = (uint64_t)_mm_cvtsi128_si64(_mm512_cvtepi64_epi8(code));
		uint32_t codes = (uint32_t)_pext_u64(cb, 0x0f0f0f0f0f0f0f0full);
		/* a run: no word had data (nb = 0), its bits are isone */
		int run = isbit == 0xff;
		data[d + nb] = (uint8_t)isone;
		d += nb + (size_t)run;
		codes = run ? VT_CODE_RUN : codes;
		__builtin_memcpy(ctl + t, &codes, 4);
		t += run ? 1 : 4;
		i += 8;
	}
	/* no upper halves left dirty for the SSE code after it (zstd) */
	_mm256_zeroupper();
	/* the rest as vt_pack's */
	uint32_t tk, nd;
	size_t m = vt_pack(w + i, n - i, ctl + t, data + d, room - t - d, &tk, &nd);
	*tokens = (uint32_t)(2 * t) + tk;
	*ndata = (uint32_t)d + nd;
	return i + m;
}

/* vt_values_unpack's contract and checks (the same payloads refused),
 * eight words at a time where four pair codes come in a row: their
 * data bytes spread to the words by one vpexpandb under the mask of
 * the bytes each keeps. */
VT_PACK_TARGET
static inline int vt_values_unpack_avx512(const uint8_t *p, size_t nbytes, uint64_t *w,
					  uint64_t n)
{
	const uint8_t *ctl, *cend, *d, *dend, *end = p + nbytes;
	int k = vt_unpack_head(p, nbytes, w, n, &ctl, &cend, &d, &dend);
	if (k)
		return k < 0 ? -1 : 0;
	const uint8_t *fast = end - 8;
	const __m512i nine = _mm512_set1_epi64(VT_CODE_ONE), one = _mm512_set1_epi64(1);
	const __m512i eight = _mm512_set1_epi64(8);
	const __m512i bidx = _mm512_set1_epi64(0x0706050403020100ll);
	const __m512i bcast = _mm512_set_epi64(0x0808080808080808ll, 0, 0x0808080808080808ll, 0,
					       0x0808080808080808ll, 0, 0x0808080808080808ll, 0);
	unsigned bad = 0;
	uint64_t o = 0;
	while (ctl < cend) {
		uint32_t c4;
		if (ctl + 4 <= cend && o + 8 <= n && d + 64 <= end &&
		    (__builtin_memcpy(&c4, ctl, 4),
		     /* no run among them: no byte 0xff (a zero byte of ~c4) */
		     !((~c4 - 0x01010101u) & c4 & 0x80808080u))) {
			/* four pair codes: eight words */
			uint64_t x = _pdep_u64(c4, 0x0f0f0f0f0f0f0f0full);
			bad |= ((x + 0x0606060606060606ull) & 0xf0f0f0f0f0f0f0f0ull) != 0;
			__m512i code = _mm512_cvtepu8_epi64(_mm_cvtsi64_si128((long long)x));
			__mmask8 isone = _mm512_cmpeq_epi64_mask(code, nine);
			__m512i len = _mm512_maskz_mov_epi64(_mm512_cmple_epu64_mask(code, eight), code);
			__mmask64 keep = _mm512_cmplt_epu8_mask(bidx, _mm512_shuffle_epi8(len, bcast));
			__m512i z = _mm512_maskz_expand_epi8(keep, _mm512_loadu_si512(d));
			__m512i v = _mm512_xor_si512(_mm512_srli_epi64(z, 1),
						     _mm512_sub_epi64(_mm512_setzero_si512(),
								      _mm512_and_si512(z, one)));
			_mm512_storeu_si512(w + o, _mm512_mask_mov_epi64(v, isone, one));
			d += _mm_popcnt_u64(keep);
			o += 8;
			ctl += 4;
			if (d > dend)
				return -1;
			continue;
		}
		if (vt_unpack_byte(*ctl++, &d, fast, dend, w, &o, n, &bad))
			return -1;
	}
	return bad || o != n || d != dend ? -1 : 0;
}

/* Whether this processor and kernel run vt_pack_avx512. */
static inline bool vt_pack_simd_ok(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512cd") &&
	       __builtin_cpu_supports("avx512vbmi2") && __builtin_cpu_supports("bmi2") &&
	       __builtin_cpu_supports("popcnt");
}
#else
#define VT_PACK_SIMD 0
static inline bool vt_pack_simd_ok(void)
{
	return false;
}
#endif

/* vt_pack_simd_ok, asked once (a race between threads sets the same) */
static inline bool vt_simd(void)
{
	static int ok = -1;
	if (ok < 0)
		ok = vt_pack_simd_ok();
	return ok;
}

/* vt_pack, by vector instructions when simd (vt_simd(); the tests force
 * either); ctl needs 3 bytes past n / 2 + 1. */
static inline size_t vt_pack_fast(bool simd, const uint64_t *w, size_t n, uint8_t *ctl,
				  uint8_t *data, size_t room, uint32_t *tokens, uint32_t *ndata)
{
#if VT_PACK_SIMD
	if (simd)
		return vt_pack_avx512(w, n, ctl, data, room, tokens, ndata);
#endif
	(void)simd;
	return vt_pack(w, n, ctl, data, room, tokens, ndata);
}

/* vt_values_unpack, by vector instructions when simd (vt_simd()). */
static inline int vt_values_unpack_fast(bool simd, const uint8_t *p, size_t nbytes, uint64_t *w,
					uint64_t n)
{
#if VT_PACK_SIMD
	if (simd)
		return vt_values_unpack_avx512(p, nbytes, w, n);
#endif
	(void)simd;
	return vt_values_unpack(p, nbytes, w, n);
}

#endif
