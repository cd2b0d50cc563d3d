// The rendezvous of torchrun's convention: rank 0 listens at MASTER_ADDR:MASTER_PORT, every other
// rank connects (retrying until rank 0 listens) and says its rank; a star of sockets then carries
// barriers and broadcasts through rank 0. Every wait is a poll() against the timeout, and a
// closed socket names the rank that left.
#include "kernel/distributed/rendezvous.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <vector>

namespace tg::distributed::detail {
namespace {

using Clock = std::chrono::steady_clock;

std::string os_error(const std::string& what) { return what + ": " + std::strerror(errno); }

class Socket {
public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Socket& operator=(Socket&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

private:
  int fd_ = -1;
};

class TcpRendezvous final : public Rendezvous {
public:
  TcpRendezvous(const Ranks& r, std::chrono::milliseconds timeout, const std::string& address, int port)
      : rank_(r.rank), size_(r.size), timeout_(timeout) {
    const std::string where = address + ":" + std::to_string(port);
    if (rank_ == 0)
      listen_and_accept(port, where);
    else
      connect_to(address, port, where);
  }

  void barrier() override {
    std::byte token{1};
    if (rank_ == 0) {
      for (int r = 1; r < size_; ++r) receive(peers_[size_t(r)], {&token, 1}, r, "barrier");
      for (int r = 1; r < size_; ++r) send(peers_[size_t(r)], {&token, 1}, r, "barrier");
    } else {
      send(peers_[0], {&token, 1}, 0, "barrier");
      receive(peers_[0], {&token, 1}, 0, "barrier");
    }
  }

  void broadcast(std::span<std::byte> bytes, int root) override {
    // through rank 0: root sends to 0, 0 sends to every rank but root
    if (rank_ == root && root != 0) send(peers_[0], bytes, 0, "broadcast");
    if (rank_ == 0) {
      if (root != 0) receive(peers_[size_t(root)], bytes, root, "broadcast");
      for (int r = 1; r < size_; ++r)
        if (r != root) send(peers_[size_t(r)], bytes, r, "broadcast");
    } else if (rank_ != root) {
      receive(peers_[0], bytes, 0, "broadcast");
    }
  }

  void finalize() override { peers_.clear(); }
  void abort(int code) override {
    peers_.clear(); // the others see their socket to us (or to rank 0) close
    std::_Exit(code);
  }

private:
  [[noreturn]] void fail(const std::string& why) const {
    throw DistributedError("rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " + why);
  }

  // Waits for `events` on fd until the deadline; false on timeout.
  bool ready(int fd, short events, Clock::time_point deadline) const {
    for (;;) {
      int ms = -1;
      if (timeout_.count() > 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) return false;
        ms = int(std::min<int64_t>(left, 1000));
      }
      pollfd p{fd, events, 0};
      int n = ::poll(&p, 1, ms);
      if (n > 0) return true;
      if (n < 0 && errno != EINTR) fail(os_error("poll"));
    }
  }

  Clock::time_point deadline() const { return Clock::now() + timeout_; }

  void send(const Socket& s, std::span<const std::byte> bytes, int peer, const char* what) {
    const auto until = deadline();
    for (size_t done = 0; done < bytes.size();) {
      if (!ready(s.fd(), POLLOUT, until))
        fail(std::string(what) + ": rank " + std::to_string(peer) + " timed out");
      ssize_t n = ::send(s.fd(), bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno != EINTR && errno != EAGAIN)
        fail(std::string(what) + ": rank " + std::to_string(peer) + " has left (" + std::strerror(errno) +
             ")");
      if (n > 0) done += size_t(n);
    }
  }

  void receive(const Socket& s, std::span<std::byte> bytes, int peer, const char* what) {
    const auto until = deadline();
    for (size_t done = 0; done < bytes.size();) {
      if (!ready(s.fd(), POLLIN, until))
        fail(std::string(what) + ": waited more than " + std::to_string(timeout_.count() / 1000) +
             " s (TG_DISTRIBUTED_TIMEOUT) for rank " + std::to_string(peer) +
             ": it has died, hangs or skipped this call");
      ssize_t n = ::recv(s.fd(), bytes.data() + done, bytes.size() - done, 0);
      if (n == 0)
        fail(std::string(what) + ": rank " + std::to_string(peer) + " has left (its connection closed)");
      if (n < 0 && errno != EINTR && errno != EAGAIN)
        fail(std::string(what) + ": rank " + std::to_string(peer) + ": " + std::strerror(errno));
      if (n > 0) done += size_t(n);
    }
  }

  void listen_and_accept(int port, const std::string& where) {
    Socket listener(::socket(AF_INET6, SOCK_STREAM, 0));
    if (listener.fd() < 0) fail(os_error("socket"));
    int on = 1, off = 0;
    ::setsockopt(listener.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    ::setsockopt(listener.fd(), IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off); // IPv4 too
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_any;
    addr.sin6_port = htons(uint16_t(port));
    if (::bind(listener.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      fail(os_error("rank 0 cannot listen on port " + std::to_string(port) + " (MASTER_PORT)"));
    if (::listen(listener.fd(), size_) != 0) fail(os_error("listen"));
    peers_.resize(size_t(size_));
    const auto until = deadline();
    for (int joined = 1; joined < size_;) {
      if (!ready(listener.fd(), POLLIN, until))
        fail("only " + std::to_string(joined - 1) + " of " + std::to_string(size_ - 1) +
             " ranks connected to " + where + " within the timeout (TG_DISTRIBUTED_TIMEOUT)");
      Socket peer(::accept(listener.fd(), nullptr, nullptr));
      if (peer.fd() < 0) continue;
      int32_t hello[2] = {0, 0}; // rank, size
      receive(peer, std::as_writable_bytes(std::span(hello)), -1, "joining");
      if (hello[1] != size_ || hello[0] < 1 || hello[0] >= size_ || peers_[size_t(hello[0])].fd() >= 0)
        fail("a rank joined as " + std::to_string(hello[0]) + " of " + std::to_string(hello[1]) +
             ": WORLD_SIZE or RANK differ between the ranks");
      ::setsockopt(peer.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      peers_[size_t(hello[0])] = std::move(peer);
      ++joined;
    }
    barrier(); // everyone is connected before anyone goes on
  }

  void connect_to(const std::string& address, int port, const std::string& where) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int e = ::getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &found); e != 0)
      fail("MASTER_ADDR '" + address + "' cannot be resolved: " + gai_strerror(e));
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> list(found, ::freeaddrinfo);
    const auto until = deadline();
    peers_.resize(1);
    for (;;) { // rank 0 may not listen yet
      for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
        Socket s(::socket(a->ai_family, a->ai_socktype, a->ai_protocol));
        if (s.fd() >= 0 && ::connect(s.fd(), a->ai_addr, a->ai_addrlen) == 0) {
          int on = 1;
          ::setsockopt(s.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
          peers_[0] = std::move(s);
          const int32_t hello[2] = {rank_, size_};
          send(peers_[0], std::as_bytes(std::span(hello)), 0, "joining");
          barrier();
          return;
        }
      }
      if (timeout_.count() > 0 && Clock::now() > until)
        fail("rank 0 did not accept a connection at " + where +
             " (MASTER_ADDR:MASTER_PORT) within the timeout");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  std::vector<Socket> peers_; // rank 0: one per rank (index = rank, [0] unused); others: [0] = rank 0
};

} // namespace

std::unique_ptr<Rendezvous> tcp_rendezvous(const Ranks& ranks, std::chrono::milliseconds timeout,
                                           const std::string& address, int port) {
  return std::make_unique<TcpRendezvous>(ranks, timeout, address, port);
}

} // namespace tg::distributed::detail
