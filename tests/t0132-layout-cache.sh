#!/bin/bash
# The struct layouts kept between runs (HEAPWALK_CACHE_DIR, by default
# ~/.cache/heapwalk): the first run on a libc with a separate debug file
# reads its DWARF and keeps the four malloc.c layouts in
# DIR/layouts/BUILD-ID; the next runs read no DWARF (--stats) and print
# exactly what the first and a --no-cache run print (JSON), which agrees
# with the program's truth; the text summary says the layouts were kept
# in the cache, and does not with --no-cache.  What the file keeps is checked against gdb's own
# reading of the same DWARF (ptype/o), not against heapwalk.  Host glibc
# 2.36, bookworm's arm64 2.36 (qemu core, --sysroot) and 2.43 amd64.
# Then what may go wrong: a debug file other than the one the answers
# came from, a line that does not parse, another file's magic, answers
# that parse but are wrong (checked against the debug file when they
# disagree with the version's layout), a cache directory or a directory
# on its way that others may write, layouts/ a symbolic link, a
# directory or file of another user's (as root), a cache directory that
# cannot be made, --no-cache, --no-debuginfo; and gdb's plugin keeps and
# reads the same file.
# shellcheck source=tests/variant-lib.sh
. "$(dirname "$0")/variant-lib.sh"
need_heapwalk
need_cmd gdb gdb
truthcmp=$(tool truthcmp)

# stats_dwarf ERR: "M C": the --stats line's DWARF modules read and
# layouts taken from the cache.
stats_dwarf() {
	sed -n 's/.*; DWARF of \([0-9]*\) modules\(, \([0-9]*\) struct layouts from the cache\)\{0,1\}$/\1 \3/p' "$1" |
		awk '{ print $1, ($2 == "" ? 0 : $2) }'
}

# gdb_members LIBC DEBUGDIR TAG: "NAME OFFSET" for each top-level member
# of TAG as gdb reads it from LIBC's DWARF, then "sizeof SIZE".
gdb_members() {
	local t
	for t in "struct $3" "$3"; do
		gdb -nx -batch -iex "set debug-file-directory $2" \
			-ex "ptype/o $t" "$1" 2>/dev/null | awk '
			/^No (struct )?(type|symbol)/ { exit 1 }
			{
				line = $0
				d0 = depth
				depth += gsub(/{/, "{", line) - gsub(/}/, "}", line)
			}
			d0 == 1 && /^\/\* +[0-9]+ +\| +[0-9]+ \*\/.*;$/ {
				off = $2
				decl = $0
				sub(/;$/, "", decl)
				sub(/\[[^]]*\]$/, "", decl)
				n = split(decl, w, /[ *]+/)
				print w[n], off
			}
			/total size \(bytes\)/ { sz = $5; found = 1 }
			END { if (found) print "sizeof", sz; else exit 1 }' && return 0
	done
	return 1
}

# check_against_gdb FILE LIBC DEBUGDIR WHAT: every answer FILE keeps is
# gdb's: each member's offset (-1: gdb has no such member) and sizeof.
check_against_gdb() {
	local file=$1 libc=$2 ddir=$3 what=$4 tag near members eq size offs n=0
	while read -r tag near members eq size offs; do
		[ "$eq" = "=" ] || continue
		[ "$size" != none ] || fail "$what: $tag kept as not found"
		gdb_members "$libc" "$ddir" "$tag" >"$T/gdb.$tag" ||
			fail "$what: gdb does not know $tag in $libc"
		grep -qx "sizeof $size" "$T/gdb.$tag" ||
			fail "$what: $tag: sizeof $size kept, gdb says $(grep sizeof "$T/gdb.$tag")"
		local -a names values
		IFS=, read -r -a names <<<"$members"
		read -r -a values <<<"$offs"
		[ ${#names[@]} = ${#values[@]} ] || fail "$what: $tag: ${#names[@]} members, ${#values[@]} offsets"
		for ((i = 0; i < ${#names[@]}; i++)); do
			local g
			g=$(awk -v m="${names[i]}" '$1 == m { print $2 }' "$T/gdb.$tag")
			[ "${values[i]}" = "${g:--1}" ] ||
				fail "$what: $tag.${names[i]}: kept ${values[i]}, gdb says ${g:-no such member}"
		done
		n=$((n + 1))
	done <"$file"
	[ $n = 4 ] || fail "$what: $n layouts kept, not 4: $(cat "$file")"
}

# One core: cold, warm and --no-cache runs agree with each other and the
# truth; the file is gdb's reading.  ARGS: options for heapwalk.
check_case() {
	local what=$1 dir=$2 libc=$3 ddir=$4
	shift 4
	local c=$T/$what cache=$T/$what/cache
	mkdir -p "$c"
	export HEAPWALK_CACHE_DIR=$cache
	for run in cold warm; do
		hw "$c/$run.chunks" "$c/$run.chunks.err" --stats --json "$@" "$dir/core" chunks
		expect_rc 0
		hw "$c/$run.summary" "$c/$run.summary.err" --stats --json "$@" "$dir/core" summary
		expect_rc 0
		"$truthcmp" "$dir/truth.txt" "$c/$run.chunks" "$c/$run.summary" ||
			fail "$what ($run cache): heapwalk disagrees with the truth"
	done
	hw "$c/none.summary" "$c/none.summary.err" --no-cache --json "$@" "$dir/core" summary
	expect_rc 0
	[ "$(stats_dwarf "$c/cold.chunks.err")" = "1 0" ] ||
		fail "$what: the first run did not read libc's DWARF: $(tail -n 1 "$c/cold.chunks.err")"
	# summary after chunks: the file is there already.
	for f in warm.chunks warm.summary cold.summary; do
		[ "$(stats_dwarf "$c/$f.err")" = "0 4" ] ||
			fail "$what: $f did not take the 4 layouts from the cache: $(tail -n 1 "$c/$f.err")"
	done
	cmp -s "$c/cold.chunks" "$c/warm.chunks" || fail "$what: chunks differ cold and warm"
	cmp -s "$c/cold.summary" "$c/warm.summary" || fail "$what: summary differs cold and warm"
	cmp -s "$c/none.summary" "$c/warm.summary" || fail "$what: summary differs with --no-cache"
	grep -q '"layout":"DWARF"' "$c/warm.summary" ||
		fail "$what: the layouts are not said to be DWARF's: $(grep -o '"layout":"[^"]*"' "$c/warm.summary")"
	# The text says where they came from: the cache when kept, not
	# with --no-cache.
	hw "$c/warm.text" "$c/warm.text.err" "$@" "$dir/core" summary
	expect_rc 0
	grep -q '^  struct layouts: *DWARF (kept in the layout cache from an earlier run' "$c/warm.text" ||
		fail "$what: summary does not say the layouts came from the cache: $(grep 'struct layouts' "$c/warm.text")"
	hw "$c/none.text" "$c/none.text.err" --no-cache "$@" "$dir/core" summary
	expect_rc 0
	grep -q '^  struct layouts: *DWARF$' "$c/none.text" ||
		fail "$what: with --no-cache summary says: $(grep 'struct layouts' "$c/none.text")"
	local files=("$cache"/layouts/*)
	[ ${#files[@]} = 1 ] && [ -f "${files[0]}" ] || fail "$what: not one file in $cache/layouts: ${files[*]}"
	CACHE_FILE=${files[0]}
	sed -n 1p "$CACHE_FILE" | has -x 'heapwalk struct layouts 1' ||
		fail "$what: $CACHE_FILE does not begin with its magic"
	check_against_gdb "$CACHE_FILE" "$libc" "$ddir" "$what"
	say "$what: $(basename "$CACHE_FILE"): 4 layouts as gdb reads them; cold, warm and --no-cache the same, as the truth"
}

# ---- host glibc (Debian's libc6-dbg) ----
dir=$(corpus_core bins1)
mkdir -p "$T/host"
corpus_copy "$dir" "$T/host"
host_libc=$(readlink -f /lib/x86_64-linux-gnu/libc.so.6)
hw "$T/probe" "$T/probe.err" --stats --no-cache "$T/host/core" summary
expect_rc 0
[ "$(stats_dwarf "$T/probe.err")" = "1 0" ] ||
	skip "the host's libc has no separate debug info here (libc6-dbg)"
check_case host "$T/host" "$host_libc" /usr/lib/debug
host_file=$CACHE_FILE host_cache=$T/host/cache

# ---- bookworm's arm64 2.36 and 2.43 amd64, from their sysroots ----
vdir=$(variant_core glibc-2.36-arm64 bins1)
vs=$(readlink -f "$vdir/sysroot")
check_case arm64 "$vdir" "$vs/lib/aarch64-linux-gnu/libc.so.6" "$vs/usr/lib/debug" \
	--sysroot "$vs" --debug-dir "$vs/usr/lib/debug"
vdir=$(variant_core glibc-2.43-amd64 bins1)
vs=$(readlink -f "$vdir/sysroot")
check_case 2.43 "$vdir" "$(ls "$vs"/lib/x86_64-linux-gnu/libc.so.6)" "$vs/usr/lib/debug" \
	--debug-dir "$vs/usr/lib/debug"

# ---- what may go wrong (host core) ----
export HEAPWALK_CACHE_DIR=$host_cache
good=$T/good.layouts
cp "$host_file" "$good"
# damaged CASE: after SED rewrote the file, the run reads DWARF again,
# prints what it printed, and leaves the file as it was made.
damaged() {
	local what=$1 sedprog=$2
	cp "$good" "$host_file"
	sed -i "$sedprog" "$host_file"
	cmp -s "$good" "$host_file" && fail "damaged $what: the sed changed nothing"
	hw "$T/d.summary" "$T/d.summary.err" --stats --json "$T/host/core" summary
	expect_rc 0
	[ "$(stats_dwarf "$T/d.summary.err")" = "1 0" ] ||
		fail "damaged $what: DWARF was not read again: $(tail -n 1 "$T/d.summary.err")"
	cmp -s "$T/d.summary" "$T/host/warm.summary" || fail "damaged $what: summary differs"
	cmp -s "$good" "$host_file" || fail "damaged $what: the file was not made anew: $(diff "$good" "$host_file")"
	say "damaged $what: DWARF read again, the same summary, the file made anew"
}
damaged "(another debug file: its size)" '2s/^\(debug [^ ]* \)\([0-9]*\)/\19\2/'
damaged "(another debug file: its time)" '2s/ \([0-9]*\)\.\([0-9]*\) \([0-9]*\)$/ 1\1.\2 \3/'
damaged "(another debug file: its inode)" '2s/ \([0-9]*\)$/ 9\1/'
damaged "(an offset past sizeof)" '/^malloc_state /s/ = \([0-9]*\) \([0-9]*\) / = \1 99999 /'
damaged "(not a number)" '/^heap_info /s/ = \([0-9]*\) / = x\1 /'
damaged "(an offset too few)" '/^heap_info /s/ [0-9-]*$//'
damaged "(another magic)" '1s/layouts 1/layouts 2/'

# Answers that parse but are wrong (malloc_state's fastbinsY and top
# swapped): they disagree with glibc 2.36's layout, so
# the debug file is read again; the summary is the right one, says the
# cache was wrong, and the file is made anew.
cp "$good" "$host_file"
sed -i '/^malloc_state /s/ = \([0-9]*\) \([0-9]* [0-9]* [0-9]*\) \([0-9]*\) \([0-9]*\) / = \1 \2 \4 \3 /' "$host_file"
cmp -s "$good" "$host_file" && fail "wrong offsets: the sed changed nothing"
hw "$T/w.summary" "$T/w.summary.err" --stats --json "$T/host/core" summary
expect_rc 0
case $(stats_dwarf "$T/w.summary.err") in
"1 "*) ;;
*) fail "wrong offsets: the debug file was not read: $(tail -n 1 "$T/w.summary.err")" ;;
esac
grep -q '"layout_cache_note":"wrong answers replaced from the debug file"' "$T/w.summary" ||
	fail "wrong offsets: JSON does not say so: $(grep -o '"layout[^,]*' "$T/w.summary")"
sed 's/,"layout_cache_note":"[^"]*"//' "$T/w.summary" | cmp -s - "$T/host/warm.summary" ||
	fail "wrong offsets: summary differs from the right one"
cmp -s "$good" "$host_file" || fail "wrong offsets: the file was not made anew: $(diff "$good" "$host_file")"
cp "$good" "$host_file"
sed -i '/^malloc_state /s/ = \([0-9]*\) \([0-9]* [0-9]* [0-9]*\) \([0-9]*\) \([0-9]*\) / = \1 \2 \4 \3 /' "$host_file"
hw "$T/w.text" "$T/w.text.err" "$T/host/core" summary
expect_rc 0
grep -q "^  struct layouts: *DWARF (the layout cache's answers disagreed with the debug file: replaced)" "$T/w.text" ||
	fail "wrong offsets: the text says: $(grep 'struct layouts' "$T/w.text")"
say "wrong offsets that parse: checked against the debug file, the right summary, said, the file made anew"

# Trust, as ssh's for ~/.ssh.  refused WHAT WHY-PATTERN [DIR]: with the
# cache's file holding wrong offsets, the run does not read it (DWARF
# read, the right summary), and summary says why (text and JSON).
refused() {
	local what=$1 why=$2 dir=${3:-$host_cache}
	HEAPWALK_CACHE_DIR=$dir hw "$T/r.summary" "$T/r.summary.err" --stats --json "$T/host/core" summary
	expect_rc 0
	[ "$(stats_dwarf "$T/r.summary.err")" = "1 0" ] ||
		fail "$what: the cache was used: $(tail -n 1 "$T/r.summary.err")"
	sed 's/,"layout_cache_note":"[^"]*"//' "$T/r.summary" | cmp -s - "$T/host/warm.summary" ||
		fail "$what: summary differs from the right one"
	grep -q "\"layout_cache_note\":\"$why" "$T/r.summary" ||
		fail "$what: JSON does not say why: $(grep -o '"layout_cache_note[^,]*' "$T/r.summary")"
	HEAPWALK_CACHE_DIR=$dir hw "$T/r.text" "$T/r.text.err" "$T/host/core" summary
	expect_rc 0
	grep -q "^  struct layouts: *DWARF (the layout cache is not used: $why" "$T/r.text" ||
		fail "$what: the text says: $(grep 'struct layouts' "$T/r.text")"
	say "$what: not used: $(sed -n 's/.*the layout cache is not used: //p' "$T/r.text")"
}
plant() {   # the wrong offsets, where a reader would find them
	cp "$good" "$host_file"
	sed -i '/^malloc_state /s/ = \([0-9]*\) \([0-9]* [0-9]* [0-9]*\) \([0-9]*\) \([0-9]*\) / = \1 \2 \4 \3 /' "$host_file"
}
plant
chmod 0777 "$host_cache"
refused "a cache directory others may write" "$host_cache may be written by others (mode 777)"
chmod 0700 "$host_cache"
chmod 0757 "$T/host"
refused "a directory on the way others may write" "$T/host may be written by others (mode 757)"
chmod 0755 "$T/host"
mv "$host_cache/layouts" "$T/host/elsewhere"
ln -s "$T/host/elsewhere" "$host_cache/layouts"
refused "layouts/ a symbolic link" "$host_cache/layouts is a symbolic link"
rm "$host_cache/layouts"
mv "$T/host/elsewhere" "$host_cache/layouts"
# Another user's: only root can make one here.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chown nobody "$host_cache"
	refused "a cache directory of another user's (root running with a user's HOME)" \
		"$host_cache is owned by uid $(id -u nobody), not by this user (uid 0)"
	chown 0 "$host_cache"
	# A directory on the way that is another user's (root under sudo,
	# a user's HOME kept): that user could swap what lies below it.
	chown nobody "$T/host"
	refused "a directory on the way of another user's" \
		"$T/host is uid $(id -u nobody)'s, who could change what lies below it"
	chown 0 "$T/host"
	# A file of another user's in our directory is passed over, and
	# made anew (ours).
	chown nobody "$host_file"
	HEAPWALK_CACHE_DIR=$host_cache hw "$T/r.summary" "$T/r.summary.err" --stats --json "$T/host/core" summary
	expect_rc 0
	[ "$(stats_dwarf "$T/r.summary.err")" = "1 0" ] || fail "a file of another user's was read"
	cmp -s "$T/r.summary" "$T/host/warm.summary" || fail "a file of another user's: summary differs"
	cmp -s "$good" "$host_file" && [ "$(stat -c %u "$host_file")" = 0 ] ||
		fail "a file of another user's: not made anew, ours"
	say "a file of another user's: not read, made anew"
else
	say "another user's directory and file: not checked (not root, or no user nobody)"
fi
plant
chmod 0666 "$host_file"
HEAPWALK_CACHE_DIR=$host_cache hw "$T/r.summary" "$T/r.summary.err" --stats --json "$T/host/core" summary
expect_rc 0
[ "$(stats_dwarf "$T/r.summary.err")" = "1 0" ] || fail "a file others may write was read"
cmp -s "$T/r.summary" "$T/host/warm.summary" || fail "a file others may write: summary differs"
cmp -s "$good" "$host_file" || fail "a file others may write: not made anew"
# A symbolic link to a cache directory of ours is as good as it.
ln -s "$host_cache" "$T/link"
HEAPWALK_CACHE_DIR=$T/link hw "$T/r.summary" "$T/r.summary.err" --stats --json "$T/host/core" summary
expect_rc 0
[ "$(stats_dwarf "$T/r.summary.err")" = "0 4" ] ||
	fail "a link to our cache directory: not used: $(tail -n 1 "$T/r.summary.err")"
say "a file others may write: not read, made anew; a link to our directory: used"

# The directory cannot be made (a file is in its way): as without one,
# and summary says why.
: >"$T/notadir"
HEAPWALK_CACHE_DIR=$T/notadir/x hw "$T/nd.summary" "$T/nd.summary.err" --stats --json "$T/host/core" summary
expect_rc 0
sed 's/,"layout_cache_note":"[^"]*"//' "$T/nd.summary" | cmp -s - "$T/host/warm.summary" ||
	fail "unwritable cache: summary differs"
grep -q '"layout_cache_note":"'"$T"'/notadir' "$T/nd.summary" ||
	fail "unwritable cache: not said: $(grep -o '"layout[^,]*' "$T/nd.summary")"
# --no-cache and --no-debuginfo keep nothing and read nothing kept.
for opt in --no-cache --no-debuginfo; do
	rm -rf "$T/fresh"
	HEAPWALK_CACHE_DIR=$T/fresh hw "$T/o.summary" "$T/o.summary.err" --stats "$opt" "$T/host/core" summary
	expect_rc 0
	[ ! -e "$T/fresh" ] || fail "$opt: something was kept: $(find "$T/fresh")"
	HEAPWALK_CACHE_DIR=$host_cache hw "$T/o.summary" "$T/o.summary.err" --stats "$opt" "$T/host/core" summary
	expect_rc 0
	case $(stats_dwarf "$T/o.summary.err") in
	*" 0") ;;
	*) fail "$opt: layouts taken from the cache: $(tail -n 1 "$T/o.summary.err")" ;;
	esac
done
# HEAPWALK_CACHE_DIR set and empty: none.
rm -rf "$T/home"
mkdir -p "$T/home"
HOME=$T/home XDG_CACHE_HOME= HEAPWALK_CACHE_DIR= hw "$T/e.summary" "$T/e.summary.err" "$T/host/core" summary
expect_rc 0
[ -z "$(find "$T/home" -mindepth 1)" ] || fail "HEAPWALK_CACHE_DIR empty: something was kept: $(find "$T/home")"
# Unset: XDG_CACHE_HOME, else ~/.cache.
(
	unset HEAPWALK_CACHE_DIR
	HOME=$T/home XDG_CACHE_HOME= hw "$T/e.summary" "$T/e.summary.err" "$T/host/core" summary
	expect_rc 0
	cmp -s "$good" "$T/home/.cache/heapwalk/layouts/$(basename "$host_file")" ||
		fail "no HEAPWALK_CACHE_DIR: not kept in ~/.cache/heapwalk"
	HOME=$T/home XDG_CACHE_HOME=$T/xdg hw "$T/e.summary" "$T/e.summary.err" "$T/host/core" summary
	expect_rc 0
	cmp -s "$good" "$T/xdg/heapwalk/layouts/$(basename "$host_file")" ||
		fail "no HEAPWALK_CACHE_DIR: not kept in \$XDG_CACHE_HOME/heapwalk"
)
say "unwritable, --no-cache, --no-debuginfo, empty HEAPWALK_CACHE_DIR: nothing kept or read; else \$XDG_CACHE_HOME/heapwalk, ~/.cache/heapwalk"

# gdb's plugin: keeps the same file, and prints the tool's summary.
GDB_SCRIPT=${GDB_SCRIPT:-$TOP/build/plugin/heapwalk.gdb}
if [ -f "$GDB_SCRIPT" ]; then
	rm -rf "$T/gdbcache"
	HEAPWALK_CACHE_DIR=$T/gdbcache timeout -k 5 300 gdb -nx -batch -iex 'set pagination off' \
		-iex 'set width 0' -x "$GDB_SCRIPT" -ex 'heap --json summary' \
		"$dir/prog" "$T/host/core" >"$T/gdb.out" 2>&1 </dev/null || true
	cmp -s "$good" "$T/gdbcache/layouts/$(basename "$host_file")" ||
		fail "gdb's plugin did not keep the layouts: $(find "$T/gdbcache" 2>&1; tail -n 5 "$T/gdb.out")"
	HEAPWALK_CACHE_DIR=$T/gdbcache timeout -k 5 300 gdb -nx -batch -iex 'set pagination off' \
		-iex 'set width 0' -x "$GDB_SCRIPT" -ex 'heap --json summary' \
		"$dir/prog" "$T/host/core" >"$T/gdb2.out" 2>&1 </dev/null || true
	grep -q '"layout":"DWARF"' "$T/gdb2.out" ||
		fail "gdb's plugin with the cache: no DWARF layouts: $(tail -n 5 "$T/gdb2.out")"
	say "gdb's plugin keeps the same file, and with it kept says DWARF's layouts"
else
	say "gdb's plugin: not built, not checked"
fi
