#!/bin/sh
# Damaged value files (issue 12, integrity): every damage either is refused
# by `skel replay` with a message naming the file, before any access is
# written, or leaves the trace exactly as it was; a file cut short (at or
# inside a chunk) is replayed up to the cut, each thread's trace a prefix of
# its whole trace, and the replay says so with status 4.  Damages: a byte changed
# at offsets spread over the whole file (header, chunk headers, payloads),
# the file cut at and between chunk boundaries, a VALUES chunk dropped,
# duplicated, or moved after the next chunk.  Two recordings: bubble (many
# packed branch bits) and threads (several streams).  Prints the counts;
# fails on any wrong trace, crash or hang.
cd "$(dirname "$0")/.." || exit 1
# the executable's scope (skel gen --main-only) unless a case says
# otherwise: whole-process tracing is tests/whole.sh's
export SKEL_SCOPE=main
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME="$tmp/cache"
fails=0 refused=0 same=0 wrong=0 cut=0
bad() { echo "FAIL: damage: $*"; fails=$((fails+1)); }

# u32/u64 little-endian at offset: od prints them in the host's order (x86)
u32() { od -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }

# offsets of the chunks of $1, "off type payload" per line
chunks() {
	size=$(stat -c %s "$1"); off=104
	while [ $((off + 24)) -le "$size" ]; do
		t=$(u32 "$1" $((off + 4))); p=$(u64 "$1" $((off + 16)))
		echo "$off $t $p"
		off=$((off + 24 + p))
	done
}

# one damaged file: replay it, classify
try() { # file what
	timeout 60 ./skel replay "$skel" "$1" --format text -o "$tmp/out" 2>"$tmp/err"
	st=$?
	if [ $st -eq 124 ]; then
		bad "$2: replay hung"; wrong=$((wrong + 1)); return
	fi
	if [ $st -ge 128 ] || grep -qi "sanitizer\|segmentation" "$tmp/err"; then
		bad "$2: replay crashed (status $st): $(head -2 "$tmp/err")"; wrong=$((wrong + 1)); return
	fi
	if cmp -s "$tmp/out" "$tmp/ref"; then
		same=$((same + 1)); return
	fi
	if [ $st -ne 0 ] && [ ! -s "$tmp/out" ] && grep -q "^skel: .*$1" "$tmp/err"; then
		refused=$((refused + 1)); return
	fi
	# a cut (or a chunk length changed past the file's end, which reads
	# as one): the prefix, said
	if [ $st -eq 4 ] && grep -q "^skel: $1: .*\(cut\|ends before\)" "$tmp/err" &&
	   prefixes "$tmp/out" "$tmp/ref"; then
		cut=$((cut + 1)); return
	fi
	wrong=$((wrong + 1))
	bad "$2: status $st, $(wc -l <"$tmp/out") lines of trace differ or came before the refusal: $(head -2 "$tmp/err")"
}

# every thread's lines of $1 are the first lines of that thread in $2
prefixes() {
	awk 'FNR == 1 { f++ } /^# thread/ { t = $0; n = 0; next }
	     f == 1 { ref[t, ++n] = $0 }
	     f == 2 && ref[t, ++n] != $0 { bad = 1 }
	     END { exit bad }' "$2" "$1"
}

flip() { # src dst offset
	cp "$1" "$2"
	b=$(od -An -t u1 -j "$3" -N 1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $(( (b + 37) % 256 )))" |
		dd of="$2" bs=1 seek="$3" conv=notrunc status=none
}

campaign() { # name app args...
	name=$1; shift
	app=$1
	skel="$tmp/$name.c"
	./skel gen "$app" -o "$skel" 2>/dev/null || { bad "$name: skel gen"; return; }
	./skel record "$skel" -o "$tmp/v" -- "$@" >/dev/null 2>&1 || { bad "$name: record"; return; }
	./skel replay "$skel" "$tmp/v" --format text -o "$tmp/ref" 2>/dev/null || { bad "$name: clean replay failed"; return; }
	size=$(stat -c %s "$tmp/v")
	# bytes changed: every header byte's field, then 50 offsets spread (150 in make check-full)
	for o in 0 8 12 16 20 80 84 88 96 100; do
		flip "$tmp/v" "$tmp/d" $o; try "$tmp/d" "$name: byte $o changed"
	done
	n=50; [ -n "$SKEL_FULL" ] && n=150
	k=0
	while [ $k -lt $n ]; do
		o=$((104 + (size - 104) * k / n)); flip "$tmp/v" "$tmp/d" $o
		try "$tmp/d" "$name: byte $o changed"; k=$((k + 1))
	done
	chunks "$tmp/v" >"$tmp/chunks"
	# cut at chunk starts (after the first) and in their middles: 15
	# chunks spread over the file, the last one among them (a chunk per
	# 32768 words, and each outcome is a word since value trace version 3:
	# every chunk of bubble would be hundreds of replays)
	nc=$(wc -l <"$tmp/chunks"); step=$(( (nc + 14) / 15 ))
	awk -v s="$step" -v n="$nc" '(NR - 1) % s == 0 || NR == n' "$tmp/chunks" >"$tmp/cuts"
	while read -r off t p; do
		[ "$off" -gt 104 ] || continue
		head -c "$off" "$tmp/v" >"$tmp/d"; try "$tmp/d" "$name: cut at chunk $off"
		head -c $((off + 24 + p / 2)) "$tmp/v" >"$tmp/d"; try "$tmp/d" "$name: cut inside chunk $off"
	done <"$tmp/cuts"
	# VALUES chunks (type 2) dropped, duplicated, moved after the next chunk
	grep ' 2 ' "$tmp/chunks" | head -12 | while read -r off t p; do
		len=$((24 + p)); end=$((off + len))
		next=$(awk -v e=$end '$1 == e { print 24 + $3 }' "$tmp/chunks")
		head -c "$off" "$tmp/v" >"$tmp/d"; tail -c +$((end + 1)) "$tmp/v" >>"$tmp/d"
		try "$tmp/d" "$name: VALUES chunk $off dropped"
		head -c "$end" "$tmp/v" >"$tmp/d"; tail -c +$((off + 1)) "$tmp/v" >>"$tmp/d"
		try "$tmp/d" "$name: VALUES chunk $off duplicated"
		if [ -n "$next" ]; then
			head -c "$off" "$tmp/v" >"$tmp/d"
			tail -c +$((end + 1)) "$tmp/v" | head -c "$next" >>"$tmp/d"
			tail -c +$((off + 1)) "$tmp/v" | head -c "$len" >>"$tmp/d"
			tail -c +$((end + next + 1)) "$tmp/v" >>"$tmp/d"
			try "$tmp/d" "$name: VALUES chunk $off moved after the next"
		fi
		echo "$refused $same $wrong $fails $cut" >"$tmp/counts"
	done
	[ -f "$tmp/counts" ] && read -r refused same wrong fails cut <"$tmp/counts" && rm -f "$tmp/counts"
}

campaign bubble build/samples/bubble-O2-pie 1000
campaign threads build/samples/threads-O2-nopie
echo "damage: $((refused + same + cut + wrong)) damaged files: $refused refused before any access, $same replayed identically, $cut cut short and replayed up to the cut, $wrong wrong"
want=100; [ -n "$SKEL_FULL" ] && want=300
[ $((refused + same + cut + wrong)) -ge $want ] || bad "only $((refused + same + cut + wrong)) cases ran, fewer than $want"
[ $fails -eq 0 ] && [ $wrong -eq 0 ] && echo "damage: ok"
[ $fails -eq 0 ] && [ $wrong -eq 0 ]
