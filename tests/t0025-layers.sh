#!/bin/bash
# The report layers stay apart (libheapwalk/report/emit.h): commands and
# the walkers' reports emit records once; only the emitter and its
# renderers know which form (text or JSON) is written.
#  - no report reads the output form (`->json`, `.json`): only
#    report/emit.c, which picks the renderer, and report/render-*.c;
#  - the emitter's insides (report/render.h) are included by those alone;
#  - reports print nothing themselves (no printf, puts, fwrite, ...: all
#    output goes through the emitter to the caller's sink);
#  - the session (session.c, internal.h, open-opts.c) includes no
#    analysis: analyses keep their results in its generic slots (api.c,
#    the public data calls, is a user of analyses like a command).
# Static checks on the source; no heapwalk binary is needed.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TOP"

# The emitter: where the form is chosen and rendered.
renderers='^libheapwalk/report/(emit\.c|render-[a-z]+\.c|render\.h|format\.[ch]):'
reports=()
for f in libheapwalk/report/*.c libheapwalk/alloc/*/report.c; do
	grep -qE "$renderers" <<<"$f:" || reports+=("$f")
done
[ ${#reports[@]} -ge 4 ] || fail "t0025 finds too few reports (${reports[*]}): update the test"
bad=0

# C source without comments and string literals, one file:LINE:text per
# line, so that prose mentioning JSON is not a match.
code() {
	local f
	for f; do
		perl -0777 -ne '
			s{/\*.*?\*/}{ my $c = $&; $c =~ s/[^\n]//g; $c }gse;
			s{//[^\n]*}{}g;
			s{"(?:[^"\\\n]|\\.)*"}{""}g;
			my $n = 0;
			for (split /\n/, $_, -1) { $n++; print "$ARGV:$n:$_\n" }
		' "$f"
	done
}

if code libheapwalk/*.c libheapwalk/*/*.c libheapwalk/*/*/*.c libheapwalk/*.h \
	libheapwalk/*/*.h libheapwalk/*/*/*.h |
	grep -E '(->|\.)json\b' | grep -Ev "$renderers" >"$T/json"; then
	say "the output form is read outside the emitter (report/emit.c, report/render-*.c):"
	cat "$T/json" >&2
	bad=1
fi

if grep -n '#include.*render\.h' libheapwalk/*.c libheapwalk/*/*.c \
	libheapwalk/*/*/*.c libheapwalk/*/*.h libheapwalk/*/*/*.h |
	grep -Ev "$renderers" >"$T/inc"; then
	say "report/render.h (the emitter's insides) is included outside the emitter:"
	cat "$T/inc" >&2
	bad=1
fi

if code "${reports[@]}" |
	grep -E '\b(printf|fprintf|vprintf|vfprintf|dprintf|puts|fputs|putchar|fputc|fwrite|write)[[:space:]]*\(' \
	>"$T/print"; then
	say "a report prints by itself instead of emitting records:"
	cat "$T/print" >&2
	bad=1
fi

# The session owns the analyses' results through its generic slots
# (internal.h: hw_slot_get/hw_slot_set), so neither the session nor the
# library's core includes an analysis: an analysis depends on the
# session, never the other way.
if grep -nE '#include *"(\.\./)?analysis/' libheapwalk/session.c libheapwalk/internal.h \
	libheapwalk/open-opts.c >"$T/ana"; then
	say "the session includes an analysis (use a slot, internal.h):"
	cat "$T/ana" >&2
	bad=1
fi

# The check itself must see something: the emitter does read the form.
code libheapwalk/report/emit.c >"$T/emit"
grep -qE '(->|\.)json\b' "$T/emit" ||
	fail "t0025 no longer finds where report/emit.c picks the form (out->json): update the test"

[ $bad = 0 ] || fail "report layering broken (see above)"
say "no report branches on the output form or prints by itself"
