# shellcheck shell=bash
# The podman settings this host needs, found by looking at the host, for
# build-image.sh and tests/containers/image.sh (sourced; sets two arrays):
#   px_podman_global  options before podman's command (`podman "${px_podman_global[@]}" run ...`)
#   px_podman_limits  options of `podman build` and `podman run`
# Each one is what a user on such a host passes by hand (or writes once in
# /etc/containers/containers.conf, named beside each):
#
# - A hybrid cgroup layout (cgroup v1 controllers under /sys/fs/cgroup and a
#   cgroup2 hierarchy at /sys/fs/cgroup/unified that holds a controller): crun,
#   podman's default runtime on Debian, refuses every container there ("crun:
#   cgroups in hybrid mode not supported, drop all controllers from
#   cgroupv2"). runc (Debian's runc package) runs them:
#   `--runtime runc` (containers.conf: [engine] runtime = "runc").
# - No systemd as PID 1 (a VM or a container without it): podman cannot use
#   systemd's cgroup manager: `--cgroup-manager=cgroupfs` ([engine]
#   cgroup_manager = "cgroupfs"; podman picks it itself when it sees no
#   systemd, said here so that it is never a surprise).
# - A podman run as root without CAP_SYS_RESOURCE (a host that is itself a
#   sandbox or a container dropping it): podman gives a root container
#   RLIMIT_NOFILE and RLIMIT_NPROC of 1048576, which only CAP_SYS_RESOURCE may
#   raise to, and the runtime fails ("setrlimit `RLIMIT_NOFILE`: Operation not
#   permitted"); `--ulimit host` fails the same way. The limits this host
#   allows: `--ulimit nofile=N:N --ulimit nproc=M:M` with N the hard limit of
#   open files and M at most podman's own process limit (podman 4.3 runs its
#   container monitor with 32768 here) ([containers] default_ulimits).

px_podman_global=()
px_podman_limits=()

if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] &&
  [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ] &&
  [ -n "$(tr -d ' \n' </sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
  if command -v runc >/dev/null 2>&1; then
    px_podman_global+=(--runtime runc)
  else
    echo "podman-host.sh: this host has a hybrid cgroup layout, where crun refuses every container;" \
      "install runc (apt-get install runc) and podman runs them with it" >&2
  fi
fi

if [ ! -d /run/systemd/system ]; then
  px_podman_global+=(--cgroup-manager=cgroupfs)
fi

# CAP_SYS_RESOURCE is bit 24 of the effective set.
if [ "$(id -u)" = 0 ] &&
  ! (($(printf '%d' "0x$(awk '/^CapEff:/ {print $2}' /proc/self/status)") >> 24 & 1)); then
  px_nofile=$(ulimit -Hn)
  px_nproc=$(ulimit -Hu)
  [ "$px_nproc" = unlimited ] || [ "$px_nproc" -gt 32768 ] && px_nproc=32768
  px_podman_limits+=(--ulimit "nofile=$px_nofile:$px_nofile" --ulimit "nproc=$px_nproc:$px_nproc")
  unset px_nofile px_nproc
fi
