#pragma once
// VIZ's HTTP server (Boost.Beast: header-only in Debian's libboost-dev, already a dependency, and
// maintained; its heavy headers stay in server.cpp). It binds 127.0.0.1 only, on $VIZ_PORT or
// the given port (0: a free one), prints the URL and serves the page (tools/viz/page.hpp) until
// the process is stopped. Each connection gets its own thread, so a browser's idle speculative
// connection never blocks the page.
#include <functional>
#include <string>

#include "kernel/runtime/viz_trace.hpp"

namespace tg::viz {

// The port VIZ_PORT names (0 when unset); throws Error when it is not a port number.
unsigned short port_from_environment();

// Serves `trace` forever. `on_listening` gets the URL once the socket listens (default: print it).
[[noreturn]] void serve(Trace trace, unsigned short port,
                        const std::function<void(const std::string&)>& on_listening = {});

} // namespace tg::viz
