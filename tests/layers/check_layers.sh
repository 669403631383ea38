#!/usr/bin/env bash
# check_layers.sh: the include rules of docs/design.md ("Layers"), checked
# on every #include "..." under src/. Three floors: programs (src/*.c),
# then src/fs/ and src/source/ side by side, then src/engine/.
#   - the engine includes only itself, and no system header of FUSE;
#   - src/source/ includes the engine's public headers and its own, never
#     src/fs/;
#   - src/fs/ includes the engine's public headers and, of the sources,
#     only source/source.h, source/proc.h and source/pidwatch.h;
#   - nothing outside src/engine/ includes engine/internal.h (a group's
#     fields, slot tags), programs and benchmarks included; only the
#     engine's white-box tests (tests/unit, tests/fuzz) see it;
#   - only src/memcgfs.c, src/supervisor.c and src/fs/ops.[ch] include a
#     FUSE header (and
#     bench/fuse_floor.c, the bare server the benchmark reads beside us), and
#     only they include fs/ops.h;
#   - src/run/ (memcgfs-run's modules, a program of the top floor) includes
#     only itself: it knows memcgfs only through the mount's files, never
#     through the engine, the file surface or the sources; and only
#     src/memcgfs-run.c and the unit tests include src/run/.
# Prints each violation and the count; exit 1 if any.
set -u
cd "$(dirname "$0")/../.."
bad=0
violation() { echo "layers: $1: $2"; bad=$((bad + 1)); }
while IFS= read -r line; do
	file=${line%%:*}
	rest=${line#*:}
	inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<< "$rest")
	sys=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' <<< "$rest")
	if [ -n "$sys" ]; then
		case $sys in
		fuse*|fuse3/*)
			case $file in src/memcgfs.c|src/supervisor.c|src/fs/ops.c|src/fs/ops.h|bench/fuse_floor.c) ;; *) violation "$file" "includes <$sys>" ;; esac ;;
		esac
		continue
	fi
	[ -n "$inc" ] || continue
	if [ "$inc" = fs/ops.h ]; then
		case $file in src/memcgfs.c|src/fs/ops.c) ;; *) violation "$file" "includes fs/ops.h (FUSE)" ;; esac
	fi
	case $inc in
	run/*)
		case $file in src/run/*|src/memcgfs-run.c|tests/unit/*) ;; *) violation "$file" "includes $inc (memcgfs-run's)" ;; esac ;;
	esac
	case $file in
	src/run/*)
		case $inc in run/*) ;; *) violation "$file" "memcgfs-run's module includes $inc" ;; esac ;;
	src/engine/*)
		case $inc in engine/*) ;; *) violation "$file" "the engine includes $inc" ;; esac ;;
	src/source/*)
		case $inc in
		engine/internal.h) violation "$file" "includes the engine's internals" ;;
		engine/*|source/*) ;;
		*) violation "$file" "a source includes $inc" ;;
		esac ;;
	src/fs/*)
		case $inc in
		engine/internal.h) violation "$file" "includes the engine's internals" ;;
		engine/*|fs/*|source/source.h|source/proc.h|source/pidwatch.h) ;;
		*) violation "$file" "the file layer includes $inc" ;;
		esac ;;
	tests/unit/*|tests/fuzz/*) ;;
	*)
		[ "$inc" != engine/internal.h ] || violation "$file" "includes the engine's internals" ;;
	esac
done < <(grep -rHn -E '^[[:space:]]*#[[:space:]]*include' src tests bench | sed -E 's/^([^:]*):[0-9]+:/\1:/')
echo "layers: $bad violations"
[ "$bad" -eq 0 ]
