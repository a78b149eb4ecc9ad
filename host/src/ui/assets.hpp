#pragma once
// The page's files (host/src/ui/assets/), embedded in the executable at build
// time (embed_assets.cmake): `parallex ui` reads nothing from disk or the network.
#include <string_view>
#include <vector>

namespace px::ui {

struct Asset {
  std::string_view path;  // "/app.js"
  std::string_view bytes;
};

const std::vector<Asset>& embedded_assets();
// The asset served at `path` ("/" is /index.html), or null.
const Asset* find_asset(std::string_view path);
// Its Content-Type, from its name.
std::string_view asset_type(std::string_view path);

}  // namespace px::ui
