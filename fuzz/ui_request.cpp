// libFuzzer target over everything `parallex ui` reads of a request before
// an API route acts: Beast's parser (the server's limits), the Host, Origin
// and cookie checks, the key exchange, the query and path routing with its
// parameters, the JSON body. The routes have the shapes of the real table
// (ui/api.hpp) and answer with what they were given: a fuzzer must not pause
// the machine's runs.
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ui/beast_request.hpp"
#include "ui/rules.hpp"

namespace {

const std::string kSecret(64, 'a');

const px::ui::UiRules& rules() {
  static const px::ui::UiRules r = [] {
    const auto echo = [](const px::ui::ApiParams& params, const nlohmann::json& body) {
      return px::ui::ApiAnswer{200, {{"params", params}, {"body", body}}};
    };
    std::vector<px::ui::ApiRoute> routes;
    for (const char* get : {"/api/runs", "/api/runs/{id}", "/api/runs/{id}/report", "/api/agents/{name}"})
      routes.push_back({"GET", get, echo});
    for (const char* post :
         {"/api/pause-all", "/api/runs/{id}/pause", "/api/questions/{n}", "/api/agents/{name}/grant"})
      routes.push_back({"POST", post, echo});
    return px::ui::UiRules(4242, kSecret, std::move(routes));
  }();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace http = boost::beast::http;
  http::request_parser<http::string_body> parser;
  parser.eager(true);
  parser.header_limit(px::ui::kHeadLimit);
  parser.body_limit(px::ui::kBodyLimit);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  if (ec || !parser.is_done()) return 0;
  const px::ui::UiRequest request = px::ui::ui_request_from(parser.get());
  const px::ui::UiReply reply = rules().handle(request);
  const bool has_cookie = request.cookie.find("px_ui=" + kSecret) != std::string::npos;
  // The promises of docs/ui.md, whatever the bytes: another Host never gets
  // past the first check; nothing that changes anything is done without the
  // exact Origin and the cookie; without the cookie nothing but the key
  // exchange succeeds.
  if (request.host != "127.0.0.1:4242" && reply.status != 403) __builtin_trap();
  if (reply.status / 100 == 2 && request.method != "GET" &&
      (request.origin != "http://127.0.0.1:4242" || !has_cookie))
    __builtin_trap();
  if (!has_cookie && reply.status / 100 == 2) __builtin_trap();
  if (reply.status == 303 && request.method != "GET") __builtin_trap();
  return 0;
}
