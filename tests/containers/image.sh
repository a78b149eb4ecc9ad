#!/usr/bin/env bash
# The container image (packaging/container/Containerfile) built from the
# Debian package and run by podman, as a team would run it: `parallex` is the
# entrypoint, the project is a volume, and the container is made with the
# settings named below, podman's defaults first (its seccomp profile, its
# default capabilities, masked and read-only /proc paths).
#
#   tests/containers/image.sh PACKAGES_DIR
#
# PACKAGES_DIR holds parallex_*.deb (scripts/package.sh makes build/packages).
# The image is built by packaging/container/build-image.sh (the base from the
# Debian mirror: network, and a few minutes the first time), so this test runs
# only when asked: PARALLEX_TEST_CONTAINER_IMAGE=1 (scripts/test.sh's package
# stage sets it); otherwise, and without root, podman, mmdebstrap or the
# package, it exits 77 (skipped) saying why.
#
# In each configuration:
#   1. `parallex check`, and what it claims: every required guarantee, or not;
#   2. unless the configuration accepts the weaker seal itself, a run without
#      PARALLEX_ALLOW_WEAKER_SEAL: it must work with the full seal when check
#      claimed every guarantee, and refuse (exit 125, naming the setting) when
#      it did not: check's verdict is what the run does;
#   3. a run (accepted where check said something is missing) that writes
#      made.txt in the project volume and tries /etc/shadow, a file of a volume
#      outside its grants and /proc/1/environ: each must be refused;
#   4. a run that makes a git repository in the project volume and commits; the
#      commit is read back on the host.
# Exit 0 when every check held, 1 otherwise (each failure is named).
set -u

packages=${1:-}
[ -n "$packages" ] || { echo "usage: $0 PACKAGES_DIR" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

[ "${PARALLEX_TEST_CONTAINER_IMAGE:-0}" = 1 ] || {
  echo "SKIP: builds a container image from the Debian mirror (network, minutes the first time);" \
    "set PARALLEX_TEST_CONTAINER_IMAGE=1 to run it (scripts/test.sh does, after making the package)"
  exit 77
}
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (podman's rootful storage)"; exit 77; }
for tool in podman mmdebstrap git; do
  command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is missing (apt-get install $tool)"; exit 77; }
done
shopt -s nullglob
debs=("$packages"/parallex_*.deb)
shopt -u nullglob
[ ${#debs[@]} -eq 1 ] || { echo "SKIP: no single parallex_*.deb in $packages (scripts/package.sh makes it)"; exit 77; }

tag=localhost/parallex-image-test:latest
state=${PX_IMAGE_DIR:-/tmp/parallex-image-test}
case "$state" in /|/tmp|"") echo "$0: PX_IMAGE_DIR=$state is not a folder of its own" >&2; exit 2;; esac

# shellcheck source=SCRIPTDIR/../../packaging/container/podman-host.sh
source "$root/packaging/container/podman-host.sh"
pm() { podman "${px_podman_global[@]}" "$@"; }

echo "=== build: packaging/container/build-image.sh --deb ${debs[0]} --tag $tag"
t0=$EPOCHREALTIME
"$root/packaging/container/build-image.sh" --deb "${debs[0]}" --tag "$tag" >"$state.build.log" 2>&1 ||
  { tail -40 "$state.build.log"; echo "FAILED: the image did not build (log: $state.build.log)"; exit 1; }
grep '^podman settings' "$state.build.log"
echo "(built in $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}') s)"

rm -rf "$state"
mkdir -p "$state/outside"
echo outside-secret >"$state/outside/secret"
chmod 755 "$state/outside"
chmod 644 "$state/outside/secret"
# The profile of the full seal's settings, as a node gets it.
pm run --rm "${px_podman_limits[@]}" "$tag" check --seccomp-profile >"$state/parallex.json" ||
  { echo "FAILED: parallex check --seccomp-profile in the image"; exit 1; }

failures=0
fail() {
  echo "  FAILED: $*"
  failures=$((failures + 1))
}

# One configuration: NAME, whether it accepts the weaker seal itself (0/1),
# the identity's uid, then podman run options.
configure() {
  local name=$1 accepts=$2 uid=$3
  shift 3
  local dir=$state/$name opts=("$@")
  mkdir -p "$dir/project" "$dir/state" "$dir/home"
  chown "$uid:$uid" "$dir/project" "$dir/state" "$dir/home"
  # The pod's volumes (docs/containers.md): the project, Parallex's state and
  # the user's home; a volume outside the run's grants in that home.
  opts+=(-v "$dir/project:/work/project" -v "$dir/state:/var/lib/parallex" -v "$dir/home:/home/parallex"
    -v "$state/outside:/home/parallex/outside:ro")
  echo "=== $name: podman run ${opts[*]}"
  pr() { pm run --rm "${px_podman_limits[@]}" "${opts[@]}" "$@"; }

  pr "$tag" check >"$dir/check.out" 2>&1
  local check_rc=$? claims_all=0
  sed 's/^/  check: /' "$dir/check.out" | grep -E 'MISSING|Environment|guarantee' | head -12
  grep -q "Every required guarantee is enforced" "$dir/check.out" && claims_all=1
  echo "  check exit $check_rc; claims every required guarantee: $([ $claims_all = 1 ] && echo yes || echo no)"

  local probe='echo made > made.txt
cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ || echo shadow-refused
cat /home/parallex/outside/secret 2>/dev/null | grep -q outside-secret && echo OUTSIDE-READ || echo outside-refused
head -c1 /proc/1/environ >/dev/null 2>&1 && echo PROC1-READ || echo proc1-refused'

  if [ "$accepts" = 0 ]; then
    pr -e PARALLEX_ALLOW_WEAKER_SEAL=0 "$tag" run --in /work/project -- bash -c "$probe" \
      >"$dir/unaccepted.out" 2>"$dir/unaccepted.err"
    local rc=$?
    if [ $claims_all = 1 ]; then
      [ $rc = 0 ] || fail "check claimed every guarantee; the run exited $rc: $(head -3 "$dir/unaccepted.err")"
      grep -q "weaker seal" "$dir/unaccepted.err" && fail "check claimed every guarantee; the run was weaker: $(grep -m1 'weaker seal' "$dir/unaccepted.err")"
    else
      [ $rc = 125 ] || fail "check named a missing guarantee; the unaccepted run exited $rc, not 125 (refused)"
      grep -q -- "--allow-weaker-seal\|PARALLEX_ALLOW_WEAKER_SEAL" "$dir/unaccepted.err" ||
        fail "the refusal does not name the setting: $(head -3 "$dir/unaccepted.err")"
    fi
    echo "  unaccepted run: exit $rc $([ $rc = 125 ] && echo "(refused: $(grep -m1 -o 'pass --allow-weaker-seal.*' "$dir/unaccepted.err" | cut -c1-80))")"
    rm -f "$dir/project/made.txt"
  fi

  local accept=()
  [ $claims_all = 1 ] || accept=(-e PARALLEX_ALLOW_WEAKER_SEAL=1)
  local t1=$EPOCHREALTIME
  pr "${accept[@]}" "$tag" run --in /work/project -- bash -c "$probe" >"$dir/probe.out" 2>"$dir/probe.err"
  rc=$?
  echo "  probe run: exit $rc in $(awk -v a="$t1" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.2f", b - a}') s (podman included)"
  sed 's/^/    out: /' "$dir/probe.out"
  sed 's/^/    err: /' "$dir/probe.err" | cut -c1-200
  [ $rc = 0 ] || fail "the probe run exited $rc"
  [ "$(cat "$dir/project/made.txt" 2>/dev/null)" = made ] || fail "made.txt is not in the project volume"
  [ "$(stat -c %u "$dir/project/made.txt" 2>/dev/null)" = "$uid" ] || fail "made.txt is not owned by uid $uid on the host"
  grep -q SHADOW-READ "$dir/probe.out" && fail "ESCAPE: /etc/shadow read"
  grep -q OUTSIDE-READ "$dir/probe.out" && fail "ESCAPE: a file outside the grants read"
  grep -q PROC1-READ "$dir/probe.out" && fail "ESCAPE: /proc/1/environ read"
  grep -q shadow-refused "$dir/probe.out" || fail "the probes did not run"
  if [ $claims_all = 1 ]; then
    grep -q "weaker seal" "$dir/probe.err" && fail "check claimed every guarantee; the run said: $(grep -m1 'weaker seal' "$dir/probe.err")"
  else
    grep -q "weaker seal" "$dir/probe.err" || fail "check named a missing guarantee; the accepted run did not say 'weaker seal'"
  fi

  mkdir -p "$dir/project/repo"
  chown "$uid:$uid" "$dir/project/repo"
  pr "${accept[@]}" -w /work/project/repo "$tag" run --in /work/project/repo -- \
    sh -c 'git init -q . && git -c user.name=px -c user.email=px@example.invalid commit -q --allow-empty -m "made in the image"' \
    >"$dir/git.out" 2>"$dir/git.err"
  rc=$?
  local commits
  commits=$(git -c safe.directory='*' -C "$dir/project/repo" log --format=%s 2>/dev/null)
  echo "  git run: exit $rc; on the host: ${commits:-no commit}"
  [ $rc = 0 ] || fail "the git run exited $rc: $(tail -3 "$dir/git.err")"
  [ "$commits" = "made in the image" ] || fail "the commit is not in the project volume"

  # An agent: its store in the state volume (made by `parallex agent new`, as
  # a pod's agent volume holds it), its token a file mounted read-only over
  # the store's gh/hosts.yml, owned by root and readable by group 1000 only
  # (the pod's Secret: defaultMode 0440, fsGroup 1000). The run must hold a
  # placeholder, never the token.
  pr "$tag" agent new reviewer --email reviewer@example.invalid >"$dir/agent-new.out" 2>&1 ||
    { fail "parallex agent new in the image: $(tail -3 "$dir/agent-new.out")"; return; }
  local token
  token=ghp_$(head -c 300 /dev/urandom | tr -dc 'A-Za-z0-9' | head -c 36)
  sed "s/parallex-agent-has-no-github-token/$token/" "$dir/state/agents/reviewer/gh/hosts.yml" >"$dir/hosts.yml"
  grep -q "$token" "$dir/hosts.yml" || { fail "the agent's gh/hosts.yml has no token field to fill"; return; }
  chown 0:1000 "$dir/hosts.yml"
  chmod 0440 "$dir/hosts.yml"
  # Where the configuration accepts the weaker seal itself (the variable in
  # its environment), `agent run` takes it from there, as `run` does: no flag.
  local weaker=()
  [ $claims_all = 1 ] || [ "$accepts" = 1 ] || weaker=(--allow-weaker-seal)
  # shellcheck disable=SC2016 # expanded by the run's shell
  pr -v "$dir/hosts.yml:/var/lib/parallex/agents/reviewer/gh/hosts.yml:ro" "$tag" \
    agent run reviewer "${weaker[@]}" --in /work/project -- \
    sh -c 'echo "GH_TOKEN=$GH_TOKEN"; cat "$GH_CONFIG_DIR/hosts.yml" /var/lib/parallex/agents/reviewer/gh/hosts.yml' \
    >"$dir/agent.out" 2>"$dir/agent.err"
  rc=$?
  echo "  agent run ${weaker[*]:-(no flag)}: exit $rc; the run's GH_TOKEN: $(grep -m1 -o 'GH_TOKEN=.\{0,8\}' "$dir/agent.out")…"
  if [ $claims_all = 0 ]; then
    grep -q "weaker seal" "$dir/agent.err" || fail "check named a missing guarantee; the agent's run did not say 'weaker seal'"
  fi
  [ $rc = 0 ] || fail "the agent run exited $rc: $(tail -3 "$dir/agent.err")"
  grep -q "$token" "$dir/agent.out" "$dir/agent.err" && fail "ESCAPE: the agent's run read its token"
  grep -q '^GH_TOKEN=ghp_' "$dir/agent.out" || fail "the agent's run holds no placeholder token"
  [ "$(grep -c 'oauth_token: ghp_' "$dir/agent.out")" -ge 2 ] || fail "the run's hosts.yml shows no placeholder"
}

# podman's defaults, as the image's user (1000).
configure defaults 0 1000
# podman's defaults as root (its default capabilities).
configure defaults-root 0 0 --user 0:0
# The pod of `parallex kube --seal without-namespaces`: every capability
# dropped, no privilege escalation, a read-only root, the runtime's seccomp
# profile, the weaker seal accepted in the environment.
configure pod-without-namespaces 1 1000 --cap-drop ALL --security-opt no-new-privileges --read-only \
  --tmpfs /tmp -e PARALLEX_ALLOW_WEAKER_SEAL=1
# The full seal's settings (docs/containers.md): parallex's seccomp profile,
# /proc unmasked, and the pod's restrictions.
configure full-seal 0 1000 --security-opt seccomp="$state/parallex.json" --security-opt unmask=ALL \
  --cap-drop ALL --security-opt no-new-privileges --read-only --tmpfs /tmp
if ! grep -q "Every required guarantee is enforced" "$state/full-seal/check.out"; then
  fail "full-seal: check does not claim every guarantee with the full seal's settings"
fi

pm rmi "$tag" >/dev/null 2>&1
echo "=== failures: $failures"
# What each configuration printed stays for a look when something failed.
[ $failures -eq 0 ] || { echo "(its output: $state)"; exit 1; }
rm -rf "$state" "$state.build.log"
