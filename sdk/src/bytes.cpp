// Byte and file helpers (see tg/sdk/bytes.hpp).
#include <tg/sdk/bytes.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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

void write_file_durably(const std::filesystem::path& path,
                        std::span<const std::span<const std::byte>> parts) {
  std::filesystem::path tmp = temp_beside(path, ".tmp."); // same directory, so the rename is atomic
  try {
    {
      Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
      if (f.fd < 0) throw FileError("cannot create " + tmp.string() + ": " + errno_text(errno));
      for (auto part : parts) write_all(f.fd, part);
      // The data must be on disk before the rename makes it visible under `path`.
      if (::fsync(f.fd) != 0) throw FileError("fsync failed: " + errno_text(errno));
      int fd = f.fd;
      f.fd = -1;
      if (::close(fd) != 0) throw FileError("close failed: " + errno_text(errno));
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      throw FileError("cannot rename the temporary file: " + errno_text(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  // The rename itself is durable only once the directory entry is.
  Fd dir{::open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (dir.fd < 0 || ::fsync(dir.fd) != 0)
    throw FileError("written, but the directory could not be synced: " + errno_text(errno));
}

} // namespace tg::sdk
