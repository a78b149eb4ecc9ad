#include "proxy/refusal_text.hpp"

#include "proxy/reasons.hpp"

namespace px::proxy {
namespace {

// "parallex allow --run ID HOST": what the user would type, for the rule's refusals.
std::string allow_line(const std::string& host, std::string_view run_id) {
  if (host.empty()) return {};
  const std::string run = run_id.empty() ? std::string("<run>") : std::string(run_id);
  return " The user can allow it while the run goes on: parallex allow --run " + run + " " + host + ".";
}

}  // namespace

std::string explain_refusal(std::string_view why, const std::string& host, std::string_view run_id) {
  const std::string what = host.empty() ? std::string("this request") : host;
  if (why == reason::not_allowed || why == reason::port_not_allowed) {
    return "parallex proxy: " + what + " is outside this run's network rule." + allow_line(host, run_id) +
           "\n";
  }
  if (why == reason::offline)
    return "parallex proxy: this run is offline; " + what + " was not reached." + allow_line(host, run_id) +
           "\n";
  if (why == reason::denied_by_user) return "parallex proxy: the user refused " + what + " for this run.\n";
  if (why == reason::not_answered) {
    return "parallex proxy: " + what +
           " is outside this run's network rule and the user did not answer in time." +
           allow_line(host, run_id) + "\n";
  }
  if (why == reason::auth_required || why == reason::auth_failed) {
    return "parallex proxy: this proxy needs the run's password (Proxy-Authorization: Basic).\n";
  }
  if (why == reason::local_servers_off || why == reason::local_address) {
    return "parallex proxy: " + what +
           " is on this machine or a private network; turn Local servers on to reach it.\n";
  }
  if (why == reason::ui_port)
    return "parallex proxy: this is the port of `parallex ui` on " + what + ", which no run may reach.\n";
  if (why == reason::paused) return "parallex proxy: the network of this run is paused.\n";
  if (why == reason::credential_exfiltration) {
    return "parallex proxy: this request carries a brokered credential that may not go to " + what +
           "; it was refused and is reported at the end of the run.\n";
  }
  if (why == reason::plain_http_to_terminated) {
    return "parallex proxy: " + what +
           " has brokered credentials or request rules, which apply over HTTPS only; use https://.\n";
  }
  if (reason::is_upstream_failure(why))
    return "parallex proxy could not reach " + what + ": " + std::string(why) + ".\n";
  return "parallex proxy refused " + what + ": " + std::string(why) + ".\n";
}

std::string refusal_line(std::string_view why, const std::string& host, std::string_view run_id) {
  std::string text = explain_refusal(why, host, run_id);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

}  // namespace px::proxy
