// Datasets: IDX files (the MNIST / Fashion-MNIST format) and an MNIST loader.
//
// IDX: magic 0x00 0x00 <type> <ndim>, then ndim big-endian uint32 dimensions, then the data,
// big-endian, row-major. Types: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64.
// Files may be gzip-compressed (detected by the 1f 8b magic, not the name).
#pragma once

#include "kernel/tensor/tensor.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace tg {

struct DatasetError : Error {
  using Error::Error;
};

struct IdxArray {
  std::vector<int64_t> shape;
  DType dtype = dtypes::uint8;
  std::vector<std::byte> data; // host (little-endian) byte order, row-major
};

// Reads a raw or gzip-compressed IDX file. Errors (DatasetError) name the file. A gzip stream is
// inflated only up to the size its IDX header declares: more is an error, found without
// inflating the rest. A declared size larger than the compressed file can hold (DEFLATE expands
// at most 1032-fold) or than the memory available (available_memory()) is refused as soon as the
// header is inflated, before the rest is.
IdxArray read_idx(const std::filesystem::path& path);
// The same from bytes already in memory (gzip-compressed or not); `name` labels errors.
IdxArray parse_idx(std::span<const std::byte> bytes, const std::string& name = "<memory>");
// The same with an explicit memory budget in bytes instead of available_memory().
IdxArray parse_idx(std::span<const std::byte> bytes, const std::string& name, uint64_t memory_budget);
// Bytes this process may still allocate as far as the system tells: the least of MemAvailable
// (/proc/meminfo), the cgroup's memory.max less memory.current, and RLIMIT_AS.
uint64_t available_memory();

// MNIST-format data as uint8 tensors: x (N, 1, 28, 28) pixels 0..255, y (N) class labels 0..9
// (60000 train and 10000 test samples for MNIST and Fashion-MNIST). Cast/normalise as needed,
// e.g. x.cast(dtypes::float32) / 255. load_mnist checks all of it: each set holds at least one
// image, images are 28x28, labels are 0..9 and as many as the images.
struct MnistData {
  Tensor x_train, y_train, x_test, y_test;
};

// $TG_MNIST_DIR if set, else /usr/share/datasets/fashion-mnist (Debian package
// dataset-fashion-mnist).
std::filesystem::path default_mnist_dir();

// Loads {train,t10k}-{images-idx3,labels-idx1}-ubyte from `dir`, preferring the .gz files and
// falling back to uncompressed ones. A missing file raises DatasetError naming the expected files.
MnistData load_mnist(const std::filesystem::path& dir = default_mnist_dir(), const std::string& device = "");

} // namespace tg
