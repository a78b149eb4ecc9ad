// Intake of a connection to a port published from the run: a program on this
// machine connected to 127.0.0.1:PORT, and the seal's init made a socket
// inside the run, connecting to the run's server on that port
// (local_ports.cpp). The bytes flow from this machine into the run, the
// opposite way of everything else here: no rule decides it (the user
// published the port), there is no name to resolve and no first bytes to
// check, and the broker never takes it (its credentials are for servers
// outside the run; this server is the run's own, its client a program of this
// machine the user pointed at it).
#include "proxy/connection.hpp"
#include "proxy/reasons.hpp"
#include "proxy/server_core.hpp"

namespace px::proxy {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

void Connection::start_published(std::uint16_t inside_port, UniqueFd inside) {
  decision_.method = "PUBLISH";
  decision_.host = "localhost";
  decision_.port = inside_port;
  dest_.named = Destination::Named::published;
  dest_.endpoint = {"localhost", inside_port};
  dest_.first_bytes_checked = true;
  dest_.broker_may_take = false;
  error_code ec;
  client_.non_blocking(true, ec);
  if (!ec) upstream_.assign(tcp::v4(), inside.get(), ec);
  if (ec) return reset(reason::connect_failed, "failed", false);
  inside.release();
  // As for a socket of the proxy's own (upstream.cpp): Asio's flag, so the
  // relay never blocks, and no Nagle delay on a tunnel.
  error_code ig;
  upstream_.non_blocking(true, ig);
  upstream_.set_option(tcp::no_delay(true), ig);
  state_ = State::connecting;
  deadline_ = Clock::now() + server_.config.limits.connect_timeout;
  await_connect(tcp::endpoint(asio::ip::address_v4::loopback(), inside_port));
}

}  // namespace px::proxy
