#include "tools/viz/server.hpp"

#include "kernel/ir/errors.hpp"
#include "tools/viz/page.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

namespace tg::viz {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;

void serve_connection(tcp::socket socket, const std::shared_ptr<const Trace>& trace) {
  boost::beast::flat_buffer buffer;
  boost::system::error_code ec;
  for (;;) {
    http::request<http::string_body> req;
    http::read(socket, buffer, req, ec);
    if (ec) return; // closed, or not HTTP
    Response r;
    if (req.method() != http::verb::get && req.method() != http::verb::head) {
      r = {405, "text/plain", "only GET\n"};
    } else {
      try {
        r = respond(*trace, std::string_view(req.target().data(), req.target().size()));
      } catch (const std::exception& e) {
        r = {500, "text/plain", std::string(e.what()) + "\n"};
      }
    }
    http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::server, "tinygrad.cpp VIZ");
    res.set(http::field::content_type, r.content_type);
    res.set(http::field::cache_control, "no-store");
    res.keep_alive(req.keep_alive());
    res.body() = std::move(r.body);
    res.prepare_payload();
    http::write(socket, res, ec);
    if (ec || !res.keep_alive()) break;
  }
  socket.shutdown(tcp::socket::shutdown_send, ec);
}

} // namespace

unsigned short port_from_environment() {
  const char* v = std::getenv("VIZ_PORT");
  if (!v || !*v) return 0;
  unsigned port = 0;
  std::string_view s(v);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
  if (ec != std::errc{} || end != s.data() + s.size() || port > 65535)
    throw Error("VIZ_PORT is \"" + std::string(s) + "\", not a port number (0-65535)");
  return static_cast<unsigned short>(port);
}

void serve(Trace trace, unsigned short port, const std::function<void(const std::string&)>& on_listening) {
  auto shared = std::make_shared<const Trace>(std::move(trace));
  asio::io_context io;
  tcp::acceptor acceptor(io);
  tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), port); // loopback only
  boost::system::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("VIZ: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + ec.message());
  const std::string url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/";
  if (on_listening)
    on_listening(url);
  else
    std::cout << "VIZ: serving on " << url << " (Ctrl-C to stop)" << std::endl;
  for (;;) {
    tcp::socket socket(io);
    acceptor.accept(socket, ec);
    if (ec) continue;
    std::thread(serve_connection, std::move(socket), shared).detach();
  }
}

} // namespace tg::viz
