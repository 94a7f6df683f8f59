# shellcheck shell=bash
# scripts/lib/die.sh - sourced by scripts that set $me: one "$me: ..." line
# on stderr, then exit 1 (die) or 77 (cannot: this machine cannot do it).
die() {
	echo "$me: $*" >&2
	exit 1
}
cannot() {
	echo "$me: $*" >&2
	exit 77
}
