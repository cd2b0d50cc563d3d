// Byte and file helpers (see tg/sdk/bytes.hpp).
#include <tg/sdk/bytes.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace tg::sdk {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Closes a descriptor at scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory, not a regular file";
  if (S_ISFIFO(mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "is a device, not a regular file";
  if (S_ISSOCK(mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

void write_all(int fd, std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileError("write failed: " + errno_text(errno));
    bytes = bytes.subspan(size_t(n));
  }
}

std::filesystem::path temp_beside(const std::filesystem::path& path, const char* what) {
  static std::atomic<uint64_t> counter{0};
  std::filesystem::path tmp = path;
  tmp += std::string(what) + std::to_string(::getpid()) + "." + std::to_string(counter++);
  return tmp;
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

} // namespace

std::span<const std::byte> ByteReader::bytes(size_t n, const char* what) {
  if (remaining() < n)
    throw TruncatedError("truncated while reading the " + std::string(what) + " at byte " +
                         std::to_string(pos_) + " of " + std::to_string(bytes_.size()));
  auto out = bytes_.subspan(pos_, n);
  pos_ += n;
  return out;
}

std::string ByteReader::str(size_t n, const char* what) {
  auto b = bytes(n, what);
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

uint64_t fnv1a64(std::span<const std::byte> bytes) {
  uint64_t h = 14695981039346656037ull;
  for (std::byte b : bytes) {
    h ^= uint64_t(b);
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t value) {
  static const char* digits = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, value >>= 4) out[size_t(i)] = digits[value & 15];
  return out;
}

std::vector<std::byte> read_file(const std::filesystem::path& path, uint64_t max_bytes) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)}; // NONBLOCK: opening a FIFO must not hang
  if (f.fd < 0) throw FileError("cannot be opened: " + errno_text(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw FileError("cannot be inspected: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) throw FileError(kind_of(st.st_mode));
  uint64_t size = std::min<uint64_t>(uint64_t(st.st_size), max_bytes);
  std::vector<std::byte> data(size);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(f.fd, data.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw FileError("read failed: " + errno_text(errno));
    if (n == 0) break; // shrank while being read
    done += size_t(n);
  }
  data.resize(done);
  return data;
}

void check_writable(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw FileError("is a directory");
  std::filesystem::path dir = directory_of(path);
  if (!std::filesystem::exists(dir, ec)) throw FileError("directory " + dir.string() + " does not exist");
  if (!std::filesystem::is_directory(dir, ec)) throw FileError(dir.string() + " is not a directory");
  std::filesystem::path probe = temp_beside(path, ".probe.");
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw FileError("cannot create a file in " + dir.string() + ": " + errno_text(errno));
  ::close(fd);
  ::unlink(probe.c_str());
}

namespace {

// The file a save to `path` replaces: `path` itself, or the end of its chain of symbolic links
// (relative links resolve against their own directory), so a save writes through a link and keeps
// it a link. A chain longer than the kernel's own limit is refused.
std::filesystem::path link_target(const std::filesystem::path& path) {
  std::filesystem::path p = path;
  for (int hops = 0;; ++hops) {
    std::error_code ec;
    if (!std::filesystem::is_symlink(std::filesystem::symlink_status(p, ec))) return p;
    if (hops == 40) throw FileError("too many levels of symbolic links");
    std::filesystem::path next = std::filesystem::read_symlink(p, ec);
    if (ec) throw FileError("cannot read the symbolic link " + p.string() + ": " + ec.message());
    p = next.is_absolute() ? next : directory_of(p) / next;
  }
}

// Removes temporaries that an earlier save of `target` left when it was killed: files named
// "<name>.tmp.<pid>.<n>" beside it whose process no longer runs (a live one may be saving now).
void remove_stale_temporaries(const std::filesystem::path& target) {
  const std::string prefix = target.filename().string() + ".tmp.";
  std::error_code ec;
  for (std::filesystem::directory_iterator it(directory_of(target), ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size()); // "<pid>.<n>"
    const size_t dot = rest.find('.');
    if (dot == 0 || dot == std::string::npos || dot + 1 == rest.size() ||
        !std::all_of(rest.begin(), rest.end(), [](char c) { return c == '.' || (c >= '0' && c <= '9'); }))
      continue;
    const long pid = std::strtol(rest.substr(0, dot).c_str(), nullptr, 10);
    if (pid <= 0 || (::kill(pid_t(pid), 0) != 0 && errno == ESRCH)) {
      std::error_code rm;
      std::filesystem::remove(it->path(), rm);
    }
  }
}

} // namespace

void write_file_durably(const std::filesystem::path& path,
                        std::span<const std::span<const std::byte>> parts) {
  const std::filesystem::path target = link_target(path);
  remove_stale_temporaries(target);
  // A file that exists keeps its permissions (and, where allowed, its owner); a new one gets
  // 0666 less the umask, as open(2) gives any new file.
  struct stat old {};
  const bool replacing = ::stat(target.c_str(), &old) == 0 && S_ISREG(old.st_mode);
  std::filesystem::path tmp = temp_beside(target, ".tmp."); // same directory: the rename is atomic
  try {
    {
      Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)};
      if (f.fd < 0) throw FileError("cannot create " + tmp.string() + ": " + errno_text(errno));
      if (replacing) {
        if (::fchmod(f.fd, old.st_mode & 07777) != 0)
          throw FileError("cannot keep the mode of " + target.string() + ": " + errno_text(errno));
        [[maybe_unused]] int ignored = ::fchown(f.fd, old.st_uid, old.st_gid); // only root may; else ours
      }
      for (auto part : parts) write_all(f.fd, part);
      // The data must be on disk before the rename makes it visible under `target`.
      if (::fsync(f.fd) != 0) throw FileError("fsync failed: " + errno_text(errno));
      int fd = f.fd;
      f.fd = -1;
      if (::close(fd) != 0) throw FileError("close failed: " + errno_text(errno));
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0)
      throw FileError("cannot rename the temporary file: " + errno_text(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // The rename itself is durable only once the directory entry is.
  Fd dir{::open(directory_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0 || ::fsync(dir.fd) != 0)
    throw FileError("written, but the directory could not be synced: " + errno_text(errno));
}

} // namespace tg::sdk
