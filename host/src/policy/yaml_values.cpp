#include "policy/yaml_values.hpp"

#include "common/shown.hpp"

namespace px::policy {
namespace {

// Deeper than any document Parallex reads; what the parser built is walked
// no further (yaml-cpp's own parse bounds its nesting).
constexpr int kMaxDepth = 64;

Status walk(const YAML::Node& node, const std::string& file, const std::string& where, int depth) {
  if (depth > kMaxDepth) return ok();
  const auto at = [&](const YAML::Node& n, const std::string& key) {
    return file + ":" + std::to_string(n.Mark().line + 1) + ": " +
           (key.empty() ? std::string("the document") : key);
  };
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      // A variable's value or a credential's source may be a secret: named
      // by where it is, not shown.
      if (where.rfind("env", 0) == 0 || where.rfind("environment.set", 0) == 0 ||
          where.rfind("credentials", 0) == 0) {
        if (node.Scalar().find('\0') != std::string::npos)
          return Error::invalid(at(node, where) +
                                ": the value holds a NUL byte (\\x00), which would cut it short where it is "
                                "used; remove it");
        return ok();
      }
      return refuse_nul(node.Scalar(), at(node, where));
    case YAML::NodeType::Sequence: {
      std::size_t i = 0;
      for (const auto& item : node)
        PX_TRY(walk(item, file, where + "[" + std::to_string(i++) + "]", depth + 1));
      return ok();
    }
    case YAML::NodeType::Map:
      for (const auto& kv : node) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
        PX_TRY(refuse_nul(key, at(kv.first, where.empty() ? "a key" : where + ": a key")));
        PX_TRY(walk(kv.second, file, where.empty() ? key : where + "." + key, depth + 1));
      }
      return ok();
    default:
      return ok();
  }
}

}  // namespace

Status refuse_nul_in_yaml(const YAML::Node& root, const std::string& file) {
  return walk(root, file, "", 0);
}

}  // namespace px::policy
