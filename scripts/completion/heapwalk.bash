# shellcheck shell=bash
# heapwalk.bash - bash completion for heapwalk(1).
#
# Install it as DATADIR/bash-completion/completions/heapwalk, where
# bash-completion loads it the first time `heapwalk` is completed, or
# source it from ~/.bashrc.  It needs nothing of bash-completion.
#
# What it completes: global options anywhere on the line; a core file (or
# `help`) as the target, process ids after --pid; a command after the
# target (or after `help`); a command's own options and arguments after
# it; file names wherever a FILE, a core or a base is due, directories
# for DIR.
#
# Where the words come from: `heapwalk --help` of the heapwalk being
# completed, read once per binary and shell.  Its options part is the
# usage of libheapwalk/cli/heapwalk.c; its commands part is the command
# table's help strings (each command's struct hw_command, in
# libheapwalk/commands/), whose bracketed parts ("[--used|--free]",
# "[-o FILE]", "[--format=text|pprof]") give each command's options and
# whose leading word ("ADDR:", "[KIND]:", "BASE") its argument.  So a command or option added there is completed
# without touching this file.  When that heapwalk cannot be run (not
# installed yet, or the word is not a path), _heapwalk_fallback_help, a
# copy of that output, stands in: keep it in step (tests/t0030-docs.sh
# checks that every command and option of --help is in it).

# The --help output this file was written against, used when no heapwalk
# can be run.
_heapwalk_fallback_help='options:
  --pid PID         a live process: stop it, copy its heap, let it go
  --no-stop         with --pid: never stop the process (the view
                    may be torn; reports say so)
  --exe FILE        the executable (default: from the core); with
                    --pid, an unstripped copy of the running one
                    (used when its build-id is the same)
  --sysroot DIR     look up the target'\''s files under DIR
  --debug-dir DIR   extra separate-debug-info directory (repeatable)
  --no-debuginfo    ignore separate debug info
  --no-cache        keep nothing for later runs (default: the
                    struct layouts read from a debug file, in
                    $HEAPWALK_CACHE_DIR or ~/.cache/heapwalk)
  --allocator A     auto (default) | ptmalloc | jemalloc | tcmalloc |
                    mallocng | mimalloc | N (instance N as summary
                    lists them)
  --json            machine-readable output
  --threads N       worker threads (default: one per CPU)
  --cache-max SIZE  memory for a live process'\''s copy (e.g. 4G;
                    default: half of this machine'\''s memory)
  --unpack-max SIZE the most a compressed core may unpack to,
                    zeros included (default: 512 times its size,
                    at least 2G)
  --color=WHEN      auto (default: on a terminal, unless NO_COLOR
                    is set) | always | never
  -q, --quiet       no progress on stderr (shown on a terminal for
                    phases longer than a second)
  --stats           after the command, say on stderr what it took:
                    time, peak memory, walks and list entries read
  -h, --help        this help;  --version  the version

heapwalk help COMMAND: what COMMAND does and takes, with an example.
commands (default: summary):
  summary    [--leaks]: allocator, arenas, totals in use / free / overhead
  arenas     each arena with its heaps and totals
  arena      N: one arena'\''s own fields (ptmalloc: malloc_state: top,
             last_remainder, flags, next, attached threads, heaps; jemalloc:
             nthreads, threads, base, extents by state)
  mp         the allocator'\''s parameters and counters (ptmalloc: mp_,
             malloc_par: tunables, mmap counters, tcache limits; jemalloc:
             page, quantum, classes; tcmalloc: its size map)
  tcache     [TID]: each thread'\''s tcache (ptmalloc'\''s tcache struct, jemalloc'\''s
             cache bins, tcmalloc'\''s thread caches): where it is, and per bin
             its count and head
  bins       [KIND] [--list]: free lists (ptmalloc: tcache fast unsorted small
             large; jemalloc: small large tcache; tcmalloc: classes)
  chunks     [--used|--free] [--where W,...] [--arena N] [--thread TID]
             [--min-size SIZE] [--max-size SIZE] [--around ADDR [N]]: every
             chunk, or those of a state, place, arena or size
  sizes      [--exact|--by=type]: per size class (or C++ class): count and
             bytes in use and free
  chunk      ADDR [--bytes N]: the chunk containing ADDR, its neighbours and
             its fields
  view       ADDR [COUNT] [--bytes N]: the bytes of the heap block by block
             from ADDR, each block'\''s row over its bytes (a ptmalloc chunk'\''s
             from its header)
  check      heap consistency: every problem with its address
  frag       free memory and fragmentation per arena
  leaks      [--reachable] [--kind K,...] [--min-size SIZE] [--min-bytes SIZE]
             [--top N]: blocks in use that nothing reachable points to
  refs       ADDR: every root and block that points into the block holding ADDR
  why        ADDR: the shortest chain of pointers from a root to the block
             holding ADDR
  diff       BASE [--leaks]: what grew since BASE (a core of the same program,
             or its saved sizes, sizes --by=type, leaks --json), per size
             class, arena, C++ class; new leaks
  maps       [--mappings]: the writable memory by what holds it: heap, stacks,
             module data, other mappings
  map        [-o FILE]: a picture of the heap (SVG): each arena'\''s heaps or
             extents in address order, coloured by state
  prof       [--format=FORMAT] [-o FILE] [--top=N] [--objects] [--lines]
             [--base OLD] [--recent]: the allocator'\''s heap profile (jemalloc'\''s
             prof:true, tcmalloc'\''s TCMALLOC_SAMPLE_PARAMETER) from the target:
             allocation sites ranked, the file the allocator writes (heap_v2,
             gperftools), or pprof'\''s; --base: what grew; --recent: the last
             sampled allocations and their frees
  triage     [-j N] [--timeout SECS] [--no-leaks] [--top N] CORE... | -: one
             record per core, in parallel: identity, allocator, totals, leaks,
             damage, death, a signature to group by'

# Options the commands' parsers take that their one-line help leaves out
# (libheapwalk/commands/prof/prof.c and map/map.c, parse()), and the
# argument of `summary --leaks`, which its help line does not show either.
_heapwalk_extra_opts='prof --top=N --collapsed --output=FILE
map --output=FILE
summary --leaks'

# _heapwalk_help BIN: the --help text of BIN into hw_help, run once per
# binary and shell (not in a subshell, so that the copy is kept).
_heapwalk_help() {
	local bin=$1 path
	if [[ $bin == */* ]]; then
		path=$bin
		# The word as typed: a leading ~/ is not expanded yet.
		# shellcheck disable=SC2088
		[[ $path == "~/"* ]] && path=$HOME/${path#"~/"}
	else
		path=$(type -P -- "$bin" 2>/dev/null) || path=
	fi
	if [[ -n $path && -x $path && ! -d $path ]]; then
		if [[ $path != "${_heapwalk_help_for-}" ]]; then
			_heapwalk_help_text=$(LC_ALL=C "$path" --help 2>/dev/null </dev/null) ||
				_heapwalk_help_text=
			_heapwalk_help_for=$path
		fi
		if [[ $_heapwalk_help_text == *commands* ]]; then
			hw_help=$_heapwalk_help_text
			return
		fi
	fi
	hw_help=$_heapwalk_fallback_help
}

# _heapwalk_match CUR WORD...: COMPREPLY, the WORDs that start with CUR
# (compgen -W without a subshell).
_heapwalk_match() {
	local cur=$1 w
	shift
	COMPREPLY=()
	for w; do
		[[ $w == "$cur"* ]] && COMPREPLY+=("$w")
	done
}

# _heapwalk_parse TEXT: from a --help text, sets
#   hw_cmds          the command names
#   hw_gopts         the global options ("--color=" for one whose value is
#                    attached)
#   hw_gmeta[OPT]    the value OPT takes: "--pid" PID as the next word,
#                    "--color=" WHEN attached
#   hw_chelp[CMD]    each command's help line
_heapwalk_parse() {
	local line section='' re_cmd='^  ([a-z][a-z0-9_-]*)  +(.*)$' rest m o
	local re_opt='(^|[ ,;|[])(--?[a-zA-Z][a-z0-9-]*)(=[A-Za-z_|]+| [A-Z][A-Z_]*)?'
	hw_cmds=() hw_gopts=()
	hw_gmeta=() hw_chelp=()
	while IFS= read -r line; do
		case $line in
		options:*) section=opts; continue ;;
		commands*) section=cmds; continue ;;
		'') [[ $section == opts ]] && section=; continue ;;
		esac
		if [[ $section == cmds && $line =~ $re_cmd ]]; then
			hw_cmds+=("${BASH_REMATCH[1]}")
			hw_chelp[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		elif [[ $section == opts ]]; then
			rest=$line
			while [[ $rest =~ $re_opt ]]; do
				o=${BASH_REMATCH[2]} m=${BASH_REMATCH[3]}
				rest=${rest#*"${BASH_REMATCH[0]}"}
				case $m in
				=*) o+='=' hw_gmeta[$o]=${m#=} ;;
				' '*) hw_gmeta[$o]=${m# } ;;
				esac
				[[ " ${hw_gopts[*]} " == *" $o "* ]] || hw_gopts+=("$o")
			done
		fi
	done <<<"$1"
}

# _heapwalk_cmd_opts CMD: the options of CMD from its help line's
# bracketed parts and the extras; sets
#   hw_copts         the options ("--format=" for a value attached)
#   hw_cmeta[OPT]    the value OPT takes: a name (FILE, N) or choices a|b
#   hw_carg          the argument CMD takes (ADDR, KIND, BASE), or empty
_heapwalk_cmd_opts() {
	local help=${hw_chelp[$1]-} rest group m o line
	local re_group='\[([^]]*)\]'
	local re_opt='(^|[ |])(--?[a-z][a-z0-9-]*)(=[A-Za-z0-9_|]+| [A-Z][A-Z_]*)?'
	hw_copts=() hw_cmeta=() hw_carg=
	[[ $help =~ ^\[?([A-Z][A-Z_]*)[]:\ ] ]] && hw_carg=${BASH_REMATCH[1]}
	rest=$help
	while [[ $rest =~ $re_group ]]; do
		group=${BASH_REMATCH[1]}
		rest=${rest#*"${BASH_REMATCH[0]}"}
		while [[ $group =~ $re_opt ]]; do
			o=${BASH_REMATCH[2]} m=${BASH_REMATCH[3]}
			group=${group#*"${BASH_REMATCH[0]}"}
			_heapwalk_add_copt "$o" "$m"
		done
	done
	while read -r line; do
		[[ ${line%% *} == "$1" ]] || continue
		for o in ${line#* }; do
			case $o in
			*=*) _heapwalk_add_copt "${o%%=*}" "=${o#*=}" ;;
			*) _heapwalk_add_copt "$o" "" ;;
			esac
		done
	done <<<"$_heapwalk_extra_opts"
}

# _heapwalk_add_copt OPT VALUE: one option of a command, VALUE as its
# help writes it ("=text|pprof", "=N", " FILE", "=type" or nothing).
_heapwalk_add_copt() {
	local o=$1 m=$2
	case $m in
	=*[A-Z]* | =*'|'*) o+='=' hw_cmeta[$o]=${m#=} ;;
	=*) o+=$m ;;                              # --by=type: one word
	' '*) hw_cmeta[$o]=${m# } ;;
	esac
	[[ " ${hw_copts[*]} " == *" $o "* ]] || hw_copts+=("$o")
}

# _heapwalk_values META CUR: COMPREPLY for a value named META (or the
# choices a|b|c), completing CUR.
_heapwalk_values() {
	local meta=$1 cur=$2 p pids=() choices=()
	case $meta in
	PID)
		for p in /proc/[0-9]*; do pids+=("${p#/proc/}"); done
		_heapwalk_match "$cur" "${pids[@]}"
		;;
	FILE | OLD | BASE | CORE)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		;;
	DIR)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		;;
	A) _heapwalk_match "$cur" auto ptmalloc jemalloc tcmalloc mallocng mimalloc ;;
	K) _heapwalk_match "$cur" definite indirect possible reachable ;;
	W)                                        # chunks --where: the places
		_heapwalk_match "$cur" heap mmapped tcache fastbin unsorted \
			smallbin largebin top unbinned slab large slab-free dirty \
			muzzy retained span central transfer pageheap returned \
			tcache-struct group avail freed
		;;
	WHEN) _heapwalk_match "$cur" auto always never ;;
	KIND) _heapwalk_match "$cur" tcache fast unsorted small large ;;
	*'|'*)                                    # the choices a|b|c
		IFS='|' read -ra choices <<<"$meta"
		_heapwalk_match "$cur" "${choices[@]}"
		;;
	*) COMPREPLY=() ;;                        # N, SIZE, ADDR: nothing to offer
	esac
}

# _heapwalk_words: COMP_WORDS up to the cursor, with "--opt" "=" "val"
# (bash splits at '=') joined again, into hw_words.
_heapwalk_words() {
	local i w
	hw_words=()
	for ((i = 0; i <= COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((${#hw_words[@]} > 1)) && [[ $w == = && ${hw_words[-1]} == -* ]]; then
			hw_words[-1]+='='
		elif ((${#hw_words[@]} > 1)) && [[ ${hw_words[-1]} == -*= && $i -gt 1 && ${COMP_WORDS[i - 1]} == = ]]; then
			hw_words[-1]+=$w
		else
			hw_words+=("$w")
		fi
	done
}

_heapwalk() {
	local cur i w target='' cmd='' helpmode=0 pid=0 dashdash=0 nargs=0 meta
	local -a hw_cmds hw_gopts hw_copts hw_words
	local -A hw_gmeta hw_chelp hw_cmeta
	local hw_carg hw_help
	COMPREPLY=()
	_heapwalk_help "${COMP_WORDS[0]}"
	_heapwalk_parse "$hw_help"
	_heapwalk_words
	cur=${hw_words[-1]}

	# Where the cursor is: after the target, the command, its arguments.
	for ((i = 1; i < ${#hw_words[@]} - 1; i++)); do
		w=${hw_words[i]}
		if ((!dashdash)) && [[ $w == -- ]]; then
			dashdash=1
		elif ((!dashdash)) && [[ $w == -?* ]]; then
			[[ $w == --pid || $w == --pid=* ]] && pid=1
			if [[ $w != *=* && -n ${hw_gmeta[$w]-} ]]; then
				((i++))
			elif [[ -n $cmd ]]; then
				_heapwalk_cmd_opts "$cmd"
				[[ $w != *=* && -n ${hw_cmeta[$w]-} ]] && ((i++))
			fi
		elif [[ -z $target && $pid == 0 && $helpmode == 0 ]]; then
			if [[ $w == help ]]; then helpmode=1; else target=$w; fi
		elif [[ -z $cmd ]]; then
			cmd=$w
		else
			((nargs++))
		fi
	done
	[[ -n $cmd ]] && _heapwalk_cmd_opts "$cmd"

	# The value of the option before the cursor, or after its '='.
	if ((!dashdash && ${#hw_words[@]} > 2)); then
		w=${hw_words[-2]}
		if [[ $w == -?* && $w != *=* ]]; then
			meta=${hw_gmeta[$w]-}
			[[ -z $meta ]] && meta=${hw_cmeta[$w]-}
			if [[ -n $meta ]]; then
				_heapwalk_values "$meta" "$cur"
				return
			fi
		fi
	fi
	if ((!dashdash)) && [[ $cur == -*=* ]]; then
		w=${cur%%=*}
		meta=${hw_gmeta[$w=]-${hw_gmeta[$w]-${hw_cmeta[$w=]-${hw_cmeta[$w]-}}}}
		# bash replaces only what follows the '=' (COMP_WORDBREAKS);
		# without '=' there, the option goes back in front.
		_heapwalk_values "$meta" "${cur#*=}"
		if [[ $COMP_WORDBREAKS != *=* ]]; then
			for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${cur%%=*}=${COMPREPLY[i]}; done
		fi
		return
	fi

	if ((!dashdash)) && [[ $cur == -* ]]; then
		_heapwalk_match "$cur" "${hw_gopts[@]}" "${hw_copts[@]}"
		[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi
	if [[ -z $target && $pid == 0 && $helpmode == 0 ]]; then
		_heapwalk_values CORE "$cur"
		[[ help == "$cur"* ]] && COMPREPLY+=(help)
	elif [[ -z $cmd ]]; then
		_heapwalk_match "$cur" "${hw_cmds[@]}"
	elif ((helpmode == 0)) && [[ -n $hw_carg ]] && { ((nargs == 0)) || [[ $hw_carg == BASE ]]; }; then
		_heapwalk_values "$hw_carg" "$cur"
	fi
}

complete -F _heapwalk heapwalk
