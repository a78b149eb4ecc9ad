#!/usr/bin/env bash
# Snapshot store benchmark (issue 6): a synthetic agent home of 20,000 files /
# 1 GiB, timed against `cp -a` of the same tree in the same run.
#
#   bench/snapshot/run.sh [--small] [--bin PATH/TO/parallex] [--dir WORKDIR] [--keep]
#
# --small: 2,000 files / 100 MiB for a quick run. Page cache is warm for both
# sides (the tree was just written); every parallex figure includes its fsyncs,
# so `cp -a` is shown both alone and followed by `sync`.
set -euo pipefail

FILES=20000
BYTES=$((1024 * 1024 * 1024))
BIN=""
WORK=""
KEEP=0
while [ $# -gt 0 ]; do
  case "$1" in
    --small) FILES=2000; BYTES=$((100 * 1024 * 1024)) ;;
    --bin) BIN="$2"; shift ;;
    --dir) WORK="$2"; shift ;;
    --keep) KEEP=1 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ -z "$BIN" ]; then
  for c in "$HERE/../../build/parallex" /work/build-snap/parallex "$(command -v parallex || true)"; do
    if [ -n "$c" ] && [ -x "$c" ]; then BIN="$c"; break; fi
  done
fi
[ -x "$BIN" ] || { echo "parallex binary not found; pass --bin" >&2; exit 2; }
[ -n "$WORK" ] || WORK="$(mktemp -d /var/tmp/px-snapbench.XXXXXX)"
mkdir -p "$WORK"
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$WORK"; }
trap cleanup EXIT

SRC="$WORK/home"; STORE="$WORK/store"; COPY="$WORK/copy"
now() { date +%s%N; }
ms() { echo $(( ($2 - $1) / 1000000 )); }

echo "Generating $FILES files, $((BYTES / 1024 / 1024)) MiB in $SRC ..." >&2
python3 - "$SRC" "$FILES" "$BYTES" <<'PY'
import os, random, sys
root, files, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
random.seed(6)
# Agent homes: many small config/history files, a few large caches/blobs.
large = max(1, files // 100)
small = files - large
small_sizes = [random.randint(200, 24 * 1024) for _ in range(small)]
rest = max(total - sum(small_sizes), large)
large_sizes = [rest // large] * large
tops = [".config", ".claude/projects", ".codex/sessions", ".cache/node", ".local/share", ".npm/_cacache"]
blob = os.urandom(64 * 1024 * 1024)
off = 0
def data(n):
    global off
    if off + n > len(blob): off = 0
    out = blob[off:off + n] if n <= len(blob) else os.urandom(n)
    off += n
    # Make every file unique so deduplication does not flatter the figures.
    return os.urandom(16) + out[16:]
for i, n in enumerate(small_sizes + large_sizes):
    d = os.path.join(root, tops[i % len(tops)], "d%03d" % (i % 97), "s%02d" % (i % 7))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d" % i), "wb") as f:
        f.write(data(n))
PY
sync
sleep 1  # past the stat cache's racy-timestamp margin

t0=$(now); cp -a "$SRC" "$COPY"; t1=$(now); sync; t2=$(now)
CP=$(ms $t0 $t1); CPSYNC=$(ms $t0 $t2)
rm -rf "$COPY"; sync

t0=$(now); "$BIN" snapshot take --source "$SRC" --store "$STORE" --label first >/dev/null; t1=$(now)
FIRST=$(ms $t0 $t1)

best=999999
for _ in 1 2 3; do
  t0=$(now); "$BIN" snapshot take --source "$SRC" --store "$STORE" --label nochange >/dev/null; t1=$(now)
  v=$(ms $t0 $t1); [ "$v" -lt "$best" ] && best=$v
done
NOCHANGE=$best

one=$(find "$SRC" -type f -print -quit)
head -c 4096 /dev/urandom >> "$one"
t0=$(now); "$BIN" snapshot take --source "$SRC" --store "$STORE" --label onefile >/dev/null; t1=$(now)
ONE=$(ms $t0 $t1)

rm -rf "$SRC"; mkdir "$SRC"; sync
t0=$(now); "$BIN" snapshot rewind --source "$SRC" --store "$STORE" >/dev/null; t1=$(now)
REWIND=$(ms $t0 $t1)

# Store growth: start over with a fresh store, then 10 snapshots with 1% of the files rewritten before each.
rm -rf "$STORE"
"$BIN" snapshot take --source "$SRC" --store "$STORE" >/dev/null
mapfile -t ALL < <(find "$SRC" -type f | sort || true)
CHURN=$(( ${#ALL[@]} / 100 ))
for round in $(seq 1 10); do
  for k in $(seq 0 $((CHURN - 1))); do
    f="${ALL[$(( (round * 7919 + k * 104729) % ${#ALL[@]} ))]}"
    sz=$(stat -c %s "$f")
    head -c "$sz" /dev/urandom > "$f"
  done
  "$BIN" snapshot take --source "$SRC" --store "$STORE" >/dev/null
done
TREE=$(du -s --block-size=1 "$SRC" | cut -f1)
STOREB=$(du -s --block-size=1 "$STORE" | cut -f1)

ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
mib() { python3 -c "print(f'{$1/1048576:.0f} MiB')"; }
NFILES=$(find "$SRC" -type f | wc -l)
echo
echo "Synthetic home: $NFILES files, $(mib "$TREE") on disk ($(uname -r), $(nproc) cores, $(df -T "$WORK" | awk 'NR==2{print $2}'))"
echo
printf '| %-42s | %12s | %-28s |\n' "Measure" "Time / size" "Against baseline"
printf '|%s|%s|%s|\n' "--------------------------------------------" "--------------" "------------------------------"
printf '| %-42s | %9s ms | %-28s |\n' "cp -a (baseline)" "$CP" "cp -a + sync: $CPSYNC ms"
printf '| %-42s | %9s ms | %-28s |\n' "First snapshot" "$FIRST" "$(ratio $FIRST $CP) cp -a, $(ratio $FIRST $CPSYNC) cp -a+sync"
printf '| %-42s | %9s ms | %-28s |\n' "No-change snapshot (best of 3)" "$NOCHANGE" "target <= 100 ms"
printf '| %-42s | %9s ms | %-28s |\n' "One-file-changed snapshot" "$ONE" ""
printf '| %-42s | %9s ms | %-28s |\n' "Full rewind (into an empty folder)" "$REWIND" "$(ratio $REWIND $CP) cp -a, $(ratio $REWIND $CPSYNC) cp -a+sync"
printf '| %-42s | %12s | %-28s |\n' "Store after 10 snapshots, 1% churn each" "$(mib "$STOREB")" "$(ratio $STOREB $TREE) tree size ($(mib "$TREE"))"
