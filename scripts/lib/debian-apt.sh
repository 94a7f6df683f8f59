# shellcheck shell=bash
# scripts/lib/debian-apt.sh - sourced: Debian packages of any release and
# architecture through a private apt configuration (its own lists, cache,
# status and sources.list; the host's package state is never touched).
#
#   debian_mirror              print the Debian mirror the host's apt uses:
#                              $HEAPWALK_DEBIAN_MIRROR, else the first URI of
#                              an enabled deb822 stanza of type deb in
#                              /etc/apt/sources.list.d/*.sources, else of a
#                              "deb" line of /etc/apt/sources.list{,.d/*.list},
#                              that serves a plain release suite (not
#                              -security, -updates, ...).  No trailing "/".
#                              Status 1 (and nothing printed) when none.
#   apt_private_init WORKDIR SUITE ARCH [with-deb-src]
#                              make WORKDIR a private apt tree for SUITE/ARCH
#                              (main) of that mirror, signed by the host's
#                              debian-archive-keyring; with-deb-src adds the
#                              matching deb-src line (for apt-get source).
#                              Sets APT_WORK, APT_CONF, APT_LOG, APT_MIRROR,
#                              APT_SUITE, APT_ARCH.  Status 1 with one
#                              message on stderr when there is no mirror
#                              (caller may treat it as "cannot") and 2 when
#                              the keyring is missing.
#   aptc ARGS...               apt-get -q ARGS with that configuration, all
#                              output appended to $APT_LOG (e.g. aptc
#                              download PKG..., aptc source --download-only
#                              SRCPKG, run in the directory to fill).
#   aptcache ARGS...           apt-cache ARGS with that configuration, output
#                              on stdout (e.g. aptcache showsrc jemalloc).
#   apt_update                 aptc update, failing (status 1) also when a
#                              fetch failed with a mere warning.
#   apt_log_tail [N]           the last N (8) lines of $APT_LOG, indented,
#                              on stderr.
#
# The caller owns WORKDIR (create it with mktemp -d, remove it at exit).
# Messages are prefixed with "${me:-debian-apt}: ".
# shellcheck disable=SC2034 # APT_* are for the sourcing script

DEBIAN_KEYRING=${DEBIAN_KEYRING:-/usr/share/keyrings/debian-archive-keyring.gpg}

# First URI of an enabled deb822 "deb" stanza with a plain suite.
debian_mirror_deb822_() {
	awk '
	function flush() {
		if (types ~ /(^| )deb( |$)/ && enabled != "no" && uri != "" && plain)
			{ print uri; found = 1; exit }
		types = ""; uri = ""; plain = 0; enabled = ""
	}
	/^[ \t]*#/ { next }
	/^[ \t]*$/ { flush(); next }
	{
		key = tolower($1); sub(/:$/, "", key)
		if (key == "types") { $1 = ""; types = $0 " " }
		else if (key == "uris") uri = $2
		else if (key == "enabled") enabled = tolower($2)
		else if (key == "suites") {
			for (i = 2; i <= NF; i++)
				if ($i !~ /[-\/]/) plain = 1
		}
	}
	END { if (!found) flush() }
	' "$@" 2>/dev/null | sed -n 1,1p
}

# Same for one-line style: deb [options] URI SUITE COMPONENTS...
debian_mirror_oneline_() {
	awk '
	$1 == "deb" {
		i = 2
		if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
		uri = $i; s = $(i + 1)
		if (uri != "" && s !~ /[-\/]/) { print uri; exit }
	}' "$@" 2>/dev/null | sed -n 1,1p
}

debian_mirror() {
	local m=${HEAPWALK_DEBIAN_MIRROR:-} f
	local -a d822 lists
	if [ -z "$m" ]; then
		shopt -s nullglob
		d822=(/etc/apt/sources.list.d/*.sources)
		lists=(/etc/apt/sources.list /etc/apt/sources.list.d/*.list)
		shopt -u nullglob
		if [ ${#d822[@]} -gt 0 ]; then m=$(debian_mirror_deb822_ "${d822[@]}"); fi
		if [ -z "$m" ]; then
			for f in "${lists[@]}"; do
				[ -f "$f" ] || continue
				m=$(debian_mirror_oneline_ "$f")
				[ -n "$m" ] && break
			done
		fi
	fi
	[ -n "$m" ] || return 1
	echo "${m%/}"
}

apt_private_init() {
	local work=$1 suite=$2 arch=$3 src=${4:-}
	local p=${me:-debian-apt}
	if [ $# -lt 3 ] || [ $# -gt 4 ] || { [ -n "$src" ] && [ "$src" != with-deb-src ]; }; then
		echo "$p: usage: apt_private_init WORKDIR SUITE ARCH [with-deb-src]" >&2
		return 2
	fi
	APT_MIRROR=$(debian_mirror) || {
		echo "$p: no Debian mirror found in /etc/apt/sources.list{,.d/*.sources,.d/*.list} (set HEAPWALK_DEBIAN_MIRROR)" >&2
		return 1
	}
	[ -r "$DEBIAN_KEYRING" ] || {
		echo "$p: no $DEBIAN_KEYRING (install debian-archive-keyring)" >&2
		return 2
	}
	mkdir -p "$work" && work=$(cd "$work" && pwd) || return 2
	mkdir -p "$work"/{lists/partial,archives/partial,etc/sources.list.d,etc/preferences.d,debs}
	: >"$work/status"
	{
		echo "deb [arch=$arch signed-by=$DEBIAN_KEYRING] $APT_MIRROR $suite main"
		if [ -n "$src" ]; then
			echo "deb-src [signed-by=$DEBIAN_KEYRING] $APT_MIRROR $suite main"
		fi
	} >"$work/etc/sources.list"
	# Check-Valid-Until off: a mirror that serves a dated snapshot keeps
	# sid's and experimental's Release files past their Valid-Until (a
	# week), and apt then refuses them although their signatures, which
	# it still checks, are good.
	cat >"$work/apt.conf" <<EOC
Acquire::Check-Valid-Until "false";
Dir::State "$work";
Dir::State::lists "$work/lists";
Dir::State::status "$work/status";
Dir::Cache "$work";
Dir::Cache::archives "$work/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Dir::Etc::sourcelist "$work/etc/sources.list";
Dir::Etc::sourceparts "$work/etc/sources.list.d";
Dir::Etc::preferences "$work/etc/preferences";
Dir::Etc::preferencesparts "$work/etc/preferences.d";
APT::Architecture "$arch";
APT::Architectures { "$arch"; };
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
APT::Sandbox::User "root";
EOC
	APT_WORK=$work
	APT_CONF=$work/apt.conf
	APT_LOG=$work/apt.log
	APT_SUITE=$suite
	APT_ARCH=$arch
	: >"$APT_LOG"
}

aptc() {
	apt-get -c "$APT_CONF" -q "$@" >>"$APT_LOG" 2>&1
}

aptcache() {
	apt-cache -c "$APT_CONF" "$@"
}

apt_update() {
	aptc update || return 1
	! grep -qE '^(W|E): Failed to fetch' "$APT_LOG"
}

apt_log_tail() {
	tail -n "${1:-8}" "$APT_LOG" 2>/dev/null | sed 's/^/  /' >&2
}
