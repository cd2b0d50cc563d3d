#pragma once
// VIZ's HTTP server (Boost.Beast: header-only in Debian's libboost-dev, already a dependency, and
// maintained; its heavy headers stay in server.cpp). It binds 127.0.0.1 only, on $VIZ_PORT or
// the given port (0: a free one), prints the URL and serves the page (tools/viz/page.hpp) until
// the process is stopped. Each connection gets its own thread, so a browser's idle speculative
// connection never blocks the page; ServerLimits bounds how many and how long.
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "kernel/viz/trace.hpp"

namespace tg::viz {

struct ServerLimits {
  // Time for a request's head and body, counted from the connection's start or from the end of
  // the previous response (so it is also how long an idle keep-alive connection stays open).
  std::chrono::milliseconds read_timeout{5000};
  // Time for a response to be sent to a client that has stopped reading.
  std::chrono::milliseconds write_timeout{30000};
  // Connections served at once; a connection beyond them gets 503 and is closed at once.
  std::size_t max_connections = 32;
};

// Whether `host` (a request's Host header) names this server: localhost, 127.0.0.1 or [::1] with
// `port` (without a port only when it is 80). Any other name is refused: a page of another site
// whose name an attacker re-points at 127.0.0.1 (DNS rebinding) sends its own name.
bool loopback_host(std::string_view host, unsigned short port);

class Server {
public:
  // Listens on 127.0.0.1:port (0: a free one); throws Error when it cannot.
  Server(Trace trace, unsigned short port, ServerLimits limits = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  unsigned short port() const;
  std::string url() const;
  // Accepts and serves connections until stop(), which any thread may call.
  void run();
  void stop();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The port VIZ_PORT names (0 when unset); throws Error when it is not a port number.
unsigned short port_from_environment();

// Serves `trace` forever. `on_listening` gets the URL once the socket listens (default: print it).
[[noreturn]] void serve(Trace trace, unsigned short port,
                        const std::function<void(const std::string&)>& on_listening = {});

} // namespace tg::viz
