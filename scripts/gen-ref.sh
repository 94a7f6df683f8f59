#!/usr/bin/env bash
# Make every copy of the reference from its one source, so that the
# copies cannot drift.  The command table (libheapwalk/commands/*.c, as
# `heapwalk help CMD` prints it) gives each command's synopsis:
#   doc/heapwalk.md        the heading "### NAME USAGE" of each command
#   doc/heapwalk-gdb.7     its ".B heap NAME ..." line
#   scripts/completion/heapwalk.bash  the fallback copy of --help
# and doc/heapwalk.md, the reference, gives the manual page:
#   doc/heapwalk.1         from DESCRIPTION on, made by scripts/md2man.pl
#                          (its head -- .TH, NAME, SYNOPSIS -- is its own)
# The gdb page's prose is its own: it says what differs inside gdb.
#
# usage: scripts/gen-ref.sh [--check] [HEAPWALK]     (default build/heapwalk)
# --check: change nothing; exit 1 and show the differences when a copy
# is not what the table makes (tests/t0031-reference.sh).
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
hw=${1:-$top/build/heapwalk}
[ -x "$hw" ] || { echo "gen-ref: no heapwalk at $hw (make first)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gen-ref.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The table: "NAME<TAB>USAGE" per command, USAGE as `help NAME` shows it.
LC_ALL=C "$hw" --help >"$tmp/help"
sed -n '/^commands/,$p' "$tmp/help" | awk 'NR > 1 && /^  [a-z]/ { print $1 }' >"$tmp/names"
[ -s "$tmp/names" ] || { echo "gen-ref: $hw --help lists no command" >&2; exit 2; }
while read -r name; do
	usage=$(LC_ALL=C "$hw" help "$name" 2>&1 | sed -n '1s/^usage: heapwalk \[OPTIONS\] \(CORE \)\{0,1\}//p')
	[ -n "$usage" ] || { echo "gen-ref: no usage line for $name" >&2; exit 2; }
	printf '%s\t%s\n' "$name" "$usage"
done <"$tmp/names" >"$tmp/table"

# The copies, rewritten from the table by perl (one pass per file).
for f in doc/heapwalk.md doc/heapwalk.1 doc/heapwalk-gdb.7 scripts/completion/heapwalk.bash; do
	mkdir -p "$tmp/new/$(dirname "$f")"
	cp "$top/$f" "$tmp/new/$f"
done

# Each command's first heading in the two pages, from the table: the
# Markdown heading as the usage reads; in roff, options bold,
# placeholders (upper-case words) italic, brackets and bars roman.
TABLE=$tmp/table perl -i -ne '
	BEGIN {
		open my $t, "<", $ENV{TABLE} or die;
		while (<$t>) { chomp; my ($n, $u) = split /\t/, $_, 2; $u{$n} = $u }
	}
	sub roff {
		my ($u) = @_;
		my $out = "";
		for my $tok ($u =~ /(\[|\]|\||[^\[\]|\s]+|\s+)/g) {
			if ($tok =~ /^([A-Z][A-Z0-9_]*)(.*)$/) {
				$out .= "\\fI$1\\fP$2";
			} elsif ($tok =~ /^[\[\]|]$/) {
				$out .= "\\fR$tok\\fP";
			} else {
				(my $w = $tok) =~ s/-/\\-/g;
				$w =~ s/=([A-Z][A-Z0-9_]*)/=\\fI$1\\fP/g;
				$out .= $w;
			}
		}
		return $out;
	}
	# (The first heading of each command in each page.)
	sub first { my $n = shift; return exists $u{$n} && !$done{$ARGV}{$n}++ }
	if ($ARGV =~ /\.md$/ && /^### ([a-z]+)(?: |$)/ && first($1)) {
		print "### $u{$1}\n";
		next;
	}
	if ($ARGV =~ /gdb\.7$/ && /^\.B heap ([a-z]+)(?: |$)/ && first($1)) {
		print ".B heap " . roff($u{$1}) . "\n";
		next;
	}
	print;
' "$tmp/new/doc/heapwalk.md" "$tmp/new/doc/heapwalk-gdb.7"

# The manual page from the reference: its own head, then the rest made
# from the Markdown, with the placeholders of the usages and of the
# options (PID, FILE, ...) in italics.
sed '/^\.SH DESCRIPTION$/,$d' "$top/doc/heapwalk.1" >"$tmp/head"
grep -q '^\.TH ' "$tmp/head" || { echo "gen-ref: doc/heapwalk.1 has no .TH before its DESCRIPTION" >&2; exit 2; }
placeholders=$({ cut -f2 "$tmp/table"
	sed -n 's/^  \(-[-a-z, ]*[ =]\)\([A-Z][A-Z]*\) .*/\2/p' "$tmp/help"
	echo CORE COMMAND ARGS OPTIONS; } |
	grep -oE '\b[A-Z][A-Z0-9_]*\b' | sort -u | tr '\n' ' ')
perl "$top/scripts/md2man.pl" "$tmp/head" "$placeholders" \
	<"$tmp/new/doc/heapwalk.md" >"$tmp/new/doc/heapwalk.1"

# The completion's fallback: --help from "options:" on, quoted for bash.
HELP=$tmp/help perl -i -0777 -pe '
	open my $h, "<", $ENV{HELP} or die;
	my $help = do { local $/; <$h> };
	$help =~ s/\A.*?^(options:)/$1/ms;
	$help =~ s/\n+\z//;
	$help =~ s/\x27/\x27\\\x27\x27/g;
	s/^_heapwalk_fallback_help=\x27.*?\x27$/_heapwalk_fallback_help=\x27$help\x27/ms
		or die "gen-ref: no _heapwalk_fallback_help in the completion\n";
' "$tmp/new/scripts/completion/heapwalk.bash"

status=0
for f in doc/heapwalk.md doc/heapwalk.1 doc/heapwalk-gdb.7 scripts/completion/heapwalk.bash; do
	if ! cmp -s "$top/$f" "$tmp/new/$f"; then
		if [ $check = 1 ]; then
			echo "gen-ref: $f is not what its source makes (the command table, doc/heapwalk.md):" >&2
			diff -u "$top/$f" "$tmp/new/$f" | sed -n '3,40p' >&2
			status=1
		else
			cp "$tmp/new/$f" "$top/$f"
			echo "gen-ref: $f rewritten"
		fi
	fi
done
exit $status
