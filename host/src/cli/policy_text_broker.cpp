#include <boost/algorithm/string/join.hpp>
#include <chrono>
#include <ctime>
#include <sstream>

#include "cli/policy_text.hpp"

namespace px::cli {

std::string render_broker_policy(const policy::Policy& p) {
  std::ostringstream out;
  if (!p.credentials().empty()) {
    out << "\nCredentials (brokered: the run gets a placeholder; the proxy swaps in the secret on requests "
           "to "
           "these hosts only)\n";
    for (const auto& c : p.credentials()) {
      std::string hosts = boost::algorithm::join(c.spec.hosts, ", ");
      if (!c.base_url_variable.empty()) hosts += " (or the host of " + c.base_url_variable + " when set)";
      out << "  " << c.spec.name << "  to " << hosts;
      if (!c.spec.env.empty()) out << ", in " << boost::algorithm::join(c.spec.env, ", ");
      out << "  [" << c.origin.describe() << "]\n";
      out << "      secret from " << c.spec.source.describe() << (c.when_set ? ", when set" : "");
      if (!c.spec.shape.empty()) out << "; shape " << c.spec.shape;
      if (!c.spec.headers.empty())
        out << "; also in the headers " << boost::algorithm::join(c.spec.headers, ", ");
      if (c.spec.expires) {
        const std::time_t t = std::chrono::system_clock::to_time_t(*c.spec.expires);
        char day[32];
        std::tm tm{};
        gmtime_r(&t, &tm);
        std::strftime(day, sizeof day, "%Y-%m-%d %H:%M UTC", &tm);
        out << "; expires " << day;
      }
      out << "\n";
      for (const auto& f : c.masked_files)
        out << "      the run sees " << f.string() << " with the placeholder\n";
      if (!c.reason.empty()) out << "      " << c.reason << "\n";
    }
  }
  if (!p.request_rules().empty()) {
    out << "\nRequest rules (TLS terminated for these hosts; first match wins; a host with rules refuses "
           "what "
           "none allows)\n";
    for (const auto& h : p.request_rules()) {
      if (h.passthrough) {
        out << "  " << h.host << "  passthrough: never terminated (no rules, no credential)  ["
            << h.origin.describe() << "]\n";
        continue;
      }
      out << "  " << h.host << "  [" << h.origin.describe() << "]\n";
      for (const auto& r : h.rules) {
        out << "      " << r.text();
        if (!r.reason.empty()) out << "  \"" << r.reason << "\"";
        if (!r.origin.empty()) out << "  [" << r.origin << "]";
        out << "\n";
      }
    }
  }
  return out.str();
}

}  // namespace px::cli
