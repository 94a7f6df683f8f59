#!/bin/bash
# The library's layers stay apart.  The top of it, from the bottom up:
#   emit/      the report model and its renderers (text, JSON): knows no
#              command;
#   report/    what commands share (totals, the partial line, block rows,
#              profile stacks, ...): uses the emitter and the layers below
#              it, never a command;
#   commands/  one command per file (or per family folder: diff/, prof/,
#              map/), each defining its struct hw_command; a command uses
#              report/, emit/ and below, and no other command; table.c
#              lists them all and is used by none of them;
# and below them all the core: the session, the targets, the symbols, the
# allocators' walkers (whose own reports use the emitter) and analyses.
# session/api.c, the public data calls, uses report/ like a command;
# link/, the calls exported under their public names, the command table.
#
# Checked, on the source:
#  - no report reads the output form (`HW_FORM_*`, `.json`): only
#    emit/emit.c, which picks the renderer, and the renderers (and where
#    it is made: the header, the tool, the table's check of a caller's
#    struct hw_output, link/shared.c's HEAPWALK_0.1 bool);
#  - the emitter's insides (emit/render.h) are included by those alone;
#  - commands and reports print nothing themselves (no printf, puts,
#    fwrite, ...: all output goes through the emitter to the caller's
#    sink);
#  - the session (session/: session.c, session.h, open-opts.c, parts.c)
#    includes no analysis: analyses keep their results in its generic
#    slots;
# and on the graph of the files, whose edges are the #includes between
# them and the calls and data references between their objects (nm of
# the build the tests run: which file defines each symbol another uses):
#  - every edge goes a way the list above allows (a back edge, such as a
#    helper in report/ calling a command, or one command calling
#    another, is named with the symbols it uses);
#  - emit/, report/ and commands/ hold no circle of files.
# No heapwalk run is needed, only its objects.
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TOP"

# The emitter: where the form is chosen and rendered.
renderers='^libheapwalk/(emit/|link/shared\.c:|cli/|heapwalk\.h:|commands/table\.c:)'
reports=()
for f in libheapwalk/report/*.c libheapwalk/commands/*.c \
	libheapwalk/commands/*/*.c libheapwalk/alloc/*/report.c \
	libheapwalk/alloc/*/bins.c libheapwalk/alloc/*/params.c \
	libheapwalk/alloc/*/anatomy.c; do
	reports+=("$f")
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

# (libheapwalk/ itself holds the public header alone: its C is in
# folders.)
if code libheapwalk/*/*.c libheapwalk/*/*/*.c libheapwalk/*.h \
	libheapwalk/*/*.h libheapwalk/*/*/*.h |
	grep -E '(->|\.)json\b|HW_FORM_' | grep -Ev "$renderers" >"$T/json"; then
	say "the output form is read outside the emitter (emit/):"
	cat "$T/json" >&2
	bad=1
fi

if grep -n '#include.*render\.h' libheapwalk/*/*.c \
	libheapwalk/*/*/*.c libheapwalk/*/*.h libheapwalk/*/*/*.h |
	grep -Ev "$renderers" >"$T/inc"; then
	say "emit/render.h (the emitter's insides) is included outside the emitter:"
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
# (session/session.h: hw_slot_get/hw_slot_set), so neither the session
# nor the library's core includes an analysis: an analysis depends on the
# session, never the other way.
if grep -nE '#include *"(\.\./)?analysis/' libheapwalk/session/session.c \
	libheapwalk/session/session.h libheapwalk/session/open-opts.c \
	libheapwalk/session/parts.c >"$T/ana"; then
	say "the session includes an analysis (use a slot, session/session.h):"
	cat "$T/ana" >&2
	bad=1
fi

# The check itself must see something: the emitter does read the form.
code libheapwalk/emit/emit.c >"$T/emit"
grep -qE 'HW_FORM_' "$T/emit" ||
	fail "t0025 no longer finds where emit/emit.c picks the form (out->form): update the test"

# ---- the graph of files ------------------------------------------------
# Objects of the build under test (make check: build/asan/obj), which must
# be newer than their sources.
objdir=$(dirname "$HEAPWALK")/obj/libheapwalk
[ -d "$objdir" ] || fail "no objects at $objdir: build first (make check does)"
need_cmd nm perl
cd libheapwalk
# (link/shared.c is built into the shared library alone: it calls what
# link/static.c calls.)
for f in $(find . -name '*.c' -not -path './cli/*' -not -path './link/shared.c' |
	sed 's|^\./||' | sort); do
	o=$objdir/${f%.c}.o
	[ -f "$o" ] || fail "no object $o for libheapwalk/$f: build first"
	[ "$o" -nt "$f" ] || fail "$o is older than libheapwalk/$f: rebuild first"
	# "FILE D SYMBOL" for what it defines, "FILE U SYMBOL" for what it uses.
	nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print f, "D", $3 }'
	nm -u "$o" | awk -v f="$f" '{ print f, "U", $NF }'
done >"$T/syms"
# "FILE I HEADER" for each #include "..." (resolved from the file's folder).
for f in $(find . -name '*.[ch]' -not -path './cli/*' | sed 's|^\./||' | sort); do
	sed -n 's/^#include "\(.*\)".*/\1/p' "$f" | while read -r h; do
		r=$(realpath -m --relative-to=. "$(dirname "$f")/$h")
		if [ -f "$r" ]; then echo "$f I $r"; fi
	done
done >"$T/incs"
cd "$TOP"
cat "$T/syms" "$T/incs" | perl -e '
	use strict; use warnings;
	my (%def, %edge);
	my @lines = <STDIN>;
	for (@lines) { my ($f, $k, $s) = split; $def{$s} = $f if $k eq "D" }
	for (@lines) {
		my ($f, $k, $s) = split;
		my $t = $k eq "I" ? $s : $k eq "U" ? $def{$s} : undef;
		next unless defined $t && $t ne $f;
		$edge{$f}{$t}{$k eq "I" ? "#include" : $s} = 1;
	}
	# The layer of a file, and a command file'"'"'s family (its folder,
	# or its name up to the first "-": sizes-types.c is sizes'"'"').
	sub layer {
		my $f = shift;
		return "emit" if $f =~ m{^emit/};
		return "report" if $f =~ m{^report/};
		return "table" if $f eq "commands/table.c";
		return "command" if $f =~ m{^commands/};
		return "api" if $f eq "session/api.c";
		return "link" if $f =~ m{^link/};
		return "public" if $f eq "heapwalk.h";
		return "core";
	}
	sub family {
		my $f = shift;
		return $1 if $f =~ m{^commands/([^/]+)/};
		return "" if $f eq "commands/command.h";
		return $1 if $f =~ m{^commands/([a-z]+)};
	}
	my %may = (
		emit => { emit => 1 },
		report => { emit => 1, report => 1, core => 1 },
		command => { emit => 1, report => 1, core => 1, command => 1 },
		table => { command => 1, emit => 1, core => 1 },
		api => { emit => 1, report => 1, core => 1 },
		link => { table => 1, core => 1 },
		core => { core => 1, emit => 1 },
	);
	my $bad = 0;
	my $seen = 0;
	for my $f (sort keys %edge) {
		for my $t (sort keys %{$edge{$f}}) {
			my ($lf, $lt) = (layer($f), layer($t));
			$seen++ if $lf eq "table" && $lt eq "command";
			# The public header (its types and enums) is everyone'"'"'s.
			my $ok = $lt eq "public" || $may{$lf}{$lt};
			# A command uses its own family and command.h only.
			$ok &&= family($t) eq "" || family($t) eq family($f)
				if $lf eq "command" && $lt eq "command";
			next if $ok;
			print STDERR "t0025-layers: back edge $f ($lf) -> $t ($lt): ",
				join(", ", sort keys %{$edge{$f}{$t}}), "\n";
			$bad = 1;
		}
	}
	# Circles among emit/, report/ and commands/ (Tarjan'"'"'s components).
	my ($n, %idx, %low, %on, @stack) = (0);
	my $top = qr{^(emit|report|commands)/};
	my $visit;
	$visit = sub {
		my $v = shift;
		$idx{$v} = $low{$v} = $n++;
		push @stack, $v;
		$on{$v} = 1;
		for my $w (grep { /$top/ } keys %{$edge{$v} || {}}) {
			if (!defined $idx{$w}) {
				$visit->($w);
				$low{$v} = $low{$w} if $low{$w} < $low{$v};
			} elsif ($on{$w}) {
				$low{$v} = $idx{$w} if $idx{$w} < $low{$v};
			}
		}
		return if $low{$v} != $idx{$v};
		my @c;
		my $w;
		do { $w = pop @stack; $on{$w} = 0; push @c, $w } while $w ne $v;
		return if @c < 2;
		print STDERR "t0025-layers: a circle of files: ", join(" ", sort @c), "\n";
		$bad = 1;
	};
	for my $v (sort grep { /$top/ } keys %edge) {
		$visit->($v) unless defined $idx{$v};
	}
	# The check must see the table use the commands, or it saw nothing.
	if ($seen < 10) {
		print STDERR "t0025-layers: only $seen edges from commands/table.c to commands: the graph was not read (update the test)\n";
		$bad = 1;
	}
	exit $bad;
' || bad=1

[ $bad = 0 ] || fail "layering broken (see above)"
say "no report branches on the output form or prints by itself; every edge between files goes down, no circle in emit/, report/, commands/"
