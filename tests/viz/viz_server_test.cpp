// VIZ's HTTP server under hostile clients, through real sockets: only loopback Host names are
// served (a DNS-rebound page sends its own name); a connection that sends nothing, dribbles its
// request or idles after a response is closed at the read timeout; connections past the cap get
// 503 without a thread each, and the server answers again once the others close.
#include <boost/test/unit_test.hpp>

#include "tools/viz/server.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace tg;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// A server on a free port, run on its own thread for one test.
struct Running {
  viz::Server server;
  std::thread thread;
  explicit Running(viz::ServerLimits limits = {})
      : server(viz::Trace{}, 0, limits), thread([this] { server.run(); }) {}
  ~Running() {
    server.stop();
    thread.join();
  }
  unsigned short port() const { return server.port(); }
  std::string host() const { return "localhost:" + std::to_string(server.port()); }
};

struct Client {
  int fd = -1;
  explicit Client(unsigned short port) : fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    BOOST_TEST_REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~Client() { ::close(fd); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  bool send(std::string_view s) const {
    return ::send(fd, s.data(), s.size(), MSG_NOSIGNAL) == ssize_t(s.size());
  }
  struct Reply {
    std::string data;
    bool closed = false; // the server closed (or reset) the connection
  };
  // What arrives until the server closes the connection or `wait` passes.
  Reply read(std::chrono::milliseconds wait) const {
    Reply r;
    const auto end = Clock::now() + wait;
    for (;;) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(end - Clock::now()).count();
      if (left <= 0) return r;
      pollfd p{fd, POLLIN, 0};
      const int ready = ::poll(&p, 1, int(left));
      if (ready < 0 && errno == EINTR) continue;
      if (ready <= 0) return r;
      char buf[4096];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) {
        r.closed = true;
        return r;
      }
      r.data.append(buf, std::size_t(n));
    }
  }
};

std::string get(unsigned short port, const std::string& host, const std::string& target = "/trace.json") {
  Client c(port);
  c.send("GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
  return c.read(10s).data;
}

int thread_count() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with("Threads:")) return std::stoi(line.substr(8));
  return -1;
}

} // namespace

BOOST_AUTO_TEST_SUITE(viz_server)

BOOST_AUTO_TEST_CASE(only_loopback_host_names_are_served) {
  Running s;
  const std::string p = std::to_string(s.port());
  for (const std::string& host : {"localhost:" + p, "127.0.0.1:" + p, "LOCALHOST:" + p}) {
    const std::string r = get(s.port(), host);
    BOOST_TEST(r.starts_with("HTTP/1.1 200"), host);
    BOOST_TEST(r.find("\"format\":\"tinygrad.cpp-viz\"") != std::string::npos, host);
  }
  const std::string other_port = std::to_string(s.port() == 65535 ? 1 : s.port() + 1);
  for (const std::string& host :
       std::vector<std::string>{"evil.example:" + p, "evil.example", "localhost:" + other_port, "localhost",
                                "127.0.0.1.evil.example:" + p, "localhost:" + p + ".evil.example", ""}) {
    const std::string r = get(s.port(), host);
    BOOST_TEST(r.starts_with("HTTP/1.1 421"), host);
    BOOST_TEST(r.find("tinygrad.cpp-viz") == std::string::npos, host);
  }
  Client no_host(s.port()); // HTTP/1.0 may leave Host out: refused too
  no_host.send("GET /trace.json HTTP/1.0\r\n\r\n");
  BOOST_TEST(no_host.read(10s).data.starts_with("HTTP/1.0 421"));

  BOOST_TEST(viz::loopback_host("[::1]:8000", 8000));
  BOOST_TEST(viz::loopback_host("localhost", 80));
  BOOST_TEST(viz::loopback_host("127.0.0.1:80", 80));
  BOOST_TEST(!viz::loopback_host("127.0.0.1", 8000));
  BOOST_TEST(!viz::loopback_host("evil.example:80", 80));
  BOOST_TEST(!viz::loopback_host("localhost:08000", 8000));
}

BOOST_AUTO_TEST_CASE(silent_slow_and_idle_connections_are_closed_at_the_read_timeout) {
  Running s({.read_timeout = 300ms});
  const auto start = Clock::now();
  Client silent(s.port());
  Client slow(s.port());
  // A request head that never ends, one byte every 50 ms: the timeout covers the whole head.
  slow.send("GET / HTTP/1.1\r\nHost: " + s.host() + "\r\nX-Pad: ");
  bool slow_closed = false;
  while (!slow_closed && Clock::now() - start < 5s) slow_closed = !slow.send("a") || slow.read(50ms).closed;
  BOOST_TEST(slow_closed);
  BOOST_TEST((Clock::now() - start < 2500ms));

  const Client::Reply nothing = silent.read(5s);
  BOOST_TEST(nothing.closed);
  BOOST_TEST(nothing.data.empty());
  BOOST_TEST((Clock::now() - start < 2500ms));

  // A keep-alive connection gets its answer, then is closed once it has idled for the timeout.
  Client idle(s.port());
  idle.send("GET /style.css HTTP/1.1\r\nHost: " + s.host() + "\r\n\r\n");
  const auto asked = Clock::now();
  const Client::Reply answered = idle.read(5s);
  BOOST_TEST(answered.data.starts_with("HTTP/1.1 200"));
  BOOST_TEST(answered.closed);
  BOOST_TEST((Clock::now() - asked < 2500ms));

  BOOST_TEST(get(s.port(), s.host()).starts_with("HTTP/1.1 200")); // still serving
}

BOOST_AUTO_TEST_CASE(connections_past_the_cap_are_refused_without_a_thread_each) {
  Running s({.read_timeout = 30s, .max_connections = 4});
  const int threads = thread_count();
  std::vector<std::unique_ptr<Client>> held, extra;
  for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<Client>(s.port()));
  for (int i = 0; i < 40; ++i) extra.push_back(std::make_unique<Client>(s.port()));
  const auto until = Clock::now() + 10s;
  for (const auto& c : extra) {
    const Client::Reply r = c->read(std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()));
    BOOST_TEST(r.data.starts_with("HTTP/1.1 503"));
    BOOST_TEST(r.closed);
  }
  for (const auto& c : held) BOOST_TEST(!c->read(20ms).closed); // accepted, waiting for a request
  BOOST_TEST(thread_count() <= threads + 4);

  // The server answers again once the held connections close (their threads see it at once).
  held.clear();
  std::string r;
  for (const auto start = Clock::now(); !r.starts_with("HTTP/1.1 200") && Clock::now() - start < 5s;) {
    r = get(s.port(), s.host(), "/style.css");
    if (!r.starts_with("HTTP/1.1 200")) std::this_thread::sleep_for(20ms);
  }
  BOOST_TEST(r.starts_with("HTTP/1.1 200"));
}

BOOST_AUTO_TEST_SUITE_END()
