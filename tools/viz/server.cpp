#include "tools/viz/server.hpp"

#include "kernel/ir/errors.hpp"
#include "tools/viz/page.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <iostream>
#include <system_error>
#include <thread>

namespace tg::viz {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// What the connections' threads share with the server; it lives while one of them runs.
struct Shared {
  Trace trace;
  unsigned short port = 0;
  ServerLimits limits;
  std::atomic<std::size_t> open{0}; // connections being served
};

Response answer(const http::request<http::string_body>& req, const Shared& s) {
  const auto host = req[http::field::host];
  if (!loopback_host(std::string_view(host.data(), host.size()), s.port))
    return {421, "text/plain",
            "VIZ answers only to http://127.0.0.1:" + std::to_string(s.port) +
                "/ and http://localhost:" + std::to_string(s.port) + "/\n"};
  if (req.method() != http::verb::get && req.method() != http::verb::head)
    return {405, "text/plain", "only GET\n"};
  try {
    return respond(s.trace, std::string_view(req.target().data(), req.target().size()));
  } catch (const std::exception& e) {
    return {500, "text/plain", std::string(e.what()) + "\n"};
  }
}

// Runs the asynchronous operation just started on `io` to its end, on this thread.
void finish(asio::io_context& io) {
  io.restart();
  io.run();
}

void serve_connection(tcp::socket::native_handle_type fd, const std::shared_ptr<Shared>& s) {
  struct Slot {
    std::atomic<std::size_t>& open;
    ~Slot() { --open; }
  } slot{s->open};
  // The connection's own io_context: Beast's timeouts apply to asynchronous operations, which
  // this thread starts and finishes one at a time.
  asio::io_context io;
  beast::error_code ec;
  tcp::socket socket(io);
  socket.assign(tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    return;
  }
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request<http::string_body> req;
    stream.expires_after(s->limits.read_timeout); // the whole request, not each read
    http::async_read(stream, buffer, req, [&ec](beast::error_code e, std::size_t) { ec = e; });
    finish(io);
    if (ec) return; // closed, not HTTP, or too slow (the timeout closed the socket)
    Response r = answer(req, *s);
    http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::server, "tinygrad.cpp VIZ");
    res.set(http::field::content_type, r.content_type);
    res.set(http::field::cache_control, "no-store");
    res.keep_alive(req.keep_alive() && r.status != 421);
    res.body() = std::move(r.body);
    res.prepare_payload();
    stream.expires_after(s->limits.write_timeout);
    http::async_write(stream, res, [&ec](beast::error_code e, std::size_t) { ec = e; });
    finish(io);
    if (ec || !res.keep_alive()) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

} // namespace

bool loopback_host(std::string_view host, unsigned short port) {
  const std::string with_port = ":" + std::to_string(port);
  for (std::string_view name : {"localhost", "127.0.0.1", "[::1]"}) {
    if (host.size() == name.size() + with_port.size() && iequals(host.substr(0, name.size()), name) &&
        host.substr(name.size()) == with_port)
      return true;
    if (port == 80 && iequals(host, name)) return true; // browsers leave out the default port
  }
  return false;
}

struct Server::Impl {
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  asio::io_context io;
  tcp::acceptor acceptor{io};
  asio::steady_timer retry{io};
  std::string busy; // the whole answer to a connection beyond the limit

  void accept_next() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (ec) { // out of file descriptors, say: try again a little later, not in a busy loop
        retry.expires_after(std::chrono::milliseconds(100));
        retry.async_wait([this](beast::error_code) { accept_next(); });
        return;
      }
      admit(std::move(socket));
      accept_next();
    });
  }

  void admit(tcp::socket socket) {
    beast::error_code ec;
    if (shared->open.load() >= shared->limits.max_connections) {
      // Refused without a thread. The short answer fits a fresh socket's send buffer; on a
      // non-blocking socket the write cannot wait for the client either way.
      socket.non_blocking(true, ec);
      asio::write(socket, asio::buffer(busy), ec);
      socket.shutdown(tcp::socket::shutdown_both, ec);
      return;
    }
    ++shared->open;
    const auto fd = socket.release(ec);
    if (ec) {
      --shared->open;
      return;
    }
    try {
      std::thread(serve_connection, fd, shared).detach();
    } catch (const std::system_error&) { // no thread to be had: drop the connection
      ::close(fd);
      --shared->open;
    }
  }
};

Server::Server(Trace trace, unsigned short port, ServerLimits limits) : impl_(std::make_unique<Impl>()) {
  tcp::endpoint endpoint(asio::ip::make_address_v4("127.0.0.1"), port); // loopback only
  tcp::acceptor& acceptor = impl_->acceptor;
  beast::error_code ec;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("VIZ: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + ec.message());
  Shared& s = *impl_->shared;
  s.trace = std::move(trace);
  s.port = acceptor.local_endpoint().port();
  s.limits = limits;
  const std::string text = "VIZ is serving its limit of " + std::to_string(limits.max_connections) +
                           " connections; try again shortly\n";
  impl_->busy = "HTTP/1.1 503 Service Unavailable\r\nServer: tinygrad.cpp VIZ\r\nContent-Type: text/plain\r\n"
                "Retry-After: 1\r\nConnection: close\r\nContent-Length: " +
                std::to_string(text.size()) + "\r\n\r\n" + text;
}

Server::~Server() = default;

unsigned short Server::port() const { return impl_->shared->port; }

std::string Server::url() const { return "http://127.0.0.1:" + std::to_string(port()) + "/"; }

void Server::run() {
  impl_->accept_next();
  impl_->io.run();
}

void Server::stop() { impl_->io.stop(); }

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
  Server server(std::move(trace), port);
  if (on_listening)
    on_listening(server.url());
  else
    std::cout << "VIZ: serving on " << server.url() << " (Ctrl-C to stop)" << std::endl;
  server.run();
  throw Error("VIZ: the server stopped"); // run() returns only after stop(), which nothing here calls
}

} // namespace tg::viz
