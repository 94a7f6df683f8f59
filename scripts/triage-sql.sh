#!/usr/bin/env bash
# triage-sql.sh - query a fleet's triage records (heapwalk --json triage:
# JSON Lines, doc/triage.schema.json) where people already query: SQLite
# by default, DuckDB where it is installed.
#
# usage: scripts/triage-sql.sh [--duckdb] [--db FILE] [--csv] QUERY [ARG...] -- RECORDS.jsonl...
#        scripts/triage-sql.sh [--duckdb] --db FILE [--csv] QUERY [ARG...]
#        scripts/triage-sql.sh [--duckdb] --sql
#
# The records are loaded into FILE (SQLite; default: a temporary
# database), replacing what it held, when files are given after --; with
# --db alone, FILE is queried as it was loaded.  Then QUERY runs:
#
#   signatures [N]        the biggest signatures: cores, programs and builds
#                         per signature, first and last seen (N rows, 20)
#   leakers [N]           the programs leaking most: lost bytes and blocks
#                         (definite + indirect) over their cores (a core
#                         cut short or walked in part is left out: its
#                         leaks may be false; incomplete_cores counts them)
#   growth BEFORE AFTER   the size classes that grew between two dates
#                         (YYYY-MM-DD, or a full ISO time): per program and
#                         class, bytes in use per core in the cores that
#                         died before BEFORE and in those from AFTER on
#                         (whole cores only)
#   damage                heap damage by kind: cores and findings
#   programs              per program and build: cores, crashes, leaks,
#                         damaged heaps
#   errors                the inputs that have no record, and why
#   cores                 one row per core: its main columns
#
# --sql prints the views and queries (every query is a plain SELECT over
# the views `cores`, `classes` and `kinds`: copy them into your own).
# --csv prints CSV with a header; the default is columns with a header.
# Nothing but sqlite3 (or duckdb) is needed: no Python.
set -euo pipefail

die() { printf 'triage-sql: %s\n' "$*" >&2; exit 2; }

engine=sqlite
db=
csv=0
show_sql=0
while [ $# -gt 0 ]; do
	case $1 in
	--duckdb) engine=duckdb; shift ;;
	--db) [ $# -ge 2 ] || die "--db needs a file"; db=$2; shift 2 ;;
	--db=*) db=${1#--db=}; shift ;;
	--csv) csv=1; shift ;;
	--sql) show_sql=1; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option '$1' (try --help)" ;;
	*) break ;;
	esac
done

query=
args=()
files=()
if [ $show_sql = 0 ]; then
	[ $# -gt 0 ] || die "no query given (try --help)"
	query=$1
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		args+=("$1")
		shift
	done
	if [ $# -gt 0 ]; then
		shift
		files=("$@")
		[ ${#files[@]} -gt 0 ] || die "no records after --"
	fi
	[ ${#files[@]} -gt 0 ] || [ -n "$db" ] ||
		die "give the records after -- (or --db FILE loaded before)"
fi

# SQL text: quote a value.
q() { printf "'%s'" "${1//\'/\'\'}"; }

# A count argument.
num() {
	case ${1:-} in
	'' ) echo "$2" ;;
	*[!0-9]*) die "'$1' is not a count" ;;
	*) echo "$1" ;;
	esac
}

# The views, over a table `records` of one JSON document per row (doc):
# SQLite's json_extract and json_each, or DuckDB's json functions.  The
# queries below use the views alone.
views_sqlite() {
	cat <<'EOF'
DROP VIEW IF EXISTS cores;
DROP VIEW IF EXISTS classes;
DROP VIEW IF EXISTS kinds;
CREATE VIEW cores AS SELECT
  rowid AS id,
  json_extract(doc, '$.core') AS core,
  json_extract(doc, '$.schema') AS schema,
  json_extract(doc, '$.error') AS error,
  json_extract(doc, '$.signature') AS signature,
  json_extract(doc, '$.signature_text') AS signature_text,
  json_extract(doc, '$.time') AS time,
  coalesce(json_extract(doc, '$.process.exe'),
           json_extract(doc, '$.coredump.exe'),
           json_extract(doc, '$.process.comm'),
           json_extract(doc, '$.coredump.comm')) AS program,
  json_extract(doc, '$.process.build_id') AS build_id,
  json_extract(doc, '$.coredump.hostname') AS host,
  json_extract(doc, '$.arch') AS arch,
  json_extract(doc, '$.allocator.name') AS allocator,
  json_extract(doc, '$.allocator.version') AS allocator_version,
  json_extract(doc, '$.used.count') AS used_blocks,
  json_extract(doc, '$.used.bytes') AS used_bytes,
  json_extract(doc, '$.free.bytes') AS free_bytes,
  json_extract(doc, '$.leaks.definite.count') +
    json_extract(doc, '$.leaks.indirect.count') AS leaked_blocks,
  json_extract(doc, '$.leaks.definite.bytes') +
    json_extract(doc, '$.leaks.indirect.bytes') AS leaked_bytes,
  json_extract(doc, '$.findings.total') AS findings,
  json_extract(doc, '$.death.signal_name') AS signal,
  json_extract(doc, '$.partial') AS partial,
  json_extract(doc, '$.truncated') AS truncated,
  coalesce(json_extract(doc, '$.partial'), 0) OR
    coalesce(json_extract(doc, '$.truncated'), 0) AS incomplete
FROM records;
-- (A core's own columns come from cores: one definition of each.)
CREATE VIEW classes AS SELECT
  c.id, c.core, c.time, c.program, c.incomplete,
  json_extract(j.value, '$.min') AS min,
  json_extract(j.value, '$.max') AS max,
  json_extract(j.value, '$.used_count') AS used_count,
  json_extract(j.value, '$.used_bytes') AS used_bytes
FROM cores c JOIN records r ON r.rowid = c.id,
  json_each(r.doc, '$.top_classes') j;
CREATE VIEW kinds AS SELECT
  c.id, c.core,
  json_extract(k.value, '$.kind') AS kind,
  json_extract(k.value, '$.count') AS count,
  json_extract(k.value, '$.note') AS note
FROM cores c JOIN records r ON r.rowid = c.id,
  json_each(r.doc, '$.findings.kinds') k;
EOF
}

views_duckdb() {
	cat <<'EOF'
CREATE OR REPLACE VIEW cores AS SELECT
  id,
  doc->>'$.core' AS core,
  CAST(doc->>'$.schema' AS INTEGER) AS schema,
  doc->>'$.error' AS error,
  doc->>'$.signature' AS signature,
  doc->>'$.signature_text' AS signature_text,
  doc->>'$.time' AS time,
  coalesce(doc->>'$.process.exe', doc->>'$.coredump.exe',
           doc->>'$.process.comm', doc->>'$.coredump.comm') AS program,
  doc->>'$.process.build_id' AS build_id,
  doc->>'$.coredump.hostname' AS host,
  doc->>'$.arch' AS arch,
  doc->>'$.allocator.name' AS allocator,
  doc->>'$.allocator.version' AS allocator_version,
  CAST(doc->>'$.used.count' AS BIGINT) AS used_blocks,
  CAST(doc->>'$.used.bytes' AS BIGINT) AS used_bytes,
  CAST(doc->>'$.free.bytes' AS BIGINT) AS free_bytes,
  CAST(doc->>'$.leaks.definite.count' AS BIGINT) +
    CAST(doc->>'$.leaks.indirect.count' AS BIGINT) AS leaked_blocks,
  CAST(doc->>'$.leaks.definite.bytes' AS BIGINT) +
    CAST(doc->>'$.leaks.indirect.bytes' AS BIGINT) AS leaked_bytes,
  CAST(doc->>'$.findings.total' AS BIGINT) AS findings,
  doc->>'$.death.signal_name' AS signal,
  CAST(doc->>'$.partial' AS BOOLEAN) AS partial,
  CAST(doc->>'$.truncated' AS BOOLEAN) AS truncated,
  coalesce(CAST(doc->>'$.partial' AS BOOLEAN), false) OR
    coalesce(CAST(doc->>'$.truncated' AS BOOLEAN), false) AS incomplete
FROM records;
CREATE OR REPLACE VIEW classes AS SELECT
  c.id, c.core, c.time, c.program, c.incomplete,
  CAST(cl->>'$.min' AS BIGINT) AS min, CAST(cl->>'$.max' AS BIGINT) AS max,
  CAST(cl->>'$.used_count' AS BIGINT) AS used_count,
  CAST(cl->>'$.used_bytes' AS BIGINT) AS used_bytes
FROM cores c JOIN records r ON r.id = c.id,
  unnest(CAST(coalesce(r.doc->'$.top_classes', '[]') AS JSON[])) AS u(cl);
CREATE OR REPLACE VIEW kinds AS SELECT
  c.id, c.core, k->>'$.kind' AS kind,
  CAST(k->>'$.count' AS BIGINT) AS count, CAST(k->>'$.note' AS BOOLEAN) AS note
FROM cores c JOIN records r ON r.id = c.id,
  unnest(CAST(coalesce(r.doc->'$.findings.kinds', '[]') AS JSON[])) AS u(k);
EOF
}

# The queries, plain SELECTs over the views, the same for both engines.
query_sql() {
	case $1 in
	signatures)
		cat <<EOF
SELECT signature, count(*) AS cores, count(DISTINCT program) AS programs,
  count(DISTINCT build_id) AS builds, min(time) AS first, max(time) AS last,
  min(signature_text) AS what
FROM cores WHERE error IS NULL
GROUP BY signature ORDER BY cores DESC, signature LIMIT $(num "${2:-}" 20);
EOF
		;;
	leakers)
		# (A core cut short or walked in part has lost roots: its
		# leaks are not counted, only the cores it left out.)
		cat <<EOF
SELECT program, count(*) AS cores, sum(leaked_bytes) AS leaked_bytes,
  sum(leaked_blocks) AS leaked_blocks, max(leaked_bytes) AS worst_core_bytes,
  (SELECT count(*) FROM cores i WHERE i.error IS NULL AND i.incomplete
     AND i.program = c.program) AS incomplete_cores
FROM cores c WHERE error IS NULL AND NOT incomplete AND leaked_bytes > 0
GROUP BY program ORDER BY leaked_bytes DESC, program LIMIT $(num "${2:-}" 20);
EOF
		;;
	growth)
		[ -n "${2:-}" ] && [ -n "${3:-}" ] || die "growth needs two dates: BEFORE AFTER"
		local before after
		before=$(q "$2")
		after=$(q "$3")
		cat <<EOF
WITH early AS (SELECT program, count(*) AS n FROM cores
               WHERE error IS NULL AND NOT incomplete AND time < $before
               GROUP BY program),
     late AS (SELECT program, count(*) AS n FROM cores
              WHERE error IS NULL AND NOT incomplete AND time >= $after
              GROUP BY program),
     e AS (SELECT c.program, c.min, c.max, sum(c.used_bytes) AS bytes,
                  sum(c.used_count) AS blocks
           FROM classes c WHERE NOT c.incomplete AND c.time < $before
           GROUP BY c.program, c.min, c.max),
     l AS (SELECT c.program, c.min, c.max, sum(c.used_bytes) AS bytes,
                  sum(c.used_count) AS blocks
           FROM classes c WHERE NOT c.incomplete AND c.time >= $after
           GROUP BY c.program, c.min, c.max)
SELECT l.program, l.min, l.max,
  coalesce(e.bytes, 0) / early.n AS bytes_before,
  l.bytes / late.n AS bytes_after,
  l.bytes / late.n - coalesce(e.bytes, 0) / early.n AS growth,
  l.blocks / late.n - coalesce(e.blocks, 0) / early.n AS blocks_growth
FROM l JOIN late ON late.program = l.program
  JOIN early ON early.program = l.program
  LEFT JOIN e ON e.program = l.program AND e.min = l.min AND e.max = l.max
WHERE l.bytes / late.n > coalesce(e.bytes, 0) / early.n
ORDER BY growth DESC, l.program, l.max;
EOF
		;;
	damage)
		cat <<'EOF'
SELECT kind, count(DISTINCT id) AS cores, sum(count) AS findings
FROM kinds WHERE NOT note
GROUP BY kind ORDER BY cores DESC, findings DESC, kind;
EOF
		;;
	programs)
		cat <<'EOF'
SELECT program, build_id, count(*) AS cores,
  sum(CASE WHEN signal IS NOT NULL THEN 1 ELSE 0 END) AS crashed,
  sum(CASE WHEN findings > 0 THEN 1 ELSE 0 END) AS damaged,
  sum(leaked_bytes) AS leaked_bytes, max(used_bytes) AS max_used_bytes
FROM cores WHERE error IS NULL
GROUP BY program, build_id ORDER BY cores DESC, program, build_id;
EOF
		;;
	errors)
		cat <<'EOF'
SELECT core, error FROM cores WHERE error IS NOT NULL ORDER BY id;
EOF
		;;
	cores)
		cat <<'EOF'
SELECT core, time, program, allocator, allocator_version, used_bytes,
  leaked_bytes, findings, signal, signature FROM cores WHERE error IS NULL
ORDER BY id;
EOF
		;;
	*) die "unknown query '$1' (signatures, leakers, growth, damage, programs, errors, cores)" ;;
	esac
}

if [ $show_sql = 1 ]; then
	if [ $engine = duckdb ]; then views_duckdb; else views_sqlite; fi
	for name in signatures leakers damage programs errors cores; do
		printf -- '-- %s\n' "$name"
		query_sql "$name"
	done
	printf -- '-- growth BEFORE AFTER\n'
	query_sql growth 2026-01-01 2026-02-01
	exit 0
fi

for f in "${files[@]}"; do
	[ -r "$f" ] || die "cannot read '$f'"
done
sql=$(query_sql "$query" "${args[@]}")

tmpdb=
cleanup() { [ -z "$tmpdb" ] || rm -f "$tmpdb" "$tmpdb.wal" "$tmpdb.tmp"; }
trap cleanup EXIT
if [ -z "$db" ]; then
	tmpdb=$(mktemp "${TMPDIR:-/tmp}/triage-sql.XXXXXX")
	rm -f "$tmpdb"
	db=$tmpdb
fi

case $engine in
sqlite)
	command -v sqlite3 >/dev/null 2>&1 ||
		die "sqlite3 is not installed (Debian: apt-get install sqlite3)"
	if [ ${#files[@]} -gt 0 ]; then
		# One document per line, loaded as it is: a line that is not
		# JSON is refused by json_valid, never half-read.
		{
			echo "DROP TABLE IF EXISTS records;"
			echo "CREATE TABLE records (doc TEXT NOT NULL CHECK (json_valid(doc)));"
			echo "BEGIN;"
			for f in "${files[@]}"; do
				# Every line a quoted SQL string.
				sed -e '/^[[:space:]]*$/d' -e "s/'/''/g" \
					-e "s/^/INSERT INTO records VALUES ('/" \
					-e "s/\$/');/" "$f"
			done
			echo "COMMIT;"
			views_sqlite
		} | sqlite3 -bail "$db"
	fi
	mode=(-header -column)
	[ $csv = 0 ] || mode=(-header -csv)
	sqlite3 -bail "${mode[@]}" "$db" "$sql"
	;;
duckdb)
	command -v duckdb >/dev/null 2>&1 ||
		die "duckdb is not installed (it is not packaged in Debian 12: see duckdb.org)"
	if [ ${#files[@]} -gt 0 ]; then
		list=
		for f in "${files[@]}"; do
			list+="${list:+, }$(q "$f")"
		done
		{
			# Each line as one JSON value, whatever its members.
			echo "CREATE OR REPLACE TABLE records AS SELECT row_number() OVER () AS id, json AS doc FROM read_json_objects([$list], format = 'newline_delimited');"
			views_duckdb
		} | duckdb "$db"
	fi
	mode=(-box)
	[ $csv = 0 ] || mode=(-csv)
	duckdb "${mode[@]}" "$db" -c "$sql"
	;;
esac
