#!/usr/bin/env bash
# Installs what Parallex needs to build and test, from Debian's packages and the
# npm registry. Idempotent: it installs only what is missing.
set -euo pipefail

need_root() { if [ "$(id -u)" -ne 0 ]; then echo "sudo"; fi; }
SUDO=$(need_root)

packages=(
  build-essential cmake ninja-build pkg-config clang
  libboost-dev libboost-filesystem-dev libboost-system-dev
  libyaml-cpp-dev libspdlog-dev libgit2-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev
  libseccomp-dev libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev libssl-dev zlib1g-dev
  libsimdjson-dev
  git curl ca-certificates procps iproute2 util-linux ccache lld
)
# Test-only tools: real clients and peers the tests and benchmarks run against.
if [ "${PARALLEX_WITH_TEST_TOOLS:-0}" = 1 ]; then
  # node and npm only when absent: a machine may have them from elsewhere (NodeSource).
  command -v node >/dev/null || packages+=(nodejs)
  command -v npm >/dev/null || packages+=(npm)
  # golang-go: a client that ignores proxy settings; openssh-server: the test
  # sshd that git clones from (the tests start their own on a free loopback port).
  packages+=(tinyproxy bubblewrap hyperfine chromium socat strace python3 keyutils openssh-client ripgrep
             golang-go openssh-server clang-tidy)
  # A real container runtime and the default seccomp profile of Podman and
  # CRI-O: Parallex in a runtime's default container (tests/containers).
  packages+=(crun golang-github-containers-common)
  # The container image (packaging/container) is built and run by podman;
  # runc runs its containers on a hybrid cgroup host, where crun refuses them.
  packages+=(podman runc)
  # The completion and man page tests run the real shells and man.
  packages+=(bash-completion zsh fish man-db)
  # gh (GitHub's CLI): the broker's tests run it in a seal with a brokered token.
  packages+=(gh)
  # Python requests: the broker's sealed test sends a request with it (it reads
  # REQUESTS_CA_BUNDLE, not the system store).
  packages+=(python3-requests)
  # The manifest tests read `parallex kube`'s YAML back as kubectl does (YAML 1.1).
  packages+=(python3-yaml)
  # simdjson: bench/transcripts measures the transcript scanner against it.
  packages+=(libsimdjson-dev)
  # Ask mode's desktop notification (tests/network): a session bus of the test's
  # own (dbus-daemon), notify-send, and a notification server on that bus
  # written with GLib's Python bindings.
  packages+=(dbus libnotify-bin python3-gi)
fi
# Making and checking the Debian packages (scripts/package.sh, scripts/check-package.sh;
# the tests run both): CPack needs dpkg-shlibdeps and file, the check a fresh
# Debian root from mmdebstrap.
if [ "${PARALLEX_WITH_TEST_TOOLS:-0}" = 1 ] || [ "${PARALLEX_WITH_PACKAGE_TOOLS:-0}" = 1 ]; then
  packages+=(dpkg-dev file lintian mmdebstrap)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The package starts a system SSH server; the tests need only its binary.
  if printf '%s\n' "${missing[@]}" | grep -x openssh-server >/dev/null && command -v systemctl >/dev/null; then
    $SUDO systemctl disable --now ssh >/dev/null 2>&1 || true
  fi
fi

if [ "${PARALLEX_WITH_TEST_TOOLS:-0}" = 1 ] && command -v npm >/dev/null; then
  # The real harnesses and peers, from the npm registry; a failure here only
  # turns the tests that need them into visible skips.
  npm_pkgs=(@anthropic-ai/claude-code @openai/codex opencode-ai @anthropic-ai/sandbox-runtime @modelcontextprotocol/sdk ccusage)
  npm_missing=()
  for p in "${npm_pkgs[@]}"; do
    npm ls -g --depth=0 "$p" >/dev/null 2>&1 || npm_missing+=("$p")
  done
  if [ "${#npm_missing[@]}" -gt 0 ]; then
    echo "installing from npm: ${npm_missing[*]}"
    $SUDO npm install -g --no-fund --no-audit --loglevel=error "${npm_missing[@]}" || echo "warning: npm install failed; tests needing these clients will skip"
  fi
fi

if [ "${PARALLEX_WITH_TEST_TOOLS:-0}" = 1 ] && command -v npm >/dev/null; then
  # The Kubernetes schemas the manifest tests validate against (tests/kube),
  # at the versions its lockfile pins, in that folder: a global copy could be
  # another version on another machine.
  validator="$(cd "$(dirname "$0")/.." && pwd)/tests/kube/validator"
  if ! npm ls --prefix "$validator" --depth=0 >/dev/null 2>&1; then
    echo "installing from npm: the manifest tests' schemas (tests/kube/validator)"
    npm ci --prefix "$validator" --no-fund --no-audit --loglevel=error || echo "warning: npm ci failed; the manifest tests will skip"
  fi
fi

if [ "${PARALLEX_WITH_TEST_TOOLS:-0}" = 1 ] && command -v npm >/dev/null; then
  # Playwright (core only: it drives Debian's chromium above and downloads no
  # browser) for the page's browser test (tests/ui), at its lockfile's version.
  ui_browser="$(cd "$(dirname "$0")/.." && pwd)/tests/ui/browser"
  if ! npm ls --prefix "$ui_browser" --depth=0 >/dev/null 2>&1; then
    echo "installing from npm: playwright-core for the page's browser test (tests/ui/browser)"
    npm ci --prefix "$ui_browser" --no-fund --no-audit --loglevel=error || echo "warning: npm ci failed; the page's browser test will skip"
  fi
fi
