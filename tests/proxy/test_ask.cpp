// Ask mode and live rules on a real proxy and a real upstream: a connection
// outside the rule is held until the user answers (or the time runs out), an
// answer for the run becomes a rule, and `allow` / `deny` change what the
// next connection gets while the proxy runs.
#include <unistd.h>

#include <future>
#include <mutex>
#include <thread>

#include "harness.hpp"
#include "proxy/reasons.hpp"
#include "wait.hpp"

namespace px::proxy::test {
namespace {

using namespace std::chrono_literals;

// What the hooks saw, from the proxy's io thread.
struct Heard {
  std::mutex mu;
  std::vector<Question> asked;
  std::vector<std::pair<Question, QuestionEnd>> closed;
  std::size_t asked_count() {
    std::lock_guard l(mu);
    return asked.size();
  }
  std::size_t closed_count() {
    std::lock_guard l(mu);
    return closed.size();
  }
};

class AskTest : public ProxyTest {
 protected:
  void start_asking(std::chrono::milliseconds timeout) {
    start([&](ProxyConfig& c) {
      c.ask_timeout = timeout;
      c.run_id = "20261206-1200-abcd";
      c.ask_hooks.asked = [this](const Question& q) {
        std::lock_guard l(heard_.mu);
        heard_.asked.push_back(q);
      };
      c.ask_hooks.closed = [this](const Question& q, const QuestionEnd& e) {
        std::lock_guard l(heard_.mu);
        heard_.closed.emplace_back(q, e);
      };
    });
  }
  // A plain GET to gitsrv.test (outside the rule, resolvable) on the http upstream, in the background.
  std::future<std::string> get_outside() {
    const std::string request = "GET http://gitsrv.test:" + std::to_string(http_.port()) +
                                "/page HTTP/1.1\r\nHost: gitsrv.test:" + std::to_string(http_.port()) +
                                "\r\n" + auth() + "\r\n";
    return std::async(std::launch::async, [this, request] { return roundtrip(port_, request, 20s); });
  }
  Heard heard_;
};

TEST_F(AskTest, AHeldRequestGoesOnWhenApprovedOnce) {
  start_asking(30s);
  auto response = get_outside();
  ASSERT_TRUE(px::test::wait_until([&] { return heard_.asked_count() == 1; }, 5000));
  // Held: no answer yet, nothing reached the upstream.
  EXPECT_EQ(response.wait_for(300ms), std::future_status::timeout);
  EXPECT_EQ(http_.connections(), 0);
  const auto open = proxy_->questions();
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].host, "gitsrv.test");
  EXPECT_EQ(open[0].port, http_.port());
  EXPECT_EQ(open[0].rule_reason, reason::not_allowed);
  EXPECT_NE(open[0].client.find("127.0.0.1:"), std::string::npos);
  ASSERT_TRUE(proxy_->answer(open[0].id, true, false, "test"));
  const std::string r = response.get();
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_NE(r.find("hello from upstream"), std::string::npos);
  EXPECT_TRUE(proxy_->questions().empty());
  // Once: the next request asks again.
  auto again = get_outside();
  ASSERT_TRUE(px::test::wait_until([&] { return heard_.asked_count() == 2; }, 5000));
  ASSERT_TRUE(proxy_->answer(proxy_->questions().at(0).id, false, false, "test"));
  const std::string refused = again.get();
  EXPECT_EQ(status_of(refused), 403);
  EXPECT_EQ(header_of(refused, "x-proxy-error"), reason::denied_by_user);
  EXPECT_NE(refused.find("the user refused gitsrv.test"), std::string::npos) << refused;
  EXPECT_NE(refused.find("parallex allow --run "), std::string::npos) << "how to allow it: " << refused;
  proxy_->stop();
  ASSERT_EQ(heard_.closed.size(), 2u);
  EXPECT_EQ(heard_.closed[0].second.outcome, "allowed-once");
  EXPECT_EQ(heard_.closed[0].second.by, "test");
  EXPECT_EQ(heard_.closed[1].second.outcome, "denied");
  const auto lines = log_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["verdict"], "allowed");
  EXPECT_EQ(lines[0]["answer"], "allowed-once");
  EXPECT_EQ(lines[1]["reason"], reason::denied_by_user);
  EXPECT_EQ(lines[1]["answer"], "denied");
}

TEST_F(AskTest, ConnectionsToTheSamePlaceWaitOnOneQuestion) {
  start_asking(30s);
  auto a = get_outside();
  auto b = get_outside();
  ASSERT_TRUE(px::test::wait_until([&] { return heard_.asked_count() == 1; }, 5000));
  std::this_thread::sleep_for(300ms);  // the second joins the first's question
  EXPECT_EQ(heard_.asked_count(), 1u);
  ASSERT_TRUE(proxy_->answer(proxy_->questions().at(0).id, true, true, "test"));
  EXPECT_EQ(status_of(a.get()), 200);
  EXPECT_EQ(status_of(b.get()), 200);
  // For the run: a rule now, and the next request is not asked.
  const auto changes = proxy_->rule_changes();
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].rule.text(), "gitsrv.test:" + std::to_string(http_.port()));
  EXPECT_EQ(status_of(get_outside().get()), 200);
  EXPECT_EQ(heard_.asked_count(), 1u);
  proxy_->stop();
  ASSERT_EQ(heard_.closed.size(), 1u);
  EXPECT_EQ(heard_.closed[0].second.outcome, "allowed-for-run");
  EXPECT_EQ(heard_.closed[0].second.connections, 2u);
}

TEST_F(AskTest, NoAnswerInTimeIsARefusalThatSaysSo) {
  start_asking(700ms);
  const auto started = std::chrono::steady_clock::now();
  const std::string r = get_outside().get();
  const auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(status_of(r), 403) << r;
  EXPECT_EQ(header_of(r, "x-proxy-error"), reason::not_answered);
  EXPECT_NE(r.find("parallex allow --run 20261206-1200-abcd gitsrv.test"), std::string::npos) << r;
  EXPECT_GE(waited, 600ms);
  EXPECT_LT(waited, 5s);
  ASSERT_TRUE(px::test::wait_until([&] { return heard_.closed_count() == 1; }, 2000));
  EXPECT_EQ(heard_.closed[0].second.outcome, "not-answered");
  // An answer that comes too late is refused with the reason.
  const auto late = proxy_->answer(heard_.closed[0].first.id, true, false, "test");
  ASSERT_FALSE(late);
  EXPECT_NE(late.error().message.find("is not open"), std::string::npos);
}

TEST_F(AskTest, AStopRefusesWhatIsHeldAndClosesTheQuestion) {
  start_asking(30s);
  auto response = get_outside();
  ASSERT_TRUE(px::test::wait_until([&] { return heard_.asked_count() == 1; }, 5000));
  proxy_->stop();
  const std::string r = response.get();
  EXPECT_EQ(r.find("200"), std::string::npos);
  ASSERT_EQ(heard_.closed.size(), 1u);
  EXPECT_EQ(heard_.closed[0].second.outcome, "stopped");
}

TEST_F(AskTest, WithoutAskModeTheRuleRefusesAtOnceAndNamesTheFix) {
  start([](ProxyConfig& c) { c.run_id = "20261206-1200-abcd"; });
  const std::string r = get_outside().get();
  EXPECT_EQ(status_of(r), 403);
  EXPECT_EQ(header_of(r, "x-proxy-error"), reason::not_allowed);
  EXPECT_NE(r.find("parallex allow --run 20261206-1200-abcd gitsrv.test"), std::string::npos) << r;
  EXPECT_TRUE(proxy_->questions().empty());
}

TEST_F(AskTest, LiveRulesChangeTheNextConnection) {
  start();
  EXPECT_EQ(status_of(get_outside().get()), 403);
  auto rule = parse_host_rule("gitsrv.test");
  ASSERT_TRUE(rule);
  // The fixture's network ports are the upstreams'.
  proxy_->change_rule({RuleChange::Kind::allow, rule.value(), "test", "now"});
  EXPECT_EQ(status_of(get_outside().get()), 200);
  // A deny of the allowed host itself (from the run's own rule) wins too.
  proxy_->change_rule({RuleChange::Kind::deny, parse_host_rule("gitsrv.test").value(), "test", "now"});
  EXPECT_EQ(status_of(get_outside().get()), 403);
  const std::string own = roundtrip(port_, "GET http://allowed.test:" + std::to_string(http_.port()) +
                                               "/ HTTP/1.1\r\nHost: allowed.test\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(own), 200);
  proxy_->change_rule({RuleChange::Kind::deny, parse_host_rule("allowed.test").value(), "test", "now"});
  const std::string denied = roundtrip(port_, "GET http://allowed.test:" + std::to_string(http_.port()) +
                                                  "/ HTTP/1.1\r\nHost: allowed.test\r\n" + auth() + "\r\n");
  EXPECT_EQ(status_of(denied), 403);
  EXPECT_EQ(proxy_->rule_changes().size(), 3u);
}

}  // namespace
}  // namespace px::proxy::test
