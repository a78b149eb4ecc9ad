#!/usr/bin/env bash
# Run by scripts/check-package.sh inside a fresh Debian root, as root: the
# packages in /tmp/parallex-test, installed, used and purged.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
here=/tmp/parallex-test
failures=0
ok() { echo "   ok: $*"; }
fail() {
  echo "   FAILED: $*"
  failures=$((failures + 1))
}
expect() {  # expect DESCRIPTION COMMAND...: the command succeeds
  local what=$1
  shift
  if out=$("$@" 2>&1); then ok "$what"; else
    fail "$what"
    head -60 <<<"$out" | sed "s/^/      /"
  fi
}
# Every file of the system, bar the bookkeeping of dpkg and apt, logs,
# caches, temporary and home folders.
listing() {
  find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /run -o -path /tmp -o -path /var/tmp \
    -o -path /var/cache -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/log -o -path /root \
    -o -path /home \) -prune -o -print | sort
}
as_user() { setpriv --reuid pxtest --regid pxtest --init-groups env HOME=/home/pxtest USER=pxtest "$@"; }

# The postinst puts the AppArmor profile in place where AppArmor 4 is
# (/etc/apparmor.d/abi/4.0): pretend it is, to see it put there and taken away.
mkdir -p /etc/apparmor.d/abi
touch /etc/apparmor.d/abi/4.0
update-ca-certificates >/dev/null 2>&1 || true
useradd -m pxtest
listing >/tmp/before

echo "-- apt-get install ./parallex_*.deb ./parallex-dev_*.deb"
cd "$here"
apt-get install -y -q ./parallex_*.deb ./parallex-dev_*.deb >/tmp/apt.log 2>&1 || {
  tail -30 /tmp/apt.log
  exit 1
}
ok "installed; Depends: $(dpkg-query -W -f='${Depends}' parallex)"
echo "   installed size: parallex $(dpkg-query -W -f='${Installed-Size}' parallex) KiB, parallex-dev $(dpkg-query -W -f='${Installed-Size}' parallex-dev) KiB"

echo "-- the executable, its version and where it finds its plugins"
[ "$(command -v parallex)" = /usr/bin/parallex ] && ok "parallex is /usr/bin/parallex" || fail "parallex is $(command -v parallex)"
version=$(parallex --version)
echo "$version" | sed 's/^/      /'
package_version=$(dpkg-query -W -f='${Version}' parallex)
[[ $package_version == "$(echo "$version" | awk 'NR==1 {print $2}')"-* ]] && ok "package version $package_version follows --version" ||
  fail "package version $package_version does not follow --version"
plugins=$(parallex plugins)
for p in claude-code codex opencode generic; do
  grep -q "^$p" <<<"$plugins" && ok "plugin $p loaded" || fail "plugin $p not loaded: $plugins"
done
grep -q "/usr/lib/.*/parallex/plugins" <<<"$plugins" && ok "from /usr/lib/<multiarch>/parallex/plugins" ||
  fail "plugins not from the multiarch folder: $plugins"

echo "-- a broken plugin in the system folder: named, the others load"
plugin_dir=$(ls -d /usr/lib/*/parallex/plugins)
echo "not a shared library" >"$plugin_dir/broken.so"
out=$(parallex plugins 2>&1 || true)
grep -q "broken.so" <<<"$out" && ok "broken.so is named" || fail "broken.so not named: $out"
grep -q "^claude-code" <<<"$out" && ok "the others still load" || fail "the others did not load: $out"
rm -f "$plugin_dir/broken.so"

echo "-- man pages, completions, the AppArmor profile"
expect "man parallex" man -w parallex
expect "man parallex-agent-run" man -w parallex-agent-run
man parallex-run 2>/dev/null | grep -- "--allow-weaker-seal" >/dev/null && ok "man parallex-run documents --allow-weaker-seal" ||
  fail "man parallex-run lacks --allow-weaker-seal"
completed=$(bash -c 'source /usr/share/bash-completion/bash_completion; _completion_loader parallex
  COMP_WORDS=(parallex ag); COMP_CWORD=1; _parallex; echo "${COMPREPLY[*]}"')
[ "$completed" = agent ] && ok "bash completes 'parallex ag' to agent" || fail "bash completed 'parallex ag' to '$completed'"
for f in /usr/share/zsh/vendor-completions/_parallex /usr/share/fish/vendor_completions.d/parallex.fish; do
  [ -s "$f" ] && ok "$f" || fail "$f missing"
done
grep -q "^profile parallex /usr/bin/parallex flags=(unconfined)" /etc/apparmor.d/parallex &&
  ok "postinst put the AppArmor profile in /etc/apparmor.d/parallex" || fail "no /etc/apparmor.d/parallex"

echo "-- parallex check and parallex demo, as root"
parallex check >/tmp/check.out 2>&1 || true
head -8 /tmp/check.out | sed 's/^/      /'
grep -q "^Environment: " /tmp/check.out && ok "check names the environment" || fail "check names no environment"
expect "parallex demo (root)" parallex demo

echo "-- parallex check and parallex demo, as an unprivileged user"
as_user parallex check >/tmp/check-user.out 2>&1 || true
grep -q "Every required guarantee is enforced" /tmp/check-user.out && ok "check: every required guarantee (user)" ||
  { fail "check as a user"; sed 's/^/      /' /tmp/check-user.out; }
expect "parallex demo (user)" as_user parallex demo

echo "-- Ubuntu's user namespace restriction (a fake /proc/sys view)"
view=/tmp/ubuntu-view
mkdir -p $view/proc/sys/kernel $view/proc/self/attr
echo 1 >$view/proc/sys/kernel/apparmor_restrict_unprivileged_userns
echo unconfined >$view/proc/self/attr/current
chmod -R a+rX $view
refused=$(as_user env PARALLEX_TEST_HOST_ROOT=$view parallex run -- true 2>&1) && status=0 || status=$?
[ "$status" = 125 ] && ok "run refuses (exit 125: it could not start the run)" || fail "run exit $status: $refused"
grep -q "sudo apparmor_parser -r /etc/apparmor.d/parallex" <<<"$refused" && ok "run names the fix" ||
  fail "run does not name the fix: $refused"
checked=$(as_user env PARALLEX_TEST_HOST_ROOT=$view parallex check 2>&1 || true)
# The guarantee's reason ends with the fix, in brackets among the others missing.
fix=$(echo "$refused" | sed -n 's/.*Fix: \(.*\)\.); .*/\1/p')
[ -n "$fix" ] && grep -qF "$fix" <<<"$checked" && ok "check prints the same fix" || fail "check differs: $checked"

echo "-- the example plugin, built against parallex-dev"
cp -r $here/gemini-plugin /home/pxtest/gemini-plugin
chown -R pxtest: /home/pxtest/gemini-plugin
expect "cmake finds ParallexSDK" as_user cmake -S /home/pxtest/gemini-plugin -B /home/pxtest/gemini-build
expect "it builds" as_user cmake --build /home/pxtest/gemini-build
as_user mkdir -p /home/pxtest/.local/share/parallex/plugins
as_user cp /home/pxtest/gemini-build/gemini.so /home/pxtest/.local/share/parallex/plugins/
as_user parallex plugins | grep "^gemini" >/dev/null && ok "parallex loads it" || fail "gemini not loaded"
as_user parallex detect -- gemini -p hi | grep "^gemini" >/dev/null && ok "parallex detect picks it" || fail "gemini not detected"

echo "-- apt-get purge: nothing left"
apt-get purge -y -q --autoremove parallex parallex-dev >/tmp/purge.log 2>&1 || {
  tail -20 /tmp/purge.log
  exit 1
}
listing >/tmp/after
if diff /tmp/before /tmp/after >/tmp/left; then ok "the system's files are as before the install"; else
  fail "left behind or taken away:"
  head -30 /tmp/left | sed 's/^/      /'
fi
[ ! -e /etc/apparmor.d/parallex ] && ok "the AppArmor profile is gone" || fail "/etc/apparmor.d/parallex left"

[ "$failures" = 0 ] && echo "-- every check passed" || echo "-- $failures checks FAILED"
exit $((failures > 0))
