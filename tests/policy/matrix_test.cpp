// The expectation matrix: every row of tests/policy/expectations/*.yaml is
// checked against the Policy's own oracle and against the Seatbelt profile
// generated from the same Policy (through the SBPL evaluator), so the oracle
// and the macOS backend cannot drift apart. The Linux backend reuses the same
// files through px_test_expectations and checks them for real.
#include <gtest/gtest.h>

#include "expectations_loader.hpp"
#include "policy/compose.hpp"

#include "backend/seatbelt/seatbelt.hpp"
#include "sbpl_eval.hpp"

namespace px::expectations {
namespace {

// The run's proxy port in generated profiles; no row may use it.
constexpr std::uint16_t kProxyPort = 41234;

struct Loaded {
  Expectations e;
  Layout layout;
  std::vector<Row> rows;
  policy::Policy policy;
};

// Loads one file, makes its layout and composes its Policy; fails the test with the reason otherwise.
std::optional<Loaded> prepare(const fs::path& file) {
  auto e = load(file);
  if (!e) {
    ADD_FAILURE() << e.error().message;
    return std::nullopt;
  }
  auto layout = Layout::create();
  if (!layout) {
    ADD_FAILURE() << layout.error().message;
    return std::nullopt;
  }
  if (auto st = layout.value().materialize(e.value()); !st) {
    ADD_FAILURE() << st.error().message;
    return std::nullopt;
  }
  auto rows = layout.value().resolve(e.value().rows);
  if (!rows) {
    ADD_FAILURE() << rows.error().message;
    return std::nullopt;
  }
  auto in = compose_inputs(e.value(), layout.value());
  if (!in) {
    ADD_FAILURE() << in.error().message;
    return std::nullopt;
  }
  auto p = policy::compose(in.value());
  if (!p) {
    ADD_FAILURE() << file << ": the set-up does not compose: " << p.error().message;
    return std::nullopt;
  }
  return Loaded{std::move(e.value()), std::move(layout.value()), std::move(rows.value()),
                std::move(p.value())};
}

policy::Decision oracle(const policy::Policy& p, const Row& row) {
  switch (row.op) {
    case Op::read:
      return p.explain_read(row.path);
    case Op::write:
      return p.explain_write(row.path);
    case Op::create_git:
      return p.explain_create_git(row.path);
    case Op::connect:
      return p.explain_connect(row.host, row.port);
  }
  return {};
}

class Matrix : public ::testing::TestWithParam<fs::path> {};

TEST_P(Matrix, OracleAgreesWithEveryRow) {
  auto loaded = prepare(GetParam());
  ASSERT_TRUE(loaded);
  ASSERT_FALSE(loaded->rows.empty());
  for (const auto& row : loaded->rows) {
    const auto d = oracle(loaded->policy, row);
    EXPECT_EQ(d.allowed, row.allowed)
        << row.describe(loaded->e.file) << "\n  path/host: " << (row.op == Op::connect ? row.host : row.path)
        << "\n  oracle: " << d.rule;
  }
}


bool loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

TEST_P(Matrix, SeatbeltProfileAgreesWithEveryRow) {
  auto loaded = prepare(GetParam());
  ASSERT_TRUE(loaded);
  auto sp = seatbelt::write_seatbelt_profile(loaded->policy, kProxyPort);
  ASSERT_TRUE(sp) << sp.error().message;
  std::string error;
  auto sb = sbpl::Profile::load(sp.value().text, sp.value().params, &error);
  ASSERT_TRUE(sb) << "the generated profile does not load: " << error;

  auto check = [&](const Row& row, const sbpl::Query& q) {
    const auto out = sb->evaluate(q);
    ASSERT_NE(out.decision, sbpl::Decision::unknown)
        << row.describe(loaded->e.file) << ": the evaluator cannot decide " << q.operation
        << " (rule on line " << out.line << ": " << out.rule << ")";
    EXPECT_EQ(out.decision == sbpl::Decision::allow, row.allowed)
        << row.describe(loaded->e.file) << "\n  " << q.operation << " " << (q.path ? *q.path : row.host)
        << "\n  decided by line " << out.line << ": " << out.rule;
  };

  // The proxy is the one way out for a named host; it applies the Policy's host rule.
  const bool proxy_reachable = sb->allows(sbpl::Query::connect("localhost", kProxyPort));
  EXPECT_EQ(proxy_reachable, loaded->policy.network().mode != policy::NetworkMode::offline);

  for (const auto& row : loaded->rows) {
    switch (row.op) {
      case Op::read:
        check(row, sbpl::Query::file("file-read-data", row.path));
        break;
      case Op::write:
        // An existing file is written through file-write-data, a new one is created first.
        check(row, sbpl::Query::file("file-write-data", row.path));
        check(row, sbpl::Query::file("file-write-create", row.path));
        break;
      case Op::create_git:
        check(row, sbpl::Query::file("file-write-create", row.path));
        break;
      case Op::connect: {
        ASSERT_NE(row.port, kProxyPort) << row.describe(loaded->e.file) << " uses the proxy's port";
        const auto direct = sb->evaluate(sbpl::Query::connect(row.host, row.port));
        ASSERT_NE(direct.decision, sbpl::Decision::unknown) << row.describe(loaded->e.file);
        bool allowed = direct.decision == sbpl::Decision::allow;
        if (!loopback(row.host)) {
          // Seatbelt never lets a connection leave the machine except to the proxy.
          EXPECT_FALSE(allowed) << row.describe(loaded->e.file) << ": a direct connection is allowed by line "
                                << direct.line << ": " << direct.rule;
          allowed = proxy_reachable && loaded->policy.may_connect(row.host, row.port);
        }
        EXPECT_EQ(allowed, row.allowed) << row.describe(loaded->e.file) << " (Seatbelt + proxy)";
        break;
      }
    }
  }
}


std::string file_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Expectations, Matrix, ::testing::ValuesIn(expectation_files()), file_name);

TEST(MatrixFiles, ThereAreFilesAndEveryOneLoads) {
  const auto files = expectation_files();
  ASSERT_GE(files.size(), 8u) << "expected the expectation files in " << expectations_dir();
  std::size_t rows = 0;
  for (const auto& f : files) {
    auto e = load(f);
    ASSERT_TRUE(e) << e.error().message;
    rows += e.value().rows.size();
  }
  EXPECT_GE(rows, 100u);
}

}  // namespace
}  // namespace px::expectations
