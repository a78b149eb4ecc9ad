#!/usr/bin/env bash
# Parallex in a real container runtime's default container (crun), as a team
# would run it, instead of the bwrap stand-in of test_cli's ContainerStandIn.
#
#   tests/containers/real_runtime.sh /path/to/parallex
#
# The bundle is `crun spec`'s defaults (capabilities, maskedPaths and
# readonlyPaths, noNewPrivileges, pid/net/ipc/uts/mount namespaces, no user
# namespace) with:
#   - root.path: a read-only (non-recursive) bind of the host's / made in a
#     private mount namespace (pivot_root refuses "/" itself: EBUSY);
#   - /tmp and /home: writable binds of folders under $PX_RR_DIR (each identity
#     works in /home/NAME/work; /srv, /opt and the like are system folders a run
#     refuses to work in);
#   - linux.seccomp: containers-common's /usr/share/containers/seccomp.json (the
#     default profile of Podman and CRI-O), converted by oci_seccomp.py for the
#     container's capabilities and this arch;
#   - process.terminal false, process.env with PARALLEX_HOME, XDG_RUNTIME_DIR,
#     HOME and PARALLEX_ALLOW_WEAKER_SEAL=1 (an image's ENV, as docs/containers.md says).
# On a hybrid cgroup host whose cgroup2 hierarchy holds a controller, crun
# refuses ("cgroups in hybrid mode not supported, drop all controllers from
# cgroupv2"), --cgroup-manager=disabled included: the cgroup2 mount is
# unmounted in crun's private mount namespace only (the host keeps it), so
# crun sees a cgroup v1 host and uses its cgroupfs manager.
#
# Each identity (root: uid 0 with the default capabilities only; pxtest) runs
# `parallex check`, then probes in a run:
#   echo made > made.txt; cat /etc/shadow; UDP to 127.0.0.1:53 (bash's /dev/udp:
#   dash, Debian's sh, has no /dev/udp and would "refuse" without a socket)
# and git init + an empty commit in a run; then seal_probe.sh: `parallex
# check --sealed` (the seal's probe catalog tried from inside a real run) and
# the start-up of a sealed /bin/true, into $PX_RR_DIR/home/NAME/work.seal.*
# (escape_matrix.sh draws its columns from them).
# Exit: 0 when every run worked and no probe escaped; 1 when a probe escaped
# (shadow read, UDP open, a way out of check --sealed ESCAPED) or a run failed; 77 with "SKIP: ..." when crun, the
# seccomp profile, python3, or root is missing (77: ctest shows it skipped).
#
# Knobs (environment):
#   PX_RR_DIR      state folder (default /tmp/parallex-real-runtime; rebuilt each time)
#   PX_RR_USERS    identities (default "root pxtest"; a missing user is skipped)
#   PX_RR_SECCOMP  containers seccomp profile (default /usr/share/containers/seccomp.json)
#   PX_RR_CAPS     default (crun spec's) | podman (containers.conf's default_capabilities) | none
#   PX_RR_PROC     masked (the runtime's default) | unmasked (no maskedPaths/readonlyPaths:
#                  Kubernetes' procMount: Unmasked)
#   PX_RR_NET      host (default: the container reaches what the host does, as
#                  a container on a default bridge reaches the registry; the
#                  npm run needs it) | own (crun spec's empty network namespace)
#   PX_RR_CGROUP_MANAGER  cgroupfs (default) | disabled
#   PX_RR_DENY     "SYSCALL:ERRNO ..." refused by the container's seccomp
#                  profile on top of the runtime's (each syscall's own rules
#                  dropped first): a container more restricted than the
#                  defaults (too_restricted.sh)
#   PX_RR_PROBE    a script run in the container instead of the probes above
#                  (same arguments: PARALLEX WORKDIR); its exit is the verdict
#   PX_RR_STARTUP_RUNS  sealed /bin/true runs timed by seal_probe.sh (default 5)
#   PX_RR_EXPECT_FULL  identities whose run must get the full seal (with
#                  PX_RR_SECCOMP=parallex, the profile `parallex check
#                  --seccomp-profile` prints, and PX_RR_PROC=unmasked: the pod
#                  settings of docs/containers.md)
set -u

exe=${1:-}
if [ -z "$exe" ]; then
  echo "usage: $0 /path/to/parallex" >&2
  exit 2
fi
if [ ! -x "$exe" ]; then
  echo "$0: $exe is not an executable" >&2
  exit 2
fi

profile=${PX_RR_SECCOMP:-/usr/share/containers/seccomp.json}
if [ "$profile" = parallex ]; then
  profile=$(mktemp /tmp/parallex-seccomp.XXXXXX.json)
  trap 'rm -f "$profile"' EXIT
  "$exe" check --seccomp-profile >"$profile" || { echo "parallex check --seccomp-profile failed" >&2; exit 1; }
fi
command -v crun >/dev/null 2>&1 || { echo "SKIP: crun is not installed (apt-get install crun)"; exit 77; }
[ -r "$profile" ] || { echo "SKIP: no $profile (apt-get install golang-github-containers-common)"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing (the seccomp converter)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (crun runs a rootful container)"; exit 77; }
command -v unshare >/dev/null 2>&1 || { echo "SKIP: unshare (util-linux) is missing"; exit 77; }

exe=$(readlink -f "$exe")
here=$(cd "$(dirname "$0")" && pwd)
converter=$here/oci_seccomp.py
state=${PX_RR_DIR:-/tmp/parallex-real-runtime}
caps_mode=${PX_RR_CAPS:-default}
proc_mode=${PX_RR_PROC:-masked}
cgroup_manager=${PX_RR_CGROUP_MANAGER:-cgroupfs}
started=$EPOCHREALTIME

case "$state" in /|/tmp|/home|"") echo "$0: PX_RR_DIR=$state is not a folder of its own" >&2; exit 2;; esac
# Idempotent: leftovers of an earlier run (a container, the rootfs bind in a
# mount namespace long gone) are removed.
# Only containers whose script is gone: another run of this script (a ctest
# beside escape_matrix.sh) keeps its own.
for c in $(crun list -q 2>/dev/null | grep '^parallex-rr-' || true); do
  owner=${c#parallex-rr-}
  kill -0 "${owner%%-*}" 2>/dev/null || crun delete -f "$c" >/dev/null 2>&1
done
rm -rf "$state"
mkdir -p "$state/rootfs" "$state/tmp" "$state/home"
chmod 1777 "$state/tmp"
chmod 755 "$state" "$state/home"

# The probes, run inside the container as each identity.
# A file outside the run's grants but readable by every identity.
mkdir -p "$state/home/outside"
echo outside-secret >"$state/home/outside/secret"
chmod 755 "$state/home/outside"
chmod 644 "$state/home/outside/secret"
cat >"$state/tmp/probe.sh" <<'PROBE'
#!/bin/bash
P=$1
W=$2
STARTUP_RUNS=$3
PORT=45353
echo "identity: $(id)"
grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status | tr '\t' ' '
echo "--- parallex check"
"$P" check 2>&1
echo "(check exit $?)"
echo "--- controls, outside any run"
head -c0 /etc/shadow 2>/dev/null && echo "  /etc/shadow: readable" || echo "  /etc/shadow: not readable"
head -c0 /home/outside/secret 2>/dev/null && echo "  /home/outside/secret: readable" || echo "  /home/outside/secret: not readable"
# A UDP listener of the container on its loopback: a datagram from the run
# that reaches it left the run's network.
got=$W.udp-received
rm -f "$got" "$got.ready"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
open(sys.argv[2] + ".ready", "w").close()
while True:
    data, _ = s.recvfrom(100)
    with open(sys.argv[2], "a") as f:
        f.write(data.decode(errors="replace"))
' "$PORT" "$got" &
listener=$!
for _ in $(seq 100); do [ -e "$got.ready" ] && break; sleep 0.1; done
echo control > /dev/udp/127.0.0.1/$PORT && sleep 0.2
grep -q control "$got" 2>/dev/null && echo "  UDP to the container's 127.0.0.1:$PORT: received" || echo "  UDP listener: NOT WORKING"
rm -f "$got"
echo "--- probe run"
cd "$W" || exit 1
"$P" run --in "$W" -- bash -c 'echo made > made.txt; cat /etc/shadow || echo refused; cat /home/outside/secret || echo outside-refused; (echo x > /dev/udp/127.0.0.1/53) && echo UDP-OPEN || echo UDP-REFUSED; (echo escaped > /dev/udp/127.0.0.1/'$PORT') && echo UDP2-SENT || echo UDP2-REFUSED; head -c1 /proc/1/environ >/dev/null 2>&1 && echo PROC1-ENVIRON-READ || echo proc1-environ-refused' >"$W.out" 2>"$W.err"
rc=$?
sleep 0.2
kill "$listener" 2>/dev/null; wait "$listener" 2>/dev/null
sed 's/^/  out: /' "$W.out"; sed 's/^/  err: /' "$W.err"
echo "RESULT run_exit=$rc"
if grep -q "weaker seal: no namespaces" "$W.err"; then echo "RESULT seal=weaker-no-namespaces"; elif grep -q "weaker seal:" "$W.err"; then echo "RESULT seal=weaker"; elif [ $rc -eq 0 ]; then echo "RESULT seal=full"; else echo "RESULT seal=none"; fi
if [ "$(cat made.txt 2>/dev/null)" = made ]; then echo "RESULT made=yes"; else echo "RESULT made=no"; fi
if grep -q '^root:' "$W.out"; then echo "RESULT shadow=READ"; else echo "RESULT shadow=refused"; fi
if grep -q '^outside-secret' "$W.out"; then echo "RESULT outside=READ"; else echo "RESULT outside=refused"; fi
if grep -q '^UDP-OPEN' "$W.out"; then echo "RESULT udp=OPEN"; elif grep -q '^UDP-REFUSED' "$W.out"; then echo "RESULT udp=refused"; else echo "RESULT udp=not-run"; fi
# /proc/1: the container's first process where the run sees the container's
# /proc, the seal's init otherwise: neither is the run's to read.
if grep -q '^PROC1-ENVIRON-READ' "$W.out"; then echo "RESULT proc1=READ"; else echo "RESULT proc1=refused"; fi
if grep -q escaped "$got" 2>/dev/null; then echo "RESULT udp_left_run=YES"; else echo "RESULT udp_left_run=no"; fi
echo "--- git run"
mkdir -p "$W/repo" && cd "$W/repo" || exit 1
"$P" run --in "$W/repo" -- sh -c 'git init -q . && git -c user.name=px -c user.email=px@example.invalid commit -q --allow-empty -m x && git log --oneline | wc -l' >"$W.git.out" 2>"$W.git.err"
rc=$?
sed 's/^/  out: /' "$W.git.out"; sed 's/^/  err: /' "$W.git.err"
echo "RESULT git_exit=$rc"
if [ "$(tr -d ' \n' <"$W.git.out")" = 1 ]; then echo "RESULT git=committed"; else echo "RESULT git=failed"; fi
echo "  after the run: $(ls -A "$W/repo" | tr '\n' ' ')/ .git: $(ls -A "$W/repo/.git" 2>/dev/null | tr '\n' ' ')"
echo "--- npm install through the proxy"
mkdir -p "$W/npm" && cd "$W/npm" || exit 1
if curl -sS -o /dev/null --max-time 10 https://registry.npmjs.org/left-pad 2>/dev/null && command -v npm >/dev/null; then
  "$P" run --in "$W/npm" --allow registry.npmjs.org -- npm install --no-audit --no-fund left-pad >"$W.npm.out" 2>"$W.npm.err"
  echo "RESULT npm_exit=$?"
  sed 's/^/  out: /' "$W.npm.out"; sed 's/^/  err: /' "$W.npm.err" | tail -5
  [ -f "$W/npm/node_modules/left-pad/package.json" ] && echo "RESULT npm=installed" || echo "RESULT npm=failed"
else
  echo "RESULT npm=skipped (no npm, or registry.npmjs.org not reachable from the container)"
fi
echo "--- a loopback test server inside the run"
cd "$W" || exit 1
"$P" run --in "$W" -- bash -c 'python3 -m http.server 45380 --bind 127.0.0.1 >/dev/null 2>&1 &
for _ in $(seq 50); do (echo >/dev/tcp/127.0.0.1/45380) 2>/dev/null && break; sleep 0.1; done
code=$(curl -s -o /dev/null -w "%{http_code}" http://127.0.0.1:45380/); kill %1 2>/dev/null
[ "$code" = 200 ] && echo SERVED || echo "NOT-SERVED ($code)"' >"$W.serve.out" 2>"$W.serve.err"
sed 's/^/  out: /' "$W.serve.out"; sed 's/^/  err: /' "$W.serve.err" | tail -3
grep -q '^SERVED' "$W.serve.out" && echo "RESULT serve=served" || echo "RESULT serve=refused"
echo "--- check --sealed and start-up"
mkdir -p "$W/seal" && bash /tmp/seal_probe.sh "$P" "$W/seal" "$W.seal" "$STARTUP_RUNS"
PROBE
chmod 755 "$state/tmp/probe.sh"
if [ -n "${PX_RR_PROBE:-}" ]; then
  cp "$PX_RR_PROBE" "$state/tmp/probe.sh" || exit 2
fi
cp "$here/seal_probe.sh" "$state/tmp/seal_probe.sh"

# Extra binds: the executable when it lies under a folder the binds cover.
extra_binds=""
case "$exe" in /tmp/*|/home/*) extra_binds=$(dirname "$exe");; esac

hybrid_cgroup=0
if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] &&
   [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] &&
   [ -n "$(tr -d ' \n' </sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
  hybrid_cgroup=1
fi

seconds() { # elapsed between two $EPOCHREALTIME, as S.SS
  local a=${1/[.,]/} b=${2/[.,]/}
  local d=$(( (10#$b - 10#$a) / 10000 ))
  printf '%d.%02d' $((d / 100)) $((d % 100))
}

# The unprivileged identity, made as the other suites make it.
case " ${PX_RR_USERS:-root pxtest} " in *" pxtest "*) id pxtest >/dev/null 2>&1 || useradd -m pxtest >/dev/null 2>&1;; esac

failures=0
escapes=0
ran=0
for who in ${PX_RR_USERS:-root pxtest}; do
  if ! uid=$(id -u "$who" 2>/dev/null); then
    echo "=== $who: no such user, skipped"
    continue
  fi
  gid=$(id -g "$who")
  base=/home/$who
  mkdir -p "$state/home/$who"/{work,px,runtime}
  chown -R "$uid:$gid" "$state/home/$who"
  chmod 700 "$state/home/$who/runtime"
  bundle=$state/bundle-$who
  mkdir -p "$bundle"
  (cd "$bundle" && crun spec) || { echo "crun spec failed"; exit 1; }
  python3 - "$bundle/config.json" "$converter" "$profile" <<PY || exit 1
import importlib.util, json, sys
path, converter, profile = sys.argv[1:4]
c = json.load(open(path))
c["root"] = {"path": "$state/rootfs", "readonly": True}
p = c["process"]
p["terminal"] = False
p["user"] = {"uid": $uid, "gid": $gid}
p["cwd"] = "$base"
p["args"] = ["/bin/bash", "/tmp/probe.sh", "$exe", "$base/work", "${PX_RR_STARTUP_RUNS:-5}"]
p["env"] = [e for e in p["env"] if not e.startswith("HOME=")] + [
    "HOME=$base", "PARALLEX_HOME=$base/px", "XDG_RUNTIME_DIR=$base/runtime",
    "PARALLEX_ALLOW_WEAKER_SEAL=1", "LANG=C.UTF-8"]
caps_mode = "$caps_mode"
podman = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL", "CAP_NET_BIND_SERVICE",
          "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID", "CAP_SYS_CHROOT"]
if caps_mode == "podman":
    # Podman: the list in every set but ambient; a non-root user keeps the bounding set only.
    eff = podman if $uid == 0 else []
    p["capabilities"] = {"bounding": podman, "effective": eff, "permitted": eff, "inheritable": [], "ambient": []}
elif caps_mode == "none":
    p["capabilities"] = {k: [] for k in ("bounding", "effective", "permitted", "inheritable", "ambient")}
if "${PX_RR_NET:-host}" == "host":
    c["linux"]["namespaces"] = [n for n in c["linux"]["namespaces"] if n["type"] != "network"]
if "$proc_mode" == "unmasked":
    c["linux"]["maskedPaths"] = []
    c["linux"]["readonlyPaths"] = []
m = c["mounts"]
m.append({"destination": "/tmp", "type": "bind", "source": "$state/tmp", "options": ["rbind", "rw", "nosuid", "nodev"]})
m.append({"destination": "/home", "type": "bind", "source": "$state/home", "options": ["rbind", "rw", "nosuid", "nodev"]})
for d in "$extra_binds".split():
    m.append({"destination": d, "type": "bind", "source": d, "options": ["rbind", "ro"]})
# linux.seccomp: the containers profile for this container's capabilities and arch.
spec = importlib.util.spec_from_file_location("oci_seccomp", converter)
oci = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oci)
arch = oci.MACHINE_TO_GO.get(oci.platform.machine(), oci.platform.machine())
seccomp = oci.convert(json.load(open(profile)), oci.caps_of(c), arch)
deny = dict(d.split(":") for d in "${PX_RR_DENY:-}".split())
if deny:
    for rule in seccomp["syscalls"]:
        rule["names"] = [n for n in rule["names"] if n not in deny]
    seccomp["syscalls"] = [r for r in seccomp["syscalls"] if r["names"]]
    for name, err in deny.items():
        seccomp["syscalls"].append({"names": [name], "action": "SCMP_ACT_ERRNO", "errnoRet": int(err)})
c["linux"]["seccomp"] = seccomp
json.dump(c, open(path, "w"), indent=1)
PY
  ctr=parallex-rr-$$-$who
  echo "=== $who (uid $uid): crun --cgroup-manager=$cgroup_manager run, caps=$caps_mode, proc=$proc_mode, net=${PX_RR_NET:-host}, seccomp=$profile"
  t0=$EPOCHREALTIME
  unshare -m --propagation private bash -c '
    set -e
    if [ "$1" = 1 ]; then umount /sys/fs/cgroup/unified; fi
    mount --bind / "$2/rootfs"
    exec crun --cgroup-manager="$3" run -b "$4" "$5"' _ \
    "$hybrid_cgroup" "$state" "$cgroup_manager" "$bundle" "$ctr" </dev/null >"$state/$who.log" 2>&1
  crc=$?
  t1=$EPOCHREALTIME
  crun delete -f "$ctr" >/dev/null 2>&1
  cat "$state/$who.log"
  echo "(container exit $crc, $(seconds "$t0" "$t1") s)"
  ran=$((ran + 1))
  r() { grep -m1 "^RESULT $1=" "$state/$who.log" | cut -d= -f2; }
  verdict=""
  if [ $crc -ne 0 ]; then verdict="FAILED (container exit $crc)"; failures=$((failures + 1))
  elif [ -n "${PX_RR_PROBE:-}" ]; then
    : # the probe's own verdict: the container's exit
  else
    [ "$(r shadow)" = READ ] && { verdict="$verdict${verdict:+; }ESCAPE: /etc/shadow read"; escapes=$((escapes + 1)); }
    [ "$(r outside)" = READ ] && { verdict="$verdict${verdict:+; }ESCAPE: a file outside the grants read"; escapes=$((escapes + 1)); }
    # UDP open: an escape where the run shares the container's network (the
    # seal without namespaces); with its network namespace, 127.0.0.1 is the
    # run's own loopback.
    [ "$(r udp)" = OPEN ] && [ "$(r seal)" = weaker-no-namespaces ] && { verdict="$verdict${verdict:+; }ESCAPE: UDP open"; escapes=$((escapes + 1)); }
    [ "$(r proc1)" = READ ] && { verdict="$verdict${verdict:+; }ESCAPE: /proc/1/environ read"; escapes=$((escapes + 1)); }
    [ "$(r udp_left_run)" = YES ] && { verdict="$verdict${verdict:+; }ESCAPE: UDP reached the container"; escapes=$((escapes + 1)); }
    # check's words match what the run got: never "every required guarantee
    # is enforced" for a run that was weaker.
    if [ "$(r seal)" != full ] && grep -q "Every required guarantee is enforced" "$state/$who.log"; then
      verdict="$verdict${verdict:+; }FAILED: check said every guarantee holds, the run was $(r seal)"
      failures=$((failures + 1))
    fi
    case " ${PX_RR_EXPECT_FULL:-} " in *" $who "*)
      [ "$(r seal)" = full ] || { verdict="$verdict${verdict:+; }FAILED: the full seal was expected, the run got $(r seal)"; failures=$((failures + 1)); };;
    esac
    if [ "$(r run_exit)" != 0 ] || [ "$(r made)" != yes ]; then
      verdict="$verdict${verdict:+; }FAILED: probe run exit $(r run_exit), made.txt $(r made)"; failures=$((failures + 1)); fi
    if [ "$(r git_exit)" != 0 ] || [ "$(r git)" != committed ]; then
      verdict="$verdict${verdict:+; }FAILED: git run exit $(r git_exit)"; failures=$((failures + 1)); fi
    # npm through the proxy, where the container reaches the registry.
    case "$(r npm)" in installed|skipped*) ;; *) verdict="$verdict${verdict:+; }FAILED: npm install through the proxy (exit $(r npm_exit))"; failures=$((failures + 1));; esac
    # A loopback server of the run's own: on the run's own loopback with its
    # network namespace; without one, Landlock refuses every TCP bind (the
    # container's loopback is not the run's to serve on).
    if [ "$(r seal)" = weaker-no-namespaces ]; then
      [ "$(r serve)" = refused ] || { verdict="$verdict${verdict:+; }ESCAPE: the run served on the container's loopback"; escapes=$((escapes + 1)); }
    else
      [ "$(r serve)" = served ] || { verdict="$verdict${verdict:+; }FAILED: a loopback server inside the run"; failures=$((failures + 1)); }
    fi
    # check --sealed: every way out whose guarantee check calls enforced held.
    sealed=$state/home/$who/work.seal.sealed.json
    if ! escaped_ways=$(python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
print("; ".join(w["way_out"] for w in j["ways_out"] if w["verdict"] == "ESCAPED"))' "$sealed" 2>/dev/null); then
      verdict="$verdict${verdict:+; }FAILED: check --sealed gave no answer ($(head -c 300 "${sealed%.json}.err" 2>/dev/null))"
      failures=$((failures + 1))
    elif [ -n "$escaped_ways" ]; then
      verdict="$verdict${verdict:+; }ESCAPE (check --sealed): $escaped_ways"; escapes=$((escapes + 1))
    fi
  fi
  echo "=== $who: ${verdict:-ok}: run_exit=$(r run_exit) seal=$(r seal) made=$(r made) shadow=$(r shadow) outside=$(r outside) udp=$(r udp) udp_left_run=$(r udp_left_run) git_exit=$(r git_exit) git=$(r git) npm=$(r npm) serve=$(r serve)"
done

echo "=== $ran identities in $(seconds "$started" "$EPOCHREALTIME") s; escapes: $escapes; failures: $failures"
[ $escapes -eq 0 ] && [ $failures -eq 0 ]
